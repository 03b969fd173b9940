//! The examples' generated device code, executed on the host, must agree with the CPU backend:
//! the same harness as the tutorials' (`kernels/tests/emulation.rs`, which says what it does and
//! cannot see), for the kernels a new user wrote from the docs. They cover what the tutorials
//! do not: scalar parameters (the norms' `eps`), an index read from data (cross-entropy's
//! targets, in range and not), transposes through shared tiles, a rank-3 GEMM whose TMA
//! entry takes 3-D tensor maps on sm_90a, and attention (two gemms, one through `.t()`, and
//! an online softmax between them; on sm_90a only, see [`amd_suite`]).

#[path = "../../kernels/tests/emulate/mod.rs"]
mod emulate;

use emulate::{check_target, Case, Fill, Suite, Tol};

/// Every example kernel in `examples::KERNELS`'s order.
fn suite() -> Suite {
    Suite::new(
        "examples",
        examples::KERNELS.iter().copied(),
        cases(),
        MATRIX_GEMM_TOL,
    )
}

/// Outputs rounded to f16 after a reduction in another order: the f32 values differ by a few
/// units of 2^-24 relative, so the rounding to f16 moves by at most one ulp (2^-10 relative).
const ROUNDED_F16: Tol = Tol::Close {
    atol: 1e-6,
    rtol: 1.0 / 512.0,
};

/// The GEMMs on a matrix unit, at K ≤ 200 with inputs in [-1, 1]: each f32 sum errs by at
/// most K·2^-23·Σ|a·b| ≤ 200·2^-23·200 < 4.8e-3, so two orders differ by less than 9.6e-3
/// (as the tutorials' bound, `kernels/tests/emulation.rs`); GELU's slope (at most 1.13) and
/// the two C libraries' tanh (1 ulp of f32) make that 1.1e-2; then one f16 ulp.
const MATRIX_GEMM_TOL: Tol = Tol::Close {
    atol: 1.2e-2,
    rtol: 1.0 / 1024.0,
};

/// Attention (`examples/src/attention.rs`) with `q`, `k`, `v` uniform in ±2, `D` ≤ 128,
/// `S` ≤ 150, `c = log2(e)/8`: the float64 bound of `attention::check_rows`, a priori for these
/// inputs (`‖q‖, ‖k‖ ≤ √(128·4)`, so `X ≤ 92` and `Φ ≤ 1.01e-3`; `A_d`, `|O_d| ≤ 2`), is
/// `1.01·(4Φ + 2·(2^-11 + γ_153) + 2^-24·300 + 2·(γ_69 + 2^-24)) ≤ 5.2e-3` on either side's
/// result before its own rounding to f16, so the two differ by at most twice that plus two
/// f16 roundings. (On a matrix unit the suite's `MATRIX_GEMM_TOL` applies instead.)
const ATTENTION_TOL: Tol = Tol::Close {
    atol: 1.05e-2,
    rtol: 1.0 / 1024.0,
};

fn cases() -> Vec<Case> {
    let u1 = Fill::Uniform(-1.0, 1.0);
    const ROWS: &[&[(&str, usize)]] = &[&[("M", 1), ("N", 1)], &[("M", 6), ("N", 1031)]];
    vec![
        Case {
            kernel: "rms_norm",
            sizes: ROWS,
            fill: u1,
            tol: ROUNDED_F16,
            scalars: &[("eps", examples::rms_norm::EPS as f64)],
        },
        Case {
            kernel: "layer_norm",
            sizes: ROWS,
            fill: u1,
            tol: ROUNDED_F16,
            scalars: &[("eps", examples::layer_norm::EPS as f64)],
        },
        Case {
            kernel: "silu_mul",
            sizes: &[&[("M", 1), ("N", 1)], &[("M", 9), ("N", 301)]],
            fill: Fill::Uniform(-4.0, 4.0),
            // The host's C library's exp against the CPU backend's (the `libm` crate).
            tol: ROUNDED_F16,
            scalars: &[],
        },
        Case {
            kernel: "transpose",
            sizes: &[&[("M", 1), ("N", 1)], &[("M", 77), ("N", 150)]],
            fill: u1,
            tol: Tol::Exact,
            scalars: &[],
        },
        Case {
            kernel: "transpose_padded",
            sizes: &[&[("M", 1), ("N", 1)], &[("M", 77), ("N", 150)]],
            fill: u1,
            tol: Tol::Exact,
            scalars: &[],
        },
        Case {
            kernel: "cross_entropy",
            sizes: &[
                &[("M", 1), ("V", 1)],
                &[("M", 5), ("V", 37)],
                &[("M", 3), ("V", 2101)],
            ],
            // Targets from -1 to 39: in range and out of it (loss 0) at V = 37.
            fill: Fill::UniformInts(-4.0, 4.0, -1, 40),
            // The log-sum-exp reduced in another order, in f32.
            tol: Tol::Close {
                atol: 1e-5,
                rtol: 1e-5,
            },
            scalars: &[],
        },
        Case {
            kernel: "gemm_bias_gelu",
            sizes: &[
                &[("M", 1), ("K", 1), ("N", 1)],
                &[("M", 37), ("K", 53), ("N", 45)],
                // Rows of whole 16-byte vectors: the sm_90a TMA entry (persistent, its
                // epilogue through a shared tile behind the consumers' barriers) runs too.
                &[("M", 150), ("K", 200), ("N", 136)],
                // One iteration a tile and many tiles: persistent blocks go from one tile's
                // epilogue straight into the next one's.
                &[("M", 300), ("K", 24), ("N", 264)],
            ],
            fill: Fill::Uniform(-1.0, 1.0),
            // The host C library's tanh against the CPU backend's (the `libm` crate); on a
            // matrix unit the suite's bound (which covers GELU's slope).
            tol: ROUNDED_F16,
            scalars: &[],
        },
        Case {
            kernel: "batched_gemm",
            sizes: &[
                &[("BATCH", 1), ("M", 1), ("K", 1), ("N", 1)],
                &[("BATCH", 2), ("M", 37), ("K", 53), ("N", 45)],
                // Rows of a multiple of 16 bytes: the sm_90a TMA entry (3-D maps) runs too.
                &[("BATCH", 2), ("M", 150), ("K", 200), ("N", 136)],
            ],
            fill: u1,
            tol: Tol::Exact,
            scalars: &[],
        },
        Case {
            kernel: "attention",
            sizes: &[
                &[("BH", 1), ("S", 1)],
                // Keys past the last block's end (77 = 64 + 13 = 2·32 + 13), two
                // query-row blocks, two heads.
                &[("BH", 2), ("S", 77)],
                // Three or five key blocks (150 = 2·64 + 22 = 4·32 + 22): the online rescale by
                // `alpha` runs.
                &[("BH", 2), ("S", 150)],
            ],
            fill: Fill::Uniform(-2.0, 2.0),
            tol: ATTENTION_TOL,
            // c = log2(e) / 8, the softmax scale of D = 64, for both configs (any c will do).
            scalars: &[("c", std::f64::consts::LOG2_E / 8.0)],
        },
    ]
}

#[test]
fn examples_for_wave32_gfx1030_agree_with_the_cpu_backend() {
    check_target(&suite(), "gfx1030", 32, false);
}

#[test]
fn examples_for_wave64_gfx942_agree_with_the_cpu_backend() {
    check_target(&suite(), "gfx942", 64, false);
}

#[test]
fn examples_for_sm_90a_agree_with_the_cpu_backend() {
    check_target(&suite(), "sm_90a", 32, false);
}
