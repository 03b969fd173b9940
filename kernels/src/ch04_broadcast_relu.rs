//! # Chapter 04: broadcast multiply + ReLU, forward and backward
//!
//! A layer that scales each column of `A [M, N]` by a per-column weight `B [N]` and applies a
//! ReLU, with `M = 8192`, `N = 4096`, half precision:
//!
//! * forward: `C = relu(A · B[None, :])`, that is `C[i, j] = max(0, A[i, j]·B[j])`;
//! * backward (the gradient with respect to `A` only; no `dB`):
//!   `dA = dC · B[None, :] · 1[A·B > 0]`, that is `dA[i, j] = dC[i, j]·B[j]` where the
//!   forward product was positive and 0 elsewhere.
//!
//! `B[None, :]` is NumPy's notation for broadcasting `B` along the rows: every row of `A`
//! meets the same vector. Both kernels tile `[M, N]` with a 2-D grid of `BM × BN` blocks. A
//! block copies its tile of `A` (and of `dC`) into a fragment and the matching `BN` slice of
//! `B` into a shared buffer, which every row of the tile reads. The arithmetic happens in the
//! fragment and one `copy` writes the result tile. The tails need no guards: `copy` reads
//! zeros past the edge and skips writes past it. The forward moves 2 values per element, the
//! backward 3: both are bound by memory bandwidth, the backward 1.5 times slower at best.
//!
//! **The mask.** The backward recomputes `A·B` instead of saving a mask in the forward pass
//! (recomputing costs one multiply; a saved mask would cost memory traffic). It evaluates
//! the product exactly as the forward does, in f16, rounded, and tests the rounded product:
//! `1[f16(A·B) > 0]`. So the mask is 1 exactly where the forward's output `C` is positive,
//! and `dA` is the derivative of the forward kernel as computed. The two can only differ
//! from the exact-arithmetic mask where the exact product is positive but below 2^-25 (half
//! the smallest f16 subnormal): it rounds to +0, the forward outputs 0, and the mask is 0.
//! The float64 references follow these semantics: the backward reference rounds `A·B` to
//! f16 (the product of two f16 values is exact in f64, so that is a single rounding, as in
//! the kernel) and compares with 0, then computes `dC·B` exactly.

use crate::check::{self, Case, Problem, Rng, Scale, Work};
use tilelang::prelude::*;

// ANCHOR: fwd
/// Forward: `c[i, j] = max(0, a[i, j]·b[j])`, computed in f16.
#[tile_kernel(
    grid = [N.div_ceil(BN), M.div_ceil(BM)],
    threads = THREADS,
    configs = [
        t32x256(BM = 32, BN = 256, THREADS = 256),
        t16x512(BM = 16, BN = 512, THREADS = 256),
        t64x128(BM = 64, BN = 128, THREADS = 256),
        t8x1024(BM = 8, BN = 1024, THREADS = 512),
    ],
    defaults = [gfx1100 = t32x256, gfx1151 = t8x1024, gfx1201 = t32x256, gfx90a = t32x256, gfx942 = t32x256, sm_90 = t8x1024, cpu = t16x512],
)]
pub fn broadcast_relu_fwd<const BM: usize, const BN: usize, const THREADS: usize>(
    a: &Tensor<f16, (M, N)>,
    b: &Tensor<f16, (N,)>,
    c: &mut Tensor<f16, (M, N)>,
) {
    let (row, col) = (block_idx(1) * BM, block_idx(0) * BN);
    let mut a_f = alloc_fragment::<f16, (BM, BN)>();
    let mut b_s = alloc_shared::<f16, (BN,)>();
    copy(a.at((row, col)), &mut a_f);
    copy(b.at((col,)), &mut b_s);
    // Each iteration reads and overwrites its own element: the tile is updated in place.
    for (i, j) in parallel(BM, BN) {
        a_f[(i, j)] = max(a_f[(i, j)] * b_s[j], 0.0);
    }
    copy(&a_f, c.at_mut((row, col)));
}
// ANCHOR_END: fwd

// ANCHOR: bwd
/// Backward: `da[i, j] = dc[i, j]·b[j]` where `f16(a[i, j]·b[j]) > 0`, else 0.
#[tile_kernel(
    grid = [N.div_ceil(BN), M.div_ceil(BM)],
    threads = THREADS,
    configs = [
        t32x256(BM = 32, BN = 256, THREADS = 256),
        t16x512(BM = 16, BN = 512, THREADS = 256),
        t64x128(BM = 64, BN = 128, THREADS = 256),
        t8x1024(BM = 8, BN = 1024, THREADS = 512),
    ],
    defaults = [gfx1100 = t32x256, gfx1151 = t8x1024, gfx1201 = t32x256, gfx90a = t32x256, gfx942 = t32x256, sm_90 = t8x1024, cpu = t16x512],
)]
pub fn broadcast_relu_bwd<const BM: usize, const BN: usize, const THREADS: usize>(
    a: &Tensor<f16, (M, N)>,
    b: &Tensor<f16, (N,)>,
    dc: &Tensor<f16, (M, N)>,
    da: &mut Tensor<f16, (M, N)>,
) {
    let (row, col) = (block_idx(1) * BM, block_idx(0) * BN);
    let mut a_f = alloc_fragment::<f16, (BM, BN)>();
    let mut g_f = alloc_fragment::<f16, (BM, BN)>();
    let mut b_s = alloc_shared::<f16, (BN,)>();
    copy(a.at((row, col)), &mut a_f);
    copy(dc.at((row, col)), &mut g_f);
    copy(b.at((col,)), &mut b_s);
    for (i, j) in parallel(BM, BN) {
        let w = b_s[j];
        // The forward's product, rounded to f16 exactly as the forward rounds it.
        let p = a_f[(i, j)] * w;
        g_f[(i, j)] = if_then_else(p > 0.0, g_f[(i, j)] * w, 0.0);
    }
    copy(&g_f, da.at_mut((row, col)));
}
// ANCHOR_END: bwd

/// The float64 reference of the forward, `[m, n]` row-major with `n = b.len()`.
pub fn reference_fwd(a: &[f64], b: &[f64]) -> Vec<f64> {
    let n = b.len();
    a.iter()
        .enumerate()
        .map(|(k, x)| (x * b[k % n]).max(0.0))
        .collect()
}

/// The float64 reference of the backward. The mask is the kernel's: the product rounded to
/// f16, compared with zero (`a·b` of two f16 values is exact in f64, so this is one rounding).
pub fn reference_bwd(a: &[f64], b: &[f64], dc: &[f64]) -> Vec<f64> {
    let n = b.len();
    a.iter()
        .zip(dc)
        .enumerate()
        .map(|(k, (x, g))| {
            let w = b[k % n];
            if f16::from_f64(x * w).to_f64() > 0.0 {
                g * w
            } else {
                0.0
            }
        })
        .collect()
}

// ANCHOR: tolerance
/// Each output is an exact f64 value (a product of two f16 values, or 0) rounded once to f16:
/// half an ulp, 2^-11 relative; we allow 2^-10, as chapter 02. Products in the subnormal
/// range are off by at most 2^-25 absolute, which ATOL covers.
const RTOL: f64 = 1.0 / 1024.0;
const ATOL: f64 = 1e-6;
// ANCHOR_END: tolerance

pub fn run(dev: &Device, scale: Scale, seed: u64) -> tilelang::Result<Vec<Case>> {
    let (m, n) = match scale {
        Scale::Tutorial => (8192, 4096),
        // The CPU backend needs 15-25 s at the tutorial size (every f16 operation and copy
        // converts through f32/f64 in software); an eighth of the elements takes 1-2 s.
        Scale::Reduced => (2048, 2048),
    };
    let mut rng = Rng::new(seed);
    let av = rng.vec::<f16>(m * n, -4.0, 4.0);
    let bv = rng.vec::<f16>(n, -4.0, 4.0);
    let gv = rng.vec::<f16>(m * n, -4.0, 4.0);
    let (a64, b64, g64) = (check::to_f64(&av), check::to_f64(&bv), check::to_f64(&gv));
    let a = dev.upload(&av, &[m, n])?;
    let b = dev.upload(&bv, &[n])?;
    let dc = dev.upload(&gv, &[m, n])?;
    let mut out = dev.alloc::<f16>(&[m, n])?;

    // Forward: reads A and B, writes C.
    let want = reference_fwd(&a64, &b64);
    let fwd = Problem {
        chapter: "04",
        size: format!("M={m}, N={n}"),
        work: Work::Bytes(2.0 * (2 * m * n + n) as f64),
        reps: check::reps_for(dev, (m * n) as f64),
        want: &want,
        atol: ATOL,
        rtol: RTOL,
    };
    let mut cases = fwd.sweep(dev, "forward", &mut out, |cfg, c| {
        broadcast_relu_fwd::launch(dev, cfg, &a, &b, c)
    })?;

    // Backward: reads A, B and dC, writes dA.
    let want = reference_bwd(&a64, &b64, &g64);
    let bwd = Problem {
        work: Work::Bytes(2.0 * (3 * m * n + n) as f64),
        want: &want,
        ..fwd
    };
    cases.extend(bwd.sweep(dev, "backward", &mut out, |cfg, da| {
        broadcast_relu_bwd::launch(dev, cfg, &a, &b, &dc, da)
    })?);
    Ok(cases)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs every config of both kernels on the given inputs and checks them.
    fn check_all(m: usize, n: usize, av: &[f16], bv: &[f16], gv: &[f16], seed: u64) {
        let dev = crate::check::test_device();
        let (a64, b64, g64) = (check::to_f64(av), check::to_f64(bv), check::to_f64(gv));
        let a = dev.upload(av, &[m, n]).unwrap();
        let b = dev.upload(bv, &[n]).unwrap();
        let dc = dev.upload(gv, &[m, n]).unwrap();
        let mut out = dev.alloc::<f16>(&[m, n]).unwrap();
        let (fwd, bwd) = (reference_fwd(&a64, &b64), reference_bwd(&a64, &b64, &g64));
        for cfg in broadcast_relu_fwd::Config::ALL {
            out.poison().unwrap();
            broadcast_relu_fwd::launch(&dev, cfg, &a, &b, &mut out).unwrap();
            check::assert_close(&format!("fwd[{cfg}] {m}x{n}"), &out, &fwd, ATOL, RTOL, seed);
        }
        for cfg in broadcast_relu_bwd::Config::ALL {
            out.poison().unwrap();
            broadcast_relu_bwd::launch(&dev, cfg, &a, &b, &dc, &mut out).unwrap();
            check::assert_close(&format!("bwd[{cfg}] {m}x{n}"), &out, &bwd, ATOL, RTOL, seed);
        }
    }

    #[test]
    fn every_config_matches_the_reference_with_tails() {
        let seed = Rng::fresh_seed();
        for (m, n) in [(1, 1), (3, 1029), (77, 5), (67, 521)] {
            let mut rng = Rng::new(seed ^ (m * 100_003 + n) as u64);
            let av = rng.vec::<f16>(m * n, -4.0, 4.0);
            let bv = rng.vec::<f16>(n, -4.0, 4.0);
            let gv = rng.vec::<f16>(m * n, -4.0, 4.0);
            check_all(m, n, &av, &bv, &gv, seed);
        }
    }

    /// Products at the edge of f16's range: the mask follows the rounded product.
    #[test]
    fn mask_follows_the_rounded_product() {
        let h = |x: f64| f16::from_f64(x);
        let t = 2f64.powi(-13);
        // Row 0: exact products 2^-26 and 2^-25 (a tie) round to +0: mask 0, though the
        // exact product is positive. 3·2^-26 rounds up to 2^-24: mask 1. Row 1: the same
        // with a negative `a`, and exact zeros.
        let av = [h(t), h(2.0 * t), h(3.0 * t), h(-t), h(0.0), h(-0.0)];
        let av = [av.as_slice(), av.as_slice()].concat();
        let bv = [h(t), h(t), h(t), h(t), h(t), h(-t)];
        let gv: Vec<f16> = (0..12).map(|k| h(1.0 + k as f64)).collect();
        let want: Vec<f64> = [0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
            .iter()
            .enumerate()
            .map(|(j, mask)| mask * (1.0 + j as f64) * t)
            .collect();
        let got = reference_bwd(
            &check::to_f64(&av),
            &check::to_f64(&bv),
            &check::to_f64(&gv),
        );
        assert_eq!(&got[..6], &want[..], "the reference's mask");
        check_all(2, 6, &av, &bv, &gv, 0);
    }

    #[test]
    fn mismatched_shapes_are_refused_before_any_write() {
        let dev = crate::check::test_device();
        let a = dev.zeros::<f16>(&[4, 8]).unwrap();
        let b = dev.zeros::<f16>(&[8]).unwrap();
        let dc = dev.zeros::<f16>(&[4, 7]).unwrap();
        let mut da = dev.alloc::<f16>(&[4, 8]).unwrap();
        let err = broadcast_relu_bwd(&dev, &a, &b, &dc, &mut da).unwrap_err();
        assert!(
            matches!(err, Error::ShapeMismatch { symbol: "N", .. }),
            "{err}"
        );
        assert!(
            da.to_vec().unwrap().iter().all(|x| x.is_nan()),
            "nothing may be written"
        );
    }
}
