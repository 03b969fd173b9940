//! The generator of random valid kernels: [`generate`] draws a [`Program`] from a seed,
//! deterministically; [`Program::source`] prints it as a `#[tile_kernel]` function.
//!
//! By concept: `ast.rs` (the generator's own tree, a leaf), `rng.rs`, `config.rs` (config
//! pools), `expr.rs` (typed expressions and the exactness rule), `skeleton.rs` and `tiles.rs`
//! (the kernels' shapes), `print.rs` (Rust source).

pub mod ast;
pub mod config;
pub mod expr;
pub mod print;
pub mod rng;
pub mod skeleton;
pub mod tiles;

pub use ast::{Program, Skeleton};

/// The program of `seed`: the same seed gives the same program on every host.
pub fn generate(seed: u64) -> Program {
    let mut rng = rng::Rng::new(seed);
    let name = format!("g{seed:016x}");
    let skeleton = match rng.below(5) {
        0 => Skeleton::Elementwise(1),
        1 => Skeleton::Elementwise(2),
        2 => Skeleton::Elementwise(3),
        _ => Skeleton::Tiles,
    };
    let kernel = match skeleton {
        Skeleton::Elementwise(rank) => skeleton::elementwise(&mut rng, name, rank as usize),
        Skeleton::Tiles => tiles::tiles(&mut rng, name),
    };
    Program {
        seed,
        skeleton,
        kernel,
    }
}
