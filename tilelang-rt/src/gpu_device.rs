//! The GPU state a [`crate::Device`] holds and the device memory a tensor owns, as enums over
//! the backends (`cuda.rs`, `hip.rs`), dispatching to each one's [`GpuRuntime`].

use crate::cuda::{self, CudaDevice};
use crate::error::{Error, Result};
use crate::hip::{self, HipDevice};
use crate::object::{KernelArg, Object};
use crate::runtime::GpuRuntime;

/// `match` over the backends of a [`GpuDevice`], binding the backend's state to `$d`.
macro_rules! on_backend {
    ($gpu:expr, $d:ident => $body:expr) => {
        match $gpu {
            GpuDevice::Cuda($d) => $body,
            GpuDevice::Hip($d) => $body,
        }
    };
}

/// The GPU state of a [`crate::Device`]: one per backend. Every method goes to the backend's
/// [`GpuRuntime`] and has the contract documented there; the only thing added here is the
/// refusal of non-launch operations while the calling thread records a graph.
pub(crate) enum GpuDevice {
    Cuda(CudaDevice),
    Hip(HipDevice),
}

/// Device memory owned by a tensor; freed on drop.
pub(crate) enum DeviceBuffer {
    Cuda(cuda::DeviceBuffer),
    Hip(hip::DeviceBuffer),
}

impl From<cuda::DeviceBuffer> for DeviceBuffer {
    fn from(b: cuda::DeviceBuffer) -> Self {
        DeviceBuffer::Cuda(b)
    }
}

impl From<hip::DeviceBuffer> for DeviceBuffer {
    fn from(b: hip::DeviceBuffer) -> Self {
        DeviceBuffer::Hip(b)
    }
}

impl DeviceBuffer {
    pub(crate) fn ptr(&self) -> u64 {
        match self {
            DeviceBuffer::Cuda(b) => CudaDevice::address(b),
            DeviceBuffer::Hip(b) => HipDevice::address(b),
        }
    }
}

impl GpuDevice {
    /// [`GpuRuntime::alloc`].
    pub(crate) fn alloc(&self, bytes: usize, fill: Option<u8>) -> Result<DeviceBuffer> {
        on_backend!(self, d => d.alloc(bytes, fill).map(DeviceBuffer::from))
    }

    /// Refuses an operation other than a launch while the calling thread records a graph: it
    /// would run now, out of order with the recorded launches, which run when the graph does.
    pub(crate) fn not_recording(&self, what: &str) -> Result<()> {
        if on_backend!(self, d => d.recording_here()) {
            return Err(Error::Graph(format!(
                "{what} while recording a graph: only kernel launches can be recorded, and \
                 everything else would run now, before the recorded launches; do it before \
                 `record_graph` or after it returns"
            )));
        }
        Ok(())
    }

    /// [`GpuRuntime::memset`].
    ///
    /// # Safety
    /// As [`GpuRuntime::memset_async`].
    pub(crate) unsafe fn memset(&self, ptr: u64, byte: u8, bytes: usize) -> Result<()> {
        self.not_recording("filling device memory")?;
        // SAFETY: the caller's contract.
        on_backend!(self, d => unsafe { d.memset(ptr, byte, bytes) })
    }

    /// [`GpuRuntime::htod`].
    ///
    /// # Safety
    /// As [`GpuRuntime::htod`].
    pub(crate) unsafe fn htod<T>(&self, ptr: u64, src: &[T]) -> Result<()> {
        self.not_recording("copying to the device")?;
        // SAFETY: the caller's contract.
        on_backend!(self, d => unsafe { d.htod(ptr, src) })
    }

    /// [`GpuRuntime::dtoh`].
    ///
    /// # Safety
    /// As [`GpuRuntime::dtoh`].
    pub(crate) unsafe fn dtoh<T>(&self, dst: &mut [T], ptr: u64) -> Result<()> {
        self.not_recording("copying from the device")?;
        // SAFETY: the caller's contract.
        on_backend!(self, d => unsafe { d.dtoh(dst, ptr) })
    }

    /// [`GpuRuntime::dtod_async`], queued after all earlier work (nothing for zero bytes).
    ///
    /// # Safety
    /// As [`GpuRuntime::dtod_async`].
    pub(crate) unsafe fn dtod(&self, dst: u64, src: u64, bytes: usize) -> Result<()> {
        self.not_recording("copying device memory")?;
        if bytes == 0 {
            return Ok(());
        }
        // SAFETY: the caller's contract.
        on_backend!(self, d => unsafe { d.dtod_async(dst, src, bytes) })
    }

    /// [`GpuRuntime::synchronize`].
    pub(crate) fn synchronize(&self) -> Result<()> {
        self.not_recording("synchronizing")?;
        on_backend!(self, d => d.synchronize())
    }

    /// [`GpuRuntime::time_ms`].
    pub(crate) fn time_ms(&self, f: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
        self.not_recording("timing")?;
        on_backend!(self, d => d.time_ms(f))
    }

    /// [`GpuRuntime::resident`].
    pub(crate) fn resident(&self, kernel: &'static str, object: &'static Object) -> Result<u32> {
        on_backend!(self, d => d.resident(kernel, object))
    }

    /// [`GpuRuntime::launch`].
    ///
    /// # Safety
    /// As [`GpuRuntime::launch`] (the contract of [`crate::Device::launch_gpu`]).
    pub(crate) unsafe fn launch(
        &self,
        kernel: &'static str,
        object: &'static Object,
        grid: [u32; 3],
        args: &[KernelArg],
    ) -> Result<()> {
        // SAFETY: the caller's contract.
        on_backend!(self, d => unsafe { d.launch(kernel, object, grid, args) })
    }
}
