//! Benchmarks of the ten tutorial kernels: every kernel and variant, at the tutorial sizes and
//! at large sizes, against cuBLAS and the driver's copy, timed with device events on a cold L2.
//!
//! The bench target `tutorials` (`cargo bench -p benches`) runs [`suite::run_all`] under
//! criterion and writes the JSON the performance table is made from; see `README.md` beside
//! this crate for the sizes, the method and the JSON schema. The library holds the pieces so
//! that they are tested on the CPU backend (`cargo test -p benches`).

pub mod checks;
pub mod dequant;
/// The `examples` crate's kernels as the suite's chapter `ex`.
pub mod examples;
pub mod record;
/// rocBLAS and MIOpen baselines, loaded at run time (feature `rocm`; never run on AMD hardware).
#[cfg(feature = "rocm")]
pub mod rocm;
pub mod runner;
pub mod suite;
pub mod vendor;

#[cfg(test)]
mod tests {
    use crate::record::SizeSet;
    use crate::runner::{normalize_chapter, Options, Runner};
    use serde_json::Value;
    use tilelang::tune::Tuner;
    use tilelang::Device;

    /// The whole suite on the CPU backend at the smoke sizes: every kernel and variant checks,
    /// every record has the schema's fields, default and tuned records come in pairs.
    #[test]
    fn the_suite_runs_on_the_cpu_at_smoke_sizes() {
        let cache =
            std::env::temp_dir().join(format!("tilelang-bench-smoke-{}.tsv", std::process::id()));
        let _ = std::fs::remove_file(&cache);
        let seed = kernels::check::Rng::fresh_seed();
        let tuner = Tuner::new().cache(Some(cache.clone())).force(false).reps(2);
        let mut r = Runner::new(Device::cpu(), Options::smoke(seed), None, tuner).unwrap();
        crate::suite::run_all(&mut r);
        assert!(r.failures.is_empty(), "seed {seed}: {:#?}", r.failures);
        let header = serde_json::to_value(r.header()).unwrap();
        assert_eq!(header["record"], "header");
        assert_eq!(header["arch"], "cpu");

        let results: Vec<Value> = r
            .records
            .iter()
            .map(|m| serde_json::to_value(m).unwrap())
            .collect();
        for rec in &results {
            for k in [
                "chapter",
                "variant",
                "impl",
                "size_set",
                "shape",
                "dtype",
                "config",
                "median_ms",
                "min_ms",
                "max_ms",
                "max_rel_err",
                "passed",
            ] {
                assert!(rec.get(k).is_some(), "{k} missing in {rec}");
            }
            assert!(
                rec.get("bytes").is_some() != rec.get("flops").is_some(),
                "{rec}"
            );
            assert_eq!(rec["passed"], true, "{rec}");
            assert!(rec["median_ms"].as_f64().unwrap() > 0.0, "{rec}");
        }
        let count = |role: &str| results.iter().filter(|r| r["config_role"] == role).count();
        // 01: 3 variants; 02: 2; 03: 2; 04: 2; 05: 1; 06: 3; 07: 3; 08: 4; 09: 2; 10: 2 (square,
        // decode) = 24, the 9 examples' kernels in 10 variants (attention at D 128 and 64), plus
        // the launch-latency record (role default).
        assert_eq!(count("tuned"), 34);
        assert_eq!(count("default"), 35);
        assert_eq!(
            results
                .iter()
                .filter(|r| r["chapter"] == "ex" && r["config_role"] == "tuned")
                .count(),
            10
        );
        assert!(results
            .iter()
            .any(|r| r["chapter"] == "launch" && r["us_per_launch"].as_f64().is_some()));
        assert!(results
            .iter()
            .all(|r| r["size_set"] == SizeSet::Smoke.name() || r["chapter"] == "launch"));
        // No vendor rows on the CPU.
        assert!(results.iter().all(|r| r["impl"] == "tilelang"));
        let _ = std::fs::remove_file(&cache);
    }

    #[test]
    fn chapters_normalize() {
        assert_eq!(normalize_chapter("8"), "08");
        assert_eq!(normalize_chapter("08 GEMM"), "08");
        assert_eq!(normalize_chapter("10"), "10");
        assert_eq!(normalize_chapter("Launch"), "launch");
    }
}
