//! Autotuning: time every compiled config of a kernel for a shape on the current device, pick
//! the fastest, and remember it.
//!
//! A kernel's configs are fixed at compile time (`kernel::KERNEL.configs`), and each has an
//! object per arch, so tuning is only a choice among names. [`Tuner::tune`] takes a closure that
//! launches one config by name ([`Tuner::tune_kernel`] by the kernel's typed `Config`), times
//! each config with the device's events (after a warm-up launch, the
//! median of a few repetitions), and stores the winner per **(kernel, arch, shape bucket)** in a
//! small cache file; a later call with the same key reads the winner back without launching.
//!
//! * The shape bucket rounds every dimension up to a power of two ([`bucket`]): `4000×16384`
//!   and `4096×16384` share a winner, `4096×16384` and `8192×16384` do not.
//! * The cache is a tab-separated text file, one line per key (`kernel arch bucket config
//!   median_ms`), at `TILELANG_TUNE_CACHE`, else `$XDG_CACHE_HOME/tilelang/tune.tsv`, else
//!   `$HOME/.cache/tilelang/tune.tsv`, else `target/tilelang-tune.tsv`. It is rewritten whole
//!   (through a temporary file and a rename) when a key is added. A line naming a config the
//!   kernel no longer has is ignored and the kernel tuned again.
//! * `TILELANG_TUNE=force` ignores cached winners (and records the new ones).
//! * The cache itself is [`crate::tuning`]'s (`tilelang::tuning`), which the generated `launch_auto` reads: tuned
//!   with the kernel's shape symbols' values (in `SYMBOLS` order) as the shape, a kernel's
//!   winner is what `launch_auto` launches at that bucket.
//!
//! With `vector_add` a `#[tile_kernel]` of your crate (`tilelang::tune` is this module):
//!
//! ```ignore
//! use tilelang::tune::Tuner;
//! let tuned = Tuner::new().tune_kernel(&dev, &[n], |cfg| {
//!     vector_add::launch(&dev, cfg, &a, &b, &mut c)
//! })?;
//! vector_add::launch(&dev, tuned.config_of()?, &a, &b, &mut c)?;
//! ```
//!
//! (`kernels/src/tune_tests.rs` runs this on chapter 02's kernel.)

use crate::device::Device;
use crate::error::{Error, Result};
use crate::kernel_info::KernelConfig;
use crate::tensor::Tensor;
use crate::tuning::write_entry;
pub use crate::tuning::{bucket, default_cache_path, read_cache, Key};
use std::path::{Path, PathBuf};

/// The outcome of [`Tuner::tune`].
#[derive(Debug, Clone, PartialEq)]
pub struct Tuned {
    /// The fastest config (one of the names passed in).
    pub config: &'static str,
    /// Whether it was read from the cache (then `timings` is empty and nothing was launched).
    pub from_cache: bool,
    /// Median milliseconds of each config that launched, in the order given.
    pub timings: Vec<(&'static str, f64)>,
    /// Configs that failed to launch (e.g. a `requires` the shape does not meet), with the error.
    pub failed: Vec<(&'static str, String)>,
}

impl Tuned {
    /// The winner as the kernel's typed config.
    pub fn config_of<C: KernelConfig>(&self) -> Result<C> {
        C::from_name(self.config)
    }
}

/// Times configs and keeps the winners in a cache file; see the module docs.
#[derive(Debug, Clone)]
pub struct Tuner {
    cache: Option<PathBuf>,
    reps: usize,
    budget_ms: f64,
    force: bool,
    flush_bytes: usize,
}

impl Default for Tuner {
    fn default() -> Self {
        Tuner::new()
    }
}

impl Tuner {
    /// A tuner with the cache file from the environment (module docs), 20 repetitions per config
    /// (fewer for slow configs: about 200 ms each at most, never fewer than 3), and no cache
    /// flush between repetitions.
    pub fn new() -> Tuner {
        Tuner {
            cache: Some(default_cache_path()),
            reps: 20,
            budget_ms: 200.0,
            force: std::env::var("TILELANG_TUNE").is_ok_and(|v| v == "force"),
            flush_bytes: 0,
        }
    }

    /// Uses `path` as the cache file; `None` keeps nothing (every call tunes).
    pub fn cache(mut self, path: Option<PathBuf>) -> Tuner {
        self.cache = path;
        self
    }

    /// The cache file in use.
    pub fn cache_path(&self) -> Option<&Path> {
        self.cache.as_deref()
    }

    /// Repetitions per config (at least 1).
    pub fn reps(mut self, reps: usize) -> Tuner {
        self.reps = reps.max(1);
        self
    }

    /// Ignores cached winners when `true` (they are replaced by the new ones).
    pub fn force(mut self, force: bool) -> Tuner {
        self.force = force;
        self
    }

    /// Writes a buffer of `bytes` bytes on the device before each timed launch (outside the
    /// timed region), so every repetition starts with a cold L2 as in the benchmarks; 0 (the
    /// default) times back-to-back launches.
    pub fn flush_bytes(mut self, bytes: usize) -> Tuner {
        self.flush_bytes = bytes;
        self
    }

    /// Picks the fastest of `configs` for `shape` on `dev`: from the cache when it holds a
    /// winner for (`kernel`, `dev.arch()`, [`bucket`]`(shape)`), else by timing `launch(config)`
    /// for each config (a warm-up launch, then the median of the repetitions; device events on
    /// a GPU, wall time on the CPU backend) and recording the winner.
    ///
    /// `launch` must queue the same work for every config. A config whose launch fails is
    /// skipped (see [`Tuned::failed`]); if every one fails, the first error is returned.
    pub fn tune(
        &self,
        dev: &Device,
        kernel: &str,
        shape: &[usize],
        configs: &[&'static str],
        mut launch: impl FnMut(&str) -> Result<()>,
    ) -> Result<Tuned> {
        let key = Key::new(kernel, dev.arch(), shape);
        let mut flush: Option<Tensor<u8>> = None;
        let (reps, budget_ms, flush_bytes) = (self.reps, self.budget_ms, self.flush_bytes);
        self.tune_with(&key, configs, |config| {
            if flush.is_none() && flush_bytes > 0 {
                flush = Some(dev.alloc::<u8>(&[flush_bytes])?);
            }
            // Warm-up: loads the module and shows launch errors.
            launch(config)?;
            dev.synchronize()?;
            let mut t: Vec<f64> = Vec::new();
            let mut n = 1;
            while t.len() < n {
                if let Some(f) = flush.as_mut() {
                    f.poison()?;
                }
                t.push(dev.time_ms(|| launch(config))?);
                if t.len() == 1 {
                    n = reps.min((budget_ms / t[0].max(1e-6)) as usize).max(3);
                }
            }
            Ok(median(&mut t))
        })
    }

    /// [`Tuner::tune`] among every config of the kernel whose typed config `C` is (its
    /// `Config`), keyed by its name; `launch` takes the typed config, and
    /// [`Tuned::config_of`] gives the winner back as one.
    pub fn tune_kernel<C: KernelConfig>(
        &self,
        dev: &Device,
        shape: &[usize],
        mut launch: impl FnMut(C) -> Result<()>,
    ) -> Result<Tuned> {
        let kernel = C::KERNEL;
        self.tune(dev, kernel.name, shape, kernel.config_names, |name| {
            launch(C::from_name(name)?)
        })
    }

    /// [`Tuner::tune`] with the measurement given: `measure(config)` returns the config's time
    /// in milliseconds (or an error, which skips the config). The cache is consulted and
    /// updated as in `tune`. Ties go to the config listed first.
    pub fn tune_with(
        &self,
        key: &Key,
        configs: &[&'static str],
        mut measure: impl FnMut(&'static str) -> Result<f64>,
    ) -> Result<Tuned> {
        if configs.is_empty() {
            return Err(Error::BadArgument {
                kernel: "tune",
                arg: "configs",
                expected: "at least one config".to_string(),
                found: "none".to_string(),
            });
        }
        if !self.force {
            if let Some(path) = &self.cache {
                if let Some((name, _)) = read_cache(path).get(key) {
                    if let Some(&config) = configs.iter().find(|c| **c == name.as_str()) {
                        return Ok(Tuned {
                            config,
                            from_cache: true,
                            timings: Vec::new(),
                            failed: Vec::new(),
                        });
                    }
                }
            }
        }
        let mut timings = Vec::new();
        let mut failed = Vec::new();
        let mut first_error = None;
        for &config in configs {
            match measure(config) {
                Ok(ms) if ms.is_finite() => timings.push((config, ms)),
                Ok(ms) => failed.push((config, format!("non-finite time {ms}"))),
                Err(e) => {
                    failed.push((config, e.to_string()));
                    first_error.get_or_insert(e);
                }
            }
        }
        let Some(&(config, ms)) = timings
            .iter()
            .reduce(|best, t| if t.1 < best.1 { t } else { best })
        else {
            return Err(first_error.unwrap_or_else(|| Error::BadArgument {
                kernel: "tune",
                arg: "configs",
                expected: "a config with a finite time".to_string(),
                found: format!("{failed:?}"),
            }));
        };
        if let Some(path) = &self.cache {
            // A cache that cannot be written only costs a re-tune next time.
            let _ = write_entry(path, key, config, ms);
        }
        Ok(Tuned {
            config,
            from_cache: false,
            timings,
            failed,
        })
    }
}

/// The median of `t` (sorted in place); NaN for an empty slice.
fn median(t: &mut [f64]) -> f64 {
    if t.is_empty() {
        return f64::NAN;
    }
    t.sort_by(|a, b| a.total_cmp(b));
    t[t.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cache file of this test's own, removed first.
    fn scratch(name: &str) -> PathBuf {
        let p = std::env::temp_dir().join(format!(
            "tilelang-tune-test-{}-{name}.tsv",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&p);
        p
    }

    #[test]
    fn buckets_round_every_dimension_up_to_a_power_of_two() {
        assert_eq!(bucket(&[4000, 16384]), "4096x16384");
        assert_eq!(bucket(&[1]), "1");
        assert_eq!(bucket(&[0, 3, 5]), "1x4x8");
        assert_eq!(bucket(&[]), "-");
        assert_eq!(
            Key::new("k", "sm_90", &[4000]),
            Key::new("k", "sm_90", &[4096])
        );
        assert_ne!(
            Key::new("k", "sm_90", &[4096]),
            Key::new("k", "sm_90", &[4097])
        );
    }

    #[test]
    fn picks_the_fastest_and_remembers_it_per_key() {
        let path = scratch("fake");
        let tuner = Tuner::new().cache(Some(path.clone())).force(false);
        const CONFIGS: &[&str] = &["a", "b", "c", "broken"];
        // Deterministic fake timings: b is fastest for small shapes, c for large ones.
        let fake = |large: bool| {
            move |cfg: &'static str| -> Result<f64> {
                match (cfg, large) {
                    ("a", false) => Ok(3.0),
                    ("a", true) => Ok(6.0),
                    ("b", false) => Ok(1.0),
                    ("b", true) => Ok(5.0),
                    ("c", false) => Ok(2.0),
                    ("c", true) => Ok(4.0),
                    _ => Err(Error::Requirement {
                        kernel: "fake",
                        config: "broken",
                        condition: "never",
                        values: String::new(),
                    }),
                }
            }
        };
        let small = Key::new("fake", "sm_90", &[1000]);
        let large = Key::new("fake", "sm_90", &[1 << 20]);

        let t = tuner.tune_with(&small, CONFIGS, fake(false)).unwrap();
        assert_eq!(t.config, "b");
        assert!(!t.from_cache);
        assert_eq!(t.timings, vec![("a", 3.0), ("b", 1.0), ("c", 2.0)]);
        assert_eq!(t.failed.len(), 1);
        assert_eq!(t.failed[0].0, "broken");

        let t = tuner.tune_with(&large, CONFIGS, fake(true)).unwrap();
        assert_eq!(t.config, "c");

        // Read back: nothing is measured.
        let never = |_: &'static str| -> Result<f64> { panic!("must come from the cache") };
        let t = tuner.tune_with(&small, CONFIGS, never).unwrap();
        assert_eq!((t.config, t.from_cache), ("b", true));
        let t = tuner.tune_with(&large, CONFIGS, never).unwrap();
        assert_eq!((t.config, t.from_cache), ("c", true));
        // Same bucket, same winner; other arch, tuned again.
        let t = tuner
            .tune_with(&Key::new("fake", "sm_90", &[1024]), CONFIGS, never)
            .unwrap();
        assert_eq!(t.config, "b");
        let t = tuner
            .tune_with(&Key::new("fake", "gfx1100", &[1000]), CONFIGS, fake(true))
            .unwrap();
        assert_eq!((t.config, t.from_cache), ("c", false));

        // The file holds one line per key.
        let cache = read_cache(&path);
        assert_eq!(cache.len(), 3);
        assert_eq!(cache[&small], ("b".to_string(), 1.0));

        // A cached config the kernel no longer has is ignored; `force` re-tunes.
        let t = tuner.tune_with(&small, &["a", "c"], fake(false)).unwrap();
        assert_eq!((t.config, t.from_cache), ("c", false));
        let t = tuner
            .clone()
            .force(true)
            .tune_with(&small, &["a", "b"], fake(false))
            .unwrap();
        assert_eq!((t.config, t.from_cache), ("b", false));

        // Every config failing is the first config's error.
        let e = tuner
            .tune_with(&Key::new("fake", "x", &[1]), &["broken"], fake(false))
            .unwrap_err();
        assert!(matches!(e, Error::Requirement { .. }), "{e}");
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn malformed_cache_lines_are_skipped() {
        let path = scratch("malformed");
        std::fs::write(
            &path,
            "# header\nk\tcpu\t4\tb256\t0.5\ngarbage\nk\tcpu\t8\tb1024\tnot-a-number\n",
        )
        .unwrap();
        let cache = read_cache(&path);
        assert_eq!(cache.len(), 1);
        assert_eq!(cache[&Key::new("k", "cpu", &[3])].0, "b256");
        let _ = std::fs::remove_file(&path);
    }
}
