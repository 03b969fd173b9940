//! Everyday tile kernels that the tutorials do not have, written from `README.md` and
//! `docs/language.md` the way a new user of the language would: the normalisations, activation
//! and loss of an LLM, a transpose (plain, and with a padded shared tile), a batched GEMM, a
//! GEMM with a fused bias + GELU epilogue and attention's forward (FlashAttention-2). Each module explains its kernel, holds a float64
//! reference with a tolerance derived in its comment, and tests every config on the CPU
//! backend at odd sizes with poisoned outputs. [`KERNELS`] lists them for the code that goes
//! over all kernels (the benches; `tests/kernel_list.rs` checks it against the sources).
//! `examples/README.md` says what each one is and what in the language got in the way.

pub mod attention;
pub mod batched_gemm;
pub mod cross_entropy;
pub mod gemm_bias_gelu;
pub mod layer_norm;
pub mod rms_norm;
pub mod silu_mul;
pub mod transpose;

use tilelang::KernelInfo;

/// Every kernel of this crate, in the order of `examples/README.md`.
pub const KERNELS: &[&KernelInfo] = &[
    &rms_norm::rms_norm::KERNEL,
    &layer_norm::layer_norm::KERNEL,
    &silu_mul::silu_mul::KERNEL,
    &transpose::transpose::KERNEL,
    &transpose::transpose_padded::KERNEL,
    &cross_entropy::cross_entropy::KERNEL,
    &batched_gemm::batched_gemm::KERNEL,
    &gemm_bias_gelu::gemm_bias_gelu::KERNEL,
    &attention::attention::KERNEL,
];

/// The kernel named `name` in [`KERNELS`].
pub fn kernel(name: &str) -> Option<&'static KernelInfo> {
    KERNELS.iter().copied().find(|k| k.name == name)
}
