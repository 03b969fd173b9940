//! Devices.
//!
//! Three backends: the CPU (the reference semantics), CUDA (through cudarc, with the driver
//! loaded at run time; see `cuda.rs`) and HIP (AMD's runtime, loaded at run time; see `hip.rs`).
//! Both GPU backends keep device memory behind the same [`crate::Tensor`] type
//! (`gpu_device.rs`); the tensors a device makes are in `tensor.rs`.

#[cfg(doc)]
use crate::error::Error; // named by the docs; the code only passes the backends' errors on
use crate::error::{Backend, Result};
use crate::gpu_device::GpuDevice;
use crate::{cuda, hip};
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Instant;

struct Inner {
    backend: Backend,
    arch: String,
    name: String,
    /// The ordinal the device was opened with (`Device::cuda(i)`, `Device::hip(i)`); `None` on
    /// the CPU.
    ordinal: Option<usize>,
    /// `Some` exactly when `backend` is a GPU backend, of that backend.
    gpu: Option<GpuDevice>,
}

/// A device that owns tensors and runs kernels. Cheap to clone; clones are the same device.
#[derive(Clone)]
pub struct Device {
    inner: Arc<Inner>,
}

impl PartialEq for Device {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}
impl Eq for Device {}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Device({}, {})", self.inner.arch, self.inner.name)
    }
}

impl Device {
    /// The CPU backend. Every call returns the same device.
    pub fn cpu() -> Device {
        static CPU: OnceLock<Device> = OnceLock::new();
        CPU.get_or_init(|| Device {
            inner: Arc::new(Inner {
                backend: Backend::Cpu,
                arch: "cpu".to_string(),
                name: format!(
                    "host CPU ({} threads available)",
                    std::thread::available_parallelism().map_or(1, |n| n.get())
                ),
                ordinal: None,
                gpu: None,
            }),
        })
        .clone()
    }

    /// CUDA device `ordinal` (0 is the first GPU). Every call with the same ordinal returns the
    /// same device.
    ///
    /// # Errors
    /// [`Error::NoDevice`] when the NVIDIA driver library (libcuda) is missing or older than
    /// CUDA 13.0, when there is no such device, or when the driver cannot open it;
    /// [`Error::Driver`] when reading the opened device's properties fails.
    pub fn cuda(ordinal: usize) -> Result<Device> {
        static OPEN: Mutex<Vec<(usize, Device)>> = Mutex::new(Vec::new());
        Device::open_gpu(&OPEN, ordinal, || {
            let (gpu, arch, name) = cuda::open(ordinal)?;
            Ok((Backend::Cuda, GpuDevice::Cuda(gpu), arch, name))
        })
    }

    /// HIP device `ordinal` (0 is the first AMD GPU the runtime sees, after
    /// `HIP_VISIBLE_DEVICES`). Every call with the same ordinal returns the same device. Its
    /// [`arch`](Device::arch) is the bare target (`gfx90a`, `gfx1100`), without the target
    /// features the runtime reports (`gfx90a:sramecc+:xnack-`).
    ///
    /// # Errors
    /// [`Error::NoDevice`] when the HIP runtime (`libamdhip64.so.7`, `.so.6` or `.so`, searched
    /// by the dynamic loader, then in `$ROCM_PATH/lib` and `/opt/rocm/lib`) is missing or older
    /// than ROCm 6.0, when it cannot initialise, when there is no such device, or when its
    /// properties come in a layout this build does not know; [`Error::Driver`] when reading the
    /// opened device's properties fails.
    pub fn hip(ordinal: usize) -> Result<Device> {
        static OPEN: Mutex<Vec<(usize, Device)>> = Mutex::new(Vec::new());
        Device::open_gpu(&OPEN, ordinal, || {
            let (gpu, arch, name) = hip::open(ordinal)?;
            Ok((Backend::Hip, GpuDevice::Hip(gpu), arch, name))
        })
    }

    /// The device of `ordinal` in `open`, opening it with `open_device` the first time.
    fn open_gpu(
        open: &Mutex<Vec<(usize, Device)>>,
        ordinal: usize,
        open_device: impl FnOnce() -> Result<(Backend, GpuDevice, String, String)>,
    ) -> Result<Device> {
        let mut open = open.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, dev)) = open.iter().find(|(o, _)| *o == ordinal) {
            return Ok(dev.clone());
        }
        let (backend, gpu, arch, name) = open_device()?;
        let dev = Device {
            inner: Arc::new(Inner {
                backend,
                arch,
                name,
                ordinal: Some(ordinal),
                gpu: Some(gpu),
            }),
        };
        open.push((ordinal, dev.clone()));
        Ok(dev)
    }

    /// The best device present: the first CUDA device when there is a driver and a device,
    /// else the first HIP device when there is a runtime and a device, else the CPU backend.
    ///
    /// # Errors
    /// None today (a GPU that cannot be opened is skipped); `Result` leaves room for backends
    /// that might.
    pub fn best() -> Result<Device> {
        Ok(Device::cuda(0)
            .or_else(|_| Device::hip(0))
            .unwrap_or_else(|_| Device::cpu()))
    }

    /// Which backend runs this device's kernels.
    pub fn backend(&self) -> Backend {
        self.inner.backend
    }

    /// The target architecture kernels are selected by: `"cpu"`, `"sm_90"` (from the compute
    /// capability), `"gfx1100"` (the bare HIP target), ...
    pub fn arch(&self) -> &str {
        &self.inner.arch
    }

    /// The device's ordinal within its backend: `Some(i)` for `Device::cuda(i)` or
    /// `Device::hip(i)` (the index the driver or runtime uses for it, after
    /// `CUDA_VISIBLE_DEVICES` / `HIP_VISIBLE_DEVICES`), `None` for the CPU. A vendor library
    /// that works on "the current device" (rocBLAS, MIOpen) needs it.
    pub fn ordinal(&self) -> Option<usize> {
        self.inner.ordinal
    }

    /// A human-readable description of the device: the GPU's name, or the host CPU.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    pub(crate) fn gpu(&self) -> Option<&GpuDevice> {
        self.inner.gpu.as_ref()
    }

    /// The CUDA stream this device queues all its work on (`None` on other backends), so that a
    /// vendor library (cuBLAS in the benches) can work on the device's tensors, through
    /// [`crate::Tensor::device_ptr`], in order with our own launches and copies. Not a stable API.
    #[doc(hidden)]
    pub fn cuda_stream(&self) -> Option<Arc<cudarc::driver::CudaStream>> {
        match self.gpu() {
            Some(GpuDevice::Cuda(gpu)) => Some(gpu.stream().clone()),
            _ => None,
        }
    }

    /// The HIP runtime library this device's backend opened and initialised (`None` on other
    /// backends), so that a vendor library's wrapper (rocBLAS and MIOpen in the benches) can
    /// resolve the few HIP functions it calls itself (`hipSetDevice`, `hipMemcpyDtoDAsync`)
    /// from the same runtime, through [`crate::dylib`], instead of opening a second one. Not a
    /// stable API.
    #[doc(hidden)]
    pub fn hip_library(&self) -> Option<&'static crate::dylib::Library> {
        match self.gpu() {
            Some(GpuDevice::Hip(gpu)) => Some(gpu.library()),
            _ => None,
        }
    }

    /// Runs `f` once and returns how long it took, in milliseconds: on a GPU, the device time
    /// between events recorded on the device's stream before and after `f` (so `f` should queue
    /// work, and this waits for it); on the CPU, the wall time of `f`.
    ///
    /// # Errors
    /// `f`'s error; on a GPU, [`Error::Driver`] when creating, recording or reading the events
    /// fails (a failure of the timed work can show here), and [`Error::Graph`] while this thread
    /// records a graph on the device.
    pub fn time_ms(&self, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
        match self.gpu() {
            Some(gpu) => gpu.time_ms(&mut f),
            None => {
                let start = Instant::now();
                f()?;
                Ok(start.elapsed().as_secs_f64() * 1e3)
            }
        }
    }

    /// Waits for all work queued on the device. Launches on a GPU are asynchronous, and a
    /// kernel's failure shows here. The CPU backend runs synchronously.
    ///
    /// # Errors
    /// On a GPU, [`Error::Driver`] when the device reports a failure of queued work (a faulting
    /// kernel: the driver's status names it), and [`Error::Graph`] while this thread records a
    /// graph on the device. Never on the CPU.
    pub fn synchronize(&self) -> Result<()> {
        match self.gpu() {
            Some(gpu) => gpu.synchronize(),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn best_is_cuda_then_hip_then_the_cpu() {
        let best = Device::best().unwrap();
        match (Device::cuda(0), Device::hip(0)) {
            (Ok(gpu), _) => assert_eq!(best, gpu),
            (Err(e), Ok(gpu)) => {
                assert!(matches!(e, Error::NoDevice(_)), "{e}");
                assert_eq!(best, gpu);
                assert_eq!(gpu.backend(), Backend::Hip);
            }
            (Err(cuda), Err(hip)) => {
                assert!(matches!(cuda, Error::NoDevice(_)), "{cuda}");
                assert!(matches!(hip, Error::NoDevice(_)), "{hip}");
                assert_eq!(best, Device::cpu());
            }
        }
    }

    #[test]
    fn hip_without_a_runtime_is_no_device() {
        // Either way `hip(huge)` is NoDevice: no runtime, or no such device.
        let e = Device::hip(1 << 20).unwrap_err();
        assert!(
            matches!(&e, Error::NoDevice(m) if m.starts_with("HIP")),
            "{e}"
        );
        if let Err(e) = Device::hip(0) {
            let msg = e.to_string();
            assert!(matches!(e, Error::NoDevice(_)), "{msg}");
            // Asking again gives the same answer.
            assert_eq!(Device::hip(0).unwrap_err(), e);
        }
    }

    #[test]
    fn cuda_without_a_driver_names_libcuda() {
        if cuda::probe().is_ok() {
            return; // a driver is installed: covered by tests/cuda.rs
        }
        let e = Device::cuda(0).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, Error::NoDevice(_)), "{msg}");
        assert!(msg.contains("libcuda"), "{msg}");
        assert!(Device::cuda(3).is_err());
    }

    #[test]
    fn time_ms_on_the_cpu_is_wall_time() {
        let dev = Device::cpu();
        let mut calls = 0;
        let ms = dev
            .time_ms(|| {
                calls += 1;
                std::thread::sleep(std::time::Duration::from_millis(2));
                Ok(())
            })
            .unwrap();
        assert_eq!(calls, 1);
        assert!(ms >= 2.0, "{ms}");
        let e = dev
            .time_ms(|| Err(Error::NoDevice("x".into())))
            .unwrap_err();
        assert_eq!(e, Error::NoDevice("x".into()));
        dev.synchronize().unwrap();
    }
}
