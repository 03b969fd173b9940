//! A linear layer with its activation: `C = gelu(A · B + bias)`, f16 in and out, f32
//! accumulate and f32 epilogue — an MLP's up-projection, fused so that the pre-activation
//! never goes to global memory.
//!
//! The main loop is chapter 08's pipelined tiled GEMM, unchanged. After it, the block copies
//! its `BN` entries of the bias into shared memory and applies the bias and GELU (the tanh
//! form) to the accumulator in registers, then copies the tile out: the kind of epilogue a
//! user writes from the docs. Its cost next to the plain GEMM's is what the benches measure.
//!
//! The tolerance: chapter 08's bound `E` on the f32 sum (`kernels::ch08_gemm::gemm_tolerance`)
//! passes through the bias add (one more f32 rounding, `2^-24` relative) and GELU, whose slope
//! lies in `[-0.17, 1.13]`, so it grows by at most 1.13; GELU's `tanh` is exact to 2^-10.9
//! relative on NVIDIA (`tanh.approx.f32`, docs/language.md), which moves `0.5·v·tanh(u)` by at
//! most `0.5·|v|·2^-10.9`; the f32 arithmetic around it adds a few `2^-24`; the final f16
//! rounding adds `2^-11` relative (`2^-25` among subnormals).

use tilelang::prelude::*;

// ANCHOR: gemm_bias_gelu
/// `C = gelu(A · B + bias)`, GELU in its tanh form, bias broadcast over the rows.
#[tile_kernel(
    grid = [N.div_ceil(BN), M.div_ceil(BM)],
    threads = THREADS,
    configs = [
        t128x128x32s3(BM = 128, BN = 128, BK = 32, STAGES = 3, THREADS = 256),
        t64x64x32s2(BM = 64, BN = 64, BK = 32, STAGES = 2, THREADS = 128),
        t128x256x32s2(BM = 128, BN = 256, BK = 32, STAGES = 2, THREADS = 256),
        t128x256x64s3(BM = 128, BN = 256, BK = 64, STAGES = 3, THREADS = 256),
        t128x256x64s4(BM = 128, BN = 256, BK = 64, STAGES = 4, THREADS = 256),
        t16x32x16s2(BM = 16, BN = 32, BK = 16, STAGES = 2, THREADS = 32),
    ],
    defaults = [gfx1151 = t64x64x32s2, cpu = t128x256x32s2],
)]
pub fn gemm_bias_gelu<
    const BM: usize,
    const BN: usize,
    const BK: usize,
    const STAGES: usize,
    const THREADS: usize,
>(
    a: &Tensor<f16, (M, K)>,
    b: &Tensor<f16, (K, N)>,
    bias: &Tensor<f16, (N,)>,
    c: &mut Tensor<f16, (M, N)>,
) {
    let (bx, by) = (block_idx(0), block_idx(1));
    let mut a_s = alloc_shared::<f16, (BM, BK)>();
    let mut b_s = alloc_shared::<f16, (BK, BN)>();
    let mut acc = alloc_fragment::<f32, (BM, BN)>();
    clear(&mut acc);
    for k in pipelined(K.div_ceil(BK), STAGES) {
        copy(a.at((by * BM, k * BK)), &mut a_s);
        copy(b.at((k * BK, bx * BN)), &mut b_s);
        gemm(&a_s, &b_s, &mut acc);
    }
    let mut bias_s = alloc_shared::<f16, (BN,)>();
    copy(bias.at((bx * BN,)), &mut bias_s);
    for (i, j) in parallel(BM, BN) {
        let v = acc[(i, j)] + (bias_s[j] as f32);
        let u = 0.7978845608 * fma(0.044715 * v * v, v, v);
        acc[(i, j)] = 0.5 * v * (1.0 + tanh(u));
    }
    copy(&acc, c.at_mut((by * BM, bx * BN)));
}
// ANCHOR_END: gemm_bias_gelu

/// GELU (tanh form) in float64.
pub fn gelu64(v: f64) -> f64 {
    0.5 * v * (1.0 + (0.7978845608 * (v + 0.044715 * v * v * v)).tanh())
}

/// The float64 reference: chapter 08's GEMM, the bias, GELU.
pub fn reference(a: &[f64], b: &[f64], bias: &[f64], m: usize, n: usize, k: usize) -> Vec<f64> {
    let mut c = kernels::ch08_gemm::reference_gemm(a, b, m, n, k);
    for (e, x) in c.iter_mut().enumerate() {
        *x = gelu64(*x + bias[e % n]);
    }
    c
}

/// `(atol, rtol)` for f16 results against [`reference()`] (see the module docs); `pre` is the
/// largest `|A·B + bias|`.
pub fn tolerance(a: &[f64], b: &[f64], m: usize, n: usize, k: usize, pre: f64) -> (f64, f64) {
    let (atol, _) = kernels::ch08_gemm::gemm_tolerance(a, b, m, n, k);
    let e = 1.13 * (atol + 2.0 * f64::EPSILON) + 0.5 * pre * (2f64).powf(-10.9);
    (
        e + 16.0 * pre * 2f64.powi(-24) + 2f64.powi(-25),
        2f64.powi(-11),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels::check::{self, to_f64, Rng};

    /// Every config at sizes with tails in M, N and K (the last with rows of whole 16-byte
    /// vectors: sm_90a's TMA entry), against float64.
    #[test]
    fn every_config_matches_the_reference_with_tails() {
        let dev = check::test_device();
        let seed = Rng::fresh_seed();
        for (m, n, k) in [(1, 1, 1), (17, 33, 40), (130, 70, 50), (77, 136, 200)] {
            let mut rng = Rng::new(seed ^ (m * 1_000_003 + n * 1009 + k) as u64);
            let av: Vec<f16> = rng.vec(m * k, -1.0, 1.0);
            let bv: Vec<f16> = rng.vec(k * n, -1.0, 1.0);
            let biasv: Vec<f16> = rng.vec(n, -2.0, 2.0);
            let (a64, b64, bias64) = (to_f64(&av), to_f64(&bv), to_f64(&biasv));
            let want = reference(&a64, &b64, &bias64, m, n, k);
            let pre = kernels::ch08_gemm::reference_gemm(&a64, &b64, m, n, k)
                .iter()
                .enumerate()
                .map(|(e, x)| (x + bias64[e % n]).abs())
                .fold(0.0, f64::max);
            let (atol, rtol) = tolerance(&a64, &b64, m, n, k, pre);
            let a = dev.upload(&av, &[m, k]).unwrap();
            let b = dev.upload(&bv, &[k, n]).unwrap();
            let bias = dev.upload(&biasv, &[n]).unwrap();
            let mut c = dev.alloc::<f16>(&[m, n]).unwrap();
            for cfg in gemm_bias_gelu::Config::ALL {
                c.poison().unwrap();
                gemm_bias_gelu::launch(&dev, cfg, &a, &b, &bias, &mut c).unwrap();
                check::assert_close(
                    &format!("gemm_bias_gelu[{cfg}] {m}x{n}x{k}"),
                    &c,
                    &want,
                    atol,
                    rtol,
                    seed,
                );
            }
        }
    }
}
