//! The rocBLAS GEMM baseline.

use super::hip::{bind, check_device, hip_api, hip_ordinal, to_i32, HipApi, HipStream};
use super::load::{c_str, library_candidates, load_api, rocm_path, ROCBLAS, ROCBLAS_NAMES};
use std::ffi::{c_char, c_int, c_void};
use std::ptr::null_mut;
use std::sync::OnceLock;
use tilelang::__private::dylib_api;
use tilelang::{f16, Device, Tensor};

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

/// `rocblas_handle` (`struct _rocblas_handle*`).
type RbHandle = *mut c_void;

dylib_api! {
    /// rocBLAS functions: `library/include/internal/rocblas-auxiliary.h` (handle, stream, pointer
    /// mode) and `rocblas-functions.h` (the rest). `rocblas_int` is `int32_t` (rocblas-types.h,
    /// unless the never-shipped `rocblas_ILP64` is defined).
    pub(super) struct RocBlasApi {
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

/// The process-wide libraries, loaded once, never unloaded.
pub(super) fn rocblas_api() -> Result<&'static RocBlasApi, String> {
    static API: OnceLock<Result<RocBlasApi, String>> = OnceLock::new();
    API.get_or_init(|| {
        let c = library_candidates(rocm_path().as_deref(), ROCBLAS_NAMES);
        // SAFETY: rocBLAS's names and its API.
        unsafe { load_api(&ROCBLAS, &c, RocBlasApi::resolve) }
    })
    .as_ref()
    .map_err(Clone::clone)
}

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
