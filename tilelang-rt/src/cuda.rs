//! The CUDA backend: cudarc's driver API, with libcuda loaded at run time.
//!
//! This is the only module that calls cudarc. cudarc panics on its first call when libcuda is
//! missing (and on any call whose symbol the library lacks), so [`probe`] checks the library and
//! its version first and every entry point goes through it.
//!
//! Ordering: each device has one stream, the context's legacy default (null) stream, and every
//! copy, fill, launch and free of the device is queued on it, so they run in program order
//! without events. That is why cudarc's per-allocation event tracking is switched off.
//!
//! Graphs ([`crate::Device::record_graph`]): the legacy stream cannot be captured, so a graph is
//! built explicitly. While a thread records, its launches on the device become kernel nodes, each
//! depending on the one before (the order the launches would have run in), and its other stream
//! operations are refused; launches of other threads run as usual.

use crate::error::{Backend, Error, GpuBackend, Result};
use crate::object::{KernelArg, Object, TmaElem, TmaMap};
use crate::runtime::{what, GpuRuntime, Limits, ModuleCache};
use crate::tma::Encoding;
use cudarc::driver::{result, sys, CudaContext, CudaSlice, CudaStream, DevicePtr, DriverError};
use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::fmt;
use std::panic::RefUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::thread::ThreadId;

/// The oldest driver accepted: cudarc's bindings (`cuda-13000`) name CUDA 13.0 entry points
/// (e.g. `cuEventElapsedTime_v2`), which an older libcuda lacks, and cudarc panics on those.
const MIN_DRIVER_VERSION: i32 = 13000;

/// `CUDA_ERROR_OUT_OF_MEMORY (out of memory)`.
fn describe(e: DriverError) -> String {
    let name = e.error_name().map_or_else(
        |_| format!("{:?}", e.0),
        |s| s.to_string_lossy().into_owned(),
    );
    match e.error_string() {
        Ok(text) => format!("{name} ({})", text.to_string_lossy()),
        Err(_) => name,
    }
}

/// [`Error::Driver`] for the driver call `op`, made while doing `context`.
fn driver_error(op: &'static str, context: impl fmt::Display, e: DriverError) -> Error {
    let code = e.0 as i32;
    Error::Driver {
        backend: GpuBackend::Cuda,
        op,
        context: context.to_string(),
        code,
        name: e.error_name().map_or_else(
            |_| format!("CUresult {code}"),
            |s| s.to_string_lossy().into_owned(),
        ),
        description: e
            .error_string()
            .map_or_else(|_| String::new(), |s| s.to_string_lossy().into_owned()),
    }
}

/// Checks once that libcuda can be loaded and is recent enough. Until this has succeeded,
/// nothing may call into cudarc.
pub(crate) fn probe() -> Result<()> {
    static PROBE: OnceLock<Result<(), String>> = OnceLock::new();
    PROBE
        .get_or_init(|| {
            // SAFETY: tries to open the library under cudarc's candidate names (libcuda.so,
            // libcuda.so.1, ...) with libloading and closes it again; calls nothing in it.
            if !unsafe { sys::is_culib_present() } {
                return Err(
                    "CUDA: the NVIDIA driver library (libcuda.so.1 / libcuda.so) was not \
                            found; install the NVIDIA driver, or add the directory holding \
                            libcuda to LD_LIBRARY_PATH"
                        .to_string(),
                );
            }
            let mut version = 0;
            // SAFETY: libcuda is present (so cudarc loads it); cuDriverGetVersion writes one int
            // and needs no cuInit.
            unsafe { sys::cuDriverGetVersion(&mut version) }
                .result()
                .map_err(|e| format!("CUDA: cuDriverGetVersion failed: {}", describe(e)))?;
            if version < MIN_DRIVER_VERSION {
                return Err(format!(
                    "CUDA: the installed driver supports CUDA {}.{}, and tilelang needs a driver \
                     for CUDA 13.0 or newer",
                    version / 1000,
                    version % 1000 / 10
                ));
            }
            Ok(())
        })
        .clone()
        .map_err(Error::NoDevice)
}

/// The CUDA state of a [`crate::Device`].
pub(crate) struct CudaDevice {
    ctx: Arc<CudaContext>,
    /// The context's default stream; see the module docs.
    stream: Arc<CudaStream>,
    modules: ModuleCache<Loaded>,
    /// The call cudarc allocates with (stream-ordered where the device has memory pools, as
    /// cudarc decides), for errors.
    alloc_op: &'static str,
    /// `CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`: the most shared memory a block
    /// can have, static and dynamic together, once a kernel opts in.
    max_shared_optin: i32,
    /// `CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT`.
    multiprocessors: i32,
    /// The graph being recorded, if any; `recording` says whether it is `Some` without locking.
    graph: Mutex<Option<Recording>>,
    recording: AtomicBool,
    /// Tensor maps encoded for TMA entries, by what they encode ([`crate::tma`]).
    tensor_maps: Mutex<HashMap<Encoding, [u64; 16]>>,
}

/// Device memory a graph keeps allocated while it can run: a tensor's buffer, as the enum over
/// the backends (`gpu_device.rs`, which is above this module) owns it. `RefUnwindSafe` as the
/// buffers are, so that a `Graph` stays unwind-safe.
pub(crate) type Kept = Arc<dyn Send + Sync + RefUnwindSafe>;

/// A graph under construction by one thread.
struct Recording {
    thread: ThreadId,
    graph: sys::CUgraph,
    /// The node of the latest launch, which the next one depends on.
    last: Option<sys::CUgraphNode>,
    launches: usize,
    /// The device memory the recorded launches use, kept allocated for the graph's life.
    keep: Vec<Kept>,
}

// SAFETY: the graph and node handles are plain driver handles, used only under the mutex with
// the context bound.
unsafe impl Send for Recording {}

/// Opens CUDA device `ordinal`: its primary context and default stream. Returns the device,
/// its arch (`sm_90` for compute capability 9.0) and its name.
pub(crate) fn open(ordinal: usize) -> Result<(CudaDevice, String, String)> {
    probe()?;
    let no_device = |e| Error::NoDevice(format!("CUDA: {}", describe(e)));
    let count = CudaContext::device_count().map_err(no_device)?;
    if ordinal >= count.max(0) as usize {
        return Err(Error::NoDevice(format!(
            "CUDA: device {ordinal} was requested, and the driver sees {count} device(s)"
        )));
    }
    let ctx = CudaContext::new(ordinal).map_err(no_device)?;
    // SAFETY: every operation on this context's memory goes to the one stream below, in
    // program order (module docs), so no allocation needs events to order its uses.
    unsafe { ctx.disable_event_tracking() };
    let (major, minor) = ctx
        .compute_capability()
        .map_err(|e| driver_error("cuDeviceGetAttribute", "reading the compute capability", e))?;
    let name = ctx
        .name()
        .map_err(|e| driver_error("cuDeviceGetName", "reading the device name", e))?;
    let pools = ctx
        .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED)
        .map_err(|e| driver_error("cuDeviceGetAttribute", "reading memory pool support", e))?;
    let max_shared_optin = ctx
        .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
        .map_err(|e| driver_error("cuDeviceGetAttribute", "reading the shared memory limit", e))?;
    let multiprocessors = ctx
        .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        .map_err(|e| {
            driver_error(
                "cuDeviceGetAttribute",
                "reading the multiprocessor count",
                e,
            )
        })?;
    let stream = ctx.default_stream();
    let dev = CudaDevice {
        ctx,
        stream,
        modules: ModuleCache::new(),
        alloc_op: if pools > 0 {
            "cuMemAllocAsync"
        } else {
            "cuMemAlloc"
        },
        max_shared_optin,
        multiprocessors,
        graph: Mutex::new(None),
        recording: AtomicBool::new(false),
        tensor_maps: Mutex::new(HashMap::new()),
    };
    Ok((dev, format!("sm_{major}{minor}"), name))
}

/// Device memory owned by a tensor; freed (in stream order) on drop.
pub(crate) struct DeviceBuffer(CudaSlice<u8>);

impl DeviceBuffer {
    pub(crate) fn ptr(&self) -> u64 {
        // The guard cudarc returns only records events, which are off (module docs).
        self.0.device_ptr(self.0.stream()).0
    }
}

impl CudaDevice {
    /// The stream all of this device's work is queued on (module docs), for
    /// [`crate::Device::cuda_stream`].
    pub(crate) fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Makes the context current on the calling thread; needed before every raw `result::` call.
    fn bind(&self) -> Result<()> {
        self.ctx
            .bind_to_thread()
            .map_err(|e| driver_error("cuCtxSetCurrent", "making the CUDA context current", e))
    }

    /// Whether the calling thread is recording a graph on this device.
    pub(crate) fn recording_here(&self) -> bool {
        self.recording.load(Ordering::Acquire)
            && self
                .graph
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .as_ref()
                .is_some_and(|r| r.thread == std::thread::current().id())
    }

    /// Starts recording the calling thread's launches into a new graph.
    pub(crate) fn begin_graph(&self) -> Result<()> {
        let mut slot = self.graph.lock().unwrap_or_else(PoisonError::into_inner);
        if slot.is_some() {
            return Err(Error::Graph(
                "this device is already recording a graph (one recording at a time, and \
                 recordings do not nest)"
                    .into(),
            ));
        }
        self.bind()?;
        let mut graph = std::ptr::null_mut();
        // SAFETY: writes one handle; flags must be 0.
        unsafe { sys::cuGraphCreate(&mut graph, 0) }
            .result()
            .map_err(|e| driver_error("cuGraphCreate", "creating a graph", e))?;
        *slot = Some(Recording {
            thread: std::thread::current().id(),
            graph,
            last: None,
            launches: 0,
            keep: Vec::new(),
        });
        self.recording.store(true, Ordering::Release);
        Ok(())
    }

    /// Keeps `buf` allocated for the life of the graph the calling thread records; `false` when
    /// it records none.
    pub(crate) fn keep_for_graph<B: Send + Sync + RefUnwindSafe + 'static>(
        &self,
        buf: &Arc<B>,
    ) -> bool {
        if !self.recording.load(Ordering::Acquire) {
            return false;
        }
        let mut slot = self.graph.lock().unwrap_or_else(PoisonError::into_inner);
        match slot.as_mut() {
            Some(r) if r.thread == std::thread::current().id() => {
                if !r
                    .keep
                    .iter()
                    .any(|k| std::ptr::addr_eq(Arc::as_ptr(k), Arc::as_ptr(buf)))
                {
                    r.keep.push(buf.clone());
                }
                true
            }
            _ => false,
        }
    }

    /// Ends the calling thread's recording: with `instantiate`, the executable graph, its launch
    /// count and the memory it uses; else the recording is discarded.
    pub(crate) fn end_graph(&self, instantiate: bool) -> Result<Option<RecordedGraph>> {
        let rec = {
            let mut slot = self.graph.lock().unwrap_or_else(PoisonError::into_inner);
            match slot.as_ref() {
                Some(r) if r.thread == std::thread::current().id() => {}
                _ => return Err(Error::Graph("this thread is not recording a graph".into())),
            }
            self.recording.store(false, Ordering::Release);
            slot.take().expect("checked above")
        };
        // From here on, dropping `graph` destroys the graph (and `exec`, once set).
        let mut graph = CudaGraph {
            ctx: self.ctx.clone(),
            graph: rec.graph,
            exec: std::ptr::null_mut(),
        };
        if !instantiate {
            return Ok(None);
        }
        self.bind()?;
        // SAFETY: `graph.graph` is a complete graph of kernel nodes of this context; writes one
        // handle. Flags 0: no auto-free, default upload.
        unsafe { sys::cuGraphInstantiateWithFlags(&mut graph.exec, graph.graph, 0) }
            .result()
            .map_err(|e| {
                driver_error("cuGraphInstantiateWithFlags", "instantiating the graph", e)
            })?;
        Ok(Some(RecordedGraph {
            graph,
            launches: rec.launches,
            keep: rec.keep,
        }))
    }

    /// Adds one launch to the calling thread's graph, after the previous one.
    fn add_kernel_node(
        &self,
        kernel: &'static str,
        object: &'static Object,
        loaded: &Loaded,
        grid: [u32; 3],
        params: &mut [*mut c_void],
    ) -> Result<()> {
        let mut slot = self.graph.lock().unwrap_or_else(PoisonError::into_inner);
        let rec = slot
            .as_mut()
            .filter(|r| r.thread == std::thread::current().id())
            .ok_or_else(|| Error::Graph("the recording ended during a launch".into()))?;
        let node_params = sys::CUDA_KERNEL_NODE_PARAMS {
            func: loaded.function,
            gridDimX: grid[0],
            gridDimY: grid[1],
            gridDimZ: grid[2],
            blockDimX: object.threads,
            blockDimY: 1,
            blockDimZ: 1,
            sharedMemBytes: object.shared_bytes,
            kernelParams: params.as_mut_ptr(),
            extra: std::ptr::null_mut(),
            kern: std::ptr::null_mut(),
            ctx: std::ptr::null_mut(),
        };
        let deps: &[sys::CUgraphNode] = rec.last.as_slice();
        let mut node = std::ptr::null_mut();
        // SAFETY: `rec.graph` is a live graph of this (bound) context; `deps` are its nodes;
        // the driver copies the parameter values at node creation, as cuLaunchKernel does at
        // launch (`params` point into the caller's `args`, alive through this call). The
        // function's module is kept for the life of the device, which the graph holds.
        unsafe {
            sys::cuGraphAddKernelNode_v2(
                &mut node,
                rec.graph,
                deps.as_ptr(),
                deps.len(),
                &node_params,
            )
        }
        .result()
        .map_err(|e| {
            driver_error(
                "cuGraphAddKernelNode",
                format_args!(
                    "{}: recording {grid:?} blocks into a graph",
                    what(kernel, object)
                ),
                e,
            )
        })?;
        rec.last = Some(node);
        rec.launches += 1;
        Ok(())
    }

    /// Queues a recorded graph on the device's stream.
    /// `args` followed by the tensor maps `maps` describe for them, or `None` when a map's
    /// tensor does not meet TMA's rules ([`crate::tma`]: the plain entry runs instead).
    pub(crate) fn tma_args(
        &self,
        kernel: &'static str,
        maps: &[TmaMap],
        args: &[KernelArg],
    ) -> Result<Option<Vec<KernelArg>>> {
        let Some(encodings) = maps
            .iter()
            .map(|m| crate::tma::encoding(m, args))
            .collect::<Option<Vec<_>>>()
        else {
            return Ok(None);
        };
        let mut out = args.to_vec();
        for e in &encodings {
            out.push(KernelArg::TensorMap(self.tensor_map(kernel, e)?));
        }
        Ok(Some(out))
    }

    /// The tensor map of `e` (`cuTensorMapEncodeTiled`: the box it describes, its swizzle, L2
    /// promotion by 256 bytes, zeros outside the tensor), encoded once per device and
    /// encoding. The cache forgets everything past 4096 entries (a process that launches on
    /// ever new buffers).
    fn tensor_map(&self, kernel: &'static str, e: &Encoding) -> Result<[u64; 16]> {
        let mut maps = self
            .tensor_maps
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(m) = maps.get(e) {
            return Ok(*m);
        }
        use sys::{
            CUtensorMapDataType as Ty, CUtensorMapFloatOOBfill as Fill,
            CUtensorMapInterleave as Interleave, CUtensorMapL2promotion as L2,
            CUtensorMapSwizzle as Swizzle,
        };
        let ty = match e.map.elem {
            TmaElem::F16 => Ty::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
            TmaElem::Bf16 => Ty::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
            TmaElem::U8 => Ty::CU_TENSOR_MAP_DATA_TYPE_UINT8,
        };
        let swizzle = match e.map.swizzle {
            128 => Swizzle::CU_TENSOR_MAP_SWIZZLE_128B,
            64 => Swizzle::CU_TENSOR_MAP_SWIZZLE_64B,
            32 => Swizzle::CU_TENSOR_MAP_SWIZZLE_32B,
            _ => Swizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
        };
        let ones = [1u32; 5];
        let mut map = sys::CUtensorMap { opaque: [0; 16] };
        // SAFETY: `map` is a writable, suitably aligned CUtensorMap; the arrays hold `rank`
        // (dims, boxes, element strides) and `rank - 1` (strides) values, as the call reads;
        // the address is only recorded, never dereferenced by the host.
        unsafe {
            sys::cuTensorMapEncodeTiled(
                &mut map,
                ty,
                e.dims.len() as u32,
                e.ptr as *mut c_void,
                e.dims.as_ptr(),
                e.strides.as_ptr(),
                e.map.boxes.as_ptr(),
                ones.as_ptr(),
                Interleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
                swizzle,
                L2::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                Fill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
            )
        }
        .result()
        .map_err(|err| {
            driver_error(
                "cuTensorMapEncodeTiled",
                format_args!(
                    "{kernel}: a tensor map of dims {:?}, strides {:?}, box {:?}",
                    e.dims, e.strides, e.map.boxes
                ),
                err,
            )
        })?;
        if maps.len() >= 4096 {
            maps.clear();
        }
        maps.insert(e.clone(), map.opaque);
        Ok(map.opaque)
    }

    pub(crate) fn launch_graph(&self, graph: &CudaGraph) -> Result<()> {
        if self.recording_here() {
            return Err(Error::Graph(
                "a graph cannot be launched while this thread records another".into(),
            ));
        }
        self.bind()?;
        // SAFETY: `graph.exec` is an executable graph of this context; the memory its kernels
        // use is kept allocated by its owner (`crate::Graph`).
        unsafe { sys::cuGraphLaunch(graph.exec, self.stream.cu_stream()) }
            .result()
            .map_err(|e| driver_error("cuGraphLaunch", "launching a graph", e))
    }
}

// SAFETY: each method does what the trait's docs require: `alloc_raw` returns a cudarc
// allocation of `bytes` bytes on this context, which frees it on drop in stream order
// (`cuMemFreeAsync` on the stream, or a synchronize then `cuMemFree`); every copy, fill and launch
// goes to `self.stream`, the context's one stream (module docs), or into the calling thread's
// graph; `synchronize` waits for that stream.
unsafe impl GpuRuntime for CudaDevice {
    type Buffer = DeviceBuffer;
    type Module = Loaded;

    fn modules(&self) -> &ModuleCache<Loaded> {
        &self.modules
    }

    fn alloc_raw(&self, bytes: usize) -> Result<DeviceBuffer> {
        // SAFETY: u8 has no invalid values; the caller sets unset memory before it is read.
        let slice = unsafe { self.stream.alloc::<u8>(bytes) }.map_err(|e| {
            if e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
                Error::OutOfMemory {
                    backend: Backend::Cuda,
                    bytes,
                }
            } else {
                driver_error(self.alloc_op, format_args!("allocating {bytes} bytes"), e)
            }
        })?;
        Ok(DeviceBuffer(slice))
    }

    fn address(buffer: &DeviceBuffer) -> u64 {
        buffer.ptr()
    }

    unsafe fn memset_async(&self, ptr: u64, byte: u8, bytes: usize) -> Result<()> {
        self.bind()?;
        // SAFETY: the caller's contract.
        unsafe { result::memset_d8_async(ptr, byte, bytes, self.stream.cu_stream()) }.map_err(|e| {
            driver_error(
                "cuMemsetD8Async",
                format_args!("filling {bytes} bytes of device memory"),
                e,
            )
        })
    }

    unsafe fn htod_async<T>(&self, ptr: u64, src: &[T]) -> Result<()> {
        self.bind()?;
        // SAFETY: the caller's contract; `src` stays borrowed until the copy has finished.
        unsafe { result::memcpy_htod_async(ptr, src, self.stream.cu_stream()) }.map_err(|e| {
            driver_error(
                "cuMemcpyHtoDAsync",
                format_args!("copying {} bytes to the device", std::mem::size_of_val(src)),
                e,
            )
        })
    }

    unsafe fn dtoh_async<T>(&self, dst: &mut [T], ptr: u64) -> Result<()> {
        let bytes = std::mem::size_of_val(dst);
        self.bind()?;
        // SAFETY: the caller's contract; `dst` stays borrowed until the copy has finished.
        unsafe { result::memcpy_dtoh_async(dst, ptr, self.stream.cu_stream()) }.map_err(|e| {
            driver_error(
                "cuMemcpyDtoHAsync",
                format_args!("copying {bytes} bytes from the device"),
                e,
            )
        })
    }

    unsafe fn dtod_async(&self, dst: u64, src: u64, bytes: usize) -> Result<()> {
        self.bind()?;
        // SAFETY: the caller's contract.
        unsafe { result::memcpy_dtod_async(dst, src, bytes, self.stream.cu_stream()) }.map_err(
            |e| {
                driver_error(
                    "cuMemcpyDtoDAsync",
                    format_args!("copying {bytes} bytes within the device"),
                    e,
                )
            },
        )
    }

    fn synchronize(&self) -> Result<()> {
        self.stream.synchronize().map_err(|e| {
            driver_error(
                "cuStreamSynchronize",
                "waiting for the device (an earlier launch or copy may have failed)",
                e,
            )
        })
    }

    fn time_ms(&self, f: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
        let timing = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
        let event = |op, what| move |e| driver_error(op, format_args!("timing: {what}"), e);
        let start = self
            .ctx
            .new_event(timing)
            .map_err(event("cuEventCreate", "creating an event"))?;
        let end = self
            .ctx
            .new_event(timing)
            .map_err(event("cuEventCreate", "creating an event"))?;
        start
            .record(&self.stream)
            .map_err(event("cuEventRecord", "recording the start"))?;
        f()?;
        end.record(&self.stream)
            .map_err(event("cuEventRecord", "recording the end"))?;
        // Waits for both events.
        let ms = start
            .elapsed_ms(&end)
            .map_err(event("cuEventElapsedTime", "reading the elapsed time"))?;
        Ok(f64::from(ms))
    }

    fn load_module(&self, image: &[u64], entry: CString, what: &str) -> Result<Loaded> {
        self.bind()?;
        // SAFETY: `image` holds the image and a terminating zero byte, and lives through the
        // call; the driver copies what it loads.
        let module = unsafe { result::module::load_data(image.as_ptr() as *const c_void) }
            .map_err(|e| {
                driver_error(
                    "cuModuleLoadData",
                    format_args!("{what}: loading the image"),
                    e,
                )
            })?;
        // From here on, dropping `loaded` unloads the module.
        let mut loaded = Loaded {
            ctx: self.ctx.clone(),
            module,
            function: std::ptr::null_mut(),
            max_threads: 0,
            static_shared: 0,
            dynamic_allowed: std::sync::atomic::AtomicU32::new(48 * 1024),
            resident: std::sync::atomic::AtomicU32::new(0),
        };
        let name = entry.to_string_lossy().into_owned();
        // SAFETY: `module` is loaded and stays so while `loaded` lives.
        loaded.function = unsafe { result::module::get_function(module, entry) }.map_err(|e| {
            driver_error(
                "cuModuleGetFunction",
                format_args!("{what}: finding the entry `{name}`"),
                e,
            )
        })?;
        // What the launch-time checks compare against (`limits`), read once per module.
        let attribute = |attr, what_attr| {
            // SAFETY: `loaded.function` is a function of the loaded module.
            unsafe { result::function::get_function_attribute(loaded.function, attr) }.map_err(
                |e| {
                    driver_error(
                        "cuFuncGetAttribute",
                        format_args!("{what}: reading {what_attr}"),
                        e,
                    )
                },
            )
        };
        loaded.max_threads = attribute(
            sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
            "its threads per block limit",
        )?;
        loaded.static_shared = attribute(
            sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
            "its static shared memory",
        )?;
        Ok(loaded)
    }

    /// The function's block size limit, and the device's opt-in maximum of shared memory per
    /// block less the function's static shared memory.
    fn limits(&self, module: &Loaded) -> Limits {
        Limits {
            max_threads: i64::from(module.max_threads),
            max_dynamic_shared: i64::from(self.max_shared_optin) - i64::from(module.static_shared),
        }
    }

    /// Allows the function the dynamic shared memory `object` asks for beyond what it was allowed
    /// so far (48 KiB without asking).
    fn prepare_function(
        &self,
        kernel: &'static str,
        object: &Object,
        loaded: &Loaded,
    ) -> Result<()> {
        if object.shared_bytes <= loaded.dynamic_allowed.load(Ordering::Acquire) {
            return Ok(());
        }
        let bytes = i32::try_from(object.shared_bytes).unwrap_or(i32::MAX);
        self.bind()?;
        // SAFETY: `loaded.function` is a function of a loaded module.
        unsafe {
            result::function::set_function_attribute(
                loaded.function,
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                bytes,
            )
        }
        .map_err(|e| {
            driver_error(
                "cuFuncSetAttribute",
                format_args!(
                    "{}: allowing {bytes} bytes of shared memory",
                    what(kernel, object)
                ),
                e,
            )
        })?;
        loaded
            .dynamic_allowed
            .fetch_max(object.shared_bytes, Ordering::AcqRel);
        Ok(())
    }

    unsafe fn launch_loaded(
        &self,
        kernel: &'static str,
        object: &'static Object,
        loaded: &Loaded,
        grid: [u32; 3],
        params: &mut [*mut c_void],
    ) -> Result<()> {
        self.bind()?;
        if self.recording_here() {
            return self.add_kernel_node(kernel, object, loaded, grid, params);
        }
        // SAFETY: `loaded` keeps the module (so the function) alive; the arguments are the
        // caller's contract.
        unsafe {
            result::launch_kernel(
                loaded.function,
                (grid[0], grid[1], grid[2]),
                (object.threads, 1, 1),
                object.shared_bytes,
                self.stream.cu_stream(),
                params,
            )
        }
        .map_err(|e| {
            driver_error(
                "cuLaunchKernel",
                format_args!("{}: launching {grid:?} blocks", what(kernel, object)),
                e,
            )
        })
    }

    fn recording_here(&self) -> bool {
        CudaDevice::recording_here(self)
    }

    /// The multiprocessors times the blocks of this size and shared memory one holds
    /// (`cuOccupancyMaxActiveBlocksPerMultiprocessor`), read once per module.
    fn resident_blocks(
        &self,
        kernel: &'static str,
        object: &Object,
        loaded: &Loaded,
    ) -> Result<u32> {
        let known = loaded.resident.load(Ordering::Acquire);
        if known != 0 {
            return Ok(known);
        }
        self.bind()?;
        // SAFETY: `loaded.function` is a function of a loaded module, allowed the shared
        // memory `object` asks for (`prepare_function` ran).
        let per_sm = unsafe {
            result::occupancy::max_active_block_per_multiprocessor(
                loaded.function,
                object.threads as i32,
                object.shared_bytes as usize,
            )
        }
        .map_err(|e| {
            driver_error(
                "cuOccupancyMaxActiveBlocksPerMultiprocessor",
                format_args!("{}: reading its occupancy", what(kernel, object)),
                e,
            )
        })?;
        let blocks = (per_sm.max(1) as u32).saturating_mul(self.multiprocessors.max(1) as u32);
        loaded.resident.store(blocks, Ordering::Release);
        Ok(blocks)
    }
}

/// What [`CudaDevice::end_graph`] returns.
pub(crate) struct RecordedGraph {
    pub(crate) graph: CudaGraph,
    pub(crate) launches: usize,
    pub(crate) keep: Vec<Kept>,
}

/// A graph and its executable form (null until instantiated); both destroyed on drop.
pub(crate) struct CudaGraph {
    ctx: Arc<CudaContext>,
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
}

// SAFETY: plain driver handles, usable from any thread on which their context is current (every
// use binds it first).
unsafe impl Send for CudaGraph {}
unsafe impl Sync for CudaGraph {}

impl Drop for CudaGraph {
    fn drop(&mut self) {
        // Nothing can report an error here; a failed destroy leaks the graph.
        if self.ctx.bind_to_thread().is_ok() {
            // SAFETY: both handles were created for this graph and are destroyed only here. An
            // executable graph still running is freed by the driver when it completes.
            unsafe {
                if !self.exec.is_null() {
                    let _ = sys::cuGraphExecDestroy(self.exec);
                }
                let _ = sys::cuGraphDestroy(self.graph);
            }
        }
    }
}

/// A loaded module and its kernel function; unloaded on drop.
pub(crate) struct Loaded {
    ctx: Arc<CudaContext>,
    module: sys::CUmodule,
    function: sys::CUfunction,
    /// `CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`: its launch bound, or what its registers allow.
    max_threads: i32,
    /// `CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES`: its static shared memory.
    static_shared: i32,
    /// The dynamic shared memory the function has been allowed so far
    /// (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`; 48 KiB without asking).
    dynamic_allowed: std::sync::atomic::AtomicU32,
    /// The blocks the device holds at once ([`GpuRuntime::resident_blocks`]); 0 until read.
    resident: std::sync::atomic::AtomicU32,
}

// SAFETY: module and function handles are plain driver handles, usable from any thread on which
// their context is current (every use binds it first).
unsafe impl Send for Loaded {}
unsafe impl Sync for Loaded {}

impl Drop for Loaded {
    fn drop(&mut self) {
        // Nothing can report an error here; a failed unload leaks the module.
        if self.ctx.bind_to_thread().is_ok() {
            // SAFETY: `module` was loaded by `CudaDevice::load` and is unloaded only here.
            let _ = unsafe { result::module::unload(self.module) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether this machine has libcuda; the tests below hold either way.
    fn driver_present() -> bool {
        // SAFETY: only opens and closes the library.
        unsafe { sys::is_culib_present() }
    }

    #[test]
    fn probe_explains_a_missing_driver() {
        if driver_present() {
            return;
        }
        let e = probe().unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, Error::NoDevice(_)), "{msg}");
        assert!(msg.contains("libcuda"), "{msg}");
        // Asking again gives the same answer without touching cudarc.
        assert_eq!(probe().unwrap_err(), e);
    }
}
