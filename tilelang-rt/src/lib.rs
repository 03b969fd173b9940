//! The tilelang runtime: devices, tensors, the safe launch checks and the CPU backend.
//!
//! The CPU backend is the *reference semantics* of the kernel language (see [`cpu`]): a GPU
//! backend must produce the same results on the same inputs, up to floating-point
//! reassociation in reductions and matrix products.

mod device;
mod element;
mod error;

pub mod cpu;
pub mod dynamic;
pub mod launch;

pub use device::{Backend, Device, Tensor};
pub use dynamic::{AnyScalar, AnyTensor, Arg};
pub use element::{Dtype, Element};
pub use error::{Error, Result};
pub use half::{bf16, f16};
