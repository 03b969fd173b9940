//! What the vendor bindings share: a device's CUDA stream bound to the calling thread, cudarc
//! calls that may panic turned into errors, and the GEMMs' length check. A leaf of `vendor`.

use cudarc::driver::CudaStream;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use tilelang::{f16, Device, Tensor};

pub(crate) fn stream_of(dev: &Device) -> Result<Arc<CudaStream>, String> {
    dev.cuda_stream()
        .ok_or_else(|| format!("{} is not a CUDA device", dev.name()))
}

/// Makes the stream's context current on this thread: the libraries' runtime calls use the
/// current context (the device's primary context, the one tilelang opens).
pub(crate) fn bind(stream: &CudaStream) -> Result<(), String> {
    stream
        .context()
        .bind_to_thread()
        .map_err(|e| format!("binding the CUDA context: {e:?}"))
}

/// Runs a cudarc call that may panic (a symbol missing from an older library) as an error.
pub(crate) fn guarded<R>(what: &str, f: impl FnOnce() -> Result<R, String>) -> Result<R, String> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Err(format!("{what}: cudarc panicked: {msg}"))
        }
    }
}

/// Checks that `A[m, k]`, `B[k, n]` and `C[m, n]` have the lengths of their shapes, for the
/// vendor GEMMs (`what` names the call in the error).
pub fn gemm_lengths(
    what: &str,
    a: &Tensor<f16>,
    b: &Tensor<f16>,
    c: &Tensor<f16>,
    (m, n, k): (usize, usize, usize),
) -> Result<(), String> {
    if a.len() != m * k || b.len() != k * n || c.len() != m * n {
        return Err(format!(
            "{what}: lengths {}, {}, {} do not match m={m}, n={n}, k={k}",
            a.len(),
            b.len(),
            c.len()
        ));
    }
    Ok(())
}
