//! Differential testing of the whole compiler (issue 38, `docs/design/difftest.md`).
//!
//! Stage 1: [`gen`] draws random kernels that are valid by construction from a seed and prints
//! them as `#[tile_kernel]` Rust; [`compile`] runs a generated source through the frontend and
//! the GPU lowering of every target; [`constructs`] lists which language constructs an IR
//! reaches, so a test can say what the generator covers; [`inputs`] builds the arguments of
//! a launch; [`eval`] runs a kernel's IR with the CPU backend's semantics (stage 2);
//! [`device`] runs generated kernels on a GPU against it, [`emulate`] under the host emulation
//! of a target's device code;
//! [`shrink`] minimises a failing kernel.

pub mod compile;
pub mod constructs;
pub mod device;
pub mod emulate;
pub mod eval;
pub mod gen;
pub mod inputs;
pub mod shrink;
