//! # Chapter 08: matrix multiplication (GEMM)
//!
//! `C = A·B` with `A` of shape `[M, K]` and `B` of shape `[K, N]`, both row-major f16, products
//! summed in f32 and `C` stored as f16; the tutorial size is `M = N = K = 4096` (2·4096³ ≈ 137
//! GFLOP). Every output element is a dot product of length `K`, so the arithmetic grows as
//! `M·N·K` while the data only grows as `M·K + K·N`: each input element is used `N` (or `M`)
//! times. A GEMM is fast exactly when those re-uses come from fast memory (registers, shared
//! memory) instead of global memory, and when the multiply-adds run on the tensor cores.
//!
//! Every kernel here gives each block one `(BM, BN)` tile of `C`, so the grid is
//! `[N / BN, M / BM]` (rounded up). The chapter walks the usual steps:
//!
//! 1. **Naive** ([`gemm_naive()`]): a `parallel(BM, BN)` loop, one output element per iteration,
//!    each running a serial loop over `K` that reads `A` and `B` straight from global memory
//!    into an f32 register accumulator. Every element of `A` and `B` is fetched `BN` (or `BM`)
//!    times per block; only the caches save it, and the multiply-adds use the plain FP32 units.
//! 2. **Tensor cores** ([`gemm_fragment()`]): the `K` loop walks `BK`-wide slabs; each step
//!    `copy`s an `(BM, BK)` tile of `A` and a `(BK, BN)` tile of `B` from global memory
//!    straight into register fragments and `gemm`s them into an `(BM, BN)` f32 fragment
//!    accumulator: the multiply-adds now run on the tensor cores (MMA on NVIDIA, WMMA/MFMA
//!    on AMD), each thread holding its slice of the tiles. Global traffic drops from `2·K`
//!    loads per output to `K·(1/BM + 1/BN)`, but every thread loads in the matrix-core
//!    operand layout, which is not the coalesced one. (A backend that cannot feed the matrix
//!    unit from registers stages such operands through shared memory anyway; the current HIP
//!    emitter does, so there step 2 already behaves like step 3.)
//! 3. **Shared memory** ([`gemm_tiled()`] with `STAGES = 1`): the tiles go through shared memory
//!    instead: coalesced, vectorised global loads into shared, then the `gemm` reads its
//!    operands from there in whatever layout the tensor cores want.
//! 4. **Pipelining** ([`gemm_tiled()`] with 2-3 stages): `pipelined(n, STAGES)` gives the shared
//!    tiles `STAGES` buffers, so the copies of slabs `k+1 .. k+STAGES-1` are in flight while
//!    the tensor cores work on slab `k` (cp.async / TMA on NVIDIA). The program text is the
//!    same as step 3; only the schedule changes, and the result is bit-for-bit the same.
//!
//! Tails need no masks: a `copy` from global memory reads zeros outside the tensor, so a
//! partial `K` slab contributes `0·0 = 0`, and the final `copy` of the accumulator into `C`
//! skips the rows and columns past `M` and `N`.
//!
//! On the CPU backend a 4096³ GEMM would take minutes; [`run`] uses 512³ for the tiled kernels
//! and 128³ for the naive one at [`Scale::Reduced`] (stated in each row's size). There every
//! schedule runs the same sequential loops, so the steps differ only on a GPU.

use crate::check::{self, Case, Problem, Rng, Scale, Work};
use tilelang::prelude::*;

// ANCHOR: gemm_naive
/// Step 1: one output element per `parallel` iteration, a serial dot product over `K` read
/// straight from global memory, accumulated in an f32 register.
#[tile_kernel(
    grid = [N.div_ceil(BN), M.div_ceil(BM)],
    threads = THREADS,
    configs = [n16x16(BM = 16, BN = 16, THREADS = 256), n32x32(BM = 32, BN = 32, THREADS = 256)],
    defaults = [gfx1100 = n16x16, gfx1201 = n16x16, sm_90 = n16x16, cpu = n32x32],
)]
pub fn gemm_naive<const BM: usize, const BN: usize, const THREADS: usize>(
    a: &Tensor<f16, (M, K)>,
    b: &Tensor<f16, (K, N)>,
    c: &mut Tensor<f16, (M, N)>,
) {
    let (bx, by) = (block_idx(0), block_idx(1));
    for (i, j) in parallel(BM, BN) {
        let row = by * BM + i;
        let col = bx * BN + j;
        if row < M && col < N {
            let mut acc = 0.0f32;
            for k in serial(K) {
                acc += (a[(row, k)] as f32) * (b[(k, col)] as f32);
            }
            c[(row, col)] = acc as f16;
        }
    }
}
// ANCHOR_END: gemm_naive

// ANCHOR: gemm_fragment
/// Step 2: tensor cores fed straight from global memory: the `A` and `B` tiles are copied into
/// register fragments and multiplied into an f32 fragment accumulator with `gemm`.
#[tile_kernel(
    grid = [N.div_ceil(BN), M.div_ceil(BM)],
    threads = THREADS,
    configs = [
        r64x64x32(BM = 64, BN = 64, BK = 32, THREADS = 128),
        r16x32x16(BM = 16, BN = 32, BK = 16, THREADS = 32),
    ],
    defaults = [gfx1100 = r64x64x32, gfx1201 = r64x64x32, sm_90 = r64x64x32, cpu = r64x64x32],
)]
pub fn gemm_fragment<const BM: usize, const BN: usize, const BK: usize, const THREADS: usize>(
    a: &Tensor<f16, (M, K)>,
    b: &Tensor<f16, (K, N)>,
    c: &mut Tensor<f16, (M, N)>,
) {
    let (bx, by) = (block_idx(0), block_idx(1));
    let mut a_f = alloc_fragment::<f16, (BM, BK)>();
    let mut b_f = alloc_fragment::<f16, (BK, BN)>();
    let mut acc = alloc_fragment::<f32, (BM, BN)>();
    clear(&mut acc);
    for k in serial(K.div_ceil(BK)) {
        copy(a.at((by * BM, k * BK)), &mut a_f);
        copy(b.at((k * BK, bx * BN)), &mut b_f);
        gemm(&a_f, &b_f, &mut acc);
    }
    copy(&acc, c.at_mut((by * BM, bx * BN)));
}
// ANCHOR_END: gemm_fragment

// ANCHOR: gemm_tiled
/// Steps 3 and 4: shared-memory tiles of `A` and `B`, an f32 fragment accumulator fed by
/// `gemm` (tensor cores), and a `STAGES`-deep software pipeline over the `K` slabs.
/// `STAGES = 1` is the un-pipelined version of the same kernel.
#[tile_kernel(
    grid = [N.div_ceil(BN), M.div_ceil(BM)],
    threads = THREADS,
    configs = [
        t128x128x32s3(BM = 128, BN = 128, BK = 32, STAGES = 3, THREADS = 256),
        t128x128x32s1(BM = 128, BN = 128, BK = 32, STAGES = 1, THREADS = 256),
        t64x64x32s2(BM = 64, BN = 64, BK = 32, STAGES = 2, THREADS = 128),
        t128x256x32s2(BM = 128, BN = 256, BK = 32, STAGES = 2, THREADS = 256),
        t128x256x64s3(BM = 128, BN = 256, BK = 64, STAGES = 3, THREADS = 256),
        t128x256x64s4(BM = 128, BN = 256, BK = 64, STAGES = 4, THREADS = 256),
        t16x32x16s2(BM = 16, BN = 32, BK = 16, STAGES = 2, THREADS = 32),
    ],
    defaults = [gfx1100 = t128x128x32s3, gfx1151 = t64x64x32s2, gfx1201 = t128x128x32s3, gfx90a = t128x128x32s3, gfx942 = t128x128x32s3, sm_90 = t128x128x32s3, cpu = t128x256x32s2],
)]
pub fn gemm_tiled<
    const BM: usize,
    const BN: usize,
    const BK: usize,
    const STAGES: usize,
    const THREADS: usize,
>(
    a: &Tensor<f16, (M, K)>,
    b: &Tensor<f16, (K, N)>,
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
    copy(&acc, c.at_mut((by * BM, bx * BN)));
}
// ANCHOR_END: gemm_tiled

/// The configs of [`gemm_tiled()`] without a pipeline (`STAGES = 1`: step 3) if `pipelined` is
/// false, else those with one (`STAGES > 1`: step 4), in the attribute's order.
pub fn tiled_configs(pipelined: bool) -> Vec<&'static str> {
    let configs = gemm_tiled::KERNEL.configs.iter();
    configs
        .filter(|c| (c.value("STAGES").unwrap_or(1) > 1) == pipelined)
        .map(|c| c.name)
        .collect()
}

/// The float64 reference `C = A·B` (`a` is `m×k`, `b` is `k×n`, row-major), exact up to f64
/// rounding (relative 1e-16·k, far below anything the tolerances below look at). Blocked over
/// `k` and `n` so a 4096³ product stays in cache, and split by rows over the available cores.
pub fn reference_gemm(a: &[f64], b: &[f64], m: usize, n: usize, k: usize) -> Vec<f64> {
    assert_eq!(a.len(), m * k);
    assert_eq!(b.len(), k * n);
    let mut c = vec![0.0f64; m * n];
    if m == 0 || n == 0 {
        return c;
    }
    let threads = std::thread::available_parallelism()
        .map_or(1, |t| t.get())
        .min(m);
    let rows_per = m.div_ceil(threads);
    const KB: usize = 128;
    const NB: usize = 512;
    std::thread::scope(|s| {
        for (chunk, c_rows) in c.chunks_mut(rows_per * n).enumerate() {
            let r0 = chunk * rows_per;
            s.spawn(move || {
                for k0 in (0..k).step_by(KB) {
                    let k1 = (k0 + KB).min(k);
                    for n0 in (0..n).step_by(NB) {
                        let n1 = (n0 + NB).min(n);
                        for (ri, c_row) in c_rows.chunks_mut(n).enumerate() {
                            let a_row = &a[(r0 + ri) * k..(r0 + ri + 1) * k];
                            let c_seg = &mut c_row[n0..n1];
                            for kk in k0..k1 {
                                let av = a_row[kk];
                                for (cv, bv) in c_seg.iter_mut().zip(&b[kk * n + n0..kk * n + n1]) {
                                    *cv += av * bv;
                                }
                            }
                        }
                    }
                }
            });
        }
    });
    c
}

// ANCHOR: tolerance
/// The tolerance `(atol, rtol)` for an f16-in, f32-accumulate, f16-out product of these inputs,
/// against [`reference_gemm`] of the same (f16-rounded) inputs.
///
/// * Each product `a·b` of two f16 values (11-bit significands) is exact in f32 (24 bits).
/// * Summing `K` exact products in f32, in any order, errs by at most `K·u·Σ_k |a_ik·b_kj|`
///   (Higham, Accuracy and Stability of Numerical Algorithms, §3.1) with `u` the f32 unit
///   roundoff. We take `u = 2^-23` instead of `2^-24`, which also covers adders that truncate
///   instead of rounding to nearest (tensor-core accumulation does that), and bound
///   `Σ_k |a_ik·b_kj| ≤ ‖A[i,:]‖₂·‖B[:,j]‖₂` (Cauchy–Schwarz) by the largest row and column
///   norms. Call that accumulation bound `E`.
/// * Rounding the f32 sum `c'` to f16 adds at most `2^-11·|c'| ≤ 2^-11·(|c| + E)` (half an
///   ulp), or `2^-25` absolute among the subnormals.
///
/// So `|got − c| ≤ (1 + 2^-11)·E + 2^-25 + 2^-11·|c|`: `atol = 1.001·E + 2^-25`,
/// `rtol = 2^-11`. With inputs uniform in `[-1, 1]` this gives atol ≈ 0.01 at K = 512 and
/// ≈ 0.7 at K = 4096 (the tutorial's fixed atol was 1.0 with no relative part); the observed
/// errors are far smaller, dominated by the final f16 rounding.
pub fn gemm_tolerance(a: &[f64], b: &[f64], m: usize, n: usize, k: usize) -> (f64, f64) {
    let max_row = (0..m)
        .map(|i| a[i * k..(i + 1) * k].iter().map(|x| x * x).sum::<f64>())
        .fold(0.0, f64::max);
    let mut col = vec![0.0f64; n];
    for row in b.chunks(n.max(1)) {
        for (s, x) in col.iter_mut().zip(row) {
            *s += x * x;
        }
    }
    let max_col = col.into_iter().fold(0.0, f64::max);
    let e = k as f64 * (2.0f64).powi(-23) * (max_row * max_col).sqrt();
    (1.001 * e + (2.0f64).powi(-25), (2.0f64).powi(-11))
}
// ANCHOR_END: tolerance

/// Random f16 inputs uniform in `[-1, 1)` and their f64 widenings.
fn inputs(m: usize, n: usize, k: usize, seed: u64) -> (Vec<f16>, Vec<f16>) {
    let mut rng = Rng::new(seed);
    (rng.vec(m * k, -1.0, 1.0), rng.vec(k * n, -1.0, 1.0))
}

/// The kernels of the chapter, for [`run`]'s table.
#[derive(Clone, Copy)]
enum Step {
    Naive,
    Fragment,
    Tiled,
}

pub fn run(dev: &Device, scale: Scale, seed: u64) -> tilelang::Result<Vec<Case>> {
    // (size for the tile kernels, size for the naive one): on the CPU backend the naive
    // kernel's bounds-checked scalar loop is ~40x slower than `gemm`, so it gets a smaller
    // problem there (each launch then takes ~30 ms, and 512³ with `gemm` ~40 ms).
    let (big, small) = match scale {
        Scale::Tutorial => (4096, 4096),
        Scale::Reduced => (512, 128),
    };
    let arch = dev.arch();
    // The pipelined rows: the default config (with `--all-configs` every pipelined config),
    // and the tutorial's 3-stage config for comparison; the un-pipelined ones have their row.
    let mut pipelined = check::configs(&gemm_tiled::KERNEL, arch);
    pipelined.retain(|c| tiled_configs(true).contains(c));
    if !pipelined.contains(&"t128x128x32s3") {
        pipelined.push("t128x128x32s3");
    }
    let steps = [
        (
            small,
            Step::Naive,
            "naive (global loads, FP32 FMA)",
            check::configs(&gemm_naive::KERNEL, arch),
        ),
        (
            big,
            Step::Fragment,
            "tensor cores, tiles in registers",
            check::configs(&gemm_fragment::KERNEL, arch),
        ),
        (
            big,
            Step::Tiled,
            "tensor cores + shared memory",
            tiled_configs(false),
        ),
        (big, Step::Tiled, "+ pipelining", pipelined),
    ];
    let mut cases = Vec::new();
    let mut rng = Rng::new(seed);
    let mut sizes = vec![small, big];
    sizes.dedup();
    for size in sizes {
        let (m, n, k) = (size, size, size);
        let (av, bv) = inputs(m, n, k, rng.next_u64());
        let (a64, b64) = (check::to_f64(&av), check::to_f64(&bv));
        let want = reference_gemm(&a64, &b64, m, n, k);
        let (atol, rtol) = gemm_tolerance(&a64, &b64, m, n, k);
        let a = dev.upload(&av, &[m, k])?;
        let b = dev.upload(&bv, &[k, n])?;
        let mut c = dev.alloc::<f16>(&[m, n])?;
        let flops = 2.0 * (m * n * k) as f64;
        let p = Problem {
            chapter: "08",
            size: format!("M=N=K={size}"),
            work: Work::Flops(flops),
            reps: check::reps_for(dev, flops),
            want: &want,
            atol,
            rtol,
        };
        for (_, step, variant, configs) in steps.iter().filter(|s| s.0 == size) {
            cases.extend(match step {
                Step::Naive => p.sweep_configs(dev, variant, configs, &mut c, |cfg, c| {
                    gemm_naive::launch(dev, cfg, &a, &b, c)
                })?,
                Step::Fragment => p.sweep_configs(dev, variant, configs, &mut c, |cfg, c| {
                    gemm_fragment::launch(dev, cfg, &a, &b, c)
                })?,
                Step::Tiled => p.sweep_configs(dev, variant, configs, &mut c, |cfg, c| {
                    gemm_tiled::launch(dev, cfg, &a, &b, c)
                })?,
            });
        }
    }
    Ok(cases)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Odd sizes: no dimension is a multiple of any tile (16, 32, 64, 128, 256), and 1×1×1.
    /// The last has rows of whole 16-byte vectors (N and K multiples of 8) with tails in every
    /// dimension: the sizes at which sm_90a runs the TMA entry (the others, the plain one).
    const SIZES: [(usize, usize, usize); 5] = [
        (1, 1, 1),
        (37, 45, 53),
        (131, 67, 97),
        (19, 259, 33),
        (77, 136, 200),
    ];

    #[test]
    fn every_config_matches_the_reference_with_tails() {
        let dev = crate::check::test_device();
        let seed = Rng::fresh_seed();
        for (m, n, k) in SIZES {
            let (av, bv) = inputs(m, n, k, seed ^ (m * 1_000_003 + n * 1009 + k) as u64);
            let (a64, b64) = (check::to_f64(&av), check::to_f64(&bv));
            let want = reference_gemm(&a64, &b64, m, n, k);
            let (atol, rtol) = gemm_tolerance(&a64, &b64, m, n, k);
            let a = dev.upload(&av, &[m, k]).unwrap();
            let b = dev.upload(&bv, &[k, n]).unwrap();
            let mut c = dev.alloc::<f16>(&[m, n]).unwrap();
            for cfg in gemm_naive::Config::ALL {
                c.poison().unwrap();
                gemm_naive::launch(&dev, cfg, &a, &b, &mut c).unwrap();
                check::assert_close(
                    &format!("gemm_naive[{cfg}] {m}x{n}x{k}"),
                    &c,
                    &want,
                    atol,
                    rtol,
                    seed,
                );
            }
            for cfg in gemm_fragment::Config::ALL {
                c.poison().unwrap();
                gemm_fragment::launch(&dev, cfg, &a, &b, &mut c).unwrap();
                check::assert_close(
                    &format!("gemm_fragment[{cfg}] {m}x{n}x{k}"),
                    &c,
                    &want,
                    atol,
                    rtol,
                    seed,
                );
            }
            for cfg in gemm_tiled::Config::ALL {
                c.poison().unwrap();
                gemm_tiled::launch(&dev, cfg, &a, &b, &mut c).unwrap();
                check::assert_close(
                    &format!("gemm_tiled[{cfg}] {m}x{n}x{k}"),
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
    fn reference_is_right_on_a_known_product() {
        // [[1, 2], [3, 4]]·[[5, 6, 7], [8, 9, 10]]
        let c = reference_gemm(
            &[1.0, 2.0, 3.0, 4.0],
            &[5.0, 6.0, 7.0, 8.0, 9.0, 10.0],
            2,
            3,
            2,
        );
        assert_eq!(c, vec![21.0, 24.0, 27.0, 47.0, 54.0, 61.0]);
    }

    #[test]
    fn mismatched_inner_dimension_is_refused_before_any_write() {
        let dev = crate::check::test_device();
        let a = dev.zeros::<f16>(&[8, 5]).unwrap();
        let b = dev.zeros::<f16>(&[6, 7]).unwrap();
        let mut c = dev.alloc::<f16>(&[8, 7]).unwrap();
        let err = gemm_tiled(&dev, &a, &b, &mut c).unwrap_err();
        assert!(
            matches!(
                err,
                Error::ShapeMismatch {
                    symbol: "K",
                    expected: 5,
                    found: 6,
                    ..
                }
            ),
            "{err}"
        );
        for err in [
            gemm_naive(&dev, &a, &b, &mut c).unwrap_err(),
            gemm_fragment(&dev, &a, &b, &mut c).unwrap_err(),
        ] {
            assert!(
                matches!(err, Error::ShapeMismatch { symbol: "K", .. }),
                "{err}"
            );
        }
        assert!(
            c.to_vec().unwrap().iter().all(|x| x.is_nan()),
            "nothing may be written"
        );
    }
}
