//! # LayerNorm over rows
//!
//! `y[i, j] = (x[i, j] − μ_i) · s_i · w[j] + b[j]`, with the row mean `μ_i = Σ_j x[i, j] / N`,
//! the (biased) variance `σ²_i = Σ_j (x[i, j] − μ_i)² / N` and `s_i = 1 / sqrt(σ²_i + eps)`:
//! `torch.nn.functional.layer_norm` over the last dimension. f16 in and out, f32 arithmetic.
//!
//! The structure is RMSNorm's (`rms_norm.rs`) with one more pass: the variance is taken
//! around the mean computed first (two-pass), not as `E[x²] − μ²`, which cancels
//! catastrophically when `|μ|` is large next to `σ` (a row of values near 100 with spread 1:
//! `E[x²] ≈ 10⁴`, and f32 keeps 3 decimals of the difference). The cost is a third read of the
//! row, which a GPU mostly serves from L2.
//!
//! 1. Pass 1: `Σ x` per row; the tail columns read as 0 and add nothing.
//! 2. Pass 2: `Σ (x − μ)²`, where a tail column would add `μ²`: it is masked with
//!    `if_then_else` on the global column index.
//! 3. Pass 3: normalise, scale, shift, write (the `copy` skips the tails).
//!
//! The chunk is copied into a shared tile for the two reductions and into a register fragment
//! for the output pass, as a newcomer might write it. Only owner-order accesses touch `x_s`,
//! so the lowering holds it in registers like `tile` (language.md, "How tiles map to the
//! GPU"): the staging costs no shared memory and no barriers. `w_s` and `b_s`, read only as
//! `w_s[j]`, `b_s[j]`, are column fragments in registers the same way.

use kernels::check::Rng;
use tilelang::prelude::*;

/// LayerNorm of every row of `x`, scaled by `w` and shifted by `b`.
#[tile_kernel(
    grid = [M.div_ceil(BM)],
    threads = THREADS,
    configs = [
        r1x1024(BM = 1, BN = 1024, THREADS = 128),
        r1x2048(BM = 1, BN = 2048, THREADS = 256),
        r4x512(BM = 4, BN = 512, THREADS = 256),
        r3x64(BM = 3, BN = 64, THREADS = 32),
    ],
    defaults = [sm_90 = r1x1024, cpu = r4x512],
)]
pub fn layer_norm<const BM: usize, const BN: usize, const THREADS: usize>(
    x: &Tensor<f16, (M, N)>,
    w: &Tensor<f16, (N,)>,
    b: &Tensor<f16, (N,)>,
    y: &mut Tensor<f16, (M, N)>,
    eps: f32,
) {
    let row0 = block_idx(0) * BM;
    let mut x_s = alloc_shared::<f32, (BM, BN)>();
    let mut d = alloc_fragment::<f32, (BM, BN)>();
    let mut tile = alloc_fragment::<f32, (BM, BN)>();
    let mut w_s = alloc_shared::<f32, (BN,)>();
    let mut b_s = alloc_shared::<f32, (BN,)>();
    let mut part = alloc_fragment::<f32, (BM,)>();
    let mut mean = alloc_fragment::<f32, (BM,)>();
    let mut rstd = alloc_fragment::<f32, (BM,)>();
    clear(&mut mean);
    clear(&mut rstd);
    // Pass 1: the mean.
    for t in serial(N.div_ceil(BN)) {
        copy(x.at((row0, t * BN)), &mut x_s);
        reduce_sum(&x_s, &mut part, 1);
        for i in parallel(BM) {
            mean[i] += part[i];
        }
    }
    for i in parallel(BM) {
        mean[i] = mean[i] / (N as f32);
    }
    // Pass 2: the variance around it; columns past N must not add (0 − μ)².
    for t in serial(N.div_ceil(BN)) {
        copy(x.at((row0, t * BN)), &mut x_s);
        for (i, j) in parallel(BM, BN) {
            let c = x_s[(i, j)] - mean[i];
            d[(i, j)] = if_then_else(t * BN + j < N, c * c, 0.0);
        }
        reduce_sum(&d, &mut part, 1);
        for i in parallel(BM) {
            rstd[i] += part[i];
        }
    }
    for i in parallel(BM) {
        rstd[i] = rsqrt(rstd[i] / (N as f32) + eps);
    }
    // Pass 3: normalise, scale, shift, write.
    for t in serial(N.div_ceil(BN)) {
        copy(x.at((row0, t * BN)), &mut tile);
        copy(w.at((t * BN,)), &mut w_s);
        copy(b.at((t * BN,)), &mut b_s);
        for (i, j) in parallel(BM, BN) {
            tile[(i, j)] = (tile[(i, j)] - mean[i]) * rstd[i] * w_s[j] + b_s[j];
        }
        copy(&tile, y.at_mut((row0, t * BN)));
    }
}

/// The float64 reference (two-pass mean and variance), `x` `[m, n]` row-major.
pub fn reference(x: &[f64], w: &[f64], b: &[f64], n: usize, eps: f64) -> Vec<f64> {
    let mut y = vec![0.0; x.len()];
    for (row, out) in x.chunks_exact(n).zip(y.chunks_exact_mut(n)) {
        let mean = row.iter().sum::<f64>() / n as f64;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n as f64;
        let s = 1.0 / (var + eps).sqrt();
        for (((o, v), g), c) in out.iter_mut().zip(row).zip(w).zip(b) {
            *o = (v - mean) * s * g + c;
        }
    }
    y
}

/// `(atol, rtol)` for the inputs (`x` `[m, n]`, `w`, `b` as float64), chunk width `bn` and `eps`.
///
/// In f32 (`u = 2^-24`), any summation order, `k = bn − 1 + ⌈n / bn⌉` additions per term,
/// `γ = k·u / (1 − k·u)`, per row:
///
/// * the mean is off by `e_μ ≤ γ·mean|x| + u·|μ|` (the sum, then the division);
/// * each `x − μ` then by `e_μ` plus a rounding; the variance, a sum of squares of those, is
///   relatively off by `δ_v ≤ γ + 3u + 2·e_μ·mean|x − μ| / σ²` (first order), and `s` by
///   `δ_s ≤ δ_v / 2 + 4u` (adding `eps` shrinks it further: taken as no help);
/// * `A = (x − μ)·s·w` is then off by `|w|·s·e_μ + |A|·(δ_s + 3u)` and `A + b` by one more
///   rounding, `u·(|A| + |b|)`.
///
/// `E` is the largest such bound over the rows and elements; the final rounding to f16 adds at
/// most `2^-11·|result|` (`2^-25` absolutely among subnormals), so
/// `|got − want| ≤ 1.001·E + 2^-25 + 2^-11·|want|`. The absolute part is what matters: `A + b`
/// can cancel to near 0, where no relative bound holds. For the benches' inputs (±4, `n` =
/// 8192, `bn` = 1024) `E ≈ 1e-4`, a fifth of an f16 ulp at 1.
pub fn tolerance(x: &[f64], w: &[f64], b: &[f64], n: usize, bn: usize, eps: f64) -> (f64, f64) {
    let u = 2f64.powi(-24);
    let k = (bn - 1 + n.div_ceil(bn)) as f64;
    let gamma = k * u / (1.0 - k * u);
    let wmax = w.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    let bmax = b.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    let mut e: f64 = 0.0;
    for row in x.chunks_exact(n) {
        let nf = n as f64;
        let mean = row.iter().sum::<f64>() / nf;
        let mabs = row.iter().map(|v| v.abs()).sum::<f64>() / nf;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / nf;
        let dabs = row.iter().map(|v| (v - mean).abs()).sum::<f64>() / nf;
        let dmax = row.iter().fold(0.0f64, |a, v| a.max((v - mean).abs()));
        let e_mu = gamma * mabs + u * mean.abs();
        let s = 1.0 / (var + eps).sqrt();
        let d_v = if var > 0.0 {
            gamma + 3.0 * u + 2.0 * e_mu * dabs / var
        } else {
            0.0
        };
        let d_s = d_v / 2.0 + 4.0 * u;
        let a = dmax * s * wmax;
        e = e.max(wmax * s * e_mu + a * (d_s + 3.0 * u) + u * (a + bmax));
    }
    (1.001 * e + 2f64.powi(-25), 2f64.powi(-11))
}

/// PyTorch's default.
pub const EPS: f32 = 1e-5;

/// Inputs of the tests and the benches: `x` in ±4, `w` in ±2, `b` in ±1, rounded to f16.
pub fn inputs(rng: &mut Rng, m: usize, n: usize) -> (Vec<f16>, Vec<f16>, Vec<f16>) {
    (
        rng.vec(m * n, -4.0, 4.0),
        rng.vec(n, -2.0, 2.0),
        rng.vec(n, -1.0, 1.0),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels::check::{self, to_f64};

    fn check_all(what: &str, xv: &[f16], wv: &[f16], bv: &[f16], m: usize, n: usize, seed: u64) {
        let dev = check::test_device();
        let (x64, w64, b64) = (to_f64(xv), to_f64(wv), to_f64(bv));
        let want = reference(&x64, &w64, &b64, n, EPS as f64);
        let x = dev.upload(xv, &[m, n]).unwrap();
        let w = dev.upload(wv, &[n]).unwrap();
        let b = dev.upload(bv, &[n]).unwrap();
        let mut y = dev.alloc::<f16>(&[m, n]).unwrap();
        for cfg in layer_norm::Config::ALL {
            let (atol, rtol) = tolerance(&x64, &w64, &b64, n, cfg.BN(), EPS as f64);
            y.poison().unwrap();
            layer_norm::launch(&dev, cfg, &x, &w, &b, &mut y, EPS).unwrap();
            check::assert_close(
                &format!("layer_norm[{cfg}] {what} {m}x{n}"),
                &y,
                &want,
                atol,
                rtol,
                seed,
            );
        }
    }

    #[test]
    fn every_config_matches_the_reference_with_tails() {
        let seed = Rng::fresh_seed();
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
            let (xv, wv, bv) = inputs(&mut rng, m, n);
            check_all("uniform", &xv, &wv, &bv, m, n, seed);
        }
    }

    /// Rows far from zero (around ±100 and 1000, spread 1): the variance taken as
    /// `E[x²] − μ²` would lose most of its digits there; the two-pass kernel keeps them.
    /// Masking matters too: a tail column entering pass 2 would add `μ² ≈ 10⁶`.
    #[test]
    fn rows_with_a_large_mean_keep_their_variance() {
        let seed = Rng::fresh_seed();
        let (m, n) = (6, 1031);
        let mut rng = Rng::new(seed);
        let (_, wv, bv) = inputs(&mut rng, m, n);
        let mut xv = Vec::with_capacity(m * n);
        for r in 0..m {
            let mu = [100.0, -100.0, 1000.0][r % 3];
            xv.extend((0..n).map(|_| f16::from_f64(mu + rng.uniform(-1.0, 1.0))));
        }
        check_all("mean ±100, 1000", &xv, &wv, &bv, m, n, seed);
    }

    /// A constant row has variance 0: the result is `b` (`0 · rsqrt(eps)`), for a value whose
    /// sum is exact in f32.
    #[test]
    fn a_constant_row_gives_the_bias() {
        let seed = Rng::fresh_seed();
        let (m, n) = (2, 300);
        let mut rng = Rng::new(seed);
        let (_, wv, bv) = inputs(&mut rng, m, n);
        let xv = vec![f16::from_f32(1.5); m * n];
        check_all("constant", &xv, &wv, &bv, m, n, seed);
    }
}
