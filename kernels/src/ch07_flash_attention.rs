//! # Chapter 07: scalar flash attention
//!
//! `O = softmax(Q ∘ K, dim = 1) ∘ V` over `Q, K, V, O` of shape `[256, 16384]` f32, where `∘` is
//! the element-wise product (no sum over keys):
//!
//! ```text
//! S[i, j] = Q[i, j]·K[i, j],   P = row-softmax(S),   O[i, j] = P[i, j]·V[i, j].
//! ```
//!
//! It is attention with the matrix products taken out, which leaves the part that makes flash
//! attention work: a softmax over a long row that is never stored. A naive version would write
//! `S` and `P` to memory (two extra `[256, 16384]` arrays, read back later); here each block
//! owns `BM` rows, walks them in column chunks of `BN`, recomputes `S = Q·K` from the inputs
//! whenever it needs it, and keeps only a running maximum `m` and sum `s` per row in `(BM,)`
//! fragments. Nothing of size `S` exists beyond one `(BM, BN)` tile in registers.
//!
//! * **3-pass** (`flash_attn_3pass`): pass 1 folds `max_j S` into `m`, pass 2 sums
//!   `exp(S − m)` into `s`, pass 3 writes `exp(S − m) / s · V`. It reads Q and K three times.
//! * **2-pass** (`flash_attn_2pass`): the online softmax of chapter 06 merges passes 1 and 2.
//!   With `m_t, s_t` the maximum and the sum `Σ exp(S − m_t)` over the columns seen so far, a
//!   chunk with maximum `c` gives `m_{t+1} = max(m_t, c)` and
//!   `s_{t+1} = s_t·exp(m_t − m_{t+1}) + Σ_{chunk} exp(S − m_{t+1})`. The rescaling is exact in
//!   real arithmetic because `exp(S − m_t)·exp(m_t − m_{t+1}) = exp(S − m_{t+1})` for every
//!   term already in the sum; the factor is `1` when the maximum stays and `< 1` when it
//!   grows, so nothing overflows. Q and K are read twice.
//! * **whole row** (`flash_attn_row`): when a row fits one tile (`requires N <= BN`; 16384
//!   floats per row in the registers of one block), `S` is formed once and kept: Q, K and V are
//!   read once and O written once, the minimum traffic of the problem.
//!
//! The original notebooks picked the 3-pass kernel on discrete GPUs and the 2-pass kernel on
//! the integrated one (gfx1151), where the extra exponentials of the online rescaling are
//! cheaper than a third trip to memory. [`flash_attention`] makes the same choice by device
//! arch; both kernels are always available.
//!
//! **Tails.** Rows past `M` and writes past the ends are handled by `copy` (zeros in, skipped
//! out). Columns past `N` read `Q = K = 0`, so `S = 0` there, which must enter neither the
//! maximum nor the sum: they are masked with `if_then_else` on the global column index, to
//! `f32::NEG_INFINITY` (the neutral element of `max`, which `m` starts from) for the maximum
//! and to 0 for the sum.
//!
//! **Every input.** As in chapter 06, the result is the float64 reference's on every row of
//! scores: `S` below `−1e30` keeps its true maximum, `S = −∞` gives `P = 0`, and a row whose
//! scores are all `−∞`, or hold `+∞` or a NaN, gives NaN as the reference does. The 2-pass
//! kernel takes its exponentials relative to 0 while its running maximum is still `−∞`, where
//! `exp(−∞ − (−∞))` would be NaN (one select per row and per element). Scores are computed in
//! f32: products that overflow f32 but not f64 (`|Q·K| > 3.4e38`) are outside what this kernel
//! can match.

use crate::check::{self, Case, Problem, Rng, Scale, Work};
use tilelang::prelude::*;

// ANCHOR: flash_3pass
/// Max pass, sum pass, write pass; S is recomputed from Q and K in each.
#[tile_kernel(
    grid = [M.div_ceil(BM)],
    threads = THREADS,
    configs = [r1x4096(BM = 1, BN = 4096, THREADS = 256), r2x1024(BM = 2, BN = 1024, THREADS = 256), r4x512(BM = 4, BN = 512, THREADS = 128)],
    defaults = [gfx1100 = r1x4096, gfx1201 = r1x4096, gfx1151 = r2x1024, sm_90 = r1x4096, cpu = r1x4096],
)]
pub fn flash_attn_3pass<const BM: usize, const BN: usize, const THREADS: usize>(
    q: &Tensor<f32, (M, N)>,
    k: &Tensor<f32, (M, N)>,
    v: &Tensor<f32, (M, N)>,
    o: &mut Tensor<f32, (M, N)>,
) {
    let row0 = block_idx(0) * BM;
    let mut q_t = alloc_fragment::<f32, (BM, BN)>();
    let mut k_t = alloc_fragment::<f32, (BM, BN)>();
    let mut v_t = alloc_fragment::<f32, (BM, BN)>();
    let mut part = alloc_fragment::<f32, (BM,)>();
    let mut m = alloc_fragment::<f32, (BM,)>();
    let mut s = alloc_fragment::<f32, (BM,)>();
    fill(&mut m, f32::NEG_INFINITY);
    fill(&mut s, 0.0);
    // Pass 1: m = max_j Q·K, tail columns masked out.
    for t in serial(N.div_ceil(BN)) {
        copy(q.at((row0, t * BN)), &mut q_t);
        copy(k.at((row0, t * BN)), &mut k_t);
        for (i, j) in parallel(BM, BN) {
            q_t[(i, j)] =
                if_then_else(t * BN + j < N, q_t[(i, j)] * k_t[(i, j)], f32::NEG_INFINITY);
        }
        reduce_max(&q_t, &mut part, 1);
        for i in parallel(BM) {
            m[i] = max(m[i], part[i]);
        }
    }
    // Pass 2: s = Σ_j exp(Q·K − m).
    for t in serial(N.div_ceil(BN)) {
        copy(q.at((row0, t * BN)), &mut q_t);
        copy(k.at((row0, t * BN)), &mut k_t);
        for (i, j) in parallel(BM, BN) {
            q_t[(i, j)] = if_then_else(t * BN + j < N, exp(q_t[(i, j)] * k_t[(i, j)] - m[i]), 0.0);
        }
        reduce_sum(&q_t, &mut part, 1);
        for i in parallel(BM) {
            s[i] += part[i];
        }
    }
    // Pass 3: O = exp(Q·K − m) / s · V (the copy skips the tails).
    for t in serial(N.div_ceil(BN)) {
        copy(q.at((row0, t * BN)), &mut q_t);
        copy(k.at((row0, t * BN)), &mut k_t);
        copy(v.at((row0, t * BN)), &mut v_t);
        for (i, j) in parallel(BM, BN) {
            q_t[(i, j)] = exp(q_t[(i, j)] * k_t[(i, j)] - m[i]) / s[i] * v_t[(i, j)];
        }
        copy(&q_t, o.at_mut((row0, t * BN)));
    }
}
// ANCHOR_END: flash_3pass

// ANCHOR: flash_2pass
/// Online max and rescaled sum in one pass, then the write pass.
#[tile_kernel(
    grid = [M.div_ceil(BM)],
    threads = THREADS,
    configs = [r1x4096(BM = 1, BN = 4096, THREADS = 256), r2x1024(BM = 2, BN = 1024, THREADS = 256), r4x512(BM = 4, BN = 512, THREADS = 128)],
    defaults = [gfx1100 = r1x4096, gfx1201 = r1x4096, gfx1151 = r2x1024, sm_90 = r1x4096, cpu = r1x4096],
)]
pub fn flash_attn_2pass<const BM: usize, const BN: usize, const THREADS: usize>(
    q: &Tensor<f32, (M, N)>,
    k: &Tensor<f32, (M, N)>,
    v: &Tensor<f32, (M, N)>,
    o: &mut Tensor<f32, (M, N)>,
) {
    let row0 = block_idx(0) * BM;
    let mut q_t = alloc_fragment::<f32, (BM, BN)>();
    let mut k_t = alloc_fragment::<f32, (BM, BN)>();
    let mut v_t = alloc_fragment::<f32, (BM, BN)>();
    let mut part = alloc_fragment::<f32, (BM,)>();
    let mut m = alloc_fragment::<f32, (BM,)>();
    let mut s = alloc_fragment::<f32, (BM,)>();
    fill(&mut m, f32::NEG_INFINITY);
    fill(&mut s, 0.0);
    for t in serial(N.div_ceil(BN)) {
        copy(q.at((row0, t * BN)), &mut q_t);
        copy(k.at((row0, t * BN)), &mut k_t);
        for (i, j) in parallel(BM, BN) {
            q_t[(i, j)] =
                if_then_else(t * BN + j < N, q_t[(i, j)] * k_t[(i, j)], f32::NEG_INFINITY);
        }
        reduce_max(&q_t, &mut part, 1);
        // Move to the new maximum, rescaling what the sum already holds. While the maximum is
        // still −∞ (only −∞ and masked scores so far) the exponentials are relative to 0:
        // exp(−∞ − 0) = 0 where exp(−∞ − (−∞)) would be NaN, and s stays 0.
        for i in parallel(BM) {
            let m_new = max(m[i], part[i]);
            s[i] = s[i] * exp(m[i] - if_then_else(m_new == f32::NEG_INFINITY, 0.0, m_new));
            m[i] = m_new;
        }
        for (i, j) in parallel(BM, BN) {
            let base = if_then_else(m[i] == f32::NEG_INFINITY, 0.0, m[i]);
            q_t[(i, j)] = exp(q_t[(i, j)] - base);
        }
        reduce_sum(&q_t, &mut part, 1);
        for i in parallel(BM) {
            s[i] += part[i];
        }
    }
    for t in serial(N.div_ceil(BN)) {
        copy(q.at((row0, t * BN)), &mut q_t);
        copy(k.at((row0, t * BN)), &mut k_t);
        copy(v.at((row0, t * BN)), &mut v_t);
        for (i, j) in parallel(BM, BN) {
            q_t[(i, j)] = exp(q_t[(i, j)] * k_t[(i, j)] - m[i]) / s[i] * v_t[(i, j)];
        }
        copy(&q_t, o.at_mut((row0, t * BN)));
    }
}
// ANCHOR_END: flash_2pass

// ANCHOR: flash_row
/// The whole row in registers (`requires N <= BN`): Q, K and V read once and O written once,
/// the minimum traffic. `S = Q·K` is formed once into the `(BM, BN)` fragment and stays there
/// for the maximum, the exponentials and the sum; V is copied in only for the last step.
/// Columns past `N` are masked as in the other kernels. Rows longer than `BN` are refused at
/// launch (the `requires`); the chunked kernels above take any length.
#[tile_kernel(
    grid = [M.div_ceil(BM)],
    threads = THREADS,
    requires = [N <= BN],
    configs = [r1x16384t512(BM = 1, BN = 16384, THREADS = 512), r1x16384(BM = 1, BN = 16384, THREADS = 1024)],
    defaults = [gfx1100 = r1x16384t512, gfx1151 = r1x16384t512, gfx1201 = r1x16384t512, gfx90a = r1x16384t512, gfx942 = r1x16384t512, sm_90 = r1x16384t512, cpu = r1x16384t512],
)]
pub fn flash_attn_row<const BM: usize, const BN: usize, const THREADS: usize>(
    q: &Tensor<f32, (M, N)>,
    k: &Tensor<f32, (M, N)>,
    v: &Tensor<f32, (M, N)>,
    o: &mut Tensor<f32, (M, N)>,
) {
    let row0 = block_idx(0) * BM;
    let mut s_t = alloc_fragment::<f32, (BM, BN)>();
    let mut k_t = alloc_fragment::<f32, (BM, BN)>();
    let mut v_t = alloc_fragment::<f32, (BM, BN)>();
    let mut m = alloc_fragment::<f32, (BM,)>();
    let mut s = alloc_fragment::<f32, (BM,)>();
    copy(q.at((row0, 0)), &mut s_t);
    copy(k.at((row0, 0)), &mut k_t);
    for (i, j) in parallel(BM, BN) {
        s_t[(i, j)] = if_then_else(j < N, s_t[(i, j)] * k_t[(i, j)], f32::NEG_INFINITY);
    }
    reduce_max(&s_t, &mut m, 1);
    // Masked columns hold −∞: their exp is exactly 0 (a row of only −∞ gives NaN, as the
    // reference does).
    for (i, j) in parallel(BM, BN) {
        s_t[(i, j)] = exp(s_t[(i, j)] - m[i]);
    }
    reduce_sum(&s_t, &mut s, 1);
    copy(v.at((row0, 0)), &mut v_t);
    for (i, j) in parallel(BM, BN) {
        s_t[(i, j)] = s_t[(i, j)] / s[i] * v_t[(i, j)];
    }
    copy(&s_t, o.at_mut((row0, 0)));
}
// ANCHOR_END: flash_row

/// The variant the original notebooks used on this arch: 2 passes on the integrated GPU
/// (gfx1151), 3 passes elsewhere.
pub fn variant_for(arch: &str) -> &'static str {
    match arch {
        "gfx1151" => "2-pass",
        _ => "3-pass",
    }
}

/// `o = softmax(q ∘ k, dim = 1) ∘ v` with the variant and config chosen for `dev`'s arch.
pub fn flash_attention(
    dev: &Device,
    q: &Tensor<f32>,
    k: &Tensor<f32>,
    v: &Tensor<f32>,
    o: &mut Tensor<f32>,
) -> tilelang::Result<()> {
    match variant_for(dev.arch()) {
        "2-pass" => flash_attn_2pass::launch(
            dev,
            flash_attn_2pass::Config::default_for(dev.arch()),
            q,
            k,
            v,
            o,
        ),
        _ => flash_attn_3pass::launch(
            dev,
            flash_attn_3pass::Config::default_for(dev.arch()),
            q,
            k,
            v,
            o,
        ),
    }
}

/// The float64 reference for row-major `[m, n]` inputs (the products of f32 inputs are exact
/// in f64).
pub fn reference_flash(q: &[f64], k: &[f64], v: &[f64], m: usize, n: usize) -> Vec<f64> {
    let mut out = vec![0.0; m * n];
    for r in 0..m {
        let row = r * n..(r + 1) * n;
        let s: Vec<f64> = q[row.clone()]
            .iter()
            .zip(&k[row.clone()])
            .map(|(a, b)| a * b)
            .collect();
        let mx = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = s.iter().map(|x| (x - mx).exp()).sum();
        for ((o, x), vv) in out[row.clone()].iter_mut().zip(&s).zip(&v[row]) {
            *o = (x - mx).exp() / sum * vv;
        }
    }
    out
}

// ANCHOR: tolerance
/// Relative tolerance, against float64. The tutorial checked `|got − want| ≤ 1e-4`. Inputs here
/// have `|V| < 2` and `P ≤ 1`, so `|O| < 2` and `RTOL·|O| < 1e-4`: at least as strict
/// everywhere, and much stricter on typical outputs (`|O| ~ 1/16384`). Error budget in f32
/// (`u = 2^-24`): for the test inputs `S = Q·K` and `S − m` are exact or round once
/// (`≤ 16u` relative in `exp` for `|Q|, |K| < 2`); `exp`, `/ s` and `· V` add ~1 ulp each; the
/// sum over `BN + N/BN` positive terms behaves like `√(BN + N/BN)·u ≈ 4e-6` (worst case
/// `(BN + N/BN)·u ≈ 2.5e-4` is never approached by rounding errors of random sign, and a GPU's
/// tree reduction has `log2(BN)·u`). Measured on the CPU at the tutorial size: 2e-6.
const RTOL: f64 = 5e-5;
/// Values of `P` below f32's normal range (`S` more than ~87 below the row maximum) lose
/// relative precision or flush to zero; 1e-36 absolute covers exactly those.
const ATOL: f64 = 1e-36;
// ANCHOR_END: tolerance

pub fn run(dev: &Device, scale: Scale, seed: u64) -> tilelang::Result<Vec<Case>> {
    let n = 16_384;
    let m = match scale {
        // The tutorial size runs in ~3.5 s of CPU time: no reduction needed.
        Scale::Tutorial | Scale::Reduced => 256,
    };
    let mut rng = Rng::new(seed);
    let qv = rng.vec::<f32>(m * n, -2.0, 2.0);
    let kv = rng.vec::<f32>(m * n, -2.0, 2.0);
    let vv = rng.vec::<f32>(m * n, -2.0, 2.0);
    let want = reference_flash(
        &check::to_f64(&qv),
        &check::to_f64(&kv),
        &check::to_f64(&vv),
        m,
        n,
    );
    let q = dev.upload(&qv, &[m, n])?;
    let k = dev.upload(&kv, &[m, n])?;
    let v = dev.upload(&vv, &[m, n])?;
    let mut o = dev.alloc::<f32>(&[m, n])?;
    let p = Problem {
        chapter: "07",
        size: format!("{m}x{n}"),
        // Minimum traffic: Q, K, V read once, O written once.
        work: Work::Bytes(4.0 * 4.0 * (m * n) as f64),
        reps: check::reps_for(dev, (m * n) as f64),
        want: &want,
        atol: ATOL,
        rtol: RTOL,
    };
    let mut cases = p.sweep(dev, "3-pass", &mut o, |cfg, o| {
        flash_attn_3pass::launch(dev, cfg, &q, &k, &v, o)
    })?;
    cases.extend(p.sweep(dev, "2-pass", &mut o, |cfg, o| {
        flash_attn_2pass::launch(dev, cfg, &q, &k, &v, o)
    })?);
    cases.extend(p.sweep(dev, "whole row", &mut o, |cfg, o| {
        flash_attn_row::launch(dev, cfg, &q, &k, &v, o)
    })?);
    Ok(cases)
}

#[cfg(test)]
mod tests {
    use super::*;

    type Launch = fn(
        &Device,
        &str,
        &Tensor<f32>,
        &Tensor<f32>,
        &Tensor<f32>,
        &mut Tensor<f32>,
    ) -> tilelang::Result<()>;
    /// Every kernel of the chapter: name, configs, launcher.
    const KERNELS: [(&str, &[&str], Launch); 3] = [
        (
            "flash_attn_3pass",
            flash_attn_3pass::CONFIGS,
            flash_attn_3pass::launch_named,
        ),
        (
            "flash_attn_2pass",
            flash_attn_2pass::CONFIGS,
            flash_attn_2pass::launch_named,
        ),
        (
            "flash_attn_row",
            flash_attn_row::CONFIGS,
            flash_attn_row::launch_named,
        ),
    ];

    /// Runs every config of every kernel with a poisoned output; returns the last output.
    fn check_all(
        what: &str,
        qv: &[f32],
        kv: &[f32],
        vv: &[f32],
        m: usize,
        n: usize,
        seed: u64,
    ) -> Vec<f32> {
        let dev = crate::check::test_device();
        let want = reference_flash(
            &check::to_f64(qv),
            &check::to_f64(kv),
            &check::to_f64(vv),
            m,
            n,
        );
        let q = dev.upload(qv, &[m, n]).unwrap();
        let k = dev.upload(kv, &[m, n]).unwrap();
        let v = dev.upload(vv, &[m, n]).unwrap();
        let mut o = dev.alloc::<f32>(&[m, n]).unwrap();
        for (name, configs, launch) in KERNELS {
            for cfg in configs {
                o.poison().unwrap();
                launch(&dev, cfg, &q, &k, &v, &mut o).unwrap();
                check::assert_close(
                    &format!("{name}[{cfg}] {what} {m}x{n}"),
                    &o,
                    &want,
                    ATOL,
                    RTOL,
                    seed,
                );
            }
        }
        o.poison().unwrap();
        flash_attention(&dev, &q, &k, &v, &mut o).unwrap();
        check::assert_close(
            &format!("flash_attention {what} {m}x{n}"),
            &o,
            &want,
            ATOL,
            RTOL,
            seed,
        );
        o.to_vec().unwrap()
    }

    /// `len` values uniform in `[lo, hi)` rounded to multiples of 1/4: products of two of them
    /// up to ±80 are multiples of 1/16 below 2^17, exact in f32.
    fn quarters(rng: &mut Rng, len: usize, lo: f64, hi: f64) -> Vec<f32> {
        (0..len)
            .map(|_| (rng.uniform(lo, hi) * 4.0).round() as f32 / 4.0)
            .collect()
    }

    #[test]
    fn every_config_matches_the_reference_with_tails() {
        let seed = Rng::fresh_seed();
        // Rows below, between and past the row tiles (1, 2, 4); columns: one, less than a
        // chunk, and several chunks of every BN with a ragged last one.
        for (m, n) in [(1, 1), (3, 5), (7, 511), (5, 1537), (9, 4097), (3, 8195)] {
            let mut rng = Rng::new(seed ^ (m * 100_003 + n) as u64);
            let (qv, kv, vv) = (
                rng.vec::<f32>(m * n, -2.0, 2.0),
                rng.vec::<f32>(m * n, -2.0, 2.0),
                rng.vec::<f32>(m * n, -2.0, 2.0),
            );
            check_all("uniform ±2", &qv, &kv, &vv, m, n, seed);
        }
    }

    /// `Q, K` up to ±80 make `S = Q·K` reach ±6400, where `exp(S)` is `inf` even in f64: only
    /// the max subtraction keeps the result finite. Inputs are multiples of 1/4, so `S` and
    /// `S − m` are exact in f32 and the usual tolerance still applies. With `V = 1` the output
    /// is `P` itself, whose rows must sum to 1.
    #[test]
    fn large_magnitudes_stay_finite() {
        let seed = Rng::fresh_seed();
        let (m, n) = (7, 1031);
        let mut rng = Rng::new(seed);
        let qv = quarters(&mut rng, m * n, -80.0, 80.0);
        let kv = quarters(&mut rng, m * n, -80.0, 80.0);
        let vv = rng.vec::<f32>(m * n, -2.0, 2.0);
        assert!(
            qv.iter().zip(&kv).any(|(a, b)| (a * b).exp().is_infinite()),
            "the test must contain scores whose plain exp overflows"
        );
        check_all("±80", &qv, &kv, &vv, m, n, seed);
        let p = check_all("±80, V = 1", &qv, &kv, &vec![1.0; m * n], m, n, seed);
        for row in p.chunks_exact(n) {
            assert!(row.iter().all(|x| x.is_finite()));
            let sum: f64 = row.iter().map(|&x| x as f64).sum();
            assert!(
                (sum - 1.0).abs() < 1e-5,
                "row sum {sum} (TILELANG_SEED={seed})"
            );
        }
    }

    /// Scores `S = Q·K` at the ends of f32's range, infinite, or NaN
    /// ([`check::extreme_rows`], in `Q` on even rows and in `K` on odd ones, the other factor
    /// 1 so that `S` is exact), at odd sizes in every config and through [`flash_attention`]:
    /// the output must be the float64 reference, NaN exactly where that is NaN.
    #[test]
    fn extreme_scores_match_the_reference() {
        let seed = Rng::fresh_seed();
        let dev = crate::check::test_device();
        // 13 and 25 rows: every kind of row, and a partial last row block for BM = 2 and 4.
        for (m, n) in [
            (13, 1),
            (13, 3),
            (25, 511),
            (13, 1537),
            (25, 4099),
            (13, 8195),
        ] {
            let mut rng = Rng::new(seed ^ (m * 100_003 + n) as u64);
            let (sv, kinds) = check::extreme_rows(&mut rng, m, n);
            let (mut qv, mut kv) = (sv, vec![1.0f32; m * n]);
            for r in (1..m).step_by(2) {
                let row = r * n..(r + 1) * n;
                qv[row.clone()].swap_with_slice(&mut kv[row]);
            }
            let vv = rng.vec::<f32>(m * n, -2.0, 2.0);
            let want = reference_flash(
                &check::to_f64(&qv),
                &check::to_f64(&kv),
                &check::to_f64(&vv),
                m,
                n,
            );
            let q = dev.upload(&qv, &[m, n]).unwrap();
            let k = dev.upload(&kv, &[m, n]).unwrap();
            let v = dev.upload(&vv, &[m, n]).unwrap();
            let mut o = dev.alloc::<f32>(&[m, n]).unwrap();
            // |O| ≤ |V| < 2: 3 is never an output.
            let assert_close =
                |what: String,
                 o: &mut Tensor<f32>,
                 launch: &dyn Fn(&mut Tensor<f32>) -> tilelang::Result<()>| {
                    check::assert_close_rows(
                        &what, o, 3.0, &want, ATOL, RTOL, n, &kinds, seed, launch,
                    )
                };
            for (name, configs, launch) in KERNELS {
                for cfg in configs {
                    assert_close(format!("{name}[{cfg}] {m}x{n}"), &mut o, &|o| {
                        launch(&dev, cfg, &q, &k, &v, o)
                    });
                }
            }
            assert_close(format!("flash_attention {m}x{n}"), &mut o, &|o| {
                flash_attention(&dev, &q, &k, &v, o)
            });
        }
    }

    /// Rows longer than the tile are refused at launch, not computed wrong.
    #[test]
    fn whole_row_refuses_rows_longer_than_its_tile() {
        let dev = crate::check::test_device();
        let q = dev.alloc::<f32>(&[2, 16_385]).unwrap();
        let mut o = dev.alloc::<f32>(&[2, 16_385]).unwrap();
        for cfg in flash_attn_row::Config::ALL {
            let e = flash_attn_row::launch(&dev, cfg, &q, &q, &q, &mut o).unwrap_err();
            assert!(e.to_string().contains("N <= BN"), "{cfg}: {e}");
        }
    }

    /// Rows whose scores are all far below zero (−225 ≤ S ≤ −196): zero-filled tail columns
    /// (S = 0) entering the maximum would make every `exp(S − 0)` flush to zero and the output
    /// NaN. Quarters again, so S is exact.
    #[test]
    fn tail_columns_do_not_enter_the_maximum() {
        let seed = Rng::fresh_seed();
        let (m, n) = (3, 1029);
        let mut rng = Rng::new(seed);
        let qv = quarters(&mut rng, m * n, 14.0, 15.0);
        let kv = quarters(&mut rng, m * n, -15.0, -14.0);
        let vv = rng.vec::<f32>(m * n, -2.0, 2.0);
        check_all("all negative", &qv, &kv, &vv, m, n, seed);
    }
}
