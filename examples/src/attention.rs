//! # Attention forward (FlashAttention-2), written the natural way
//!
//! `O = softmax(scale · Q·Kᵀ) · V` for every (batch · head) `bh`, with `Q`, `K`, `V` and `O` of
//! shape `(BH, S, D)`, f16 in and out, f32 arithmetic, `scale = 1/√D`: the forward pass of
//! `F.scaled_dot_product_attention` without a mask. This is issue 39's "natural kernel": the
//! online softmax the language reference and chapters 06 and 07 teach, with both products on
//! `gemm`, nothing tuned by hand.
//!
//! One block owns `BM` query rows of one `bh` (the grid is `(⌈S / BM⌉, BH)`): it copies its
//! `(BM, D)` tile of `Q` into shared memory once, then walks the keys in blocks of `BN` (a
//! `pipelined` loop, so on NVIDIA the next `K` and `V` tiles load while this one computes).
//! Per key block:
//!
//! 1. `S = Q·Kᵀ` (`s`, an f32 `(BM, BN)` fragment) by `gemm(&q_s, &k_s.t(), &mut s)`: `k_s`
//!    holds `BN` rows of `K` as stored, `.t()` reads it as the `(D, BN)` operand.
//! 2. The keys past `S` are masked: the copy of the last block reads zeros there, which would
//!    be scores of 0, so they become `−∞` (`if_then_else` on the key index). This loop runs on
//!    every key block, not only the last: the simplest correct spelling, whose comparison every
//!    block pays for (a later stage of issue 39 removes that cost by splitting the last block
//!    off).
//! 3. The online softmax, **in the log2 domain**: the kernel gets `c = scale · log2 e` (an f32
//!    from [`c_of`]) and works with `x = s · c`, so that `e^{scale·s} = 2^x` and every
//!    exponential is one `exp2`. `m` (a row fragment) holds the running row maximum of `x`,
//!    i.e. a maximum **in the log2 domain** (scores times `c`, not raw scores); `mx` is this
//!    block's maximum (first of the raw scores, then combined with `m`), `alpha = 2^{m_old −
//!    m_new}` the factor that moves what was accumulated so far to the new maximum, and `s`
//!    becomes `p = 2^{x − m}` (at most 1) in place.
//! 4. `rs` (a row fragment) is the block's row sum of `p`, and `l = l · alpha + rs` the running
//!    denominator, kept in f32 from the f32 `p`.
//! 5. `p` (an f16 `(BM, BN)` fragment) is `p` rounded to f16, the A operand of the second
//!    `gemm`; `acc` (the f32 `(BM, D)` output accumulator) is rescaled by `alpha` and then
//!    `acc += P·V`.
//!
//! After the last block `acc / l` is the output, rounded to f16 by the `copy` out (rows past `S`
//! are not written). The first block's `alpha` is `2^{−∞ − m} = 0`, multiplying the cleared
//! `acc` and `l`; no `−∞ − (−∞)` can arise, since the first key block always holds a real key.
//!
//! What the lowering makes of it today (the build's warnings say what is missing,
//! `docs/design/attention.md` tracks it): the scores `s`, the row statistics and the output
//! stay in registers, in the matrix unit's accumulator layout and its rows; on NVIDIA `p`
//! takes the scores' layout and feeds `P·V` from registers (mma.sync's A operand is two
//! accumulator pairs packed to f16: the manifest's `mma.sync.rA`; on sm_90a wgmma's register
//! form, `wgmma.rA`, with `Q·Kᵀ` on wgmma too where `BN` is 64); on AMD it goes through
//! shared memory. The configs, two per head size (`D` is a const generic, so a config
//! launches only on tensors of its head size): `d128` and `d64` (`BM` 128, `BN` 64, 256
//! threads: eight warps of 16 query rows), NVIDIA's tiles, and `d128s` and `d64s` (`BM` 64,
//! 128 threads), all with two stages. `d128` needs 80 KiB of shared memory on AMD, over its
//! 64 KiB, so the build leaves it out there with a warning (launching it there is
//! `Error::ConfigNotCompiled`) and `d128s` serves; the default launcher takes the first
//! config compiled for the device's arch.
//!
//! The float64 reference is [`reference()`] (every row), [`reference_rows`] (chosen rows: the
//! benches' sizes, where every row would take minutes on the host) and [`check_rows`] (chosen
//! rows with their tolerance). The tolerance is derived there from the arithmetic: the
//! exponents' errors (the `Q·Kᵀ` sum, the roundings around `c` and `m`, `exp2` to `2^-20` on
//! every backend) perturb numerator and denominator alike; `P` rounded to f16 (`2^-11`) and
//! the f32 sum of `P·V` over all `S` keys (`γ_{S+NB}`) perturb the numerator only, the f32
//! sum of `l` the denominator; the output's f16 rounding is the relative `2^-11`.

use kernels::check::Rng;
use tilelang::prelude::*;

// ANCHOR: attention
/// `O = softmax(Q·Kᵀ · c / log2 e) · V` per `bh`, `c = scale · log2 e`: FlashAttention-2's
/// forward, online softmax in the log2 domain.
#[tile_kernel(
    grid = [S.div_ceil(BM), BH],
    threads = THREADS,
    configs = [
        d128(BM = 128, BN = 64, D = 128, THREADS = 256, STAGES = 2),
        d128s(BM = 64, BN = 32, D = 128, THREADS = 128, STAGES = 2),
        d64(BM = 128, BN = 64, D = 64, THREADS = 256, STAGES = 2),
        d64s(BM = 64, BN = 64, D = 64, THREADS = 128, STAGES = 2),
    ],
)]
pub fn attention<
    const BM: usize,
    const BN: usize,
    const D: usize,
    const THREADS: usize,
    const STAGES: usize,
>(
    q: &Tensor<f16, (BH, S, D)>,
    k: &Tensor<f16, (BH, S, D)>,
    v: &Tensor<f16, (BH, S, D)>,
    o: &mut Tensor<f16, (BH, S, D)>,
    c: f32,
) {
    let (r0, bh) = (block_idx(0) * BM, block_idx(1));
    let mut q_s = alloc_shared::<f16, (BM, D)>();
    let mut k_s = alloc_shared::<f16, (BN, D)>();
    let mut v_s = alloc_shared::<f16, (BN, D)>();
    let mut s = alloc_fragment::<f32, (BM, BN)>();
    let mut p = alloc_fragment::<f16, (BM, BN)>();
    let mut acc = alloc_fragment::<f32, (BM, D)>();
    let mut m = alloc_fragment::<f32, (BM,)>();
    let mut mx = alloc_fragment::<f32, (BM,)>();
    let mut alpha = alloc_fragment::<f32, (BM,)>();
    let mut l = alloc_fragment::<f32, (BM,)>();
    let mut rs = alloc_fragment::<f32, (BM,)>();
    copy(q.at((bh, r0, 0)), &mut q_s);
    fill(&mut m, f32::NEG_INFINITY);
    clear(&mut l);
    clear(&mut acc);
    for kb in pipelined(S.div_ceil(BN), STAGES) {
        copy(k.at((bh, kb * BN, 0)), &mut k_s);
        copy(v.at((bh, kb * BN, 0)), &mut v_s);
        clear(&mut s);
        gemm(&q_s, &k_s.t(), &mut s);
        // Keys past S (zeros from the copy's tail) must not count, in the max nor the sums.
        for (i, j) in parallel(BM, BN) {
            s[(i, j)] = if_then_else(kb * BN + j < S, s[(i, j)], f32::NEG_INFINITY);
        }
        reduce_max(&s, &mut mx, 1);
        for i in parallel(BM) {
            mx[i] = max(m[i], mx[i] * c);
            alpha[i] = exp2(m[i] - mx[i]);
            m[i] = mx[i];
        }
        for (i, j) in parallel(BM, BN) {
            s[(i, j)] = exp2(s[(i, j)] * c - m[i]);
        }
        reduce_sum(&s, &mut rs, 1);
        for i in parallel(BM) {
            l[i] = l[i] * alpha[i] + rs[i];
        }
        copy(&s, &mut p);
        for (i, d) in parallel(BM, D) {
            acc[(i, d)] *= alpha[i];
        }
        gemm(&p, &v_s, &mut acc);
    }
    for (i, d) in parallel(BM, D) {
        acc[(i, d)] /= l[i];
    }
    copy(&acc, o.at_mut((bh, r0, 0)));
}
// ANCHOR_END: attention

/// f32's unit roundoff, for the element-wise arithmetic and the row sums (round to nearest).
const U: f64 = 1.0 / 16_777_216.0; // 2^-24
/// The unit roundoff the `gemm` sums are bounded with: 2^-23, as chapter 08's, which also
/// covers a matrix unit's adders that truncate.
const U_GEMM: f64 = 2.0 * U;
/// `exp2` in f32, relative: what `docs/language.md` checks every backend's f32 math to (2^-20).
const EXP2_ERR: f64 = 1.0 / 1_048_576.0;
/// Keys whose exact weight `w` is below this may round to a subnormal f16 `p` (below 2^-14) in
/// the frame of the block that rounds them; at or above it they never do (module docs,
/// [`check_rows`]).
const SUBNORMAL_W: f64 = 1.0 / 8192.0; // 2^-13

/// The relative tolerance: the output's rounding to f16 (`2^-11`).
pub const RTOL: f64 = 1.0 / 2048.0;

/// `softmax_scale = 1/√D`, as `F.scaled_dot_product_attention` uses by default.
pub fn scale_of(d: usize) -> f64 {
    1.0 / (d as f64).sqrt()
}

/// The kernel's `c`: `scale · log2 e` rounded to f32 (the tolerance counts that rounding).
pub fn c_of(scale: f64) -> f32 {
    (scale * std::f64::consts::LOG2_E) as f32
}

/// `γ_k = k·u / (1 − k·u)`: the relative bound of `k` roundings of `u` each (Higham).
fn gamma(k: f64, u: f64) -> f64 {
    k * u / (1.0 - k * u)
}

/// The exact output row of query `qi` (float64) and what its error bound needs, per column:
/// `A_d = Σ_j w_j·|v_jd| / W`, `H_d = Σ_{j: w_j < 2^-13} |v_jd| / W`, with `w_j = e^{scale·(s_j −
/// max_j s_j)} ≤ 1` the exact weights and `W = Σ_j w_j ≥ 1`.
struct Row {
    out: Vec<f64>,
    a: Vec<f64>,
    h: Vec<f64>,
}

fn exact_row(qi: &[f64], k: &[f64], v: &[f64], d: usize, scale: f64) -> Row {
    let scores: Vec<f64> = k
        .chunks_exact(d)
        .map(|kj| scale * qi.iter().zip(kj).map(|(a, b)| a * b).sum::<f64>())
        .collect();
    let top = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (mut out, mut a, mut h) = (vec![0.0; d], vec![0.0; d], vec![0.0; d]);
    let mut sum = 0.0;
    for (x, vj) in scores.iter().zip(v.chunks_exact(d)) {
        let w = (x - top).exp();
        sum += w;
        for (col, &vv) in vj.iter().enumerate() {
            out[col] += w * vv;
            a[col] += w * vv.abs();
            if w < SUBNORMAL_W {
                h[col] += vv.abs();
            }
        }
    }
    for x in out.iter_mut().chain(&mut a).chain(&mut h) {
        *x /= sum;
    }
    Row { out, a, h }
}

fn widen(x: &[f16]) -> Vec<f64> {
    x.iter().map(|v| v.to_f64()).collect()
}

fn norm(x: &[f64]) -> f64 {
    x.iter().map(|v| v * v).sum::<f64>().sqrt()
}

/// The float64 reference for query rows `rows` (`(bh, row)` pairs) of `Q`, `K`, `V` of shape
/// `(BH, s, d)` (f16, flattened): their `d` outputs each, in the order of `rows`; and the
/// absolute tolerance `atol` (with [`RTOL`]) for the kernel at key block `bn` on those rows.
///
/// The bound, per output element `(i, d)` of a row with exact weights `w_j`, `W`, `A_d` and
/// `H_d` as in the module's reference (`x = scale·s·log2 e` the exponents, `NB = ⌈S / bn⌉` key
/// blocks, `u = 2^-24`, gemm sums at `2^-23`):
///
/// * **Exponents.** `s = q·k` is a gemm sum of `D` exact products: off by at most
///   `γ_D·‖q_i‖·‖k_j‖` (Cauchy–Schwarz), i.e. `γ_D·X` in `x`, with `X = c·‖q_i‖·max_j ‖k_j‖`
///   bounding `|x|` and the running maxima `|m|`. The roundings of `c` itself, of `s·c` and of
///   `s·c − m` add `u·X`, `u·X` and `2u·X`; each rescale's `m_old − m_new` rounds too, and `m`
///   only grows, so those add `2u·X` in all. With `exp2` (`2^-20`) applied to a weight at most
///   `NB` times (its own, one `alpha` per later block), every f32 weight is `F·w_j·(1 + φ_j)`
///   with `F` common to all keys (it cancels) and `|φ_j| ≤ Φ = 2^{δ}·(1 + 2^-20)^NB − 1`,
///   `δ = X·(γ_D + 7u)` (one `u` to spare). Such weights move the output by at most
///   `Φ·Σ_j w_j·|v_jd − O_d| / W ≤ Φ·(A_d + |O_d|)`: numerator and denominator share them.
/// * **P in f16.** The numerator uses `p` rounded to f16: `2^-11` relative, or `2^-25` absolute
///   where `p < 2^-14` is subnormal, which only keys with `w_j < 2^-13` can reach (the block's
///   frame has `p ≥` the final frame's, up to `Φ`); after the rescales and the division by `l`
///   that is at most `2^-24·H_d` (the `2^-25` doubled for the frame factors). Products of two
///   f16 values are exact in f32.
/// * **The P·V sum**: every term passes at most `S` additions in the accumulator (each later
///   block's gemm adds onto it) and `NB` rescales by `alpha`: `γ_{S+NB}` (at `2^-23`) of
///   `Σ_j w_j·|v_jd|`, so `γ_{S+NB}·A_d`.
/// * **The denominator** `l` sums the f32 weights (not the f16 `p`): the block's `reduce_sum`
///   (`BN − 1` additions in any order) and per later block one product and one addition,
///   `γ_{BN−1+2·NB}` relative, so `γ_L·A_d` on the quotient (`|O_d| ≤ A_d`), and the division
///   one `u·A_d`.
/// * **The output's f16 rounding** is [`RTOL`] (`2^-11·|O|`) plus `2^-25` among subnormals.
///
/// `atol = 1.01·max_{i,d} [Φ·(A_d + |O_d|) + (2^-11 + γ_{S+NB})·A_d + 2^-24·H_d +
/// (γ_L + u)·A_d] + 2^-25`, the factor 1.01 covering the second-order products left out above
/// (`(1 + Φ) / (1 − Φ)`, the `2^-11` of the final rounding applied to the error itself; all
/// below 0.5 % while `Φ < 1 %`, which is asserted). At the benches' large size (`S` = 16384)
/// the P·V sum leads (`γ_{S+NB}` is `2^-9`, four times `P`'s `2^-11`); at small `S` with peaked
/// scores the exponents' `Φ` does (`γ_D·X` with `X` near 60). It is a worst-case bound (every
/// rounding the same way, every addition at its largest partial sum): the CPU backend's
/// largest error in the tests (less the `2^-11·|O|` of its rounding) is 10 to 25 times below.
#[allow(clippy::too_many_arguments)]
pub fn check_rows(
    q: &[f16],
    k: &[f16],
    v: &[f16],
    s: usize,
    d: usize,
    scale: f64,
    bn: usize,
    rows: &[(usize, usize)],
) -> (Vec<f64>, f64) {
    let c = c_of(scale) as f64;
    let nb = s.div_ceil(bn) as f64;
    let gamma_n = gamma(s as f64 + nb, U_GEMM);
    let gamma_l = gamma(bn as f64 - 1.0 + 2.0 * nb, U);
    let gamma_d = gamma(d as f64, U_GEMM);
    let mut e: f64 = 0.0;
    let out = exact_rows(q, k, v, s, d, scale, rows, |row, x| {
        let phi = (x * c * (gamma_d + 7.0 * U)).exp2() * (1.0 + EXP2_ERR).powf(nb) - 1.0;
        assert!(phi < 0.01, "attention tolerance: Φ = {phi} is not small");
        for col in 0..d {
            let (o, a, h) = (row.out[col], row.a[col], row.h[col]);
            let bound =
                phi * (a + o.abs()) + (RTOL + gamma_n) * a + 2f64.powi(-24) * h + (gamma_l + U) * a;
            e = e.max(bound);
        }
    });
    (out, 1.01 * e + 2f64.powi(-25))
}

/// [`exact_row`] of each of `rows`, concatenated in their order; `f` sees each row with
/// `‖q_i‖·max_j ‖k_j‖` (over its bh's keys). K and V of a bh are widened once for all its rows.
#[allow(clippy::too_many_arguments)]
fn exact_rows(
    q: &[f16],
    k: &[f16],
    v: &[f16],
    s: usize,
    d: usize,
    scale: f64,
    rows: &[(usize, usize)],
    mut f: impl FnMut(&Row, f64),
) -> Vec<f64> {
    let mut out = vec![0.0; rows.len() * d];
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by_key(|&r| rows[r]);
    let mut cur = None;
    let (mut k64, mut v64, mut kmax) = (Vec::new(), Vec::new(), 0.0);
    for r in order {
        let (b, i) = rows[r];
        assert!(i < s, "row {i} of {s}");
        if cur != Some(b) {
            k64 = widen(&k[b * s * d..(b + 1) * s * d]);
            v64 = widen(&v[b * s * d..(b + 1) * s * d]);
            kmax = k64.chunks_exact(d).map(norm).fold(0.0, f64::max);
            cur = Some(b);
        }
        let qi = widen(&q[(b * s + i) * d..(b * s + i + 1) * d]);
        let row = exact_row(&qi, &k64, &v64, d, scale);
        f(&row, norm(&qi) * kmax);
        out[r * d..(r + 1) * d].copy_from_slice(&row.out);
    }
    out
}

/// The float64 reference of every row: `O` of shape `(bh, s, d)`, flattened.
pub fn reference(
    q: &[f16],
    k: &[f16],
    v: &[f16],
    bh: usize,
    s: usize,
    d: usize,
    scale: f64,
) -> Vec<f64> {
    let rows: Vec<(usize, usize)> = (0..bh).flat_map(|b| (0..s).map(move |i| (b, i))).collect();
    reference_rows(q, k, v, s, d, scale, &rows)
}

/// The float64 reference of some rows (`(bh, row)` pairs), `d` values each in their order:
/// the benches' check at sizes where every row would take minutes.
pub fn reference_rows(
    q: &[f16],
    k: &[f16],
    v: &[f16],
    s: usize,
    d: usize,
    scale: f64,
    rows: &[(usize, usize)],
) -> Vec<f64> {
    exact_rows(q, k, v, s, d, scale, rows, |_, _| {})
}

/// The absolute tolerance ([`check_rows`]) over every row, for key blocks of `bn`.
#[allow(clippy::too_many_arguments)]
pub fn tolerance(
    q: &[f16],
    k: &[f16],
    v: &[f16],
    bh: usize,
    s: usize,
    d: usize,
    scale: f64,
    bn: usize,
) -> f64 {
    let rows: Vec<(usize, usize)> = (0..bh).flat_map(|b| (0..s).map(move |i| (b, i))).collect();
    check_rows(q, k, v, s, d, scale, bn, &rows).1
}

/// Inputs of the tests and the benches: `Q` and `K` uniform in `±qk` (scores of standard
/// deviation `qk²/3` after the scale: `qk` = 3 gives peaked rows, 1 nearly flat ones), `V`
/// uniform in `±1`; each `n` f16 values.
pub fn inputs(rng: &mut Rng, n: usize, qk: f64) -> (Vec<f16>, Vec<f16>, Vec<f16>) {
    (
        rng.vec(n, -qk, qk),
        rng.vec(n, -qk, qk),
        rng.vec(n, -1.0, 1.0),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels::check;

    /// The configs compiled for the test device: the build leaves `d128` out on AMD (over
    /// its 64 KiB of shared memory), where `d128s` serves.
    fn configs() -> Vec<attention::Config> {
        let arch = check::test_device().arch().to_string();
        let all = attention::Config::ALL.iter().copied();
        all.filter(|c| attention::KERNEL.compiled_for(&arch, c.name()))
            .collect()
    }

    /// Config `cfg` on `Q`, `K`, `V` of shape `(bh, s, cfg.D())` into a poisoned output,
    /// against float64 with the derived tolerance.
    #[allow(clippy::too_many_arguments)]
    fn check(
        cfg: attention::Config,
        what: &str,
        (q, k, v): (&[f16], &[f16], &[f16]),
        bh: usize,
        s: usize,
        seed: u64,
    ) {
        let dev = check::test_device();
        let d = cfg.D();
        let scale = scale_of(d);
        let want = reference(q, k, v, bh, s, d, scale);
        let atol = tolerance(q, k, v, bh, s, d, scale, cfg.BN());
        let shape = [bh, s, d];
        let (qt, kt, vt) = (
            dev.upload(q, &shape).unwrap(),
            dev.upload(k, &shape).unwrap(),
            dev.upload(v, &shape).unwrap(),
        );
        let mut o = dev.alloc::<f16>(&shape).unwrap();
        o.poison().unwrap();
        attention::launch(&dev, cfg, &qt, &kt, &vt, &mut o, c_of(scale)).unwrap();
        check::assert_close(
            &format!("attention[{cfg}] {what} {bh}x{s}x{d} (atol {atol:.2e})"),
            &o,
            &want,
            atol,
            RTOL,
            seed,
        );
    }

    /// Every config at `S` below, at and past the key and query blocks (never a multiple of
    /// `BN` or `BM` but for 64: one whole key block), several heads, peaked and flat scores.
    #[test]
    fn every_config_matches_the_reference_with_tails() {
        let seed = Rng::fresh_seed();
        for cfg in configs() {
            let d = cfg.D();
            for (bh, s) in [(1, 1), (2, 77), (3, 130), (1, 64), (2, 321)] {
                for qk in [3.0, 1.0] {
                    let mut rng = Rng::new(seed ^ (bh * 1_000_003 + s * 1009 + d) as u64);
                    let (q, k, v) = inputs(&mut rng, bh * s * d, qk);
                    check(cfg, &format!("q, k in ±{qk}"), (&q, &k, &v), bh, s, seed);
                }
            }
        }
    }

    /// One key: the weight is `2^0 = 1` and `l = 1`, so the output is `V` bit for bit.
    #[test]
    fn one_key_gives_v_itself() {
        let seed = Rng::fresh_seed();
        let dev = check::test_device();
        for cfg in configs() {
            let (bh, d) = (5, cfg.D());
            let (q, k, v) = inputs(&mut Rng::new(seed ^ d as u64), bh * d, 3.0);
            let t = |x: &[f16]| dev.upload(x, &[bh, 1, d]).unwrap();
            let mut o = dev.alloc::<f16>(&[bh, 1, d]).unwrap();
            o.poison().unwrap();
            let c = c_of(scale_of(d));
            attention::launch(&dev, cfg, &t(&q), &t(&k), &t(&v), &mut o, c).unwrap();
            let got = o.to_vec().unwrap();
            assert!(
                got.iter().zip(&v).all(|(g, w)| g.to_bits() == w.to_bits()),
                "attention[{cfg}] with one key (TILELANG_SEED={seed})"
            );
        }
    }

    /// Every score negative (`q > 0`, `k < 0`): a key past `S` left at its score of 0 would be
    /// the row's maximum and take nearly all the weight. The mask must keep it out of the max
    /// and the sums (the test fails without it).
    #[test]
    fn keys_past_the_end_do_not_count_when_every_score_is_negative() {
        let seed = Rng::fresh_seed();
        for cfg in configs() {
            let (bh, s, d) = (2, 77, cfg.D());
            let mut rng = Rng::new(seed ^ 77);
            let q: Vec<f16> = rng.vec(bh * s * d, 0.25, 1.0);
            let k: Vec<f16> = rng.vec(bh * s * d, -1.0, -0.25);
            let v: Vec<f16> = rng.vec(bh * s * d, -1.0, 1.0);
            check(cfg, "negative scores", (&q, &k, &v), bh, s, seed);
        }
    }

    /// Scores up to a few hundred in the log2 domain (`q`, `k` in ±6): most weights underflow
    /// to 0 or to f16 subnormals in `P`, and rows whose maximum comes in a late key block
    /// rescale everything before it by `alpha` far below 1.
    #[test]
    fn peaked_scores_with_late_maxima() {
        let seed = Rng::fresh_seed();
        for cfg in configs() {
            let (bh, s, d) = (2, 250, cfg.D());
            let (q, k, v) = inputs(&mut Rng::new(seed ^ 250), bh * s * d, 6.0);
            check(cfg, "q, k in ±6", (&q, &k, &v), bh, s, seed);
        }
    }
}
