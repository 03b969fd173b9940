//! # Chapter 10: W4A16 GEMM (4-bit weights, dequantized on the fly)
//!
//! `C = A·B` where the activations `A [M, K]` are f16 but the weights `B [K, N]` are stored as
//! 4-bit integers, two per byte: `Bp [K, N/2]` of u8, with
//!
//! ```text
//! B[k, 2j]     = ( p       & 0xF) − 8
//! B[k, 2j + 1] = ((p >> 4) & 0xF) − 8        where p = Bp[k, j]
//! ```
//!
//! so every weight is an integer in `[−8, 7]` (no scale factor in this tutorial). Products are
//! summed in f32 and `C` is stored as f16; the tutorial size is `M = N = K = 4096`.
//!
//! Storing weights in 4 bits quarters their memory traffic compared with f16, which is what
//! matters when `M` is small (LLM decoding is bound by reading the weights). The tensor cores
//! still multiply f16, so the kernel must **dequantize inside the `K` loop**, never
//! materialising `B` in global memory. The kernel is [`crate::ch08_gemm::gemm_tiled()`] with one
//! extra stage per `K` slab:
//!
//! 1. `copy` the `(BM, BK)` f16 tile of `A` and the `(BK, BN/2)` **packed** u8 tile of `Bp`
//!    into shared memory (the second is a quarter of the f16 tile's bytes);
//! 2. a `parallel(BK, BN/2)` loop unpacks each byte into its two nibbles and writes them,
//!    minus 8, as f16 into a `(BK, BN)` shared tile (integers up to 8 are exact in f16);
//! 3. `gemm` that tile against `A`'s into the f32 fragment accumulator, as in chapter 08;
//!
//! with the whole loop `pipelined`, so the next slabs' copies overlap the unpacking and the
//! tensor-core work of this one.
//!
//! Tails: rows and columns past `M` and `N` are skipped by the final `copy`; a partial `K`
//! slab reads zero bytes past `K` (which unpack to −8!) but also zeros from `A`, and
//! `0·(−8) = 0`, so it contributes nothing. `N` must be even because two columns share a byte:
//! the kernel requires `N == 2·NP` where `NP` is `Bp`'s column count, and refuses anything
//! else with [`Error::Requirement`].
//!
//! On the CPU backend [`run`] uses 512³ at [`Scale::Reduced`] (the size the tutorial checked
//! correctness at). At the tutorial size the result is checked at 4096³ as well, against the
//! full float64 product.

use crate::ch08_gemm::{gemm_tolerance, reference_gemm};
use crate::check::{self, Case, Problem, Rng, Scale, Work};
use tilelang::prelude::*;

// ANCHOR: gemm_w4a16
/// Tiled GEMM with a packed-int4 `B`, unpacked into shared memory inside the pipelined K loop.
#[tile_kernel(
    grid = [N.div_ceil(BN), M.div_ceil(BM)],
    threads = THREADS,
    configs = [
        w128x128x32s3(BM = 128, BN = 128, BK = 32, STAGES = 3, THREADS = 256),
        w64x64x32s2(BM = 64, BN = 64, BK = 32, STAGES = 2, THREADS = 128),
        w128x256x32s2(BM = 128, BN = 256, BK = 32, STAGES = 2, THREADS = 256),
        w16x32x16s2(BM = 16, BN = 32, BK = 16, STAGES = 2, THREADS = 32),
        w128x256x64s3(BM = 128, BN = 256, BK = 64, STAGES = 3, THREADS = 256),
        w128x256x64s4(BM = 128, BN = 256, BK = 64, STAGES = 4, THREADS = 256),
        w64x64x128s4(BM = 64, BN = 64, BK = 128, STAGES = 4, THREADS = 128),
        w128x128x64s4(BM = 128, BN = 128, BK = 64, STAGES = 4, THREADS = 256),
    ],
    defaults = [gfx1100 = w128x128x32s3, gfx1151 = w64x64x32s2, gfx1201 = w128x128x32s3, gfx90a = w128x128x32s3, gfx942 = w128x128x32s3, sm_90 = w128x256x64s3, cpu = w128x256x32s2],
    requires = [N == 2 * NP],
)]
pub fn gemm_w4a16<
    const BM: usize,
    const BN: usize,
    const BK: usize,
    const STAGES: usize,
    const THREADS: usize,
>(
    a: &Tensor<f16, (M, K)>,
    bp: &Tensor<u8, (K, NP)>,
    c: &mut Tensor<f16, (M, N)>,
) {
    let (bx, by) = (block_idx(0), block_idx(1));
    let mut a_s = alloc_shared::<f16, (BM, BK)>();
    let mut bp_s = alloc_shared::<u8>((BK, BN / 2));
    let mut b_s = alloc_shared::<f16, (BK, BN)>();
    let mut acc = alloc_fragment::<f32, (BM, BN)>();
    clear(&mut acc);
    for k in pipelined(K.div_ceil(BK), STAGES) {
        copy(a.at((by * BM, k * BK)), &mut a_s);
        copy(bp.at((k * BK, bx * (BN / 2))), &mut bp_s);
        // One byte per iteration: low nibble → even column, high nibble → odd column.
        for (kk, j) in parallel(BK, BN / 2) {
            let p = bp_s[(kk, j)];
            b_s[(kk, 2 * j)] = (((p & 15) as i32) - 8) as f16;
            b_s[(kk, 2 * j + 1)] = ((((p >> 4) & 15) as i32) - 8) as f16;
        }
        gemm(&a_s, &b_s, &mut acc);
    }
    copy(&acc, c.at_mut((by * BM, bx * BN)));
}
// ANCHOR_END: gemm_w4a16

/// Unpacks `Bp [k, n/2]` into the f64 matrix `B [k, n]` (the format's definition).
pub fn unpack(bp: &[u8], k: usize, n: usize) -> Vec<f64> {
    assert_eq!(bp.len(), k * (n / 2));
    let mut b = vec![0.0; k * n];
    for (i, &p) in bp.iter().enumerate() {
        let (row, j) = (i / (n / 2), i % (n / 2));
        b[row * n + 2 * j] = (p & 0xF) as f64 - 8.0;
        b[row * n + 2 * j + 1] = ((p >> 4) & 0xF) as f64 - 8.0;
    }
    b
}

/// The float64 reference: `A·unpack(Bp)`.
pub fn reference_w4a16(a: &[f64], bp: &[u8], m: usize, n: usize, k: usize) -> Vec<f64> {
    reference_gemm(a, &unpack(bp, k, n), m, n, k)
}

// ANCHOR: tolerance
/// The tolerance of chapter 08 ([`gemm_tolerance`]) applies unchanged: the weights `−8..=7`
/// are exact in f16, each product of an f16 activation (11-bit significand) with a weight
/// (4 bits) is exact in f32, so the only errors are the f32 accumulation (bounded by
/// `K·2^-23·‖A[i,:]‖₂·‖B[:,j]‖₂`) and the final rounding to f16 (`2^-11` relative). With `A`
/// in `[−1, 1]` that is atol ≈ 0.09 at 512³ against the tutorial's atol 0.5 + rtol 0.1, and
/// rtol 2^-11 instead of 0.1.
fn tolerance(a: &[f64], bp: &[u8], m: usize, n: usize, k: usize) -> (f64, f64) {
    gemm_tolerance(a, &unpack(bp, k, n), m, n, k)
}
// ANCHOR_END: tolerance

fn inputs(m: usize, n: usize, k: usize, seed: u64) -> (Vec<f16>, Vec<u8>) {
    let mut rng = Rng::new(seed);
    (rng.vec(m * k, -1.0, 1.0), rng.bytes(k * (n / 2)))
}

pub fn run(dev: &Device, scale: Scale, seed: u64) -> tilelang::Result<Vec<Case>> {
    let size = match scale {
        Scale::Tutorial => 4096,
        Scale::Reduced => 512,
    };
    let (m, n, k) = (size, size, size);
    let (av, bpv) = inputs(m, n, k, seed);
    let a64 = check::to_f64(&av);
    let want = reference_w4a16(&a64, &bpv, m, n, k);
    let (atol, rtol) = tolerance(&a64, &bpv, m, n, k);
    let a = dev.upload(&av, &[m, k])?;
    let bp = dev.upload(&bpv, &[k, n / 2])?;
    let mut c = dev.alloc::<f16>(&[m, n])?;
    let flops = 2.0 * (m * n * k) as f64;
    let p = Problem {
        chapter: "10",
        size: format!("M=N=K={size}"),
        work: Work::Flops(flops),
        reps: check::reps_for(dev, flops),
        want: &want,
        atol,
        rtol,
    };
    // The default config (or every config with `--all-configs`), and the tutorial's 3-stage
    // config for comparison.
    let mut configs = check::configs(&gemm_w4a16::KERNEL, dev.arch());
    if !configs.contains(&"w128x128x32s3") {
        configs.push("w128x128x32s3");
    }
    p.sweep_configs(
        dev,
        "W4A16 (unpack in K loop)",
        &configs,
        &mut c,
        |cfg, c| gemm_w4a16::launch(dev, cfg, &a, &bp, c),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_config_matches_the_reference_with_tails() {
        let dev = crate::check::test_device();
        let seed = Rng::fresh_seed();
        // M, K odd and N even (the format needs it) but no multiple of any BN (32..256), nor
        // N/2 of any BN/2.
        for (m, n, k) in [(1, 2, 1), (37, 46, 53), (131, 70, 97), (19, 262, 33)] {
            let (av, bpv) = inputs(m, n, k, seed ^ (m * 1_000_003 + n * 1009 + k) as u64);
            let a64 = check::to_f64(&av);
            let want = reference_w4a16(&a64, &bpv, m, n, k);
            let (atol, rtol) = tolerance(&a64, &bpv, m, n, k);
            let a = dev.upload(&av, &[m, k]).unwrap();
            let bp = dev.upload(&bpv, &[k, n / 2]).unwrap();
            let mut c = dev.alloc::<f16>(&[m, n]).unwrap();
            for cfg in gemm_w4a16::Config::ALL {
                c.poison().unwrap();
                gemm_w4a16::launch(&dev, cfg, &a, &bp, &mut c).unwrap();
                check::assert_close(
                    &format!("gemm_w4a16[{cfg}] {m}x{n}x{k}"),
                    &c,
                    &want,
                    atol,
                    rtol,
                    seed,
                );
            }
        }
    }

    #[test]
    fn nibble_order_is_low_then_high() {
        // A = [1], Bp = [0x3A, 0xF0]: B = [0xA − 8, 0x3 − 8, 0x0 − 8, 0xF − 8] = [2, −5, −8, 7].
        let dev = crate::check::test_device();
        let a = dev.upload(&[f16::from_f32(1.0)], &[1, 1]).unwrap();
        let bp = dev.upload(&[0x3Au8, 0xF0], &[1, 2]).unwrap();
        let mut c = dev.alloc::<f16>(&[1, 4]).unwrap();
        gemm_w4a16(&dev, &a, &bp, &mut c).unwrap();
        let got: Vec<f32> = c.to_vec().unwrap().iter().map(|x| x.to_f32()).collect();
        assert_eq!(got, vec![2.0, -5.0, -8.0, 7.0]);
        assert_eq!(unpack(&[0x3A, 0xF0], 1, 4), vec![2.0, -5.0, -8.0, 7.0]);
    }

    #[test]
    fn odd_or_mismatched_n_is_refused_before_any_write() {
        let dev = crate::check::test_device();
        let a = dev.zeros::<f16>(&[4, 6]).unwrap();
        let bp = dev.zeros::<u8>(&[6, 4]).unwrap();
        // N = 9 cannot be packed two per byte.
        let mut c = dev.alloc::<f16>(&[4, 9]).unwrap();
        for cfg in gemm_w4a16::Config::ALL {
            let err = gemm_w4a16::launch(&dev, cfg, &a, &bp, &mut c).unwrap_err();
            assert!(
                matches!(err, Error::Requirement { condition, .. } if condition.contains("NP")),
                "{err}"
            );
        }
        // N = 10 is even but does not match Bp's 4 packed columns.
        let mut c10 = dev.alloc::<f16>(&[4, 10]).unwrap();
        assert!(matches!(
            gemm_w4a16(&dev, &a, &bp, &mut c10).unwrap_err(),
            Error::Requirement { .. }
        ));
        // K disagrees between A and Bp.
        let bp5 = dev.zeros::<u8>(&[5, 4]).unwrap();
        let mut c8 = dev.alloc::<f16>(&[4, 8]).unwrap();
        let err = gemm_w4a16(&dev, &a, &bp5, &mut c8).unwrap_err();
        assert!(
            matches!(err, Error::ShapeMismatch { symbol: "K", .. }),
            "{err}"
        );
        for t in [&c, &c10, &c8] {
            assert!(
                t.to_vec().unwrap().iter().all(|x| x.is_nan()),
                "nothing may be written"
            );
        }
    }
}
