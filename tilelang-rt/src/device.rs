//! Devices and tensors.
//!
//! Today the runtime has one backend, the CPU (the reference semantics). GPU backends (CUDA via
//! cudarc, HIP loaded at run time) slot in as further [`Backend`] variants with device memory
//! behind the same [`Tensor`] type.

use crate::{Element, Error, Result};
use std::fmt;
use std::sync::{Arc, OnceLock};

/// Which kind of machine runs kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Backend {
    /// Blocks run one after another on the host; the reference semantics.
    Cpu,
}

struct Inner {
    backend: Backend,
    arch: &'static str,
    name: String,
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
                arch: "cpu",
                name: format!(
                    "host CPU ({} threads available)",
                    std::thread::available_parallelism().map_or(1, |n| n.get())
                ),
            }),
        })
        .clone()
    }

    /// The best device present: a GPU when a GPU backend finds one, else the CPU backend.
    /// No GPU backend exists yet in this version, so this is the CPU.
    pub fn best() -> Result<Device> {
        Ok(Device::cpu())
    }

    pub fn backend(&self) -> Backend {
        self.inner.backend
    }

    /// The target architecture kernels are selected by: `"cpu"`, `"sm_90"`, `"gfx1100"`, ...
    pub fn arch(&self) -> &'static str {
        self.inner.arch
    }

    /// A human-readable description of the device.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Copies host data into a new tensor of the given shape.
    pub fn upload<T: Element>(&self, data: &[T], shape: &[usize]) -> Result<Tensor<T>> {
        let n = shape_len(shape)?;
        if n != data.len() {
            return Err(Error::LengthMismatch {
                expected: n,
                found: data.len(),
            });
        }
        Ok(Tensor {
            device: self.clone(),
            shape: shape.to_vec(),
            storage: Storage::Host(data.to_vec()),
        })
    }

    /// A new tensor whose every element is poison ([`Element::POISON`]: NaN for floats), so that
    /// an element a kernel forgets to write is caught.
    pub fn alloc<T: Element>(&self, shape: &[usize]) -> Result<Tensor<T>> {
        let n = shape_len(shape)?;
        Ok(Tensor {
            device: self.clone(),
            shape: shape.to_vec(),
            storage: Storage::Host(vec![T::POISON; n]),
        })
    }

    /// A new tensor of zeros.
    pub fn zeros<T: Element>(&self, shape: &[usize]) -> Result<Tensor<T>> {
        let n = shape_len(shape)?;
        Ok(Tensor {
            device: self.clone(),
            shape: shape.to_vec(),
            storage: Storage::Host(vec![T::default(); n]),
        })
    }

    /// Waits for all work queued on the device. The CPU backend runs synchronously.
    pub fn synchronize(&self) -> Result<()> {
        Ok(())
    }
}

fn shape_len(shape: &[usize]) -> Result<usize> {
    shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .filter(|&n| n <= isize::MAX as usize)
        .ok_or(Error::LengthMismatch {
            expected: usize::MAX,
            found: 0,
        })
}

enum Storage<T> {
    Host(Vec<T>),
    /// Memory the tensor does not own (see [`Tensor::from_raw_parts`]).
    Borrowed {
        ptr: *mut T,
        len: usize,
    },
}

/// A dense, row-major tensor on a device.
pub struct Tensor<T: Element> {
    device: Device,
    shape: Vec<usize>,
    storage: Storage<T>,
}

// SAFETY: owned storage is a Vec<T> with T: Send + Sync; borrowed storage is only created by the
// unsafe `from_raw_parts`, whose contract makes the caller responsible for the memory's validity
// while the tensor lives.
unsafe impl<T: Element> Send for Tensor<T> {}
unsafe impl<T: Element> Sync for Tensor<T> {}

impl<T: Element> fmt::Debug for Tensor<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Tensor<{}>{:?} on {:?}",
            T::DTYPE,
            self.shape,
            self.device
        )
    }
}

impl<T: Element> Tensor<T> {
    /// Wraps memory the tensor does not own, for interoperation with other libraries.
    ///
    /// # Safety
    /// `ptr` must be valid for reads and writes of `shape.iter().product()` elements of `T`,
    /// properly aligned, on `device`, for as long as the tensor lives, and nothing else may
    /// access that memory while a kernel uses the tensor. Two such tensors may overlap: the
    /// safe launchers detect an output that overlaps another argument and refuse to launch.
    pub unsafe fn from_raw_parts(
        device: &Device,
        ptr: *mut T,
        shape: &[usize],
    ) -> Result<Tensor<T>> {
        let len = shape_len(shape)?;
        Ok(Tensor {
            device: device.clone(),
            shape: shape.to_vec(),
            storage: Storage::Borrowed { ptr, len },
        })
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    pub fn len(&self) -> usize {
        match &self.storage {
            Storage::Host(v) => v.len(),
            Storage::Borrowed { len, .. } => *len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn dtype(&self) -> crate::Dtype {
        T::DTYPE
    }

    pub fn device(&self) -> &Device {
        &self.device
    }

    /// Copies the tensor back to the host.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        Ok(self.host().to_vec())
    }

    /// Overwrites the tensor with host data of the same length.
    pub fn copy_from_slice(&mut self, data: &[T]) -> Result<()> {
        if data.len() != self.len() {
            return Err(Error::LengthMismatch {
                expected: self.len(),
                found: data.len(),
            });
        }
        self.host_mut().copy_from_slice(data);
        Ok(())
    }

    /// Fills the tensor with poison (NaN for floats), so unwritten elements show.
    pub fn poison(&mut self) -> Result<()> {
        self.host_mut().fill(T::POISON);
        Ok(())
    }

    /// The byte range the tensor occupies, for aliasing checks.
    #[doc(hidden)]
    pub fn address_range(&self) -> (usize, usize) {
        let (p, n) = match &self.storage {
            Storage::Host(v) => (v.as_ptr() as usize, v.len()),
            Storage::Borrowed { ptr, len } => (*ptr as usize, *len),
        };
        (p, p + n * std::mem::size_of::<T>())
    }

    /// The elements, for the CPU backend. Launchers call this only after the aliasing check.
    #[doc(hidden)]
    pub fn host(&self) -> &[T] {
        match &self.storage {
            Storage::Host(v) => v,
            // SAFETY: the contract of `from_raw_parts`.
            Storage::Borrowed { ptr, len } => unsafe { std::slice::from_raw_parts(*ptr, *len) },
        }
    }

    #[doc(hidden)]
    pub fn host_mut(&mut self) -> &mut [T] {
        match &mut self.storage {
            Storage::Host(v) => v,
            // SAFETY: the contract of `from_raw_parts`.
            Storage::Borrowed { ptr, len } => unsafe { std::slice::from_raw_parts_mut(*ptr, *len) },
        }
    }
}
