//! The runtime's one error type. Every launch-time check returns one of these; nothing panics.

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
    /// A tensor lives on another device than the one the kernel is launched on.
    DeviceMismatch {
        kernel: &'static str,
        tensor: &'static str,
    },
    /// Host data and shape disagree (`Device::upload`, `Tensor::copy_from_slice`).
    LengthMismatch { expected: usize, found: usize },
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
    /// No device of the requested kind is available, or the device cannot run this work.
    NoDevice(String),
    /// The kernel has no GPU object for the device's arch: the build did not compile it.
    ArchNotCompiled {
        kernel: &'static str,
        /// The device's arch, e.g. `sm_90`.
        arch: String,
        /// The archs the build compiled objects for, in order; empty when it compiled none.
        compiled: Vec<&'static str>,
    },
    /// A call into the GPU driver failed. The message names the operation (and the kernel for
    /// launches) and the driver's error. Errors of a launch may only show at the next
    /// synchronizing call (`Device::synchronize`, `Tensor::to_vec`).
    Driver(String),
    /// The tensor lives in device memory, which the host cannot read or write directly.
    NotOnHost {
        /// The device's description.
        device: String,
    },
    /// A graph cannot be recorded or replayed as asked ([`crate::Device::record_graph`]).
    Graph(String),
}

pub use crate::Dtype;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::RankMismatch { kernel, tensor, expected, found } => {
                write!(f, "{kernel}: tensor `{tensor}` has {found} dimensions, the kernel expects {expected}")
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
                write!(f, "{kernel}: no config named `{config}`; the configs are {}", available.join(", "))
            }
            Error::DeviceMismatch { kernel, tensor } => {
                write!(f, "{kernel}: tensor `{tensor}` lives on another device than the launch")
            }
            Error::LengthMismatch { expected, found } => {
                write!(f, "host data has {found} elements, the shape needs {expected}")
            }
            Error::OutOfBounds { kernel, buffer, index, shape } => write!(
                f,
                "{kernel}: access to `{buffer}` at {index:?} is outside its shape {shape:?} (a bug in the kernel)"
            ),
            Error::DivisionByZero { kernel } => write!(f, "{kernel}: integer division by zero in the kernel"),
            Error::BadGrid { kernel, grid } => write!(f, "{kernel}: the grid {grid:?} is out of range"),
            Error::NoDevice(why) => write!(f, "no device: {why}"),
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
                    match crate::gpu::sm_version(arch) {
                        Some((major, minor)) if minor > 0 && !crate::gpu::is_tegra(arch) => write!(
                            f,
                            "; where tilelang has no `{arch}` target, a target sm_{major}y with y < {minor} also runs on this GPU"
                        ),
                        _ => Ok(()),
                    }
                }
            }
            Error::Driver(what) => write!(f, "GPU driver error: {what}"),
            Error::NotOnHost { device } => write!(
                f,
                "the tensor lives in the memory of {device}, not on the host; use `to_vec` or `copy_from_slice`"
            ),
            Error::Graph(why) => write!(f, "graph: {why}"),
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T, E = Error> = std::result::Result<T, E>;
