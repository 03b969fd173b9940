//! Generated kernels under the host emulation of the AMD targets (issue 38, §4 of the plan):
//! `DIFF_N` kernels (default 40) from `DIFF_OFFSET` lowered for gfx942 (wave 64, MFMA) and
//! gfx1100 (wave 32, WMMA), compiled for the host with clang++-19 and run against the IR
//! evaluator at the GPU runner's four shapes, bit for bit, with guard bytes around every tensor.

use tilelang_difftest::{device, emulate, gen};

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn check(arch: &str) {
    let (offset, n) = (env("DIFF_OFFSET", 0), env("DIFF_N", 40));
    let seeds: Vec<u64> = (offset..offset + n).map(gen::seed_of).collect();
    let dir =
        std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("difftest-{arch}"));
    let t = std::time::Instant::now();
    let tally = emulate::run(&dir, &seeds, arch).unwrap_or_else(|e| panic!("{e}"));
    eprintln!(
        "{arch}: {} in {:.1} s",
        device::report(&tally).trim(),
        t.elapsed().as_secs_f64()
    );
    assert!(tally.launches > 0, "nothing ran for {arch}");
    assert!(tally.findings.is_empty(), "{}", device::report(&tally));
    if std::env::var_os("DIFF_KEEP_SOURCES").is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn generated_kernels_agree_under_gfx942_emulation() {
    check("gfx942");
}

#[test]
fn generated_kernels_agree_under_gfx1100_emulation() {
    check("gfx1100");
}
