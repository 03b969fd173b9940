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

use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_void, CStr, OsStr};
use std::path::PathBuf;
use std::ptr::null_mut;
use std::sync::OnceLock;
use tilelang::__private::dylib::{self, Library, LoadError, SearchOrder, Spec};
use tilelang::__private::dylib_api;
use tilelang::{f16, Backend, Device, Element, Tensor};

// ---------------------------------------------------------------------------------------------
// Constants, each from the header named.

/// rocBLAS values, from `library/include/internal/rocblas-types.h` (ROCm/rocBLAS at b520bc8,
/// rocBLAS 4.4 / ROCm 6.4; identical in ROCm/rocm-libraries `projects/rocblas`, rocBLAS 5.x /
/// ROCm 7). C enums are passed as `int`.
mod rb {
    use std::ffi::c_int;
    /// `rocblas_status_success = 0` (`enum rocblas_status_`).
    pub const STATUS_SUCCESS: c_int = 0;
    /// `rocblas_operation_none = 111` (`enum rocblas_operation_`).
    pub const OPERATION_NONE: c_int = 111;
    /// `rocblas_datatype_f16_r = 150` (`enum rocblas_datatype_`).
    pub const DATATYPE_F16_R: c_int = 150;
    /// `rocblas_datatype_f32_r = 151` (`enum rocblas_datatype_`).
    pub const DATATYPE_F32_R: c_int = 151;
    /// `rocblas_gemm_algo_standard = 0x0` (`enum rocblas_gemm_algo_`).
    pub const GEMM_ALGO_STANDARD: c_int = 0;
    /// `rocblas_gemm_flags_none = 0x0` (`enum rocblas_gemm_flags_`; passed as `uint32_t flags`).
    pub const GEMM_FLAGS_NONE: u32 = 0;
    /// `rocblas_pointer_mode_host = 0` (`enum rocblas_pointer_mode_`).
    pub const POINTER_MODE_HOST: c_int = 0;
}

/// MIOpen values, from `include/miopen/miopen.h` (ROCm/MIOpen at 2d1fd99, MIOpen 3.3 / ROCm 6.3;
/// identical in ROCm/rocm-libraries `projects/miopen`, ROCm 7). C enums are passed as `int`.
mod mi {
    use std::ffi::c_int;
    /// `miopenStatusSuccess = 0` (`miopenStatus_t`).
    pub const STATUS_SUCCESS: c_int = 0;
    /// `miopenHalf = 0` (`miopenDataType_t`).
    pub const HALF: c_int = 0;
    /// `miopenFloat = 1` (`miopenDataType_t`).
    pub const FLOAT: c_int = 1;
    /// `miopenTensorNCHW = 0` (`miopenTensorLayout_t`).
    pub const TENSOR_NCHW: c_int = 0;
    /// `miopenTensorNHWC = 1` (`miopenTensorLayout_t`).
    pub const TENSOR_NHWC: c_int = 1;
    /// `miopenConvolution = 0`, "Cross-Correlation convolution" (`miopenConvolutionMode_t`).
    pub const CONVOLUTION: c_int = 0;
    /// `MIOPEN_SOFTMAX_ACCURATE = 1`, "scaled softmax by maximum value in input domain"
    /// (`miopenSoftmaxAlgorithm_t`).
    pub const SOFTMAX_ACCURATE: c_int = 1;
    /// `MIOPEN_SOFTMAX_MODE_INSTANCE = 0`, "compute per image (N) across C, H, W"
    /// (`miopenSoftmaxMode_t`).
    pub const SOFTMAX_MODE_INSTANCE: c_int = 0;
}

/// `hipSuccess = 0` (HIP `include/hip/hip_runtime_api.h`, `enum hipError_t`).
const HIP_SUCCESS: c_int = 0;

/// `miopenConvAlgoPerf_t` (miopen.h): a union of three C enums (`fwd_algo`, `bwd_weights_algo`,
/// `bwd_data_algo`, each `int`-sized), `float time`, `size_t memory`; 16 bytes on LP64.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct ConvAlgoPerf {
    /// `miopenConvFwdAlgorithm_t fwd_algo` (the union's forward member).
    fwd_algo: c_int,
    time: f32,
    memory: usize,
}
const _: () =
    assert!(std::mem::size_of::<ConvAlgoPerf>() == 16 || cfg!(not(target_pointer_width = "64")));

/// `miopenConvFwdAlgorithm_t` names (miopen.h), for the record's config string.
fn fwd_algo_name(algo: c_int) -> &'static str {
    match algo {
        0 => "GEMM",
        1 => "Direct",
        2 => "FFT",
        3 => "Winograd",
        5 => "ImplicitGEMM",
        _ => "unknown",
    }
}

// ---------------------------------------------------------------------------------------------
// Library names and loading.

/// rocBLAS sonames, newest first: `.so.5` is rocBLAS 5.x (ROCm 7), `.so.4` rocBLAS 4.x (ROCm 6);
/// rocm-cmake's `rocm_set_soversion` makes the major of `rocblas_SOVERSION` (4.4 in ROCm 6.4's
/// `library/CMakeLists.txt`, 5.x in rocm-libraries) the soname. `librocblas.so` is the
/// development symlink.
pub const ROCBLAS_NAMES: &[&str] = &["librocblas.so.5", "librocblas.so.4", "librocblas.so"];
/// MIOpen sonames: `MIOpen_SOVERSION 1.0` (MIOpen `src/CMakeLists.txt`) gives `.so.1` in every
/// ROCm 6 and 7 release.
pub const MIOPEN_NAMES: &[&str] = &["libMIOpen.so.1", "libMIOpen.so"];
/// The search paths of a ROCm library with sonames `names`: in `$ROCM_PATH/lib` (when set and
/// not `/opt/rocm`), in `/opt/rocm/lib`, then as bare names for the dynamic loader: an explicit
/// ROCm installation wins.
pub fn library_candidates(rocm_path: Option<&OsStr>, names: &[&str]) -> Vec<PathBuf> {
    dylib::candidates(
        names,
        &dylib::rocm_lib_dirs(rocm_path),
        SearchOrder::DirsFirst,
    )
}

/// How messages name rocBLAS, and the fixes.
pub const ROCBLAS: Spec = Spec {
    library: "librocblas",
    not_found: "install ROCm's rocBLAS (package `rocblas` from the ROCm repository) and set \
                ROCM_PATH to the ROCm root holding lib/librocblas.so.*, or put that directory \
                on LD_LIBRARY_PATH",
    too_old: "the baselines need the rocBLAS of ROCm 6.0 or newer",
};
/// How messages name MIOpen, and the fixes.
pub const MIOPEN: Spec = Spec {
    library: "libMIOpen",
    not_found: "install ROCm's MIOpen (package `miopen-hip` from the ROCm repository) and set \
                ROCM_PATH to the ROCm root holding lib/libMIOpen.so.1, or put that directory \
                on LD_LIBRARY_PATH",
    too_old: "the baselines need the MIOpen of ROCm 6.0 or newer",
};

dylib_api! {
    /// The HIP runtime functions this module needs (`include/hip/hip_runtime_api.h`), resolved
    /// from the runtime `tilelang-rt` opened ([`Device::hip_library`]).
    struct HipApi {
        /// `hipError_t hipSetDevice(int deviceId)`
        fn hipSetDevice(device: c_int) -> c_int;
        /// `hipError_t hipMemcpyDtoDAsync(hipDeviceptr_t dst, hipDeviceptr_t src,
        /// size_t sizeBytes, hipStream_t stream)`; `hipDeviceptr_t` is `void*`.
        fn hipMemcpyDtoDAsync(dst: *mut c_void, src: *mut c_void, bytes: usize, stream: HipStream) -> c_int;
    }
}

/// `rocblas_handle` (`struct _rocblas_handle*`), `hipStream_t` (`struct ihipStream_t*`).
type RbHandle = *mut c_void;
type HipStream = *mut c_void;

dylib_api! {
    /// rocBLAS functions: `library/include/internal/rocblas-auxiliary.h` (handle, stream, pointer
    /// mode) and `rocblas-functions.h` (the rest). `rocblas_int` is `int32_t` (rocblas-types.h,
    /// unless the never-shipped `rocblas_ILP64` is defined).
    struct RocBlasApi {
        /// `rocblas_status rocblas_create_handle(rocblas_handle* handle)`
        fn rocblas_create_handle(handle: *mut RbHandle) -> c_int;
        /// `rocblas_status rocblas_destroy_handle(rocblas_handle handle)`
        fn rocblas_destroy_handle(handle: RbHandle) -> c_int;
        /// `rocblas_status rocblas_get_stream(rocblas_handle handle, hipStream_t* stream)`
        fn rocblas_get_stream(handle: RbHandle, stream: *mut HipStream) -> c_int;
        /// `rocblas_status rocblas_set_pointer_mode(rocblas_handle handle,
        /// rocblas_pointer_mode pointer_mode)`
        fn rocblas_set_pointer_mode(handle: RbHandle, mode: c_int) -> c_int;
        /// `const char* rocblas_status_to_string(rocblas_status status)`
        fn rocblas_status_to_string(status: c_int) -> *const c_char;
        /// `rocblas_status rocblas_get_version_string_size(size_t* len)`
        fn rocblas_get_version_string_size(len: *mut usize) -> c_int;
        /// `rocblas_status rocblas_get_version_string(char* buf, size_t len)`
        fn rocblas_get_version_string(buf: *mut c_char, len: usize) -> c_int;
        /// `rocblas_status rocblas_gemm_ex(rocblas_handle handle, rocblas_operation transA,
        /// rocblas_operation transB, rocblas_int m, rocblas_int n, rocblas_int k,
        /// const void* alpha, const void* a, rocblas_datatype a_type, rocblas_int lda,
        /// const void* b, rocblas_datatype b_type, rocblas_int ldb, const void* beta,
        /// const void* c, rocblas_datatype c_type, rocblas_int ldc, void* d,
        /// rocblas_datatype d_type, rocblas_int ldd, rocblas_datatype compute_type,
        /// rocblas_gemm_algo algo, int32_t solution_index, uint32_t flags)` (the exported
        /// function; the header's same-named macro only drops obsolete trailing arguments).
        fn rocblas_gemm_ex(
            handle: RbHandle,
            trans_a: c_int,
            trans_b: c_int,
            m: i32,
            n: i32,
            k: i32,
            alpha: *const c_void,
            a: *const c_void,
            a_type: c_int,
            lda: i32,
            b: *const c_void,
            b_type: c_int,
            ldb: i32,
            beta: *const c_void,
            c: *const c_void,
            c_type: c_int,
            ldc: i32,
            d: *mut c_void,
            d_type: c_int,
            ldd: i32,
            compute_type: c_int,
            algo: c_int,
            solution_index: i32,
            flags: u32,
        ) -> c_int;
    }
}

/// `miopenHandle_t`, `miopenTensorDescriptor_t`, `miopenConvolutionDescriptor_t`: pointers to
/// opaque structs (`MIOPEN_DECLARE_OBJECT`).
type MiHandle = *mut c_void;
type MiTensorDesc = *mut c_void;
type MiConvDesc = *mut c_void;

dylib_api! {
    /// MIOpen functions, `include/miopen/miopen.h` (HIP backend: `miopenAcceleratorQueue_t` is
    /// `hipStream_t`).
    struct MiOpenApi {
        /// `const char* miopenGetErrorString(miopenStatus_t error)`
        fn miopenGetErrorString(status: c_int) -> *const c_char;
        /// `miopenStatus_t miopenGetVersion(size_t* major, size_t* minor, size_t* patch)`
        fn miopenGetVersion(major: *mut usize, minor: *mut usize, patch: *mut usize) -> c_int;
        /// `miopenStatus_t miopenCreateWithStream(miopenHandle_t* handle,
        /// miopenAcceleratorQueue_t stream)`
        fn miopenCreateWithStream(handle: *mut MiHandle, stream: HipStream) -> c_int;
        /// `miopenStatus_t miopenDestroy(miopenHandle_t handle)`
        fn miopenDestroy(handle: MiHandle) -> c_int;
        /// `miopenStatus_t miopenCreateTensorDescriptor(miopenTensorDescriptor_t* tensorDesc)`
        fn miopenCreateTensorDescriptor(desc: *mut MiTensorDesc) -> c_int;
        /// `miopenStatus_t miopenDestroyTensorDescriptor(miopenTensorDescriptor_t tensorDesc)`
        fn miopenDestroyTensorDescriptor(desc: MiTensorDesc) -> c_int;
        /// `miopenStatus_t miopenSetNdTensorDescriptorWithLayout(miopenTensorDescriptor_t
        /// tensorDesc, miopenDataType_t dataType, miopenTensorLayout_t tensorLayout,
        /// const int* lens, int num_lens)`; `lens` in NCHW order whatever the layout (MIOpen
        /// `src/tensor.cpp`: strides are derived from the layout).
        fn miopenSetNdTensorDescriptorWithLayout(
            desc: MiTensorDesc,
            data_type: c_int,
            layout: c_int,
            lens: *const c_int,
            num_lens: c_int,
        ) -> c_int;
        /// `miopenStatus_t miopenCreateConvolutionDescriptor(miopenConvolutionDescriptor_t*
        /// convDesc)`
        fn miopenCreateConvolutionDescriptor(desc: *mut MiConvDesc) -> c_int;
        /// `miopenStatus_t miopenDestroyConvolutionDescriptor(miopenConvolutionDescriptor_t
        /// convDesc)`
        fn miopenDestroyConvolutionDescriptor(desc: MiConvDesc) -> c_int;
        /// `miopenStatus_t miopenInitConvolutionDescriptor(miopenConvolutionDescriptor_t
        /// convDesc, miopenConvolutionMode_t c_mode, int pad_h, int pad_w, int stride_h,
        /// int stride_w, int dilation_h, int dilation_w)`
        fn miopenInitConvolutionDescriptor(
            desc: MiConvDesc,
            mode: c_int,
            pad_h: c_int,
            pad_w: c_int,
            stride_h: c_int,
            stride_w: c_int,
            dilation_h: c_int,
            dilation_w: c_int,
        ) -> c_int;
        /// `miopenStatus_t miopenGetConvolutionForwardOutputDim(miopenConvolutionDescriptor_t
        /// convDesc, const miopenTensorDescriptor_t inputTensorDesc,
        /// const miopenTensorDescriptor_t filterDesc, int* n, int* c, int* h, int* w)`
        fn miopenGetConvolutionForwardOutputDim(
            conv: MiConvDesc,
            x_desc: MiTensorDesc,
            w_desc: MiTensorDesc,
            n: *mut c_int,
            c: *mut c_int,
            h: *mut c_int,
            w: *mut c_int,
        ) -> c_int;
        /// `miopenStatus_t miopenConvolutionForwardGetWorkSpaceSize(miopenHandle_t handle,
        /// const miopenTensorDescriptor_t wDesc, const miopenTensorDescriptor_t xDesc,
        /// const miopenConvolutionDescriptor_t convDesc, const miopenTensorDescriptor_t yDesc,
        /// size_t* workSpaceSize)` (note: weights before input).
        fn miopenConvolutionForwardGetWorkSpaceSize(
            handle: MiHandle,
            w_desc: MiTensorDesc,
            x_desc: MiTensorDesc,
            conv: MiConvDesc,
            y_desc: MiTensorDesc,
            size: *mut usize,
        ) -> c_int;
        /// `miopenStatus_t miopenFindConvolutionForwardAlgorithm(miopenHandle_t handle,
        /// const miopenTensorDescriptor_t xDesc, const void* x,
        /// const miopenTensorDescriptor_t wDesc, const void* w,
        /// const miopenConvolutionDescriptor_t convDesc, const miopenTensorDescriptor_t yDesc,
        /// void* y, const int requestAlgoCount, int* returnedAlgoCount,
        /// miopenConvAlgoPerf_t* perfResults, void* workSpace, size_t workSpaceSize,
        /// bool exhaustiveSearch)`
        fn miopenFindConvolutionForwardAlgorithm(
            handle: MiHandle,
            x_desc: MiTensorDesc,
            x: *const c_void,
            w_desc: MiTensorDesc,
            w: *const c_void,
            conv: MiConvDesc,
            y_desc: MiTensorDesc,
            y: *mut c_void,
            request: c_int,
            returned: *mut c_int,
            perf: *mut ConvAlgoPerf,
            workspace: *mut c_void,
            workspace_size: usize,
            exhaustive: bool,
        ) -> c_int;
        /// `miopenStatus_t miopenConvolutionForward(miopenHandle_t handle, const void* alpha,
        /// const miopenTensorDescriptor_t xDesc, const void* x,
        /// const miopenTensorDescriptor_t wDesc, const void* w,
        /// const miopenConvolutionDescriptor_t convDesc, miopenConvFwdAlgorithm_t algo,
        /// const void* beta, const miopenTensorDescriptor_t yDesc, void* y, void* workSpace,
        /// size_t workSpaceSize)`
        fn miopenConvolutionForward(
            handle: MiHandle,
            alpha: *const c_void,
            x_desc: MiTensorDesc,
            x: *const c_void,
            w_desc: MiTensorDesc,
            w: *const c_void,
            conv: MiConvDesc,
            algo: c_int,
            beta: *const c_void,
            y_desc: MiTensorDesc,
            y: *mut c_void,
            workspace: *mut c_void,
            workspace_size: usize,
        ) -> c_int;
        /// `miopenStatus_t miopenSoftmaxForward_V2(miopenHandle_t handle, const void* alpha,
        /// const miopenTensorDescriptor_t xDesc, const void* x, const void* beta,
        /// const miopenTensorDescriptor_t yDesc, void* y, miopenSoftmaxAlgorithm_t algorithm,
        /// miopenSoftmaxMode_t mode)`; `alpha` and `beta` are read as `float` (MIOpen
        /// `src/include/miopen/softmax/problem_description.hpp`).
        fn miopenSoftmaxForward_V2(
            handle: MiHandle,
            alpha: *const c_void,
            x_desc: MiTensorDesc,
            x: *const c_void,
            beta: *const c_void,
            y_desc: MiTensorDesc,
            y: *mut c_void,
            algorithm: c_int,
            mode: c_int,
        ) -> c_int;
    }
}

/// Opens the library of `spec` from `candidates` and resolves `A` from it.
///
/// # Safety
/// `resolve` is the resolver of the API struct describing the library of `spec`, and the
/// candidates are that library's names (whose initialisers only set up the library).
unsafe fn load_api<A>(
    spec: &Spec,
    candidates: &[PathBuf],
    resolve: unsafe fn(&'static Library) -> Result<A, LoadError>,
) -> Result<A, String> {
    // SAFETY: the caller's contract.
    let lib = unsafe { dylib::open(spec, candidates) }.map_err(|e| e.to_string())?;
    // SAFETY: the caller's contract.
    unsafe { resolve(lib) }.map_err(|e| e.to_string())
}

fn rocm_path() -> Option<std::ffi::OsString> {
    std::env::var_os("ROCM_PATH")
}

/// The HIP functions of this module, resolved once from the runtime the HIP backend opened for
/// `dev`: no second `libamdhip64` is opened, so this module, our runtime and (through the
/// loader, for the same soname) rocBLAS and MIOpen share one HIP runtime.
fn hip_api(dev: &Device, what: &str) -> Result<&'static HipApi, String> {
    static API: OnceLock<Result<HipApi, String>> = OnceLock::new();
    // The runtime opens its library once per process, so every HIP device has the same one.
    let lib = dev.hip_library().ok_or_else(|| not_hip(dev, what))?;
    API.get_or_init(|| {
        // SAFETY: `lib` is the HIP runtime, whose functions have the signatures of `HipApi`.
        unsafe { HipApi::resolve(lib) }.map_err(|e| e.to_string())
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// The process-wide libraries, loaded once, never unloaded.
fn rocblas_api() -> Result<&'static RocBlasApi, String> {
    static API: OnceLock<Result<RocBlasApi, String>> = OnceLock::new();
    API.get_or_init(|| {
        let c = library_candidates(rocm_path().as_deref(), ROCBLAS_NAMES);
        // SAFETY: rocBLAS's names and its API.
        unsafe { load_api(&ROCBLAS, &c, RocBlasApi::resolve) }
    })
    .as_ref()
    .map_err(Clone::clone)
}

fn miopen_api() -> Result<&'static MiOpenApi, String> {
    static API: OnceLock<Result<MiOpenApi, String>> = OnceLock::new();
    API.get_or_init(|| {
        let c = library_candidates(rocm_path().as_deref(), MIOPEN_NAMES);
        // SAFETY: MIOpen's names and its API.
        unsafe { load_api(&MIOPEN, &c, MiOpenApi::resolve) }
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// # Safety
/// `p` is null or a NUL-terminated string that outlives the call.
unsafe fn c_str(p: *const c_char) -> Option<String> {
    // SAFETY: the caller's contract.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

// ---------------------------------------------------------------------------------------------
// The device.

fn not_hip(dev: &Device, what: &str) -> String {
    format!(
        "{what} needs an AMD GPU opened with Device::hip; {} is a {:?} device",
        dev.name(),
        dev.backend()
    )
}

/// The HIP ordinal of `dev` ([`Device::ordinal`]), which must be a HIP device.
fn hip_ordinal(dev: &Device, what: &str) -> Result<c_int, String> {
    let ordinal = match (dev.backend(), dev.ordinal()) {
        (Backend::Hip, Some(ordinal)) => ordinal,
        _ => return Err(not_hip(dev, what)),
    };
    c_int::try_from(ordinal).map_err(|_| format!("{what}: HIP ordinal {ordinal} exceeds an int"))
}

/// Makes `ordinal` the calling thread's current HIP device.
fn bind(hip: &HipApi, ordinal: c_int) -> Result<(), String> {
    // SAFETY: `ordinal` is the ordinal of an open device (see `hip_ordinal`).
    let status = unsafe { (hip.hipSetDevice)(ordinal) };
    if status == HIP_SUCCESS {
        Ok(())
    } else {
        Err(format!(
            "hipSetDevice({ordinal}) failed with hipError_t {status} ({})",
            hip.library().path().display()
        ))
    }
}

fn check_device<T: Element>(dev: &Device, t: &Tensor<T>, name: &str) -> Result<(), String> {
    if t.device() == dev {
        Ok(())
    } else {
        Err(format!(
            "{name} lives on {}, not on {}",
            t.device().name(),
            dev.name()
        ))
    }
}

/// `dst = src` with the HIP runtime's device-to-device copy (`hipMemcpyDtoDAsync`) on the null
/// stream, where our runtime queues its work: the bandwidth ceiling on AMD.
pub fn copy_d2d<T: Element>(
    dev: &Device,
    src: &Tensor<T>,
    dst: &mut Tensor<T>,
) -> Result<(), String> {
    let ordinal = hip_ordinal(dev, "hipMemcpyDtoDAsync")?;
    check_device(dev, src, "the source")?;
    check_device(dev, dst, "the destination")?;
    if src.len() != dst.len() {
        return Err(format!(
            "copy_d2d: lengths {} and {} differ",
            src.len(),
            dst.len()
        ));
    }
    let hip = hip_api(dev, "hipMemcpyDtoDAsync")?;
    bind(hip, ordinal)?;
    let bytes = std::mem::size_of_val(&T::default()) * src.len();
    // SAFETY: both are live allocations of this (current) device of `bytes` bytes; `dst` is
    // borrowed mutably, so the safe API gives no overlap; the null stream orders the copy
    // after our earlier work and before our later work.
    let status = unsafe {
        (hip.hipMemcpyDtoDAsync)(
            dst.device_ptr() as *mut c_void,
            src.device_ptr() as *mut c_void,
            bytes,
            null_mut(),
        )
    };
    if status == HIP_SUCCESS {
        Ok(())
    } else {
        Err(format!(
            "hipMemcpyDtoDAsync({bytes} bytes) failed with hipError_t {status} ({})",
            hip.library().path().display()
        ))
    }
}

fn to_i32(x: usize, what: &str) -> Result<i32, String> {
    i32::try_from(x).map_err(|_| format!("{what} = {x} exceeds the libraries' int range"))
}

// ---------------------------------------------------------------------------------------------
// rocBLAS.

/// A row-major GEMM `C[m, n] = A[m, k]·B[k, n]` as the column-major call rocBLAS makes:
/// `Cᵀ[n, m] = Bᵀ[n, k]·Aᵀ[k, m]`, where the row-major buffers of `B`, `A` and `C` are the
/// column-major `Bᵀ`, `Aᵀ` and `Cᵀ`. The first operand of the call is `B`, the second `A`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColMajorGemm {
    /// Rows of the column-major result: `n`.
    pub m: i32,
    /// Columns of the column-major result: `m`.
    pub n: i32,
    pub k: i32,
    /// Leading dimension of the first operand (`B`'s row length): `n`.
    pub ld_first: i32,
    /// Leading dimension of the second operand (`A`'s row length): `k`.
    pub ld_second: i32,
    /// Leading dimension of `C` (and `D`): `n`.
    pub ldc: i32,
}

/// The column-major arguments of a row-major `(m, n, k)` GEMM; `Err` when a dimension does not
/// fit rocBLAS's `rocblas_int` (32 bits).
pub fn col_major_gemm(m: usize, n: usize, k: usize) -> Result<ColMajorGemm, String> {
    let (m, n, k) = (to_i32(m, "m")?, to_i32(n, "n")?, to_i32(k, "k")?);
    Ok(ColMajorGemm {
        m: n,
        n: m,
        k,
        ld_first: n,
        ld_second: k,
        ldc: n,
    })
}

/// A rocBLAS handle on a HIP device's null stream.
pub struct RocBlas {
    api: &'static RocBlasApi,
    hip: &'static HipApi,
    handle: RbHandle,
    ordinal: c_int,
    dev: Device,
    /// `rocblas_get_version_string`, e.g. `4.4.0.a1b2c3d`.
    pub version: String,
}

impl RocBlas {
    /// Loads rocBLAS (and resolves `hipSetDevice` from our HIP runtime), makes `dev` current and creates a handle, which runs
    /// on the device's null stream. `Err`, never a panic, when `dev` is not a HIP device or a
    /// library or symbol is missing.
    pub fn new(dev: &Device) -> Result<RocBlas, String> {
        let ordinal = hip_ordinal(dev, "rocBLAS")?;
        let api = rocblas_api()?;
        let hip = hip_api(dev, "rocBLAS")?;
        bind(hip, ordinal)?;
        let mut handle = null_mut();
        // SAFETY: writes one handle; the current device is `dev`.
        let status = unsafe { (api.rocblas_create_handle)(&mut handle) };
        check_rb(api, status, "rocblas_create_handle")?;
        // From here on, dropping `blas` destroys the handle.
        let mut blas = RocBlas {
            api,
            hip,
            handle,
            ordinal,
            dev: dev.clone(),
            version: String::new(),
        };
        let mut stream: HipStream = null_mut();
        // SAFETY: a live handle; writes one stream handle.
        let status = unsafe { (api.rocblas_get_stream)(handle, &mut stream) };
        check_rb(api, status, "rocblas_get_stream")?;
        if !stream.is_null() {
            return Err(format!(
                "rocBLAS ({}): a new handle runs on stream {stream:?}, not on the null stream \
                 our runtime uses",
                api.library().path().display()
            ));
        }
        // SAFETY: a live handle; host pointer mode is a valid enumerator.
        let status = unsafe { (api.rocblas_set_pointer_mode)(handle, rb::POINTER_MODE_HOST) };
        check_rb(api, status, "rocblas_set_pointer_mode(host)")?;
        blas.version = rocblas_version(api)?;
        Ok(blas)
    }

    /// Row-major `C[m, n] = A[m, k]·B[k, n]` in f16 with f32 accumulation (`rocblas_gemm_ex`,
    /// compute `rocblas_datatype_f32_r`, `rocblas_gemm_algo_standard`), queued on the device's
    /// null stream, through the column-major `Cᵀ = Bᵀ·Aᵀ` ([`col_major_gemm`]). `D` is `C`
    /// (same pointer, type and leading dimension, as rocBLAS allows).
    pub fn gemm_f16(
        &self,
        a: &Tensor<f16>,
        b: &Tensor<f16>,
        c: &mut Tensor<f16>,
        (m, n, k): (usize, usize, usize),
    ) -> Result<(), String> {
        crate::vendor::gemm_lengths("rocblas_gemm_ex", a, b, c, (m, n, k))?;
        for (t, name) in [(a, "A"), (b, "B"), (&*c, "C")] {
            check_device(&self.dev, t, name)?;
        }
        let g = col_major_gemm(m, n, k)?;
        let (alpha, beta) = (1.0f32, 0.0f32);
        bind(self.hip, self.ordinal)?;
        let d = c.device_ptr() as *mut c_void;
        // SAFETY: the three buffers are live allocations of this device (checked above) holding
        // exactly the elements the call reads and writes for these dimensions and leading
        // dimensions (lengths checked above); `C` is borrowed mutably, so it overlaps neither
        // input; `alpha`, `beta` are host f32s (host pointer mode, f32 compute type) that the
        // call reads before returning; the handle is live and its device is current.
        let status = unsafe {
            (self.api.rocblas_gemm_ex)(
                self.handle,
                rb::OPERATION_NONE,
                rb::OPERATION_NONE,
                g.m,
                g.n,
                g.k,
                (&alpha as *const f32).cast(),
                b.device_ptr() as *const c_void,
                rb::DATATYPE_F16_R,
                g.ld_first,
                a.device_ptr() as *const c_void,
                rb::DATATYPE_F16_R,
                g.ld_second,
                (&beta as *const f32).cast(),
                d as *const c_void,
                rb::DATATYPE_F16_R,
                g.ldc,
                d,
                rb::DATATYPE_F16_R,
                g.ldc,
                rb::DATATYPE_F32_R,
                rb::GEMM_ALGO_STANDARD,
                0,
                rb::GEMM_FLAGS_NONE,
            )
        };
        check_rb(
            self.api,
            status,
            format_args!("rocblas_gemm_ex({m}x{n}x{k})"),
        )
    }
}

impl Drop for RocBlas {
    fn drop(&mut self) {
        // Nothing can report an error here; a failed destroy leaks the handle.
        if bind(self.hip, self.ordinal).is_ok() {
            // SAFETY: created in `new`, destroyed only here.
            let _ = unsafe { (self.api.rocblas_destroy_handle)(self.handle) };
        }
    }
}

fn check_rb(api: &RocBlasApi, status: c_int, what: impl std::fmt::Display) -> Result<(), String> {
    if status == rb::STATUS_SUCCESS {
        return Ok(());
    }
    // SAFETY: returns a static string (or null).
    let name = unsafe { c_str((api.rocblas_status_to_string)(status)) };
    Err(format!(
        "{what}: {} ({})",
        name.unwrap_or_else(|| format!("rocblas_status {status}")),
        api.library().path().display()
    ))
}

fn rocblas_version(api: &RocBlasApi) -> Result<String, String> {
    let mut len = 0usize;
    // SAFETY: writes one size_t.
    let status = unsafe { (api.rocblas_get_version_string_size)(&mut len) };
    check_rb(api, status, "rocblas_get_version_string_size")?;
    let mut buf = vec![0 as c_char; len.clamp(1, 4096)];
    // SAFETY: writes at most `buf.len()` bytes, NUL included.
    let status = unsafe { (api.rocblas_get_version_string)(buf.as_mut_ptr(), buf.len()) };
    check_rb(api, status, "rocblas_get_version_string")?;
    let last = buf.len() - 1;
    buf[last] = 0;
    // SAFETY: NUL-terminated (the last byte at the latest), lives through the call.
    Ok(unsafe { c_str(buf.as_ptr()) }.unwrap_or_default())
}

// ---------------------------------------------------------------------------------------------
// MIOpen: pure helpers.

/// `miopenTensorNCHW` or `miopenTensorNHWC`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    Nchw,
    Nhwc,
}

impl Layout {
    fn raw(self) -> c_int {
        match self {
            Layout::Nchw => mi::TENSOR_NCHW,
            Layout::Nhwc => mi::TENSOR_NHWC,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Layout::Nchw => "NCHW",
            Layout::Nhwc => "NHWC",
        }
    }
}

/// The softmax descriptor's lengths for a row-wise softmax of `[m, n]`: `N = m, C = n,
/// H = W = 1` (NCHW, packed: row `r` is image `r`).
pub fn softmax_lens(m: usize, n: usize) -> Result<[c_int; 4], String> {
    Ok([to_i32(m, "m")?, to_i32(n, "n")?, 1, 1])
}

/// Chapter 09's convolution as MIOpen descriptors: lengths in NCHW order (as
/// `miopenSetNdTensorDescriptorWithLayout` takes them), the layout of all three tensors, and the
/// padding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConvShape {
    pub layout: Layout,
    /// `[n, 1, 1, l]`.
    pub x: [c_int; 4],
    /// `[f, 1, 1, kw]` (K, C, Y, X).
    pub w: [c_int; 4],
    /// `[n, f, 1, l]`.
    pub y: [c_int; 4],
    /// `(pad_h, pad_w)` = `(0, kw / 2)`.
    pub pad: (c_int, c_int),
}

/// The descriptors of `x [n, l]` correlated with `kw` taps into `f` outputs per position
/// (`f = 1`: chapter 09's single variant, NCHW; `f > 1`: the multi variant, NHWC so that the
/// output is `[n][l][f]`). `Err` for an even or zero `kw` (MIOpen's symmetric padding gives
/// `l + 1` outputs then), zero sizes, or sizes beyond `int`.
pub fn conv_shape(n: usize, l: usize, kw: usize, f: usize) -> Result<ConvShape, String> {
    if kw % 2 == 0 {
        return Err(format!(
            "conv1d: kw = {kw}; the MIOpen baseline needs an odd filter width (padding kw/2 on \
             both sides keeps the length only then)"
        ));
    }
    if n == 0 || l == 0 || f == 0 {
        return Err(format!("conv1d: empty problem (n={n}, l={l}, f={f})"));
    }
    let (ni, li, kwi, fi) = (
        to_i32(n, "n")?,
        to_i32(l, "l")?,
        to_i32(kw, "kw")?,
        to_i32(f, "f")?,
    );
    to_i32(n * l * f, "n·l·f")?;
    Ok(ConvShape {
        layout: if f == 1 { Layout::Nchw } else { Layout::Nhwc },
        x: [ni, 1, 1, li],
        w: [fi, 1, 1, kwi],
        y: [ni, fi, 1, li],
        pad: (0, kwi / 2),
    })
}

/// Our weight `[kw][f]` as MIOpen's NHWC filter `[K = f][Y = 1][X = kw][C = 1]`, i.e. `[f][kw]`:
/// `out[j * kw + t] = w[t * f + j]`.
pub fn transpose_taps<T: Copy>(w: &[T], kw: usize, f: usize) -> Vec<T> {
    assert_eq!(w.len(), kw * f, "transpose_taps: {} != {kw}·{f}", w.len());
    (0..f)
        .flat_map(|j| (0..kw).map(move |t| w[t * f + j]))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// MIOpen: the library.

/// A tensor descriptor, destroyed on drop.
struct TensorDesc {
    api: &'static MiOpenApi,
    raw: MiTensorDesc,
}

impl TensorDesc {
    fn new(
        api: &'static MiOpenApi,
        dtype: c_int,
        layout: Layout,
        lens: &[c_int; 4],
    ) -> Result<Self, String> {
        let mut raw = null_mut();
        // SAFETY: writes one descriptor handle.
        let status = unsafe { (api.miopenCreateTensorDescriptor)(&mut raw) };
        check_mi(api, status, "miopenCreateTensorDescriptor")?;
        let desc = TensorDesc { api, raw };
        // SAFETY: a live descriptor; `lens` holds `num_lens` = 4 ints and outlives the call.
        let status = unsafe {
            (api.miopenSetNdTensorDescriptorWithLayout)(raw, dtype, layout.raw(), lens.as_ptr(), 4)
        };
        check_mi(
            api,
            status,
            format_args!(
                "miopenSetNdTensorDescriptorWithLayout({}, {lens:?})",
                layout.name()
            ),
        )?;
        Ok(desc)
    }
}

impl Drop for TensorDesc {
    fn drop(&mut self) {
        // SAFETY: created by `new`, destroyed only here.
        let _ = unsafe { (self.api.miopenDestroyTensorDescriptor)(self.raw) };
    }
}

/// A convolution descriptor, destroyed on drop.
struct ConvDesc {
    api: &'static MiOpenApi,
    raw: MiConvDesc,
}

impl Drop for ConvDesc {
    fn drop(&mut self) {
        // SAFETY: created in `ConvPlan::new`, destroyed only here.
        let _ = unsafe { (self.api.miopenDestroyConvolutionDescriptor)(self.raw) };
    }
}

/// Everything a convolution call needs, made once (see the module docs).
struct ConvPlan {
    /// `(n, l, kw, f)` and the address of the weight tensor it was made for.
    key: ((usize, usize, usize, usize), u64),
    x: TensorDesc,
    w: TensorDesc,
    y: TensorDesc,
    conv: ConvDesc,
    /// The weight in MIOpen's filter layout (multi); `None` when ours is already it (single).
    weight: Option<Tensor<f16>>,
    workspace: Option<Tensor<u8>>,
    algo: c_int,
    layout: Layout,
}

/// A MIOpen handle on a HIP device's null stream.
pub struct MiOpen {
    api: &'static MiOpenApi,
    hip: &'static HipApi,
    handle: MiHandle,
    ordinal: c_int,
    dev: Device,
    /// `miopenGetVersion`, e.g. `3.3.0`.
    pub version: String,
    softmax: RefCell<Vec<((usize, usize), TensorDesc)>>,
    convs: RefCell<Vec<ConvPlan>>,
}

impl MiOpen {
    /// Loads MIOpen (and resolves `hipSetDevice` from our HIP runtime), makes `dev` current and creates a handle on the null
    /// stream (`miopenCreateWithStream(.., NULL)`). `Err`, never a panic, when `dev` is not a HIP
    /// device or a library or symbol is missing.
    pub fn new(dev: &Device) -> Result<MiOpen, String> {
        let ordinal = hip_ordinal(dev, "MIOpen")?;
        let api = miopen_api()?;
        let hip = hip_api(dev, "MIOpen")?;
        let (mut major, mut minor, mut patch) = (0usize, 0usize, 0usize);
        // SAFETY: writes three size_t.
        let status = unsafe { (api.miopenGetVersion)(&mut major, &mut minor, &mut patch) };
        check_mi(api, status, "miopenGetVersion")?;
        bind(hip, ordinal)?;
        let mut handle = null_mut();
        // SAFETY: writes one handle; a null stream is the device's null stream; the current
        // device is `dev`.
        let status = unsafe { (api.miopenCreateWithStream)(&mut handle, null_mut()) };
        check_mi(api, status, "miopenCreateWithStream(NULL stream)")?;
        Ok(MiOpen {
            api,
            hip,
            handle,
            ordinal,
            dev: dev.clone(),
            version: format!("{major}.{minor}.{patch}"),
            softmax: RefCell::new(Vec::new()),
            convs: RefCell::new(Vec::new()),
        })
    }

    /// Row-wise softmax of `x [m, n]` f32 into `y` (`miopenSoftmaxForward_V2`,
    /// `MIOPEN_SOFTMAX_ACCURATE`, `MIOPEN_SOFTMAX_MODE_INSTANCE` on `N = m, C = n, H = W = 1`;
    /// see the module docs), queued on the device's null stream. The descriptor is made on the
    /// first call for `(m, n)` and cached.
    pub fn softmax_f32(
        &self,
        x: &Tensor<f32>,
        y: &mut Tensor<f32>,
        (m, n): (usize, usize),
    ) -> Result<(), String> {
        if x.len() != m * n || y.len() != m * n {
            return Err(format!(
                "softmax_f32: lengths {} and {} do not match m={m}, n={n}",
                x.len(),
                y.len()
            ));
        }
        check_device(&self.dev, x, "x")?;
        check_device(&self.dev, y, "y")?;
        let mut cache = self.softmax.borrow_mut();
        let at = match cache.iter().position(|(k, _)| *k == (m, n)) {
            Some(i) => i,
            None => {
                let desc =
                    TensorDesc::new(self.api, mi::FLOAT, Layout::Nchw, &softmax_lens(m, n)?)?;
                cache.push(((m, n), desc));
                cache.len() - 1
            }
        };
        let desc = cache[at].1.raw;
        let (alpha, beta) = (1.0f32, 0.0f32);
        bind(self.hip, self.ordinal)?;
        // SAFETY: `x` and `y` are live allocations of this device holding `m·n` f32 each, as
        // `desc` (packed NCHW [m, n, 1, 1]) describes; `y` is borrowed mutably, so they do not
        // overlap; `alpha`, `beta` are host floats read during the call; handle and
        // descriptor are live; the device is current.
        let status = unsafe {
            (self.api.miopenSoftmaxForward_V2)(
                self.handle,
                (&alpha as *const f32).cast(),
                desc,
                x.device_ptr() as *const c_void,
                (&beta as *const f32).cast(),
                desc,
                y.device_ptr() as *mut c_void,
                mi::SOFTMAX_ACCURATE,
                mi::SOFTMAX_MODE_INSTANCE,
            )
        };
        check_mi(
            self.api,
            status,
            format_args!("miopenSoftmaxForward_V2({m}x{n})"),
        )
    }

    /// Chapter 09's 1-D correlation in f16 (f32 accumulation inside MIOpen's kernels): `x [n, l]`,
    /// `w [kw]` (f = 1) or `[kw, f]`, `out [n, l]` or `[n, l, f]`, zero padding `kw/2`, queued on
    /// the device's null stream. The first call for a given `(n, l, kw, f)` and weight tensor
    /// builds the plan (algorithm search, weight copy, workspace; see the module docs); later
    /// calls only queue `miopenConvolutionForward`.
    pub fn conv1d_f16(
        &self,
        x: &Tensor<f16>,
        w: &Tensor<f16>,
        out: &mut Tensor<f16>,
        (n, l, kw, f): (usize, usize, usize, usize),
    ) -> Result<(), String> {
        if x.len() != n * l || w.len() != kw * f || out.len() != n * l * f {
            return Err(format!(
                "conv1d_f16: lengths {}, {}, {} do not match n={n}, l={l}, kw={kw}, f={f}",
                x.len(),
                w.len(),
                out.len()
            ));
        }
        for (t, name) in [(x, "x"), (w, "w"), (&*out, "out")] {
            check_device(&self.dev, t, name)?;
        }
        let key = ((n, l, kw, f), w.device_ptr());
        let mut plans = self.convs.borrow_mut();
        let at = match plans.iter().position(|p| p.key == key) {
            Some(i) => i,
            None => {
                let plan = self.plan_conv(x, w, out, key)?;
                plans.push(plan);
                plans.len() - 1
            }
        };
        let p = &plans[at];
        let weight = p.weight.as_ref().map_or(w.device_ptr(), |t| t.device_ptr());
        let (ws, ws_bytes) = workspace(&p.workspace);
        let (alpha, beta) = (1.0f32, 0.0f32);
        bind(self.hip, self.ordinal)?;
        // SAFETY: `x`, the weight (ours or the plan's copy) and `out` are live allocations of
        // this device with exactly the elements their descriptors describe (lengths checked
        // above, descriptors made for these sizes); `out` is borrowed mutably and the plan's
        // copy is private, so the output overlaps no input; the workspace is the plan's live
        // buffer of `ws_bytes` bytes (at least what the chosen algorithm needs); `alpha`, `beta`
        // are host floats (alpha 1, beta 0, the only values 2-D convolution supports); the
        // device is current.
        let status = unsafe {
            (self.api.miopenConvolutionForward)(
                self.handle,
                (&alpha as *const f32).cast(),
                p.x.raw,
                x.device_ptr() as *const c_void,
                p.w.raw,
                weight as *const c_void,
                p.conv.raw,
                p.algo,
                (&beta as *const f32).cast(),
                p.y.raw,
                out.device_ptr() as *mut c_void,
                ws,
                ws_bytes,
            )
        };
        check_mi(
            self.api,
            status,
            format_args!("miopenConvolutionForward(n={n}, l={l}, kw={kw}, f={f})"),
        )
    }

    /// The record's config string for a convolution planned for these sizes, e.g.
    /// `"miopenConvolutionForward f16, NHWC, algo ImplicitGEMM (Find)"`; `None` before the first
    /// call.
    pub fn conv1d_config(&self, (n, l, kw, f): (usize, usize, usize, usize)) -> Option<String> {
        self.convs
            .borrow()
            .iter()
            .find(|p| p.key.0 == (n, l, kw, f))
            .map(|p| {
                format!(
                    "miopenConvolutionForward f16, {}, algo {} (Find)",
                    p.layout.name(),
                    fwd_algo_name(p.algo)
                )
            })
    }

    /// Drops every cached convolution plan (and weight copy): the next call plans again.
    pub fn forget_conv_plans(&self) {
        self.convs.borrow_mut().clear();
    }

    fn plan_conv(
        &self,
        x: &Tensor<f16>,
        w: &Tensor<f16>,
        out: &mut Tensor<f16>,
        key: ((usize, usize, usize, usize), u64),
    ) -> Result<ConvPlan, String> {
        let api = self.api;
        let (n, l, kw, f) = key.0;
        let shape = conv_shape(n, l, kw, f)?;
        let xd = TensorDesc::new(api, mi::HALF, shape.layout, &shape.x)?;
        let wd = TensorDesc::new(api, mi::HALF, shape.layout, &shape.w)?;
        let yd = TensorDesc::new(api, mi::HALF, shape.layout, &shape.y)?;
        let mut raw = null_mut();
        // SAFETY: writes one descriptor handle.
        let status = unsafe { (api.miopenCreateConvolutionDescriptor)(&mut raw) };
        check_mi(api, status, "miopenCreateConvolutionDescriptor")?;
        let conv = ConvDesc { api, raw };
        // SAFETY: a live descriptor; cross-correlation, non-negative padding, unit strides and
        // dilations.
        let status = unsafe {
            (api.miopenInitConvolutionDescriptor)(
                raw,
                mi::CONVOLUTION,
                shape.pad.0,
                shape.pad.1,
                1,
                1,
                1,
                1,
            )
        };
        check_mi(api, status, "miopenInitConvolutionDescriptor")?;
        let mut dims = [0 as c_int; 4];
        let [d0, d1, d2, d3] = &mut dims;
        // SAFETY: live descriptors; writes four ints.
        let status = unsafe {
            (api.miopenGetConvolutionForwardOutputDim)(raw, xd.raw, wd.raw, d0, d1, d2, d3)
        };
        check_mi(api, status, "miopenGetConvolutionForwardOutputDim")?;
        if dims != shape.y {
            return Err(format!(
                "conv1d: MIOpen computes an output of {dims:?} (NCHW order), expected {:?}",
                shape.y
            ));
        }

        // The filter in MIOpen's layout: ours as it is for f = 1, transposed for f > 1.
        let weight = if f == 1 {
            None
        } else {
            let host = w.to_vec().map_err(|e| format!("conv1d: reading w: {e}"))?;
            let t = self
                .dev
                .upload(&transpose_taps(&host, kw, f), &[f, kw])
                .map_err(|e| format!("conv1d: uploading the transposed weight: {e}"))?;
            Some(t)
        };
        let w_ptr = weight.as_ref().map_or(w.device_ptr(), |t| t.device_ptr());

        bind(self.hip, self.ordinal)?;
        let mut ws_bytes = 0usize;
        // SAFETY: live handle and descriptors; writes one size_t.
        let status = unsafe {
            (api.miopenConvolutionForwardGetWorkSpaceSize)(
                self.handle,
                wd.raw,
                xd.raw,
                raw,
                yd.raw,
                &mut ws_bytes,
            )
        };
        check_mi(api, status, "miopenConvolutionForwardGetWorkSpaceSize")?;
        let workspace_t = if ws_bytes > 0 {
            Some(
                self.dev
                    .zeros::<u8>(&[ws_bytes])
                    .map_err(|e| format!("conv1d: a {ws_bytes}-byte workspace: {e}"))?,
            )
        } else {
            None
        };
        let (ws, ws_len) = workspace(&workspace_t);
        let mut perf = [ConvAlgoPerf::default(); 8];
        let mut returned: c_int = 0;
        bind(self.hip, self.ordinal)?;
        // SAFETY: as in `conv1d_f16` for the buffers (`out` is written: the real convolution
        // overwrites it afterwards); `perf` has room for the `request` = 8 results asked for;
        // writes one int; the workspace is live with `ws_len` bytes.
        let status = unsafe {
            (api.miopenFindConvolutionForwardAlgorithm)(
                self.handle,
                xd.raw,
                x.device_ptr() as *const c_void,
                wd.raw,
                w_ptr as *const c_void,
                raw,
                yd.raw,
                out.device_ptr() as *mut c_void,
                perf.len() as c_int,
                &mut returned,
                perf.as_mut_ptr(),
                ws,
                ws_len,
                false,
            )
        };
        check_mi(api, status, "miopenFindConvolutionForwardAlgorithm")?;
        let best = pick_algo(&perf, returned, ws_len)?;
        Ok(ConvPlan {
            key,
            x: xd,
            w: wd,
            y: yd,
            conv,
            weight,
            workspace: workspace_t,
            algo: best.fwd_algo,
            layout: shape.layout,
        })
    }
}

/// The workspace pointer and size for a call: null and 0 without one.
fn workspace(t: &Option<Tensor<u8>>) -> (*mut c_void, usize) {
    match t {
        Some(t) => (t.device_ptr() as *mut c_void, t.len()),
        None => (null_mut(), 0),
    }
}

/// The first (fastest) of the `returned` results of a Find, which must fit the workspace.
fn pick_algo(
    perf: &[ConvAlgoPerf],
    returned: c_int,
    ws_bytes: usize,
) -> Result<ConvAlgoPerf, String> {
    let count = usize::try_from(returned).unwrap_or(0).min(perf.len());
    let best = *perf[..count].first().ok_or_else(|| {
        "miopenFindConvolutionForwardAlgorithm returned no algorithm for this convolution"
            .to_string()
    })?;
    if best.memory > ws_bytes {
        return Err(format!(
            "MIOpen's best algorithm ({}) needs {} workspace bytes, more than the {ws_bytes} it \
             was offered",
            fwd_algo_name(best.fwd_algo),
            best.memory
        ));
    }
    Ok(best)
}

impl Drop for MiOpen {
    fn drop(&mut self) {
        // Descriptors and buffers first, then the handle. Nothing can report an error here.
        self.softmax.get_mut().clear();
        self.convs.get_mut().clear();
        if bind(self.hip, self.ordinal).is_ok() {
            // SAFETY: created in `new`, destroyed only here.
            let _ = unsafe { (self.api.miopenDestroy)(self.handle) };
        }
    }
}

fn check_mi(api: &MiOpenApi, status: c_int, what: impl std::fmt::Display) -> Result<(), String> {
    if status == mi::STATUS_SUCCESS {
        return Ok(());
    }
    // SAFETY: returns a static string (or null).
    let text = unsafe { c_str((api.miopenGetErrorString)(status)) };
    Err(format!(
        "{what}: {} ({})",
        text.unwrap_or_else(|| format!("miopenStatus_t {status}")),
        api.library().path().display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
