//! Every config of every example kernel lowers for every GPU target, as the build script and
//! the macro will when `TILELANG_TARGETS` names them: shared memory and registers within each
//! target's limits, no lowering error, but for the pairs `DOES_NOT_FIT` names, which must fail
//! on that limit (and which the build leaves out for those targets). This needs no device compiler, so it runs everywhere; compiling the emitted
//! code is the build's (and `.ci/run`'s) business.

use std::path::Path;
use tilelang_codegen::lower;
use tilelang_codegen::target::TARGETS;

/// The (kernel, config) pairs that do not fit some targets, by arch prefix (an entry must
/// fail on that limit, and is reported once it lowers): the build leaves them out there, as
/// the kernel has another config that fits (`the_kernels_lower_for_every_target`).
/// Attention's `d128` is NVIDIA's tile (BM 128, BN 64: 80 KiB of shared memory on AMD, where
/// P goes through shared memory); `d128s` is its 64 KiB one.
const DOES_NOT_FIT: &[(&str, &str, &str)] = &[("attention", "d128", "gfx")];

#[test]
fn every_config_lowers_for_every_target() {
    let found = tilelang_build::find::kernels(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
        .expect("scan examples/src");
    assert_eq!(found.len(), examples::KERNELS.len());
    let mut failures = Vec::new();
    for f in &found {
        let k = &f.ir;
        for (c, config) in k.configs.iter().enumerate() {
            let config = config.name.to_string();
            for t in TARGETS {
                let known = DOES_NOT_FIT.iter().any(|&(kernel, cfg, arch)| {
                    k.name == kernel && config == cfg && t.arch.starts_with(arch)
                });
                let at = format!("{}[{config}] for {}", k.name, t.arch);
                match (lower::launch(k, c, t), known) {
                    (Ok(launch), false) => {
                        // And the printer writes the entry the launcher will look up.
                        let hip = lower::emit(k, c, t, None).expect("planned, so it prints");
                        assert_eq!(hip.entry, launch.entry);
                        assert!(hip.source.contains(&hip.entry), "{}", hip.entry);
                    }
                    (Ok(_), true) => {
                        failures.push(format!("{at}: lowers now; remove it from DOES_NOT_FIT"))
                    }
                    (Err(d), true) if d.text().contains("bytes of shared memory per block") => {}
                    (Err(d), _) => failures.push(format!("{at}: {}", d.text())),
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// What the build and the macro do with that: every kernel lowers for every target, the
/// configs of `DOES_NOT_FIT` left out there and nothing else.
#[test]
fn the_kernels_lower_for_every_target() {
    let found = tilelang_build::find::kernels(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
        .expect("scan examples/src");
    for f in &found {
        let k = &f.ir;
        for t in TARGETS {
            let built = tilelang_codegen::launcher::lower(k, &[*t]).unwrap_or_else(|d| {
                let text: Vec<String> = d.iter().map(|d| d.text()).collect();
                panic!("{} for {}: {}", k.name, t.arch, text.join("\n"))
            });
            let left_out: Vec<String> = (0..k.configs.len())
                .filter(|c| built.iter().all(|l| l.config != *c))
                .map(|c| k.configs[c].name.to_string())
                .collect();
            let known: Vec<String> = DOES_NOT_FIT
                .iter()
                .filter(|&&(kernel, _, arch)| k.name == kernel && t.arch.starts_with(arch))
                .map(|&(_, cfg, _)| cfg.to_string())
                .collect();
            assert_eq!(left_out, known, "{} for {}", k.name, t.arch);
        }
    }
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
