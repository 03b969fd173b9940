//! Tensors: dense, row-major arrays of one [`Element`] type on a [`Device`], in host memory on
//! the CPU and in device memory on a GPU (owned through `gpu_device.rs`, or borrowed); their
//! views, reshapes and copies, and the new tensors a device makes.

use crate::device::Device;
use crate::element::{Dtype, Element};
use crate::error::{Backend, Error, Result};
use crate::gpu_device::{DeviceBuffer, GpuDevice};
use std::fmt;
use std::sync::Arc;

/// How a new tensor's elements start out.
enum Init<'a, T> {
    Data(&'a [T]),
    Poison,
    Zeros,
}

/// New tensors.
impl Device {
    /// Copies host data into a new tensor of the given shape.
    ///
    /// # Errors
    /// [`Error::ShapeOverflow`] for a shape no tensor can have, [`Error::LengthMismatch`] when
    /// `data` does not have the shape's element count, [`Error::OutOfMemory`] when the host or
    /// device memory cannot be allocated; on a GPU, [`Error::Driver`] when the copy fails and
    /// [`Error::Graph`] while this thread records a graph on the device.
    pub fn upload<T: Element>(&self, data: &[T], shape: &[usize]) -> Result<Tensor<T>> {
        self.create(shape, Init::Data(data))
    }

    /// A new tensor whose every element is poison (NaN for floats, see [`Element::POISON`]), so
    /// that an element a kernel forgets to write is caught. Device memory is filled with
    /// [`crate::Dtype::poison_byte`].
    ///
    /// # Errors
    /// [`Error::ShapeOverflow`] for a shape no tensor can have, [`Error::OutOfMemory`] when the
    /// memory cannot be allocated; on a GPU, [`Error::Driver`] when the fill fails and
    /// [`Error::Graph`] while this thread records a graph on the device.
    pub fn alloc<T: Element>(&self, shape: &[usize]) -> Result<Tensor<T>> {
        self.create(shape, Init::Poison)
    }

    /// A new tensor of zeros.
    ///
    /// # Errors
    /// As [`Device::alloc`].
    pub fn zeros<T: Element>(&self, shape: &[usize]) -> Result<Tensor<T>> {
        self.create(shape, Init::Zeros)
    }

    fn create<T: Element>(&self, shape: &[usize], init: Init<'_, T>) -> Result<Tensor<T>> {
        let (n, bytes) = sizes::<T>(shape)?;
        if let Init::Data(data) = init {
            if n != data.len() {
                return Err(Error::LengthMismatch {
                    expected: n,
                    found: data.len(),
                });
            }
        }
        let storage = match self.gpu() {
            None => {
                let mut v = host_vec::<T>(n)?;
                match init {
                    Init::Data(data) => v.extend_from_slice(data),
                    Init::Poison => v.resize(n, T::POISON),
                    Init::Zeros => v.resize(n, T::default()),
                }
                Storage::Host(v)
            }
            Some(gpu) => {
                let fill = match init {
                    Init::Data(_) => None,
                    Init::Poison => Some(T::DTYPE.poison_byte()),
                    Init::Zeros => Some(0),
                };
                let buf = gpu.alloc(bytes, fill)?;
                let addr = buf.ptr();
                if let Init::Data(data) = init {
                    // SAFETY: `buf` holds `n` elements and `data` is `n` elements long.
                    unsafe { gpu.htod(addr, data) }?;
                }
                Storage::Gpu {
                    addr,
                    len: n,
                    _owned: Some(Arc::new(buf)),
                }
            }
        };
        Ok(Tensor {
            device: self.clone(),
            shape: shape.to_vec(),
            storage,
        })
    }
}

/// The element count and the size in bytes of a tensor of `shape` holding `T`:
/// [`Error::ShapeOverflow`] when the count overflows `usize` or the bytes exceed `isize::MAX`
/// (no allocation can be larger). A shape with a zero dimension has no elements, whatever the
/// other dimensions are.
fn sizes<T: Element>(shape: &[usize]) -> Result<(usize, usize)> {
    let overflow = || Error::ShapeOverflow {
        shape: shape.to_vec(),
        dtype: T::DTYPE,
    };
    let n = if shape.contains(&0) {
        0
    } else {
        shape
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .ok_or_else(overflow)?
    };
    let bytes = n
        .checked_mul(std::mem::size_of::<T>())
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or_else(overflow)?;
    Ok((n, bytes))
}

/// An empty vector with room for `n` elements, or [`Error::OutOfMemory`] (the CPU backend)
/// when the host cannot provide it, instead of the abort of `vec!`. `n` elements of `T` must
/// fit in `isize::MAX` bytes ([`sizes`]). With memory overcommit the reservation can succeed
/// and filling it can still run the host out of memory; nothing here can prevent that.
fn host_vec<T>(n: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| Error::OutOfMemory {
        backend: Backend::Cpu,
        bytes: n.saturating_mul(std::mem::size_of::<T>()),
    })?;
    Ok(v)
}

enum Storage<T> {
    /// Host memory the tensor owns (CPU device).
    Host(Vec<T>),
    /// Host memory the tensor does not own (CPU device, see [`Tensor::from_raw_parts`]).
    HostRaw { ptr: *mut T, len: usize },
    /// `len` elements of device memory at `addr` (GPU device): owned when `_owned` holds the
    /// allocation (freed when the tensor and every graph recorded with it are dropped), borrowed
    /// through [`Tensor::from_raw_parts`] when it is `None`.
    Gpu {
        addr: u64,
        len: usize,
        _owned: Option<Arc<DeviceBuffer>>,
    },
}

/// A dense, row-major tensor on a device.
pub struct Tensor<T: Element> {
    device: Device,
    shape: Vec<usize>,
    storage: Storage<T>,
}

// SAFETY: owned storage is a Vec<T> with T: Send + Sync, or device memory (a thread-safe
// cudarc allocation, or a HIP device address); borrowed storage is only created by the unsafe `from_raw_parts`, whose
// contract makes the caller responsible for the memory's validity while the tensor lives.
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
    /// On a CPU device `ptr` is a host address. On a GPU device it is a device address of that
    /// device (a `CUdeviceptr` or HIP device pointer cast to `*mut T`), which the host never
    /// dereferences: the tensor reads and writes it with the device's copies and kernels, queued
    /// on the device's stream (the CUDA context's default stream, or the HIP device's null
    /// stream; both also order against other blocking streams).
    ///
    /// # Safety
    /// `ptr` must be valid for reads and writes of `shape.iter().product()` elements of `T`,
    /// properly aligned, on `device`, for as long as the tensor lives (for device memory: until
    /// the work queued with the tensor has finished), and nothing else may access that memory
    /// while a kernel uses the tensor. Two such tensors may overlap: the safe launchers detect an
    /// output that overlaps another argument and refuse to launch.
    ///
    /// # Errors
    /// [`Error::ShapeOverflow`] for a shape no tensor can have. Nothing else is checked.
    pub unsafe fn from_raw_parts(
        device: &Device,
        ptr: *mut T,
        shape: &[usize],
    ) -> Result<Tensor<T>> {
        let (len, _) = sizes::<T>(shape)?;
        let storage = match device.gpu() {
            None => Storage::HostRaw { ptr, len },
            Some(_) => Storage::Gpu {
                addr: ptr as u64,
                len,
                _owned: None,
            },
        };
        Ok(Tensor {
            device: device.clone(),
            shape: shape.to_vec(),
            storage,
        })
    }

    /// The dimensions, outermost first (row-major).
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The number of elements: the product of the shape.
    pub fn len(&self) -> usize {
        match &self.storage {
            Storage::Host(v) => v.len(),
            Storage::HostRaw { len, .. } | Storage::Gpu { len, .. } => *len,
        }
    }

    /// Whether the tensor has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The element type.
    pub fn dtype(&self) -> Dtype {
        T::DTYPE
    }

    /// The device the tensor lives on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The device memory of a GPU tensor: its device and address. `None` for host memory.
    fn on_gpu(&self) -> Option<Result<(&GpuDevice, u64)>> {
        match self.storage {
            Storage::Gpu { addr, .. } => Some(match self.device.gpu() {
                Some(gpu) => Ok((gpu, addr)),
                // Device memory is only ever created on a GPU device.
                None => Err(Error::NotAGpu {
                    what: format!("{self:?}, which claims device memory,"),
                }),
            }),
            _ => None,
        }
    }

    /// Copies the tensor to the host, after all work queued on its device.
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] when the host cannot hold the copy; on a GPU, [`Error::Driver`]
    /// when the copy fails (an earlier launch's failure can show here) and [`Error::Graph`]
    /// while this thread records a graph on the device.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        match self.on_gpu() {
            None => {
                let data = self.host()?;
                let mut v = host_vec(data.len())?;
                v.extend_from_slice(data);
                Ok(v)
            }
            Some(_) => {
                let mut v = host_vec(self.len())?;
                v.resize(self.len(), T::default());
                self.copy_to_slice(&mut v)?;
                Ok(v)
            }
        }
    }

    /// Overwrites the tensor with host data of the same length, after all work queued on its
    /// device.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when `data` has another length; on a GPU, [`Error::Driver`]
    /// when the copy fails and [`Error::Graph`] while this thread records a graph on the device.
    pub fn copy_from_slice(&mut self, data: &[T]) -> Result<()> {
        if data.len() != self.len() {
            return Err(Error::LengthMismatch {
                expected: self.len(),
                found: data.len(),
            });
        }
        match self.on_gpu() {
            None => self.host_mut()?.copy_from_slice(data),
            Some(gpu) => {
                let (gpu, addr) = gpu?;
                // SAFETY: `addr` holds `len` = `data.len()` elements.
                unsafe { gpu.htod(addr, data) }?;
            }
        }
        Ok(())
    }

    /// Fills the tensor with poison (NaN for floats), so unwritten elements show.
    ///
    /// # Errors
    /// On a GPU, [`Error::Driver`] when the fill fails and [`Error::Graph`] while this thread
    /// records a graph on the device. Never on the CPU.
    pub fn poison(&mut self) -> Result<()> {
        match self.on_gpu() {
            None => self.host_mut()?.fill(T::POISON),
            Some(gpu) => {
                let (gpu, addr) = gpu?;
                // SAFETY: `addr` holds `len` elements.
                unsafe {
                    gpu.memset(
                        addr,
                        T::DTYPE.poison_byte(),
                        std::mem::size_of::<T>() * self.len(),
                    )
                }?;
            }
        }
        Ok(())
    }

    /// The byte range the tensor occupies, for aliasing checks: host addresses on the CPU,
    /// device addresses on a GPU (only tensors of one device are ever compared).
    #[doc(hidden)]
    pub fn address_range(&self) -> (usize, usize) {
        let p = match &self.storage {
            Storage::Host(v) => v.as_ptr() as usize,
            Storage::HostRaw { ptr, .. } => *ptr as usize,
            Storage::Gpu { addr, .. } => *addr as usize,
        };
        (p, p + self.len() * std::mem::size_of::<T>())
    }

    /// Keeps the tensor's device memory allocated for the life of the graph the calling thread
    /// is recording on its device, if any ([`Device::record_graph`]). A borrowed tensor
    /// ([`Tensor::from_raw_parts`]) cannot be kept, so it cannot be used in a recording.
    pub(crate) fn keep_for_graph(&self) -> Result<()> {
        let Some(GpuDevice::Cuda(gpu)) = self.device.gpu() else {
            return Ok(());
        };
        match &self.storage {
            Storage::Gpu {
                _owned: Some(buf), ..
            } => {
                gpu.keep_for_graph(buf);
                Ok(())
            }
            _ if gpu.recording_here() => Err(Error::Graph(format!(
                "{self:?} borrows its memory (`Tensor::from_raw_parts`), which a graph could \
                 outlive; record launches on tensors the device allocated"
            ))),
            _ => Ok(()),
        }
    }

    /// The address of the first element, for [`crate::gpu::KernelArg::Ptr`]: a device address
    /// on a GPU (a host address on the CPU, where it is of no use to kernels).
    #[doc(hidden)]
    pub fn device_ptr(&self) -> u64 {
        self.address_range().0 as u64
    }

    /// The elements in host memory, for the CPU backend; [`Error::NotOnHost`] for a tensor in
    /// device memory. Launchers call this only after the aliasing check.
    ///
    /// # Errors
    /// [`Error::NotOnHost`] for a tensor in device memory.
    #[doc(hidden)]
    pub fn host(&self) -> Result<&[T]> {
        match &self.storage {
            Storage::Host(v) => Ok(v),
            // SAFETY: the contract of `from_raw_parts`.
            Storage::HostRaw { ptr, len } => Ok(unsafe { std::slice::from_raw_parts(*ptr, *len) }),
            Storage::Gpu { .. } => Err(not_on_host(&self.device)),
        }
    }

    /// The elements in host memory, writable; see [`Tensor::host`].
    ///
    /// # Errors
    /// [`Error::NotOnHost`] for a tensor in device memory.
    #[doc(hidden)]
    pub fn host_mut(&mut self) -> Result<&mut [T]> {
        match &mut self.storage {
            Storage::Host(v) => Ok(v),
            // SAFETY: the contract of `from_raw_parts`.
            Storage::HostRaw { ptr, len } => {
                Ok(unsafe { std::slice::from_raw_parts_mut(*ptr, *len) })
            }
            Storage::Gpu { .. } => Err(not_on_host(&self.device)),
        }
    }
}

/// Views, reshapes and copies between tensors.
impl<T: Element> Tensor<T> {
    /// The same elements with another shape of the same number of elements, without copying
    /// (the tensor is row-major, so only the shape changes).
    ///
    /// # Errors
    /// [`Error::View`] when `shape` has another number of elements; [`Error::ShapeOverflow`]
    /// for a shape no tensor can have.
    pub fn reshape(mut self, shape: &[usize]) -> Result<Tensor<T>> {
        self.check_reshape(shape)?;
        self.shape = shape.to_vec();
        Ok(self)
    }

    fn check_reshape(&self, shape: &[usize]) -> Result<()> {
        let (n, _) = sizes::<T>(shape)?;
        if n != self.len() {
            return Err(Error::View(format!(
                "cannot view {self:?} ({} elements) as {shape:?} ({n} elements)",
                self.len()
            )));
        }
        Ok(())
    }

    /// A view of the same elements with another shape, borrowing the tensor, without copying.
    /// It is a `&Tensor` (through `Deref`) that kernels take as an input, with the address
    /// range of the elements it covers.
    ///
    /// # Errors
    /// As [`Tensor::reshape`].
    pub fn view(&self, shape: &[usize]) -> Result<TensorView<'_, T>> {
        self.check_reshape(shape)?;
        Ok(self.sub(0, self.len(), shape.to_vec()))
    }

    /// The rows `rows` along the leading dimension, as a view borrowing the tensor, without
    /// copying: shape `[rows.len(), ..the rest]`.
    ///
    /// # Errors
    /// [`Error::View`] for rows past the end (or reversed), or a tensor without dimensions.
    pub fn slice(&self, rows: std::ops::Range<usize>) -> Result<TensorView<'_, T>> {
        let Some((&lead, rest)) = self.shape.split_first() else {
            return Err(Error::View(format!("{self:?} has no dimension to slice")));
        };
        if rows.start > rows.end || rows.end > lead {
            return Err(Error::View(format!(
                "rows {rows:?} of {self:?}, which has {lead}"
            )));
        }
        let row: usize = rest.iter().product();
        let mut shape = vec![rows.len()];
        shape.extend_from_slice(rest);
        Ok(self.sub(rows.start * row, rows.len() * row, shape))
    }

    /// A tensor over `len` elements from element `start`, borrowing this one's memory: host
    /// memory as a pointer (the view's lifetime keeps this tensor, and so the memory, alive
    /// and unchanged), device memory with this tensor's allocation shared.
    fn sub(&self, start: usize, len: usize, shape: Vec<usize>) -> TensorView<'_, T> {
        debug_assert!(start + len <= self.len());
        let storage = match &self.storage {
            Storage::Host(v) => Storage::HostRaw {
                // Only ever read through the view (it gives `&Tensor` alone).
                ptr: v[start..].as_ptr().cast_mut(),
                len,
            },
            Storage::HostRaw { ptr, .. } => Storage::HostRaw {
                // SAFETY: `start` is within the `len` elements `ptr` is valid for.
                ptr: unsafe { ptr.add(start) },
                len,
            },
            Storage::Gpu { addr, _owned, .. } => Storage::Gpu {
                addr: addr + (start * std::mem::size_of::<T>()) as u64,
                len,
                _owned: _owned.clone(),
            },
        };
        TensorView {
            inner: Tensor {
                device: self.device.clone(),
                shape,
                storage,
            },
            _parent: std::marker::PhantomData,
        }
    }

    /// Overwrites the tensor with the elements of `src` (the same number of them, any shape),
    /// after all work queued on their devices: a device-to-device copy on one GPU, through the
    /// host between devices.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] for another number of elements; [`Error::Aliasing`] when the
    /// two overlap (only tensors of `from_raw_parts` can); on a GPU, [`Error::Driver`] when the
    /// copy fails and [`Error::Graph`] while this thread records a graph on the device.
    pub fn copy_from(&mut self, src: &Tensor<T>) -> Result<()> {
        if src.len() != self.len() {
            return Err(Error::LengthMismatch {
                expected: self.len(),
                found: src.len(),
            });
        }
        if self.device == src.device {
            check_aliasing(
                "Tensor::copy_from",
                &[
                    ArgRange {
                        name: "self",
                        range: self.address_range(),
                        written: true,
                    },
                    ArgRange {
                        name: "src",
                        range: src.address_range(),
                        written: false,
                    },
                ],
            )?;
        }
        match (self.on_gpu(), src.on_gpu()) {
            (Some(dst), Some(from)) if self.device == src.device => {
                let ((gpu, dst), (_, from)) = (dst?, from?);
                // SAFETY: both hold `len` elements (the tensors' invariant) of this device and
                // do not overlap (checked above); frees wait for queued copies.
                unsafe { gpu.dtod(dst, from, self.len() * std::mem::size_of::<T>()) }
            }
            (None, None) => self.copy_from_slice(src.host()?),
            _ => self.copy_from_slice(&src.to_vec()?),
        }
    }

    /// Copies the tensor into `out` (the same number of elements), after all work queued on its
    /// device: a download into a buffer the caller keeps, without allocating.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] for another length; on a GPU, [`Error::Driver`] when the copy
    /// fails and [`Error::Graph`] while this thread records a graph on the device.
    pub fn copy_to_slice(&self, out: &mut [T]) -> Result<()> {
        if out.len() != self.len() {
            return Err(Error::LengthMismatch {
                expected: self.len(),
                found: out.len(),
            });
        }
        match self.on_gpu() {
            None => out.copy_from_slice(self.host()?),
            Some(gpu) => {
                let (gpu, addr) = gpu?;
                // SAFETY: `addr` holds `len` = `out.len()` elements; every bit pattern is a
                // valid `Element`.
                unsafe { gpu.dtoh(out, addr) }?;
            }
        }
        Ok(())
    }
}

/// Checks views, reshapes and the copies between tensors on `dev` (the CPU here; the GPU suite
/// of `tests/common` on a GPU): values, address ranges, errors. Not a public API.
#[doc(hidden)]
pub fn check_views_and_copies(dev: &Device) {
    let data: Vec<f32> = (0..24).map(|i| i as f32).collect();
    let t = dev.upload(&data, &[4, 6]).unwrap();
    // A view: the same bytes, another shape.
    let v = t.view(&[2, 3, 4]).unwrap();
    assert_eq!(v.shape(), &[2, 3, 4]);
    assert_eq!(v.address_range(), t.address_range());
    assert_eq!(v.to_vec().unwrap(), data);
    assert!(matches!(t.view(&[5, 5]), Err(Error::View(_))));
    // Rows 1..3: the middle of the allocation, without copying.
    let rows = t.slice(1..3).unwrap();
    assert_eq!(rows.shape(), &[2, 6]);
    let (lo, _) = t.address_range();
    assert_eq!(rows.address_range(), (lo + 6 * 4, lo + 18 * 4));
    assert_eq!(rows.to_vec().unwrap(), data[6..18]);
    // A view of a view.
    let inner = rows.slice(1..2).unwrap();
    assert_eq!(inner.to_vec().unwrap(), data[12..18]);
    assert_eq!(t.slice(4..4).unwrap().len(), 0);
    assert!(matches!(t.slice(2..5), Err(Error::View(_))));
    #[allow(clippy::reversed_empty_ranges)]
    let reversed = 3..2;
    assert!(t.slice(reversed).is_err());
    let mut out = vec![0.0f32; 12];
    rows.copy_to_slice(&mut out).unwrap();
    assert_eq!(out, data[6..18]);
    assert!(matches!(
        rows.copy_to_slice(&mut [0.0; 3]),
        Err(Error::LengthMismatch { .. })
    ));
    // Device to device, into a tensor of another shape with as many elements.
    let mut c = dev.alloc::<f32>(&[12]).unwrap();
    c.copy_from(&rows).unwrap();
    assert_eq!(c.to_vec().unwrap(), data[6..18]);
    assert!(matches!(c.copy_from(&t), Err(Error::LengthMismatch { .. })));
    // Between devices (here, to and from the CPU).
    let host = Device::cpu();
    let mut h = host.alloc::<f32>(&[12]).unwrap();
    h.copy_from(&c).unwrap();
    assert_eq!(h.to_vec().unwrap(), data[6..18]);
    c.poison().unwrap();
    c.copy_from(&h).unwrap();
    assert_eq!(c.to_vec().unwrap(), data[6..18]);
    // A reshape moves the tensor, keeping its memory.
    let before = c.address_range();
    let c = c.reshape(&[3, 4]).unwrap();
    assert_eq!((c.shape(), c.address_range()), (&[3usize, 4][..], before));
    assert!(matches!(c.reshape(&[5]), Err(Error::View(_))));
}

/// A view of a tensor's elements, borrowing it ([`Tensor::view`], [`Tensor::slice`]): a
/// `&Tensor` through `Deref`, usable wherever one is (kernel inputs, `to_vec`, further views),
/// never as an output, so that the tensor it borrows cannot change while it is read. To write
/// through another shape, [`Tensor::reshape`] the tensor itself (it moves, without copying).
pub struct TensorView<'a, T: Element> {
    inner: Tensor<T>,
    _parent: std::marker::PhantomData<&'a Tensor<T>>,
}

impl<T: Element> std::ops::Deref for TensorView<'_, T> {
    type Target = Tensor<T>;
    fn deref(&self) -> &Tensor<T> {
        &self.inner
    }
}

impl<T: Element> fmt::Debug for TensorView<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "view of {:?}", self.inner)
    }
}

fn not_on_host(device: &Device) -> Error {
    Error::NotOnHost {
        device: format!("{device:?}"),
    }
}

/// One tensor argument, for the aliasing check.
pub struct ArgRange {
    pub name: &'static str,
    pub range: (usize, usize),
    pub written: bool,
}

/// Refuses a launch where an output overlaps any other argument.
pub fn check_aliasing(kernel: &'static str, args: &[ArgRange]) -> Result<()> {
    for (i, a) in args.iter().enumerate() {
        if !a.written || a.range.0 == a.range.1 {
            continue;
        }
        for (j, b) in args.iter().enumerate() {
            if i != j && b.range.0 < a.range.1 && a.range.0 < b.range.1 {
                return Err(Error::Aliasing {
                    kernel,
                    output: a.name,
                    other: b.name,
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_reshapes_and_copies_on_the_cpu() {
        check_views_and_copies(&Device::cpu());
    }

    #[test]
    fn cpu_tensors_are_host_memory() {
        let dev = Device::cpu();
        assert_eq!(dev.arch(), "cpu");
        assert_eq!(dev.backend(), Backend::Cpu);
        assert_eq!(dev.ordinal(), None);
        let mut t = dev.upload(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
        assert_eq!(t.host().unwrap(), &[1.0, 2.0, 3.0]);
        t.host_mut().unwrap()[1] = 5.0;
        assert_eq!(t.to_vec().unwrap(), vec![1.0, 5.0, 3.0]);
        assert_eq!(t.device_ptr(), t.address_range().0 as u64);
        t.poison().unwrap();
        assert!(t.to_vec().unwrap().iter().all(|x| x.is_nan()));
        t.copy_from_slice(&[7.0, 8.0, 9.0]).unwrap();
        assert_eq!(t.to_vec().unwrap(), vec![7.0, 8.0, 9.0]);
        assert_eq!(
            dev.zeros::<i32>(&[2]).unwrap().to_vec().unwrap(),
            vec![0, 0]
        );
        assert_eq!(
            dev.alloc::<u8>(&[1]).unwrap().to_vec().unwrap(),
            vec![u8::POISON]
        );
    }

    #[test]
    fn a_host_allocation_too_large_for_memory_is_out_of_memory() {
        // 2^62 bytes: a valid size no host has, refused by the allocator, not an abort.
        let dev = Device::cpu();
        for e in [
            dev.alloc::<f32>(&[1 << 60]).unwrap_err(),
            dev.zeros::<f32>(&[1 << 30, 1 << 30]).unwrap_err(),
            dev.alloc::<u8>(&[1 << 62]).unwrap_err(),
        ] {
            assert!(
                matches!(e, Error::OutOfMemory { backend: Backend::Cpu, bytes } if bytes == 1 << 62),
                "{e}"
            );
            let msg = e.to_string();
            assert!(
                msg.contains("4611686018427387904 bytes of host memory"),
                "{msg}"
            );
        }
        // The device still works afterwards.
        assert_eq!(dev.zeros::<f32>(&[2]).unwrap().to_vec().unwrap(), [0.0; 2]);
    }

    #[test]
    fn shapes_too_large_to_address_are_shape_overflow() {
        let dev = Device::cpu();
        // 2^63 bytes of f64: more than isize::MAX, which no allocation can hold.
        let e = dev.alloc::<f64>(&[1 << 60]).unwrap_err();
        assert_eq!(
            e,
            Error::ShapeOverflow {
                shape: vec![1 << 60],
                dtype: crate::Dtype::F64
            }
        );
        let msg = e.to_string();
        assert!(msg.contains("1152921504606846976 x 8 bytes"), "{msg}");
        assert!(msg.contains("isize::MAX"), "{msg}");
        // The element count itself overflows.
        let e = dev.zeros::<u8>(&[1 << 40, 1 << 40]).unwrap_err();
        assert!(
            matches!(&e, Error::ShapeOverflow { shape, dtype: crate::Dtype::U8 } if shape == &[1 << 40, 1 << 40]),
            "{e}"
        );
        assert!(
            e.to_string()
                .contains("more elements than a usize can count"),
            "{e}"
        );
        let e = dev.upload::<f32>(&[], &[usize::MAX, 2]).unwrap_err();
        assert!(matches!(e, Error::ShapeOverflow { .. }), "{e}");
        // SAFETY: refused before the pointer is used.
        let e = unsafe { Tensor::<f32>::from_raw_parts(&dev, std::ptr::null_mut(), &[1 << 62]) }
            .unwrap_err();
        assert!(matches!(e, Error::ShapeOverflow { .. }), "{e}");
        // A zero dimension makes an empty tensor, whatever the others are.
        let t = dev.alloc::<f64>(&[usize::MAX, 0]).unwrap();
        assert!(t.is_empty());
        assert_eq!(t.to_vec().unwrap(), Vec::<f64>::new());
        // A real mismatch is still a length mismatch.
        let e = dev.upload(&[1.0f32; 3], &[2, 2]).unwrap_err();
        assert_eq!(
            e,
            Error::LengthMismatch {
                expected: 4,
                found: 3
            }
        );
    }

    #[test]
    fn device_memory_is_not_host_memory() {
        // A tensor claiming device memory; never touched (`_owned` is None, nothing is freed).
        let mut t = Tensor::<f32> {
            device: Device::cpu(),
            shape: vec![4],
            storage: Storage::Gpu {
                addr: 0x1000,
                len: 4,
                _owned: None,
            },
        };
        assert!(matches!(t.host(), Err(Error::NotOnHost { .. })));
        let e = t.host_mut().unwrap_err();
        assert!(e.to_string().contains("to_vec"), "{e}");
        assert_eq!(t.address_range(), (0x1000, 0x1010));
        assert_eq!(t.device_ptr(), 0x1000);
    }
}
