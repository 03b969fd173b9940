//! # Row-wise cross-entropy (the LLM loss)
//!
//! `loss[i] = log Σ_j exp(x[i, j]) − x[i, t_i]` for f16 logits `x` of shape `[tokens, vocab]`
//! and i32 targets `t`: `F.cross_entropy(x.float(), t, reduction="none")`. A target outside
//! `[0, V)` (PyTorch's `ignore_index = -100`, say) gives a loss of 0, and is never used as an
//! index. The loss is f32.
//!
//! The log-sum-exp is chapter 06's online softmax without its write pass: one read of each
//! row, keeping per row a running maximum `m` and a sum `s` of `exp(x − m)` rescaled by
//! `exp(m_old − m_new)` whenever the maximum grows, so that no `exp` overflows (f16 logits go to
//! ±65504; `exp(89)` is already infinite in f32). Columns past `V` are masked to `−∞`; logits of
//! `−∞` (a masked vocabulary) are fine: while the running maximum is still `−∞` the exponentials
//! are taken relative to 0, as chapter 06 explains, so `exp(−∞ − (−∞))` never happens.
//!
//! After the loop, a `parallel` loop over the block's rows gathers each row's target logit from
//! global memory, `x[(r, t_r)]`, an index that comes from data, and writes the loss: a guard on
//! the row (`r < M`, rows past the end of the last block) and one on the target's range.

use kernels::check::Rng;
use tilelang::prelude::*;

/// `loss[i] = logsumexp(x[i, :]) − x[i, t[i]]`, 0 where `t[i]` is not in `[0, V)`.
#[tile_kernel(
    grid = [M.div_ceil(BM)],
    threads = THREADS,
    configs = [
        r1x2048(BM = 1, BN = 2048, THREADS = 256),
        r1x4096(BM = 1, BN = 4096, THREADS = 512),
        r4x1024(BM = 4, BN = 1024, THREADS = 256),
        r3x64(BM = 3, BN = 64, THREADS = 32),
    ],
    defaults = [sm_90 = r1x2048, cpu = r4x1024],
)]
pub fn cross_entropy<const BM: usize, const BN: usize, const THREADS: usize>(
    x: &Tensor<f16, (M, V)>,
    t: &Tensor<i32, (M,)>,
    loss: &mut Tensor<f32, (M,)>,
) {
    let row0 = block_idx(0) * BM;
    let mut tile = alloc_fragment::<f32, (BM, BN)>();
    let mut part = alloc_fragment::<f32, (BM,)>();
    let mut m = alloc_fragment::<f32, (BM,)>();
    let mut s = alloc_fragment::<f32, (BM,)>();
    fill(&mut m, f32::NEG_INFINITY);
    fill(&mut s, 0.0);
    for k in serial(V.div_ceil(BN)) {
        copy(x.at((row0, k * BN)), &mut tile);
        for (i, j) in parallel(BM, BN) {
            tile[(i, j)] = if_then_else(k * BN + j < V, tile[(i, j)], f32::NEG_INFINITY);
        }
        reduce_max(&tile, &mut part, 1);
        for i in parallel(BM) {
            let m_new = max(m[i], part[i]);
            s[i] = s[i] * exp(m[i] - if_then_else(m_new == f32::NEG_INFINITY, 0.0, m_new));
            m[i] = m_new;
        }
        for (i, j) in parallel(BM, BN) {
            let base = if_then_else(m[i] == f32::NEG_INFINITY, 0.0, m[i]);
            tile[(i, j)] = exp(tile[(i, j)] - base);
        }
        reduce_sum(&tile, &mut part, 1);
        for i in parallel(BM) {
            s[i] += part[i];
        }
    }
    for i in parallel(BM) {
        let r = row0 + i;
        if r < M {
            let target = t[r];
            if target >= 0 && (target as usize) < V {
                loss[r] = log(s[i]) + m[i] - (x[(r, target as usize)] as f32);
            } else {
                loss[r] = 0.0;
            }
        }
    }
}

/// The float64 reference, from the f16 logits directly (the benches' largest input has
/// 5·10⁸ of them: no float64 copy is made).
pub fn reference(x: &[f16], t: &[i32], v: usize) -> Vec<f64> {
    x.chunks_exact(v)
        .zip(t)
        .map(|(row, &target)| {
            if target < 0 || target as usize >= v {
                return 0.0;
            }
            let mx = row
                .iter()
                .map(|x| x.to_f64())
                .fold(f64::NEG_INFINITY, f64::max);
            let sum: f64 = row.iter().map(|x| (x.to_f64() - mx).exp()).sum();
            mx + sum.ln() - row[target as usize].to_f64()
        })
        .collect()
}

/// `atol` (norm-wise, `rtol = 0`: the loss is a difference and may be near 0) for the logits
/// and chunk width `bn`.
///
/// In f32 (`u = 2^-24`), per row of range `R = max − min` (over its finite logits): each
/// `x − m` rounds (`u·R` absolutely), which `exp` turns into a relative `u·R`, and `exp` errs by
/// 2 ulp (`2^-22`); the sum of positive terms adds `γ = k·u / (1 − k·u)` with
/// `k = bn − 1 + ⌈V / bn⌉` additions per term in any order; each of the `c = ⌈V / bn⌉` rescales
/// multiplies by an `exp` of the same accuracy and rounds once. So `s` is relatively off by
/// `δ ≤ γ + (c + 1)·(2^-22 + u·R + u)`, `log(s)` absolutely by `δ + 2^-22·log(s)` (its own 2
/// ulp), and the two additions round at `u·(|lse| + |loss|)`. `atol` is 1.001 times the
/// largest such bound over the rows. For the benches' vocabulary (128256, `bn` = 2048, logits
/// in ±4) that is about 1.5e-4 on losses near 12.
pub fn tolerance(x: &[f16], t: &[i32], v: usize, bn: usize) -> f64 {
    let u = 2f64.powi(-24);
    let c = v.div_ceil(bn) as f64;
    let k = bn as f64 - 1.0 + c;
    let gamma = k * u / (1.0 - k * u);
    let mut e: f64 = 0.0;
    for (row, &target) in x.chunks_exact(v).zip(t) {
        let finite = row.iter().map(|x| x.to_f64()).filter(|x| x.is_finite());
        let (lo, hi) = finite.fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), x| {
            (l.min(x), h.max(x))
        });
        let range = if hi >= lo { hi - lo } else { 0.0 };
        let sum: f64 = row.iter().map(|x| (x.to_f64() - hi).exp()).sum();
        let lse = hi + sum.ln();
        let target = row.get(target.max(0) as usize).map_or(0.0, |x| x.to_f64());
        let delta = gamma + (c + 1.0) * (2f64.powi(-22) + u * range + u);
        let bound =
            delta + 2f64.powi(-22) * sum.ln().abs() + u * (lse.abs() + (lse - target).abs());
        if bound.is_finite() {
            e = e.max(bound);
        }
    }
    1.001 * e
}

/// PyTorch's `ignore_index`.
pub const IGNORE: i32 = -100;

/// Inputs of the tests and the benches: logits uniform in ±4 (f16) and targets uniform in
/// `[0, v)`, with every 16th row's target `IGNORE`.
pub fn inputs(rng: &mut Rng, m: usize, v: usize) -> (Vec<f16>, Vec<i32>) {
    let x = rng.vec(m * v, -4.0, 4.0);
    let t = (0..m)
        .map(|r| {
            if r % 16 == 5 {
                IGNORE
            } else {
                (rng.next_u64() % v as u64) as i32
            }
        })
        .collect();
    (x, t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels::check;

    fn check_all(what: &str, xv: &[f16], tv: &[i32], m: usize, v: usize, seed: u64) {
        let dev = check::test_device();
        let want = reference(xv, tv, v);
        let x = dev.upload(xv, &[m, v]).unwrap();
        let t = dev.upload(tv, &[m]).unwrap();
        let mut loss = dev.alloc::<f32>(&[m]).unwrap();
        for cfg in cross_entropy::Config::ALL {
            let atol = tolerance(xv, tv, v, cfg.BN());
            loss.poison().unwrap();
            cross_entropy::launch(&dev, cfg, &x, &t, &mut loss).unwrap();
            check::assert_close(
                &format!("cross_entropy[{cfg}] {what} {m}x{v}"),
                &loss,
                &want,
                atol,
                0.0,
                seed,
            );
        }
    }

    #[test]
    fn every_config_matches_the_reference_with_tails() {
        let seed = Rng::fresh_seed();
        for (m, v) in [
            (1, 1),
            (3, 7),
            (5, 1000),
            (7, 4097),
            (2, 32_000),
            (21, 8193),
        ] {
            let mut rng = Rng::new(seed ^ (m * 100_003 + v) as u64);
            let (xv, tv) = inputs(&mut rng, m, v);
            check_all("uniform ±4", &xv, &tv, m, v, seed);
        }
    }

    /// Targets that are not classes (negative, `V`, far past it) give 0 and are never read;
    /// logits up to ±60000 (only the max subtraction keeps `exp` finite); rows whose first
    /// 5000 logits are `−∞` (a masked vocabulary: the online rescale must not meet
    /// `exp(−∞ − (−∞))`), one with its target among them (loss `+∞`).
    #[test]
    fn ignored_targets_huge_logits_and_masked_vocabularies() {
        let seed = Rng::fresh_seed();
        let (m, v) = (9, 6001);
        let mut rng = Rng::new(seed);
        let (mut xv, mut tv) = inputs(&mut rng, m, v);
        tv[0] = -1;
        tv[1] = v as i32;
        tv[2] = i32::MAX;
        for (r, row) in xv.chunks_exact_mut(v).enumerate() {
            match r % 3 {
                0 => row
                    .iter_mut()
                    .for_each(|x| *x = f16::from_f64(x.to_f64() * 15_000.0)),
                1 => row[..5000].fill(f16::NEG_INFINITY),
                _ => {}
            }
        }
        tv[4] = 17; // row 4 is masked up to 5000: its loss is +∞
        check_all("special", &xv, &tv, m, v, seed);
        assert_eq!(reference(&xv, &tv, v)[4], f64::INFINITY);
        assert_eq!(&reference(&xv, &tv, v)[..3], &[0.0, 0.0, 0.0]);
    }
}
