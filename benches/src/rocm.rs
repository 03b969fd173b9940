//! AMD vendor baselines: rocBLAS (`rocblas_gemm_ex`) and MIOpen (softmax, 1-D convolution),
//! loaded at run time with `libloading` (feature `rocm`).
//!
//! **Status: compiled and unit-tested only; never run on AMD hardware.** Every signature and
//! constant below was checked by hand against the ROCm headers (each cites its header); the
//! behaviour notes cite the libraries' sources. Treat the first run on a real GPU as the first
//! test of the FFI.
//!
//! # Why at run time
//!
//! As for the HIP runtime (`tilelang-rt/src/hip.rs`; ARCHITECTURE.md, Decisions: "Toolchains and
//! runtimes"): binding crates need ROCm headers at build time and link fixed sonames, so this
//! module opens `librocblas` and `libMIOpen` at run time through the runtime's library layer
//! (`tilelang_rt::dylib`, reached as `tilelang::__private::dylib`), which resolves every function
//! called here up front into a struct of function pointers (`dylib_api!`) and turns a missing
//! library or symbol into an `Err` that names the files tried and the fix. Libraries are searched
//! in `$ROCM_PATH/lib`, then `/opt/rocm/lib`, then by the dynamic loader (`LD_LIBRARY_PATH`, the
//! cache), newest soname first ([`ROCBLAS_NAMES`], [`MIOPEN_NAMES`]). Once loaded a library stays
//! loaded for the life of the process (unloading rocBLAS or MIOpen would run their static
//! destructors while other handles may live).
//!
//! # Streams and the current device
//!
//! Our HIP runtime queues every copy, fill and launch of a device on that device's **null
//! stream** (`tilelang-rt/src/hip.rs`, module docs), so the vendor calls must go there too, to
//! run in order with our kernels and inside our timing events:
//!
//! * rocBLAS: a new handle's stream is the null stream (rocBLAS `library/src/include/handle.hpp`:
//!   `hipStream_t stream = 0;`). [`RocBlas::new`] leaves it so and checks it with
//!   `rocblas_get_stream`. The pointer mode is set to host (`alpha`, `beta` are host `f32`s).
//! * MIOpen: the handle is made with `miopenCreateWithStream(&h, NULL)`, which references the
//!   null stream (MIOpen `src/hip/handlehip.cpp`, `Handle::Handle(miopenAcceleratorQueue_t)`);
//!   plain `miopenCreate` would create a private stream in MIOpen's developer builds.
//!
//! Both libraries bind their handle to the **current** HIP device when it is created
//! (`hipGetDevice`) and launch on the current device. Our runtime does not leave a device
//! current, so this module calls `hipSetDevice` before creating a handle and before every library
//! call (a thread-local setting, cheap), with the ordinal of [`Device::ordinal`]. Its HIP
//! functions (`hipSetDevice`, `hipMemcpyDtoDAsync`) are resolved from the very `libamdhip64` the
//! runtime opened for the device ([`Device::hip_library`]), not from a second open, and the
//! dynamic loader hands rocBLAS and MIOpen that runtime too (same soname), so all of them share
//! one HIP runtime. (Unchecked hazard: a rocBLAS of another ROCm major version than the runtime
//! tilelang-rt loaded would pull in a second `libamdhip64`; keep one ROCm.)
//!
//! # What is measured
//!
//! * [`RocBlas::gemm_f16`]: row-major `C[m, n] = A[m, k]·B[k, n]`, f16 in and out, f32 compute
//!   (`rocblas_datatype_f32_r`), `rocblas_gemm_algo_standard` (the default solution), computed
//!   column-major as `Cᵀ = Bᵀ·Aᵀ` exactly as the cuBLAS baseline (`vendor.rs`) does.
//! * [`MiOpen::softmax_f32`]: row-wise softmax of `[m, n]` f32, `miopenSoftmaxForward_V2` with
//!   `MIOPEN_SOFTMAX_ACCURATE` (max-subtracted) on an NCHW descriptor `N = m, C = n, H = W = 1`.
//!   Mode `MIOPEN_SOFTMAX_MODE_INSTANCE` ("per image N across C, H, W"): one softmax per row.
//!   `MODE_CHANNEL` would give the same numbers here (H = W = 1), but only `MODE_INSTANCE` is
//!   eligible for MIOpen's dedicated row softmax (`AttnSoftmax` solver, MIOpen
//!   `src/solver/softmax/attn_softmax.cpp`: f32, packed, accurate, instance mode, alpha 1, beta
//!   0); otherwise the generic OpenCL softmax kernel runs.
//! * [`MiOpen::conv1d_f16`]: chapter 09's correlation, `out[r, p, j] = Σ_t x[r, p + t - kw/2] ·
//!   w[t, j]` with zero padding, as a 2-D `miopenConvolution` (cross-correlation) with
//!   `H = 1`, padding `(0, kw/2)`, stride 1, dilation 1. Odd `kw` only (an even `kw` would give
//!   `l + 1` outputs per row; the chapter uses 7).
//!   - single (`f = 1`): NCHW `x [n, 1, 1, l]`, filter `[1, 1, 1, kw]` (our `w [kw]` as it is),
//!     output `[n, 1, 1, l]`: exactly our buffers.
//!   - multi (`f > 1`): all three descriptors **NHWC** (`miopenSetNdTensorDescriptorWithLayout`,
//!     lengths in NCHW order): `x` with `C = 1` has the same memory in NHWC as in NCHW; the
//!     output `[N = n, C = f, H = 1, W = l]` in NHWC is `[n][l][f]`, our layout, so the baseline
//!     writes our output tensor directly (no scratch, no layout difference). MIOpen requires
//!     one layout for all three tensors, so the filter is NHWC too, `[K = f][Y = 1][X = kw][C = 1]`
//!     = `[f][kw]`: our weight `[kw][f]` transposed, copied once outside timing. NHWC forward
//!     convolution is always served at least by MIOpen's naive direct solver
//!     (`ConvDirectNaiveConvFwd` accepts NCHW and NHWC, f16, forward) and on gfx9 by the
//!     implicit-GEMM NHWC solvers.
//!
//! The algorithm comes from `miopenFindConvolutionForwardAlgorithm` (the fastest of the returned
//! results, `exhaustiveSearch = false`: MIOpen's default tuning, like cuBLAS's default
//! algorithm), run with a workspace of `miopenConvolutionForwardGetWorkSpaceSize` bytes.
//!
//! # Setup that must stay outside timing
//!
//! * [`RocBlas::new`], [`MiOpen::new`]: loading, handles, version.
//! * Softmax: descriptors are cached per `(m, n)` on first use.
//! * Convolution: the **first call** of [`MiOpen::conv1d_f16`] for a given `(n, l, kw, f)` and
//!   weight tensor builds and caches a plan: descriptors, the transposed weight copy (multi), the
//!   workspace and the algorithm search (which runs kernels writing `out`, then the real
//!   convolution overwrites it). In the benches' runner the first call is the untimed check, so
//!   nothing of this is timed. The cached weight copy is a **snapshot**: call
//!   [`MiOpen::forget_conv_plans`] after changing the weights' contents.
//!
//! Later calls only make the device current and queue the library call.

mod blas;
mod hip;
mod load;
mod miopen;
#[cfg(test)]
mod tests;

pub use blas::{col_major_gemm, ColMajorGemm, RocBlas};
pub use hip::copy_d2d;
pub use load::{library_candidates, MIOPEN, MIOPEN_NAMES, ROCBLAS, ROCBLAS_NAMES};
pub use miopen::{conv_shape, softmax_lens, transpose_taps, ConvShape, Layout, MiOpen};
