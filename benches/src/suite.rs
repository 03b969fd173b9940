//! The benchmarks: every kernel and variant of the ten tutorials at the tutorial sizes and at
//! large sizes, the vendor baselines (cuBLAS and cuBLASLt for the GEMMs, cuDNN for softmax and
//! conv1d, the driver's copy), the bandwidth ceiling and the launch latency. Each chapter function builds inputs, computes the reference once, and
//! hands every kernel to the [`Runner`].

use crate::checks::*;
use crate::dequant::dequant_w4;
use crate::record::{SizeSet, Spec, Verdict, Work};
use crate::runner::Runner;
use crate::vendor::{cudnn, Conv1d, Softmax};
use kernels::check::Rng;
use kernels::{
    ch01_copy as c01, ch02_vector_add as c02, ch03_outer_add as c03, ch04_broadcast_relu as c04,
    ch05_row_sum as c05, ch06_softmax as c06, ch07_flash_attention as c07, ch08_gemm as c08,
    ch09_conv1d as c09, ch10_w4a16 as c10,
};
use tilelang::{f16, Result};

/// Runs every selected chapter at every selected size, then the ceiling and the launch
/// latency. A chapter that fails (an allocation, an upload) is a failure line, not an abort.
pub fn run_all(r: &mut Runner) {
    type Chapter = fn(&mut Runner, SizeSet) -> Result<()>;
    let chapters: [(&str, Chapter); 10] = [
        ("01", ch01),
        ("02", ch02),
        ("03", ch03),
        ("04", ch04),
        ("05", ch05),
        ("06", ch06),
        ("07", ch07),
        ("08", ch08),
        ("09", ch09),
        ("10", ch10),
    ];
    let sizes = r.opts.sizes.clone();
    if r.is_gpu() && r.opts.wants("ceiling") {
        if let Err(e) = ceiling(r) {
            r.failures.push(format!("ceiling: {e}"));
        }
    }
    for (name, f) in chapters {
        if !r.opts.wants(name) {
            continue;
        }
        for &size in &sizes {
            eprintln!("chapter {name}, {} sizes", size.name());
            if let Err(e) = f(r, size) {
                r.failures
                    .push(format!("chapter {name} ({} sizes): {e}", size.name()));
            }
        }
    }
    // The examples crate's kernels (benches/src/examples.rs), as one more "chapter", `ex`.
    if r.opts.wants(crate::examples::CHAPTER) {
        for &size in &sizes {
            eprintln!("examples, {} sizes", size.name());
            if let Err(e) = crate::examples::run(r, size) {
                r.failures
                    .push(format!("examples ({} sizes): {e}", size.name()));
            }
        }
    }
    // With every chapter selected, every kernel of the one list must have been benched; so
    // must every kernel of examples::KERNELS.
    if r.opts.chapters.is_none() && sizes.iter().any(|&s| s != SizeSet::Large) {
        for k in kernels::KERNELS {
            if !r.benched.contains(&k.name) {
                r.failures.push(format!(
                    "kernel `{}` (kernels::KERNELS) is benched by no chapter of benches/src/suite.rs",
                    k.name
                ));
            }
        }
        for k in examples::KERNELS {
            if !r.benched.contains(&k.name) {
                r.failures.push(format!(
                    "kernel `{}` (examples::KERNELS) is benched by no example of benches/src/examples.rs",
                    k.name
                ));
            }
        }
    }
    if r.opts.wants("launch") {
        if let Err(e) = launch_overhead(r) {
            r.failures.push(format!("launch overhead: {e}"));
        }
    }
}

/// Element-wise f16 results are one rounding of an exact value (chapters 02-04).
const F16_RTOL: f64 = 1.0 / 1024.0;
const F16_ATOL: f64 = 1e-6;

// ---------------------------------------------------------------------------------------------
// The chapters.

/// The bandwidth ceiling: the driver's device-to-device copy of a 2 GiB buffer.
fn ceiling(r: &mut Runner) -> Result<()> {
    let n = (2usize << 30) / 2;
    let dev = r.dev.clone();
    let src = dev.upload(&par_finite_f16(r.opts.seed, n), &[n])?;
    let mut dst = dev.alloc::<f16>(&[n])?;
    let sp = spec(
        "ceiling",
        "bandwidth ceiling",
        "d2d copy",
        SizeSet::Large,
        vec![n],
        "f16",
        Work::Bytes(2.0 * 2.0 * n as f64),
    );
    let want = par_f64(&src.to_vec()?);
    let check = against::<f16>(&want, 0.0, 0.0);
    copy_baseline(r, &sp, &src, &mut dst, &check);
    Ok(())
}

/// The driver's device-to-device copy of `src` into `dst` as a baseline: CUDA's, or HIP's with
/// the `rocm` feature (none on the CPU).
fn copy_baseline(
    r: &mut Runner,
    sp: &Spec,
    src: &tilelang::Tensor<f16>,
    dst: &mut tilelang::Tensor<f16>,
    check: &dyn Fn(&[f16]) -> Verdict,
) {
    let dev = r.dev.clone();
    if r.is_cuda() {
        r.baseline(sp, "cuda", "cuMemcpyDtoDAsync", dst, check, &mut |d| {
            crate::vendor::copy_d2d(&dev, src, d)
        });
    }
    #[cfg(feature = "rocm")]
    if r.is_hip() {
        r.baseline(sp, "hip", "hipMemcpyDtoDAsync", dst, check, &mut |d| {
            crate::rocm::copy_d2d(&dev, src, d)
        });
    }
}

fn ch01(r: &mut Runner, size: SizeSet) -> Result<()> {
    let n = sizes::copy(size);
    let dev = r.dev.clone();
    let av = par_finite_f16(r.opts.seed ^ 1, n);
    let want = par_f64(&av);
    let a = dev.upload(&av, &[n])?;
    drop(av);
    let mut b = dev.alloc::<f16>(&[n])?;
    let work = Work::Bytes(2.0 * 2.0 * n as f64);
    let check = against::<f16>(&want, 0.0, 0.0);
    // The one-thread and one-block copies are the tutorial's first steps; at the large size a
    // launch takes seconds to minutes and measures nothing new.
    if size != SizeSet::Large {
        let sp = spec("01", "copy", "copy 1 thread", size, vec![n], "f16", work);
        r.kernel(&sp, &mut b, &check, &mut |cfg, b| {
            c01::copy_one_thread::launch(&dev, cfg, &a, b)
        });
        let sp = spec("01", "copy", "copy 1 block", size, vec![n], "f16", work);
        r.kernel(&sp, &mut b, &check, &mut |cfg, b| {
            c01::copy_one_block::launch(&dev, cfg, &a, b)
        });
    }
    let sp = spec("01", "copy", "copy", size, vec![n], "f16", work);
    r.kernel(&sp, &mut b, &check, &mut |cfg, b| {
        c01::copy_tiled::launch(&dev, cfg, &a, b)
    });
    copy_baseline(r, &sp, &a, &mut b, &check);
    Ok(())
}

fn ch02(r: &mut Runner, size: SizeSet) -> Result<()> {
    let n = sizes::add(size);
    let dev = r.dev.clone();
    let av = par_vec::<f16>(r.opts.seed ^ 2, n, -4.0, 4.0);
    let bv = par_vec::<f16>(r.opts.seed ^ 3, n, -4.0, 4.0);
    let (a64, b64) = (par_f64(&av), par_f64(&bv));
    let a = dev.upload(&av, &[n])?;
    let b = dev.upload(&bv, &[n])?;
    drop((av, bv));
    let mut c = dev.alloc::<f16>(&[n])?;
    let work = Work::Bytes(3.0 * 2.0 * n as f64);

    let want = c02::reference_add(&a64, &b64);
    let sp = spec("02", "vector add", "vector add", size, vec![n], "f16", work);
    r.kernel(
        &sp,
        &mut c,
        &against(&want, F16_ATOL, F16_RTOL),
        &mut |cfg, c| c02::vector_add::launch(&dev, cfg, &a, &b, c),
    );
    let want = c02::reference_mul_relu(&a64, &b64);
    let sp = spec("02", "vector add", "mul+relu", size, vec![n], "f16", work);
    r.kernel(
        &sp,
        &mut c,
        &against(&want, F16_ATOL, F16_RTOL),
        &mut |cfg, c| c02::mul_relu::launch(&dev, cfg, &a, &b, c),
    );
    Ok(())
}

fn ch03(r: &mut Runner, size: SizeSet) -> Result<()> {
    let (m, n) = sizes::outer(size);
    let dev = r.dev.clone();
    let av = par_vec::<f16>(r.opts.seed ^ 4, m, -4.0, 4.0);
    let bv = par_vec::<f16>(r.opts.seed ^ 5, n, -4.0, 4.0);
    let want = c03::reference_outer_add(&par_f64(&av), &par_f64(&bv));
    let a = dev.upload(&av, &[m])?;
    let b = dev.upload(&bv, &[n])?;
    let mut c = dev.alloc::<f16>(&[m, n])?;
    let work = Work::Bytes(2.0 * (m + n + m * n) as f64);
    let check = against::<f16>(&want, F16_ATOL, F16_RTOL);
    let sp = spec(
        "03",
        "outer add",
        "outer add",
        size,
        vec![m, n],
        "f16",
        work,
    );
    r.kernel(&sp, &mut c, &check, &mut |cfg, c| {
        c03::outer_add::launch(&dev, cfg, &a, &b, c)
    });
    let sp = spec(
        "03",
        "outer add",
        "outer add staged",
        size,
        vec![m, n],
        "f16",
        work,
    );
    r.kernel(&sp, &mut c, &check, &mut |cfg, c| {
        c03::outer_add_staged::launch(&dev, cfg, &a, &b, c)
    });
    Ok(())
}

fn ch04(r: &mut Runner, size: SizeSet) -> Result<()> {
    let (m, n) = sizes::broadcast(size);
    let dev = r.dev.clone();
    let av = par_vec::<f16>(r.opts.seed ^ 6, m * n, -4.0, 4.0);
    let bv = par_vec::<f16>(r.opts.seed ^ 7, n, -4.0, 4.0);
    let gv = par_vec::<f16>(r.opts.seed ^ 8, m * n, -4.0, 4.0);
    let (a64, b64) = (par_f64(&av), par_f64(&bv));
    let a = dev.upload(&av, &[m, n])?;
    let b = dev.upload(&bv, &[n])?;
    let dc = dev.upload(&gv, &[m, n])?;
    drop(av);
    let mut out = dev.alloc::<f16>(&[m, n])?;
    {
        let want = c04::reference_fwd(&a64, &b64);
        let work = Work::Bytes(2.0 * (2 * m * n + n) as f64);
        let sp = spec(
            "04",
            "broadcast mul+ReLU",
            "fwd",
            size,
            vec![m, n],
            "f16",
            work,
        );
        r.kernel(
            &sp,
            &mut out,
            &against(&want, F16_ATOL, F16_RTOL),
            &mut |cfg, c| c04::broadcast_relu_fwd::launch(&dev, cfg, &a, &b, c),
        );
    }
    let want = c04::reference_bwd(&a64, &b64, &par_f64(&gv));
    drop(gv);
    let work = Work::Bytes(2.0 * (3 * m * n + n) as f64);
    let sp = spec(
        "04",
        "broadcast mul+ReLU",
        "bwd",
        size,
        vec![m, n],
        "f16",
        work,
    );
    r.kernel(
        &sp,
        &mut out,
        &against(&want, F16_ATOL, F16_RTOL),
        &mut |cfg, da| c04::broadcast_relu_bwd::launch(&dev, cfg, &a, &b, &dc, da),
    );
    Ok(())
}

fn ch05(r: &mut Runner, size: SizeSet) -> Result<()> {
    let (m, n) = sizes::row_sum(size);
    let dev = r.dev.clone();
    let av = par_vec::<f32>(r.opts.seed ^ 9, m * n, 0.0, 1.0);
    let want = c05::reference_row_sum(&av, n);
    let a = dev.upload(&av, &[m, n])?;
    drop(av);
    let mut b = dev.alloc::<f32>(&[m])?;
    let work = Work::Bytes(4.0 * (m * n + m) as f64);
    let sp = spec(
        "05",
        "row reduce-sum",
        "row sum",
        size,
        vec![m, n],
        "f32",
        work,
    );
    r.kernel(
        &sp,
        &mut b,
        &against(&want, 0.0, c05::gamma(n)),
        &mut |cfg, b| c05::row_sum::launch(&dev, cfg, &a, b),
    );
    Ok(())
}

/// Chapters 06 and 07's tolerances against float64 (see their docs): relative 5e-5, and
/// 1e-36 absolute for values below f32's normal range.
const SOFTMAX_RTOL: f64 = 5e-5;
const SOFTMAX_ATOL: f64 = 1e-36;

fn ch06(r: &mut Runner, size: SizeSet) -> Result<()> {
    let (m, n) = sizes::softmax(size);
    let dev = r.dev.clone();
    let av = par_vec::<f32>(r.opts.seed ^ 10, m * n, -4.0, 4.0);
    let want = c06::reference_softmax(&par_f64(&av), m, n);
    let a = dev.upload(&av, &[m, n])?;
    drop(av);
    let mut b = dev.alloc::<f32>(&[m, n])?;
    let work = Work::Bytes(2.0 * 4.0 * (m * n) as f64);
    let check = against::<f32>(&want, SOFTMAX_ATOL, SOFTMAX_RTOL);
    let sp = spec(
        "06",
        "softmax",
        "softmax 3-pass",
        size,
        vec![m, n],
        "f32",
        work,
    );
    r.kernel(&sp, &mut b, &check, &mut |cfg, b| {
        c06::softmax_3pass::launch(&dev, cfg, &a, b)
    });
    let sp = spec(
        "06",
        "softmax",
        "softmax online",
        size,
        vec![m, n],
        "f32",
        work,
    );
    r.kernel(&sp, &mut b, &check, &mut |cfg, b| {
        c06::softmax_online::launch(&dev, cfg, &a, b)
    });
    let sp = spec(
        "06",
        "softmax",
        "softmax whole row",
        size,
        vec![m, n],
        "f32",
        work,
    );
    r.kernel(&sp, &mut b, &check, &mut |cfg, b| {
        c06::softmax_row::launch(&dev, cfg, &a, b)
    });
    // cuDNN's row softmax (the descriptor is made once, outside the timed region).
    if r.is_cuda() {
        if let Ok(dnn) = r.dnn() {
            let sp = spec("06", "softmax", "softmax", size, vec![m, n], "f32", work);
            match Softmax::new(&dnn, m, n) {
                Ok(sm) => r.baseline(&sp, "cudnn", &sm.description(), &mut b, &check, &mut |b| {
                    sm.forward(&a, b)
                }),
                Err(e) => r.baseline(
                    &sp,
                    "cudnn",
                    "cudnnSoftmaxForward",
                    &mut b,
                    &check,
                    &mut |_| Err(e.clone()),
                ),
            };
        }
    }
    // MIOpen's (its descriptor is made on the untimed first call, the check).
    #[cfg(feature = "rocm")]
    if r.is_hip() {
        if let Ok(mi) = r.miopen() {
            let sp = spec("06", "softmax", "softmax", size, vec![m, n], "f32", work);
            r.baseline(
                &sp,
                "miopen",
                "miopenSoftmaxForward_V2 accurate, instance mode",
                &mut b,
                &check,
                &mut |b| mi.softmax_f32(&a, b, (m, n)),
            );
        }
    }
    Ok(())
}

fn ch07(r: &mut Runner, size: SizeSet) -> Result<()> {
    let (m, n) = sizes::flash(size);
    let dev = r.dev.clone();
    let s = r.opts.seed;
    let qv = par_vec::<f32>(s ^ 11, m * n, -2.0, 2.0);
    let kv = par_vec::<f32>(s ^ 12, m * n, -2.0, 2.0);
    let vv = par_vec::<f32>(s ^ 13, m * n, -2.0, 2.0);
    let want = c07::reference_flash(&par_f64(&qv), &par_f64(&kv), &par_f64(&vv), m, n);
    let q = dev.upload(&qv, &[m, n])?;
    let k = dev.upload(&kv, &[m, n])?;
    let v = dev.upload(&vv, &[m, n])?;
    drop((qv, kv, vv));
    let mut o = dev.alloc::<f32>(&[m, n])?;
    let work = Work::Bytes(4.0 * 4.0 * (m * n) as f64);
    let check = against::<f32>(&want, SOFTMAX_ATOL, SOFTMAX_RTOL);
    let sp = |variant| {
        spec(
            "07",
            "scalar flash attention",
            variant,
            size,
            vec![m, n],
            "f32",
            work,
        )
    };
    let (three, two, row) = (
        sp("flash attn 3-pass"),
        sp("flash attn 2-pass"),
        sp("flash attn whole row"),
    );
    r.kernel(&three, &mut o, &check, &mut |cfg, o| {
        c07::flash_attn_3pass::launch(&dev, cfg, &q, &k, &v, o)
    });
    r.kernel(&two, &mut o, &check, &mut |cfg, o| {
        c07::flash_attn_2pass::launch(&dev, cfg, &q, &k, &v, o)
    });
    r.kernel(&row, &mut o, &check, &mut |cfg, o| {
        c07::flash_attn_row::launch(&dev, cfg, &q, &k, &v, o)
    });
    Ok(())
}

fn gemm_check(
    size: SizeSet,
    a64: &[f64],
    b64: &[f64],
    (m, n, k): (usize, usize, usize),
    seed: u64,
) -> GemmCheck {
    if size == SizeSet::Large {
        GemmCheck::Sampled {
            samples: sampled_gemm(a64, b64, (m, n, k), 4096, seed),
            vendor: None,
        }
    } else {
        GemmCheck::Full(c08::reference_gemm(a64, b64, m, n, k))
    }
}

fn ch08(r: &mut Runner, size: SizeSet) -> Result<()> {
    let s = sizes::gemm(size);
    let dev = r.dev.clone();
    let av = par_vec::<f16>(r.opts.seed ^ 14, s * s, -1.0, 1.0);
    let bv = par_vec::<f16>(r.opts.seed ^ 15, s * s, -1.0, 1.0);
    let (a64, b64) = (par_f64(&av), par_f64(&bv));
    let tol = c08::gemm_tolerance(&a64, &b64, s, s, s);
    let mut gc = gemm_check(size, &a64, &b64, (s, s, s), r.opts.seed);
    drop((a64, b64));
    let a = dev.upload(&av, &[s, s])?;
    let b = dev.upload(&bv, &[s, s])?;
    drop((av, bv));
    let mut c = dev.alloc::<f16>(&[s, s])?;
    let work = Work::Flops(2.0 * (s as f64).powi(3));
    let sp = |variant: &str| spec("08", "GEMM", variant, size, vec![s, s, s], "f16", work);

    // The vendors first: at the large size cuBLAS's result (else cuBLASLt's, or rocBLAS's) is
    // what ours, and the other vendors, are compared with.
    if r.is_cuda() {
        // Without a library, `blas()` / `blaslt()` have noted why once; without both, ours are
        // checked against float64 at the sampled elements only.
        if let Ok(blas) = r.blas() {
            let check = |got: &[f16]| gc.verdict(got, tol);
            let got = r.baseline(
                &sp("gemm"),
                "cublas",
                "cublasGemmEx f16, f32 compute",
                &mut c,
                &check,
                &mut |c| blas.gemm_f16(&a, &b, c, (s, s, s)),
            );
            gc.keep_vendor(got, "cuBLAS");
        }
        if let Ok(lt) = r.blaslt() {
            // The heuristic runs here, outside the timed region; its failure is a failed row.
            let plan = lt.plan(&a, &b, &c, (s, s, s));
            let check = |got: &[f16]| gc.verdict(got, tol);
            let got = r.baseline(
                &sp("gemm"),
                "cublaslt",
                plan.as_deref().unwrap_or("cublasLtMatmul f16, f32 compute"),
                &mut c,
                &check,
                &mut |c| match &plan {
                    Ok(_) => lt.gemm_f16(&a, &b, c, (s, s, s)),
                    Err(e) => Err(e.clone()),
                },
            );
            gc.keep_vendor(got, "cuBLASLt");
        }
    }
    #[cfg(feature = "rocm")]
    if r.is_hip() {
        if let Ok(rb) = r.rocblas() {
            let check = |got: &[f16]| gc.verdict(got, tol);
            let got = r.baseline(
                &sp("gemm"),
                "rocblas",
                "rocblas_gemm_ex f16, f32 compute",
                &mut c,
                &check,
                &mut |c| rb.gemm_f16(&a, &b, c, (s, s, s)),
            );
            gc.keep_vendor(got, "rocBLAS");
        }
    }
    let check = |got: &[f16]| gc.verdict(got, tol);
    r.kernel(&sp("gemm naive"), &mut c, &check, &mut |cfg, c| {
        c08::gemm_naive::launch(&dev, cfg, &a, &b, c)
    });
    r.kernel(
        &sp("gemm tensor cores, registers"),
        &mut c,
        &check,
        &mut |cfg, c| c08::gemm_fragment::launch(&dev, cfg, &a, &b, c),
    );
    let tiled = &c08::gemm_tiled::KERNEL;
    let unpipelined = c08::tiled_configs(false);
    r.kernel_configs(
        &sp("gemm tensor cores, shared memory"),
        &unpipelined,
        unpipelined[0],
        &mut c,
        &check,
        &mut |cfg, c| c08::gemm_tiled::launch(&dev, cfg, &a, &b, c),
    );
    let pipelined = c08::tiled_configs(true);
    let default = tiled.default_config(dev.arch());
    let default = if pipelined.contains(&default) {
        default
    } else {
        pipelined[0]
    };
    r.kernel_configs(
        &sp("gemm pipelined"),
        &pipelined,
        default,
        &mut c,
        &check,
        &mut |cfg, c| c08::gemm_tiled::launch(&dev, cfg, &a, &b, c),
    );
    Ok(())
}

fn ch09(r: &mut Runner, size: SizeSet) -> Result<()> {
    let dev = r.dev.clone();
    let kw = 7;
    {
        let (n, l) = sizes::conv_single(size);
        let xv = par_vec::<f16>(r.opts.seed ^ 16, n * l, -1.0, 1.0);
        let wv = par_vec::<f16>(r.opts.seed ^ 17, kw, -1.0, 1.0);
        let (x64, w64) = (par_f64(&xv), par_f64(&wv));
        let want = c09::reference_single(&x64, &w64, n, l);
        let (atol, rtol) = c09::conv_tolerance(&x64, &w64, 1);
        let x = dev.upload(&xv, &[n, l])?;
        let w = dev.upload(&wv, &[kw])?;
        let mut o = dev.alloc::<f16>(&[n, l])?;
        let work = Work::Bytes(2.0 * (2 * n * l + kw) as f64);
        let sp = spec(
            "09",
            "conv1d",
            "conv1d single",
            size,
            vec![n, l, kw],
            "f16",
            work,
        );
        r.kernel(&sp, &mut o, &against(&want, atol, rtol), &mut |cfg, o| {
            c09::conv1d_single::launch(&dev, cfg, &x, &w, o)
        });
        if r.is_cuda() {
            if let Ok(dnn) = r.dnn() {
                let check = against::<f16>(&want, atol, rtol);
                cudnn_conv(r, &sp, &dnn, (n, l, kw, None), (&x, &w), &mut o, &check);
            }
        }
        #[cfg(feature = "rocm")]
        miopen_conv(
            r,
            &sp,
            (n, l, kw, 1),
            (&x, &w),
            &mut o,
            &against(&want, atol, rtol),
        );
    }
    let (n, l, f) = sizes::conv_multi(size);
    let xv = par_vec::<f16>(r.opts.seed ^ 18, n * l, -1.0, 1.0);
    let wv = par_vec::<f16>(r.opts.seed ^ 19, kw * f, -1.0, 1.0);
    let (x64, w64) = (par_f64(&xv), par_f64(&wv));
    let want = c09::reference_multi(&x64, &w64, n, l, f);
    let (atol, rtol) = c09::conv_tolerance(&x64, &w64, f);
    let x = dev.upload(&xv, &[n, l])?;
    let w = dev.upload(&wv, &[kw, f])?;
    let mut o = dev.alloc::<f16>(&[n, l, f])?;
    let work = Work::Bytes(2.0 * (n * l + kw * f + n * l * f) as f64);
    let sp = spec(
        "09",
        "conv1d",
        "conv1d multi",
        size,
        vec![n, l, kw, f],
        "f16",
        work,
    );
    r.kernel(&sp, &mut o, &against(&want, atol, rtol), &mut |cfg, o| {
        c09::conv1d_multi::launch(&dev, cfg, &x, &w, o)
    });
    if r.is_cuda() {
        if let Ok(dnn) = r.dnn() {
            // cuDNN's filter is [f][kw] (KRSC): a transposed copy of W, made once, here.
            let wt = dev.upload(&cudnn::transpose_weights(&wv, kw, f), &[f, kw])?;
            let check = against::<f16>(&want, atol, rtol);
            cudnn_conv(r, &sp, &dnn, (n, l, kw, Some(f)), (&x, &wt), &mut o, &check);
        }
    }
    #[cfg(feature = "rocm")]
    miopen_conv(
        r,
        &sp,
        (n, l, kw, f),
        (&x, &w),
        &mut o,
        &against(&want, atol, rtol),
    );
    Ok(())
}

/// MIOpen's convolution for chapter 09 on a HIP device: the first call (untimed) plans it
/// (descriptors, `miopenFindConvolutionForwardAlgorithm`, workspace, transposed weights); a
/// setup MIOpen refuses is a failed record with its message.
#[cfg(feature = "rocm")]
fn miopen_conv(
    r: &mut Runner,
    sp: &Spec,
    dims: (usize, usize, usize, usize),
    (x, w): (&tilelang::Tensor<f16>, &tilelang::Tensor<f16>),
    o: &mut tilelang::Tensor<f16>,
    check: &dyn Fn(&[f16]) -> Verdict,
) {
    if !r.is_hip() {
        return;
    }
    let Ok(mi) = r.miopen() else { return };
    let planned = mi.conv1d_f16(x, w, o, dims);
    let config = mi
        .conv1d_config(dims)
        .unwrap_or_else(|| "miopenConvolutionForward".to_string());
    r.baseline(sp, "miopen", &config, o, check, &mut |o| match &planned {
        Ok(()) => mi.conv1d_f16(x, w, o, dims),
        Err(e) => Err(e.clone()),
    });
}

/// cuDNN's convolution for chapter 09, checked like ours: descriptors, the algorithm search
/// (`cudnnFindConvolutionForwardAlgorithm`) and the workspace outside the timed region; a
/// setup cuDNN refuses is a failed record with cuDNN's message, never a silent skip.
#[allow(clippy::too_many_arguments)]
fn cudnn_conv(
    r: &mut Runner,
    sp: &Spec,
    dnn: &std::rc::Rc<crate::vendor::Dnn>,
    (n, l, kw, f): (usize, usize, usize, Option<usize>),
    (x, w): (&tilelang::Tensor<f16>, &tilelang::Tensor<f16>),
    o: &mut tilelang::Tensor<f16>,
    check: &dyn Fn(&[f16]) -> Verdict,
) {
    let dev = r.dev.clone();
    match Conv1d::new(dnn, &dev, n, l, kw, f) {
        Ok(conv) => r.baseline(sp, "cudnn", conv.description(), o, check, &mut |o| {
            conv.forward(x, w, o)
        }),
        Err(e) => r.baseline(
            sp,
            "cudnn",
            "cudnnConvolutionForward",
            o,
            check,
            &mut |_| Err(e.clone()),
        ),
    };
}

/// Chapter 10 at the square size and at an LLM decode shape: 16 rows of activations against
/// the same square int4 weights, where the weights' bytes are the whole cost and reading them
/// packed (a quarter of f16) is what the fused kernel is for.
fn ch10(r: &mut Runner, size: SizeSet) -> Result<()> {
    let s = sizes::gemm(size);
    w4a16(r, size, "w4a16", (s, s, s))?;
    w4a16(r, size, "w4a16_decode", (DECODE_ROWS, s, s))
}

/// The rows (tokens) of chapter 10's decode shape.
const DECODE_ROWS: usize = 16;

fn w4a16(
    r: &mut Runner,
    size: SizeSet,
    variant: &str,
    (m, n, k): (usize, usize, usize),
) -> Result<()> {
    let dev = r.dev.clone();
    let av = par_vec::<f16>(r.opts.seed ^ 20, m * k, -1.0, 1.0);
    let mut rng = Rng::new(r.opts.seed ^ 21);
    let bpv = rng.bytes(k * n / 2);
    let a64 = par_f64(&av);
    let b64 = c10::unpack(&bpv, k, n);
    let tol = c08::gemm_tolerance(&a64, &b64, m, n, k);
    let mut gc = gemm_check(size, &a64, &b64, (m, n, k), r.opts.seed ^ 22);
    drop((a64, b64));
    let a = dev.upload(&av, &[m, k])?;
    let bp = dev.upload(&bpv, &[k, n / 2])?;
    drop((av, bpv));
    let mut c = dev.alloc::<f16>(&[m, n])?;
    let work = Work::Flops(2.0 * (m * n) as f64 * k as f64);
    let sp = spec(
        "10",
        "W4A16 GEMM",
        variant,
        size,
        vec![m, n, k],
        "f16 x u4",
        work,
    );

    // Dequantize into an f16 B with our element-wise kernel, then cuBLAS or cuBLASLt (rocBLAS
    // on AMD): both steps timed.
    if r.is_gpu() {
        let cfg = dequant_w4::Config::default_for(dev.arch());
        let mut b16 = dev.alloc::<f16>(&[k, n])?;
        let blas = if r.is_cuda() { r.blas().ok() } else { None };
        if let Some(blas) = blas {
            let check = |got: &[f16]| gc.verdict(got, tol);
            let got = r.baseline(
                &sp,
                "cublas",
                "dequant_w4 + cublasGemmEx",
                &mut c,
                &check,
                &mut |c| {
                    dequant_w4::launch(&dev, cfg, &bp, &mut b16).map_err(|e| e.to_string())?;
                    blas.gemm_f16(&a, &b16, c, (m, n, k))
                },
            );
            gc.keep_vendor(got, "dequantize + cuBLAS");
        }
        let blaslt = if r.is_cuda() { r.blaslt().ok() } else { None };
        if let Some(lt) = blaslt {
            let plan = lt.plan(&a, &b16, &c, (m, n, k));
            let check = |got: &[f16]| gc.verdict(got, tol);
            let config = match &plan {
                Ok(p) => format!("dequant_w4 + {p}"),
                Err(_) => "dequant_w4 + cublasLtMatmul".to_string(),
            };
            let got = r.baseline(&sp, "cublaslt", &config, &mut c, &check, &mut |c| {
                if let Err(e) = &plan {
                    return Err(e.clone());
                }
                dequant_w4::launch(&dev, cfg, &bp, &mut b16).map_err(|e| e.to_string())?;
                lt.gemm_f16(&a, &b16, c, (m, n, k))
            });
            gc.keep_vendor(got, "dequantize + cuBLASLt");
        }
        #[cfg(feature = "rocm")]
        if r.is_hip() {
            if let Ok(rb) = r.rocblas() {
                let check = |got: &[f16]| gc.verdict(got, tol);
                let got = r.baseline(
                    &sp,
                    "rocblas",
                    "dequant_w4 + rocblas_gemm_ex",
                    &mut c,
                    &check,
                    &mut |c| {
                        dequant_w4::launch(&dev, cfg, &bp, &mut b16).map_err(|e| e.to_string())?;
                        rb.gemm_f16(&a, &b16, c, (m, n, k))
                    },
                );
                gc.keep_vendor(got, "dequantize + rocBLAS");
            }
        }
    }
    let check = |got: &[f16]| gc.verdict(got, tol);
    r.kernel(&sp, &mut c, &check, &mut |cfg, c| {
        c10::gemm_w4a16::launch(&dev, cfg, &a, &bp, c)
    });
    Ok(())
}

/// Host latency of launching a tiny kernel of ours: vector add on one element.
fn launch_overhead(r: &mut Runner) -> Result<()> {
    let dev = r.dev.clone();
    let a = dev.upload(&[f16::ONE], &[1])?;
    let b = dev.upload(&[f16::ONE], &[1])?;
    let mut c = dev.alloc::<f16>(&[1])?;
    let cfg = c02::vector_add::Config::default_for(dev.arch());
    // The variants and their names match the peers' (peers/bench.py `launch_overhead`).
    let sp = |variant: &'static str| {
        spec(
            "launch",
            "launch overhead",
            variant,
            SizeSet::Tutorial,
            vec![1],
            "f16",
            Work::Bytes(6.0),
        )
    };
    let n = if r.is_gpu() { 10_000 } else { 100 };
    r.launch_latency(&sp("eager"), cfg.name(), n, 5, 1, &mut || {
        c02::vector_add::launch(&dev, cfg, &a, &b, &mut c)
    });
    if dev.backend() != tilelang::Backend::Cuda {
        return Ok(()); // graphs are CUDA-only (tilelang_rt::graph)
    }
    // One launch per graph: the cost of a replay; a hundred: the cost per kernel inside one.
    const BATCH: usize = 100;
    let one = dev.record_graph(|| c02::vector_add::launch(&dev, cfg, &a, &b, &mut c))?;
    r.launch_latency(&sp("graph_replay"), cfg.name(), n, 5, 1, &mut || {
        one.launch()
    });
    let many = dev.record_graph(|| {
        (0..BATCH).try_for_each(|_| c02::vector_add::launch(&dev, cfg, &a, &b, &mut c))
    })?;
    r.launch_latency(
        &sp("graph_x100"),
        cfg.name(),
        n / BATCH,
        5,
        BATCH,
        &mut || many.launch(),
    );
    Ok(())
}
