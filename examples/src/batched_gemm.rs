//! Batched GEMM: `C[b] = A[b] · B[b]` for every `b` of a batch, f16 in, f32 accumulate, f16 out
//! — attention's `Q·Kᵀ` per head, a mixture of experts' per-expert matmuls.
//!
//! The batch is the grid's third dimension, and each block copies 2-D tiles out of the 3-D
//! tensors: `copy(a.at((bi, m0, k0)), &mut a_s)` with `a_s: (BM, BK)` is the region of extent
//! 1 in the batch dimension (a rank-dropping copy: the tile drops the tensor's leading
//! dimension). Everything after the copies is the 2-D tiled GEMM of chapter 08 unchanged,
//! with its configs, so its speed can be compared with `gemm_tiled` at the same total work.
//!
//! The reference and tolerance are chapter 08's, per batch.

use tilelang::prelude::*;

// ANCHOR: batched_gemm
/// `C[b] = A[b] · B[b]`: chapter 08's pipelined tiled GEMM with the batch index in the grid.
#[tile_kernel(
    grid = [N.div_ceil(BN), M.div_ceil(BM), BATCH],
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
pub fn batched_gemm<
    const BM: usize,
    const BN: usize,
    const BK: usize,
    const STAGES: usize,
    const THREADS: usize,
>(
    a: &Tensor<f16, (BATCH, M, K)>,
    b: &Tensor<f16, (BATCH, K, N)>,
    c: &mut Tensor<f16, (BATCH, M, N)>,
) {
    let (bx, by, bi) = (block_idx(0), block_idx(1), block_idx(2));
    let mut a_s = alloc_shared::<f16, (BM, BK)>();
    let mut b_s = alloc_shared::<f16, (BK, BN)>();
    let mut acc = alloc_fragment::<f32, (BM, BN)>();
    clear(&mut acc);
    for k in pipelined(K.div_ceil(BK), STAGES) {
        copy(a.at((bi, by * BM, k * BK)), &mut a_s);
        copy(b.at((bi, k * BK, bx * BN)), &mut b_s);
        gemm(&a_s, &b_s, &mut acc);
    }
    copy(&acc, c.at_mut((bi, by * BM, bx * BN)));
}
// ANCHOR_END: batched_gemm

/// The float64 reference: chapter 08's per batch, concatenated.
pub fn reference(a: &[f64], b: &[f64], batch: usize, m: usize, n: usize, k: usize) -> Vec<f64> {
    (0..batch)
        .flat_map(|i| {
            kernels::ch08_gemm::reference_gemm(
                &a[i * m * k..(i + 1) * m * k],
                &b[i * k * n..(i + 1) * k * n],
                m,
                n,
                k,
            )
        })
        .collect()
}

/// Chapter 08's tolerance, the loosest over the batch.
pub fn tolerance(a: &[f64], b: &[f64], batch: usize, m: usize, n: usize, k: usize) -> (f64, f64) {
    (0..batch)
        .map(|i| {
            kernels::ch08_gemm::gemm_tolerance(
                &a[i * m * k..(i + 1) * m * k],
                &b[i * k * n..(i + 1) * k * n],
                m,
                n,
                k,
            )
        })
        .fold((0.0, 0.0), |(x, y), (a, r)| {
            (f64::max(x, a), f64::max(y, r))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels::check::{self, to_f64, Rng};

    /// Every config at sizes with tails in M, N and K, batches of 1 and more, against float64:
    /// each batch's result must come from its own operands (a mix-up of batches fails).
    #[test]
    fn every_config_matches_the_reference_per_batch_with_tails() {
        let dev = check::test_device();
        let seed = Rng::fresh_seed();
        for (batch, m, n, k) in [
            (1, 17, 33, 40),
            (3, 130, 70, 50),
            (2, 1, 1, 1),
            (5, 64, 64, 32),
            // Rows of whole 16-byte vectors with tails: sm_90a's TMA entry.
            (2, 77, 136, 200),
        ] {
            let mut rng = Rng::new(seed ^ (batch * 1_000_003 + m * 1009 + n * 31 + k) as u64);
            let av: Vec<f16> = rng.vec(batch * m * k, -1.0, 1.0);
            let bv: Vec<f16> = rng.vec(batch * k * n, -1.0, 1.0);
            let (a64, b64) = (to_f64(&av), to_f64(&bv));
            let want = reference(&a64, &b64, batch, m, n, k);
            let (atol, rtol) = tolerance(&a64, &b64, batch, m, n, k);
            let a = dev.upload(&av, &[batch, m, k]).unwrap();
            let b = dev.upload(&bv, &[batch, k, n]).unwrap();
            let mut c = dev.alloc::<f16>(&[batch, m, n]).unwrap();
            for cfg in batched_gemm::Config::ALL {
                c.poison().unwrap();
                batched_gemm::launch(&dev, cfg, &a, &b, &mut c).unwrap();
                check::assert_close(
                    &format!("batched_gemm[{cfg}] {batch}x{m}x{n}x{k}"),
                    &c,
                    &want,
                    atol,
                    rtol,
                    seed,
                );
            }
        }
    }

    /// A batch of one equals chapter 08's `gemm_tiled` on the same 2-D operands, bit for bit:
    /// the rank-dropping copies move the same tiles.
    #[test]
    fn one_batch_is_the_2d_gemm() {
        let dev = check::test_device();
        let seed = Rng::fresh_seed();
        let (m, n, k) = (70, 90, 100);
        let mut rng = Rng::new(seed);
        let av: Vec<f16> = rng.vec(m * k, -1.0, 1.0);
        let bv: Vec<f16> = rng.vec(k * n, -1.0, 1.0);
        let (a2, b2) = (
            dev.upload(&av, &[m, k]).unwrap(),
            dev.upload(&bv, &[k, n]).unwrap(),
        );
        let (a3, b3) = (
            dev.upload(&av, &[1, m, k]).unwrap(),
            dev.upload(&bv, &[1, k, n]).unwrap(),
        );
        let mut c2 = dev.alloc::<f16>(&[m, n]).unwrap();
        let mut c3 = dev.alloc::<f16>(&[1, m, n]).unwrap();
        use kernels::ch08_gemm::gemm_tiled;
        gemm_tiled::launch(&dev, gemm_tiled::Config::T64x64x32s2, &a2, &b2, &mut c2).unwrap();
        batched_gemm::launch(&dev, batched_gemm::Config::T64x64x32s2, &a3, &b3, &mut c3).unwrap();
        let (x, y) = (c2.to_vec().unwrap(), c3.to_vec().unwrap());
        assert!(
            x.iter().zip(&y).all(|(p, q)| p.to_bits() == q.to_bits()),
            "seed {seed}"
        );
    }
}
