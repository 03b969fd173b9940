//! A sample of the kernels the fuzzer made that the frontend accepts, compiled with the real
//! device compilers through the build script's own path (`find` → `lower::emit` → `compile`):
//! nvcc for sm_90 and sm_90a and clang for gfx1100 (wave 32) and gfx942 (wave 64). "Accepted by the
//! frontend, rejected by the device compiler" is a C++ error with no Rust line for the user, so
//! every such case must become a spanned compile error (a lowering diagnostic: those objects are
//! left out here too, exactly as in a build) or compile.
//!
//! The kernels come from the fuzz test's dump of accepted mutants; `.ci/run` runs both:
//!
//! ```text
//! FUZZ_N=20000 FUZZ_DUMP_OK=target/fuzz-accepted.rs cargo test -p tilelang-codegen --test fuzz mutants_never_panic
//! TILELANG_FUZZ_ACCEPTED=target/fuzz-accepted.rs cargo test -p tilelang-build --test device_fuzz -- --ignored
//! ```
//!
//! `TILELANG_FUZZ_SAMPLE` (default 40) is the number of kernels compiled, spread evenly over
//! the dump. nvcc comes from `NVCC` (scripts/nvcc-env.sh), clang from the usual search.

use quote::ToTokens;
use std::path::PathBuf;
use tilelang_build::{compile, find, toolchain};
use tilelang_codegen::target::Target;

#[test]
#[ignore = "needs the fuzz test's dump of accepted mutants, nvcc and clang 19: .ci/run runs it"]
fn accepted_mutants_compile_for_the_devices() {
    let path = std::env::var("TILELANG_FUZZ_ACCEPTED").expect(
        "set TILELANG_FUZZ_ACCEPTED to the file the fuzz test wrote with FUZZ_DUMP_OK (see this file's docs)",
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{path} does not parse: {e}"));
    let modules: Vec<String> = file
        .items
        .iter()
        .filter_map(|i| match i {
            syn::Item::Mod(m) => m.content.as_ref().map(|(_, items)| {
                items
                    .iter()
                    .map(|i| i.to_token_stream().to_string())
                    .collect::<Vec<_>>()
                    .join("\n")
            }),
            _ => None,
        })
        .collect();
    let sample: usize = std::env::var("TILELANG_FUZZ_SAMPLE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(40);
    assert!(
        modules.len() >= sample.min(10),
        "{path} holds only {} kernels",
        modules.len()
    );
    let targets: Vec<(Target, toolchain::Tool)> = ["sm_90", "sm_90a", "gfx1100", "gfx942"]
        .iter()
        .map(|a| {
            let t = Target::by_arch(a).unwrap();
            let tool = toolchain::for_target(&t)
                .unwrap_or_else(|| panic!("no device compiler for {a}: {}", toolchain::hint(&t)));
            (t, tool)
        })
        .collect();
    let root = std::env::temp_dir().join(format!("tl-device-fuzz-{}", std::process::id()));
    let step = (modules.len() / sample.max(1)).max(1);
    let (mut compiled, mut objects, mut failures) = (0, 0, Vec::new());
    for (n, src) in modules.iter().step_by(step).take(sample).enumerate() {
        let dir = root.join(n.to_string());
        let src_dir = dir.join("src");
        std::fs::create_dir_all(&src_dir).unwrap();
        std::fs::write(src_dir.join("lib.rs"), src).unwrap();
        let found = find::kernels(&src_dir).unwrap();
        assert_eq!(found.len(), 1, "an accepted mutant must be found:\n{src}");
        let jobs: Vec<compile::Job<'_>> = targets
            .iter()
            .flat_map(|(t, tool)| {
                (0..found[0].ir.configs.len()).map(|c| compile::Job {
                    kernel: &found[0],
                    config: c,
                    target: *t,
                    tool: tool.clone(),
                })
            })
            .collect();
        let out: PathBuf = dir.join("out");
        match compile::run_all(&jobs, &out, &dir) {
            Ok(()) => {
                compiled += 1;
                objects += std::fs::read_dir(&out)
                    .unwrap()
                    .flatten()
                    .filter(|e| e.path().extension().is_some_and(|x| x == "bin"))
                    .count();
            }
            Err(e) => failures.push(format!("--- kernel {n}:\n{src}\n{e}")),
        }
    }
    let _ = std::fs::remove_dir_all(&root);
    eprintln!(
        "device fuzz: {compiled} accepted mutants compiled ({objects} objects for sm_90, sm_90a, gfx1100, gfx942), {} rejected by a device compiler",
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "accepted by the frontend, rejected by a device compiler:\n{}",
        failures.join("\n")
    );
    assert!(compiled > 0);
}
