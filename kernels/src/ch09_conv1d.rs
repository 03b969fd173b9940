//! # Chapter 09: 1-D convolution with "same" padding
//!
//! A width-7 cross-correlation (what deep-learning frameworks call a convolution) along the
//! rows of a batch, padded with 3 zeros on each side so the output is as long as the input:
//!
//! * **single** filter: `X [64, 1024]`, `W [7]` → `O [64, 1024]`,
//!   `O[n, l] = Σ_t X[n, l + t − 3]·W[t]`;
//! * **multi** filter (one input channel, `F` output channels, channel-last output):
//!   `X [16, 256]`, `W [7, 32]` → `O [16, 256, 32]`, `O[n, l, f] = Σ_t X[n, l + t − 3]·W[t, f]`.
//!
//! All tensors are f16; products are summed in f32 and the result rounded to f16 once.
//!
//! Each output needs 7 neighbouring inputs, and each input feeds 7 outputs (times `F` for the
//! multi version), so a block first stages an input **window** in shared memory: for outputs
//! `l0 .. l0 + BL` it needs inputs `l0 − 3 .. l0 + BL + 3`, a `(rows, BL + 6)` tile copied from
//! `X.at((row, l0 − 3))`. The padding comes for free: a `copy` from global memory reads zeros
//! outside the tensor, which is exactly the zero padding at both ends of every row (and at
//! the tail of the last block). The 7 weights (a `(7, BF)` tile of them for the multi
//! version) go to shared memory as f32. Then a `parallel` loop over the block's outputs runs
//! a serial 7-tap dot product out of shared memory into an f32 fragment, which one `copy`
//! rounds to f16 and writes back, skipping whatever lies past the end of `O`.
//!
//! Both problems are tiny (about 0.25 MiB of traffic each, 0.9 and 1.8 MFLOP): on a GPU they
//! are launch-bound, so the point is a single pass that reads each input once and writes each
//! output once. (The multi-filter version could also be written as a GEMM of an im2col tile
//! `(BL, 7)` with `W`, but a 7-deep reduction is too shallow to pay for tensor cores.)
//!
//! The kernel width is part of the tile shapes (`BL + 6`), so the kernels require `KW == 7`;
//! any other width is refused at launch with [`Error::Requirement`].

use crate::check::{self, Case, Problem, Rng, Scale, Work};
use tilelang::prelude::*;

// ANCHOR: conv1d_single
/// Single filter: each block computes `BR` rows × `BL` positions of `O`.
#[tile_kernel(
    grid = [L.div_ceil(BL), N.div_ceil(BR)],
    threads = THREADS,
    configs = [
        r1l256(BR = 1, BL = 256, THREADS = 256),
        r4l256(BR = 4, BL = 256, THREADS = 256),
        r2l512(BR = 2, BL = 512, THREADS = 256),
        r3l32(BR = 3, BL = 32, THREADS = 32),
    ],
    defaults = [gfx1100 = r4l256, gfx1151 = r1l256, gfx1201 = r4l256, gfx90a = r4l256, gfx942 = r4l256, sm_90 = r1l256, cpu = r2l512],
    requires = [KW == 7],
)]
pub fn conv1d_single<const BR: usize, const BL: usize, const THREADS: usize>(
    x: &Tensor<f16, (N, L)>,
    w: &Tensor<f16, (KW,)>,
    o: &mut Tensor<f16, (N, L)>,
) {
    let (r0, l0) = (block_idx(1) * BR, block_idx(0) * BL);
    let mut x_s = alloc_shared::<f16>((BR, BL + 6));
    let mut w_s = alloc_shared::<f32>((7,));
    let mut o_f = alloc_fragment::<f32, (BR, BL)>();
    // The window starts 3 before the block's first output; reads before 0 or past L are zero.
    copy(x.at((r0, l0 - 3)), &mut x_s);
    copy(w.at((0,)), &mut w_s);
    for (r, j) in parallel(BR, BL) {
        let mut acc = 0.0f32;
        for t in serial(7) {
            acc += (x_s[(r, j + t)] as f32) * w_s[t];
        }
        o_f[(r, j)] = acc;
    }
    copy(&o_f, o.at_mut((r0, l0)));
}
// ANCHOR_END: conv1d_single

// ANCHOR: conv1d_multi
/// Multi filter: each block computes one row `n`, `BL` positions × `BF` filters of `O`.
#[tile_kernel(
    grid = [F.div_ceil(BF), L.div_ceil(BL), N],
    threads = THREADS,
    configs = [
        l64f32(BL = 64, BF = 32, THREADS = 256),
        l128f32(BL = 128, BF = 32, THREADS = 256),
        l256f32(BL = 256, BF = 32, THREADS = 256),
        l128f32w4(BL = 128, BF = 32, THREADS = 128),
        l16f8(BL = 16, BF = 8, THREADS = 64),
    ],
    defaults = [gfx1100 = l64f32, gfx1201 = l64f32, sm_90 = l64f32, cpu = l256f32],
    requires = [KW == 7],
)]
pub fn conv1d_multi<const BL: usize, const BF: usize, const THREADS: usize>(
    x: &Tensor<f16, (N, L)>,
    w: &Tensor<f16, (KW, F)>,
    o: &mut Tensor<f16, (N, L, F)>,
) {
    let (f0, l0, n) = (block_idx(0) * BF, block_idx(1) * BL, block_idx(2));
    let mut x_s = alloc_shared::<f16>((1, BL + 6));
    let mut w_s = alloc_shared::<f32>((7, BF));
    let mut o_f = alloc_fragment::<f32>((1, BL, BF));
    copy(x.at((n, l0 - 3)), &mut x_s);
    copy(w.at((0, f0)), &mut w_s);
    // A 3-D loop over exactly `o_f`'s shape, so each thread owns its outputs (registers).
    for (r, j, f) in parallel(1, BL, BF) {
        let mut acc = 0.0f32;
        for t in serial(7) {
            acc += (x_s[(r, j + t)] as f32) * w_s[(t, f)];
        }
        o_f[(r, j, f)] = acc;
    }
    copy(&o_f, o.at_mut((n, l0, f0)));
}
// ANCHOR_END: conv1d_multi

/// The float64 references: `x` is `n×l`, `w` is `kw` taps (× `f` filters for multi,
/// row-major `[kw, f]`), padding `kw / 2` zeros each side.
pub fn reference_single(x: &[f64], w: &[f64], n: usize, l: usize) -> Vec<f64> {
    reference_multi(x, w, n, l, 1)
}
pub fn reference_multi(x: &[f64], w: &[f64], n: usize, l: usize, f: usize) -> Vec<f64> {
    let kw = w.len() / f.max(1);
    let pad = (kw / 2) as isize;
    let mut o = vec![0.0; n * l * f];
    for r in 0..n {
        for p in 0..l {
            for t in 0..kw {
                let q = p as isize + t as isize - pad;
                if q < 0 || q >= l as isize {
                    continue;
                }
                let xv = x[r * l + q as usize];
                for (ov, wv) in o[(r * l + p) * f..(r * l + p + 1) * f]
                    .iter_mut()
                    .zip(&w[t * f..(t + 1) * f])
                {
                    *ov += xv * wv;
                }
            }
        }
    }
    o
}

// ANCHOR: tolerance
/// `(atol, rtol)` for a `kw`-tap f16 correlation accumulated in f32 and rounded to f16 once.
///
/// Products of two f16 values are exact in f32; summing `kw` of them errs by at most
/// `kw·u·Σ_t |x·w|` (Higham §3.1), with `u = 2^-23` to also cover truncating adders, and
/// `Σ_t |x·w| ≤ max|x|·max_f Σ_t |W[t, f]|`. The final f16 rounding adds half an ulp: `2^-11`
/// relative, `2^-25` absolute among subnormals. With inputs in `[-1, 1]` the accumulation part
/// is below 1e-5, so the bound is essentially f16's own rounding (the tutorial used a flat
/// atol of 1e-2).
pub fn conv_tolerance(x: &[f64], w: &[f64], f: usize) -> (f64, f64) {
    let kw = w.len() / f;
    let xmax = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let wmax = (0..f)
        .map(|j| (0..kw).map(|t| w[t * f + j].abs()).sum::<f64>())
        .fold(0.0, f64::max);
    let e = kw as f64 * (2.0f64).powi(-23) * xmax * wmax;
    (1.001 * e + (2.0f64).powi(-25), (2.0f64).powi(-11))
}
// ANCHOR_END: tolerance

fn inputs(len_x: usize, len_w: usize, seed: u64) -> (Vec<f16>, Vec<f16>) {
    let mut rng = Rng::new(seed);
    (rng.vec(len_x, -1.0, 1.0), rng.vec(len_w, -1.0, 1.0))
}

pub fn run(dev: &Device, scale: Scale, seed: u64) -> tilelang::Result<Vec<Case>> {
    // Both problems are small enough for the CPU backend at the tutorial size.
    let ((sn, sl), (mn, ml, mf)) = match scale {
        Scale::Tutorial | Scale::Reduced => ((64, 1024), (16, 256, 32)),
    };
    let kw = 7;
    let mut rng = Rng::new(seed);
    let mut cases = Vec::new();

    // Single filter.
    {
        let (xv, wv) = inputs(sn * sl, kw, rng.next_u64());
        let (x64, w64) = (check::to_f64(&xv), check::to_f64(&wv));
        let want = reference_single(&x64, &w64, sn, sl);
        let (atol, rtol) = conv_tolerance(&x64, &w64, 1);
        let x = dev.upload(&xv, &[sn, sl])?;
        let w = dev.upload(&wv, &[kw])?;
        let mut o = dev.alloc::<f16>(&[sn, sl])?;
        let p = Problem {
            chapter: "09",
            size: format!("X[{sn},{sl}], W[{kw}]"),
            work: Work::Bytes(2.0 * (2 * sn * sl + kw) as f64),
            reps: check::reps_for(dev, (sn * sl * kw) as f64),
            want: &want,
            atol,
            rtol,
        };
        cases.extend(p.sweep(dev, "conv1d single filter", &mut o, |cfg, o| {
            conv1d_single::launch(dev, cfg, &x, &w, o)
        })?);
    }

    // Multi filter.
    {
        let (xv, wv) = inputs(mn * ml, kw * mf, rng.next_u64());
        let (x64, w64) = (check::to_f64(&xv), check::to_f64(&wv));
        let want = reference_multi(&x64, &w64, mn, ml, mf);
        let (atol, rtol) = conv_tolerance(&x64, &w64, mf);
        let x = dev.upload(&xv, &[mn, ml])?;
        let w = dev.upload(&wv, &[kw, mf])?;
        let mut o = dev.alloc::<f16>(&[mn, ml, mf])?;
        let p = Problem {
            chapter: "09",
            size: format!("X[{mn},{ml}], W[{kw},{mf}]"),
            work: Work::Bytes(2.0 * (mn * ml + kw * mf + mn * ml * mf) as f64),
            reps: check::reps_for(dev, (mn * ml * mf * kw) as f64),
            want: &want,
            atol,
            rtol,
        };
        cases.extend(p.sweep(dev, "conv1d multi filter", &mut o, |cfg, o| {
            conv1d_multi::launch(dev, cfg, &x, &w, o)
        })?);
    }
    Ok(cases)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_every_config_matches_the_reference_with_tails() {
        let dev = crate::check::test_device();
        let seed = Rng::fresh_seed();
        // Lengths below, at and past the 3-wide halo and no multiple of any BL; row counts no
        // multiple of BR.
        for (n, l) in [(1, 1), (1, 4), (3, 7), (5, 33), (7, 257), (2, 1025)] {
            let (xv, wv) = inputs(n * l, 7, seed ^ (n * 10_007 + l) as u64);
            let (x64, w64) = (check::to_f64(&xv), check::to_f64(&wv));
            let want = reference_single(&x64, &w64, n, l);
            let (atol, rtol) = conv_tolerance(&x64, &w64, 1);
            let x = dev.upload(&xv, &[n, l]).unwrap();
            let w = dev.upload(&wv, &[7]).unwrap();
            let mut o = dev.alloc::<f16>(&[n, l]).unwrap();
            for cfg in conv1d_single::Config::ALL {
                o.poison().unwrap();
                conv1d_single::launch(&dev, cfg, &x, &w, &mut o).unwrap();
                check::assert_close(
                    &format!("conv1d_single[{cfg}] {n}x{l}"),
                    &o,
                    &want,
                    atol,
                    rtol,
                    seed,
                );
            }
        }
    }

    #[test]
    fn multi_every_config_matches_the_reference_with_tails() {
        let dev = crate::check::test_device();
        let seed = Rng::fresh_seed();
        for (n, l, f) in [(1, 1, 1), (2, 5, 3), (3, 37, 9), (2, 131, 33), (1, 300, 40)] {
            let (xv, wv) = inputs(n * l, 7 * f, seed ^ (n * 1_000_003 + l * 101 + f) as u64);
            let (x64, w64) = (check::to_f64(&xv), check::to_f64(&wv));
            let want = reference_multi(&x64, &w64, n, l, f);
            let (atol, rtol) = conv_tolerance(&x64, &w64, f);
            let x = dev.upload(&xv, &[n, l]).unwrap();
            let w = dev.upload(&wv, &[7, f]).unwrap();
            let mut o = dev.alloc::<f16>(&[n, l, f]).unwrap();
            for cfg in conv1d_multi::Config::ALL {
                o.poison().unwrap();
                conv1d_multi::launch(&dev, cfg, &x, &w, &mut o).unwrap();
                check::assert_close(
                    &format!("conv1d_multi[{cfg}] {n}x{l}x{f}"),
                    &o,
                    &want,
                    atol,
                    rtol,
                    seed,
                );
            }
        }
    }

    #[test]
    fn reference_pads_with_zeros() {
        // x = [1, 2, 3], taps t0..t6 = 1, 10, 100, ...: O[0] = x[0]·1000 + x[1]·1e4 + x[2]·1e5.
        let w: Vec<f64> = (0..7).map(|t| 10f64.powi(t)).collect();
        let o = reference_single(&[1.0, 2.0, 3.0], &w, 1, 3);
        assert_eq!(o, vec![321_000.0, 32_100.0, 3_210.0]);
    }

    #[test]
    fn other_kernel_widths_are_refused_before_any_write() {
        let dev = crate::check::test_device();
        let x = dev.zeros::<f16>(&[2, 10]).unwrap();
        let w = dev.zeros::<f16>(&[5]).unwrap();
        let mut o = dev.alloc::<f16>(&[2, 10]).unwrap();
        let err = conv1d_single(&dev, &x, &w, &mut o).unwrap_err();
        assert!(
            matches!(err, Error::Requirement { condition, .. } if condition.contains("KW")),
            "{err}"
        );
        let w = dev.zeros::<f16>(&[5, 4]).unwrap();
        let mut o3 = dev.alloc::<f16>(&[2, 10, 4]).unwrap();
        let err = conv1d_multi(&dev, &x, &w, &mut o3).unwrap_err();
        assert!(matches!(err, Error::Requirement { .. }), "{err}");
        // A filter count that disagrees between W and O.
        let w = dev.zeros::<f16>(&[7, 3]).unwrap();
        let err = conv1d_multi(&dev, &x, &w, &mut o3).unwrap_err();
        assert!(
            matches!(err, Error::ShapeMismatch { symbol: "F", .. }),
            "{err}"
        );
        assert!(
            o.to_vec().unwrap().iter().all(|v| v.is_nan()),
            "nothing may be written"
        );
        assert!(
            o3.to_vec().unwrap().iter().all(|v| v.is_nan()),
            "nothing may be written"
        );
    }
}
