//! What the chapters' benchmarks (`suite.rs`) and the examples' (`examples.rs`) share: the
//! problem sizes, parallel input generation and comparison (the large sizes have up to 5·10⁸
//! elements), the check of a GEMM's output and the spec of a row. A leaf: it imports neither.

use crate::record::{SizeSet, Spec, Verdict, Work};
use kernels::ch01_copy as c01;
use kernels::check::{self, Comparison, Rng};
use tilelang::{f16, Element};

/// Problem sizes per chapter and size set; the README's table. The large sizes are those of
/// `peers/bench.py` (its `SIZES`), so that every row compares the same problem.
pub mod sizes {
    use crate::record::SizeSet::{self, *};

    /// 01: elements copied.
    pub fn copy(s: SizeSet) -> usize {
        match s {
            Tutorial => 524_288,
            Large => 268_435_456,
            Smoke => 4097,
        }
    }
    /// 02: elements added.
    pub fn add(s: SizeSet) -> usize {
        match s {
            Tutorial => 4_194_304,
            Large => 268_435_456,
            Smoke => 10_001,
        }
    }
    /// 03: `(M, N)` of the output.
    pub fn outer(s: SizeSet) -> (usize, usize) {
        match s {
            Tutorial => (8192, 4096),
            Large => (32_768, 16_384),
            Smoke => (67, 300),
        }
    }
    /// 04: `(M, N)` of `A`.
    pub fn broadcast(s: SizeSet) -> (usize, usize) {
        match s {
            Tutorial => (8192, 4096),
            Large => (16_384, 16_384),
            Smoke => (33, 517),
        }
    }
    /// 05: `(M, N)`.
    pub fn row_sum(s: SizeSet) -> (usize, usize) {
        match s {
            Tutorial => (4096, 16_384),
            Large => (16_384, 16_384),
            Smoke => (17, 3000),
        }
    }
    /// 06: `(M, N)`.
    pub fn softmax(s: SizeSet) -> (usize, usize) {
        match s {
            Tutorial => (4096, 16_384),
            Large => (16_384, 16_384),
            Smoke => (9, 5000),
        }
    }
    /// 07: `(M, N)` of Q, K, V, O.
    pub fn flash(s: SizeSet) -> (usize, usize) {
        match s {
            Tutorial => (256, 16_384),
            Large => (4096, 16_384),
            Smoke => (5, 5000),
        }
    }
    /// 08 and 10: `M = N = K`.
    pub fn gemm(s: SizeSet) -> usize {
        match s {
            Tutorial => 4096,
            Large => 8192,
            Smoke => 66,
        }
    }
    /// 09 single: `X [N, L]`, 7 taps.
    pub fn conv_single(s: SizeSet) -> (usize, usize) {
        match s {
            Tutorial => (64, 1024),
            Large => (8192, 32_768),
            Smoke => (5, 300),
        }
    }
    /// 09 multi: `X [N, L]`, `W [7, F]` → `O [N, L, F]`.
    pub fn conv_multi(s: SizeSet) -> (usize, usize, usize) {
        match s {
            Tutorial => (16, 256, 32),
            Large => (1024, 8192, 32),
            Smoke => (3, 100, 32),
        }
    }
}

pub(crate) fn threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(32)
}

/// `n` values uniform in `[lo, hi)`, generated in parallel chunks, each with its own
/// [`Rng`] seeded from `seed` and the chunk index (reproducible for a given seed).
pub fn par_vec<T: Element>(seed: u64, n: usize, lo: f64, hi: f64) -> Vec<T> {
    let mut v = vec![T::default(); n];
    let chunk = n.div_ceil(threads()).max(1 << 16);
    std::thread::scope(|s| {
        for (i, c) in v.chunks_mut(chunk).enumerate() {
            s.spawn(move || {
                let mut rng = Rng::new(seed ^ (i as u64 + 1).wrapping_mul(0x2545_F491_4F6C_DD1D));
                for x in c {
                    *x = T::from_f64(rng.uniform(lo, hi));
                }
            });
        }
    });
    v
}

/// Random finite f16 bit patterns (every exponent, subnormals and ±0 included), in parallel.
pub(crate) fn par_finite_f16(seed: u64, n: usize) -> Vec<f16> {
    let mut v = vec![f16::ZERO; n];
    let chunk = n.div_ceil(threads()).max(1 << 16);
    std::thread::scope(|s| {
        for (i, c) in v.chunks_mut(chunk).enumerate() {
            s.spawn(move || {
                let mut rng = Rng::new(seed ^ (i as u64 + 7).wrapping_mul(0x9E37_79B9_7F4A_7C15));
                c.copy_from_slice(&c01::random_finite_f16(&mut rng, c.len()));
            });
        }
    });
    v
}

/// Widens to f64 in parallel.
pub(crate) fn par_f64<T: Element>(v: &[T]) -> Vec<f64> {
    let mut out = vec![0.0; v.len()];
    let chunk = v.len().div_ceil(threads()).max(1 << 16);
    std::thread::scope(|s| {
        for (o, i) in out.chunks_mut(chunk).zip(v.chunks(chunk)) {
            s.spawn(move || {
                for (o, x) in o.iter_mut().zip(i) {
                    *o = x.to_f64();
                }
            });
        }
    });
    out
}

/// [`check::compare`] over parallel chunks, merged (the first mismatch is the lowest index).
pub fn par_compare<T: Element>(got: &[T], want: &[f64], atol: f64, rtol: f64) -> Comparison {
    assert_eq!(got.len(), want.len(), "par_compare: lengths differ");
    let chunk = got.len().div_ceil(threads()).max(1 << 16);
    let parts: Vec<Comparison> = std::thread::scope(|s| {
        let hs: Vec<_> = got
            .chunks(chunk)
            .zip(want.chunks(chunk))
            .map(|(g, w)| s.spawn(move || check::compare(g, w, atol, rtol)))
            .collect();
        hs.into_iter().map(|h| h.join().expect("compare")).collect()
    });
    let mut c = Comparison {
        max_abs: 0.0,
        max_rel: 0.0,
        first_bad: None,
        atol,
        rtol,
    };
    for (i, p) in parts.into_iter().enumerate() {
        c.max_abs = c.max_abs.max(p.max_abs);
        c.max_rel = c.max_rel.max(p.max_rel);
        if c.first_bad.is_none() {
            c.first_bad = p.first_bad.map(|(j, g, w)| (i * chunk + j, g, w));
        }
    }
    c
}

/// A check against a full float64 reference.
pub(crate) fn against<T: Element>(
    want: &[f64],
    atol: f64,
    rtol: f64,
) -> impl Fn(&[T]) -> Verdict + '_ {
    move |got: &[T]| {
        Verdict::from_comparison(&par_compare(got, want, atol, rtol), "float64 reference")
    }
}

pub(crate) fn spec(
    chapter: &'static str,
    title: &'static str,
    variant: &str,
    size_set: SizeSet,
    shape: Vec<usize>,
    dtype: &'static str,
    work: Work,
) -> Spec {
    Spec {
        chapter,
        title,
        variant: variant.to_string(),
        size_set,
        shape,
        dtype,
        work,
    }
}

/// How a GEMM output is checked: against the full float64 product where that is quick (the
/// tutorial and smoke sizes), else against a vendor library's result (cuBLAS, else cuBLASLt:
/// every element, with twice the tolerance, since both sides may err by it) and against
/// float64 at sampled elements.
pub(crate) enum GemmCheck {
    Full(Vec<f64>),
    Sampled {
        /// `(index into C, exact value)`.
        samples: Vec<(usize, f64)>,
        /// The first vendor library's output (cuBLAS, else cuBLASLt) and its name, once it
        /// has run.
        vendor: Option<(Vec<f64>, &'static str)>,
    },
}

/// Float64 values of `C = A·B` at `count` pseudo-random elements (`a` is `m×k`, `b` is `k×n`).
pub(crate) fn sampled_gemm(
    a: &[f64],
    b: &[f64],
    (m, n, k): (usize, usize, usize),
    count: usize,
    seed: u64,
) -> Vec<(usize, f64)> {
    let mut rng = Rng::new(seed);
    let mut idx: Vec<usize> = (0..count)
        .map(|_| (rng.next_u64() % (m * n) as u64) as usize)
        .collect();
    // The corners, where tails would show.
    idx.extend([0, n - 1, (m - 1) * n, m * n - 1]);
    idx.sort_unstable();
    idx.dedup();
    idx.into_iter()
        .map(|e| {
            let (i, j) = (e / n, e % n);
            let dot = (0..k).map(|kk| a[i * k + kk] * b[kk * n + j]).sum::<f64>();
            (e, dot)
        })
        .collect()
}

impl GemmCheck {
    /// Keeps a vendor library's checked output as the reference for what follows, unless an
    /// earlier library's already is.
    pub(crate) fn keep_vendor(&mut self, got: Option<Vec<f16>>, name: &'static str) {
        if let (GemmCheck::Sampled { vendor, .. }, Some(got)) = (self, got) {
            if vendor.is_none() {
                *vendor = Some((par_f64(&got), name));
            }
        }
    }

    pub(crate) fn verdict(&self, got: &[f16], (atol, rtol): (f64, f64)) -> Verdict {
        match self {
            GemmCheck::Full(want) => {
                Verdict::from_comparison(&par_compare(got, want, atol, rtol), "float64 reference")
            }
            GemmCheck::Sampled { samples, vendor } => {
                let g: Vec<f16> = samples.iter().map(|&(e, _)| got[e]).collect();
                let w: Vec<f64> = samples.iter().map(|&(_, v)| v).collect();
                let sampled = Verdict::from_comparison(
                    &check::compare(&g, &w, atol, rtol),
                    &format!("float64 at {} sampled elements", samples.len()),
                );
                match vendor {
                    Some((v, name)) => sampled.and(Verdict::from_comparison(
                        &par_compare(got, v, 2.0 * atol, 2.0 * rtol),
                        &format!("{name} result at every element (2x tolerance)"),
                    )),
                    None => sampled,
                }
            }
        }
    }
}
