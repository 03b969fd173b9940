//! The build-script side of tilelang: compiles every `#[tile_kernel]` of a crate ahead of time.
//!
//! ```no_run
//! // build.rs
//! fn main() {
//!     tilelang_build::build();
//! }
//! ```
//!
//! 1. [`find`]: parses the crate's `src/**/*.rs` and collects the `#[tile_kernel]` functions.
//! 2. `tilelang_codegen` checks each one exactly as the macro will, and emits HIP C++ for every
//!    (kernel, config, target).
//! 3. [`toolchain`] finds the device compilers (nvcc for NVIDIA; hipcc or clang 19+ for AMD,
//!    one raw code object per arch); [`compile`] runs them in parallel, with a
//!    content-hash cache, records registers / spills / shared memory, and turns device-compiler
//!    errors into rustc-style diagnostics at the kernel's Rust lines.
//! 4. The build tells the `#[tile_kernel]` macro (through `cargo:rustc-env`) which targets were
//!    compiled; the macro embeds those objects with `include_bytes!`.
//!
//! Targets come from `TILELANG_TARGETS` (`sm_90`, `gfx1100`, comma-separated; `none` for CPU
//! only) or from the GPUs found on the build machine (`nvidia-smi`; `amdgpu-arch`,
//! `rocm_agent_enumerator` or `rocminfo`). Without a device compiler the build still
//! succeeds, says so once, and kernels run on the CPU backend.

// The crate docs show a build script, whose `fn main` is the point of the example.
#![allow(clippy::needless_doctest_main)]

pub mod cfg;
pub mod compile;
pub mod find;
pub mod toolchain;

use std::path::{Path, PathBuf};
use tilelang_codegen::target::Target;

/// How the build tells the macro what it compiled ([`tilelang_codegen::names`]).
pub use tilelang_codegen::names::BUILT_ENV;

/// Compiles the kernels of the crate whose build script calls this.
pub fn build() {
    let manifest_dir = PathBuf::from(env("CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(env("OUT_DIR"));
    let package = env("CARGO_PKG_NAME");
    for var in [
        "TILELANG_TARGETS",
        "NVCC",
        "CUDA_HOME",
        "CUDA_PATH",
        "HIPCC",
        "ROCM_PATH",
        "HIP_PATH",
        "TILELANG_CLANG",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let src = manifest_dir.join("src");
    println!("cargo:rerun-if-changed={}", src.display());
    match run(&src, &out_dir, &manifest_dir) {
        Ok(built) => println!(
            "cargo:rustc-env={BUILT_ENV}={}",
            tilelang_codegen::names::built_value(&package, &built)
        ),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}

fn env(k: &str) -> String {
    std::env::var(k).unwrap_or_else(|_| {
        panic!("tilelang-build: {k} is not set; call tilelang_build::build() from a build script")
    })
}

/// Finds, emits and compiles; returns the archs whose objects were produced.
pub fn run(src: &Path, out_dir: &Path, manifest_dir: &Path) -> Result<Vec<String>, String> {
    let kernels = find::kernels(src)?;
    let targets = requested_targets()?;
    let mut jobs = Vec::new();
    let mut built = Vec::new();
    for target in &targets {
        let Some(tool) = toolchain::for_target(target) else {
            println!(
                "cargo:warning=tilelang: no device compiler for {} ({}); its kernels run on the CPU backend only",
                target.arch,
                toolchain::hint(target)
            );
            continue;
        };
        built.push(target.arch.to_string());
        for k in &kernels {
            for c in 0..k.ir.configs.len() {
                jobs.push(compile::Job {
                    kernel: k,
                    config: c,
                    target: *target,
                    tool: tool.clone(),
                });
            }
        }
    }
    let dir = out_dir.join(tilelang_codegen::names::OBJECT_DIR);
    compile::run_all(&jobs, &dir, manifest_dir)?;
    Ok(built)
}

/// The targets `TILELANG_TARGETS` names, or, when it is unset, those of the GPUs found here
/// ([`toolchain::detect_gpus`]; what it cannot use is a warning, never an error).
fn requested_targets() -> Result<Vec<Target>, String> {
    match std::env::var("TILELANG_TARGETS") {
        Ok(spec) => {
            let targets = parse_targets(&spec)?;
            if targets.is_empty() {
                println!("cargo:warning=tilelang: TILELANG_TARGETS=`{spec}` names no GPU target; kernels run on the CPU backend only");
            }
            Ok(targets)
        }
        Err(std::env::VarError::NotUnicode(v)) => Err(format!(
            "error: TILELANG_TARGETS={v:?} is not valid UTF-8; set it to comma-separated targets ({}) or `none`",
            Target::known()
        )),
        Err(std::env::VarError::NotPresent) => {
            let found = toolchain::detect_gpus();
            for w in &found.warnings {
                println!("cargo:warning=tilelang: {w}");
            }
            if found.targets.is_empty() {
                let tried = if found.notes.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", found.notes.join("; "))
                };
                println!("cargo:warning=tilelang: no GPU targets: TILELANG_TARGETS is unset and no usable GPU was found{tried}; kernels run on the CPU backend only (set TILELANG_TARGETS, e.g. sm_90 or gfx1100, to compile for GPUs that are not here)");
            }
            Ok(found.targets)
        }
    }
}

/// The targets of a `TILELANG_TARGETS` value: comma-separated arch names, deduplicated; empty
/// entries and `none` name nothing. An unknown name is an error listing the known targets.
pub fn parse_targets(spec: &str) -> Result<Vec<Target>, String> {
    let mut out: Vec<Target> = Vec::new();
    for a in spec
        .split(',')
        .map(str::trim)
        .filter(|a| !a.is_empty() && *a != "none")
    {
        match Target::by_arch(a) {
            Some(t) if !out.contains(&t) => out.push(t),
            Some(_) => {}
            None => {
                return Err(format!(
                    "error: TILELANG_TARGETS=`{spec}` names `{a}`, which tilelang does not know; the targets are {} (comma-separated; `none` for CPU only)",
                    Target::known()
                ))
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tilelang_targets_values() {
        let archs =
            |s: &str| -> Vec<&str> { parse_targets(s).unwrap().iter().map(|t| t.arch).collect() };
        assert_eq!(
            archs("sm_80, sm_86,sm_89,sm_90"),
            ["sm_80", "sm_86", "sm_89", "sm_90"]
        );
        assert_eq!(archs("gfx1100,sm_90,gfx1100"), ["gfx1100", "sm_90"]);
        assert_eq!(archs("sm_90,sm_90a"), ["sm_90", "sm_90a"]);
        assert!(archs("none").is_empty());
        assert!(archs("").is_empty());
        let e = parse_targets("sm_90,sm_75").unwrap_err();
        assert!(
            e.starts_with("error: TILELANG_TARGETS=`sm_90,sm_75` names `sm_75`"),
            "{e}"
        );
        assert!(
            e.contains("the targets are sm_80, sm_86, sm_89, sm_90, sm_90a, gfx1100"),
            "{e}"
        );
    }
}
