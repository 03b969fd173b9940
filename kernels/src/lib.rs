//! The ten tutorial kernels, written with `#[tile_kernel]`. Each chapter module explains its
//! problem, holds its kernels (every variant of the original tutorial), a float64 reference, a
//! `run` function used by the `tutorials` binary (correctness check, then timing), and tests at
//! odd sizes on the CPU backend.

pub mod check;
pub mod tune;

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

#[cfg(test)]
mod graph_tests;

use check::{Case, Scale};
use tilelang::Device;

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
