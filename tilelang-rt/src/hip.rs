//! The HIP backend: AMD's HIP runtime (`libamdhip64`), loaded at run time.
//!
//! The `hip-sys` crate needs ROCm headers to build and links `libamdhip64.so.5`, which ROCm 6 and
//! 7 do not ship (ARCHITECTURE.md, Decisions: "Toolchains and runtimes"), so this module opens the library itself with `libloading` and
//! declares the few functions it calls ([`Api`]). Every crate therefore builds without ROCm, and
//! a machine without the library gets [`Error::NoDevice`].
//!
//! Signatures and constants are taken from `include/hip/hip_runtime_api.h` and
//! `include/hip/driver_types.h` of ROCm/HIP (HIP 6.3, commit c5e11fc) and checked against the
//! ROCm 7 header (ROCm/rocm-systems, `projects/hip/include/hip/hip_runtime_api.h`), where they
//! are unchanged apart from `const` on the source of host-to-device copies (same ABI). Runtime
//! behaviour this module relies on is from ROCm/clr (`hipamd/src`, commit f9f995c); each use
//! says where.
//!
//! Ordering, as in the CUDA backend: each device uses its null stream (HIP's blocking default
//! stream, which also orders against other blocking streams), and every copy, fill and launch
//! of the device is queued on it, so they run in program order. `hipFree` waits for all work of
//! the device before freeing (clr `ihipFree`: `SyncAllStreams`), so dropping a tensor while a
//! kernel still uses it is safe.
//!
//! The HIP runtime keeps a current device per host thread (`hipSetDevice`); every entry point
//! here sets it first ([`HipDevice::bind`]), as the CUDA backend makes its context current.

use crate::dylib::{self, LoadError, SearchOrder, Spec};
use crate::error::{Backend, Error, GpuBackend, Result};
use crate::object::Object;
use crate::runtime::{what, GpuRuntime, Limits, ModuleCache};
use std::ffi::{c_char, c_float, c_int, c_uint, c_void, CStr, CString, OsStr};
use std::fmt;
use std::path::PathBuf;
use std::ptr::null_mut;
use std::sync::OnceLock;

/// `hipError_t`: a C enum (`int`-sized; ROCm 7 gives it a `uint32_t` base, the same ABI).
type HipStatus = c_int;
/// `hipSuccess = 0` (hip_runtime_api.h, `enum hipError_t`).
const HIP_SUCCESS: HipStatus = 0;
/// `hipErrorOutOfMemory = 2` (hip_runtime_api.h).
const OUT_OF_MEMORY: HipStatus = GpuBackend::Hip.out_of_memory_code();
/// `hipModule_t` (`struct ihipModule_t*`), `hipFunction_t` (`struct ihipModuleSymbol_t*`),
/// `hipStream_t` (`struct ihipStream_t*`), `hipEvent_t` (`struct ihipEvent_t*`): opaque handles.
type Module = *mut c_void;
type Function = *mut c_void;
type Stream = *mut c_void;
type Event = *mut c_void;

/// The null stream: see the module docs.
const NULL_STREAM: Stream = null_mut();

/// `hipDeviceAttribute_t` values (hip_runtime_api.h; the enum counts up from
/// `hipDeviceAttributeCudaCompatibleBegin = 0`, identical in the ROCm 6.3 and 7 headers; the
/// values were computed by compiling the enum with a C compiler).
mod attr {
    /// `hipDeviceAttributeMultiprocessorCount`.
    pub const MULTIPROCESSOR_COUNT: i32 = 63;
    /// `hipDeviceAttributeWarpSize`.
    pub const WARP_SIZE: i32 = 87;
}

/// `hipFunction_attribute` values (driver_types.h; the enum counts up from 0).
mod func_attr {
    /// `HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`: the kernel's launch bound (clr
    /// `hipFuncGetAttribute`: `workGroupInfo()->size_`).
    pub const MAX_THREADS_PER_BLOCK: i32 = 0;
    /// `HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`: the device's LDS per workgroup less the
    /// kernel's static LDS (clr: `availableLDSSize_ - localMemSize_`).
    pub const MAX_DYNAMIC_SHARED_SIZE_BYTES: i32 = 8;
}

/// Byte offsets in `hipDeviceProp_tR0600`, the struct `hipGetDevicePropertiesR0600` fills
/// (hip_runtime_api.h: `#define hipDeviceProp_t hipDeviceProp_tR0600`). Its layout is the same in
/// the ROCm 6.3 and ROCm 7 headers; the versioned symbol exists since ROCm 6.0 (clr
/// `hip_hcc.map.in`, version node `hip_6.0`) so that the layout of this name does not change.
/// Offsets for LP64 (x86-64, aarch64), computed with `offsetof` on the ROCm 6.3 header.
mod props {
    /// `char name[256]`.
    pub const NAME: usize = 0;
    /// `int warpSize`.
    pub const WARP_SIZE: usize = 308;
    /// `int multiProcessorCount`.
    pub const MULTIPROCESSOR_COUNT: usize = 388;
    /// `char gcnArchName[256]`, e.g. `gfx90a:sramecc+:xnack-`.
    pub const GCN_ARCH_NAME: usize = 1160;
    pub const GCN_ARCH_NAME_LEN: usize = 256;
    /// `sizeof(hipDeviceProp_tR0600)`. The buffer handed to the runtime is larger, in case a
    /// runtime writes more than the header says.
    pub const SIZE: usize = 1472;
    pub const BUFFER_BYTES: usize = 8192;
    const _: () = assert!(GCN_ARCH_NAME + GCN_ARCH_NAME_LEN <= SIZE && SIZE < BUFFER_BYTES);
}

// `dylib_api!` is in scope through `#[macro_use]` on `mod dylib` (lib.rs).
dylib_api! {
    /// The HIP runtime functions this backend calls, resolved from `libamdhip64`.
    struct Api {
        /// `hipError_t hipInit(unsigned int flags)`
        fn hipInit(flags: c_uint) -> HipStatus;
        /// `hipError_t hipGetDeviceCount(int* count)`
        fn hipGetDeviceCount(count: *mut c_int) -> HipStatus;
        /// `hipError_t hipSetDevice(int deviceId)`
        fn hipSetDevice(device: c_int) -> HipStatus;
        /// `hipError_t hipDeviceGetName(char* name, int len, hipDevice_t device)`, `hipDevice_t` =
        /// `int`.
        fn hipDeviceGetName(name: *mut c_char, len: c_int, device: c_int) -> HipStatus;
        /// `hipError_t hipDeviceGetAttribute(int* pi, hipDeviceAttribute_t attr, int deviceId)`
        fn hipDeviceGetAttribute(value: *mut c_int, attr: c_int, device: c_int) -> HipStatus;
        /// `hipError_t hipGetDevicePropertiesR0600(hipDeviceProp_tR0600* prop, int deviceId)`
        fn hipGetDevicePropertiesR0600(prop: *mut c_void, device: c_int) -> HipStatus;
        /// `hipError_t hipMalloc(void** ptr, size_t size)`
        fn hipMalloc(ptr: *mut *mut c_void, size: usize) -> HipStatus;
        /// `hipError_t hipFree(void* ptr)`
        fn hipFree(ptr: *mut c_void) -> HipStatus;
        /// `hipError_t hipMemsetD8Async(hipDeviceptr_t dest, unsigned char value, size_t count,
        /// hipStream_t stream)`, `hipDeviceptr_t` = `void*`.
        fn hipMemsetD8Async(dst: *mut c_void, value: u8, count: usize, stream: Stream) -> HipStatus;
        /// `hipError_t hipMemcpyHtoDAsync(hipDeviceptr_t dst, void* src, size_t sizeBytes,
        /// hipStream_t stream)` (`const void* src` in ROCm 7).
        fn hipMemcpyHtoDAsync(
            dst: *mut c_void,
            src: *const c_void,
            bytes: usize,
            stream: Stream,
        ) -> HipStatus;
        /// `hipError_t hipMemcpyDtoHAsync(void* dst, hipDeviceptr_t src, size_t sizeBytes,
        /// hipStream_t stream)`
        fn hipMemcpyDtoHAsync(
            dst: *mut c_void,
            src: *mut c_void,
            bytes: usize,
            stream: Stream,
        ) -> HipStatus;
        /// `hipError_t hipMemcpyDtoDAsync(hipDeviceptr_t dst, hipDeviceptr_t src,
        /// size_t sizeBytes, hipStream_t stream)`
        fn hipMemcpyDtoDAsync(
            dst: *mut c_void,
            src: *mut c_void,
            bytes: usize,
            stream: Stream,
        ) -> HipStatus;
        /// `hipError_t hipStreamSynchronize(hipStream_t stream)`
        fn hipStreamSynchronize(stream: Stream) -> HipStatus;
        /// `hipError_t hipModuleLoadData(hipModule_t* module, const void* image)`
        fn hipModuleLoadData(module: *mut Module, image: *const c_void) -> HipStatus;
        /// `hipError_t hipModuleGetFunction(hipFunction_t* function, hipModule_t module,
        /// const char* kname)`
        fn hipModuleGetFunction(
            function: *mut Function,
            module: Module,
            name: *const c_char,
        ) -> HipStatus;
        /// `hipError_t hipModuleUnload(hipModule_t module)`
        fn hipModuleUnload(module: Module) -> HipStatus;
        /// `hipError_t hipFuncGetAttribute(int* value, hipFunction_attribute attrib,
        /// hipFunction_t hfunc)`
        fn hipFuncGetAttribute(value: *mut c_int, attr: c_int, function: Function) -> HipStatus;
        /// `hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gridDimX,
        /// unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX,
        /// unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes,
        /// hipStream_t stream, void** kernelParams, void** extra)`
        fn hipModuleLaunchKernel(
            function: Function,
            grid_x: c_uint,
            grid_y: c_uint,
            grid_z: c_uint,
            block_x: c_uint,
            block_y: c_uint,
            block_z: c_uint,
            shared_bytes: c_uint,
            stream: Stream,
            params: *mut *mut c_void,
            extra: *mut *mut c_void,
        ) -> HipStatus;
        /// `hipError_t hipEventCreate(hipEvent_t* event)`
        fn hipEventCreate(event: *mut Event) -> HipStatus;
        /// `hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream)`
        fn hipEventRecord(event: Event, stream: Stream) -> HipStatus;
        /// `hipError_t hipEventSynchronize(hipEvent_t event)`
        fn hipEventSynchronize(event: Event) -> HipStatus;
        /// `hipError_t hipEventElapsedTime(float* ms, hipEvent_t start, hipEvent_t stop)`
        fn hipEventElapsedTime(ms: *mut c_float, start: Event, stop: Event) -> HipStatus;
        /// `hipError_t hipEventDestroy(hipEvent_t event)`
        fn hipEventDestroy(event: Event) -> HipStatus;
        /// `const char* hipGetErrorName(hipError_t hip_error)`
        fn hipGetErrorName(status: HipStatus) -> *const c_char;
        /// `const char* hipGetErrorString(hipError_t hipError)`
        fn hipGetErrorString(status: HipStatus) -> *const c_char;
    }
}

/// How messages name the HIP runtime, and the fixes.
const SPEC: Spec = Spec {
    library: "libamdhip64",
    not_found: "install ROCm 6 or newer, or add the directory holding libamdhip64 to \
                LD_LIBRARY_PATH or set ROCM_PATH",
    too_old: "tilelang needs the HIP runtime of ROCm 6.0 or newer",
};

/// The library names tried, newest first. `libamdhip64.so.5` (ROCm 5) is left out: it lacks
/// `hipGetDevicePropertiesR0600`.
const LIBRARY_NAMES: [&str; 3] = ["libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so"];

/// Where to look for the library, in order: each name through the dynamic loader's own search
/// (`LD_LIBRARY_PATH`, the ld.so cache), so that the user's setting wins, then in
/// `$ROCM_PATH/lib`, then in `/opt/rocm/lib`.
fn candidates(rocm_path: Option<&OsStr>) -> Vec<PathBuf> {
    dylib::candidates(
        &LIBRARY_NAMES,
        &dylib::rocm_lib_dirs(rocm_path),
        SearchOrder::LoaderFirst,
    )
}

/// Opens the first candidate that loads and resolves the API from it.
fn load(candidates: &[PathBuf]) -> Result<Api, LoadError> {
    // SAFETY: the candidates are libamdhip64's sonames; loading it runs its initialisers, which
    // only set up the runtime (the devices are opened by hipInit).
    let lib = unsafe { dylib::open(&SPEC, candidates) }?;
    // SAFETY: a library of these names is the HIP runtime, whose functions have the signatures
    // declared in `Api` (from its headers, module docs).
    unsafe { Api::resolve(lib) }
}

/// The HIP runtime, loaded and initialised once. Until this has succeeded nothing calls HIP.
fn api() -> Result<&'static Api> {
    static API: OnceLock<Result<Api, String>> = OnceLock::new();
    API.get_or_init(|| {
        if cfg!(not(target_pointer_width = "64")) {
            return Err("HIP: the HIP runtime needs a 64-bit host".to_string());
        }
        let rocm_path = std::env::var_os("ROCM_PATH");
        let api = load(&candidates(rocm_path.as_deref())).map_err(|e| format!("HIP: {e}"))?;
        // SAFETY: hipInit takes flags, which must be 0.
        let status = unsafe { (api.hipInit)(0) };
        if status != HIP_SUCCESS {
            return Err(format!(
                "HIP: hipInit failed ({}, from {})",
                describe(&api, status),
                api.library().path().display()
            ));
        }
        Ok(api)
    })
    .as_ref()
    .map_err(|e| Error::NoDevice(e.clone()))
}

/// Checks that the HIP runtime can be loaded and initialised.
#[cfg(test)]
pub(crate) fn probe() -> Result<()> {
    api().map(|_| ())
}

/// `hipErrorOutOfMemory (out of memory)`.
fn describe(api: &Api, status: HipStatus) -> String {
    // SAFETY: both return a pointer to a static string, or null.
    let (name, text) = unsafe {
        (
            c_str((api.hipGetErrorName)(status)),
            c_str((api.hipGetErrorString)(status)),
        )
    };
    match (name, text) {
        (Some(name), Some(text)) if name != text => format!("{name} ({text})"),
        (Some(name), _) => name,
        (None, Some(text)) => format!("hipError_t {status} ({text})"),
        (None, None) => format!("hipError_t {status}"),
    }
}

/// # Safety
/// `p` is null or points to a NUL-terminated string that lives as long as the call.
unsafe fn c_str(p: *const c_char) -> Option<String> {
    // SAFETY: the caller's contract.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// `Ok` for `hipSuccess`, else [`Error::Driver`] for the runtime call `op`, made while doing
/// `context`.
fn check(api: &Api, status: HipStatus, op: &'static str, context: impl fmt::Display) -> Result<()> {
    if status == HIP_SUCCESS {
        return Ok(());
    }
    // SAFETY: both return a pointer to a static string, or null.
    let (name, text) = unsafe {
        (
            c_str((api.hipGetErrorName)(status)),
            c_str((api.hipGetErrorString)(status)),
        )
    };
    Err(Error::Driver {
        backend: GpuBackend::Hip,
        op,
        context: context.to_string(),
        code: status,
        description: text
            .filter(|t| Some(t) != name.as_ref())
            .unwrap_or_default(),
        name: name.unwrap_or_else(|| format!("hipError_t {status}")),
    })
}

/// The bare target name of a `gcnArchName`, which the runtime reports with the target features
/// the device runs with (`gfx90a:sramecc+:xnack-`): `gfx90a`. Objects are compiled for bare
/// targets, which run whatever the features' settings. `None` for anything that is not
/// `gfx` followed by letters and digits.
pub(crate) fn bare_arch(gcn_arch_name: &str) -> Option<&str> {
    let arch = gcn_arch_name.split(':').next()?.trim();
    let number = arch.strip_prefix("gfx")?;
    let plain = !number.is_empty()
        && number
            .bytes()
            .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase());
    plain.then_some(arch)
}

/// The NUL-terminated string in `bytes[at..at + len]`.
fn str_at(bytes: &[u8], at: usize, len: usize) -> Option<String> {
    let field = bytes.get(at..at + len)?;
    let end = field.iter().position(|&b| b == 0)?;
    Some(String::from_utf8_lossy(&field[..end]).into_owned())
}

fn i32_at(bytes: &[u8], at: usize) -> Option<i32> {
    Some(i32::from_ne_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

/// The device's bare arch from the bytes `hipGetDevicePropertiesR0600` wrote, after checking
/// the layout against what `hipDeviceGetAttribute` says: the warp size and the number of
/// compute units must be where [`props`] says they are. A mismatch means a runtime whose struct
/// this build does not know, and reading a string at the wrong place is refused.
fn arch_from_props(bytes: &[u8], warp_size: i32, compute_units: i32) -> Result<String, String> {
    let found = (
        i32_at(bytes, props::WARP_SIZE),
        i32_at(bytes, props::MULTIPROCESSOR_COUNT),
    );
    if found != (Some(warp_size), Some(compute_units)) || !matches!(warp_size, 32 | 64) {
        return Err(format!(
            "hipGetDevicePropertiesR0600 filled a structure this build does not recognise \
             (warpSize {:?} and multiProcessorCount {:?} at offsets {} and {}, where \
             hipDeviceGetAttribute says {warp_size} and {compute_units})",
            found.0,
            found.1,
            props::WARP_SIZE,
            props::MULTIPROCESSOR_COUNT
        ));
    }
    let gcn = str_at(bytes, props::GCN_ARCH_NAME, props::GCN_ARCH_NAME_LEN)
        .ok_or("gcnArchName is not a NUL-terminated string")?;
    bare_arch(&gcn)
        .map(str::to_string)
        .ok_or_else(|| format!("the device reports the arch `{gcn}`, which is not a gfx target"))
}

/// The HIP state of a [`crate::Device`].
pub(crate) struct HipDevice {
    api: &'static Api,
    ordinal: c_int,
    modules: ModuleCache<Loaded>,
}

/// Opens HIP device `ordinal`. Returns the device, its arch (`gfx1100`; see [`bare_arch`]) and
/// its name.
pub(crate) fn open(ordinal: usize) -> Result<(HipDevice, String, String)> {
    let api = api()?;
    let mut count = 0;
    // SAFETY: writes one int.
    let status = unsafe { (api.hipGetDeviceCount)(&mut count) };
    if status != HIP_SUCCESS {
        return Err(Error::NoDevice(format!(
            "HIP: hipGetDeviceCount failed: {}",
            describe(api, status)
        )));
    }
    if ordinal >= count.max(0) as usize {
        return Err(Error::NoDevice(format!(
            "HIP: device {ordinal} was requested, and the runtime sees {count} device(s)"
        )));
    }
    let dev = HipDevice {
        api,
        ordinal: ordinal as c_int,
        modules: ModuleCache::new(),
    };
    dev.bind()?;
    let (arch, name) = dev.identify()?;
    Ok((dev, arch, name))
}

impl HipDevice {
    /// The HIP runtime library, opened and initialised (for [`crate::Device::hip_library`]).
    pub(crate) fn library(&self) -> &'static dylib::Library {
        self.api.library()
    }

    /// Makes this the calling thread's current device; needed before every call that works on
    /// "the current device" (allocation, copies, module loads, launches, events).
    fn bind(&self) -> Result<()> {
        // SAFETY: `ordinal` is below the device count.
        let status = unsafe { (self.api.hipSetDevice)(self.ordinal) };
        check(
            self.api,
            status,
            "hipSetDevice",
            "making the HIP device current",
        )
    }

    fn attribute(&self, attr: c_int, what: &str) -> Result<i32> {
        let mut value = 0;
        // SAFETY: writes one int; `ordinal` is a device.
        let status = unsafe { (self.api.hipDeviceGetAttribute)(&mut value, attr, self.ordinal) };
        check(
            self.api,
            status,
            "hipDeviceGetAttribute",
            format_args!("reading the {what}"),
        )?;
        Ok(value)
    }

    /// The device's arch and name.
    fn identify(&self) -> Result<(String, String)> {
        let api = self.api;
        let mut words = vec![0u64; props::BUFFER_BYTES / 8];
        // SAFETY: the buffer is larger than `hipDeviceProp_tR0600` (`props::SIZE`) and aligned
        // for it (8 bytes, its largest member alignment).
        let status =
            unsafe { (api.hipGetDevicePropertiesR0600)(words.as_mut_ptr().cast(), self.ordinal) };
        check(
            api,
            status,
            "hipGetDevicePropertiesR0600",
            "reading the device properties",
        )?;
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
        let warp = self.attribute(attr::WARP_SIZE, "warp size")?;
        let units = self.attribute(attr::MULTIPROCESSOR_COUNT, "compute unit count")?;
        let arch = arch_from_props(&bytes, warp, units).map_err(|e| {
            Error::NoDevice(format!("HIP ({}): {e}", api.library().path().display()))
        })?;

        let mut name = [0 as c_char; 256];
        // SAFETY: writes at most `len` bytes, NUL included.
        let status =
            unsafe { (api.hipDeviceGetName)(name.as_mut_ptr(), name.len() as c_int, self.ordinal) };
        check(api, status, "hipDeviceGetName", "reading the device name")?;
        name[name.len() - 1] = 0;
        // SAFETY: `name` is NUL-terminated (its last byte at the latest).
        let mut name = unsafe { c_str(name.as_ptr()) }.unwrap_or_default();
        if name.is_empty() {
            name = str_at(&bytes, props::NAME, 256).unwrap_or_default();
        }
        Ok((arch, name))
    }

    /// An attribute of `module`'s function (`hipFuncGetAttribute`), read for `what_attr`.
    fn function_attribute(
        &self,
        module: &Loaded,
        attr: c_int,
        what: &str,
        what_attr: &str,
    ) -> Result<i64> {
        let mut value = 0;
        // SAFETY: `module.function` is a function of the loaded module; writes one int.
        let status = unsafe { (self.api.hipFuncGetAttribute)(&mut value, attr, module.function) };
        check(
            self.api,
            status,
            "hipFuncGetAttribute",
            format_args!("{what}: reading {what_attr}"),
        )
        .map(|()| i64::from(value))
    }
}

// SAFETY: each method does what the trait's docs require: `alloc_raw` returns a `hipMalloc`
// allocation of `bytes` bytes on this device, which `hipFree` frees on drop after the device's
// queued work (module docs); every copy, fill and launch goes to the device's null stream, the
// current device being set first (`bind`); `synchronize` waits for the null stream.
unsafe impl GpuRuntime for HipDevice {
    type Buffer = DeviceBuffer;
    type Module = Loaded;

    fn modules(&self) -> &ModuleCache<Loaded> {
        &self.modules
    }

    fn alloc_raw(&self, bytes: usize) -> Result<DeviceBuffer> {
        self.bind()?;
        let mut ptr = null_mut();
        // SAFETY: writes one pointer.
        let status = unsafe { (self.api.hipMalloc)(&mut ptr, bytes) };
        if status == OUT_OF_MEMORY {
            return Err(Error::OutOfMemory {
                backend: Backend::Hip,
                bytes,
            });
        }
        check(
            self.api,
            status,
            "hipMalloc",
            format_args!("allocating {bytes} bytes"),
        )?;
        Ok(DeviceBuffer {
            api: self.api,
            ordinal: self.ordinal,
            ptr,
        })
    }

    fn address(buffer: &DeviceBuffer) -> u64 {
        buffer.ptr()
    }

    unsafe fn memset_async(&self, ptr: u64, byte: u8, bytes: usize) -> Result<()> {
        self.bind()?;
        // SAFETY: the caller's contract.
        let status =
            unsafe { (self.api.hipMemsetD8Async)(ptr as *mut c_void, byte, bytes, NULL_STREAM) };
        check(
            self.api,
            status,
            "hipMemsetD8Async",
            format_args!("filling {bytes} bytes of device memory"),
        )
    }

    unsafe fn htod_async<T>(&self, ptr: u64, src: &[T]) -> Result<()> {
        let bytes = std::mem::size_of_val(src);
        self.bind()?;
        // SAFETY: the caller's contract; `src` stays borrowed until the copy has finished.
        let status = unsafe {
            (self.api.hipMemcpyHtoDAsync)(
                ptr as *mut c_void,
                src.as_ptr().cast(),
                bytes,
                NULL_STREAM,
            )
        };
        check(
            self.api,
            status,
            "hipMemcpyHtoDAsync",
            format_args!("copying {bytes} bytes to the device"),
        )
    }

    unsafe fn dtoh_async<T>(&self, dst: &mut [T], ptr: u64) -> Result<()> {
        let bytes = std::mem::size_of_val(dst);
        self.bind()?;
        // SAFETY: the caller's contract; `dst` stays borrowed until the copy has finished.
        let status = unsafe {
            (self.api.hipMemcpyDtoHAsync)(
                dst.as_mut_ptr().cast(),
                ptr as *mut c_void,
                bytes,
                NULL_STREAM,
            )
        };
        check(
            self.api,
            status,
            "hipMemcpyDtoHAsync",
            format_args!("copying {bytes} bytes from the device"),
        )
    }

    unsafe fn dtod_async(&self, dst: u64, src: u64, bytes: usize) -> Result<()> {
        self.bind()?;
        // SAFETY: the caller's contract.
        let status = unsafe {
            (self.api.hipMemcpyDtoDAsync)(
                dst as *mut c_void,
                src as *mut c_void,
                bytes,
                NULL_STREAM,
            )
        };
        check(
            self.api,
            status,
            "hipMemcpyDtoDAsync",
            format_args!("copying {bytes} bytes within the device"),
        )
    }

    fn synchronize(&self) -> Result<()> {
        self.bind()?;
        // SAFETY: the null stream of the current device.
        let status = unsafe { (self.api.hipStreamSynchronize)(NULL_STREAM) };
        check(
            self.api,
            status,
            "hipStreamSynchronize",
            "waiting for the device (an earlier launch or copy may have failed)",
        )
    }

    fn time_ms(&self, f: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
        let start = TimingEvent::new(self)?;
        let end = TimingEvent::new(self)?;
        start.record()?;
        f()?;
        end.record()?;
        let api = self.api;
        // SAFETY: `end` is a live event; hipEventElapsedTime needs both events completed.
        let status = unsafe { (api.hipEventSynchronize)(end.raw) };
        check(
            api,
            status,
            "hipEventSynchronize",
            "timing: waiting for the end event",
        )?;
        let mut ms: c_float = 0.0;
        // SAFETY: both events are live and recorded; writes one float.
        let status = unsafe { (api.hipEventElapsedTime)(&mut ms, start.raw, end.raw) };
        check(
            api,
            status,
            "hipEventElapsedTime",
            "timing: reading the elapsed time",
        )?;
        Ok(f64::from(ms))
    }

    fn load_module(&self, image: &[u64], entry: CString, what: &str) -> Result<Loaded> {
        let api = self.api;
        self.bind()?;
        let mut module = null_mut();
        // SAFETY: `image` holds the image (an AMDGPU ELF code object) and lives through the
        // call; the runtime copies what it loads.
        let status = unsafe { (api.hipModuleLoadData)(&mut module, image.as_ptr().cast()) };
        check(
            api,
            status,
            "hipModuleLoadData",
            format_args!("{what}: loading the image"),
        )?;
        // From here on, dropping `loaded` unloads the module.
        let mut loaded = Loaded {
            api,
            ordinal: self.ordinal,
            module,
            function: null_mut(),
            limits: Limits {
                max_threads: 0,
                max_dynamic_shared: 0,
            },
        };
        // SAFETY: `module` is loaded; `entry` is NUL-terminated; writes one handle.
        let status =
            unsafe { (api.hipModuleGetFunction)(&mut loaded.function, module, entry.as_ptr()) };
        check(
            api,
            status,
            "hipModuleGetFunction",
            format_args!("{what}: finding the entry `{}`", entry.to_string_lossy()),
        )?;
        // The block size limit is the kernel's launch bound (clr `hipFuncGetAttribute`:
        // `workGroupInfo()->size_`). HIP has no opt-in for large dynamic shared memory on module
        // functions (`hipFuncSetAttribute` takes a host stub, not a `hipFunction_t`): a kernel may
        // use all the LDS its workgroup can have. The runtime only checks the dynamic size alone
        // against the device's LDS (clr `ihipLaunchKernel_validate`) and dispatches static +
        // dynamic (clr rocvirtual.cpp: `group_segment_size = ldsUsage + sharedMemBytes`), so the
        // launch checks the function's own limit: the device's LDS per workgroup less the
        // kernel's static LDS (clr: `availableLDSSize_ - localMemSize_`).
        loaded.limits = Limits {
            max_threads: self.function_attribute(
                &loaded,
                func_attr::MAX_THREADS_PER_BLOCK,
                what,
                "its launch bound",
            )?,
            max_dynamic_shared: self.function_attribute(
                &loaded,
                func_attr::MAX_DYNAMIC_SHARED_SIZE_BYTES,
                what,
                "its dynamic LDS limit",
            )?,
        };
        Ok(loaded)
    }

    fn limits(&self, module: &Loaded) -> Limits {
        module.limits
    }

    unsafe fn launch_loaded(
        &self,
        kernel: &'static str,
        object: &'static Object,
        loaded: &Loaded,
        grid: [u32; 3],
        params: &mut [*mut c_void],
    ) -> Result<()> {
        // A kernel without parameters gets a null `kernelParams`, not a dangling empty array.
        let params_ptr = if params.is_empty() {
            null_mut()
        } else {
            params.as_mut_ptr()
        };
        self.bind()?;
        // SAFETY: `loaded` keeps the module (so the function) alive; the arguments are the
        // caller's contract; `extra` is null, as it must be when `kernelParams` is used.
        let status = unsafe {
            (self.api.hipModuleLaunchKernel)(
                loaded.function,
                grid[0],
                grid[1],
                grid[2],
                object.threads,
                1,
                1,
                object.shared_bytes,
                NULL_STREAM,
                params_ptr,
                null_mut(),
            )
        };
        check(
            self.api,
            status,
            "hipModuleLaunchKernel",
            format_args!("{}: launching {grid:?} blocks", what(kernel, object)),
        )
    }
}

/// A HIP event for timing, destroyed on drop.
struct TimingEvent<'a> {
    dev: &'a HipDevice,
    raw: Event,
}

impl<'a> TimingEvent<'a> {
    fn new(dev: &'a HipDevice) -> Result<Self> {
        dev.bind()?;
        let mut raw = null_mut();
        // SAFETY: writes one handle. `hipEventCreate` makes a timing event (flags
        // `hipEventDefault`).
        let status = unsafe { (dev.api.hipEventCreate)(&mut raw) };
        check(
            dev.api,
            status,
            "hipEventCreate",
            "timing: creating an event",
        )?;
        Ok(TimingEvent { dev, raw })
    }

    /// Records the event on the device's stream.
    fn record(&self) -> Result<()> {
        self.dev.bind()?;
        // SAFETY: a live event, the null stream of its device.
        let status = unsafe { (self.dev.api.hipEventRecord)(self.raw, NULL_STREAM) };
        check(
            self.dev.api,
            status,
            "hipEventRecord",
            "timing: recording an event",
        )
    }
}

impl Drop for TimingEvent<'_> {
    fn drop(&mut self) {
        // SAFETY: created by `new`, destroyed only here. Nothing can report an error here.
        let _ = unsafe { (self.dev.api.hipEventDestroy)(self.raw) };
    }
}

/// Device memory owned by a tensor; freed on drop, after the device's queued work.
pub(crate) struct DeviceBuffer {
    api: &'static Api,
    ordinal: c_int,
    ptr: *mut c_void,
}

// SAFETY: a device address, usable from any thread (every use binds the device first).
unsafe impl Send for DeviceBuffer {}
unsafe impl Sync for DeviceBuffer {}

impl DeviceBuffer {
    pub(crate) fn ptr(&self) -> u64 {
        self.ptr as u64
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        // Nothing can report an error here; a failed free leaks the memory. hipFree waits for
        // the device's streams first (module docs).
        // SAFETY: `ordinal` is a device; `ptr` came from hipMalloc and is freed only here.
        unsafe {
            if (self.api.hipSetDevice)(self.ordinal) == HIP_SUCCESS {
                let _ = (self.api.hipFree)(self.ptr);
            }
        }
    }
}

/// A loaded module and its kernel function; unloaded on drop.
pub(crate) struct Loaded {
    api: &'static Api,
    ordinal: c_int,
    module: Module,
    function: Function,
    /// The function's limits, read at load.
    limits: Limits,
}

// SAFETY: module and function handles are plain runtime handles, usable from any thread (every
// use makes their device current first).
unsafe impl Send for Loaded {}
unsafe impl Sync for Loaded {}

impl Drop for Loaded {
    fn drop(&mut self) {
        // Nothing can report an error here; a failed unload leaks the module.
        // SAFETY: `module` was loaded by `HipDevice::load` and is unloaded only here.
        unsafe {
            if (self.api.hipSetDevice)(self.ordinal) == HIP_SUCCESS {
                let _ = (self.api.hipModuleUnload)(self.module);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_names_lose_their_feature_suffixes() {
        assert_eq!(bare_arch("gfx90a:sramecc+:xnack-"), Some("gfx90a"));
        assert_eq!(bare_arch("gfx942:sramecc+:xnack-"), Some("gfx942"));
        assert_eq!(bare_arch("gfx1100"), Some("gfx1100"));
        assert_eq!(bare_arch("gfx1151"), Some("gfx1151"));
        assert_eq!(bare_arch("gfx1201:xnack-"), Some("gfx1201"));
        assert_eq!(bare_arch(" gfx1030 "), Some("gfx1030"));
        assert_eq!(bare_arch(""), None);
        assert_eq!(bare_arch("gfx"), None);
        assert_eq!(bare_arch(":gfx90a"), None);
        assert_eq!(bare_arch("sm_90"), None);
        assert_eq!(bare_arch("gfx9-generic"), None);
    }

    /// A properties buffer as the runtime would fill it.
    fn props_bytes(warp: i32, units: i32, gcn: &[u8]) -> Vec<u8> {
        let mut b = vec![0u8; props::BUFFER_BYTES];
        b[props::NAME..][..8].copy_from_slice(b"Radeon X");
        b[props::WARP_SIZE..][..4].copy_from_slice(&warp.to_ne_bytes());
        b[props::MULTIPROCESSOR_COUNT..][..4].copy_from_slice(&units.to_ne_bytes());
        b[props::GCN_ARCH_NAME..][..gcn.len()].copy_from_slice(gcn);
        b
    }

    #[test]
    fn arch_is_read_from_checked_properties() {
        let b = props_bytes(64, 104, b"gfx90a:sramecc+:xnack-");
        assert_eq!(arch_from_props(&b, 64, 104).unwrap(), "gfx90a");
        let b = props_bytes(32, 48, b"gfx1100");
        assert_eq!(arch_from_props(&b, 32, 48).unwrap(), "gfx1100");
        assert_eq!(str_at(&b, props::NAME, 256).unwrap(), "Radeon X");
        // A layout that disagrees with the attributes is refused.
        let e = arch_from_props(&b, 64, 48).unwrap_err();
        assert!(e.contains("does not recognise"), "{e}");
        let e = arch_from_props(&b, 32, 96).unwrap_err();
        assert!(e.contains("does not recognise"), "{e}");
        // So is an implausible warp size, even where both agree.
        let b = props_bytes(0, 0, b"gfx1100");
        assert!(arch_from_props(&b, 0, 0).is_err());
        // An unterminated or foreign arch name is refused.
        let b = props_bytes(64, 1, &[b'g'; props::GCN_ARCH_NAME_LEN]);
        let e = arch_from_props(&b, 64, 1).unwrap_err();
        assert!(e.contains("NUL"), "{e}");
        let b = props_bytes(64, 1, b"sm_90");
        let e = arch_from_props(&b, 64, 1).unwrap_err();
        assert!(e.contains("`sm_90`"), "{e}");
    }

    #[test]
    fn library_candidates_in_order() {
        let names = |c: Vec<PathBuf>| -> Vec<String> {
            c.iter().map(|p| p.display().to_string()).collect()
        };
        assert_eq!(
            names(candidates(None)),
            [
                "libamdhip64.so.7",
                "libamdhip64.so.6",
                "libamdhip64.so",
                "/opt/rocm/lib/libamdhip64.so.7",
                "/opt/rocm/lib/libamdhip64.so.6",
                "/opt/rocm/lib/libamdhip64.so",
            ]
        );
        let c = names(candidates(Some(OsStr::new("/opt/rocm-7.1.0"))));
        assert_eq!(c.len(), 9);
        assert_eq!(c[3], "/opt/rocm-7.1.0/lib/libamdhip64.so.7");
        assert_eq!(c[8], "/opt/rocm/lib/libamdhip64.so");
        // ROCM_PATH=/opt/rocm is not searched twice; an empty ROCM_PATH is ignored.
        assert_eq!(candidates(Some(OsStr::new("/opt/rocm"))).len(), 6);
        assert_eq!(candidates(Some(OsStr::new(""))).len(), 6);
    }

    #[test]
    fn a_missing_library_is_explained() {
        let e = load(&[
            PathBuf::from("/nonexistent/libamdhip64.so.7"),
            PathBuf::from("/nonexistent/libamdhip64.so"),
        ])
        .err()
        .unwrap();
        assert!(matches!(&e, LoadError::NotFound { tried, .. } if tried.len() == 2));
        let e = e.to_string();
        assert!(e.contains("libamdhip64 not found"), "{e}");
        assert!(e.contains("/nonexistent/libamdhip64.so.7"), "{e}");
        assert!(e.contains("LD_LIBRARY_PATH"), "{e}");
        // The loader's own words are kept.
        assert!(e.contains("No such file"), "{e}");
    }

    #[test]
    fn a_library_without_the_api_is_explained() {
        // libm loads everywhere glibc does and has none of HIP's functions.
        let e = load(&[PathBuf::from("libm.so.6")]).err().unwrap();
        assert!(
            matches!(&e, LoadError::MissingSymbol { symbol, .. } if symbol == "hipInit"),
            "{e}"
        );
        let e = e.to_string();
        assert!(e.contains("libm.so.6 lacks `hipInit`"), "{e}");
        assert!(e.contains("ROCm 6.0 or newer"), "{e}");
    }

    #[test]
    fn no_runtime_here_is_no_device() {
        // This machine has no ROCm (as the CI machines): the probe must say so, not panic.
        match probe() {
            Err(e) => {
                let msg = e.to_string();
                assert!(matches!(e, Error::NoDevice(_)), "{msg}");
                assert!(msg.contains("HIP"), "{msg}");
                assert_eq!(probe().unwrap_err(), e, "the answer is remembered");
            }
            Ok(()) => {
                // A HIP runtime is installed: opening a device that cannot exist still fails
                // cleanly.
                let e = open(1 << 20).err().unwrap();
                assert!(matches!(e, Error::NoDevice(_)), "{e}");
            }
        }
    }
}
