//! `cargo bench -p benches [-- FILTER]`: every kernel and variant of the ten tutorials at the
//! tutorial sizes and at large sizes, our default and autotuned configs, cuBLAS and the driver's
//! copy, the bandwidth ceiling and the launch latency, on the first CUDA GPU (with the `rocm`
//! feature, on the first HIP GPU when there is no CUDA device).
//!
//! Each measurement is a criterion benchmark whose `iter_custom` returns **device time**
//! (CUDA events around each launch, the L2 flushed before each launch outside the timed
//! region), so criterion's statistics describe device time. Besides criterion's report, the
//! median, min and max of every measurement go to a JSON file (`TILELANG_BENCH_JSON`, default
//! `target/bench.json`) for `cargo xtask report`. Environment: see `benches/README.md`.
//!
//! Without a GPU there is nothing to measure: the binary says so and exits (status 0 under
//! `cargo test`, where criterion runs in test mode, else 1).

use benches::record;
use benches::runner::{Options, Runner};
use criterion::Criterion;
use std::process::ExitCode;
use std::time::Duration;
use tilelang::tune::Tuner;
use tilelang::{Backend, Device};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    // `cargo bench` passes `--bench`; `cargo test --benches` runs the binary without it, and
    // criterion then runs each benchmark once as a test.
    let bench_mode = args.iter().any(|a| a == "--bench");
    let opts = match Options::from_env() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("tilelang benches: {e}");
            return ExitCode::from(2);
        }
    };
    let allow_cpu = std::env::var("TILELANG_BENCH_ALLOW_CPU").is_ok_and(|v| v == "1");
    let dev = match open_gpu() {
        Ok(d) => d,
        Err(e) if allow_cpu => {
            eprintln!("tilelang benches: no GPU ({e}); TILELANG_BENCH_ALLOW_CPU=1: timing the CPU backend");
            Device::cpu()
        }
        Err(e) => {
            eprintln!(
                "tilelang benches: no GPU to measure ({e}).\n\
                 The benches time GPU kernels with device events; run them on a machine with an \
                 NVIDIA GPU and driver, or (built with `--features rocm`) an AMD GPU with ROCm 6 \
                 or newer (see benches/README.md), or set TILELANG_BENCH_ALLOW_CPU=1 with \
                 TILELANG_BENCH_SIZES=smoke to exercise the harness on the CPU backend."
            );
            return if bench_mode {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    if dev.backend() == Backend::Cpu && opts.sizes.iter().any(|s| *s != record::SizeSet::Smoke) {
        eprintln!("tilelang benches: on the CPU backend only TILELANG_BENCH_SIZES=smoke is sensible; the tutorial sizes take minutes there");
    }
    let json_path = std::env::var("TILELANG_BENCH_JSON")
        .ok()
        .filter(|p| !p.is_empty())
        .unwrap_or_else(default_json_path);
    eprintln!(
        "tilelang benches on {} ({}), sizes {:?}, seed {}, flush {} MiB; JSON to {json_path}",
        dev.name(),
        dev.arch(),
        opts.sizes.iter().map(|s| s.name()).collect::<Vec<_>>(),
        opts.seed,
        opts.flush_bytes >> 20
    );

    let mut criterion = Criterion::default()
        .without_plots()
        .nresamples(20_000)
        .warm_up_time(Duration::from_millis(100))
        .configure_from_args();
    let tuner = Tuner::new();
    if let Some(p) = tuner.cache_path() {
        eprintln!("tune cache: {}", p.display());
    }
    let mut runner = match Runner::new(dev, opts, Some(&mut criterion), tuner) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("tilelang benches: {e}");
            return ExitCode::FAILURE;
        }
    };
    let header = runner.header();
    benches::suite::run_all(&mut runner);
    let records = std::mem::take(&mut runner.records);
    let write = std::path::Path::new(&json_path)
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(&json_path, bench_record::to_json_lines(&header, &records)));
    let notes = std::mem::take(&mut runner.notes);
    let failures = std::mem::take(&mut runner.failures);
    drop(runner);
    criterion.final_summary();

    for n in &notes {
        eprintln!("note: {n}");
    }
    for f in &failures {
        eprintln!("FAIL {f}");
    }
    if let Err(e) = &write {
        eprintln!("tilelang benches: cannot write {json_path}: {e}");
    }
    let results = records.len();
    let passed = records.iter().filter(|r| r.passed == Some(true)).count();
    println!(
        "bench summary: {results} records ({passed} passed), {} failures, {} notes; JSON: {json_path}",
        failures.len(),
        notes.len()
    );
    if failures.is_empty() && write.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The first CUDA device; with the `rocm` feature, the first HIP device when there is no CUDA
/// device. The error names what was tried.
fn open_gpu() -> Result<Device, String> {
    let cuda = match Device::cuda(0) {
        Ok(d) => return Ok(d),
        Err(e) => e,
    };
    #[cfg(feature = "rocm")]
    {
        match Device::hip(0) {
            Ok(d) => {
                eprintln!(
                    "tilelang benches: no CUDA device ({cuda}); using HIP device 0, {} ({})",
                    d.name(),
                    d.arch()
                );
                Ok(d)
            }
            Err(hip) => Err(format!("CUDA: {cuda}; HIP: {hip}")),
        }
    }
    #[cfg(not(feature = "rocm"))]
    {
        Err(format!(
            "CUDA: {cuda}; HIP devices are tried only when built with `--features rocm`"
        ))
    }
}

/// `$CARGO_TARGET_DIR/bench.json`, else `target/bench.json`.
fn default_json_path() -> String {
    let dir = std::env::var("CARGO_TARGET_DIR")
        .ok()
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| "target".to_string());
    format!("{dir}/bench.json")
}
