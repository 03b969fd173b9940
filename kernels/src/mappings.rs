//! Kernels that read one buffer under two thread mappings (not a chapter, not benchmarked).
//!
//! The GPU lowering keeps a buffer in registers when each thread only ever touches the
//! elements it holds, and lays it out for the loops that use it: a row broadcast (`m[i]` in a
//! loop over `(i, j)`), a column broadcast (`w[j]`), an owner-order loop over its own shape. A
//! buffer that two loops use in *different* ways needs two layouts at once, which no register
//! layout is; it must stay in shared memory. Issue 36 was such a kernel
//! (`cols_then_rows_shared`, found by random testing on an H100): a `(BN,)` shared tile read
//! as a column in a loop over `(BM, BN)` and as a row in a loop over `(BN, BM)` was held in the
//! column layout, and the second loop read each thread's column register where it needed its
//! row, silently, at every size. Each kernel here mixes two mappings of one buffer in one of
//! the ways the layout passes decide (`tilelang-codegen/src/lower/served.rs` states the rule
//! they now share); each is checked against float64 at odd sizes into poisoned outputs, on the
//! CPU backend, on the GPU (`TILELANG_TEST_DEVICE=gpu`) and, generated for every target, under
//! host emulation (`tests/emulation.rs`).
//!
//! All but `cols_then_rows_shared` write every tile they compute, so that a wrong element in
//! either loop shows.

use tilelang::prelude::*;

/// Issue 36's kernel as filed: `cv_t` read as a column broadcast (`cv_t[j]`, `j` the last
/// variable of a loop over `(BM, BN)`) and as a row broadcast (`cv_t[j]`, `j` the first
/// variable of a loop over `(BN, BM)`). `o[(n, m)] = cv[n]` for every row `m`.
#[tile_kernel(
    grid = [N.div_ceil(BN), M.div_ceil(BM)],
    threads = THREADS,
    configs = [c0(BM = 4, BN = 64, THREADS = 256), c1(BM = 4, BN = 40, THREADS = 32)],
)]
pub fn cols_then_rows_shared<const BM: usize, const BN: usize, const THREADS: usize>(
    a: &Tensor<f16, (M, N)>,
    cv: &Tensor<f32, (N,)>,
    o: &mut Tensor<f16, (N, M)>,
) {
    let row0 = block_idx(1) * BM;
    let col0 = block_idx(0) * BN;
    let mut a_t = alloc_shared::<f16, (BM, BN)>();
    let mut cv_t = alloc_shared::<f32, (BN,)>();
    let mut t_f = alloc_fragment::<f32, (BM, BN)>();
    let mut o_f = alloc_fragment::<f32, (BN, BM)>();
    copy(a.at((row0, col0)), &mut a_t);
    copy(cv.at((col0,)), &mut cv_t);
    for (i, j) in parallel(BM, BN) {
        t_f[(i, j)] = (a_t[(i, j)] as f32) + cv_t[j];
    }
    for (j, i) in parallel(BN, BM) {
        o_f[(j, i)] = cv_t[j];
    }
    copy(&o_f, o.at_mut((col0, row0)));
}

/// The same two mappings of a column *fragment*: `t = a + cv[j]`, `o[(n, m)] = 2·cv[n]`.
/// `t8x64` gives the `(BM, BN)` tile a chunked layout (whole 8-element chunks per thread), the
/// others a strided one.
#[tile_kernel(
    grid = [N.div_ceil(BN), M.div_ceil(BM)],
    threads = THREADS,
    configs = [
        t4x16(BM = 4, BN = 16, THREADS = 64),
        t8x64(BM = 8, BN = 64, THREADS = 64),
        t3x40(BM = 3, BN = 40, THREADS = 32),
    ],
)]
pub fn cols_then_rows_fragment<const BM: usize, const BN: usize, const THREADS: usize>(
    a: &Tensor<f16, (M, N)>,
    cv: &Tensor<f16, (N,)>,
    t: &mut Tensor<f16, (M, N)>,
    o: &mut Tensor<f16, (N, M)>,
) {
    let (row0, col0) = (block_idx(1) * BM, block_idx(0) * BN);
    let mut a_f = alloc_fragment::<f32, (BM, BN)>();
    let mut cv_t = alloc_fragment::<f16, (BN,)>();
    let mut o_f = alloc_fragment::<f32, (BN, BM)>();
    copy(a.at((row0, col0)), &mut a_f);
    copy(cv.at((col0,)), &mut cv_t);
    for (i, j) in parallel(BM, BN) {
        a_f[(i, j)] = a_f[(i, j)] + (cv_t[j] as f32);
    }
    for (j, i) in parallel(BN, BM) {
        o_f[(j, i)] = (cv_t[j] as f32) * 2.0;
    }
    copy(&a_f, t.at_mut((row0, col0)));
    copy(&o_f, o.at_mut((col0, row0)));
}

/// The mirror image: a row maximum (`m`, in the row layout its reduction gives) read as a row
/// broadcast (`y = x − m[i]`) and as a column broadcast (`z[(n, r)] = m[r]`, `i` the last
/// variable of a loop over `(BN, BM)`). `m` is the maximum over the block's `BN` columns of
/// the row, columns past `N` reading 0 (the copy's tail).
#[tile_kernel(
    grid = [N.div_ceil(BN), M.div_ceil(BM)],
    threads = THREADS,
    configs = [
        t4x64(BM = 4, BN = 64, THREADS = 64),
        t8x128(BM = 8, BN = 128, THREADS = 128),
        t2x32(BM = 2, BN = 32, THREADS = 32),
    ],
)]
pub fn rows_then_cols<const BM: usize, const BN: usize, const THREADS: usize>(
    x: &Tensor<f32, (M, N)>,
    y: &mut Tensor<f32, (M, N)>,
    z: &mut Tensor<f32, (N, M)>,
) {
    let (row0, col0) = (block_idx(1) * BM, block_idx(0) * BN);
    let mut x_f = alloc_fragment::<f32, (BM, BN)>();
    let mut m = alloc_fragment::<f32, (BM,)>();
    let mut z_f = alloc_fragment::<f32, (BN, BM)>();
    copy(x.at((row0, col0)), &mut x_f);
    reduce_max(&x_f, &mut m, 1);
    for (i, j) in parallel(BM, BN) {
        x_f[(i, j)] = x_f[(i, j)] - m[i];
    }
    for (j, i) in parallel(BN, BM) {
        z_f[(j, i)] = m[i];
    }
    copy(&x_f, y.at_mut((row0, col0)));
    copy(&z_f, z.at_mut((col0, row0)));
}

/// A shared tile read in owner order (`t = 2·a`) and transposed (`o = aᵀ`): the second read
/// crosses threads, so the tile cannot be held in registers.
#[tile_kernel(
    grid = [N.div_ceil(BN), M.div_ceil(BM)],
    threads = THREADS,
    configs = [t16x64(BM = 16, BN = 64, THREADS = 128), t5x24(BM = 5, BN = 24, THREADS = 32)],
)]
pub fn owned_then_transposed<const BM: usize, const BN: usize, const THREADS: usize>(
    a: &Tensor<f16, (M, N)>,
    t: &mut Tensor<f16, (M, N)>,
    o: &mut Tensor<f16, (N, M)>,
) {
    let (row0, col0) = (block_idx(1) * BM, block_idx(0) * BN);
    let mut a_s = alloc_shared::<f16, (BM, BN)>();
    let mut t_f = alloc_fragment::<f16, (BM, BN)>();
    let mut o_f = alloc_fragment::<f16, (BN, BM)>();
    copy(a.at((row0, col0)), &mut a_s);
    for (i, j) in parallel(BM, BN) {
        t_f[(i, j)] = a_s[(i, j)] * 2.0;
    }
    for (j, i) in parallel(BN, BM) {
        o_f[(j, i)] = a_s[(i, j)];
    }
    copy(&t_f, t.at_mut((row0, col0)));
    copy(&o_f, o.at_mut((col0, row0)));
}

/// A row maximum read as a row broadcast by loops over two tiles in different layouts: the
/// `(BM, BN)` tile chunked (copied from f16, whole chunks per thread), the `(BM, R)` tile
/// strided. `y = x − m[i]`, `w[(r, k)] = m[r] · (k + 1)`.
#[tile_kernel(
    grid = [N.div_ceil(BN), M.div_ceil(BM)],
    threads = THREADS,
    configs = [
        t8x64(BM = 8, BN = 64, R = 3, THREADS = 64),
        t4x32(BM = 4, BN = 32, R = 3, THREADS = 32),
    ],
)]
pub fn rows_two_layouts<const BM: usize, const BN: usize, const R: usize, const THREADS: usize>(
    x: &Tensor<f16, (M, N)>,
    y: &mut Tensor<f32, (M, N)>,
    w: &mut Tensor<f32, (M, R)>,
) {
    let (row0, col0) = (block_idx(1) * BM, block_idx(0) * BN);
    let mut x_f = alloc_fragment::<f32, (BM, BN)>();
    let mut m = alloc_fragment::<f32, (BM,)>();
    let mut w_f = alloc_fragment::<f32, (BM, R)>();
    copy(x.at((row0, col0)), &mut x_f);
    reduce_max(&x_f, &mut m, 1);
    for (i, j) in parallel(BM, BN) {
        x_f[(i, j)] = x_f[(i, j)] - m[i];
    }
    for (i, k) in parallel(BM, R) {
        w_f[(i, k)] = m[i] * ((k + 1) as f32);
    }
    copy(&x_f, y.at_mut((row0, col0)));
    if block_idx(0) == 0 {
        copy(&w_f, w.at_mut((row0, 0)));
    }
}

/// A column fragment read as a column broadcast by loops over two tiles in different layouts:
/// `(BM, BN)` chunked, `(3, BN)` strided. `t = a · v[j]`, `q[(k, n)] = v[n] + k`.
#[tile_kernel(
    grid = [N.div_ceil(BN), M.div_ceil(BM)],
    threads = THREADS,
    configs = [
        t8x64(BM = 8, BN = 64, R = 3, THREADS = 64),
        t4x40(BM = 4, BN = 40, R = 3, THREADS = 32),
    ],
)]
pub fn cols_two_layouts<const BM: usize, const BN: usize, const R: usize, const THREADS: usize>(
    a: &Tensor<f16, (M, N)>,
    v: &Tensor<f16, (N,)>,
    t: &mut Tensor<f32, (M, N)>,
    q: &mut Tensor<f32, (R, N)>,
) {
    let (row0, col0) = (block_idx(1) * BM, block_idx(0) * BN);
    let mut a_f = alloc_fragment::<f32, (BM, BN)>();
    let mut v_f = alloc_fragment::<f16, (BN,)>();
    let mut q_f = alloc_fragment::<f32, (R, BN)>();
    copy(a.at((row0, col0)), &mut a_f);
    copy(v.at((col0,)), &mut v_f);
    for (i, j) in parallel(BM, BN) {
        a_f[(i, j)] = a_f[(i, j)] * (v_f[j] as f32);
    }
    for (k, j) in parallel(R, BN) {
        q_f[(k, j)] = (v_f[j] as f32) + (k as f32);
    }
    copy(&a_f, t.at_mut((row0, col0)));
    if block_idx(1) == 0 {
        copy(&q_f, q.at_mut((0, col0)));
    }
}

/// A reduction carried across a loop (deferred: one running maximum per row) whose result is
/// then read as a column broadcast: `mx[r] = max_n x[(r, n)]`, `z[(k, r)] = mx[r] + k`.
#[tile_kernel(
    grid = [M.div_ceil(BM)],
    threads = THREADS,
    configs = [
        t4x128(BM = 4, BN = 128, R = 2, THREADS = 128),
        t2x64(BM = 2, BN = 64, R = 2, THREADS = 32),
    ],
)]
pub fn deferred_then_cols<
    const BM: usize,
    const BN: usize,
    const R: usize,
    const THREADS: usize,
>(
    x: &Tensor<f32, (M, N)>,
    mx: &mut Tensor<f32, (M,)>,
    z: &mut Tensor<f32, (R, M)>,
) {
    let row0 = block_idx(0) * BM;
    let mut tile = alloc_fragment::<f32, (BM, BN)>();
    let mut part = alloc_fragment::<f32, (BM,)>();
    let mut acc = alloc_fragment::<f32, (BM,)>();
    let mut z_f = alloc_fragment::<f32, (R, BM)>();
    fill(&mut acc, f32::NEG_INFINITY);
    for t in serial(N.div_ceil(BN)) {
        copy(x.at((row0, t * BN)), &mut tile);
        for (i, j) in parallel(BM, BN) {
            tile[(i, j)] = if_then_else(t * BN + j < N, tile[(i, j)], f32::NEG_INFINITY);
        }
        reduce_max(&tile, &mut part, 1);
        for i in parallel(BM) {
            acc[i] = max(acc[i], part[i]);
        }
    }
    for (k, i) in parallel(R, BM) {
        z_f[(k, i)] = acc[i] + (k as f32);
    }
    copy(&acc, mx.at_mut((row0,)));
    copy(&z_f, z.at_mut((0, row0)));
}

/// A `gemm` accumulator's rows (issue 39): per tile of `BN` columns of `S = A·B`, the row
/// maxima broadcast back (`o = S − max/2`, through a loop over the maxima alone), and, carried
/// across the tiles, each row's maximum and sum. On a matrix unit the accumulator's layout is
/// the instruction's, and its rows are laid out from it (`Layout::AccRows`): `w1` gives each
/// wave whole rows, `w4` spreads a row over several waves (on mma.sync 4, an exchange through
/// shared memory); on sm_90a `w1` runs on wgmma. The running maximum and sum are deferred
/// reductions (one fold a tile, finished after the loop). Columns past `N` hold 0 (the copy of
/// `b` reads zeros there) and count in the tile's maximum, as in [`tests`]' reference.
#[tile_kernel(
    grid = [M.div_ceil(BM)],
    threads = THREADS,
    configs = [
        w1(BM = 64, BN = 64, BK = 32, THREADS = 128),
        w4(BM = 32, BN = 64, BK = 32, THREADS = 256),
    ],
)]
pub fn acc_rows<const BM: usize, const BN: usize, const BK: usize, const THREADS: usize>(
    a: &Tensor<f16, (M, BK)>,
    b: &Tensor<f16, (BK, N)>,
    o: &mut Tensor<f32, (M, N)>,
    rmax: &mut Tensor<f32, (M,)>,
    rsum: &mut Tensor<f32, (M,)>,
) {
    let row0 = block_idx(0) * BM;
    let mut a_s = alloc_shared::<f16, (BM, BK)>();
    let mut b_s = alloc_shared::<f16, (BK, BN)>();
    let mut s = alloc_fragment::<f32, (BM, BN)>();
    let mut bm = alloc_fragment::<f32, (BM,)>();
    let mut part = alloc_fragment::<f32, (BM,)>();
    let mut mx = alloc_fragment::<f32, (BM,)>();
    let mut tot = alloc_fragment::<f32, (BM,)>();
    copy(a.at((row0, 0)), &mut a_s);
    fill(&mut mx, f32::NEG_INFINITY);
    clear(&mut tot);
    for t in serial(N.div_ceil(BN)) {
        copy(b.at((0, t * BN)), &mut b_s);
        clear(&mut s);
        gemm(&a_s, &b_s, &mut s);
        reduce_max(&s, &mut part, 1);
        for i in parallel(BM) {
            mx[i] = max(mx[i], part[i]);
        }
        reduce_sum(&s, &mut part, 1);
        for i in parallel(BM) {
            tot[i] += part[i];
        }
        reduce_max(&s, &mut bm, 1);
        for i in parallel(BM) {
            bm[i] = bm[i] * 0.5;
        }
        for (i, j) in parallel(BM, BN) {
            s[(i, j)] = s[(i, j)] - bm[i];
        }
        copy(&s, o.at_mut((row0, t * BN)));
    }
    copy(&mx, rmax.at_mut((row0,)));
    copy(&tot, rsum.at_mut((row0,)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{self, assert_close, to_f64, Rng};

    /// Odd sizes: no dimension a multiple of any config's tile, and a single element.
    const SIZES: &[(usize, usize)] = &[(1, 1), (127, 88), (65, 202), (37, 131)];

    /// f16 results of f32 arithmetic on f16 inputs: one f16 rounding (2^-11 relative) after
    /// at most one f32 rounding. A wrong element is off by the inputs' size, order 1.
    const F16_ATOL: f64 = 1.0 / 16_777_216.0;
    const F16_RTOL: f64 = 1.0 / 1024.0;

    fn transpose(x: &[f64], m: usize, n: usize) -> Vec<f64> {
        (0..n * m).map(|i| x[(i % m) * n + i / m]).collect()
    }

    /// `(n, bn)` blocks of `bn` columns: the maximum over each row's block, columns past `n`
    /// counting as 0 (what a copy reads there), for every column.
    fn block_max(x: &[f32], m: usize, n: usize, bn: usize) -> Vec<f32> {
        let mut out = vec![0.0; m * n];
        for r in 0..m {
            for c0 in (0..n).step_by(bn) {
                let mut mx = if c0 + bn > n {
                    0.0f32
                } else {
                    f32::NEG_INFINITY
                };
                for c in c0..(c0 + bn).min(n) {
                    mx = mx.max(x[r * n + c]);
                }
                for c in c0..(c0 + bn).min(n) {
                    out[r * n + c] = mx;
                }
            }
        }
        out
    }

    #[test]
    fn cols_then_rows_shared_matches_the_reference() {
        let dev = check::test_device();
        let seed = Rng::fresh_seed();
        for &(m, n) in SIZES {
            let mut rng = Rng::new(seed ^ (m * 7919 + n) as u64);
            let a = dev
                .upload(&rng.vec::<f16>(m * n, -1.0, 1.0), &[m, n])
                .unwrap();
            let cvh: Vec<f32> = rng.vec(n, -2.0, 2.0);
            let cv = dev.upload(&cvh, &[n]).unwrap();
            let want: Vec<f64> = (0..n * m).map(|i| f64::from(cvh[i / m])).collect();
            let mut o = dev.alloc::<f16>(&[n, m]).unwrap();
            for cfg in cols_then_rows_shared::Config::ALL {
                o.poison().unwrap();
                cols_then_rows_shared::launch(&dev, cfg, &a, &cv, &mut o).unwrap();
                let what = format!("cols_then_rows_shared[{cfg}] {m}x{n} o");
                assert_close(&what, &o, &want, F16_ATOL, F16_RTOL, seed);
            }
        }
    }

    #[test]
    fn cols_then_rows_fragment_matches_the_reference() {
        let dev = check::test_device();
        let seed = Rng::fresh_seed();
        for &(m, n) in SIZES {
            let mut rng = Rng::new(seed ^ (m * 7919 + n) as u64);
            let ah: Vec<f16> = rng.vec(m * n, -1.0, 1.0);
            let cvh: Vec<f16> = rng.vec(n, -2.0, 2.0);
            let (af, cf) = (to_f64(&ah), to_f64(&cvh));
            let want_t: Vec<f64> = (0..m * n).map(|i| af[i] + cf[i % n]).collect();
            let want_o: Vec<f64> = (0..n * m).map(|i| 2.0 * cf[i / m]).collect();
            let a = dev.upload(&ah, &[m, n]).unwrap();
            let cv = dev.upload(&cvh, &[n]).unwrap();
            let mut t = dev.alloc::<f16>(&[m, n]).unwrap();
            let mut o = dev.alloc::<f16>(&[n, m]).unwrap();
            for cfg in cols_then_rows_fragment::Config::ALL {
                t.poison().unwrap();
                o.poison().unwrap();
                cols_then_rows_fragment::launch(&dev, cfg, &a, &cv, &mut t, &mut o).unwrap();
                let what = format!("cols_then_rows_fragment[{cfg}] {m}x{n}");
                assert_close(&format!("{what} t"), &t, &want_t, F16_ATOL, F16_RTOL, seed);
                assert_close(&format!("{what} o"), &o, &want_o, F16_ATOL, F16_RTOL, seed);
            }
        }
    }

    #[test]
    fn rows_then_cols_matches_the_reference() {
        let dev = check::test_device();
        let seed = Rng::fresh_seed();
        for &(m, n) in SIZES {
            let mut rng = Rng::new(seed ^ (m * 7919 + n) as u64);
            let xh: Vec<f32> = rng.vec(m * n, -3.0, 1.0);
            let x = dev.upload(&xh, &[m, n]).unwrap();
            let mut y = dev.alloc::<f32>(&[m, n]).unwrap();
            let mut z = dev.alloc::<f32>(&[n, m]).unwrap();
            for cfg in rows_then_cols::Config::ALL {
                let bn = rows_then_cols::KERNEL
                    .config(cfg.name())
                    .unwrap()
                    .value("BN")
                    .unwrap();
                let mx = block_max(&xh, m, n, bn);
                // `x − m` rounds once in f32, as the kernel does.
                let want_y: Vec<f64> = (0..m * n).map(|i| f64::from(xh[i] - mx[i])).collect();
                let want_z = transpose(&to_f64(&mx), m, n);
                y.poison().unwrap();
                z.poison().unwrap();
                rows_then_cols::launch(&dev, cfg, &x, &mut y, &mut z).unwrap();
                let what = format!("rows_then_cols[{cfg}] {m}x{n}");
                assert_close(&format!("{what} y"), &y, &want_y, 0.0, 0.0, seed);
                assert_close(&format!("{what} z"), &z, &want_z, 0.0, 0.0, seed);
            }
        }
    }

    #[test]
    fn owned_then_transposed_matches_the_reference() {
        let dev = check::test_device();
        let seed = Rng::fresh_seed();
        for &(m, n) in SIZES {
            let mut rng = Rng::new(seed ^ (m * 7919 + n) as u64);
            let ah: Vec<f16> = rng.vec(m * n, -1.0, 1.0);
            let af = to_f64(&ah);
            let want_t: Vec<f64> = af.iter().map(|v| 2.0 * v).collect();
            let want_o = transpose(&af, m, n);
            let a = dev.upload(&ah, &[m, n]).unwrap();
            let mut t = dev.alloc::<f16>(&[m, n]).unwrap();
            let mut o = dev.alloc::<f16>(&[n, m]).unwrap();
            for cfg in owned_then_transposed::Config::ALL {
                t.poison().unwrap();
                o.poison().unwrap();
                owned_then_transposed::launch(&dev, cfg, &a, &mut t, &mut o).unwrap();
                let what = format!("owned_then_transposed[{cfg}] {m}x{n}");
                assert_close(&format!("{what} t"), &t, &want_t, 0.0, 0.0, seed);
                assert_close(&format!("{what} o"), &o, &want_o, 0.0, 0.0, seed);
            }
        }
    }

    #[test]
    fn rows_two_layouts_matches_the_reference() {
        let dev = check::test_device();
        let seed = Rng::fresh_seed();
        for &(m, n) in SIZES {
            let mut rng = Rng::new(seed ^ (m * 7919 + n) as u64);
            let xh: Vec<f16> = rng.vec(m * n, -3.0, 1.0);
            let xf: Vec<f32> = xh.iter().map(|v| v.to_f32()).collect();
            let x = dev.upload(&xh, &[m, n]).unwrap();
            let mut y = dev.alloc::<f32>(&[m, n]).unwrap();
            let mut w = dev.alloc::<f32>(&[m, 3]).unwrap();
            for cfg in rows_two_layouts::Config::ALL {
                let bn = rows_two_layouts::KERNEL
                    .config(cfg.name())
                    .unwrap()
                    .value("BN")
                    .unwrap();
                let mx = block_max(&xf, m, n, bn);
                let want_y: Vec<f64> = (0..m * n).map(|i| f64::from(xf[i] - mx[i])).collect();
                // The first block of columns' maxima.
                let want_w: Vec<f64> = (0..m * 3)
                    .map(|i| f64::from(mx[(i / 3) * n] * (i % 3 + 1) as f32))
                    .collect();
                y.poison().unwrap();
                w.poison().unwrap();
                rows_two_layouts::launch(&dev, cfg, &x, &mut y, &mut w).unwrap();
                let what = format!("rows_two_layouts[{cfg}] {m}x{n}");
                assert_close(&format!("{what} y"), &y, &want_y, 0.0, 0.0, seed);
                assert_close(&format!("{what} w"), &w, &want_w, 0.0, 0.0, seed);
            }
        }
    }

    #[test]
    fn cols_two_layouts_matches_the_reference() {
        let dev = check::test_device();
        let seed = Rng::fresh_seed();
        for &(m, n) in SIZES {
            let mut rng = Rng::new(seed ^ (m * 7919 + n) as u64);
            let ah: Vec<f16> = rng.vec(m * n, -1.0, 1.0);
            let vh: Vec<f16> = rng.vec(n, -2.0, 2.0);
            let (af, vf) = (to_f64(&ah), to_f64(&vh));
            // Products of two f16 values are exact in f32.
            let want_t: Vec<f64> = (0..m * n).map(|i| af[i] * vf[i % n]).collect();
            let want_q: Vec<f64> = (0..3 * n)
                .map(|i| f64::from(vh[i % n].to_f32() + (i / n) as f32))
                .collect();
            let a = dev.upload(&ah, &[m, n]).unwrap();
            let v = dev.upload(&vh, &[n]).unwrap();
            let mut t = dev.alloc::<f32>(&[m, n]).unwrap();
            let mut q = dev.alloc::<f32>(&[3, n]).unwrap();
            for cfg in cols_two_layouts::Config::ALL {
                t.poison().unwrap();
                q.poison().unwrap();
                cols_two_layouts::launch(&dev, cfg, &a, &v, &mut t, &mut q).unwrap();
                let what = format!("cols_two_layouts[{cfg}] {m}x{n}");
                assert_close(&format!("{what} t"), &t, &want_t, 0.0, 0.0, seed);
                assert_close(&format!("{what} q"), &q, &want_q, 0.0, 0.0, seed);
            }
        }
    }

    /// Exact: the inputs are multiples of 1/4 in [-2, 2], so every product is a multiple of
    /// 1/16 of at most 4 and every sum here (at most 32 products, then at most 202 of those)
    /// is exact in f32 in any order.
    #[test]
    fn acc_rows_matches_the_reference() {
        let dev = check::test_device();
        let seed = Rng::fresh_seed();
        const BK: usize = 32;
        for &(m, n) in SIZES {
            let mut rng = Rng::new(seed ^ (m * 7919 + n) as u64);
            let quarters = |rng: &mut Rng, len: usize| -> Vec<f16> {
                rng.vec::<f64>(len, -2.0, 2.0)
                    .iter()
                    .map(|x| f16::from_f64((x * 4.0).round() / 4.0))
                    .collect()
            };
            let (ah, bh) = (quarters(&mut rng, m * BK), quarters(&mut rng, BK * n));
            let (af, bf) = (to_f64(&ah), to_f64(&bh));
            let prod: Vec<f64> = (0..m * n)
                .map(|e| {
                    (0..BK)
                        .map(|k| af[e / n * BK + k] * bf[k * n + e % n])
                        .sum()
                })
                .collect();
            let a = dev.upload(&ah, &[m, BK]).unwrap();
            let b = dev.upload(&bh, &[BK, n]).unwrap();
            let mut o = dev.alloc::<f32>(&[m, n]).unwrap();
            let mut rmax = dev.alloc::<f32>(&[m]).unwrap();
            let mut rsum = dev.alloc::<f32>(&[m]).unwrap();
            for cfg in acc_rows::Config::ALL {
                let bn = 64;
                // Per tile of `bn` columns, the maximum with the columns past `n` as 0.
                let tile_max = |r: usize, c0: usize| {
                    let tail = if c0 + bn > n { 0.0 } else { f64::NEG_INFINITY };
                    (c0..(c0 + bn).min(n)).fold(tail, |x, c| x.max(prod[r * n + c]))
                };
                let want_o: Vec<f64> = (0..m * n)
                    .map(|e| prod[e] - 0.5 * tile_max(e / n, e % n / bn * bn))
                    .collect();
                let want_max: Vec<f64> = (0..m)
                    .map(|r| {
                        (0..n)
                            .step_by(bn)
                            .map(|c0| tile_max(r, c0))
                            .fold(f64::NEG_INFINITY, f64::max)
                    })
                    .collect();
                let want_sum: Vec<f64> = (0..m)
                    .map(|r| prod[r * n..(r + 1) * n].iter().sum())
                    .collect();
                for t in [&mut o, &mut rmax, &mut rsum] {
                    t.poison().unwrap();
                }
                acc_rows::launch(&dev, cfg, &a, &b, &mut o, &mut rmax, &mut rsum).unwrap();
                let what = format!("acc_rows[{cfg}] {m}x{n}");
                assert_close(&format!("{what} o"), &o, &want_o, 0.0, 0.0, seed);
                assert_close(&format!("{what} rmax"), &rmax, &want_max, 0.0, 0.0, seed);
                assert_close(&format!("{what} rsum"), &rsum, &want_sum, 0.0, 0.0, seed);
            }
        }
    }

    #[test]
    fn deferred_then_cols_matches_the_reference() {
        let dev = check::test_device();
        let seed = Rng::fresh_seed();
        for &(m, n) in SIZES {
            let mut rng = Rng::new(seed ^ (m * 7919 + n) as u64);
            let xh: Vec<f32> = rng.vec(m * n, -3.0, 1.0);
            let rowmax: Vec<f32> = (0..m)
                .map(|r| {
                    xh[r * n..(r + 1) * n]
                        .iter()
                        .fold(f32::NEG_INFINITY, |a, &b| a.max(b))
                })
                .collect();
            let want_mx: Vec<f64> = rowmax.iter().map(|&v| f64::from(v)).collect();
            let want_z: Vec<f64> = (0..2 * m)
                .map(|i| f64::from(rowmax[i % m] + (i / m) as f32))
                .collect();
            let x = dev.upload(&xh, &[m, n]).unwrap();
            let mut mx = dev.alloc::<f32>(&[m]).unwrap();
            let mut z = dev.alloc::<f32>(&[2, m]).unwrap();
            for cfg in deferred_then_cols::Config::ALL {
                mx.poison().unwrap();
                z.poison().unwrap();
                deferred_then_cols::launch(&dev, cfg, &x, &mut mx, &mut z).unwrap();
                let what = format!("deferred_then_cols[{cfg}] {m}x{n}");
                assert_close(&format!("{what} mx"), &mx, &want_mx, 0.0, 0.0, seed);
                assert_close(&format!("{what} z"), &z, &want_z, 0.0, 0.0, seed);
            }
        }
    }
}
