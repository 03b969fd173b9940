//! The vendor baselines: cuBLAS, cuBLASLt ([`cublaslt`]) and cuDNN ([`cudnn`]), through cudarc
//! with each library loaded at run time, and the CUDA driver's device-to-device copy, working
//! on our tensors in order with our launches: all are queued on the device's own stream
//! ([`Device::cuda_stream`]).

use cudarc::cublas::{sys as blas_sys, CudaBlas};
use cudarc::driver::result as drv;
use tilelang::{f16, Device, Element, Tensor};

mod common;
pub mod cublaslt;
pub mod cudnn;

pub use common::gemm_lengths;
use common::{bind, guarded, stream_of};
pub use cublaslt::BlasLt;
pub use cudnn::{Conv1d, Dnn, Softmax};

/// Where the benches look for cuBLAS, for error messages.
pub const CUBLAS_HINT: &str = "cuBLAS (libcublas.so.13) was not found: install it (e.g. the pip \
     package `nvidia-cublas`, or a CUDA toolkit) and put the directory holding libcublas.so* on \
     LD_LIBRARY_PATH; for the pip wheel: `python3 -c 'import nvidia, glob; \
     print(*glob.glob(nvidia.__path__[0] + \"/**/libcublas.so*\", recursive=True))'` finds it";

/// A cuBLAS handle on a device's stream.
pub struct Blas {
    blas: CudaBlas,
    /// `cublasGetVersion`, e.g. 130001 for 13.0.1.
    pub version: i32,
}

impl Blas {
    /// Loads cuBLAS and creates a handle on `dev`'s stream. A clear error (never a panic) when
    /// the device is not a CUDA device or the library is missing.
    pub fn new(dev: &Device) -> Result<Blas, String> {
        let stream = stream_of(dev)?;
        // SAFETY: only tries to open the library under cudarc's candidate names.
        if !unsafe { blas_sys::is_culib_present() } {
            return Err(CUBLAS_HINT.to_string());
        }
        guarded("creating a cuBLAS handle", || {
            let blas = CudaBlas::new(stream).map_err(|e| format!("cublasCreate: {e:?}"))?;
            let mut version = 0;
            // SAFETY: a live handle; writes one int.
            unsafe { blas_sys::cublasGetVersion_v2(*blas.handle(), &mut version) }
                .result()
                .map_err(|e| format!("cublasGetVersion: {e:?}"))?;
            Ok(Blas { blas, version })
        })
    }

    /// Row-major `C[m, n] = A[m, k]·B[k, n]` in f16 with f32 accumulation
    /// (`cublasGemmEx`, `CUBLAS_COMPUTE_32F`, default algorithm), queued on the device's stream.
    /// cuBLAS is column-major, so this computes `Cᵀ = Bᵀ·Aᵀ`: the row-major buffers of `B`, `A`
    /// and `C` are the column-major `Bᵀ`, `Aᵀ` and `Cᵀ`.
    pub fn gemm_f16(
        &self,
        a: &Tensor<f16>,
        b: &Tensor<f16>,
        c: &mut Tensor<f16>,
        (m, n, k): (usize, usize, usize),
    ) -> Result<(), String> {
        gemm_lengths("cublasGemmEx", a, b, c, (m, n, k))?;
        let dim = |x: usize| i32::try_from(x).map_err(|_| format!("gemm_f16: {x} exceeds i32"));
        let (mi, ni, ki) = (dim(m)?, dim(n)?, dim(k)?);
        let (alpha, beta) = (1.0f32, 0.0f32);
        let ptr = |t: u64| t as *const std::ffi::c_void;
        // SAFETY: the three buffers are live device allocations of this device holding
        // exactly the elements the call reads and writes (checked above); the scalars are
        // host values (the default pointer mode) that outlive the call, which reads them
        // before returning.
        unsafe {
            cudarc::cublas::result::gemm_ex(
                *self.blas.handle(),
                blas_sys::cublasOperation_t::CUBLAS_OP_N,
                blas_sys::cublasOperation_t::CUBLAS_OP_N,
                ni,
                mi,
                ki,
                (&alpha as *const f32).cast(),
                ptr(b.device_ptr()),
                blas_sys::cudaDataType::CUDA_R_16F,
                ni,
                ptr(a.device_ptr()),
                blas_sys::cudaDataType::CUDA_R_16F,
                ki,
                (&beta as *const f32).cast(),
                c.device_ptr() as *mut std::ffi::c_void,
                blas_sys::cudaDataType::CUDA_R_16F,
                ni,
                blas_sys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
                blas_sys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )
        }
        .map_err(|e| format!("cublasGemmEx({m}x{n}x{k}): {e:?}"))
    }
}

/// `dst = src` with the driver's device-to-device copy (`cuMemcpyDtoDAsync`), queued on the
/// device's stream: the bandwidth ceiling.
pub fn copy_d2d<T: Element>(
    dev: &Device,
    src: &Tensor<T>,
    dst: &mut Tensor<T>,
) -> Result<(), String> {
    if src.len() != dst.len() {
        return Err(format!(
            "copy_d2d: lengths {} and {} differ",
            src.len(),
            dst.len()
        ));
    }
    let stream = stream_of(dev)?;
    bind(&stream)?;
    let bytes = src.len() * std::mem::size_of::<T>();
    // SAFETY: both are live allocations of this device of `bytes` bytes; `dst` is borrowed
    // mutably, so they do not overlap through the safe API.
    unsafe {
        drv::memcpy_dtod_async(
            dst.device_ptr(),
            src.device_ptr(),
            bytes,
            stream.cu_stream(),
        )
    }
    .map_err(|e| format!("cuMemcpyDtoDAsync({bytes} bytes): {e:?}"))
}

/// The CUDA driver's version as `"13.0"`, `None` off CUDA.
pub fn driver_version(dev: &Device) -> Option<String> {
    dev.cuda_stream()?;
    let mut v = 0;
    // SAFETY: the device is open, so libcuda is loaded; writes one int.
    unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut v) }
        .result()
        .ok()?;
    Some(format!("{}.{}", v / 1000, v % 1000 / 10))
}
