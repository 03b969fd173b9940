//! The tilelang runtime: devices, tensors, the safe launch checks and the CPU backend.
//!
//! The CPU backend is the *reference semantics* of the kernel language (see [`cpu`]): a GPU
//! backend must produce the same results on the same inputs, up to floating-point
//! reassociation in reductions and matrix products.
//!
//! GPU backends: CUDA through cudarc's driver API, with libcuda loaded at run time, and HIP
//! through AMD's runtime (libamdhip64), also loaded at run time. So every machine builds this
//! crate, and one without the driver or runtime gets [`Error::NoDevice`] from [`Device::cuda`]
//! or [`Device::hip`] (and the CPU from [`Device::best`]). Compiled kernels reach the device
//! through [`gpu`]; what the macro knows about a kernel is its [`KernelInfo`].

// Grouped from the leaves up: no module imports from a group below its own
// (`xtask/tests/imports.rs`), and this root only declares and re-exports.

// Plain data and the error type: scalars and elements, arch names, compiled objects, library
// loading, the tuning cache.
mod arch;
#[macro_use] // `dylib_api!`, with which hip.rs declares the HIP functions it calls
pub mod dylib;
mod element;
mod error;
mod object;
mod scalar;
pub mod tuning;

// The GPU backends beneath the trait they implement, and the enums over them.
mod cuda;
mod gpu_device;
mod hip;
mod runtime;
pub mod tma;

// Devices and tensors, and what runs kernels on them.
pub mod cpu;
mod device;
pub mod dynamic;
pub mod gpu;
pub mod graph;
mod kernel_info;
pub mod launch;
mod tensor;
pub mod tune;

pub use device::Device;
pub use dynamic::{AnyScalar, AnyTensor, Arg};
pub use element::{Dtype, Element};
pub use error::{Backend, Error, GpuBackend, Resource, Result};
pub use graph::Graph;
pub use half::{bf16, f16};
pub use kernel_info::{ConfigInfo, KernelConfig, KernelInfo, LaunchDyn};
#[doc(hidden)]
pub use tensor::check_views_and_copies;
pub use tensor::{Tensor, TensorView};
