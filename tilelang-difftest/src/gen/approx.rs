//! The inexact math functions (`exp exp2 log tanh erf sigmoid pow sin cos`) and the tolerance
//! each brings to the output it is stored in.
//!
//! Each backend computes these within a few ulp of the exact result, not the same bits
//! (`docs/language.md`, "Math functions"), so a value from one must not decide a branch, an
//! integer or a sum whose order differs. It is drawn only as the value stored into an output
//! element, in one of these forms, `m` the call and `e` an exact value:
//!
//! ```text
//! m   m ± e   e - m   m * L   max(m, e)   min(m, e)   -m   abs(m)      then `as` another float
//! ```
//!
//! The call's argument is kept where its result is bounded: `exp(min(x, 8))`, `exp2(min(x, 8))`,
//! `log(abs(x) + 1)`, `pow(min(abs(x), 16) + 0.5, y)` with a literal `|y| <= 2`; `tanh erf
//! sigmoid sin cos` are within 1. So with `M` the bound of `|m|` and `K` the backends' ulp
//! apart, the two sides' `m` are within `K·ulp(M)` (`ulp` in the call's type), each form is
//! 1-Lipschitz in `m` (`m * L`: `|L|`), and each rounding after it (the operation, the cast)
//! moves a result by at most an ulp of itself: [`Tol`] `{ atol: c·K·ulp(M), rtol: 2^(1-p)`
//! per rounding `}`.

use super::ast::{BinOp, Expr, Func, LitForm, Tol, Ty};
use super::expr::{Env, ExprGen};
use super::rng::Rng;

/// Significand bits of a float type, the implicit one included.
fn precision(t: Ty) -> i32 {
    match t {
        Ty::F16 => 11,
        Ty::Bf16 => 8,
        Ty::F32 => 24,
        _ => 53,
    }
}

/// The largest finite value of a float type.
pub fn max_finite(t: Ty) -> f64 {
    match t {
        Ty::F16 => 65504.0,
        Ty::Bf16 => 3.3895313892515355e38,
        Ty::F32 => f32::MAX as f64,
        _ => f64::MAX,
    }
}

/// The spacing of type `t`'s values at magnitude `m` (`m > 0`).
fn ulp(t: Ty, m: f64) -> f64 {
    2f64.powi(m.log2().floor() as i32 + 1 - precision(t))
}

/// How many ulps of its type the backends' results of `f` may be apart: CUDA's (2 ulp; f32
/// `pow` 4), the `libm` crate's (< 1) and tl.h's on AMD without ROCm (f64 `pow` up to
/// `|y·ln x|·2^-52` relative, ≤ 6 ulp here); halves round the f32 result (`tanh` and `sigmoid`
/// from the approximate instructions, 2^-10.9 relative) to within 3 of their own ulps.
fn ulps(f: Func, t: Ty) -> f64 {
    match (t, f) {
        (Ty::F16 | Ty::Bf16, _) => 4.0,
        (Ty::F32, Func::Pow) => 16.0,
        (Ty::F64, Func::Pow) => 64.0,
        _ => 8.0,
    }
}

const FUNCS: [Func; 9] = [
    Func::Exp,
    Func::Exp2,
    Func::Log,
    Func::Tanh,
    Func::Erf,
    Func::Sigmoid,
    Func::Pow,
    Func::Sin,
    Func::Cos,
];
const EXPONENTS: [f64; 9] = [-2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0];
const SCALES: [f64; 5] = [0.5, 2.0, -1.5, 3.0, -0.25];

fn lit(v: f64, t: Ty) -> Expr {
    Expr::Float(v, t, LitForm::Untyped)
}

/// A call of an inexact math function in float type `t` on a value of `env`, its argument
/// kept where the result is bounded; returns the call and that bound.
fn call(rng: &mut Rng, env: &Env, t: Ty) -> (Expr, Func, f64) {
    let f = rng.pick(&FUNCS);
    let x = ExprGen { rng, env }.value(t, 2, false).e;
    let min = |x: Expr, v: f64| Expr::Call(Func::Min, vec![x, lit(v, t)]);
    let abs = |x: Expr| Expr::Call(Func::Abs, vec![x]);
    let (args, bound) = match f {
        Func::Exp => (vec![min(x, 8.0)], 8f64.exp()),
        Func::Exp2 => (vec![min(x, 8.0)], 256.0),
        Func::Log => (
            vec![Expr::bin(BinOp::Add, abs(x), lit(1.0, t))],
            max_finite(t).ln(),
        ),
        Func::Pow => {
            let y = rng.pick(&EXPONENTS);
            let base = Expr::bin(BinOp::Add, min(abs(x), 16.0), lit(0.5, t));
            (
                vec![base, lit(y, t)],
                16.5f64.powf(y.abs()).max(2f64.powf(y.abs())),
            )
        }
        _ => (vec![x], 1.0),
    };
    (Expr::Call(f, args), f, bound)
}

/// A value of float type `to` that calls an inexact math function, in one of the forms of
/// the module docs, and the tolerance of storing it.
pub fn value(rng: &mut Rng, env: &Env, to: Ty) -> (Expr, Tol) {
    debug_assert!(to.is_float());
    let t = if rng.chance(1, 2) {
        to
    } else {
        rng.pick(&[Ty::F16, Ty::Bf16, Ty::F32, Ty::F64])
    };
    let (m, f, bound) = call(rng, env, t);
    let err = ulps(f, t) * ulp(t, bound);
    let exact = |rng: &mut Rng| ExprGen { rng, env }.value(t, 2, true).e;
    let (e, scale, rounds) = match rng.below(8) {
        0 => (m, 1.0, false),
        1 => (Expr::bin(BinOp::Add, m, exact(rng)), 1.0, true),
        2 => (Expr::bin(BinOp::Add, exact(rng), m), 1.0, true),
        3 => (Expr::bin(BinOp::Sub, m, exact(rng)), 1.0, true),
        4 => (Expr::bin(BinOp::Sub, exact(rng), m), 1.0, true),
        5 => {
            let l = rng.pick(&SCALES);
            (Expr::bin(BinOp::Mul, m, lit(l, t)), l.abs(), true)
        }
        6 => {
            let g = rng.pick(&[Func::Max, Func::Min]);
            (Expr::Call(g, vec![m, exact(rng)]), 1.0, false)
        }
        _ if rng.chance(1, 2) => (Expr::Neg(Box::new(m)), 1.0, false),
        _ => (Expr::Call(Func::Abs, vec![m]), 1.0, false),
    };
    let rel_ulp = |t: Ty| 2f64.powi(1 - precision(t));
    let mut rtol = if rounds { rel_ulp(t) } else { 0.0 };
    let e = if t == to {
        e
    } else {
        rtol += rel_ulp(to);
        Expr::Cast(Box::new(e), to)
    };
    // 1/8 more, for the rounding of the bounds themselves.
    let tol = Tol {
        atol: scale * err * 1.125,
        rtol: rtol * 1.125,
    };
    (e, tol)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ulp_is_the_spacing_of_the_type() {
        assert_eq!(ulp(Ty::F32, 1.0), f32::EPSILON as f64);
        assert_eq!(ulp(Ty::F32, 1.5), f32::EPSILON as f64);
        assert_eq!(ulp(Ty::F64, 2.0), 2.0 * f64::EPSILON);
        assert_eq!(ulp(Ty::F16, 2048.0), 2.0);
        assert_eq!(ulp(Ty::Bf16, 1.0), 2f64.powi(-7));
    }
}
