//! The generator of random valid kernels: [`generate`] draws a [`Program`] from a seed,
//! deterministically; [`Program::source`] prints it as a `#[tile_kernel]` function.
//!
//! By concept: `ast.rs` (the generator's own tree, a leaf), `rng.rs`, `config.rs` (config
//! pools), `expr.rs` (typed expressions and the exactness rule), `approx.rs` (the inexact math
//! functions and their tolerances), `skeleton.rs`
//! (the kernels' shapes; reductions in `reduce.rs`), `print.rs` (Rust source).

pub mod approx;
pub mod ast;
pub mod config;
pub mod expr;
pub mod print;
pub mod reduce;
pub mod rng;
pub mod skeleton;

pub use ast::{Program, Skeleton};

/// The seeds' base: kernel `i` of a run is [`seed_of`]`(i)`.
pub const BASE: u64 = 0x7469_6c65_6c61_6e67;

/// The seed of kernel `i` of a run: `mix(BASE ^ i)`, so consecutive kernels are unrelated and
/// a range of `i` is a reproducible batch.
pub fn seed_of(i: u64) -> u64 {
    rng::mix(BASE ^ i)
}

/// The program of `seed`: the same seed gives the same program on every host.
pub fn generate(seed: u64) -> Program {
    let mut rng = rng::Rng::new(seed);
    let name = format!("g{seed:016x}");
    let skeleton = match rng.below(8) {
        0 => Skeleton::Elementwise(1),
        1 => Skeleton::Elementwise(2),
        2 => Skeleton::Elementwise(3),
        3 | 4 => Skeleton::Tiles,
        5 => Skeleton::Gemm,
        6 => Skeleton::Reduce,
        _ => Skeleton::Atomic,
    };
    let kernel = match skeleton {
        Skeleton::Elementwise(rank) => skeleton::elementwise(&mut rng, name, rank as usize),
        Skeleton::Tiles => skeleton::tiles(&mut rng, name),
        Skeleton::Gemm => skeleton::gemm(&mut rng, name),
        Skeleton::Reduce => reduce::reduce(&mut rng, name),
        Skeleton::Atomic => reduce::atomic(&mut rng, name),
    };
    Program {
        seed,
        skeleton,
        kernel,
    }
}
