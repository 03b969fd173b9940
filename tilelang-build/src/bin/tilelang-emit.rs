//! Prints the HIP C++ the build script would compile: for every kernel under a source folder
//! (or those named), every config, and the targets given.
//!
//! ```sh
//! cargo run -p tilelang-build --bin tilelang-emit -- kernels/src sm_90,gfx942 [kernel..]
//! ```
//!
//! A lowering diagnostic is printed in place of its source; the exit status is 0 either way.
//! Each occupancy request's source (the same plan printed with a register cap) is named by a
//! 64-bit FNV-1a hash of its text after the request, so a diff of two dumps sees it change.

use std::path::Path;
use std::process::ExitCode;
use tilelang_codegen::lower;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(src), Some(targets)) = (args.first(), args.get(1)) else {
        eprintln!("usage: tilelang-emit <src-dir> <arch,..> [kernel..]");
        return ExitCode::FAILURE;
    };
    let targets = match tilelang_build::parse_targets(targets) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("tilelang-emit: {e}");
            return ExitCode::FAILURE;
        }
    };
    let found = match tilelang_build::find::kernels_with(Path::new(src), None) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("tilelang-emit: {e}");
            return ExitCode::FAILURE;
        }
    };
    let only = &args[2..];
    for f in &found {
        let name = f.ir.name.to_string();
        if !only.is_empty() && !only.contains(&name) {
            continue;
        }
        for t in &targets {
            for c in 0..f.ir.configs.len() {
                println!(
                    "//// {} {} {} ({})",
                    name,
                    f.ir.configs[c].name,
                    t.arch,
                    f.file.display()
                );
                match lower::emit(&f.ir, c, t, None) {
                    Ok(h) => println!(
                        "// threads {} shared {} demoted {} occupancy requests {}\n{}",
                        h.threads,
                        h.shared_bytes,
                        if h.demoted.is_empty() {
                            "-".to_string()
                        } else {
                            h.demoted.join(",")
                        },
                        if h.requests.is_empty() {
                            "-".to_string()
                        } else {
                            h.requests
                                .iter()
                                .map(|r| {
                                    format!(
                                        "{}:{} ({:016x})",
                                        r.min_blocks,
                                        r.registers,
                                        fnv1a(&r.source)
                                    )
                                })
                                .collect::<Vec<_>>()
                                .join(",")
                        },
                        h.source
                    ),
                    Err(d) => println!("// error: {}", d.message),
                }
            }
        }
    }
    ExitCode::SUCCESS
}

/// The 64-bit FNV-1a hash of `text`.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}
