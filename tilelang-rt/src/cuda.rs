//! The CUDA backend: cudarc's driver API, with libcuda loaded at run time.
//!
//! This is the only module that calls cudarc. cudarc panics on its first call when libcuda is
//! missing (and on any call whose symbol the library lacks), so [`probe`] checks the library and
//! its version first and every entry point goes through it.
//!
//! Ordering: each device has one stream, the context's legacy default (null) stream, and every
//! copy, fill, launch and free of the device is queued on it, so they run in program order
//! without events. That is why cudarc's per-allocation event tracking is switched off.

use crate::gpu::{KernelArg, Object};
use crate::gpu_common::{kernel_params, prepare_image, what, ModuleCache};
use crate::{Error, Result};
use cudarc::driver::{result, sys, CudaContext, CudaSlice, CudaStream, DevicePtr, DriverError};
use std::ffi::c_void;
use std::fmt;
use std::sync::{Arc, OnceLock};

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

fn driver_error(what: impl fmt::Display, e: DriverError) -> Error {
    Error::Driver(format!("{what}: {}", describe(e)))
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
}

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
        .map_err(|e| driver_error("reading the compute capability", e))?;
    let name = ctx
        .name()
        .map_err(|e| driver_error("reading the device name", e))?;
    let stream = ctx.default_stream();
    let dev = CudaDevice {
        ctx,
        stream,
        modules: ModuleCache::new(),
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
            .map_err(|e| driver_error("making the CUDA context current", e))
    }

    /// New device memory for `bytes` bytes, each set to `fill` (left unset for `None`, for the
    /// caller to overwrite before anything reads it). Zero bytes still allocate one, so that
    /// every tensor has a distinct address.
    pub(crate) fn alloc(&self, bytes: usize, fill: Option<u8>) -> Result<DeviceBuffer> {
        let n = bytes.max(1);
        // SAFETY: u8 has no invalid values; the caller sets unset memory before it is read.
        let slice = unsafe { self.stream.alloc::<u8>(n) }
            .map_err(|e| driver_error(format_args!("allocating {bytes} bytes"), e))?;
        let buf = DeviceBuffer(slice);
        if let Some(byte) = fill {
            // SAFETY: `buf` is a live allocation of `n` bytes on this device.
            unsafe { self.memset(buf.ptr(), byte, n) }?;
        }
        Ok(buf)
    }

    /// Sets `bytes` bytes at `ptr` to `byte`, queued on the stream.
    ///
    /// # Safety
    /// `ptr..ptr + bytes` is memory of this device that stays allocated until the fill runs.
    pub(crate) unsafe fn memset(&self, ptr: u64, byte: u8, bytes: usize) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        self.bind()?;
        // SAFETY: the caller's contract.
        unsafe { result::memset_d8_async(ptr, byte, bytes, self.stream.cu_stream()) }
            .map_err(|e| driver_error(format_args!("filling {bytes} bytes of device memory"), e))
    }

    /// Copies `src` to device memory at `ptr`, after all queued work, and waits for the copy.
    ///
    /// # Safety
    /// `ptr` is memory of this device valid for `size_of_val(src)` bytes.
    pub(crate) unsafe fn htod<T>(&self, ptr: u64, src: &[T]) -> Result<()> {
        if src.is_empty() {
            return Ok(());
        }
        self.bind()?;
        // SAFETY: the caller's contract; `src` stays borrowed until the copy has finished.
        unsafe { result::memcpy_htod_async(ptr, src, self.stream.cu_stream()) }.map_err(|e| {
            driver_error(
                format_args!("copying {} bytes to the device", std::mem::size_of_val(src)),
                e,
            )
        })?;
        // The copy may read `src` asynchronously (it does when `src` is pinned): wait for it.
        self.synchronize()
    }

    /// Copies device memory at `ptr` into `dst`, after all queued work, and waits for the copy.
    ///
    /// # Safety
    /// `ptr` is memory of this device valid for `size_of_val(dst)` bytes, and every bit pattern
    /// is a valid `T` (true of every [`crate::Element`]).
    pub(crate) unsafe fn dtoh<T>(&self, dst: &mut [T], ptr: u64) -> Result<()> {
        if dst.is_empty() {
            return Ok(());
        }
        let bytes = std::mem::size_of_val(dst);
        self.bind()?;
        // SAFETY: the caller's contract; `dst` stays borrowed until the copy has finished.
        unsafe { result::memcpy_dtoh_async(dst, ptr, self.stream.cu_stream()) }
            .map_err(|e| driver_error(format_args!("copying {bytes} bytes from the device"), e))?;
        self.synchronize()
    }

    /// Waits for all work queued on the stream.
    pub(crate) fn synchronize(&self) -> Result<()> {
        self.stream.synchronize().map_err(|e| {
            driver_error(
                "waiting for the device (an earlier launch or copy may have failed)",
                e,
            )
        })
    }

    /// Device milliseconds between events recorded on the stream before and after `f`.
    pub(crate) fn time_ms(&self, f: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
        let timing = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
        let event = |what| move |e| driver_error(format_args!("timing: {what}"), e);
        let start = self
            .ctx
            .new_event(timing)
            .map_err(event("creating an event"))?;
        let end = self
            .ctx
            .new_event(timing)
            .map_err(event("creating an event"))?;
        start
            .record(&self.stream)
            .map_err(event("recording the start"))?;
        f()?;
        end.record(&self.stream)
            .map_err(event("recording the end"))?;
        // Waits for both events.
        let ms = start
            .elapsed_ms(&end)
            .map_err(event("reading the elapsed time"))?;
        Ok(f64::from(ms))
    }

    /// Queues `object` with `grid` blocks and `args`.
    ///
    /// # Safety
    /// The contract of [`crate::Device::launch_gpu`]; `object.arch` is this device's arch.
    pub(crate) unsafe fn launch(
        &self,
        kernel: &'static str,
        object: &'static Object,
        grid: [u32; 3],
        args: &[KernelArg],
    ) -> Result<()> {
        let loaded = self
            .modules
            .get_or_load(object, || self.load(kernel, object))?;
        // Pointers into `args`, which outlives the call; cuLaunchKernel copies the values.
        let mut params = kernel_params(args);
        self.bind()?;
        // SAFETY: `loaded` keeps the module (so the function) alive; the arguments are the
        // caller's contract.
        unsafe {
            result::launch_kernel(
                loaded.function,
                (grid[0], grid[1], grid[2]),
                (object.threads, 1, 1),
                object.shared_bytes,
                self.stream.cu_stream(),
                &mut params,
            )
        }
        .map_err(|e| {
            driver_error(
                format_args!("{}: launching {grid:?} blocks", what(kernel, object)),
                e,
            )
        })
    }

    fn load(&self, kernel: &'static str, object: &Object) -> Result<Loaded> {
        let what = what(kernel, object);
        let (aligned, entry) = prepare_image(kernel, object)?;
        self.bind()?;
        // SAFETY: `aligned` holds the image and a terminating zero byte, and lives through the
        // call; the driver copies what it loads.
        let module = unsafe { result::module::load_data(aligned.as_ptr() as *const c_void) }
            .map_err(|e| driver_error(format_args!("{what}: loading the image"), e))?;
        // From here on, dropping `loaded` unloads the module.
        let mut loaded = Loaded {
            ctx: self.ctx.clone(),
            module,
            function: std::ptr::null_mut(),
        };
        // SAFETY: `module` is loaded and stays so while `loaded` lives.
        loaded.function = unsafe { result::module::get_function(module, entry) }.map_err(|e| {
            driver_error(
                format_args!("{what}: finding the entry `{}`", object.entry),
                e,
            )
        })?;
        if object.shared_bytes > 48 * 1024 {
            let bytes = i32::try_from(object.shared_bytes).unwrap_or(i32::MAX);
            // SAFETY: `loaded.function` is a function of the loaded module.
            unsafe {
                result::function::set_function_attribute(
                    loaded.function,
                    sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    bytes,
                )
            }
            .map_err(|e| {
                driver_error(
                    format_args!("{what}: allowing {bytes} bytes of shared memory"),
                    e,
                )
            })?;
        }
        Ok(loaded)
    }
}

/// A loaded module and its kernel function; unloaded on drop.
struct Loaded {
    ctx: Arc<CudaContext>,
    module: sys::CUmodule,
    function: sys::CUfunction,
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
