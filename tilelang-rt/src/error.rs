//! The runtime's one error type, and the backends it names. Every launch-time check returns one
//! of these; nothing panics.

use crate::element::Dtype;
use std::fmt;

/// Errors from devices, tensors and kernel launches.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A tensor has the wrong number of dimensions for the kernel parameter.
    RankMismatch {
        kernel: &'static str,
        tensor: &'static str,
        expected: usize,
        found: usize,
    },
    /// A dimension disagrees with the value its shape symbol (or const generic) already has.
    ShapeMismatch {
        kernel: &'static str,
        tensor: &'static str,
        dim: usize,
        symbol: &'static str,
        expected: usize,
        found: usize,
        /// Where the expected value came from: another tensor's dimension, or the config.
        bound_by: String,
    },
    /// A tensor's element type is not the one the kernel parameter declares.
    DtypeMismatch {
        kernel: &'static str,
        tensor: &'static str,
        expected: Dtype,
        found: Dtype,
    },
    /// A type-erased launch got the wrong kind or number of arguments.
    BadArgument {
        kernel: &'static str,
        arg: &'static str,
        expected: String,
        found: String,
    },
    /// An output tensor shares memory with another argument.
    Aliasing {
        kernel: &'static str,
        output: &'static str,
        other: &'static str,
    },
    /// A `requires` condition of the kernel is false for these shapes and this config.
    Requirement {
        kernel: &'static str,
        config: &'static str,
        condition: &'static str,
        values: String,
    },
    /// The config name is not one of the kernel's configs.
    UnknownConfig {
        kernel: &'static str,
        config: String,
        available: Vec<&'static str>,
    },
    /// A view or reshape that does not fit the tensor: another number of elements, rows past
    /// the end, a tensor without dimensions to slice.
    View(String),
    /// `launch_auto`: no config of the kernel holds for the arguments; each config with the
    /// reason it does not (its failed requirement, shape or per-block limit), in the order tried.
    NoConfigFits {
        kernel: &'static str,
        reasons: Vec<(&'static str, String)>,
    },
    /// A tensor lives on another device than the one the kernel is launched on.
    DeviceMismatch {
        kernel: &'static str,
        tensor: &'static str,
    },
    /// Host data and shape disagree (`Device::upload`, `Tensor::copy_from_slice`).
    LengthMismatch { expected: usize, found: usize },
    /// A tensor of this shape cannot exist: its element count overflows `usize`, or its size
    /// in bytes exceeds `isize::MAX` (the most any allocation can hold). Checked before anything
    /// is allocated, on every backend.
    ShapeOverflow { shape: Vec<usize>, dtype: Dtype },
    /// The backend could not allocate `bytes` bytes: host memory for the CPU backend, device
    /// memory for a GPU (the driver's out-of-memory status).
    OutOfMemory { backend: Backend, bytes: usize },
    /// An element access outside a tensor or buffer while running on the CPU backend. This is a
    /// bug in the kernel (on a GPU it would read or write out of bounds).
    OutOfBounds {
        kernel: &'static str,
        buffer: &'static str,
        index: Vec<i64>,
        shape: Vec<i64>,
    },
    /// Integer division or remainder by zero inside a kernel on the CPU backend.
    DivisionByZero { kernel: &'static str },
    /// The launch geometry is out of range (negative or too many blocks).
    BadGrid {
        kernel: &'static str,
        grid: Vec<i64>,
    },
    /// The config exists, but the build left it out for this arch: it is over that target's
    /// limits (shared memory, registers), and the build said so in a warning.
    ConfigNotCompiled {
        kernel: &'static str,
        config: String,
        /// The arch whose objects were chosen for the device.
        arch: String,
        /// The configs compiled for that arch, in order.
        compiled: Vec<&'static str>,
    },
    /// No device of the requested kind can be opened: its driver or runtime library is missing
    /// or too old, it fails to initialise, or there is no device of that ordinal. The message
    /// says which, and the fix.
    NoDevice(String),
    /// An operation that needs a GPU was asked of a device that is not one (the CPU).
    NotAGpu {
        /// What was asked, e.g. `gemm: Device::launch_gpu`.
        what: String,
    },
    /// The kernel has no GPU object for the device's arch: the build did not compile it.
    ArchNotCompiled {
        kernel: &'static str,
        /// The device's arch, e.g. `sm_90`.
        arch: String,
        /// The archs the build compiled objects for, in order; empty when it compiled none.
        compiled: Vec<&'static str>,
    },
    /// A call into the GPU driver (CUDA) or runtime (HIP) failed. Errors of a launch may only
    /// show at the next synchronizing call (`Device::synchronize`, `Tensor::to_vec`), where `op`
    /// is the synchronization. [`Error::is_out_of_memory`] tells the driver's out-of-memory
    /// status apart; a failed allocation is [`Error::OutOfMemory`] instead.
    Driver {
        backend: GpuBackend,
        /// The driver call that failed, as named in the driver's API: `cuMemcpyHtoDAsync`,
        /// `hipModuleLaunchKernel`, ...
        op: &'static str,
        /// What the runtime was doing, naming the kernel, config and arch for loads and launches.
        context: String,
        /// The driver's status: a `CUresult` or `hipError_t` value.
        code: i32,
        /// The driver's name for the status: `CUDA_ERROR_ILLEGAL_ADDRESS`, `hipErrorInvalidValue`
        /// (`"CUresult 999"` style when the driver has no name for it).
        name: String,
        /// The driver's description of the status (`"an illegal memory access was
        /// encountered"`), empty when it gives none.
        description: String,
    },
    /// A kernel's object asks for more of a per-block resource than the device or the compiled
    /// kernel allows; checked when the object is loaded, before anything is launched.
    ResourceLimit {
        kernel: &'static str,
        config: &'static str,
        what: Resource,
        /// What the object asks for.
        requested: u64,
        /// The most the device and kernel allow.
        max: u64,
    },
    /// A kernel's GPU object cannot be handed to the driver (an empty image, an entry name with
    /// a NUL byte): a bug in the build that embedded it.
    BadObject {
        /// `gemm (config big, sm_90)`.
        kernel: String,
        reason: String,
    },
    /// The tensor lives in device memory, which the host cannot read or write directly.
    NotOnHost {
        /// The device's description.
        device: String,
    },
    /// A graph cannot be recorded or replayed as asked ([`crate::Device::record_graph`]): a
    /// misuse of the recording API (a driver failure while recording is [`Error::Driver`]).
    Graph(String),
    /// A library used beside the runtime on a device's tensors failed (the benches' cuBLAS,
    /// rocBLAS and MIOpen baselines). The runtime itself never returns this.
    External(String),
}

/// Which kind of machine runs kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Backend {
    /// Blocks run one after another on the host; the reference semantics.
    Cpu,
    /// An NVIDIA GPU, through the CUDA driver API.
    Cuda,
    /// An AMD GPU, through the HIP runtime (`libamdhip64`).
    Hip,
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Cpu => "CPU",
            Backend::Cuda => "CUDA",
            Backend::Hip => "HIP",
        })
    }
}

/// The GPU API an [`Error::Driver`] comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum GpuBackend {
    /// The CUDA driver API (libcuda).
    Cuda,
    /// The HIP runtime (libamdhip64).
    Hip,
}

impl GpuBackend {
    /// The status code of "out of memory": `CUDA_ERROR_OUT_OF_MEMORY` (cuda.h) and
    /// `hipErrorOutOfMemory` (hip_runtime_api.h) are both 2.
    pub const fn out_of_memory_code(self) -> i32 {
        match self {
            GpuBackend::Cuda | GpuBackend::Hip => 2,
        }
    }
}

impl From<GpuBackend> for Backend {
    fn from(b: GpuBackend) -> Backend {
        match b {
            GpuBackend::Cuda => Backend::Cuda,
            GpuBackend::Hip => Backend::Hip,
        }
    }
}

impl fmt::Display for GpuBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Backend::from(*self).fmt(f)
    }
}

/// A per-block resource of a launch ([`Error::ResourceLimit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Resource {
    /// Threads per block, against the kernel's launch bound (or the device's maximum).
    ThreadsPerBlock,
    /// Bytes of dynamic shared memory (LDS on AMD) per block, against what the device offers a
    /// block beside the kernel's static shared memory.
    DynamicSharedMemory,
}

impl Error {
    /// Whether this is a lack of memory: [`Error::OutOfMemory`], or a driver call that failed
    /// with the driver's out-of-memory status.
    pub fn is_out_of_memory(&self) -> bool {
        match self {
            Error::OutOfMemory { .. } => true,
            Error::Driver { backend, code, .. } => *code == backend.out_of_memory_code(),
            _ => false,
        }
    }

    /// Whether the error is about the config launched, not the arguments as such: a failed
    /// `requires`, a tensor dimension the config's const generics fix, a per-block limit the
    /// config's object exceeds, a config the build left out for this arch. Another config may
    /// hold (`launch_auto` tries the next).
    pub fn is_config_specific(&self) -> bool {
        match self {
            Error::Requirement { .. }
            | Error::ResourceLimit { .. }
            | Error::ConfigNotCompiled { .. } => true,
            Error::ShapeMismatch { bound_by, .. } => bound_by == BOUND_BY_CONFIG,
            _ => false,
        }
    }
}

/// [`Error::ShapeMismatch`]'s `bound_by` when a const generic of the config fixed the dimension.
pub(crate) const BOUND_BY_CONFIG: &str = "the config";

/// The name among `names` nearest to `name` (edit distance, at most a third of its length,
/// at least 1), for "did you mean".
pub(crate) fn nearest<'a>(name: &str, names: &[&'a str]) -> Option<&'a str> {
    fn distance(a: &str, b: &str) -> usize {
        let b: Vec<char> = b.chars().collect();
        let mut row: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut prev = row[0];
            row[0] = i + 1;
            for (j, cb) in b.iter().enumerate() {
                let cur = row[j + 1];
                row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
                prev = cur;
            }
        }
        row[b.len()]
    }
    let limit = (name.chars().count() / 3).max(1);
    names
        .iter()
        .map(|n| (distance(name, n), *n))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n)
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::RankMismatch { kernel, tensor, expected, found } => {
                write!(f, "{kernel}: tensor `{tensor}` has {found} dimension{}, the kernel expects {expected}", if *found == 1 { "" } else { "s" })
            }
            Error::ShapeMismatch { kernel, tensor, dim, symbol, expected, found, bound_by } => write!(
                f,
                "{kernel}: dimension {dim} of `{tensor}` is {found}, but `{symbol}` is {expected} (from {bound_by})"
            ),
            Error::DtypeMismatch { kernel, tensor, expected, found } => {
                write!(f, "{kernel}: tensor `{tensor}` holds {found}, the kernel expects {expected}")
            }
            Error::BadArgument { kernel, arg, expected, found } => {
                write!(f, "{kernel}: argument `{arg}` should be {expected}, found {found}")
            }
            Error::Aliasing { kernel, output, other } => {
                write!(f, "{kernel}: output `{output}` overlaps `{other}` in memory; pass distinct tensors")
            }
            Error::Requirement { kernel, config, condition, values } => {
                write!(f, "{kernel}: config `{config}` requires `{condition}`, which is false for {values}")
            }
            Error::UnknownConfig { kernel, config, available } => {
                write!(f, "{kernel}: no config named `{config}`")?;
                if let Some(n) = nearest(config, available) {
                    write!(f, "; did you mean `{n}`?")?;
                }
                write!(f, " The configs are {}", available.join(", "))
            }
            Error::ConfigNotCompiled { kernel, config, arch, compiled } => write!(
                f,
                "{kernel}: config `{config}` was not compiled for `{arch}`: it is over that target's limits (the build's warning says which); compiled for it: {}. Launch one of those, or the default launcher, which picks among them",
                compiled.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", ")
            ),
            Error::View(m) => write!(f, "{m}"),
            Error::NoConfigFits { kernel, reasons } => {
                write!(f, "{kernel}: no config holds for these arguments")?;
                for (config, why) in reasons {
                    write!(f, "; `{config}`: {why}")?;
                }
                Ok(())
            }
            Error::DeviceMismatch { kernel, tensor } => {
                write!(f, "{kernel}: tensor `{tensor}` lives on another device than the launch")
            }
            Error::LengthMismatch { expected, found } => {
                write!(f, "host data has {found} element{}, the shape needs {expected}", if *found == 1 { "" } else { "s" })
            }
            Error::ShapeOverflow { shape, dtype } => {
                let count = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
                match count {
                    None => write!(
                        f,
                        "the shape {shape:?} has more elements than a usize can count; no tensor can have it"
                    ),
                    Some(n) => write!(
                        f,
                        "a {dtype} tensor of shape {shape:?} would take {n} x {} bytes, more than \
                         the largest possible allocation (isize::MAX bytes)",
                        dtype.size_bytes()
                    ),
                }
            }
            Error::OutOfMemory { backend, bytes } => {
                let memory = match backend {
                    Backend::Cpu => "host",
                    _ => "device",
                };
                write!(f, "out of memory: the {backend} backend could not allocate {bytes} bytes of {memory} memory")
            }
            Error::OutOfBounds { kernel, buffer, index, shape } => write!(
                f,
                "{kernel}: access to `{buffer}` at {index:?} is outside its shape {shape:?} (a bug in the kernel)"
            ),
            Error::DivisionByZero { kernel } => write!(f, "{kernel}: integer division by zero in the kernel"),
            Error::BadGrid { kernel, grid } => write!(f, "{kernel}: the grid {grid:?} is out of range"),
            Error::NoDevice(why) => write!(f, "no device: {why}"),
            Error::NotAGpu { what } => {
                write!(f, "{what} needs a GPU device, and this device is the CPU")
            }
            Error::ArchNotCompiled { kernel, arch, compiled } => {
                write!(f, "{kernel}: no GPU object was compiled for this device's arch `{arch}` ")?;
                if compiled.is_empty() {
                    write!(f, "(the build compiled no GPU objects)")?;
                } else {
                    write!(f, "(compiled: {})", compiled.join(", "))?;
                }
                if arch.starts_with("gfx") {
                    write!(
                        f,
                        "; rebuild with `{arch}` in TILELANG_TARGETS and an AMD device compiler installed (ROCm's hipcc, or LLVM clang++ 19 or newer)"
                    )
                } else {
                    write!(
                        f,
                        "; rebuild with `{arch}` in TILELANG_TARGETS and nvcc installed ($NVCC, $CUDA_HOME/bin or PATH)"
                    )?;
                    // Cubins of an earlier minor of the same major run here too (gpu.rs).
                    match crate::arch::sm_version(arch) {
                        Some((major, minor)) if minor > 0 && !crate::arch::is_tegra(arch) => write!(
                            f,
                            "; where tilelang has no `{arch}` target, a target sm_{major}y with y < {minor} also runs on this GPU"
                        ),
                        _ => Ok(()),
                    }
                }
            }
            Error::Driver { backend, op, context, code, name, description } => {
                write!(f, "{backend} error: {context}: {op} failed with {name} ({code}")?;
                if !description.is_empty() {
                    write!(f, ": {description}")?;
                }
                write!(f, ")")
            }
            Error::ResourceLimit { kernel, config, what, requested, max } => {
                let what = match what {
                    Resource::ThreadsPerBlock => "threads per block",
                    Resource::DynamicSharedMemory => "bytes of dynamic shared memory per block",
                };
                write!(f, "{kernel} (config {config}): the object needs {requested} {what}, and the device allows this kernel {max}")
            }
            Error::BadObject { kernel, reason } => {
                write!(f, "{kernel}: the GPU object is malformed: {reason} (a bug in the build that embedded it)")
            }
            Error::NotOnHost { device } => write!(
                f,
                "the tensor lives in the memory of {device}, not on the host; use `to_vec` or `copy_from_slice`"
            ),
            Error::Graph(why) => write!(f, "graph: {why}"),
            Error::External(why) => f.write_str(why),
        }
    }
}

/// No variant wraps another error value: the driver's status is in [`Error::Driver`]'s fields
/// (matchable, and kept `Clone` and `Eq`), so `source()` is `None`.
impl std::error::Error for Error {}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    fn driver(backend: GpuBackend, code: i32, name: &str, description: &str) -> Error {
        Error::Driver {
            backend,
            op: "cuMemcpyHtoDAsync",
            context: "copying 8 bytes to the device".into(),
            code,
            name: name.into(),
            description: description.into(),
        }
    }

    #[test]
    fn driver_errors_name_the_call_and_the_status() {
        let e = driver(
            GpuBackend::Cuda,
            700,
            "CUDA_ERROR_ILLEGAL_ADDRESS",
            "an illegal memory access was encountered",
        );
        assert_eq!(
            e.to_string(),
            "CUDA error: copying 8 bytes to the device: cuMemcpyHtoDAsync failed with \
             CUDA_ERROR_ILLEGAL_ADDRESS (700: an illegal memory access was encountered)"
        );
        let e = driver(GpuBackend::Hip, 1, "hipErrorInvalidValue", "");
        assert!(
            e.to_string()
                .ends_with("failed with hipErrorInvalidValue (1)"),
            "{e}"
        );
        assert!(e.to_string().starts_with("HIP error: "), "{e}");
    }

    #[test]
    fn out_of_memory_is_recognised_on_every_backend() {
        assert!(driver(
            GpuBackend::Cuda,
            2,
            "CUDA_ERROR_OUT_OF_MEMORY",
            "out of memory"
        )
        .is_out_of_memory());
        assert!(
            driver(GpuBackend::Hip, 2, "hipErrorOutOfMemory", "out of memory").is_out_of_memory()
        );
        assert!(
            !driver(GpuBackend::Cuda, 700, "CUDA_ERROR_ILLEGAL_ADDRESS", "").is_out_of_memory()
        );
        assert!(!driver(GpuBackend::Hip, 1, "hipErrorInvalidValue", "").is_out_of_memory());
        let oom = Error::OutOfMemory {
            backend: Backend::Hip,
            bytes: 1 << 40,
        };
        assert!(oom.is_out_of_memory());
        assert_eq!(
            oom.to_string(),
            "out of memory: the HIP backend could not allocate 1099511627776 bytes of device memory"
        );
        assert!(!Error::NoDevice("x".into()).is_out_of_memory());
        assert_eq!(Backend::from(GpuBackend::Cuda), Backend::Cuda);
    }

    #[test]
    fn resource_limits_say_what_and_how_much() {
        let e = Error::ResourceLimit {
            kernel: "gemm",
            config: "big",
            what: Resource::DynamicSharedMemory,
            requested: 1 << 20,
            max: 65536,
        };
        assert_eq!(
            e.to_string(),
            "gemm (config big): the object needs 1048576 bytes of dynamic shared memory per \
             block, and the device allows this kernel 65536"
        );
        let e = Error::ResourceLimit {
            what: Resource::ThreadsPerBlock,
            requested: 2048,
            max: 1024,
            kernel: "k",
            config: "c",
        };
        assert!(e.to_string().contains("2048 threads per block"), "{e}");
        assert!(e.to_string().contains("allows this kernel 1024"), "{e}");
        assert!(std::error::Error::source(&e).is_none());
    }
}
