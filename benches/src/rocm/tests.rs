//! The FFI's pure parts, and the errors without ROCm.

use super::blas::{col_major_gemm, rocblas_api, ColMajorGemm, RocBlas, RocBlasApi};
use super::hip::{hip_api, hip_ordinal, HipApi};
use super::load::{library_candidates, load_api, MIOPEN, MIOPEN_NAMES, ROCBLAS, ROCBLAS_NAMES};
use super::miopen::{
    conv_shape, fwd_algo_name, miopen_api, pick_algo, softmax_lens, transpose_taps, ConvAlgoPerf,
    Layout, MiOpen, MiOpenApi,
};
use std::ffi::{c_int, OsStr};
use std::path::PathBuf;
use tilelang::__private::dylib::{self, LoadError};
use tilelang::Device;

fn names(c: &[PathBuf]) -> Vec<String> {
    c.iter().map(|p| p.display().to_string()).collect()
}

#[test]
fn candidates_in_order() {
    let c = library_candidates(None, ROCBLAS_NAMES);
    assert_eq!(
        names(&c),
        [
            "/opt/rocm/lib/librocblas.so.5",
            "/opt/rocm/lib/librocblas.so.4",
            "/opt/rocm/lib/librocblas.so",
            "librocblas.so.5",
            "librocblas.so.4",
            "librocblas.so",
        ]
    );
    let c = library_candidates(Some(OsStr::new("/opt/rocm-7.1.0")), MIOPEN_NAMES);
    assert_eq!(
        names(&c),
        [
            "/opt/rocm-7.1.0/lib/libMIOpen.so.1",
            "/opt/rocm-7.1.0/lib/libMIOpen.so",
            "/opt/rocm/lib/libMIOpen.so.1",
            "/opt/rocm/lib/libMIOpen.so",
            "libMIOpen.so.1",
            "libMIOpen.so",
        ]
    );
    // ROCM_PATH=/opt/rocm is not searched twice; an empty one is ignored.
    for root in ["/opt/rocm", ""] {
        let c = library_candidates(Some(OsStr::new(root)), MIOPEN_NAMES);
        assert_eq!(c.len(), 4, "{root}");
    }
}

#[test]
fn a_missing_library_is_named_with_the_fix() {
    // SAFETY: nothing of these names exists, so nothing is loaded.
    let e = unsafe {
        load_api(
            &ROCBLAS,
            &[PathBuf::from("/nonexistent/rocm/lib/librocblas.so.5")],
            RocBlasApi::resolve,
        )
    }
    .err()
    .unwrap();
    assert!(e.contains("librocblas not found"), "{e}");
    assert!(e.contains("/nonexistent/rocm/lib/librocblas.so.5"), "{e}");
    assert!(e.contains("No such file"), "{e}");
    assert!(e.contains("ROCM_PATH") && e.contains("rocblas"), "{e}");
    // SAFETY: as above.
    let e = unsafe {
        load_api(
            &MIOPEN,
            &[PathBuf::from("/nonexistent/libMIOpen.so.1")],
            MiOpenApi::resolve,
        )
    }
    .err()
    .unwrap();
    assert!(e.contains("/nonexistent/libMIOpen.so.1"), "{e}");
    assert!(e.contains("miopen-hip") && e.contains("ROCM_PATH"), "{e}");
    // SAFETY: no candidates, nothing is loaded.
    let e = unsafe { load_api(&ROCBLAS, &[], RocBlasApi::resolve) }
        .err()
        .unwrap();
    assert!(e.contains("no candidates"), "{e}");
}

#[test]
fn a_library_without_the_functions_is_explained() {
    // libm loads wherever glibc does and has none of these functions; nothing is called.
    let m = [PathBuf::from("libm.so.6")];
    // SAFETY: libm's initialisers only set up libm; none of the functions resolves.
    let e = unsafe { load_api(&ROCBLAS, &m, RocBlasApi::resolve) }
        .err()
        .unwrap();
    assert!(e.contains("libm.so.6 lacks `rocblas_create_handle`"), "{e}");
    assert!(e.contains("rocBLAS of ROCm 6.0"), "{e}");
    // SAFETY: as above.
    let e = unsafe { load_api(&MIOPEN, &m, MiOpenApi::resolve) }
        .err()
        .unwrap();
    assert!(e.contains("libm.so.6 lacks `miopenGetErrorString`"), "{e}");
    assert!(e.contains("MIOpen of ROCm 6.0"), "{e}");
    // The HIP functions resolve from whatever library the runtime hands over.
    // SAFETY: as above.
    let libm = unsafe { dylib::open(&ROCBLAS, &m) }.unwrap();
    // SAFETY: as above.
    let e = unsafe { HipApi::resolve(libm) }.err().unwrap();
    assert!(
        matches!(&e, LoadError::MissingSymbol { symbol, .. } if symbol == "hipSetDevice"),
        "{e}"
    );
}

#[test]
fn hip_functions_come_from_the_runtime_of_the_device() {
    let e = hip_api(&Device::cpu(), "copy_d2d").err().unwrap();
    assert!(
        e.contains("copy_d2d needs an AMD GPU opened with Device::hip"),
        "{e}"
    );
    if let Ok(dev) = Device::hip(0) {
        // No second open: the very library the runtime opened.
        let hip = hip_api(&dev, "copy_d2d").unwrap();
        assert!(std::ptr::eq(hip.library(), dev.hip_library().unwrap()));
    }
}

#[test]
fn the_cpu_is_refused_with_a_reason() {
    let cpu = Device::cpu();
    let e = RocBlas::new(&cpu).err().unwrap();
    assert!(
        e.contains("rocBLAS needs an AMD GPU opened with Device::hip"),
        "{e}"
    );
    assert!(e.contains("Cpu"), "{e}");
    let e = MiOpen::new(&cpu).err().unwrap();
    assert!(e.contains("MIOpen needs an AMD GPU"), "{e}");
}

#[test]
fn the_libraries_of_this_machine_load_or_are_explained() {
    // CI has no ROCm: the answer must be the clear error. With ROCm installed, the
    // libraries must resolve completely.
    match rocblas_api() {
        Err(e) => {
            assert!(e.contains("librocblas not found"), "{e}");
            assert!(e.contains("/opt/rocm/lib/librocblas.so.5"), "{e}");
            assert!(e.contains("ROCM_PATH"), "{e}");
        }
        Ok(api) => {
            let path = api.library().path().display().to_string();
            assert!(path.contains("librocblas"), "{path}");
        }
    }
    match miopen_api() {
        Err(e) => {
            assert!(e.contains("libMIOpen not found"), "{e}");
            assert!(e.contains("libMIOpen.so.1"), "{e}");
        }
        Ok(api) => {
            let path = api.library().path().display().to_string();
            assert!(path.contains("libMIOpen"), "{path}");
        }
    }
}

/// Column-major GEMM as BLAS defines it: `C[i + j·ldc] = Σ_p A[i + p·lda]·B[p + j·ldb]`.
#[allow(clippy::too_many_arguments)]
fn gemm_cm(
    m: usize,
    n: usize,
    k: usize,
    a: &[f64],
    lda: usize,
    b: &[f64],
    ldb: usize,
    ldc: usize,
) -> Vec<f64> {
    let mut c = vec![0.0; ldc * n];
    for j in 0..n {
        for i in 0..m {
            c[i + j * ldc] = (0..k).map(|p| a[i + p * lda] * b[p + j * ldb]).sum();
        }
    }
    c
}

#[test]
fn the_column_major_call_computes_the_row_major_product() {
    let (m, n, k) = (3usize, 5usize, 4usize);
    let g = col_major_gemm(m, n, k).unwrap();
    assert_eq!(
        g,
        ColMajorGemm {
            m: 5,
            n: 3,
            k: 4,
            ld_first: 5,
            ld_second: 4,
            ldc: 5
        }
    );
    let a: Vec<f64> = (0..m * k).map(|i| (i as f64 * 0.37).sin()).collect();
    let b: Vec<f64> = (0..k * n).map(|i| (i as f64 * 0.11).cos()).collect();
    // The call as gemm_f16 makes it: first operand B, second A.
    let c = gemm_cm(
        g.m as usize,
        g.n as usize,
        g.k as usize,
        &b,
        g.ld_first as usize,
        &a,
        g.ld_second as usize,
        g.ldc as usize,
    );
    for r in 0..m {
        for col in 0..n {
            let want: f64 = (0..k).map(|p| a[r * k + p] * b[p * n + col]).sum();
            assert!((c[r * n + col] - want).abs() < 1e-12, "C[{r}, {col}]");
        }
    }
    assert!(col_major_gemm(1 << 31, 1, 1)
        .unwrap_err()
        .contains("m = 2147483648"));
}

#[test]
fn softmax_rows_are_instances() {
    assert_eq!(softmax_lens(4096, 16_384).unwrap(), [4096, 16_384, 1, 1]);
    assert!(softmax_lens(1, 1 << 31).is_err());
}

/// Packed strides of NCHW-ordered lengths in a layout (MIOpen's convention:
/// `miopenSetNdTensorDescriptorWithLayout` takes lengths in NCHW order).
fn packed_strides(lens: [usize; 4], layout: Layout) -> [usize; 4] {
    let [_, c, h, w] = lens;
    match layout {
        Layout::Nchw => [c * h * w, h * w, w, 1],
        Layout::Nhwc => [h * w * c, 1, w * c, c],
    }
}

fn offset(idx: [usize; 4], strides: [usize; 4]) -> usize {
    idx.iter().zip(strides).map(|(i, s)| i * s).sum()
}

fn lens(d: [c_int; 4]) -> [usize; 4] {
    d.map(|x| x as usize)
}

#[test]
fn conv_descriptors_address_our_buffers() {
    // Single: NCHW, our x [n][l], w [kw], out [n][l].
    let s = conv_shape(64, 1024, 7, 1).unwrap();
    assert_eq!(s.layout, Layout::Nchw);
    assert_eq!(
        (s.x, s.w, s.y, s.pad),
        ([64, 1, 1, 1024], [1, 1, 1, 7], [64, 1, 1, 1024], (0, 3))
    );

    // Multi: NHWC; every element of x, w (transposed) and out lands where ours is.
    let (n, l, kw, f) = (3usize, 10usize, 7usize, 4usize);
    let s = conv_shape(n, l, kw, f).unwrap();
    assert_eq!(s.layout, Layout::Nhwc);
    let (xs, ws, ys) = (
        packed_strides(lens(s.x), s.layout),
        packed_strides(lens(s.w), s.layout),
        packed_strides(lens(s.y), s.layout),
    );
    for r in 0..n {
        for p in 0..l {
            assert_eq!(offset([r, 0, 0, p], xs), r * l + p);
            for j in 0..f {
                // out[r][p][j] of [n, l, f].
                assert_eq!(offset([r, j, 0, p], ys), (r * l + p) * f + j);
            }
        }
    }
    let w: Vec<usize> = (0..kw * f).collect(); // w[t * f + j] = t * f + j
    let wt = transpose_taps(&w, kw, f);
    for j in 0..f {
        for t in 0..kw {
            // MIOpen reads filter (K = j, C = 0, Y = 0, X = t) at this offset of the copy.
            assert_eq!(wt[offset([j, 0, 0, t], ws)], t * f + j);
        }
    }
    // For f = 1, NCHW and NHWC put every element of x, w and out at the same offset
    // (C = 1: the channel stride never counts).
    let s1 = conv_shape(n, l, kw, 1).unwrap();
    for d in [s1.x, s1.w, s1.y] {
        let [a, _, _, b] = lens(d);
        let (nchw, nhwc) = (
            packed_strides(lens(d), Layout::Nchw),
            packed_strides(lens(d), Layout::Nhwc),
        );
        for i in 0..a {
            for k in 0..b {
                assert_eq!(offset([i, 0, 0, k], nchw), offset([i, 0, 0, k], nhwc));
            }
        }
    }
    assert_eq!(transpose_taps(&[1, 2, 3], 3, 1), [1, 2, 3]);
}

/// MIOpen's padded correlation (pad kw/2 both sides, stride 1) on the host, from the
/// descriptors' numbers, equals chapter 09's reference.
#[test]
fn padding_matches_chapter_09() {
    let (n, l, kw, f) = (2usize, 9usize, 7usize, 3usize);
    let s = conv_shape(n, l, kw, f).unwrap();
    let pad = s.pad.1 as isize;
    let out_w = l as isize + 2 * pad - kw as isize + 1;
    assert_eq!(out_w, l as isize, "odd kw keeps the length");
    let x: Vec<f64> = (0..n * l).map(|i| (i as f64 * 0.7).sin()).collect();
    let w: Vec<f64> = (0..kw * f).map(|i| (i as f64 * 0.3).cos()).collect();
    let wt = transpose_taps(&w, kw, f);
    let want = kernels::ch09_conv1d::reference_multi(&x, &w, n, l, f);
    for r in 0..n {
        for p in 0..l {
            for j in 0..f {
                let mut acc = 0.0;
                for t in 0..kw {
                    let q = p as isize + t as isize - pad;
                    if (0..l as isize).contains(&q) {
                        acc += x[r * l + q as usize] * wt[j * kw + t];
                    }
                }
                let got = want[(r * l + p) * f + j];
                assert!((acc - got).abs() < 1e-12, "({r}, {p}, {j})");
            }
        }
    }
}

#[test]
fn bad_convolutions_are_refused() {
    assert!(conv_shape(2, 10, 6, 1)
        .unwrap_err()
        .contains("odd filter width"));
    assert!(conv_shape(2, 10, 0, 1).is_err());
    assert!(conv_shape(0, 10, 7, 1).unwrap_err().contains("empty"));
    assert!(conv_shape(1 << 20, 1 << 12, 7, 1 << 8)
        .unwrap_err()
        .contains("n·l·f"));
}

#[test]
fn algorithm_choice() {
    let p = |algo, memory| ConvAlgoPerf {
        fwd_algo: algo,
        time: 0.1,
        memory,
    };
    let perf = [p(5, 64), p(1, 0)];
    assert_eq!(pick_algo(&perf, 2, 128).unwrap().fwd_algo, 5);
    assert!(pick_algo(&perf, 0, 128)
        .unwrap_err()
        .contains("no algorithm"));
    assert!(pick_algo(&perf, 2, 32)
        .unwrap_err()
        .contains("needs 64 workspace bytes"));
    assert_eq!(fwd_algo_name(5), "ImplicitGEMM");
    assert_eq!(std::mem::size_of::<ConvAlgoPerf>(), 16);
    assert_eq!(std::mem::align_of::<ConvAlgoPerf>(), 8);
}

#[test]
fn the_ordinal_comes_from_the_device() {
    let e = hip_ordinal(&Device::cpu(), "rocBLAS").unwrap_err();
    assert!(
        e.contains("rocBLAS needs an AMD GPU opened with Device::hip"),
        "{e}"
    );
    assert!(e.contains("Cpu device"), "{e}");
    if let Ok(dev) = Device::hip(0) {
        assert_eq!(hip_ordinal(&dev, "rocBLAS").unwrap(), 0);
    }
}
