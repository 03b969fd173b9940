//! # Chapter 03: outer add, a 2-D grid
//!
//! `C[i, j] = A[i] + B[j]` with `A` of length `M = 8192`, `B` of length `N = 4096` and
//! `C` of shape `[8192, 4096]`, all half precision. The output is 64 MiB while the inputs are
//! 24 KiB: the kernel reads almost nothing and writes a lot, so it is bound by write
//! bandwidth, and a good kernel streams `C` out in long contiguous rows.
//!
//! The natural decomposition is two-dimensional: a `grid` of `N.div_ceil(BN) × M.div_ceil(BM)`
//! blocks (x over columns, y over rows), block `(bx, by)` owning the `BM × BN` tile of `C` whose
//! corner is `(by·BM, bx·BN)`. Inside, a two-dimensional `parallel(BM, BN)` loop gives one
//! element to each (thread, step); consecutive `j` are consecutive addresses, so the writes of
//! neighbouring threads coalesce. Each element of `A` is reused `BN` times and each element of
//! `B` `BM` times within a tile, so the inputs come from cache after the first touch.
//!
//! Two variants show the two ways of handling tails (tiles that stick out past `M` or `N`):
//!
//! * **guarded**: every element access is guarded by `if r < M && col < N`. Explicit, and the
//!   only option when the kernel indexes tensors element by element.
//! * **staged**: the block copies its slices of `A` and `B` into shared buffers, builds the
//!   whole tile in a fragment, and writes it with one `copy`. `copy` reads zeros past the end
//!   and skips writes past the end, so no guard appears anywhere, and the GPU backend may
//!   store the tile with wide vector writes.
//!
//! Each config is a tile shape: wide-and-short tiles (`BN` large) give long contiguous rows.

use crate::check::{self, Case, Problem, Rng, Scale, Work};
use tilelang::prelude::*;

// ANCHOR: outer_add
/// `c[i, j] = a[i] + b[j]`, one guarded element per parallel iteration.
#[tile_kernel(
    grid = [N.div_ceil(BN), M.div_ceil(BM)],
    threads = THREADS,
    configs = [
        t32x256(BM = 32, BN = 256, THREADS = 256),
        t16x512(BM = 16, BN = 512, THREADS = 256),
        t64x128(BM = 64, BN = 128, THREADS = 128),
        t8x1024(BM = 8, BN = 1024, THREADS = 512),
    ],
    defaults = [gfx1100 = t32x256, gfx1151 = t8x1024, gfx1201 = t32x256, gfx90a = t32x256, gfx942 = t32x256, sm_90 = t8x1024, cpu = t16x512],
)]
pub fn outer_add<const BM: usize, const BN: usize, const THREADS: usize>(
    a: &Tensor<f16, (M,)>,
    b: &Tensor<f16, (N,)>,
    c: &mut Tensor<f16, (M, N)>,
) {
    let (bx, by) = (block_idx(0), block_idx(1));
    for (i, j) in parallel(BM, BN) {
        let r = by * BM + i;
        let col = bx * BN + j;
        if r < M && col < N {
            c[(r, col)] = a[r] + b[col];
        }
    }
}
// ANCHOR_END: outer_add

// ANCHOR: outer_add_staged
/// The same sum, with the inputs staged in shared buffers and the tile written by one `copy`.
#[tile_kernel(
    grid = [N.div_ceil(BN), M.div_ceil(BM)],
    threads = THREADS,
    configs = [
        t32x256(BM = 32, BN = 256, THREADS = 256),
        t16x512(BM = 16, BN = 512, THREADS = 256),
        t8x1024(BM = 8, BN = 1024, THREADS = 512),
    ],
    defaults = [gfx1100 = t32x256, gfx1151 = t8x1024, gfx1201 = t32x256, gfx90a = t32x256, gfx942 = t32x256, sm_90 = t8x1024, cpu = t16x512],
)]
pub fn outer_add_staged<const BM: usize, const BN: usize, const THREADS: usize>(
    a: &Tensor<f16, (M,)>,
    b: &Tensor<f16, (N,)>,
    c: &mut Tensor<f16, (M, N)>,
) {
    let (row, col) = (block_idx(1) * BM, block_idx(0) * BN);
    let mut a_s = alloc_shared::<f16, (BM,)>();
    let mut b_s = alloc_shared::<f16, (BN,)>();
    let mut c_f = alloc_fragment::<f16, (BM, BN)>();
    copy(a.at((row,)), &mut a_s);
    copy(b.at((col,)), &mut b_s);
    for (i, j) in parallel(BM, BN) {
        c_f[(i, j)] = a_s[i] + b_s[j];
    }
    copy(&c_f, c.at_mut((row, col)));
}
// ANCHOR_END: outer_add_staged

/// The float64 reference, row-major `[a.len(), b.len()]`.
pub fn reference_outer_add(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter()
        .flat_map(|x| b.iter().map(move |y| x + y))
        .collect()
}

// ANCHOR: tolerance
/// The f16 sum of two f16 values is the exact sum rounded once: at most half an ulp, 2^-11
/// relative (sums that land in the subnormal range are exact). We allow 2^-10, as chapter 02.
const RTOL: f64 = 1.0 / 1024.0;
const ATOL: f64 = 1e-6;
// ANCHOR_END: tolerance

pub fn run(dev: &Device, scale: Scale, seed: u64) -> tilelang::Result<Vec<Case>> {
    let (m, n) = match scale {
        Scale::Tutorial => (8192, 4096),
        // The CPU backend needs 5-10 s at the tutorial size (every f16 operation and copy
        // converts through f32/f64 in software); an eighth of the elements takes about 1 s.
        Scale::Reduced => (2048, 2048),
    };
    let mut rng = Rng::new(seed);
    let (av, bv) = (rng.vec::<f16>(m, -4.0, 4.0), rng.vec::<f16>(n, -4.0, 4.0));
    let want = reference_outer_add(&check::to_f64(&av), &check::to_f64(&bv));
    let a = dev.upload(&av, &[m])?;
    let b = dev.upload(&bv, &[n])?;
    let mut c = dev.alloc::<f16>(&[m, n])?;
    let p = Problem {
        chapter: "03",
        size: format!("M={m}, N={n}"),
        work: Work::Bytes(2.0 * (m + n + m * n) as f64),
        reps: check::reps_for(dev, (m * n) as f64),
        want: &want,
        atol: ATOL,
        rtol: RTOL,
    };
    let mut cases = p.sweep(dev, "guarded", &mut c, |cfg, c| {
        outer_add::launch(dev, cfg, &a, &b, c)
    })?;
    cases.extend(p.sweep(dev, "staged tiles", &mut c, |cfg, c| {
        outer_add_staged::launch(dev, cfg, &a, &b, c)
    })?);
    Ok(cases)
}

#[cfg(test)]
mod tests {
    use super::*;

    type Launch =
        fn(&Device, &str, &Tensor<f16>, &Tensor<f16>, &mut Tensor<f16>) -> tilelang::Result<()>;
    const KERNELS: [(&str, &[&str], Launch); 2] = [
        ("outer_add", outer_add::CONFIGS, outer_add::launch_named),
        (
            "outer_add_staged",
            outer_add_staged::CONFIGS,
            outer_add_staged::launch_named,
        ),
    ];

    #[test]
    fn every_config_matches_the_reference_with_tails() {
        let dev = crate::check::test_device();
        let seed = Rng::fresh_seed();
        // Odd sizes: no dimension is a multiple of any tile; (1, 1) and (3, 1029) stick out
        // of the tile in one direction only.
        for (m, n) in [(1, 1), (3, 1029), (77, 5), (131, 1031)] {
            let mut rng = Rng::new(seed ^ (m * 100_003 + n) as u64);
            let (av, bv) = (rng.vec::<f16>(m, -4.0, 4.0), rng.vec::<f16>(n, -4.0, 4.0));
            let want = reference_outer_add(&check::to_f64(&av), &check::to_f64(&bv));
            let a = dev.upload(&av, &[m]).unwrap();
            let b = dev.upload(&bv, &[n]).unwrap();
            let mut c = dev.alloc::<f16>(&[m, n]).unwrap();
            for (name, configs, launch) in KERNELS {
                for cfg in configs {
                    c.poison().unwrap();
                    launch(&dev, cfg, &a, &b, &mut c).unwrap();
                    check::assert_close(
                        &format!("{name}[{cfg}] {m}x{n}"),
                        &c,
                        &want,
                        ATOL,
                        RTOL,
                        seed,
                    );
                }
            }
        }
    }

    #[test]
    fn wrong_output_shape_is_refused_before_any_write() {
        let dev = crate::check::test_device();
        let a = dev.zeros::<f16>(&[10]).unwrap();
        let b = dev.zeros::<f16>(&[20]).unwrap();
        let mut c = dev.alloc::<f16>(&[20, 10]).unwrap();
        for (_, _, launch) in KERNELS {
            let err = launch(&dev, "t32x256", &a, &b, &mut c).unwrap_err();
            assert!(matches!(err, Error::ShapeMismatch { .. }), "{err}");
        }
        assert!(
            c.to_vec().unwrap().iter().all(|x| x.is_nan()),
            "nothing may be written"
        );
    }
}
