//! Shared helpers of the tutorial chapters: random inputs, comparison against a float64
//! reference, timing, and the rows of the printed table.

use std::sync::atomic::{AtomicBool, Ordering};
use tilelang::{Device, Element, KernelConfig, KernelInfo, Tensor};

/// A small deterministic generator (xorshift64*), so a failing seed can be replayed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// A fresh seed per process (time-based) unless `TILELANG_SEED` is set; printed by callers
    /// so a failure can be replayed.
    pub fn fresh_seed() -> u64 {
        if let Some(s) = std::env::var("TILELANG_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
        {
            return s;
        }
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `[lo, hi)`.
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64)
    }

    /// `n` values uniform in `[lo, hi)`, rounded to `T`.
    pub fn vec<T: Element>(&mut self, n: usize, lo: f64, hi: f64) -> Vec<T> {
        (0..n).map(|_| T::from_f64(self.uniform(lo, hi))).collect()
    }

    /// `n` random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
}

/// The kinds of rows [`extreme_rows`] makes, in order.
pub const EXTREME_ROWS: &[&str] = &[
    "all -1e38",
    "-3e38 and -1e38 mixed",
    "-3e38, then -1e38 from column 4099",
    "all -inf",
    "+inf and -inf mixed",
    "all +inf",
    "+-3e38 mixed",
    "+-4 with one NaN",
    "+-4 with one +inf",
    "-inf, then +-4 from column 4099",
    "+-4, half of them -inf",
    "-inf but the last column",
];

/// An `[m, n]` row-major f32 matrix of rows that test how a softmax-like kernel starts and masks
/// its maximum: values at the ends of f32's range, infinities and NaN (see [`EXTREME_ROWS`]; row
/// `r` is of kind `(r + k0) % EXTREME_ROWS.len()` for a random `k0`, and the kinds are returned
/// per row). "From column 4099": the first `min(n − 1, 4099)` columns hold the first value, so
/// for `n > 4099` whole chunks of every tile width up to 4096 hold nothing else.
pub fn extreme_rows(rng: &mut Rng, m: usize, n: usize) -> (Vec<f32>, Vec<&'static str>) {
    let (inf, ninf) = (f32::INFINITY, f32::NEG_INFINITY);
    let prefix = n.saturating_sub(1).min(4099);
    // Each element `a` or `b` at random.
    let either = |rng: &mut Rng, a: f32, b: f32| -> Vec<f32> {
        (0..n)
            .map(|_| if rng.next_u64() & 1 == 0 { a } else { b })
            .collect()
    };
    // Uniform in ±4, then `x` at the columns `at` selects.
    let uniform_with = |rng: &mut Rng, x: f32, at: &dyn Fn(usize) -> bool| -> Vec<f32> {
        let mut row: Vec<f32> = rng.vec(n, -4.0, 4.0);
        (0..n).filter(|&j| at(j)).for_each(|j| row[j] = x);
        row
    };
    let k0 = rng.next_u64() as usize % EXTREME_ROWS.len();
    let mut a = Vec::with_capacity(m * n);
    let mut kinds = Vec::with_capacity(m);
    for r in 0..m {
        let kind = (r + k0) % EXTREME_ROWS.len();
        let one = rng.next_u64() as usize % n;
        let row = match kind {
            0 => vec![-1e38; n],
            1 => either(rng, -3e38, -1e38),
            2 => (0..n)
                .map(|j| if j < prefix { -3e38 } else { -1e38 })
                .collect(),
            3 => vec![ninf; n],
            4 => either(rng, inf, ninf),
            5 => vec![inf; n],
            6 => either(rng, 3e38, -3e38),
            7 => uniform_with(rng, f32::NAN, &|j| j == one),
            8 => uniform_with(rng, inf, &|j| j == one),
            9 => uniform_with(rng, ninf, &|j| j < prefix),
            10 => {
                let coins = either(rng, 0.0, 1.0);
                uniform_with(rng, ninf, &|j| coins[j] == 1.0)
            }
            _ => uniform_with(rng, ninf, &|j| j != n - 1),
        };
        a.extend(row);
        kinds.push(EXTREME_ROWS[kind]);
    }
    (a, kinds)
}

/// Widens to f64 (for references).
pub fn to_f64<T: Element>(v: &[T]) -> Vec<f64> {
    v.iter().map(|x| x.to_f64()).collect()
}

/// The result of comparing a kernel's output with a reference.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// max |got − want|
    pub max_abs: f64,
    /// max |got − want| / max(|want|, atol / rtol) over elements: the relative error, where
    /// values below the scale at which the absolute tolerance takes over count absolutely.
    pub max_rel: f64,
    /// The first element outside `atol + rtol·|want|`, or a NaN / poison value.
    pub first_bad: Option<(usize, f64, f64)>,
    pub atol: f64,
    pub rtol: f64,
}

impl Comparison {
    pub fn passed(&self) -> bool {
        self.first_bad.is_none()
    }
}

impl std::fmt::Display for Comparison {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "max abs err {:.3e}, max rel err {:.3e} (atol {:.0e}, rtol {:.0e})",
            self.max_abs, self.max_rel, self.atol, self.rtol
        )?;
        if let Some((i, g, w)) = self.first_bad {
            write!(f, "; first mismatch at {i}: got {g}, want {w}")?;
        }
        Ok(())
    }
}

/// Compares element-wise: every element must satisfy `|got − want| ≤ atol + rtol·|want|`, and
/// no element may be NaN where the reference is not (poisoned outputs never written show up).
/// Where the reference is NaN the result must be NaN, and where it is `±∞` the result must be
/// the same infinity (no tolerance reaches it; a matching infinity counts as error 0).
pub fn compare<T: Element>(got: &[T], want: &[f64], atol: f64, rtol: f64) -> Comparison {
    assert_eq!(got.len(), want.len(), "compare: lengths differ");
    let mut c = Comparison {
        max_abs: 0.0,
        max_rel: 0.0,
        first_bad: None,
        atol,
        rtol,
    };
    let floor = if rtol > 0.0 {
        (atol / rtol).max(1e-30)
    } else {
        1e-6
    };
    for (i, (g, &w)) in got.iter().zip(want).enumerate() {
        let g = g.to_f64();
        // `∞ − ∞` is NaN: equal values, infinities included, differ by 0.
        let d = if g == w { 0.0 } else { (g - w).abs() };
        let bad = if w.is_nan() {
            !g.is_nan()
        } else if w.is_infinite() {
            g != w
        } else {
            g.is_nan() || d > atol + rtol * w.abs()
        };
        if d.is_finite() {
            c.max_abs = c.max_abs.max(d);
            c.max_rel = c.max_rel.max(d / w.abs().max(floor));
        } else if !(g.is_nan() && w.is_nan()) {
            c.max_abs = f64::INFINITY;
            c.max_rel = f64::INFINITY;
        }
        if bad && c.first_bad.is_none() {
            c.first_bad = Some((i, g, w));
        }
    }
    c
}

/// Compares and returns an error message (with the seed) on failure; for tests.
pub fn assert_close<T: Element>(
    what: &str,
    got: &Tensor<T>,
    want: &[f64],
    atol: f64,
    rtol: f64,
    seed: u64,
) {
    let c = compare(&got.to_vec().expect("download"), want, atol, rtol);
    assert!(c.passed(), "{what}: {c} (TILELANG_SEED={seed})");
}

/// For tests on inputs whose reference has NaN in places: runs `launch` into `out` poisoned
/// (NaN), then into `out` filled with `fill` (a value no correct output has), and compares each
/// result with `want` like [`assert_close`]. An element left unwritten fails the first run
/// where the reference is a number and the second where it is NaN. A failure names the row of
/// the first mismatch (rows of `n` elements) and its entry in `kinds`.
#[allow(clippy::too_many_arguments)]
pub fn assert_close_rows<T: Element>(
    what: &str,
    out: &mut Tensor<T>,
    fill: T,
    want: &[f64],
    atol: f64,
    rtol: f64,
    n: usize,
    kinds: &[&str],
    seed: u64,
    mut launch: impl FnMut(&mut Tensor<T>) -> tilelang::Result<()>,
) {
    for prefill in [None, Some(fill)] {
        match prefill {
            None => out.poison().expect("poison"),
            Some(v) => out.copy_from_slice(&vec![v; out.len()]).expect("fill"),
        }
        launch(out).unwrap_or_else(|e| panic!("{what}: {e}"));
        let c = compare(&out.to_vec().expect("download"), want, atol, rtol);
        if let Some((i, ..)) = c.first_bad {
            let before = prefill.map_or("NaN".into(), |v| format!("{}", v.to_f64()));
            panic!(
                "{what}, output holding {before} before the launch: {c}; row {} is `{}` \
                 (TILELANG_SEED={seed})",
                i / n,
                kinds[i / n]
            );
        }
    }
}

/// The device the tests run on: the CPU backend, or with `TILELANG_TEST_DEVICE=gpu` the best
/// GPU (the run fails if there is none, so a GPU check can never pass on the CPU by accident).
pub fn test_device() -> Device {
    match std::env::var("TILELANG_TEST_DEVICE").as_deref() {
        Ok("gpu") => {
            let d = Device::best().expect("TILELANG_TEST_DEVICE=gpu: no device");
            assert!(
                d.backend() != tilelang::Backend::Cpu,
                "TILELANG_TEST_DEVICE=gpu but no GPU was found"
            );
            d
        }
        Ok("cpu") | Err(_) => Device::cpu(),
        Ok(other) => panic!("TILELANG_TEST_DEVICE must be `cpu` or `gpu`, not `{other}`"),
    }
}

/// How large the problems of a tutorial run are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// The sizes of the original tutorials (seed-notes.md).
    Tutorial,
    /// Smaller sizes for the CPU backend where the tutorial size would take minutes
    /// (each chapter says which sizes it uses).
    Reduced,
}

/// What a throughput figure counts.
#[derive(Debug, Clone, Copy)]
pub enum Work {
    /// Minimum bytes moved: each input read once, each output written once.
    Bytes(f64),
    /// Floating-point operations (2·M·N·K for a GEMM).
    Flops(f64),
}

/// One row of the tutorial table.
#[derive(Debug, Clone)]
pub struct Case {
    pub chapter: &'static str,
    pub variant: String,
    pub config: String,
    pub size: String,
    pub check: Comparison,
    /// Median over repetitions, milliseconds.
    pub median_ms: f64,
    pub work: Work,
}

impl Case {
    /// GB/s or GFLOP/s.
    pub fn throughput(&self) -> String {
        let s = self.median_ms / 1e3;
        match self.work {
            Work::Bytes(b) => format!("{:.2} GB/s", b / s / 1e9),
            Work::Flops(f) => format!("{:.2} GFLOP/s", f / s / 1e9),
        }
    }
}

/// Runs `f` once to warm up, then `reps` times, and returns the median time of one call in
/// milliseconds: device time from events on a GPU, wall time on the CPU backend.
pub fn time_ms(
    dev: &Device,
    reps: usize,
    mut f: impl FnMut() -> tilelang::Result<()>,
) -> tilelang::Result<f64> {
    f()?;
    dev.synchronize()?;
    // Spend about a second at most: slow variants (one thread copying a whole tensor) get
    // fewer repetitions, never fewer than three.
    let first = dev.time_ms(&mut f)?;
    let reps = reps.min((1000.0 / first.max(1e-3)) as usize).max(3);
    let mut t = vec![first];
    for _ in 1..reps {
        t.push(dev.time_ms(&mut f)?);
    }
    t.sort_by(|a, b| a.total_cmp(b));
    Ok(t[t.len() / 2])
}

/// Whether `run` checks and times every compiled config or only the arch's default
/// (the `tutorials` binary's `--all-configs`).
static ALL_CONFIGS: AtomicBool = AtomicBool::new(false);

/// Makes every chapter's `run` check and time all configs of each kernel (process-wide).
pub fn set_all_configs(on: bool) {
    ALL_CONFIGS.store(on, Ordering::Relaxed);
}

/// The configs `run` measures for a kernel on `arch`: its default, or with [`set_all_configs`]
/// every config, the default first.
pub fn configs(kernel: &KernelInfo, arch: &str) -> Vec<&'static str> {
    let default = kernel.default_config(arch);
    let mut v = vec![default];
    if ALL_CONFIGS.load(Ordering::Relaxed) {
        v.extend(
            kernel
                .config_names
                .iter()
                .copied()
                .filter(|&c| c != default),
        );
    }
    v
}

/// What the rows of a chapter's table for one problem share: the chapter, the size as printed,
/// the work of one launch, the timing repetitions, and the float64 reference with the
/// tolerances an output is compared with ([`compare`]).
#[derive(Clone)]
pub struct Problem<'a> {
    pub chapter: &'static str,
    pub size: String,
    pub work: Work,
    pub reps: usize,
    pub want: &'a [f64],
    pub atol: f64,
    pub rtol: f64,
}

impl Problem<'_> {
    /// The rows of one variant: for each config of the kernel `C` configures that [`configs`]
    /// selects, `launch(config, out)` is checked and timed with [`measure`].
    pub fn sweep<T: Element, C: KernelConfig>(
        &self,
        dev: &Device,
        variant: &str,
        out: &mut Tensor<T>,
        launch: impl FnMut(C, &mut Tensor<T>) -> tilelang::Result<()>,
    ) -> tilelang::Result<Vec<Case>> {
        self.sweep_configs(dev, variant, &configs(C::KERNEL, dev.arch()), out, launch)
    }

    /// [`Problem::sweep`] over the given configs, in order.
    pub fn sweep_configs<T: Element, C: KernelConfig>(
        &self,
        dev: &Device,
        variant: &str,
        configs: &[&str],
        out: &mut Tensor<T>,
        mut launch: impl FnMut(C, &mut Tensor<T>) -> tilelang::Result<()>,
    ) -> tilelang::Result<Vec<Case>> {
        let mut cases = Vec::new();
        for &name in configs {
            let config = C::from_name(name)?;
            let (check, median_ms) = measure(
                dev,
                self.reps,
                out,
                self.want,
                self.atol,
                self.rtol,
                |out: &mut Tensor<T>| launch(config, out),
            )?;
            cases.push(Case {
                chapter: self.chapter,
                variant: variant.to_string(),
                config: config.to_string(),
                size: self.size.clone(),
                check,
                median_ms,
                work: self.work,
            });
        }
        Ok(cases)
    }
}

/// Checks, then times one launch: poisons `out`, runs `launch` once, compares `out` with `want`
/// (see [`compare`]), then times `launch` with [`time_ms`]. Returns the comparison and the
/// median milliseconds, a [`Case`]'s `check` and `median_ms`.
pub fn measure<T: Element>(
    dev: &Device,
    reps: usize,
    out: &mut Tensor<T>,
    want: &[f64],
    atol: f64,
    rtol: f64,
    mut launch: impl FnMut(&mut Tensor<T>) -> tilelang::Result<()>,
) -> tilelang::Result<(Comparison, f64)> {
    out.poison()?;
    launch(out)?;
    let check = compare(&out.to_vec()?, want, atol, rtol);
    let median_ms = time_ms(dev, reps, || launch(out))?;
    Ok((check, median_ms))
}

/// Repetitions for a timing: enough for a stable median without taking long on the CPU.
pub fn reps_for(dev: &Device, work_elems: f64) -> usize {
    match dev.backend() {
        tilelang::Backend::Cpu => (2e7 / work_elems.max(1.0)).clamp(3.0, 50.0) as usize,
        #[allow(unreachable_patterns)]
        _ => 100,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compare_catches_nan_and_error() {
        let want = [1.0, 2.0, 3.0];
        assert!(compare(&[1.0f32, 2.0, 3.0], &want, 0.0, 0.0).passed());
        assert!(!compare(&[1.0f32, f32::NAN, 3.0], &want, 1.0, 1.0).passed());
        let c = compare(&[1.0f32, 2.0, 3.5], &want, 0.1, 0.1);
        assert!(!c.passed());
        assert_eq!(c.first_bad.unwrap().0, 2);
    }

    #[test]
    fn compare_wants_nan_and_infinities_exactly_where_the_reference_has_them() {
        let (inf, nan) = (f64::INFINITY, f64::NAN);
        let want = [nan, inf, -inf, 0.5];
        let ok = compare(
            &[f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 0.5],
            &want,
            0.0,
            0.0,
        );
        assert!(ok.passed(), "{ok}");
        assert_eq!(
            (ok.max_abs, ok.max_rel),
            (0.0, 0.0),
            "matching infinities count as 0"
        );
        // Each wrong value in turn, with a tolerance far wider than any finite difference.
        let wrong: [(usize, f32); 7] = [
            (0, 0.0),
            (0, f32::INFINITY),
            (1, f32::MAX),
            (1, f32::NEG_INFINITY),
            (1, f32::NAN),
            (2, f32::INFINITY),
            (3, f32::NAN),
        ];
        for (i, v) in wrong {
            let mut got = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 0.5];
            got[i] = v;
            let c = compare(&got, &want, 1e30, 1e30);
            assert_eq!(c.first_bad.map(|b| b.0), Some(i), "{v} at {i}: {c}");
        }
    }

    #[test]
    fn rng_is_uniform_enough() {
        let mut r = Rng::new(7);
        let v: Vec<f64> = (0..10000).map(|_| r.uniform(-1.0, 1.0)).collect();
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        assert!(mean.abs() < 0.05, "{mean}");
        assert!(v.iter().all(|x| (-1.0..1.0).contains(x)));
    }
}
