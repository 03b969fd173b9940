//! # SiLU-gate (the SwiGLU activation)
//!
//! `out = silu(a) · b` element-wise, `silu(x) = x · sigmoid(x) = x / (1 + exp(−x))`: the
//! activation between the two halves of a LLaMA-style MLP (`a` = the gate projection, `b` =
//! the up projection, `[tokens, 14336]` each for an 8B model). f16 in and out, f32 arithmetic.
//!
//! The language has `exp` but no `sigmoid` or `tanh`, so SiLU is written out. For very negative
//! `x`, `exp(−x)` overflows to `+∞` and `x / ∞` is `−0`, the correctly rounded result (the true
//! value is below f32's range): the formula needs no special case.
//!
//! Element-wise, so the kernel is a 2-D grid of `BM × BN` tiles moved through register
//! fragments: language.md says `parallel` loops over global tensors move one element at a
//! time while `copy` between a fragment and a global tensor moves 16-byte vectors. Tails need
//! nothing: `copy` reads zeros outside the tensors and skips the writes there.

use kernels::check::Rng;
use tilelang::prelude::*;

/// `out = silu(a) · b`.
#[tile_kernel(
    grid = [N.div_ceil(BN), M.div_ceil(BM)],
    threads = THREADS,
    configs = [
        t16x256(BM = 16, BN = 256, THREADS = 256),
        t8x512(BM = 8, BN = 512, THREADS = 256),
        t32x256(BM = 32, BN = 256, THREADS = 512),
        t3x40(BM = 3, BN = 40, THREADS = 32),
    ],
    defaults = [sm_90 = t16x256, cpu = t16x256],
)]
pub fn silu_mul<const BM: usize, const BN: usize, const THREADS: usize>(
    a: &Tensor<f16, (M, N)>,
    b: &Tensor<f16, (M, N)>,
    out: &mut Tensor<f16, (M, N)>,
) {
    let (r0, c0) = (block_idx(1) * BM, block_idx(0) * BN);
    let mut a_f = alloc_fragment::<f32, (BM, BN)>();
    let mut b_f = alloc_fragment::<f32, (BM, BN)>();
    copy(a.at((r0, c0)), &mut a_f);
    copy(b.at((r0, c0)), &mut b_f);
    for (i, j) in parallel(BM, BN) {
        let x = a_f[(i, j)];
        a_f[(i, j)] = x / (1.0 + exp(-x)) * b_f[(i, j)];
    }
    copy(&a_f, out.at_mut((r0, c0)));
}

/// The float64 reference.
pub fn reference(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter()
        .zip(b)
        .map(|(x, y)| x / (1.0 + (-x).exp()) * y)
        .collect()
}

/// f32 before the final rounding (`u = 2^-24`): `exp` within 2 ulp (CUDA's `expf`; the CPU
/// backend's is better), so `1 + exp(−x)` is off by at most `2^-22 + u` relatively (the sum of
/// positive terms cannot amplify it); the division and the product round once each:
/// `E = 2^-22 + 3u = 7u`. The rounding to f16 adds `2^-11` of the result (`2^-25` absolutely
/// among subnormals): `|got − want| ≤ 2^-25 + (2^-11 + 1.001·E)·|want|`.
pub const ATOL: f64 = 1.0 / 33_554_432.0; // 2^-25
pub const RTOL: f64 = 1.0 / 2048.0 + 1.001 * 7.0 / 16_777_216.0; // 2^-11 + 1.001 · 7u

/// Inputs of the tests and the benches: both uniform in ±4, rounded to f16.
pub fn inputs(rng: &mut Rng, n: usize) -> (Vec<f16>, Vec<f16>) {
    (rng.vec(n, -4.0, 4.0), rng.vec(n, -4.0, 4.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels::check::{self, to_f64};

    fn check_all(what: &str, av: &[f16], bv: &[f16], m: usize, n: usize, seed: u64) {
        let dev = check::test_device();
        let want = reference(&to_f64(av), &to_f64(bv));
        let a = dev.upload(av, &[m, n]).unwrap();
        let b = dev.upload(bv, &[m, n]).unwrap();
        let mut out = dev.alloc::<f16>(&[m, n]).unwrap();
        for cfg in silu_mul::Config::ALL {
            out.poison().unwrap();
            silu_mul::launch(&dev, cfg, &a, &b, &mut out).unwrap();
            check::assert_close(
                &format!("silu_mul[{cfg}] {what} {m}x{n}"),
                &out,
                &want,
                ATOL,
                RTOL,
                seed,
            );
        }
    }

    #[test]
    fn every_config_matches_the_reference_with_tails() {
        let seed = Rng::fresh_seed();
        for (m, n) in [(1, 1), (3, 7), (17, 255), (33, 513), (5, 4097), (40, 1000)] {
            let mut rng = Rng::new(seed ^ (m * 100_003 + n) as u64);
            let (av, bv) = inputs(&mut rng, m * n);
            check_all("uniform ±4", &av, &bv, m, n, seed);
        }
    }

    /// Gates up to ±100: `exp(−x)` overflows f32 for `x < −88.7` (the result must be −0 or a
    /// tiny value, never NaN) and is 0 for large positive `x` (the result is `x · b`).
    #[test]
    fn large_gates_need_no_special_case() {
        let seed = Rng::fresh_seed();
        let (m, n) = (9, 301);
        let mut rng = Rng::new(seed);
        let av: Vec<f16> = rng.vec(m * n, -100.0, 100.0);
        let bv: Vec<f16> = rng.vec(m * n, -4.0, 4.0);
        assert!(av.iter().any(|x| x.to_f32() < -89.0));
        check_all("±100", &av, &bv, m, n, seed);
    }
}
