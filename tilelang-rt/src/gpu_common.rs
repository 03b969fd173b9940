//! What the GPU backends share: the enums a [`crate::Device`] holds its GPU state and device
//! memory in (dispatching to `cuda.rs` or `hip.rs`), the per-device cache of loaded modules,
//! and the preparation of an [`Object`]'s image, entry name and parameters for the driver.

use crate::cuda::{self, CudaDevice};
use crate::gpu::{KernelArg, Object};
use crate::hip::{self, HipDevice};
use crate::{Error, Result};
use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::sync::{Arc, Mutex, PoisonError};

/// The GPU state of a [`crate::Device`]: one per backend. Every method forwards to the backend
/// and has the contract documented there (`CudaDevice`, `HipDevice`).
pub(crate) enum GpuDevice {
    Cuda(CudaDevice),
    Hip(HipDevice),
}

/// Device memory owned by a tensor; freed on drop.
pub(crate) enum DeviceBuffer {
    Cuda(cuda::DeviceBuffer),
    Hip(hip::DeviceBuffer),
}

impl DeviceBuffer {
    pub(crate) fn ptr(&self) -> u64 {
        match self {
            DeviceBuffer::Cuda(b) => b.ptr(),
            DeviceBuffer::Hip(b) => b.ptr(),
        }
    }
}

impl GpuDevice {
    /// New device memory for `bytes` bytes, each set to `fill` (left unset for `None`). Zero
    /// bytes still allocate one, so that every tensor has a distinct address.
    pub(crate) fn alloc(&self, bytes: usize, fill: Option<u8>) -> Result<DeviceBuffer> {
        Ok(match self {
            GpuDevice::Cuda(d) => DeviceBuffer::Cuda(d.alloc(bytes, fill)?),
            GpuDevice::Hip(d) => DeviceBuffer::Hip(d.alloc(bytes, fill)?),
        })
    }

    /// Refuses an operation other than a launch while the calling thread records a graph: it
    /// would run now, out of order with the recorded launches, which run when the graph does.
    pub(crate) fn not_recording(&self, what: &str) -> Result<()> {
        match self {
            GpuDevice::Cuda(d) if d.recording_here() => Err(Error::Graph(format!(
                "{what} while recording a graph: only kernel launches can be recorded, and \
                 everything else would run now, before the recorded launches; do it before \
                 `record_graph` or after it returns"
            ))),
            _ => Ok(()),
        }
    }

    /// # Safety
    /// `ptr..ptr + bytes` is memory of this device that stays allocated until the fill runs.
    pub(crate) unsafe fn memset(&self, ptr: u64, byte: u8, bytes: usize) -> Result<()> {
        self.not_recording("filling device memory")?;
        // SAFETY: the caller's contract.
        unsafe {
            match self {
                GpuDevice::Cuda(d) => d.memset(ptr, byte, bytes),
                GpuDevice::Hip(d) => d.memset(ptr, byte, bytes),
            }
        }
    }

    /// # Safety
    /// `ptr` is memory of this device valid for `size_of_val(src)` bytes.
    pub(crate) unsafe fn htod<T>(&self, ptr: u64, src: &[T]) -> Result<()> {
        self.not_recording("copying to the device")?;
        // SAFETY: the caller's contract.
        unsafe {
            match self {
                GpuDevice::Cuda(d) => d.htod(ptr, src),
                GpuDevice::Hip(d) => d.htod(ptr, src),
            }
        }
    }

    /// # Safety
    /// `ptr` is memory of this device valid for `size_of_val(dst)` bytes, and every bit pattern
    /// is a valid `T`.
    pub(crate) unsafe fn dtoh<T>(&self, dst: &mut [T], ptr: u64) -> Result<()> {
        self.not_recording("copying from the device")?;
        // SAFETY: the caller's contract.
        unsafe {
            match self {
                GpuDevice::Cuda(d) => d.dtoh(dst, ptr),
                GpuDevice::Hip(d) => d.dtoh(dst, ptr),
            }
        }
    }

    pub(crate) fn synchronize(&self) -> Result<()> {
        self.not_recording("synchronizing")?;
        match self {
            GpuDevice::Cuda(d) => d.synchronize(),
            GpuDevice::Hip(d) => d.synchronize(),
        }
    }

    pub(crate) fn time_ms(&self, f: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
        self.not_recording("timing")?;
        match self {
            GpuDevice::Cuda(d) => d.time_ms(f),
            GpuDevice::Hip(d) => d.time_ms(f),
        }
    }

    /// # Safety
    /// The contract of [`crate::Device::launch_gpu`]; `object.arch` is this device's arch.
    pub(crate) unsafe fn launch(
        &self,
        kernel: &'static str,
        object: &'static Object,
        grid: [u32; 3],
        args: &[KernelArg],
    ) -> Result<()> {
        // SAFETY: the caller's contract.
        unsafe {
            match self {
                GpuDevice::Cuda(d) => d.launch(kernel, object, grid, args),
                GpuDevice::Hip(d) => d.launch(kernel, object, grid, args),
            }
        }
    }
}

/// The modules a device has loaded, one per object (image and entry), each loaded on first use
/// and kept for the life of the device. `M` is the backend's loaded module and function, which
/// unloads itself on drop.
pub(crate) struct ModuleCache<M> {
    modules: Mutex<HashMap<ModuleKey, Arc<M>>>,
}

/// Which object a loaded module came from: (image address, image length, entry). Images are
/// `'static`, so equal keys are the same bytes.
type ModuleKey = (usize, usize, &'static str);

impl<M> ModuleCache<M> {
    pub(crate) fn new() -> Self {
        ModuleCache {
            modules: Mutex::new(HashMap::new()),
        }
    }

    /// The loaded module of `object`, calling `load` the first time. A failed load is not
    /// remembered: the next launch tries again (and fails the same way, with the same message).
    pub(crate) fn get_or_load(
        &self,
        object: &'static Object,
        load: impl FnOnce() -> Result<M>,
    ) -> Result<Arc<M>> {
        let key = (
            object.image.as_ptr() as usize,
            object.image.len(),
            object.entry,
        );
        // Held across `load`, so two threads never load the same object twice.
        let mut modules = self.modules.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(loaded) = modules.get(&key) {
            return Ok(loaded.clone());
        }
        let loaded = Arc::new(load()?);
        modules.insert(key, loaded.clone());
        Ok(loaded)
    }
}

/// `gemm (config big, sm_90)`, for messages.
pub(crate) fn what(kernel: &str, object: &Object) -> String {
    format!("{kernel} (config {}, {})", object.config, object.arch)
}

/// The object's image, copied for the driver, and its entry name as a C string.
///
/// `cuModuleLoadData` and `hipModuleLoadData` read the image in place: an ELF image (cubin,
/// fatbin, AMDGPU code object) wants alignment, which the bytes of `include_bytes!` lack, and PTX
/// text must end in NUL. So the image is copied into 8-byte words with at least one zero byte
/// after it; pass `words.as_ptr()` to the driver and keep `words` alive through the call.
pub(crate) fn prepare_image(kernel: &str, object: &Object) -> Result<(Vec<u64>, CString)> {
    let what = what(kernel, object);
    let bad = |reason: &str| Error::BadObject {
        kernel: what.clone(),
        reason: reason.to_string(),
    };
    if object.image.is_empty() {
        return Err(bad("its image is empty"));
    }
    let entry =
        CString::new(object.entry).map_err(|_| bad("its entry name contains a NUL byte"))?;
    let mut words = vec![0u64; object.image.len() / 8 + 1];
    for (word, chunk) in words.iter_mut().zip(object.image.chunks(8)) {
        let mut bytes = [0u8; 8];
        bytes[..chunk.len()].copy_from_slice(chunk);
        *word = u64::from_ne_bytes(bytes);
    }
    Ok((words, entry))
}

/// The `kernelParams` array of `cuLaunchKernel` and `hipModuleLaunchKernel`: the address of
/// each argument's value, in order. Valid while `args` is borrowed; the driver copies the values
/// (their sizes come from the kernel's parameter list in the image).
pub(crate) fn kernel_params(args: &[KernelArg]) -> Vec<*mut c_void> {
    args.iter().map(KernelArg::param_ptr).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    const fn obj(arch: &'static str, entry: &'static str, image: &'static [u8]) -> Object {
        Object {
            arch,
            config: "default",
            entry,
            threads: 64,
            shared_bytes: 0,
            image,
        }
    }

    static IMAGE: [u8; 10] = *b"\x7fELF-image";
    static A: Object = obj("gfx1100", "a", &IMAGE);
    static B: Object = obj("gfx1100", "b", &IMAGE);

    #[test]
    fn modules_load_once_per_object() {
        let cache = ModuleCache::<u32>::new();
        let loads = Cell::new(0);
        let load = |v| {
            loads.set(loads.get() + 1);
            Ok(v)
        };
        assert_eq!(*cache.get_or_load(&A, || load(1)).unwrap(), 1);
        assert_eq!(*cache.get_or_load(&A, || load(2)).unwrap(), 1);
        assert_eq!(*cache.get_or_load(&B, || load(3)).unwrap(), 3);
        assert_eq!(loads.get(), 2);
        // A failure is returned and not cached.
        let cache = ModuleCache::<u32>::new();
        let e = cache
            .get_or_load(&A, || Err(Error::External("no".into())))
            .unwrap_err();
        assert_eq!(e, Error::External("no".into()));
        assert_eq!(*cache.get_or_load(&A, || load(4)).unwrap(), 4);
    }

    #[test]
    fn images_are_copied_aligned_and_terminated() {
        let (words, entry) = prepare_image("k", &A).unwrap();
        assert_eq!(entry.as_bytes(), b"a");
        assert_eq!(words.len(), 2);
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
        assert_eq!(&bytes[..10], &IMAGE);
        assert!(bytes[10..].iter().all(|&b| b == 0));
        // A multiple of 8 bytes still gets a zero word after it.
        static EIGHT: Object = obj("gfx90a", "k", b"12345678");
        let (words, _) = prepare_image("k", &EIGHT).unwrap();
        assert_eq!(words, vec![u64::from_ne_bytes(*b"12345678"), 0]);
    }

    #[test]
    fn bad_images_and_entries_are_bad_objects() {
        static EMPTY: Object = obj("gfx942", "k", b"");
        let e = prepare_image("gemm", &EMPTY).unwrap_err();
        assert_eq!(
            e,
            Error::BadObject {
                kernel: "gemm (config default, gfx942)".into(),
                reason: "its image is empty".into()
            }
        );
        assert!(e.to_string().contains("a bug in the build"), "{e}");
        static NUL: Object = obj("gfx942", "k\0x", b"\x7fELF");
        let e = prepare_image("gemm", &NUL).unwrap_err();
        assert!(
            matches!(&e, Error::BadObject { reason, .. } if reason.contains("NUL")),
            "{e}"
        );
    }

    #[test]
    fn params_point_at_each_argument() {
        let args = [KernelArg::Ptr(7), KernelArg::I32(-1)];
        let params = kernel_params(&args);
        assert_eq!(params.len(), 2);
        // SAFETY: each pointer points at the payload of the matching variant, in `args`.
        unsafe {
            assert_eq!(*(params[0] as *const u64), 7);
            assert_eq!(*(params[1] as *const i32), -1);
        }
        assert!(kernel_params(&[]).is_empty());
    }
}
