//! The ten tutorial kernels, written with `#[tile_kernel]`. Each chapter module explains its
//! problem, holds its kernels (every variant of the original tutorial), a float64 reference, a
//! `run` function used by the `tutorials` binary (correctness check, then timing), and tests at
//! odd sizes on the CPU backend. [`KERNELS`] lists every kernel, for the code that goes over
//! all of them (the emulation and object tests, the benches).

pub mod check;

pub mod ch01_copy;
pub mod ch02_vector_add;
pub mod ch03_outer_add;
pub mod ch04_broadcast_relu;
pub mod ch05_row_sum;
pub mod ch06_softmax;
pub mod ch07_flash_attention;
pub mod ch08_gemm;
pub mod ch09_conv1d;
pub mod ch10_w4a16;

/// The math library on every float dtype (not a chapter): see the module.
pub mod math;

/// Kernels reading one buffer under two thread mappings (not a chapter): see the module.
pub mod mappings;

#[cfg(test)]
mod graph_tests;
#[cfg(test)]
mod tune_tests;

use check::{Case, Scale};
use tilelang::{Device, KernelInfo};

/// A chapter's entry point: check and time every variant at the given scale.
pub type Chapter = fn(&Device, Scale, u64) -> tilelang::Result<Vec<Case>>;

/// The chapters in order, with their titles.
pub const CHAPTERS: &[(&str, Chapter)] = &[
    ("01 copy", ch01_copy::run),
    ("02 vector add, mul+ReLU", ch02_vector_add::run),
    ("03 outer add", ch03_outer_add::run),
    ("04 broadcast mul+ReLU fwd/bwd", ch04_broadcast_relu::run),
    ("05 row reduce-sum", ch05_row_sum::run),
    ("06 softmax", ch06_softmax::run),
    ("07 scalar flash attention", ch07_flash_attention::run),
    ("08 GEMM", ch08_gemm::run),
    ("09 conv1d", ch09_conv1d::run),
    ("10 W4A16 GEMM", ch10_w4a16::run),
];

/// Every kernel of the chapters, in chapter order and, within a chapter, in source order: the
/// one list the tests, the emulation and the benches read. `tests/kernel_list.rs` fails if a
/// chapter defines a kernel this list lacks.
pub const KERNELS: &[&KernelInfo] = &[
    &ch01_copy::copy_one_thread::KERNEL,
    &ch01_copy::copy_one_block::KERNEL,
    &ch01_copy::copy_tiled::KERNEL,
    &ch02_vector_add::vector_add::KERNEL,
    &ch02_vector_add::mul_relu::KERNEL,
    &ch03_outer_add::outer_add::KERNEL,
    &ch03_outer_add::outer_add_staged::KERNEL,
    &ch04_broadcast_relu::broadcast_relu_fwd::KERNEL,
    &ch04_broadcast_relu::broadcast_relu_bwd::KERNEL,
    &ch05_row_sum::row_sum::KERNEL,
    &ch06_softmax::softmax_3pass::KERNEL,
    &ch06_softmax::softmax_online::KERNEL,
    &ch06_softmax::softmax_row::KERNEL,
    &ch07_flash_attention::flash_attn_3pass::KERNEL,
    &ch07_flash_attention::flash_attn_2pass::KERNEL,
    &ch07_flash_attention::flash_attn_row::KERNEL,
    &ch08_gemm::gemm_naive::KERNEL,
    &ch08_gemm::gemm_fragment::KERNEL,
    &ch08_gemm::gemm_tiled::KERNEL,
    &ch09_conv1d::conv1d_single::KERNEL,
    &ch09_conv1d::conv1d_multi::KERNEL,
    &ch10_w4a16::gemm_w4a16::KERNEL,
];

/// The kernels that check the math library and the occupancy attributes ([`math`]): not
/// chapters, not benchmarked.
pub const MATH_KERNELS: &[&KernelInfo] = &[
    &math::math_f16::KERNEL,
    &math::math_bf16::KERNEL,
    &math::math_f32::KERNEL,
    &math::math_f64::KERNEL,
    &math::gelu_min_blocks::KERNEL,
    &math::gelu_max_registers::KERNEL,
    &math::mul_sub::KERNEL,
];

/// The kernels that read one buffer under two thread mappings ([`mappings`]): not chapters,
/// not benchmarked; checked on every backend and, under host emulation, for every target.
pub const MAPPING_KERNELS: &[&KernelInfo] = &[
    &mappings::cols_then_rows_shared::KERNEL,
    &mappings::cols_then_rows_fragment::KERNEL,
    &mappings::rows_then_cols::KERNEL,
    &mappings::owned_then_transposed::KERNEL,
    &mappings::rows_two_layouts::KERNEL,
    &mappings::cols_two_layouts::KERNEL,
    &mappings::deferred_then_cols::KERNEL,
    &mappings::acc_rows::KERNEL,
];

/// The kernel named `name` in [`KERNELS`], [`MATH_KERNELS`] or [`MAPPING_KERNELS`].
pub fn kernel(name: &str) -> Option<&'static KernelInfo> {
    KERNELS
        .iter()
        .chain(MATH_KERNELS)
        .chain(MAPPING_KERNELS)
        .copied()
        .find(|k| k.name == name)
}
