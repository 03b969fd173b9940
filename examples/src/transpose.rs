//! # Matrix transpose through a shared tile
//!
//! `y[j, i] = x[i, j]` for an f16 `x` of shape `[M, N]`: the layout change behind every
//! `.t().contiguous()`. Read row by row, a transposed write would hit `y` a column at a time;
//! staging a tile in shared memory lets both sides be row-wise:
//!
//! 1. `copy` the `BM × BN` tile of `x` at `(r0, c0)` into shared memory (rows of `x`);
//! 2. a `parallel` loop over the *output* tile `(BN, BM)` reads the shared tile transposed
//!    into a register fragment;
//! 3. `copy` the fragment to `y` at `(c0, r0)` (rows of `y`).
//!
//! Tails are free: the copy reads zeros past the edges of `x`, and the writes past the edges of
//! `y` are skipped. A copy is exact, so the check is bit for bit, on random finite f16 bit
//! patterns (every exponent, subnormals and ±0), as chapter 01's copies are.

use tilelang::prelude::*;

/// `y = xᵀ`.
#[tile_kernel(
    grid = [N.div_ceil(BN), M.div_ceil(BM)],
    threads = THREADS,
    configs = [
        t64x64(BM = 64, BN = 64, THREADS = 256),
        t32x32(BM = 32, BN = 32, THREADS = 128),
        t64x128(BM = 64, BN = 128, THREADS = 256),
        t128x64(BM = 128, BN = 64, THREADS = 256),
        t24x40(BM = 24, BN = 40, THREADS = 64),
    ],
    defaults = [sm_90 = t64x64, cpu = t64x64],
)]
pub fn transpose<const BM: usize, const BN: usize, const THREADS: usize>(
    x: &Tensor<f16, (M, N)>,
    y: &mut Tensor<f16, (N, M)>,
) {
    let (r0, c0) = (block_idx(1) * BM, block_idx(0) * BN);
    let mut s = alloc_shared::<f16, (BM, BN)>();
    let mut t = alloc_fragment::<f16, (BN, BM)>();
    copy(x.at((r0, c0)), &mut s);
    for (j, i) in parallel(BN, BM) {
        t[(j, i)] = s[(i, j)];
    }
    copy(&t, y.at_mut((c0, r0)));
}

/// [`transpose()`] with the shared tile 2 columns wider than the block's tile: what a CUDA
/// programmer tries next when a transposed read of shared memory conflicts in the banks
/// (`examples/README.md`, "What in the language got in the way"). In [`transpose()`]'s sm_90
/// code the threads of a warp read, at each step, 8 rows of the tile that are 8 apart in one
/// column pair: with rows of 64 halves (32 words) that is one bank, an 8-way conflict. Rows
/// of `BN + 2` halves (an odd number of words) spread those 8 rows over 4 banks (2-way). The
/// price: the copy, shaped like the tile, reads 2 more columns of `x` (the next block's, or
/// zeros past `N`), and a tile row that is not a whole number of 16-byte vectors makes the
/// global-to-shared copy move 2-byte elements instead of 16-byte vectors. (Padding by 8, which
/// keeps the vectors, keeps the conflict: 8 rows × a multiple of 4 words is 0 mod 32 banks.)
/// Benched beside [`transpose()`] to measure which cost is larger. Since 2026-12-05 neither:
/// the lowering swizzles the unpadded tile, and it drops the padding's columns here (no load
/// reaches them), so both kernels compile to the same code.
#[tile_kernel(
    grid = [N.div_ceil(BN), M.div_ceil(BM)],
    threads = THREADS,
    configs = [
        t64x64(BM = 64, BN = 64, THREADS = 256),
        t32x32(BM = 32, BN = 32, THREADS = 128),
        t64x128(BM = 64, BN = 128, THREADS = 256),
        t24x40(BM = 24, BN = 40, THREADS = 64),
    ],
    defaults = [sm_90 = t64x64, cpu = t64x64],
)]
pub fn transpose_padded<const BM: usize, const BN: usize, const THREADS: usize>(
    x: &Tensor<f16, (M, N)>,
    y: &mut Tensor<f16, (N, M)>,
) {
    let (r0, c0) = (block_idx(1) * BM, block_idx(0) * BN);
    let mut s = alloc_shared::<f16>((BM, BN + 2));
    let mut t = alloc_fragment::<f16, (BN, BM)>();
    copy(x.at((r0, c0)), &mut s);
    for (j, i) in parallel(BN, BM) {
        t[(j, i)] = s[(i, j)];
    }
    copy(&t, y.at_mut((c0, r0)));
}

/// The reference: `x` is `[m, n]` row-major; the result `[n, m]`.
pub fn reference<T: Copy>(x: &[T], m: usize, n: usize) -> Vec<T> {
    (0..n * m).map(|k| x[(k % m) * n + k / m]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels::ch01_copy::random_finite_f16;
    use kernels::check::{self, to_f64, Rng};

    #[test]
    fn every_config_is_exact_with_tails() {
        let dev = check::test_device();
        let seed = Rng::fresh_seed();
        // Below, at and past every tile edge (24, 32, 40, 64, 128), square and not.
        for (m, n) in [
            (1, 1),
            (1, 77),
            (77, 1),
            (23, 41),
            (64, 64),
            (65, 129),
            (130, 63),
            (200, 333),
        ] {
            let mut rng = Rng::new(seed ^ (m * 100_003 + n) as u64);
            let xv = random_finite_f16(&mut rng, m * n);
            let want = to_f64(&reference(&xv, m, n));
            let x = dev.upload(&xv, &[m, n]).unwrap();
            let mut y = dev.alloc::<f16>(&[n, m]).unwrap();
            let plain = transpose::Config::ALL.map(|c| (c.name(), false));
            let padded = transpose_padded::Config::ALL.map(|c| (c.name(), true));
            for (cfg, pad) in plain.into_iter().chain(padded) {
                y.poison().unwrap();
                if pad {
                    transpose_padded::launch_named(&dev, cfg, &x, &mut y).unwrap();
                } else {
                    transpose::launch_named(&dev, cfg, &x, &mut y).unwrap();
                }
                let cfg = if pad {
                    format!("padded {cfg}")
                } else {
                    cfg.to_string()
                };
                check::assert_close(
                    &format!("transpose[{cfg}] {m}x{n}"),
                    &y,
                    &want,
                    0.0,
                    0.0,
                    seed,
                );
                // Bit for bit: ±0 as they were.
                let got = y.to_vec().unwrap();
                let want_bits: Vec<u16> =
                    reference(&xv, m, n).iter().map(|v| v.to_bits()).collect();
                let got_bits: Vec<u16> = got.iter().map(|v| v.to_bits()).collect();
                assert!(
                    got_bits == want_bits,
                    "transpose[{cfg}] {m}x{n}: bits differ (TILELANG_SEED={seed})"
                );
            }
        }
    }

    #[test]
    fn the_output_must_be_n_by_m() {
        let dev = check::test_device();
        let x = dev.zeros::<f16>(&[3, 5]).unwrap();
        let mut y = dev.alloc::<f16>(&[3, 5]).unwrap();
        let err = transpose(&dev, &x, &mut y).unwrap_err();
        assert!(matches!(err, Error::ShapeMismatch { .. }), "{err}");
    }
}
