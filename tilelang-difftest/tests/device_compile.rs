//! Generated kernels through the real device compilers (issue 38, §5 of the plan): `DIFF_N`
//! kernels (default 100) from `DIFF_OFFSET` lowered and compiled in batches, as the GPU
//! machine's `difftest gpu` does, for sm_90 and sm_90a (nvcc) and gfx942 and gfx1100 (clang or
//! hipcc). A rejection by any compiler is a failure naming the seed, and so is a known device
//! miscompilation in the SASS of an NVIDIA object (`device::scan_sass`, with `cuobjdump`).
//! Ignored by default (it needs the compilers); `.ci/run` runs it.

use tilelang_difftest::{device, gen};

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
#[ignore = "needs nvcc and clang 19+ (or hipcc); .ci/run runs it"]
fn generated_kernels_compile_for_the_devices() {
    let (offset, n) = (env("DIFF_OFFSET", 0), env("DIFF_N", 100));
    let seeds: Vec<u64> = (offset..offset + n).map(gen::seed_of).collect();
    let dir =
        std::env::temp_dir().join(format!("tilelang-difftest-compile-{}", std::process::id()));
    let t = std::time::Instant::now();
    let archs = ["sm_90", "sm_90a", "gfx942", "gfx1100"];
    let jobs = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut findings = device::compile(&dir, &seeds, &archs, 24, jobs).unwrap();
    let entries = device::index(&dir).unwrap();
    let scanned = device::scan_sass(&dir).unwrap();
    findings.extend(scanned.expect("no cuobjdump beside nvcc (or CUOBJDUMP)"));
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!(
        "{n} kernels: {} entries compiled for {archs:?} in {:.1} s",
        entries.len(),
        t.elapsed().as_secs_f64()
    );
    let report: Vec<String> = findings
        .iter()
        .map(|f| format!("seed {:016x}: {}", f.seed, f.what))
        .collect();
    assert!(report.is_empty(), "{}", report.join("\n"));
    for arch in archs {
        assert!(
            entries.iter().any(|e| e.arch == arch),
            "nothing compiled for {arch}"
        );
    }
}

/// The kernels that found a device compiler's fault (`docs/design/difftest.md` §7), reduced and
/// kept as sources in `tests/found/` (the generator's seeds draw other programs as it grows),
/// through all four compilers: `cce1dd5be38e244b`, whose sm_90 and sm_90a objects held a signed
/// `VIMNMX3` that ptxas 13.0 miscompiles (none is left: `tl_scalar.h` compares signed integers
/// as unsigned); `91b23bd8098b6288`, a u32 cast to bf16 that crashed clang 19's AMDGPU backend
/// ("Cannot select: bf16 = uint_to_fp"; `tl_platform.h` rounds double to bf16 through float
/// rounded to odd); and one fault of ours that a device compiler reported: `edd084d66e7cd7e6`,
/// a B of 24 rows marked `.t()` whose `gemm_mma` instantiated the other orientation's `sidx`,
/// a static assertion for nvcc (tl.h now takes `if constexpr`).
#[test]
#[ignore = "needs nvcc, cuobjdump and clang 19+ (or hipcc); .ci/run runs it"]
fn the_kernels_that_found_compiler_faults_compile_right() {
    let found = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/found");
    let mut sources = Vec::new();
    for e in std::fs::read_dir(&found).unwrap() {
        let path = e.unwrap().path();
        let seed = path.file_stem().and_then(|s| s.to_str()).unwrap();
        let seed = u64::from_str_radix(seed, 16).expect("tests/found/<seed>.rs");
        sources.push((seed, std::fs::read_to_string(&path).unwrap()));
    }
    assert!(sources.len() >= 2, "the kernels in {}", found.display());
    let dir = std::env::temp_dir().join(format!("tilelang-difftest-found-{}", std::process::id()));
    let archs = ["sm_90", "sm_90a", "gfx942", "gfx1100"];
    let findings = device::compile_sources(&dir, &sources, &archs, 24, 2).unwrap();
    let entries = device::index(&dir).unwrap();
    let scanned = device::scan_sass(&dir).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(findings.is_empty(), "{findings:?}");
    for (seed, _) in &sources {
        for arch in archs {
            assert!(
                entries.iter().any(|e| e.seed == *seed && e.arch == arch),
                "{seed:016x}: nothing compiled for {arch}"
            );
        }
    }
    let scanned = scanned.expect("no cuobjdump beside nvcc (or CUOBJDUMP)");
    assert!(scanned.is_empty(), "{scanned:?}");
}
