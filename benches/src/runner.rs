//! The measuring loop: check once, tune, then time with device events and a cold L2 under
//! criterion (or a plain loop), and keep a JSON record of each measurement.

use crate::record::{self, SizeSet, Spec, Stats, Verdict, Work};
use crate::vendor::{self, Blas, BlasLt, Dnn};
use bench_record::{Header, Measurement};
use criterion::{BenchmarkId, Criterion, SamplingMode};
use std::rc::Rc;
use std::time::{Duration, Instant};
use tilelang::tune::Tuner;
use tilelang::{Device, Element, Error, KernelConfig, Result, Tensor};

/// What to run and how long; [`Options::from_env`] reads the environment.
#[derive(Debug, Clone)]
pub struct Options {
    pub sizes: Vec<SizeSet>,
    /// Only these chapters (`"01"`, `"08"`, `"launch"`, `"ceiling"`); `None` for all.
    pub chapters: Option<Vec<String>>,
    /// Bytes written between timed launches to evict the L2 (0: no flush).
    pub flush_bytes: usize,
    /// Device time to spend timing one measurement, in milliseconds (repetitions are derived
    /// from a first timing and clamped to `min_reps..=max_reps`).
    pub budget_ms: f64,
    /// Device time the FLOP-counted measurements (the GEMMs) run back to back before they are
    /// timed, in milliseconds: long tensor-core work lowers the card's clocks within a few
    /// hundred milliseconds (power), so those rows are timed at the clocks they sustain, the
    /// same for every implementation. Memory-bound rows do not depend on the SM clock.
    pub sustain_ms: f64,
    pub min_reps: usize,
    pub max_reps: usize,
    pub seed: u64,
}

impl Options {
    /// `TILELANG_BENCH_SIZES` (default `tutorial,large`), `TILELANG_BENCH_ONLY` (chapters,
    /// comma-separated), `TILELANG_BENCH_FLUSH_MB` (default 256), `TILELANG_BENCH_MS` (default
    /// 1000), `TILELANG_BENCH_SUSTAIN_MS` (default 500), `TILELANG_SEED`.
    pub fn from_env() -> std::result::Result<Options, String> {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let sizes = match var("TILELANG_BENCH_SIZES") {
            None => vec![SizeSet::Tutorial, SizeSet::Large],
            Some(s) => s
                .split(',')
                .map(|x| {
                    SizeSet::parse(x).ok_or_else(|| {
                        format!("TILELANG_BENCH_SIZES: `{x}` is not tutorial, large or smoke")
                    })
                })
                .collect::<std::result::Result<_, _>>()?,
        };
        let chapters = var("TILELANG_BENCH_ONLY").map(|s| {
            s.split(',')
                .map(|c| normalize_chapter(c.trim()))
                .collect::<Vec<_>>()
        });
        let number = |k: &str, default: f64| -> std::result::Result<f64, String> {
            match var(k) {
                None => Ok(default),
                Some(v) => v
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|x| *x >= 0.0)
                    .ok_or_else(|| format!("{k}: `{v}` is not a non-negative number")),
            }
        };
        Ok(Options {
            sizes,
            chapters,
            flush_bytes: (number("TILELANG_BENCH_FLUSH_MB", 256.0)? * (1 << 20) as f64) as usize,
            budget_ms: number("TILELANG_BENCH_MS", 1000.0)?,
            sustain_ms: number("TILELANG_BENCH_SUSTAIN_MS", 500.0)?,
            min_reps: 10,
            max_reps: 500,
            seed: kernels::check::Rng::fresh_seed(),
        })
    }

    /// Tiny and quick: the whole suite on the CPU backend in a test.
    pub fn smoke(seed: u64) -> Options {
        Options {
            sizes: vec![SizeSet::Smoke],
            chapters: None,
            flush_bytes: 1 << 16,
            budget_ms: 0.0,
            sustain_ms: 0.0,
            min_reps: 2,
            max_reps: 2,
            seed,
        }
    }

    pub fn wants(&self, chapter: &str) -> bool {
        self.chapters
            .as_ref()
            .is_none_or(|c| c.iter().any(|x| x == chapter))
    }
}

/// `"8"`, `"08"`, `"08 gemm"` → `"08"`; other names unchanged.
pub fn normalize_chapter(c: &str) -> String {
    let digits: String = c.chars().take_while(char::is_ascii_digit).collect();
    match digits.parse::<u32>() {
        Ok(n) => format!("{n:02}"),
        Err(_) => c.to_ascii_lowercase(),
    }
}

/// Runs checks and timings and collects the records.
pub struct Runner<'c> {
    pub dev: Device,
    pub opts: Options,
    criterion: Option<&'c mut Criterion>,
    flush: Option<Tensor<u8>>,
    tuner: Tuner,
    blas: Option<std::result::Result<Rc<Blas>, String>>,
    blaslt: Option<std::result::Result<Rc<BlasLt>, String>>,
    dnn: Option<std::result::Result<Rc<Dnn>, String>>,
    #[cfg(feature = "rocm")]
    rocblas: Option<std::result::Result<Rc<crate::rocm::RocBlas>, String>>,
    #[cfg(feature = "rocm")]
    miopen: Option<std::result::Result<Rc<crate::rocm::MiOpen>, String>>,
    pub records: Vec<Measurement>,
    /// One line per failed check, launch or chapter.
    pub failures: Vec<String>,
    /// Things not measured and why (a missing library, ...).
    pub notes: Vec<String>,
    /// The kernels [`Runner::kernel`] ran, by name, in order (repeats included).
    pub benched: Vec<&'static str>,
}

/// The library in `slot`, made by `make` on first use; a failure is noted once (no baselines
/// of that library) and returned on every call.
fn load_once<L>(
    slot: &mut Option<std::result::Result<Rc<L>, String>>,
    notes: &mut Vec<String>,
    what: &str,
    make: impl FnOnce() -> std::result::Result<L, String>,
) -> std::result::Result<Rc<L>, String> {
    slot.get_or_insert_with(|| {
        let made = make().map(Rc::new);
        if let Err(e) = &made {
            notes.push(format!("no {what} baselines: {e}"));
        }
        made
    })
    .clone()
}

/// One timed launch: the flush is queued before the start event, so it is outside the timed
/// region; the events bracket exactly what `f` queues.
fn timed_once(
    dev: &Device,
    flush: &mut Option<Tensor<u8>>,
    f: &mut dyn FnMut() -> Result<()>,
) -> Result<f64> {
    if let Some(t) = flush.as_mut() {
        t.poison()?;
    }
    dev.time_ms(f)
}

/// Criterion's group: `"08 GEMM"`, or the title alone for the non-chapter records.
fn group_name(spec: &Spec) -> String {
    if spec.chapter.starts_with(|c: char| c.is_ascii_digit()) {
        format!("{} {}", spec.chapter, spec.title)
    } else {
        spec.title.to_string()
    }
}

fn vendor_err(e: String) -> Error {
    Error::External(e)
}

impl<'c> Runner<'c> {
    /// A runner on `dev`; with `criterion`, every timing is a criterion benchmark (device time
    /// through `iter_custom`), else a plain loop.
    pub fn new(
        dev: Device,
        opts: Options,
        criterion: Option<&'c mut Criterion>,
        tuner: Tuner,
    ) -> Result<Runner<'c>> {
        let flush = match opts.flush_bytes {
            0 => None,
            n => Some(dev.alloc::<u8>(&[n])?),
        };
        // The tuner flushes like the timings, so it ranks configs under the same conditions.
        let tuner = tuner.flush_bytes(opts.flush_bytes);
        Ok(Runner {
            dev,
            opts,
            criterion,
            flush,
            tuner,
            blas: None,
            blaslt: None,
            dnn: None,
            #[cfg(feature = "rocm")]
            rocblas: None,
            #[cfg(feature = "rocm")]
            miopen: None,
            records: Vec::new(),
            failures: Vec::new(),
            notes: Vec::new(),
            benched: Vec::new(),
        })
    }

    pub fn is_gpu(&self) -> bool {
        self.dev.backend() != tilelang::Backend::Cpu
    }

    /// A CUDA device: the NVIDIA vendor baselines apply.
    pub fn is_cuda(&self) -> bool {
        self.dev.backend() == tilelang::Backend::Cuda
    }

    /// A HIP device: the AMD vendor baselines apply (with the `rocm` feature).
    pub fn is_hip(&self) -> bool {
        self.dev.backend() == tilelang::Backend::Hip
    }

    /// cuBLAS on this device, loaded on first use; the error (a missing library) is noted once.
    pub fn blas(&mut self) -> std::result::Result<Rc<Blas>, String> {
        load_once(&mut self.blas, &mut self.notes, "cuBLAS", || {
            Blas::new(&self.dev)
        })
    }

    /// cuBLASLt on this device (with its workspace), loaded on first use; the error is noted
    /// once.
    pub fn blaslt(&mut self) -> std::result::Result<Rc<BlasLt>, String> {
        load_once(&mut self.blaslt, &mut self.notes, "cuBLASLt", || {
            BlasLt::new(&self.dev)
        })
    }

    /// cuDNN on this device, loaded on first use; the error is noted once.
    pub fn dnn(&mut self) -> std::result::Result<Rc<Dnn>, String> {
        load_once(&mut self.dnn, &mut self.notes, "cuDNN", || {
            Dnn::new(&self.dev)
        })
    }

    /// rocBLAS on this (HIP) device, loaded on first use; the error is noted once.
    #[cfg(feature = "rocm")]
    pub fn rocblas(&mut self) -> std::result::Result<Rc<crate::rocm::RocBlas>, String> {
        load_once(&mut self.rocblas, &mut self.notes, "rocBLAS", || {
            crate::rocm::RocBlas::new(&self.dev)
        })
    }

    /// MIOpen on this (HIP) device, loaded on first use; the error is noted once.
    #[cfg(feature = "rocm")]
    pub fn miopen(&mut self) -> std::result::Result<Rc<crate::rocm::MiOpen>, String> {
        load_once(&mut self.miopen, &mut self.notes, "MIOpen", || {
            crate::rocm::MiOpen::new(&self.dev)
        })
    }

    /// The header record: machine, date, commit, method, the vendor libraries' versions
    /// (loading them; `null` for one that is missing).
    pub fn header(&mut self) -> Header {
        let gpu = self.is_cuda();
        #[cfg(feature = "rocm")]
        let (rocblas_version, miopen_version) = if self.is_hip() {
            (
                self.rocblas().ok().map(|b| b.version.clone()),
                self.miopen().ok().map(|m| m.version.clone()),
            )
        } else {
            (None, None)
        };
        #[cfg(not(feature = "rocm"))]
        let (rocblas_version, miopen_version): (Option<String>, Option<String>) = (None, None);
        let blas_version = if gpu {
            self.blas().ok().map(|b| b.version)
        } else {
            None
        };
        let blaslt_version = if gpu {
            self.blaslt().ok().map(|b| b.version)
        } else {
            None
        };
        let cudnn_version = if gpu {
            self.dnn().ok().map(|d| d.version)
        } else {
            None
        };
        let driver = std::env::var("TILELANG_GPU_DRIVER")
            .ok()
            .or_else(|| vendor::driver_version(&self.dev).map(|v| format!("CUDA {v}")));
        Header {
            record: "header".into(),
            imp: "tilelang".into(),
            gpu: self.dev.name().to_string(),
            arch: self.dev.arch().to_string(),
            backend: format!("{:?}", self.dev.backend()),
            driver,
            cublas_version: blas_version,
            cublaslt_version: blaslt_version,
            cudnn_version,
            rocblas_version,
            miopen_version,
            date: record::utc_date(),
            commit: std::env::var("TILELANG_COMMIT").ok(),
            seed: self.opts.seed,
            size_sets: self.opts.sizes.iter().map(|s| s.name().to_string()).collect(),
            flush_bytes: self.opts.flush_bytes,
            sustain_ms: Some(self.opts.sustain_ms),
            timing: "device events around each launch (CUDA events; wall time on the CPU backend), \
                     after a warm-up (FLOP-counted rows: sustain_ms of back-to-back launches \
                     first, so they run at sustained clocks); the flush buffer is written before each timed launch, \
                     outside the timed region; median over every timed launch"
                .into(),
            harness: if self.criterion.is_some() { "criterion iter_custom (device time)" } else { "plain loop" }
                .into(),
        }
    }

    /// Poisons `out`, launches once, downloads and checks. `Err` only for a failed launch.
    fn check_once<T: Element>(
        &self,
        out: &mut Tensor<T>,
        check: &dyn Fn(&[T]) -> Verdict,
        launch: &mut dyn FnMut(&mut Tensor<T>) -> Result<()>,
    ) -> Result<(Verdict, Vec<T>)> {
        out.poison()?;
        launch(out)?;
        self.dev.synchronize()?;
        let got = out.to_vec()?;
        Ok((check(&got), got))
    }

    /// Times `f` (warm-up, a first timing to plan the repetitions, then criterion or a loop).
    /// `None` when criterion's filter skipped it.
    fn measure(
        &mut self,
        spec: &Spec,
        label: &str,
        f: &mut dyn FnMut() -> Result<()>,
    ) -> Result<Option<Stats>> {
        let dev = self.dev.clone();
        f()?;
        dev.synchronize()?;
        // The repetitions (and criterion's measurement time) come from this estimate: the
        // median of 5 timings, or one timing for a launch slower than 50 ms.
        let mut first = vec![timed_once(&dev, &mut self.flush, f)?];
        while first[0] < 50.0 && first.len() < 5 {
            first.push(timed_once(&dev, &mut self.flush, f)?);
        }
        let est = Stats::of(&first).map_or(1e-6, |s| s.median_ms.max(1e-6));
        let reps =
            ((self.opts.budget_ms / est) as usize).clamp(self.opts.min_reps, self.opts.max_reps);
        if matches!(spec.work, Work::Flops(_)) {
            // Sustained clocks (Options::sustain_ms), launched exactly as they are timed.
            let mut spent = 0.0;
            while spent < self.opts.sustain_ms {
                spent += timed_once(&dev, &mut self.flush, f)?.max(1e-3);
            }
        }
        let flush = &mut self.flush;
        let Some(c) = self.criterion.as_deref_mut() else {
            let mut t = Vec::with_capacity(reps);
            for _ in 0..reps {
                t.push(timed_once(&dev, flush, f)?);
            }
            return Ok(Stats::of(&t));
        };
        let mut samples: Vec<f64> = Vec::new();
        let mut error: Option<Error> = None;
        let mut group = c.benchmark_group(group_name(spec));
        group
            .sampling_mode(SamplingMode::Flat)
            .sample_size(10)
            .warm_up_time(Duration::from_secs_f64(est * 3.0 / 1e3))
            .measurement_time(Duration::from_secs_f64(est * reps as f64 / 1e3));
        group.bench_function(
            BenchmarkId::new(format!("{} [{label}]", spec.variant), spec.size_set.name()),
            |b| {
                b.iter_custom(|iters| {
                    let mut total_ms = 0.0;
                    for _ in 0..iters {
                        if error.is_some() {
                            break;
                        }
                        match timed_once(&dev, flush, f) {
                            Ok(ms) => {
                                samples.push(ms);
                                total_ms += ms;
                            }
                            Err(e) => error = Some(e),
                        }
                    }
                    // Criterion's statistics then describe device time.
                    Duration::from_secs_f64(total_ms.max(1e-6) / 1e3)
                })
            },
        );
        group.finish();
        match error {
            Some(e) => Err(e),
            None => Ok(Stats::of(&samples)),
        }
    }

    fn push(&mut self, rec: Measurement) {
        if rec.passed == Some(false) {
            self.failures.push(format!(
                "{} {} [{} {}] {}: {}",
                rec.chapter,
                rec.variant,
                rec.imp,
                rec.config,
                rec.size_set,
                if rec.error.is_empty() {
                    "check failed"
                } else {
                    &rec.error
                },
            ));
        }
        self.records.push(rec);
    }

    /// A record for a measurement that could not be made.
    fn failed(
        &mut self,
        spec: &Spec,
        imp: &str,
        config: &str,
        role: &str,
        what: &str,
        e: &dyn std::fmt::Display,
    ) {
        let stats = Stats {
            median_ms: f64::NAN,
            min_ms: f64::NAN,
            max_ms: f64::NAN,
            reps: 0,
        };
        let v = Verdict::error(what, e.to_string());
        self.push(record::result(spec, imp, config, role, &stats, &v));
    }

    /// One of our kernels: checks the default config for the device's arch, tunes among all
    /// its configs (every config timed, the winner cached per arch and shape bucket), checks the
    /// winner if it differs, and times both. Records `config_role` `"default"` and `"tuned"`
    /// (the tuned record repeats the default's numbers when the winner is the default).
    pub fn kernel<T: Element, C: KernelConfig>(
        &mut self,
        spec: &Spec,
        out: &mut Tensor<T>,
        check: &dyn Fn(&[T]) -> Verdict,
        launch: &mut dyn FnMut(C, &mut Tensor<T>) -> Result<()>,
    ) {
        let default = C::KERNEL.default_config(self.dev.arch());
        self.kernel_configs(spec, C::KERNEL.config_names, default, out, check, launch);
    }

    /// [`Runner::kernel`] among some of the kernel's configs only, with `default` (one of
    /// them) as the default.
    pub fn kernel_configs<T: Element, C: KernelConfig>(
        &mut self,
        spec: &Spec,
        configs: &[&'static str],
        default: &'static str,
        out: &mut Tensor<T>,
        check: &dyn Fn(&[T]) -> Verdict,
        typed: &mut dyn FnMut(C, &mut Tensor<T>) -> Result<()>,
    ) {
        // Configs are recorded, tuned and cached by name; each launch takes the typed config.
        let launch: &mut dyn FnMut(&str, &mut Tensor<T>) -> Result<()> =
            &mut |name, o| typed(C::from_name(name)?, o);
        self.benched.push(C::KERNEL.name);
        eprintln!(
            "  {} {} [{}] ...",
            spec.chapter,
            spec.variant,
            spec.size_set.name()
        );
        let verdict = match self.check_once(out, check, &mut |o| launch(default, o)) {
            Ok((v, _)) => v,
            Err(e) => return self.failed(spec, "tilelang", default, "default", "launch", &e),
        };
        let key = format!("{}/{}", spec.chapter, spec.variant);
        let dev = self.dev.clone();
        let tuned = match self.tuner.tune(&dev, &key, &spec.shape, configs, |cfg| {
            launch(cfg, &mut *out)
        }) {
            Ok(t) => Some(t),
            Err(e) => {
                self.failures.push(format!(
                    "{key} [{}]: tuning failed: {e}",
                    spec.size_set.name()
                ));
                None
            }
        };
        let tuned_config = tuned.as_ref().map_or(default, |t| t.config);

        let stats = match self.measure(spec, &format!("default {default}"), &mut || {
            launch(default, &mut *out)
        }) {
            Ok(Some(s)) => s,
            Ok(None) => return,
            Err(e) => return self.failed(spec, "tilelang", default, "default", "timing", &e),
        };
        let rec = record::result(spec, "tilelang", default, "default", &stats, &verdict);
        self.push(rec.clone());

        let mut tuned_rec = if tuned_config == default {
            let mut r = rec;
            r.config_role = "tuned".into();
            r.same_as_default = Some(true);
            r
        } else {
            let v = match self.check_once(out, check, &mut |o| launch(tuned_config, o)) {
                Ok((v, _)) => v,
                Err(e) => {
                    return self.failed(spec, "tilelang", tuned_config, "tuned", "launch", &e)
                }
            };
            let label = format!("tuned {tuned_config}");
            match self.measure(spec, &label, &mut || launch(tuned_config, &mut *out)) {
                Ok(Some(s)) => record::result(spec, "tilelang", tuned_config, "tuned", &s, &v),
                Ok(None) => return,
                Err(e) => {
                    return self.failed(spec, "tilelang", tuned_config, "tuned", "timing", &e)
                }
            }
        };
        if let Some(t) = &tuned {
            tuned_rec.tuned_from_cache = Some(t.from_cache);
            let timings = t.timings.iter().map(|(c, ms)| (c.to_string(), *ms));
            tuned_rec.tuning_ms = Some(timings.collect());
        }
        self.push(tuned_rec);
    }

    /// A baseline (vendor library or driver copy): checked once, then timed. Returns the
    /// checked output (for comparisons against it), `None` if it could not run.
    pub fn baseline<T: Element>(
        &mut self,
        spec: &Spec,
        imp: &str,
        config: &str,
        out: &mut Tensor<T>,
        check: &dyn Fn(&[T]) -> Verdict,
        launch: &mut dyn FnMut(&mut Tensor<T>) -> std::result::Result<(), String>,
    ) -> Option<Vec<T>> {
        eprintln!(
            "  {} {} [{imp}, {}] ...",
            spec.chapter,
            spec.variant,
            spec.size_set.name()
        );
        let (verdict, got) =
            match self.check_once(out, check, &mut |o| launch(o).map_err(vendor_err)) {
                Ok(x) => x,
                Err(e) => {
                    self.failed(spec, imp, config, "vendor", "launch", &e);
                    return None;
                }
            };
        // Criterion's name: the library and the config's first clause (the full config, with
        // the chosen algorithm, is in the record), so that names stay short and stable.
        let short = config.split([',', ';']).next().unwrap_or(config).trim();
        match self.measure(spec, &format!("{imp} {short}"), &mut || {
            launch(&mut *out).map_err(vendor_err)
        }) {
            Ok(Some(s)) => {
                let rec = record::result(spec, imp, config, "vendor", &s, &verdict);
                self.push(rec);
            }
            Ok(None) => {}
            Err(e) => self.failed(spec, imp, config, "vendor", "timing", &e),
        }
        Some(got)
    }

    /// Host-side latency of `launch`: `n` back-to-back calls and one synchronize, in
    /// microseconds per kernel (a call may launch `kernels_per_call` kernels, as a graph replay
    /// does; median of `rounds`); a criterion benchmark of the same loop (wall time) when
    /// criterion runs.
    pub fn launch_latency(
        &mut self,
        spec: &Spec,
        config: &str,
        n: usize,
        rounds: usize,
        kernels_per_call: usize,
        launch: &mut dyn FnMut() -> Result<()>,
    ) {
        let dev = self.dev.clone();
        let mut run = |iters: u64| -> Result<Duration> {
            let t = Instant::now();
            for _ in 0..iters {
                launch()?;
            }
            dev.synchronize()?;
            Ok(t.elapsed())
        };
        let mut per_launch_ms = Vec::new();
        let result = (|| -> Result<()> {
            run(100)?; // warm-up: module load, first launches
            for _ in 0..rounds.max(1) {
                per_launch_ms.push(
                    run(n as u64)?.as_secs_f64() * 1e3 / (n * kernels_per_call.max(1)) as f64,
                );
            }
            Ok(())
        })();
        if let Err(e) = result {
            return self.failed(spec, "tilelang", config, "default", "launch", &e);
        }
        if let Some(c) = self.criterion.as_deref_mut() {
            let mut group = c.benchmark_group(group_name(spec));
            group
                .sample_size(10)
                .warm_up_time(Duration::from_millis(100))
                .measurement_time(Duration::from_millis(500));
            group.bench_function(
                BenchmarkId::new(
                    format!("{} [host wall time]", spec.variant),
                    spec.size_set.name(),
                ),
                |b| b.iter_custom(|iters| run(iters).unwrap_or(Duration::from_nanos(1))),
            );
            group.finish();
        }
        let Some(stats) = Stats::of(&per_launch_ms) else {
            return;
        };
        let v = Verdict {
            passed: true,
            max_rel_err: 0.0,
            method: "none (latency only)".into(),
            detail: String::new(),
        };
        let mut rec = record::result(spec, "tilelang", config, "default", &stats, &v);
        rec.us_per_launch = Some(stats.median_ms * 1e3);
        rec.launches_per_round = Some(n);
        rec.kernels_per_call = Some(kernels_per_call);
        rec.timing = Some(
            "host wall time of back-to-back launches plus one synchronize, divided by the count"
                .into(),
        );
        self.push(rec);
    }
}

#[cfg(test)]
mod tests {
    use super::{Options, Runner};
    use crate::record::{SizeSet, Spec, Work};
    use std::time::Duration;
    use tilelang::tune::Tuner;
    use tilelang::Device;

    /// FLOP-counted rows run `sustain_ms` of launches before they are timed; memory-bound rows
    /// do not. Each launch here takes at least 1 ms (the CPU backend times wall time).
    #[test]
    fn only_flop_counted_rows_run_the_sustain_window_first() {
        let mut opts = Options::smoke(1);
        opts.flush_bytes = 0;
        opts.sustain_ms = 25.0;
        let mut r = Runner::new(Device::cpu(), opts, None, Tuner::new()).unwrap();
        let mut launches = |work: Work| {
            let spec = Spec {
                chapter: "08",
                title: "GEMM",
                variant: "sustain".into(),
                size_set: SizeSet::Smoke,
                shape: vec![1],
                dtype: "f16",
                work,
            };
            let mut n = 0usize;
            let stats = r
                .measure(&spec, "test", &mut || {
                    n += 1;
                    std::thread::sleep(Duration::from_millis(1));
                    Ok(())
                })
                .unwrap()
                .expect("no criterion filter");
            assert_eq!(stats.reps, 2);
            n
        };
        let plain = launches(Work::Bytes(1.0));
        let sustained = launches(Work::Flops(1.0));
        // The first launch, 5 estimate timings and 2 timed: 8; sustaining adds 1 to 25.
        assert_eq!(plain, 8);
        assert!((9..=8 + 25).contains(&sustained), "{sustained}");
    }
}
