//! # Chapter 05: row sums, a reduction
//!
//! `B[i] = Σ_j A[i, j]` for `A` of shape `[4096, 16384]` in f32 (256 MiB in, 16 KiB out). Every
//! input element is read once and there are only 4096 results, so the kernel is bound by read
//! bandwidth; what a reduction adds is the question of who adds what, in which order.
//!
//! Each block owns `BM` whole rows (a 1-D grid of `M.div_ceil(BM)` blocks) and walks along them
//! in column chunks of `BN`:
//!
//! 1. `copy` the `BM × BN` tile at `(row, k·BN)` into shared memory. The loop is `pipelined`,
//!    so on a GPU the copy of chunk `k + 1` is in flight while chunk `k` is being summed;
//! 2. move it into a fragment (registers) and `reduce_sum` along dimension 1, which gives the
//!    chunk's `BM` partial sums in a `(BM,)` fragment;
//! 3. add those to a running `(BM,)` accumulator, one row per `parallel` iteration.
//!
//! At the end one `copy` writes the `BM` sums. Tails cost nothing: past the last column `copy`
//! reads zeros, which do not change a sum, and rows past `M` are summed but never written.
//! Long chunks (`BN` large) mean fewer trips round the loop; several rows per block (`BM`)
//! keep enough loads in flight with fewer blocks.
//!
//! **Accuracy.** Whatever order a block adds a chunk's `BN` values in (the CPU backend goes left
//! to right, a GPU folds a tree), a row's sum is `BN − 1` additions inside each chunk followed by
//! `⌈N/BN⌉` additions to the accumulator, every value passing through at most
//! `k = BN − 1 + ⌈N/BN⌉` of them. The classic bound for recursive summation then gives
//! `|computed − exact| ≤ γ_k · Σ_j |A[i, j]|` with `γ_k = k·u / (1 − k·u)`, `u = 2^-24`
//! (about 1.3·10^-4 for `N = 16384`, with `k` taken over all configs). The float64 reference's
//! own error (`N · 2^-53` relative to `Σ|A|`) is negligible next to that.
//!
//! * With mixed-sign data the sum is much smaller than `Σ|A|` (cancellation) and a relative
//!   error says little; the check is norm-wise: `atol = γ_k · max_i Σ_j |A[i, j]|`, `rtol = 0`.
//! * With positive data `Σ|A| = ΣA` and the same bound is a relative error, `rtol = γ_k`.
//!   `run` uses positive data (uniform in `[0, 1)`), so the relative error it reports is
//!   meaningful; the tests check both kinds.
//!
//! The bound is loose enough that one dropped element of a 16384-long row could hide inside it,
//! so the tests also sum small integers, where every partial sum is exact in f32 and the
//! result must be exact: an element lost, counted twice or read from the wrong row shows up.

use crate::check::{self, Case, Problem, Rng, Scale, Work};
use tilelang::prelude::*;

// ANCHOR: row_sum
/// `b[i] = Σ_j a[i, j]`, `BM` rows per block, `BN` columns per step.
#[tile_kernel(
    grid = [M.div_ceil(BM)],
    threads = THREADS,
    configs = [
        r4x1024(BM = 4, BN = 1024, THREADS = 256),
        r8x512(BM = 8, BN = 512, THREADS = 256),
        r16x256(BM = 16, BN = 256, THREADS = 128),
        r1x2048(BM = 1, BN = 2048, THREADS = 256),
    ],
    defaults = [gfx1100 = r4x1024, gfx1151 = r1x2048, gfx1201 = r4x1024, gfx90a = r4x1024, gfx942 = r4x1024, sm_90 = r8x512, cpu = r4x1024],
)]
pub fn row_sum<const BM: usize, const BN: usize, const THREADS: usize>(
    a: &Tensor<f32, (M, N)>,
    b: &mut Tensor<f32, (M,)>,
) {
    let row = block_idx(0) * BM;
    let mut tile_s = alloc_shared::<f32, (BM, BN)>();
    let mut tile = alloc_fragment::<f32, (BM, BN)>();
    let mut part = alloc_fragment::<f32, (BM,)>();
    let mut acc = alloc_fragment::<f32, (BM,)>();
    clear(&mut acc);
    for k in pipelined(N.div_ceil(BN), 2) {
        copy(a.at((row, k * BN)), &mut tile_s);
        copy(&tile_s, &mut tile);
        reduce_sum(&tile, &mut part, 1);
        for i in parallel(BM) {
            acc[i] += part[i];
        }
    }
    copy(&acc, b.at_mut((row,)));
}
// ANCHOR_END: row_sum

/// The smallest and largest `BN` among the configs of [`row_sum`] (the error bound uses both).
const BN_MIN: usize = 256;
const BN_MAX: usize = 2048;

/// The float64 reference: exact sums of the f32 inputs (to within `N · 2^-53` of `Σ|a|`).
pub fn reference_row_sum(a: &[f32], n: usize) -> Vec<f64> {
    a.chunks(n)
        .map(|row| row.iter().map(|&x| x as f64).sum())
        .collect()
}

// ANCHOR: tolerance
/// `γ_k` for `k = BN_MAX − 1 + ⌈n / BN_MIN⌉`, which is at least `BN − 1 + ⌈n / BN⌉` for every
/// config: a bound on the error of each row sum relative to `Σ_j |a[i, j]|` (see the module doc).
pub fn gamma(n: usize) -> f64 {
    let u = 2f64.powi(-24);
    let k = (BN_MAX - 1 + n.div_ceil(BN_MIN)) as f64;
    k * u / (1.0 - k * u)
}

/// The norm-wise error bound `γ_k · max_i Σ_j |a[i, j]|`, valid for every config.
pub fn error_bound(a: &[f32], n: usize) -> f64 {
    let max_abs_sum = a
        .chunks(n)
        .map(|row| row.iter().map(|&x| (x as f64).abs()).sum::<f64>())
        .fold(0.0, f64::max);
    gamma(n) * max_abs_sum
}
// ANCHOR_END: tolerance

pub fn run(dev: &Device, scale: Scale, seed: u64) -> tilelang::Result<Vec<Case>> {
    let (m, n) = match scale {
        Scale::Tutorial => (4096, 16384),
        // The CPU backend needs 3-5 s at the tutorial size; a quarter of the rows, at the
        // tutorial's row length (which sets the error bound), keeps it near one second.
        Scale::Reduced => (1024, 16384),
    };
    let mut rng = Rng::new(seed);
    let av = rng.vec::<f32>(m * n, 0.0, 1.0);
    let want = reference_row_sum(&av, n);
    let a = dev.upload(&av, &[m, n])?;
    drop(av);
    let mut b = dev.alloc::<f32>(&[m])?;
    let p = Problem {
        chapter: "05",
        size: format!("M={m}, N={n}"),
        work: Work::Bytes(4.0 * (m * n + m) as f64),
        reps: check::reps_for(dev, (m * n) as f64),
        want: &want,
        atol: 0.0,
        rtol: gamma(n),
    };
    p.sweep(dev, "row sum", &mut b, |cfg, b| {
        row_sum::launch(dev, cfg, &a, b)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_config_matches_the_reference_with_tails() {
        let dev = crate::check::test_device();
        let seed = Rng::fresh_seed();
        // Odd sizes: rows not a multiple of BM, columns not a multiple of BN; 4099 columns
        // take several chunks for every config.
        for (m, n) in [(1, 1), (3, 2049), (37, 257), (19, 4099)] {
            let mut rng = Rng::new(seed ^ (m * 100_003 + n) as u64);
            // Mixed signs (norm-wise bound), then positive values (a relative bound).
            for (lo, hi) in [(-1.0, 1.0), (0.0, 1.0)] {
                let av = rng.vec::<f32>(m * n, lo, hi);
                let want = reference_row_sum(&av, n);
                let (atol, rtol) = if lo < 0.0 {
                    (error_bound(&av, n), 0.0)
                } else {
                    (0.0, gamma(n))
                };
                let a = dev.upload(&av, &[m, n]).unwrap();
                let mut b = dev.alloc::<f32>(&[m]).unwrap();
                for cfg in row_sum::Config::ALL {
                    b.poison().unwrap();
                    row_sum::launch(&dev, cfg, &a, &mut b).unwrap();
                    check::assert_close(
                        &format!("row_sum[{cfg}] {m}x{n} in [{lo}, {hi})"),
                        &b,
                        &want,
                        atol,
                        rtol,
                        seed,
                    );
                }
            }
        }
    }

    #[test]
    fn tails_sum_exactly() {
        // Small integers: every partial sum is exact in f32, so the result must be exact.
        let dev = crate::check::test_device();
        let (m, n) = (7, 4099);
        let av: Vec<f32> = (0..m * n).map(|k| (k % 7) as f32).collect();
        let a = dev.upload(&av, &[m, n]).unwrap();
        let mut b = dev.alloc::<f32>(&[m]).unwrap();
        let want = reference_row_sum(&av, n);
        for cfg in row_sum::Config::ALL {
            b.poison().unwrap();
            row_sum::launch(&dev, cfg, &a, &mut b).unwrap();
            check::assert_close(&format!("row_sum[{cfg}]"), &b, &want, 0.0, 0.0, 0);
        }
    }

    #[test]
    fn the_bound_covers_every_config() {
        for cfg in row_sum::Config::ALL {
            let bn = cfg.BN();
            assert!(
                (BN_MIN..=BN_MAX).contains(&bn),
                "config {cfg}: BN outside BN_MIN..=BN_MAX"
            );
        }
    }
}
