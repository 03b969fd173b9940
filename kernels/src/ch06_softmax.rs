//! # Chapter 06: row softmax, in three passes and online
//!
//! `B[i, j] = exp(A[i, j] − m_i) / Σ_k exp(A[i, k] − m_i)` with `m_i = max_k A[i, k]`, over a
//! `[4096, 16384]` f32 matrix. Subtracting the row maximum changes nothing mathematically
//! (numerator and denominator both gain the factor `exp(−m_i)`), but it keeps every exponent
//! `≤ 0`, so no `exp` overflows: without it a row containing `89.0` would already give `inf`
//! in f32, and `inf / inf` is NaN.
//!
//! A row of 16384 floats (64 KiB) is too long to keep in one tile, so each block owns `BM`
//! rows and walks along them in column chunks of `BN`, keeping one running value per row in a
//! `(BM,)` fragment. A chunk is copied into a `(BM, BN)` fragment, transformed element-wise in
//! a `parallel` loop, and folded with `reduce_max` / `reduce_sum` along dimension 1.
//!
//! * **3-pass** (`softmax_3pass`): pass 1 folds the chunk maxima into `m`; pass 2 sums
//!   `exp(x − m)` into `s`; pass 3 writes `exp(x − m) / s`. The input is read three times.
//! * **online** (`softmax_online`): passes 1 and 2 merge. After chunk `t` the block holds
//!   `m_t = max` of the columns seen so far and `s_t = Σ_{seen} exp(x − m_t)`. A new chunk with
//!   maximum `c` gives `m_{t+1} = max(m_t, c)` and
//!   `s_{t+1} = s_t · exp(m_t − m_{t+1}) + Σ_{chunk} exp(x − m_{t+1})`,
//!   because `exp(x − m_t) · exp(m_t − m_{t+1}) = exp(x − m_{t+1})`: rescaling the old sum
//!   re-expresses every term already in it relative to the new maximum. When the maximum does
//!   not grow the factor is exactly `exp(0) = 1`; when it grows, it is `< 1`, so nothing
//!   overflows either. After the last chunk `(m, s)` equal the 3-pass values up to rounding,
//!   and one write pass finishes. The input is read twice instead of three times, which is
//!   what matters for a bandwidth-bound kernel.
//! * **whole row** (`softmax_row`): when a row fits one tile (`requires N <= BN`; 16384 floats
//!   are 32 registers per thread at 512 threads) the three passes run over the registers:
//!   the input is read once and the output written once, the least traffic there is. The
//!   reductions and the row values `m`, `s` stay in registers too (the lowering's row layout).
//!
//! **Tails.** `copy` reads zeros outside the tensor and skips writes outside it, so rows past
//! `M` cost nothing but need no guard. Columns past `N` are different: a zero would enter the
//! maximum (wrong when a whole row is negative: `max` would be `0`, and for rows far below zero
//! every `exp` would underflow) and `exp(0 − m)` would enter the sum. So the kernels mask them
//! with `if_then_else` on the global column index: `f32::NEG_INFINITY` for the maximum (the
//! neutral element of `max`, which `m` also starts from), `0` for the sum.
//!
//! **Every input.** The result is the float64 reference's (max, `exp(x − max)`, sum, divide)
//! on every row, not only on ordinary ones. A row of values all below `−1e30` keeps its true
//! maximum (a finite stand-in for `−∞` as start or mask would sit above it, make every
//! `exp(x − m)` 0 and the row 0/0); `−∞` entries give 0; a row that is all `−∞` gives NaN, as
//! the reference's `exp(−∞ − (−∞))` does, and so does a row holding `+∞` (`∞ − ∞`) or a NaN
//! (`max` skips a NaN, as `f64::max` does, but its `exp` makes the sum NaN). The 3-pass kernel
//! needs nothing more: its maximum is final before the first `exp`, and the sum selects 0 for
//! the masked columns. The online kernel does: while its running maximum is still `−∞` (every
//! column seen is `−∞` or masked), `exp(x − m)` and the rescale `exp(m_old − m_new)` would be
//! `exp(−∞ − (−∞)) = NaN`, although those columns contribute 0 once a larger value comes. So
//! until then it takes the exponentials relative to 0 (`exp(−∞ − 0) = 0`, the sum stays 0):
//! one select per row and one per element, no extra pass over memory.

use crate::check::{self, Case, Problem, Rng, Scale, Work};
use tilelang::prelude::*;

// ANCHOR: softmax_3pass
/// Three passes over each row: maximum, sum of exponentials, normalised write.
#[tile_kernel(
    grid = [M.div_ceil(BM)],
    threads = THREADS,
    configs = [r4x1024(BM = 4, BN = 1024, THREADS = 256), r1x4096(BM = 1, BN = 4096, THREADS = 256), r16x256(BM = 16, BN = 256, THREADS = 128)],
    defaults = [gfx1100 = r4x1024, gfx1151 = r1x4096, gfx1201 = r4x1024, gfx90a = r4x1024, gfx942 = r4x1024, sm_90 = r1x4096, cpu = r4x1024],
)]
pub fn softmax_3pass<const BM: usize, const BN: usize, const THREADS: usize>(
    a: &Tensor<f32, (M, N)>,
    b: &mut Tensor<f32, (M, N)>,
) {
    let row0 = block_idx(0) * BM;
    let mut tile = alloc_fragment::<f32, (BM, BN)>();
    let mut part = alloc_fragment::<f32, (BM,)>();
    let mut m = alloc_fragment::<f32, (BM,)>();
    let mut s = alloc_fragment::<f32, (BM,)>();
    fill(&mut m, f32::NEG_INFINITY);
    fill(&mut s, 0.0);
    // Pass 1: the row maximum. Columns past N read as 0 and must not count.
    for t in serial(N.div_ceil(BN)) {
        copy(a.at((row0, t * BN)), &mut tile);
        for (i, j) in parallel(BM, BN) {
            tile[(i, j)] = if_then_else(t * BN + j < N, tile[(i, j)], f32::NEG_INFINITY);
        }
        reduce_max(&tile, &mut part, 1);
        for i in parallel(BM) {
            m[i] = max(m[i], part[i]);
        }
    }
    // Pass 2: Σ exp(x − m), the tail columns contributing 0.
    for t in serial(N.div_ceil(BN)) {
        copy(a.at((row0, t * BN)), &mut tile);
        for (i, j) in parallel(BM, BN) {
            tile[(i, j)] = if_then_else(t * BN + j < N, exp(tile[(i, j)] - m[i]), 0.0);
        }
        reduce_sum(&tile, &mut part, 1);
        for i in parallel(BM) {
            s[i] += part[i];
        }
    }
    // Pass 3: normalise and write (the copy skips the tails).
    for t in serial(N.div_ceil(BN)) {
        copy(a.at((row0, t * BN)), &mut tile);
        for (i, j) in parallel(BM, BN) {
            tile[(i, j)] = exp(tile[(i, j)] - m[i]) / s[i];
        }
        copy(&tile, b.at_mut((row0, t * BN)));
    }
}
// ANCHOR_END: softmax_3pass

// ANCHOR: softmax_online
/// One pass for a running maximum and a rescaled running sum, then one write pass.
#[tile_kernel(
    grid = [M.div_ceil(BM)],
    threads = THREADS,
    configs = [r4x1024(BM = 4, BN = 1024, THREADS = 256), r1x4096(BM = 1, BN = 4096, THREADS = 256), r16x256(BM = 16, BN = 256, THREADS = 128)],
    defaults = [gfx1100 = r4x1024, gfx1151 = r1x4096, gfx1201 = r4x1024, gfx90a = r4x1024, gfx942 = r4x1024, sm_90 = r1x4096, cpu = r4x1024],
)]
pub fn softmax_online<const BM: usize, const BN: usize, const THREADS: usize>(
    a: &Tensor<f32, (M, N)>,
    b: &mut Tensor<f32, (M, N)>,
) {
    let row0 = block_idx(0) * BM;
    let mut tile = alloc_fragment::<f32, (BM, BN)>();
    let mut part = alloc_fragment::<f32, (BM,)>();
    let mut m = alloc_fragment::<f32, (BM,)>();
    let mut s = alloc_fragment::<f32, (BM,)>();
    fill(&mut m, f32::NEG_INFINITY);
    fill(&mut s, 0.0);
    for t in serial(N.div_ceil(BN)) {
        copy(a.at((row0, t * BN)), &mut tile);
        for (i, j) in parallel(BM, BN) {
            tile[(i, j)] = if_then_else(t * BN + j < N, tile[(i, j)], f32::NEG_INFINITY);
        }
        reduce_max(&tile, &mut part, 1);
        // The new maximum; the old sum is re-expressed relative to it. While the maximum is
        // still −∞ the exponentials are taken relative to 0 instead: everything seen is −∞ or
        // masked, exp(−∞ − 0) = 0 where exp(−∞ − (−∞)) would be NaN, and s stays 0.
        for i in parallel(BM) {
            let m_new = max(m[i], part[i]);
            s[i] = s[i] * exp(m[i] - if_then_else(m_new == f32::NEG_INFINITY, 0.0, m_new));
            m[i] = m_new;
        }
        // Masked columns hold −∞, so their exp is exactly 0.
        for (i, j) in parallel(BM, BN) {
            let base = if_then_else(m[i] == f32::NEG_INFINITY, 0.0, m[i]);
            tile[(i, j)] = exp(tile[(i, j)] - base);
        }
        reduce_sum(&tile, &mut part, 1);
        for i in parallel(BM) {
            s[i] += part[i];
        }
    }
    for t in serial(N.div_ceil(BN)) {
        copy(a.at((row0, t * BN)), &mut tile);
        for (i, j) in parallel(BM, BN) {
            tile[(i, j)] = exp(tile[(i, j)] - m[i]) / s[i];
        }
        copy(&tile, b.at_mut((row0, t * BN)));
    }
}
// ANCHOR_END: softmax_online

// ANCHOR: softmax_row
/// The whole row in registers (`requires N <= BN`): one read of the input and one write, the
/// minimum traffic. The row is copied once into a `(BM, BN)` fragment and stays there for the
/// maximum, the exponentials, the sum and the division. Columns past `N` are masked as in the
/// other kernels. Rows longer than `BN` are refused at launch (the `requires`); the chunked
/// kernels above take any length.
#[tile_kernel(
    grid = [M.div_ceil(BM)],
    threads = THREADS,
    requires = [N <= BN],
    configs = [r1x16384t512(BM = 1, BN = 16384, THREADS = 512), r1x16384(BM = 1, BN = 16384, THREADS = 1024)],
    defaults = [gfx1100 = r1x16384t512, gfx1151 = r1x16384t512, gfx1201 = r1x16384t512, gfx90a = r1x16384t512, gfx942 = r1x16384t512, sm_90 = r1x16384t512, cpu = r1x16384t512],
)]
pub fn softmax_row<const BM: usize, const BN: usize, const THREADS: usize>(
    a: &Tensor<f32, (M, N)>,
    b: &mut Tensor<f32, (M, N)>,
) {
    let row0 = block_idx(0) * BM;
    let mut tile = alloc_fragment::<f32, (BM, BN)>();
    let mut m = alloc_fragment::<f32, (BM,)>();
    let mut s = alloc_fragment::<f32, (BM,)>();
    copy(a.at((row0, 0)), &mut tile);
    for (i, j) in parallel(BM, BN) {
        tile[(i, j)] = if_then_else(j < N, tile[(i, j)], f32::NEG_INFINITY);
    }
    reduce_max(&tile, &mut m, 1);
    // Masked columns hold −∞: their exp is exactly 0 (a row of only −∞ gives NaN, as the
    // reference does).
    for (i, j) in parallel(BM, BN) {
        tile[(i, j)] = exp(tile[(i, j)] - m[i]);
    }
    reduce_sum(&tile, &mut s, 1);
    for (i, j) in parallel(BM, BN) {
        tile[(i, j)] = tile[(i, j)] / s[i];
    }
    copy(&tile, b.at_mut((row0, 0)));
}
// ANCHOR_END: softmax_row

/// The float64 reference: max-subtracted softmax of each row of the row-major `[m, n]` matrix.
pub fn reference_softmax(a: &[f64], m: usize, n: usize) -> Vec<f64> {
    let mut out = vec![0.0; m * n];
    for (row, o) in a.chunks_exact(n).zip(out.chunks_exact_mut(n)).take(m) {
        let mx = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = row.iter().map(|x| (x - mx).exp()).sum();
        for (o, x) in o.iter_mut().zip(row) {
            *o = (x - mx).exp() / sum;
        }
    }
    out
}

// ANCHOR: tolerance
/// Relative tolerance, against float64. The tutorial checked `|got − want| ≤ 1e-4` (and 5e-4);
/// softmax outputs lie in `[0, 1]`, so `RTOL·|want| ≤ 5e-5` is at least twice as strict
/// everywhere, and far stricter on typical outputs (~1/16384, where an absolute 1e-4 checks
/// nothing). Error budget in f32 (`u = 2^-24 ≈ 6e-8`), inputs exact in both: `x − m` rounds
/// once (≤ 200·u ≈ 1.2e-5 relative in `exp` for the ±100 test, ≤ 8·u for ±4), `exp` and the
/// division add ~1 ulp each, and the sum of up to `BN + N/BN` positive terms per row has a
/// relative error whose worst case is `(BN + N/BN)·u ≈ 2.5e-4` for BN = 4096 but which behaves
/// like `√(BN + N/BN)·u ≈ 4e-6` for rounding errors of random sign (and `log2(BN)·u` for a
/// GPU's tree reduction). Measured on the CPU at the tutorial size: 8e-7.
const RTOL: f64 = 5e-5;
/// Outputs below f32's normal range (`exp(x − m) < 1.2e-38`, i.e. `x` more than ~87 below the
/// row maximum) lose relative precision or flush to zero; the float64 reference keeps them.
/// An absolute slack of 1e-36 covers exactly those and nothing the tutorial would see.
const ATOL: f64 = 1e-36;
// ANCHOR_END: tolerance

pub fn run(dev: &Device, scale: Scale, seed: u64) -> tilelang::Result<Vec<Case>> {
    let n = 16_384;
    let m = match scale {
        Scale::Tutorial => 4096,
        // A tutorial-size run takes ~26 s of CPU time (each launch ~2 s); an eighth of the rows
        // (~3 s) exercises the same code: the row count only sets the number of blocks.
        Scale::Reduced => 512,
    };
    let mut rng = Rng::new(seed);
    let av = rng.vec::<f32>(m * n, -4.0, 4.0);
    let want = reference_softmax(&check::to_f64(&av), m, n);
    let a = dev.upload(&av, &[m, n])?;
    let mut b = dev.alloc::<f32>(&[m, n])?;
    let p = Problem {
        chapter: "06",
        size: format!("{m}x{n}"),
        // Minimum traffic: A read once, B written once.
        work: Work::Bytes(2.0 * 4.0 * (m * n) as f64),
        reps: check::reps_for(dev, (m * n) as f64),
        want: &want,
        atol: ATOL,
        rtol: RTOL,
    };
    let mut cases = p.sweep(dev, "3-pass", &mut b, |cfg, b| {
        softmax_3pass::launch(dev, cfg, &a, b)
    })?;
    cases.extend(p.sweep(dev, "online", &mut b, |cfg, b| {
        softmax_online::launch(dev, cfg, &a, b)
    })?);
    cases.extend(p.sweep(dev, "whole row", &mut b, |cfg, b| {
        softmax_row::launch(dev, cfg, &a, b)
    })?);
    Ok(cases)
}

#[cfg(test)]
mod tests {
    use super::*;

    type Launch = fn(&Device, &str, &Tensor<f32>, &mut Tensor<f32>) -> tilelang::Result<()>;
    /// Every kernel of the chapter: name, configs, launcher.
    const KERNELS: [(&str, &[&str], Launch); 3] = [
        (
            "softmax_3pass",
            softmax_3pass::CONFIGS,
            softmax_3pass::launch_named,
        ),
        (
            "softmax_online",
            softmax_online::CONFIGS,
            softmax_online::launch_named,
        ),
        (
            "softmax_row",
            softmax_row::CONFIGS,
            softmax_row::launch_named,
        ),
    ];

    /// Runs every config of every kernel on `av` (`[m, n]`) with a poisoned output.
    fn check_all(what: &str, av: &[f32], m: usize, n: usize, seed: u64) {
        let dev = crate::check::test_device();
        let want = reference_softmax(&check::to_f64(av), m, n);
        let a = dev.upload(av, &[m, n]).unwrap();
        let mut b = dev.alloc::<f32>(&[m, n]).unwrap();
        for (name, configs, launch) in KERNELS {
            for cfg in configs {
                b.poison().unwrap();
                launch(&dev, cfg, &a, &mut b).unwrap();
                check::assert_close(
                    &format!("{name}[{cfg}] {what} {m}x{n}"),
                    &b,
                    &want,
                    ATOL,
                    RTOL,
                    seed,
                );
            }
        }
    }

    #[test]
    fn every_config_matches_the_reference_with_tails() {
        let seed = Rng::fresh_seed();
        // Rows: below, between and past the row tiles (1, 4, 16); columns: a single column,
        // less than one chunk, and several chunks of every BN with a ragged last one.
        for (m, n) in [(1, 1), (3, 7), (17, 255), (5, 1025), (7, 4097), (19, 8193)] {
            let mut rng = Rng::new(seed ^ (m * 100_003 + n) as u64);
            let av = rng.vec::<f32>(m * n, -4.0, 4.0);
            check_all("uniform ±4", &av, m, n, seed);
        }
    }

    /// Rows at the ends of f32's range, of infinities and with a NaN
    /// ([`check::extreme_rows`]), at odd sizes in every config: the output must be the float64
    /// reference exactly where that is NaN (all −∞, any +∞ or NaN in the row) and within the
    /// tolerance elsewhere. A maximum that starts at a finite value (or a finite mask) above
    /// −1e38 makes every `exp(x − m)` of the all-(−1e38) rows 0, and 0/0 NaN; an online rescale
    /// `exp(−∞ − (−∞))` poisons the rows whose first chunks are all −∞.
    #[test]
    fn extreme_rows_match_the_reference() {
        let seed = Rng::fresh_seed();
        let dev = crate::check::test_device();
        // 13 and 25 rows: every kind of row, and a partial last row block for BM = 4 and 16.
        for (m, n) in [
            (13, 1),
            (13, 3),
            (25, 257),
            (13, 1029),
            (25, 4099),
            (13, 8197),
        ] {
            let mut rng = Rng::new(seed ^ (m * 100_003 + n) as u64);
            let (av, kinds) = check::extreme_rows(&mut rng, m, n);
            let want = reference_softmax(&check::to_f64(&av), m, n);
            let a = dev.upload(&av, &[m, n]).unwrap();
            let mut b = dev.alloc::<f32>(&[m, n]).unwrap();
            // Softmax outputs lie in [0, 1]: 3 is never one.
            let assert_close =
                |what: String,
                 b: &mut Tensor<f32>,
                 launch: &dyn Fn(&mut Tensor<f32>) -> tilelang::Result<()>| {
                    check::assert_close_rows(
                        &what, b, 3.0, &want, ATOL, RTOL, n, &kinds, seed, launch,
                    )
                };
            for (name, configs, launch) in KERNELS {
                for cfg in configs {
                    assert_close(format!("{name}[{cfg}] {m}x{n}"), &mut b, &|b| {
                        launch(&dev, cfg, &a, b)
                    });
                }
            }
        }
    }

    /// Rows longer than the tile are refused at launch, not computed wrong.
    #[test]
    fn whole_row_refuses_rows_longer_than_its_tile() {
        let dev = crate::check::test_device();
        let a = dev.alloc::<f32>(&[2, 16_385]).unwrap();
        let mut b = dev.alloc::<f32>(&[2, 16_385]).unwrap();
        for cfg in softmax_row::Config::ALL {
            let e = softmax_row::launch(&dev, cfg, &a, &mut b).unwrap_err();
            assert!(e.to_string().contains("N <= BN"), "{cfg}: {e}");
        }
    }

    /// A whole row far below zero: if the zero-filled tail columns entered the maximum, it
    /// would be 0 and every `exp(x − 0) ≈ exp(−200)` would flush to zero (0/0 = NaN).
    #[test]
    fn tail_columns_do_not_enter_the_maximum() {
        let seed = Rng::fresh_seed();
        let (m, n) = (5, 1031);
        let mut rng = Rng::new(seed);
        let av = rng.vec::<f32>(m * n, -210.0, -190.0);
        check_all("all negative", &av, m, n, seed);
    }

    /// Inputs up to ±80 with some rows shifted by ±20 (so `|x|` reaches 100): `exp(x)` alone
    /// overflows f32 past x ≈ 88.7, so only the max subtraction keeps these finite.
    #[test]
    fn large_magnitudes_stay_finite() {
        let seed = Rng::fresh_seed();
        let (m, n) = (9, 4099);
        let mut rng = Rng::new(seed);
        let mut av = rng.vec::<f32>(m * n, -80.0, 80.0);
        for (r, row) in av.chunks_exact_mut(n).enumerate() {
            let shift = [0.0, 20.0, -20.0][r % 3];
            row.iter_mut().for_each(|x| *x += shift);
        }
        assert!(
            av.iter().any(|&x| x.exp().is_infinite()),
            "the test must contain inputs whose plain exp overflows"
        );
        check_all("±100", &av, m, n, seed);
        // And the result is an honest distribution: every row sums to 1.
        let dev = crate::check::test_device();
        let a = dev.upload(&av, &[m, n]).unwrap();
        let mut b = dev.alloc::<f32>(&[m, n]).unwrap();
        softmax_online(&dev, &a, &mut b).unwrap();
        for row in b.to_vec().unwrap().chunks_exact(n) {
            assert!(row.iter().all(|x| x.is_finite()));
            let sum: f64 = row.iter().map(|&x| x as f64).sum();
            assert!(
                (sum - 1.0).abs() < 1e-5,
                "row sum {sum} (TILELANG_SEED={seed})"
            );
        }
    }
}
