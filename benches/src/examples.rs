//! The benchmarks of the `examples` crate's kernels (`examples/src`), as the suite's chapter
//! `ex` (`TILELANG_BENCH_ONLY=ex`): every kernel at a small size (the `tutorial` size set; a
//! working set of 4 to 64 MiB) and at LLM-sized large ones (`large`: hundreds of MiB, far past
//! the H200's L2), each in its default and autotuned config, checked against float64 first.
//! The norms, SiLU, the transposes and cross-entropy are memory-bound: their records count
//! bytes (each input read once, each output written once); the two GEMMs and attention count
//! flops. `peers/examples.py` measures PyTorch eager and `torch.compile` on the same
//! problems (same variant names, sizes and byte counts), and for attention PyTorch's SDPA on its
//! flash and cuDNN backends.

use crate::checks::{
    against, par_f64, par_finite_f16, par_vec, sampled_gemm, spec, threads, GemmCheck,
};
use crate::record::{SizeSet, Spec, Work};
use crate::runner::Runner;
use examples::transpose as tr;
use examples::{
    attention as att, batched_gemm as bg, cross_entropy as ce, gemm_bias_gelu as gbg,
    layer_norm as ln, rms_norm as rms, silu_mul as silu,
};
use kernels::check::Rng;
use tilelang::{f16, KernelConfig, Result};

/// The chapter name of the examples' records.
pub const CHAPTER: &str = "ex";
const TITLE: &str = "examples";

/// Problem sizes per size set; `examples/README.md`'s table and `peers/examples.py`'s `SIZES`.
pub mod sizes {
    use super::SizeSet::{self, *};

    /// RMSNorm and LayerNorm: `(rows, hidden)`.
    pub fn norm(s: SizeSet) -> (usize, usize) {
        match s {
            Tutorial => (2048, 4096),
            Large => (16_384, 8192),
            Smoke => (5, 1000),
        }
    }
    /// SiLU-gate: `(tokens, intermediate)`; 14336 is LLaMA-3 8B's MLP width.
    pub fn silu_mul(s: SizeSet) -> (usize, usize) {
        match s {
            Tutorial => (2048, 4096),
            Large => (16_384, 14_336),
            Smoke => (17, 300),
        }
    }
    /// Transpose: `(M, N)` of the input.
    pub fn transpose(s: SizeSet) -> (usize, usize) {
        match s {
            Tutorial => (2048, 4096),
            Large => (8192, 8192),
            Smoke => (67, 130),
        }
    }
    /// Batched GEMM: `(batch, size)` of `batch` GEMMs `size³`, the same work as chapter 08's
    /// one GEMM at that size set (8 · 2048³ = 4096³, 8 · 4096³ = 8192³).
    pub fn batched_gemm(s: SizeSet) -> (usize, usize) {
        match s {
            Tutorial => (8, 2048),
            Large => (8, 4096),
            Smoke => (3, 66),
        }
    }
    /// GEMM + bias + GELU: chapter 08's square size, so that its TFLOPS compare with the plain
    /// GEMM's (`gemm pipelined`) of the same run.
    pub fn gemm_bias_gelu(s: SizeSet) -> usize {
        crate::checks::sizes::gemm(s)
    }
    /// Cross-entropy: `(tokens, vocabulary)`; 32000 is LLaMA-2's vocabulary, 128256 LLaMA-3's.
    pub fn cross_entropy(s: SizeSet) -> (usize, usize) {
        match s {
            Tutorial => (1024, 32_000),
            Large => (4096, 128_256),
            Smoke => (9, 5000),
        }
    }
    /// Attention: `(BH, S)` (batch · heads, sequence), at both head sizes (`D` = 128 and 64).
    pub fn attention(s: SizeSet) -> (usize, usize) {
        match s {
            Tutorial => (32, 4096),
            Large => (32, 16_384),
            Smoke => (3, 77),
        }
    }
}

fn sp(variant: &str, size: SizeSet, shape: Vec<usize>, dtype: &'static str, bytes: f64) -> Spec {
    spec(
        CHAPTER,
        TITLE,
        variant,
        size,
        shape,
        dtype,
        Work::Bytes(bytes),
    )
}

/// `f` over the rows `0..rows`, in parallel chunks of whole rows, the results concatenated.
fn par_rows(rows: usize, f: impl Fn(std::ops::Range<usize>) -> Vec<f64> + Sync) -> Vec<f64> {
    let per = rows.div_ceil(threads()).max(1);
    let parts: Vec<Vec<f64>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..rows)
            .step_by(per)
            .map(|r0| {
                let f = &f;
                s.spawn(move || f(r0..(r0 + per).min(rows)))
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().expect("reference"))
            .collect()
    });
    parts.into_iter().flatten().collect()
}

/// The loosest of a tolerance over the configs of a kernel (the bounds depend on the chunk
/// width): one check for the default and the tuned config alike.
fn loosest<C: KernelConfig>(tol: impl Fn(C) -> (f64, f64)) -> (f64, f64) {
    C::ALL
        .iter()
        .map(|&c| tol(c))
        .fold((0.0, 0.0), |(a, r), (a2, r2)| (a.max(a2), r.max(r2)))
}

/// Every example at one size set.
pub fn run(r: &mut Runner, size: SizeSet) -> Result<()> {
    rms_norm(r, size)?;
    layer_norm(r, size)?;
    silu_mul(r, size)?;
    transpose(r, size)?;
    cross_entropy(r, size)?;
    batched_gemm(r, size)?;
    gemm_bias_gelu(r, size)?;
    attention(r, size)
}

fn rms_norm(r: &mut Runner, size: SizeSet) -> Result<()> {
    let (m, n) = sizes::norm(size);
    let dev = r.dev.clone();
    let xv = par_vec::<f16>(r.opts.seed ^ 101, m * n, -4.0, 4.0);
    let wv = Rng::new(r.opts.seed ^ 102).vec::<f16>(n, -2.0, 2.0);
    let (x64, w64) = (par_f64(&xv), par_f64(&wv));
    let want = par_rows(m, |rows| {
        rms::reference(&x64[rows.start * n..rows.end * n], &w64, n, rms::EPS as f64)
    });
    drop(x64);
    let x = dev.upload(&xv, &[m, n])?;
    let w = dev.upload(&wv, &[n])?;
    drop(xv);
    let mut y = dev.alloc::<f16>(&[m, n])?;
    let (atol, rtol) = loosest(|c: rms::rms_norm::Config| rms::tolerance(n, c.BN()));
    let s = sp(
        "rmsnorm",
        size,
        vec![m, n],
        "f16, f32 accumulate",
        2.0 * (2 * m * n + n) as f64,
    );
    r.kernel(&s, &mut y, &against(&want, atol, rtol), &mut |cfg, y| {
        rms::rms_norm::launch(&dev, cfg, &x, &w, y, rms::EPS)
    });
    Ok(())
}

fn layer_norm(r: &mut Runner, size: SizeSet) -> Result<()> {
    let (m, n) = sizes::norm(size);
    let dev = r.dev.clone();
    let xv = par_vec::<f16>(r.opts.seed ^ 103, m * n, -4.0, 4.0);
    let mut rng = Rng::new(r.opts.seed ^ 104);
    let (wv, bv) = (rng.vec::<f16>(n, -2.0, 2.0), rng.vec::<f16>(n, -1.0, 1.0));
    let (x64, w64, b64) = (par_f64(&xv), par_f64(&wv), par_f64(&bv));
    let want = par_rows(m, |rows| {
        ln::reference(
            &x64[rows.start * n..rows.end * n],
            &w64,
            &b64,
            n,
            ln::EPS as f64,
        )
    });
    let (atol, rtol) = loosest(|c: ln::layer_norm::Config| {
        // Per row, in parallel: the bound is a maximum over rows.
        let per_row = par_rows(m, |rows| {
            let x = &x64[rows.start * n..rows.end * n];
            let (a, r) = ln::tolerance(x, &w64, &b64, n, c.BN(), ln::EPS as f64);
            vec![a, r]
        });
        per_row.chunks_exact(2).fold((0.0, 0.0), |(a, r), p| {
            (f64::max(a, p[0]), f64::max(r, p[1]))
        })
    });
    drop(x64);
    let x = dev.upload(&xv, &[m, n])?;
    let w = dev.upload(&wv, &[n])?;
    let b = dev.upload(&bv, &[n])?;
    drop(xv);
    let mut y = dev.alloc::<f16>(&[m, n])?;
    let s = sp(
        "layernorm",
        size,
        vec![m, n],
        "f16, f32 accumulate",
        2.0 * (2 * m * n + 2 * n) as f64,
    );
    r.kernel(&s, &mut y, &against(&want, atol, rtol), &mut |cfg, y| {
        ln::layer_norm::launch(&dev, cfg, &x, &w, &b, y, ln::EPS)
    });
    Ok(())
}

fn silu_mul(r: &mut Runner, size: SizeSet) -> Result<()> {
    let (m, n) = sizes::silu_mul(size);
    let dev = r.dev.clone();
    let av = par_vec::<f16>(r.opts.seed ^ 105, m * n, -4.0, 4.0);
    let bv = par_vec::<f16>(r.opts.seed ^ 106, m * n, -4.0, 4.0);
    let (a64, b64) = (par_f64(&av), par_f64(&bv));
    let want = par_rows(m, |rows| {
        let e = rows.start * n..rows.end * n;
        silu::reference(&a64[e.clone()], &b64[e])
    });
    drop((a64, b64));
    let a = dev.upload(&av, &[m, n])?;
    let b = dev.upload(&bv, &[m, n])?;
    drop((av, bv));
    let mut out = dev.alloc::<f16>(&[m, n])?;
    let s = sp(
        "silu_mul",
        size,
        vec![m, n],
        "f16, f32 math",
        2.0 * 3.0 * (m * n) as f64,
    );
    r.kernel(
        &s,
        &mut out,
        &against(&want, silu::ATOL, silu::RTOL),
        &mut |cfg, o| silu::silu_mul::launch(&dev, cfg, &a, &b, o),
    );
    Ok(())
}

fn transpose(r: &mut Runner, size: SizeSet) -> Result<()> {
    let (m, n) = sizes::transpose(size);
    let dev = r.dev.clone();
    let xv = par_finite_f16(r.opts.seed ^ 107, m * n);
    let want = par_f64(&tr::reference(&xv, m, n));
    let x = dev.upload(&xv, &[m, n])?;
    drop(xv);
    let mut y = dev.alloc::<f16>(&[n, m])?;
    let s = sp(
        "transpose",
        size,
        vec![m, n],
        "f16",
        2.0 * 2.0 * (m * n) as f64,
    );
    r.kernel(&s, &mut y, &against(&want, 0.0, 0.0), &mut |cfg, y| {
        tr::transpose::launch(&dev, cfg, &x, y)
    });
    let s = sp(
        "transpose padded",
        size,
        vec![m, n],
        "f16",
        2.0 * 2.0 * (m * n) as f64,
    );
    r.kernel(&s, &mut y, &against(&want, 0.0, 0.0), &mut |cfg, y| {
        tr::transpose_padded::launch(&dev, cfg, &x, y)
    });
    Ok(())
}

fn cross_entropy(r: &mut Runner, size: SizeSet) -> Result<()> {
    let (m, v) = sizes::cross_entropy(size);
    let dev = r.dev.clone();
    let xv = par_vec::<f16>(r.opts.seed ^ 108, m * v, -4.0, 4.0);
    let mut rng = Rng::new(r.opts.seed ^ 109);
    let tv: Vec<i32> = (0..m)
        .map(|i| {
            if i % 16 == 5 {
                ce::IGNORE
            } else {
                (rng.next_u64() % v as u64) as i32
            }
        })
        .collect();
    let want = par_rows(m, |rows| {
        ce::reference(&xv[rows.start * v..rows.end * v], &tv[rows.clone()], v)
    });
    let (atol, _) = loosest(|c: ce::cross_entropy::Config| {
        let per_row = par_rows(m, |rows| {
            vec![ce::tolerance(
                &xv[rows.start * v..rows.end * v],
                &tv[rows],
                v,
                c.BN(),
            )]
        });
        (per_row.into_iter().fold(0.0, f64::max), 0.0)
    });
    let x = dev.upload(&xv, &[m, v])?;
    let t = dev.upload(&tv, &[m])?;
    drop(xv);
    let mut loss = dev.alloc::<f32>(&[m])?;
    let s = sp(
        "cross_entropy",
        size,
        vec![m, v],
        "f16 logits, i32 targets, f32 loss",
        (2 * m * v + 4 * m + 4 * m) as f64,
    );
    r.kernel(&s, &mut loss, &against(&want, atol, 0.0), &mut |cfg, l| {
        ce::cross_entropy::launch(&dev, cfg, &x, &t, l)
    });
    Ok(())
}

/// Batched GEMM, checked as chapter 08 checks its GEMM (`GemmCheck`): against float64
/// everywhere at the smoke size, at 4096 sampled elements (512 a batch of 8, with every
/// batch's corners) at the others, where the full product would take minutes on the host; the
/// tolerance is chapter 08's, the loosest over the batch.
fn batched_gemm(r: &mut Runner, size: SizeSet) -> Result<()> {
    let (batch, s) = sizes::batched_gemm(size);
    let dev = r.dev.clone();
    let av = par_vec::<f16>(r.opts.seed ^ 111, batch * s * s, -1.0, 1.0);
    let bv = par_vec::<f16>(r.opts.seed ^ 112, batch * s * s, -1.0, 1.0);
    let (a64, b64) = (par_f64(&av), par_f64(&bv));
    let tol = bg::tolerance(&a64, &b64, batch, s, s, s);
    let per = s * s;
    // Chapter 08's checks per batch: the sampled elements (corners included) of each, shifted
    // to its place in C.
    let gc = if size == SizeSet::Smoke {
        GemmCheck::Full(bg::reference(&a64, &b64, batch, s, s, s))
    } else {
        let samples = (0..batch)
            .flat_map(|i| {
                let (a, b) = (&a64[i * per..(i + 1) * per], &b64[i * per..(i + 1) * per]);
                sampled_gemm(a, b, (s, s, s), 4096 / batch, r.opts.seed ^ 113 ^ i as u64)
                    .into_iter()
                    .map(move |(e, v)| (i * per + e, v))
            })
            .collect();
        GemmCheck::Sampled {
            samples,
            vendor: None,
        }
    };
    drop((a64, b64));
    let a = dev.upload(&av, &[batch, s, s])?;
    let b = dev.upload(&bv, &[batch, s, s])?;
    drop((av, bv));
    let mut c = dev.alloc::<f16>(&[batch, s, s])?;
    let sp = spec(
        CHAPTER,
        TITLE,
        "batched_gemm",
        size,
        vec![batch, s, s, s],
        "f16, f32 accumulate",
        Work::Flops(2.0 * batch as f64 * (s as f64).powi(3)),
    );
    let check = |got: &[f16]| gc.verdict(got, tol);
    r.kernel(&sp, &mut c, &check, &mut |cfg, c| {
        bg::batched_gemm::launch(&dev, cfg, &a, &b, c)
    });
    Ok(())
}

/// GEMM + bias + GELU at chapter 08's size, checked as chapter 08 checks its GEMM: against
/// float64 everywhere at the smoke size, at 4096 sampled elements (corners included) at the
/// others. The tolerance is `gemm_bias_gelu.rs`'s, scaled by the largest pre-activation among
/// the elements checked.
fn gemm_bias_gelu(r: &mut Runner, size: SizeSet) -> Result<()> {
    let s = sizes::gemm_bias_gelu(size);
    let dev = r.dev.clone();
    let av = par_vec::<f16>(r.opts.seed ^ 121, s * s, -1.0, 1.0);
    let bv = par_vec::<f16>(r.opts.seed ^ 122, s * s, -1.0, 1.0);
    let biasv = par_vec::<f16>(r.opts.seed ^ 123, s, -2.0, 2.0);
    let (a64, b64, bias64) = (par_f64(&av), par_f64(&bv), par_f64(&biasv));
    let pre: Vec<(usize, f64)> = if size == SizeSet::Smoke {
        kernels::ch08_gemm::reference_gemm(&a64, &b64, s, s, s)
            .into_iter()
            .enumerate()
            .collect()
    } else {
        sampled_gemm(&a64, &b64, (s, s, s), 4096, r.opts.seed ^ 124)
    };
    let pre: Vec<(usize, f64)> = pre
        .into_iter()
        .map(|(e, v)| (e, v + bias64[e % s]))
        .collect();
    let largest = pre.iter().map(|(_, v)| v.abs()).fold(0.0, f64::max);
    let tol = gbg::tolerance(&a64, &b64, s, s, s, largest);
    let want: Vec<(usize, f64)> = pre.iter().map(|&(e, v)| (e, gbg::gelu64(v))).collect();
    let gc = if size == SizeSet::Smoke {
        GemmCheck::Full(want.iter().map(|&(_, v)| v).collect())
    } else {
        GemmCheck::Sampled {
            samples: want,
            vendor: None,
        }
    };
    drop((a64, b64, bias64));
    let a = dev.upload(&av, &[s, s])?;
    let b = dev.upload(&bv, &[s, s])?;
    let bias = dev.upload(&biasv, &[s])?;
    drop((av, bv, biasv));
    let mut c = dev.alloc::<f16>(&[s, s])?;
    let sp = spec(
        CHAPTER,
        TITLE,
        "gemm_bias_gelu",
        size,
        vec![s, s, s],
        "f16, f32 accumulate",
        Work::Flops(2.0 * (s as f64).powi(3)),
    );
    let check = |got: &[f16]| gc.verdict(got, tol);
    r.kernel(&sp, &mut c, &check, &mut |cfg, c| {
        gbg::gemm_bias_gelu::launch(&dev, cfg, &a, &b, &bias, c)
    });
    Ok(())
}

/// The range of attention's `Q` and `K` (uniform in `±3`: scores of standard deviation 3 after
/// the scale, rows peaked enough that the check sees a wrong key block); `V` is uniform in `±1`.
/// `peers/examples.py` draws the same.
const ATTENTION_QK: f64 = 3.0;

/// Query rows checked at the sizes where every row would take minutes on the host: this many
/// at random, plus every head's first and last row.
const ATTENTION_SAMPLED_ROWS: usize = 256;

/// Attention at `D` = 128 (variant `attention_d128`, configs `d128`, `d128s`) and `D` = 64
/// (`attention_d64`, `d64`, `d64s`): `D` is a const generic, so each variant is tuned among
/// the configs of its head size that the build compiled for the device (the first is the
/// default). Flops `4·BH·S²·D` (the two products, as
/// FlashAttention counts them). Checked against float64 at every row at the smoke size, else at
/// 256 random rows plus every head's first and last row, with `attention::check_rows`'s
/// tolerance over the rows checked.
fn attention(r: &mut Runner, size: SizeSet) -> Result<()> {
    let (bh, s) = sizes::attention(size);
    let dev = r.dev.clone();
    let variants = [("attention_d128", 128, 131), ("attention_d64", 64, 135)];
    for (variant, d, salt) in variants {
        // The configs of this head size compiled for the device (the first is the default).
        let configs: Vec<att::attention::Config> = att::attention::Config::ALL
            .iter()
            .copied()
            .filter(|c| c.D() == d && att::attention::KERNEL.compiled_for(dev.arch(), c.name()))
            .collect();
        let names: Vec<&str> = configs.iter().map(|c| c.name()).collect();
        let cfg = configs[0];
        // The tolerance grows with the number of key blocks: the smallest BN bounds them all.
        let bn = configs.iter().map(|c| c.BN()).min().expect("a config");
        let n = bh * s * d;
        let qv = par_vec::<f16>(r.opts.seed ^ salt, n, -ATTENTION_QK, ATTENTION_QK);
        let kv = par_vec::<f16>(r.opts.seed ^ (salt + 1), n, -ATTENTION_QK, ATTENTION_QK);
        let vv = par_vec::<f16>(r.opts.seed ^ (salt + 2), n, -1.0, 1.0);
        let scale = att::scale_of(d);
        let mut rows: Vec<(usize, usize)> = if size == SizeSet::Smoke {
            (0..bh).flat_map(|b| (0..s).map(move |i| (b, i))).collect()
        } else {
            let mut rng = Rng::new(r.opts.seed ^ (salt + 3));
            (0..ATTENTION_SAMPLED_ROWS)
                .map(|_| {
                    let e = (rng.next_u64() % (bh * s) as u64) as usize;
                    (e / s, e % s)
                })
                .chain((0..bh).flat_map(|b| [(b, 0), (b, s - 1)]))
                .collect()
        };
        rows.sort_unstable();
        rows.dedup();
        // In parallel over contiguous runs of rows (each run widens the K and V of few heads).
        let per = rows.len().div_ceil(threads()).max(1);
        let parts: Vec<(Vec<f64>, f64)> = std::thread::scope(|sc| {
            let hs: Vec<_> = rows
                .chunks(per)
                .map(|part| {
                    let (q, k, v) = (&qv, &kv, &vv);
                    sc.spawn(move || att::check_rows(q, k, v, s, d, scale, bn, part))
                })
                .collect();
            hs.into_iter()
                .map(|h| h.join().expect("reference"))
                .collect()
        });
        let atol = parts.iter().map(|p| p.1).fold(0.0, f64::max);
        let want: Vec<f64> = parts.into_iter().flat_map(|p| p.0).collect();
        let gc = if size == SizeSet::Smoke {
            GemmCheck::Full(want)
        } else {
            let samples = rows
                .iter()
                .enumerate()
                .flat_map(|(j, &(b, i))| {
                    let want = &want;
                    (0..d).map(move |col| ((b * s + i) * d + col, want[j * d + col]))
                })
                .collect();
            GemmCheck::Sampled {
                samples,
                vendor: None,
            }
        };
        let shape = [bh, s, d];
        let q = dev.upload(&qv, &shape)?;
        let k = dev.upload(&kv, &shape)?;
        let v = dev.upload(&vv, &shape)?;
        drop((qv, kv, vv));
        let mut o = dev.alloc::<f16>(&shape)?;
        let sp = spec(
            CHAPTER,
            TITLE,
            variant,
            size,
            shape.to_vec(),
            "f16, f32 accumulate and softmax",
            Work::Flops(4.0 * bh as f64 * (s as f64).powi(2) * d as f64),
        );
        let c = att::c_of(scale);
        let check = |got: &[f16]| gc.verdict(got, (atol, att::RTOL));
        r.kernel_configs(&sp, &names, cfg.name(), &mut o, &check, &mut |cfg, o| {
            att::attention::launch(&dev, cfg, &q, &k, &v, o, c)
        });
    }
    Ok(())
}
