//! What the GPU backends share, beneath both: the [`GpuRuntime`] trait they implement (the
//! device model and the safety contracts of its operations, written once, and the behaviour both
//! share), the per-device cache of loaded modules, and the preparation of an [`Object`]'s image,
//! entry name and parameters for the driver. `cuda.rs` and `hip.rs` implement it; the enums over
//! them are in `gpu_device.rs`.

use crate::error::{Error, Resource, Result};
use crate::object::{KernelArg, Object};
use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::sync::{Arc, Mutex, PoisonError};

/// What a GPU backend provides, with the safety contracts of its operations stated once here
/// for both: CUDA (`CudaDevice`, `cuda.rs`) and HIP (`HipDevice`, `hip.rs`).
/// [`GpuDevice`](crate::gpu_device::GpuDevice) dispatches to it. Each backend implements the
/// *required* methods (one driver call or a few each); the *provided* ones are the behaviour both
/// share: the one-byte minimum allocation and its fill, the empty-copy shortcut and the wait
/// after a host copy, and the module cache, the per-block limit checks (at every launch) and the
/// parameter array of a launch.
///
/// # The device model
///
/// * **One in-order queue per device**: its null stream (CUDA: the context's legacy default
///   stream; HIP: the device's blocking null stream, which also orders against other blocking
///   streams). Every fill, copy and launch of the device is queued there, so they run in
///   program order without events. A method that *queues* returns before the work has run.
/// * **Addresses** (`ptr: u64`) are addresses of this device's memory (a `CUdeviceptr`, a HIP
///   `void*`), which the host never dereferences.
/// * **Frees wait**: dropping a [`GpuRuntime::Buffer`] frees its memory only after the work queued
///   before the drop (CUDA: `cuMemFreeAsync` on the stream, or a synchronize then `cuMemFree`;
///   HIP: `hipFree` waits for the device's streams), so dropping a tensor that a queued kernel
///   still uses is sound.
/// * **Host copies finish before they return** ([`GpuRuntime::htod`], [`GpuRuntime::dtoh`]): after
///   all earlier work, so the host slice may be reused or read at once.
/// * **Errors, never panics**: a failed driver call is [`Error::Driver`] naming the call; an
///   allocation refused for lack of memory is [`Error::OutOfMemory`]; a failure of queued work
///   may show at any later synchronizing call.
/// * The driver's per-thread state (CUDA's current context, HIP's current device) is set by
///   every method that needs it, before its driver calls.
///
/// # Safety
/// Implementing the trait promises that the required methods do what their docs say, which the
/// provided methods and `tensor.rs` rely on for soundness: [`GpuRuntime::alloc_raw`] returns
/// memory of this device valid for at least the bytes asked, until the buffer is dropped, and
/// frees it only after the work queued before the drop; every `*_async` method and
/// [`GpuRuntime::launch_loaded`] queues on the device's one queue (or, for a launch, records into
/// the calling thread's graph) and touches no memory but what its arguments describe;
/// [`GpuRuntime::synchronize`] returns only once all queued work has finished.
pub(crate) unsafe trait GpuRuntime {
    /// Device memory owned by a tensor, freed on drop after the work queued before the drop.
    type Buffer;
    /// A loaded module and the kernel function found in it, unloaded on drop.
    type Module;

    // ---- Required: what each backend does with its driver.

    /// The device's cache of loaded modules.
    fn modules(&self) -> &ModuleCache<Self::Module>;

    /// New device memory of `bytes` bytes (at least 1), its contents unset; [`Error::OutOfMemory`]
    /// for the driver's out-of-memory status.
    fn alloc_raw(&self, bytes: usize) -> Result<Self::Buffer>;

    /// The device address of `buffer`.
    fn address(buffer: &Self::Buffer) -> u64;

    /// Queues setting `bytes` bytes (at least 1) at `ptr` to `byte`.
    ///
    /// # Safety
    /// `ptr..ptr + bytes` is memory of this device that stays allocated until the fill has run
    /// (memory of a buffer dropped after this call qualifies: frees wait), and nothing else
    /// accesses it meanwhile but work queued on this device.
    unsafe fn memset_async(&self, ptr: u64, byte: u8, bytes: usize) -> Result<()>;

    /// Queues copying `src` (not empty) to `ptr`. The copy may read `src` after this returns.
    ///
    /// # Safety
    /// `ptr` is memory of this device valid for `size_of_val(src)` bytes until the copy has run;
    /// `src` stays borrowed, unchanged, until the copy has finished (the caller synchronizes).
    unsafe fn htod_async<T>(&self, ptr: u64, src: &[T]) -> Result<()>;

    /// Queues copying `size_of_val(dst)` bytes (not zero) at `ptr` into `dst`. The copy may write
    /// `dst` after this returns.
    ///
    /// # Safety
    /// `ptr` is memory of this device valid for `size_of_val(dst)` bytes until the copy has run;
    /// `dst` stays borrowed, and is not read, until the copy has finished (the caller
    /// synchronizes); every bit pattern is a valid `T` (true of every [`crate::Element`]).
    unsafe fn dtoh_async<T>(&self, dst: &mut [T], ptr: u64) -> Result<()>;

    /// Queues copying `bytes` bytes (not zero) from `src` to `dst`, both memory of this device.
    ///
    /// # Safety
    /// Both ranges are memory of this device valid for `bytes` bytes until the copy has run,
    /// they do not overlap, and nothing else accesses them meanwhile but work queued on this
    /// device.
    unsafe fn dtod_async(&self, dst: u64, src: u64, bytes: usize) -> Result<()>;

    /// Waits for all work queued on the device.
    fn synchronize(&self) -> Result<()>;

    /// Device milliseconds between events recorded on the device's queue before and after `f`;
    /// waits for the second.
    fn time_ms(&self, f: &mut dyn FnMut() -> Result<()>) -> Result<f64>;

    /// Loads `image` (from [`prepare_image`]: aligned, followed by a zero byte), finds the
    /// function `entry` in it and reads the function's [`Limits`], once per module. `what` names
    /// the object in messages ([`what`]).
    fn load_module(&self, image: &[u64], entry: CString, what: &str) -> Result<Self::Module>;

    /// The per-block limits of `module`'s function on this device, as read at load.
    fn limits(&self, module: &Self::Module) -> Limits;

    /// Whatever the backend must set on `module`'s function before it is launched as `object`
    /// asks, after the limits were checked (CUDA: the opt-in to more dynamic shared memory than
    /// the function was allowed so far). Nothing by default.
    fn prepare_function(
        &self,
        kernel: &'static str,
        object: &Object,
        module: &Self::Module,
    ) -> Result<()> {
        let _ = (kernel, object, module);
        Ok(())
    }

    /// Queues one launch of `module`'s function: `grid` blocks of `object.threads` threads and
    /// `object.shared_bytes` of dynamic shared memory, with `params` as `kernelParams` (the
    /// driver copies the values before returning). While the calling thread records a graph
    /// ([`GpuRuntime::recording_here`]), the launch is recorded instead.
    ///
    /// # Safety
    /// The contract of [`GpuRuntime::launch`] for the arguments `params` points at, which stay
    /// alive through the call; `module` was loaded from `object` by this device.
    unsafe fn launch_loaded(
        &self,
        kernel: &'static str,
        object: &'static Object,
        module: &Self::Module,
        grid: [u32; 3],
        params: &mut [*mut c_void],
    ) -> Result<()>;

    /// Whether the calling thread records a graph on this device, when only launches may be
    /// queued ([`crate::gpu_device::GpuDevice::not_recording`]). Never, by default.
    fn recording_here(&self) -> bool {
        false
    }

    /// How many blocks of `module`'s function, launched as `object` asks, the device holds at
    /// once (the grid of a persistent entry, [`crate::tma::persistent_grid`]). No cap by default.
    fn resident_blocks(
        &self,
        kernel: &'static str,
        object: &Object,
        module: &Self::Module,
    ) -> Result<u32> {
        let _ = (kernel, object, module);
        Ok(u32::MAX)
    }

    // ---- Provided: the behaviour both backends share.

    /// New device memory for `bytes` bytes, each set to `fill` (left unset for `None`, for the
    /// caller to overwrite before anything reads it). Zero bytes still allocate one, so that
    /// every tensor has a distinct address.
    fn alloc(&self, bytes: usize, fill: Option<u8>) -> Result<Self::Buffer> {
        let n = bytes.max(1);
        let buf = self.alloc_raw(n)?;
        if let Some(byte) = fill {
            // SAFETY: `buf` is a live allocation of `n` bytes of this device (the trait's
            // contract), and frees wait for the queued fill.
            unsafe { self.memset(Self::address(&buf), byte, n) }?;
        }
        Ok(buf)
    }

    /// Queues setting `bytes` bytes at `ptr` to `byte`; nothing for zero bytes.
    ///
    /// # Safety
    /// As [`GpuRuntime::memset_async`].
    unsafe fn memset(&self, ptr: u64, byte: u8, bytes: usize) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        // SAFETY: the caller's contract.
        unsafe { self.memset_async(ptr, byte, bytes) }
    }

    /// Copies `src` to device memory at `ptr`, after all queued work, and waits for the copy.
    ///
    /// # Safety
    /// `ptr` is memory of this device valid for `size_of_val(src)` bytes, which nothing else
    /// accesses meanwhile but work queued on this device.
    unsafe fn htod<T>(&self, ptr: u64, src: &[T]) -> Result<()> {
        if std::mem::size_of_val(src) == 0 {
            return Ok(());
        }
        // SAFETY: the caller's contract; `src` stays borrowed until the wait below.
        unsafe { self.htod_async(ptr, src) }?;
        // The copy may read `src` asynchronously (it does when `src` is pinned): wait for it.
        self.synchronize()
    }

    /// Copies device memory at `ptr` into `dst`, after all queued work, and waits for the copy.
    ///
    /// # Safety
    /// `ptr` is memory of this device valid for `size_of_val(dst)` bytes, and every bit pattern
    /// is a valid `T` (true of every [`crate::Element`]).
    unsafe fn dtoh<T>(&self, dst: &mut [T], ptr: u64) -> Result<()> {
        if std::mem::size_of_val(dst) == 0 {
            return Ok(());
        }
        // SAFETY: the caller's contract; `dst` stays borrowed until the wait below.
        unsafe { self.dtoh_async(dst, ptr) }?;
        self.synchronize()
    }

    /// Loads `object`'s image and finds its entry.
    fn load(&self, kernel: &'static str, object: &Object) -> Result<Self::Module> {
        let what = what(kernel, object);
        let (image, entry) = prepare_image(kernel, object)?;
        self.load_module(&image, entry, &what)
    }

    /// Checks `object`'s block size and dynamic shared memory against the limits of `module`'s
    /// function ([`Error::ResourceLimit`]), so that an impossible launch is a clear error instead
    /// of the driver's invalid-value status (or worse) at launch. At every launch, not once per
    /// module: objects that share an image and entry (the module cache's key) may ask for
    /// different blocks.
    fn check_limits(
        &self,
        kernel: &'static str,
        object: &Object,
        module: &Self::Module,
    ) -> Result<()> {
        let limits = self.limits(module);
        if i64::from(object.threads) > limits.max_threads {
            return Err(Error::ResourceLimit {
                kernel,
                config: object.config,
                what: Resource::ThreadsPerBlock,
                requested: object.threads.into(),
                max: limits.max_threads.max(0) as u64,
            });
        }
        if i64::from(object.shared_bytes) > limits.max_dynamic_shared {
            return Err(Error::ResourceLimit {
                kernel,
                config: object.config,
                what: Resource::DynamicSharedMemory,
                requested: object.shared_bytes.into(),
                max: limits.max_dynamic_shared.max(0) as u64,
            });
        }
        Ok(())
    }

    /// `object`'s module, loaded on first use, with the device's limits checked against it and
    /// its function prepared: what a launch and a residency query both need first.
    fn ready(&self, kernel: &'static str, object: &'static Object) -> Result<Arc<Self::Module>> {
        let loaded = self
            .modules()
            .get_or_load(object, || self.load(kernel, object))?;
        self.check_limits(kernel, object, &loaded)?;
        self.prepare_function(kernel, object, &loaded)?;
        Ok(loaded)
    }

    /// [`GpuRuntime::resident_blocks`] of `object`, made [`GpuRuntime::ready`] first.
    fn resident(&self, kernel: &'static str, object: &'static Object) -> Result<u32> {
        let loaded = self.ready(kernel, object)?;
        self.resident_blocks(kernel, object, &loaded)
    }

    /// Queues `object` with `grid` blocks and `args`, loading it on first use.
    ///
    /// # Safety
    /// The contract of [`crate::Device::launch_gpu`]: `args` match the entry's parameters in
    /// number, order and type; every `Ptr` is an address of this device's memory that stays
    /// allocated until the kernel has finished and is valid for every access the kernel makes
    /// with these arguments and this grid; memory the kernel writes is not accessed by anything
    /// else until it has finished; `object` holds an image built for this kernel that this
    /// device runs (its arch, or one the device runs; see [`crate::gpu::select_object`]).
    unsafe fn launch(
        &self,
        kernel: &'static str,
        object: &'static Object,
        grid: [u32; 3],
        args: &[KernelArg],
    ) -> Result<()> {
        let loaded = self.ready(kernel, object)?;
        // Pointers into `args`, which outlives the call; the driver copies the values.
        let mut params = kernel_params(args);
        // SAFETY: the caller's contract; `loaded` was loaded from `object` and is kept alive by
        // the cache (and by this `Arc`).
        unsafe { self.launch_loaded(kernel, object, &loaded, grid, &mut params) }
    }
}

/// The per-block limits of a loaded function on its device ([`GpuRuntime::limits`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    /// The most threads per block: the function's launch bound, or what its registers allow.
    pub(crate) max_threads: i64,
    /// The most dynamic shared memory (LDS) a block can have, in bytes, beside the function's
    /// static shared memory.
    pub(crate) max_dynamic_shared: i64,
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
            tma: None,
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

    /// A backend that runs nothing: it records the calls the provided methods make, with
    /// fixed limits (1024 threads, 64 KiB of dynamic shared memory).
    struct Mock {
        calls: std::cell::RefCell<Vec<String>>,
        modules: ModuleCache<String>,
    }

    impl Mock {
        fn new() -> Self {
            Mock {
                calls: Default::default(),
                modules: ModuleCache::new(),
            }
        }
        fn log(&self, call: String) -> Result<()> {
            self.calls.borrow_mut().push(call);
            Ok(())
        }
        fn take(&self) -> Vec<String> {
            std::mem::take(&mut *self.calls.borrow_mut())
        }
    }

    // SAFETY: the mock has no device memory and touches no memory at all: it only records
    // calls, and its buffers are never dereferenced.
    unsafe impl GpuRuntime for Mock {
        type Buffer = usize;
        type Module = String;
        fn modules(&self) -> &ModuleCache<String> {
            &self.modules
        }
        fn alloc_raw(&self, bytes: usize) -> Result<usize> {
            self.log(format!("alloc {bytes}"))?;
            Ok(0x1000)
        }
        fn address(buffer: &usize) -> u64 {
            *buffer as u64
        }
        unsafe fn memset_async(&self, ptr: u64, byte: u8, bytes: usize) -> Result<()> {
            self.log(format!("memset {ptr:#x} {byte} {bytes}"))
        }
        unsafe fn htod_async<T>(&self, ptr: u64, src: &[T]) -> Result<()> {
            self.log(format!("htod {ptr:#x} {}", std::mem::size_of_val(src)))
        }
        unsafe fn dtoh_async<T>(&self, dst: &mut [T], ptr: u64) -> Result<()> {
            self.log(format!("dtoh {ptr:#x} {}", std::mem::size_of_val(dst)))
        }
        unsafe fn dtod_async(&self, dst: u64, src: u64, bytes: usize) -> Result<()> {
            self.log(format!("dtod {dst:#x} {src:#x} {bytes}"))
        }
        fn synchronize(&self) -> Result<()> {
            self.log("sync".into())
        }
        fn time_ms(&self, f: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
            f().map(|()| 0.0)
        }
        fn load_module(&self, image: &[u64], entry: CString, what: &str) -> Result<String> {
            assert_eq!(
                *image.last().unwrap() >> 56,
                0,
                "a zero byte follows the image"
            );
            self.log(format!("load {what} {}", entry.to_str().unwrap()))?;
            Ok(entry.to_str().unwrap().to_string())
        }
        fn limits(&self, _: &String) -> Limits {
            Limits {
                max_threads: 1024,
                max_dynamic_shared: 65536,
            }
        }
        fn prepare_function(&self, kernel: &'static str, o: &Object, m: &String) -> Result<()> {
            self.log(format!("prepare {kernel} {m} {}", o.shared_bytes))
        }
        unsafe fn launch_loaded(
            &self,
            kernel: &'static str,
            _: &'static Object,
            module: &String,
            grid: [u32; 3],
            params: &mut [*mut c_void],
        ) -> Result<()> {
            self.log(format!(
                "launch {kernel} {module} {grid:?} {}",
                params.len()
            ))
        }
    }

    #[test]
    fn memory_operations_share_one_behaviour() {
        let m = Mock::new();
        // Zero bytes still allocate one; a fill covers the whole allocation.
        assert_eq!(m.alloc(0, Some(0x7f)).unwrap(), 0x1000);
        assert_eq!(m.take(), ["alloc 1", "memset 0x1000 127 1"]);
        m.alloc(10, None).unwrap();
        assert_eq!(m.take(), ["alloc 10"]);
        // SAFETY: the mock touches no memory.
        unsafe {
            // Empty fills and copies ask nothing of the driver.
            m.memset(0x1000, 0, 0).unwrap();
            m.htod::<f32>(0x1000, &[]).unwrap();
            m.dtoh::<f32>(&mut [], 0x1000).unwrap();
            assert!(m.take().is_empty());
            // Host copies wait for the copy.
            m.htod(0x2000, &[1.0f32, 2.0]).unwrap();
            m.dtoh(&mut [0u16; 3], 0x3000).unwrap();
        }
        assert_eq!(m.take(), ["htod 0x2000 8", "sync", "dtoh 0x3000 6", "sync"]);
    }

    static FITS: Object = Object {
        shared_bytes: 65536,
        ..obj("gfx1100", "a", &IMAGE)
    };
    static TOO_MANY_THREADS: Object = Object {
        threads: 2048,
        ..obj("gfx1100", "a", &IMAGE)
    };
    static TOO_MUCH_SHARED: Object = Object {
        shared_bytes: 65537,
        ..obj("gfx1100", "a", &IMAGE)
    };

    #[test]
    fn limits_are_checked_at_every_launch_and_modules_load_once() {
        let m = Mock::new();
        let args = [KernelArg::Ptr(0x1000), KernelArg::I32(3)];
        for _ in 0..2 {
            // SAFETY: the mock runs nothing.
            unsafe { m.launch("k", &FITS, [2, 1, 1], &args) }.unwrap();
        }
        assert_eq!(
            m.take(),
            [
                "load k (config default, gfx1100) a",
                "prepare k a 65536",
                "launch k a [2, 1, 1] 2",
                "prepare k a 65536",
                "launch k a [2, 1, 1] 2",
            ]
        );
        // The same image and entry (so the cached module) with a block over the limits: refused
        // before anything reaches the driver, though the module was loaded for another object.
        // SAFETY: as above.
        let e = unsafe { m.launch("k", &TOO_MANY_THREADS, [1, 1, 1], &args) }.unwrap_err();
        assert_eq!(
            e,
            Error::ResourceLimit {
                kernel: "k",
                config: "default",
                what: Resource::ThreadsPerBlock,
                requested: 2048,
                max: 1024
            }
        );
        // SAFETY: as above.
        let e = unsafe { m.launch("k", &TOO_MUCH_SHARED, [1, 1, 1], &args) }.unwrap_err();
        assert!(
            matches!(
                e,
                Error::ResourceLimit {
                    what: Resource::DynamicSharedMemory,
                    requested: 65537,
                    max: 65536,
                    ..
                }
            ),
            "{e}"
        );
        assert!(m.take().is_empty());
        // A malformed object is refused before the driver sees it.
        static EMPTY: Object = obj("gfx1100", "e", b"");
        // SAFETY: as above.
        let e = unsafe { m.launch("k", &EMPTY, [1, 1, 1], &[]) }.unwrap_err();
        assert!(matches!(e, Error::BadObject { .. }), "{e}");
        assert!(m.take().is_empty());
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
