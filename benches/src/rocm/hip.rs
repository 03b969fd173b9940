//! The HIP runtime's functions this module calls, from the runtime of the device, and the
//! device each call binds.

use std::ffi::{c_int, c_void};
use std::ptr::null_mut;
use std::sync::OnceLock;
use tilelang::__private::dylib_api;
use tilelang::{Backend, Device, Element, Tensor};

/// `hipSuccess = 0` (HIP `include/hip/hip_runtime_api.h`, `enum hipError_t`).
const HIP_SUCCESS: c_int = 0;

/// `hipStream_t` (`struct ihipStream_t*`).
pub(super) type HipStream = *mut c_void;

dylib_api! {
    /// The HIP runtime functions this module needs (`include/hip/hip_runtime_api.h`), resolved
    /// from the runtime `tilelang-rt` opened ([`Device::hip_library`]).
    pub(super) struct HipApi {
        /// `hipError_t hipSetDevice(int deviceId)`
        fn hipSetDevice(device: c_int) -> c_int;
        /// `hipError_t hipMemcpyDtoDAsync(hipDeviceptr_t dst, hipDeviceptr_t src,
        /// size_t sizeBytes, hipStream_t stream)`; `hipDeviceptr_t` is `void*`.
        fn hipMemcpyDtoDAsync(dst: *mut c_void, src: *mut c_void, bytes: usize, stream: HipStream) -> c_int;
    }
}

/// The HIP functions of this module, resolved once from the runtime the HIP backend opened for
/// `dev`: no second `libamdhip64` is opened, so this module, our runtime and (through the
/// loader, for the same soname) rocBLAS and MIOpen share one HIP runtime.
pub(super) fn hip_api(dev: &Device, what: &str) -> Result<&'static HipApi, String> {
    static API: OnceLock<Result<HipApi, String>> = OnceLock::new();
    // The runtime opens its library once per process, so every HIP device has the same one.
    let lib = dev.hip_library().ok_or_else(|| not_hip(dev, what))?;
    API.get_or_init(|| {
        // SAFETY: `lib` is the HIP runtime, whose functions have the signatures of `HipApi`.
        unsafe { HipApi::resolve(lib) }.map_err(|e| e.to_string())
    })
    .as_ref()
    .map_err(Clone::clone)
}

fn not_hip(dev: &Device, what: &str) -> String {
    format!(
        "{what} needs an AMD GPU opened with Device::hip; {} is a {:?} device",
        dev.name(),
        dev.backend()
    )
}

/// The HIP ordinal of `dev` ([`Device::ordinal`]), which must be a HIP device.
pub(super) fn hip_ordinal(dev: &Device, what: &str) -> Result<c_int, String> {
    let ordinal = match (dev.backend(), dev.ordinal()) {
        (Backend::Hip, Some(ordinal)) => ordinal,
        _ => return Err(not_hip(dev, what)),
    };
    c_int::try_from(ordinal).map_err(|_| format!("{what}: HIP ordinal {ordinal} exceeds an int"))
}

/// Makes `ordinal` the calling thread's current HIP device.
pub(super) fn bind(hip: &HipApi, ordinal: c_int) -> Result<(), String> {
    // SAFETY: `ordinal` is the ordinal of an open device (see `hip_ordinal`).
    let status = unsafe { (hip.hipSetDevice)(ordinal) };
    if status == HIP_SUCCESS {
        Ok(())
    } else {
        Err(format!(
            "hipSetDevice({ordinal}) failed with hipError_t {status} ({})",
            hip.library().path().display()
        ))
    }
}

pub(super) fn check_device<T: Element>(
    dev: &Device,
    t: &Tensor<T>,
    name: &str,
) -> Result<(), String> {
    if t.device() == dev {
        Ok(())
    } else {
        Err(format!(
            "{name} lives on {}, not on {}",
            t.device().name(),
            dev.name()
        ))
    }
}

/// `dst = src` with the HIP runtime's device-to-device copy (`hipMemcpyDtoDAsync`) on the null
/// stream, where our runtime queues its work: the bandwidth ceiling on AMD.
pub fn copy_d2d<T: Element>(
    dev: &Device,
    src: &Tensor<T>,
    dst: &mut Tensor<T>,
) -> Result<(), String> {
    let ordinal = hip_ordinal(dev, "hipMemcpyDtoDAsync")?;
    check_device(dev, src, "the source")?;
    check_device(dev, dst, "the destination")?;
    if src.len() != dst.len() {
        return Err(format!(
            "copy_d2d: lengths {} and {} differ",
            src.len(),
            dst.len()
        ));
    }
    let hip = hip_api(dev, "hipMemcpyDtoDAsync")?;
    bind(hip, ordinal)?;
    let bytes = std::mem::size_of_val(&T::default()) * src.len();
    // SAFETY: both are live allocations of this (current) device of `bytes` bytes; `dst` is
    // borrowed mutably, so the safe API gives no overlap; the null stream orders the copy
    // after our earlier work and before our later work.
    let status = unsafe {
        (hip.hipMemcpyDtoDAsync)(
            dst.device_ptr() as *mut c_void,
            src.device_ptr() as *mut c_void,
            bytes,
            null_mut(),
        )
    };
    if status == HIP_SUCCESS {
        Ok(())
    } else {
        Err(format!(
            "hipMemcpyDtoDAsync({bytes} bytes) failed with hipError_t {status} ({})",
            hip.library().path().display()
        ))
    }
}

pub(super) fn to_i32(x: usize, what: &str) -> Result<i32, String> {
    i32::try_from(x).map_err(|_| format!("{what} = {x} exceeds the libraries' int range"))
}
