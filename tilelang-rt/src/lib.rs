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

mod cuda;
mod device;
mod element;
mod error;
mod gpu_common;
mod hip;
mod kernel_info;

pub mod cpu;
pub mod dylib;
pub mod dynamic;
pub mod gpu;
pub mod graph;
pub mod launch;
pub mod tma;
pub mod tune;
pub mod tuning;

#[doc(hidden)]
pub use device::check_views_and_copies;
pub use device::{Backend, Device, Tensor, TensorView};
pub use dynamic::{AnyScalar, AnyTensor, Arg};
pub use element::{Dtype, Element};
pub use error::{Error, GpuBackend, Resource, Result};
pub use graph::Graph;
pub use half::{bf16, f16};
pub use kernel_info::{ConfigInfo, KernelConfig, KernelInfo, LaunchDyn};
