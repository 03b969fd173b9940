//! # RMSNorm over rows
//!
//! `y[i, j] = x[i, j] · r_i · w[j]` with `r_i = 1 / sqrt(mean_j x[i, j]² + eps)`: the
//! normalisation of LLaMA-style transformers, applied to every token's hidden vector (a row of
//! `N` = 4096 or 8192 values). `x`, `w` and `y` are f16; the arithmetic is f32.
//!
//! Written the way the README and `docs/language.md` suggest for a row-wise operation whose row
//! does not fit in one tile (the softmax chapter's shape): a block owns `BM` rows and walks
//! along them in column chunks of `BN`.
//!
//! 1. Pass 1 copies each chunk into an f32 fragment (`copy` converts f16 to f32), squares it
//!    into a second fragment and `reduce_sum`s that along dimension 1 into the running sum of
//!    squares. Columns past `N` read as 0 and add 0: no mask is needed.
//! 2. One `parallel` loop turns the sums into `r_i`.
//! 3. Pass 2 reads each chunk again, with the matching chunk of `w` in a shared `(BN,)` tile
//!    (it is the same for every row: a broadcast), multiplies, and `copy` rounds to f16 and
//!    writes, skipping the columns past `N`. Read only as `w_s[j]`, the tile is held in
//!    registers as a column fragment: each thread loads the 8 weights its chunk needs.
//!
//! The squares go to their own fragment, the operand of `reduce_sum`; `tile`, `sq` and the row
//! values all stay in registers (language.md, "How tiles map to the GPU"), and `tile` moves as
//! 16-byte vectors. The second pass reads `x` again; on NVIDIA the first pass's loads mark the
//! lines to stay in L2, so it mostly comes from there, but the minimum traffic the benches
//! count is one read of `x` and one write of `y`.

use kernels::check::Rng;
use tilelang::prelude::*;

// ANCHOR: kernel
/// RMSNorm of every row of `x`, scaled by `w`.
#[tile_kernel(
    grid = [M.div_ceil(BM)],
    threads = THREADS,
    configs = [
        r1x1024(BM = 1, BN = 1024, THREADS = 128),
        r1x2048(BM = 1, BN = 2048, THREADS = 256),
        r4x512(BM = 4, BN = 512, THREADS = 256),
        r2x4096(BM = 2, BN = 4096, THREADS = 512),
        r3x64(BM = 3, BN = 64, THREADS = 32),
    ],
    defaults = [sm_90 = r1x1024, cpu = r4x512],
)]
pub fn rms_norm<const BM: usize, const BN: usize, const THREADS: usize>(
    x: &Tensor<f16, (M, N)>,
    w: &Tensor<f16, (N,)>,
    y: &mut Tensor<f16, (M, N)>,
    eps: f32,
) {
    let row0 = block_idx(0) * BM;
    let mut tile = alloc_fragment::<f32, (BM, BN)>();
    let mut sq = alloc_fragment::<f32, (BM, BN)>();
    let mut part = alloc_fragment::<f32, (BM,)>();
    let mut r = alloc_fragment::<f32, (BM,)>();
    let mut w_s = alloc_shared::<f32, (BN,)>();
    clear(&mut r);
    // Pass 1: Σ x² per row.
    for t in serial(N.div_ceil(BN)) {
        copy(x.at((row0, t * BN)), &mut tile);
        for (i, j) in parallel(BM, BN) {
            sq[(i, j)] = tile[(i, j)] * tile[(i, j)];
        }
        reduce_sum(&sq, &mut part, 1);
        for i in parallel(BM) {
            r[i] += part[i];
        }
    }
    for i in parallel(BM) {
        r[i] = rsqrt(r[i] / (N as f32) + eps);
    }
    // Pass 2: scale and write.
    for t in serial(N.div_ceil(BN)) {
        copy(x.at((row0, t * BN)), &mut tile);
        copy(w.at((t * BN,)), &mut w_s);
        for (i, j) in parallel(BM, BN) {
            tile[(i, j)] = tile[(i, j)] * r[i] * w_s[j];
        }
        copy(&tile, y.at_mut((row0, t * BN)));
    }
}
// ANCHOR_END: kernel

// ANCHOR: reference
/// The float64 reference: `x` is `[m, n]` row-major, `w` has `n` values.
pub fn reference(x: &[f64], w: &[f64], n: usize, eps: f64) -> Vec<f64> {
    let mut y = vec![0.0; x.len()];
    for (row, out) in x.chunks_exact(n).zip(y.chunks_exact_mut(n)) {
        let ms = row.iter().map(|v| v * v).sum::<f64>() / n as f64;
        let r = 1.0 / (ms + eps).sqrt();
        for ((o, v), g) in out.iter_mut().zip(row).zip(w) {
            *o = v * r * g;
        }
    }
    y
}
// ANCHOR_END: reference

/// `(atol, rtol)` for a row length `n` and chunk width `bn`.
///
/// In f32 (`u = 2^-24`): an f16 value squared is exact (11 × 2 significand bits fit in 24);
/// the sum of squares, positive terms, passes every term through at most
/// `k = bn − 1 + ⌈n / bn⌉` additions in any order (a tree on the GPU, left to right on the
/// CPU), so its relative error is at most `γ_k = k·u / (1 − k·u)`. Dividing by `n` and adding
/// `eps` round twice more; `rsqrt` is `1 / sqrt(..)`, two correctly rounded operations
/// (tl.h and the CPU backend), so `r` is off by at most `γ_k / 2 + 4u` relatively (the square
/// root halves the sum's error). `x · r · w` rounds twice: `E = γ_k / 2 + 6u` before the final
/// rounding to f16, which adds at most `2^-11` of the result, or `2^-25` absolutely among f16's
/// subnormals. So `|got − want| ≤ 2^-25 + (2^-11 + 1.001·E)·|want|`; for `n = 8192`, `bn =
/// 1024` that is a relative `2^-11 + 3.1e-5`, 6% above f16's own rounding.
pub fn tolerance(n: usize, bn: usize) -> (f64, f64) {
    let u = 2f64.powi(-24);
    let k = (bn - 1 + n.div_ceil(bn)) as f64;
    let gamma = k * u / (1.0 - k * u);
    let e = gamma / 2.0 + 6.0 * u;
    (2f64.powi(-25), 2f64.powi(-11) + 1.001 * e)
}

/// The LLaMA default.
pub const EPS: f32 = 1e-6;

/// Inputs of the tests and the benches: `x` uniform in ±4, `w` in ±2, rounded to f16.
pub fn inputs(rng: &mut Rng, m: usize, n: usize) -> (Vec<f16>, Vec<f16>) {
    (rng.vec(m * n, -4.0, 4.0), rng.vec(n, -2.0, 2.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels::check::{self, to_f64};

    // ANCHOR: check
    fn check_all(what: &str, xv: &[f16], wv: &[f16], m: usize, n: usize, seed: u64) {
        let dev = check::test_device();
        let want = reference(&to_f64(xv), &to_f64(wv), n, EPS as f64);
        let x = dev.upload(xv, &[m, n]).unwrap();
        let w = dev.upload(wv, &[n]).unwrap();
        let mut y = dev.alloc::<f16>(&[m, n]).unwrap();
        for cfg in rms_norm::Config::ALL {
            let (atol, rtol) = tolerance(n, cfg.BN());
            y.poison().unwrap();
            rms_norm::launch(&dev, cfg, &x, &w, &mut y, EPS).unwrap();
            check::assert_close(
                &format!("rms_norm[{cfg}] {what} {m}x{n}"),
                &y,
                &want,
                atol,
                rtol,
                seed,
            );
        }
    }
    // ANCHOR_END: check

    #[test]
    fn every_config_matches_the_reference_with_tails() {
        let seed = Rng::fresh_seed();
        // Rows below, at and past every BM (1, 2, 3, 4); columns: one, less than a chunk, a
        // ragged last chunk for every BN, and the LLM width.
        for (m, n) in [
            (1, 1),
            (3, 7),
            (5, 65),
            (7, 1000),
            (2, 4097),
            (9, 4096),
            (4, 8193),
        ] {
            let mut rng = Rng::new(seed ^ (m * 100_003 + n) as u64);
            let (xv, wv) = inputs(&mut rng, m, n);
            check_all("uniform", &xv, &wv, m, n, seed);
        }
    }

    /// A zero row gives zeros (`0 · rsqrt(eps)`, not NaN); rows of values near f16's limits
    /// (±60000: their squares sum to ~3·10¹³, far inside f32) and of subnormal f16 values
    /// (where `eps` dominates) stay within the tolerance.
    #[test]
    fn zero_huge_and_tiny_rows() {
        let seed = Rng::fresh_seed();
        let (m, n) = (6, 1031);
        let mut rng = Rng::new(seed);
        let (mut xv, wv) = inputs(&mut rng, m, n);
        for (r, row) in xv.chunks_exact_mut(n).enumerate() {
            match r % 3 {
                0 => row.fill(f16::ZERO),
                1 => row
                    .iter_mut()
                    .for_each(|v| *v = f16::from_f64(v.to_f64() * 15_000.0)),
                _ => row
                    .iter_mut()
                    .for_each(|v| *v = f16::from_f64(v.to_f64() * 1e-6)),
            }
        }
        check_all("zero/huge/tiny", &xv, &wv, m, n, seed);
    }

    // ANCHOR: shape_error
    #[test]
    fn the_row_length_of_w_must_match() {
        let dev = check::test_device();
        let x = dev.zeros::<f16>(&[2, 64]).unwrap();
        let w = dev.zeros::<f16>(&[63]).unwrap();
        let mut y = dev.alloc::<f16>(&[2, 64]).unwrap();
        let err = rms_norm(&dev, &x, &w, &mut y, EPS).unwrap_err();
        assert!(
            matches!(err, Error::ShapeMismatch { symbol: "N", .. }),
            "{err}"
        );
        assert!(y.to_vec().unwrap().iter().all(|v| v.is_nan()));
    }
    // ANCHOR_END: shape_error
}
