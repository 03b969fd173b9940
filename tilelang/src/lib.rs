//! Tile-level GPU kernels in Rust. See the README and `ARCHITECTURE.md` of the repository.
//!
//! ```ignore
//! use tilelang::prelude::*;
//!
//! #[tile_kernel(grid = [N.div_ceil(BLOCK)], threads = 128, configs = [default(BLOCK = 1024)])]
//! pub fn vector_add<const BLOCK: usize>(a: &Tensor<f16, (N,)>, b: &Tensor<f16, (N,)>, c: &mut Tensor<f16, (N,)>) {
//!     for i in parallel(BLOCK) {
//!         let g = block_idx(0) * BLOCK + i;
//!         if g < N {
//!             c[g] = a[g] + b[g];
//!         }
//!     }
//! }
//! ```

pub use tilelang_macros::tile_kernel;
pub use tilelang_rt::{
    bf16, f16, AnyScalar, AnyTensor, Arg, Backend, ConfigInfo, Device, Dtype, Element, Error,
    GpuBackend, Graph, KernelConfig, KernelInfo, LaunchDyn, Resource, Result, Tensor, TensorView,
};
pub use tilelang_rt::{tune, tuning};

/// What kernel code and host code need.
pub mod prelude {
    pub use crate::{bf16, f16, tile_kernel, Device, Error, KernelConfig, Tensor};
}

/// Used by the code `#[tile_kernel]` generates. Not a public API.
#[doc(hidden)]
pub mod __private {
    pub use half;
    pub use tilelang_rt::{cpu, dylib, dylib_api, dynamic, gpu, launch, tma};
}
