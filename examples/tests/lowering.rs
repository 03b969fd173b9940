//! Every config of every example kernel lowers for every GPU target, as the build script and
//! the macro will when `TILELANG_TARGETS` names them: shared memory and registers within each
//! target's limits, no lowering error. This needs no device compiler, so it runs everywhere;
//! compiling the emitted code is the build's (and `.ci/run`'s) business.

use std::path::Path;
use tilelang_codegen::launcher;
use tilelang_codegen::target::TARGETS;

#[test]
fn every_config_lowers_for_every_target() {
    let found = tilelang_build::find::kernels(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
        .expect("scan examples/src");
    assert_eq!(found.len(), examples::KERNELS.len());
    let mut failures = Vec::new();
    for f in &found {
        match launcher::lower(&f.ir, TARGETS) {
            Ok(lowered) => {
                assert_eq!(lowered.len(), f.ir.configs.len() * TARGETS.len());
                for l in &lowered {
                    // And the printer writes the entry the launcher will look up.
                    let hip = tilelang_codegen::lower::emit(&f.ir, l.config, &l.target, None)
                        .expect("planned, so it prints");
                    assert_eq!(hip.entry, l.launch.entry);
                    assert!(hip.source.contains(&hip.entry), "{}", hip.entry);
                }
            }
            Err(diags) => {
                failures.extend(diags.iter().map(|d| format!("{}: {}", f.ir.name, d.text())))
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `DUMP=<kernel> cargo test -p examples --test lowering dump -- --ignored --nocapture`
/// prints the sm_90 HIP source of the kernel's first config (for reading what the emitter did;
/// `tilelang-emit` in tilelang-build prints every config for any targets).
#[test]
#[ignore]
fn dump() {
    let which = std::env::var("DUMP").unwrap_or_default();
    let found = tilelang_build::find::kernels(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
        .expect("scan examples/src");
    let sm90 = tilelang_codegen::target::Target::by_arch("sm_90").expect("sm_90");
    for f in found.iter().filter(|f| f.ir.name == which.as_str()) {
        let hip = tilelang_codegen::lower::emit(&f.ir, 0, &sm90, None).expect("lowers");
        println!("{}", hip.source);
    }
}
