//! Typed random expressions over an environment of in-scope values.
//!
//! Exactness (`docs/design/difftest.md`, "Exactness rule"): every operation stage 1 draws is
//! exact on every backend (`+ - *` round once, casts round to nearest, `max/min/abs`,
//! comparisons, selects, wrapping integers) except for one freedom the GPU compilers take: a
//! float product feeding `+` or `-` may be contracted into a fused multiply-add. So each value
//! carries `prod` (it may be a float product, directly or through a negation, a select, a
//! variable or a buffer), and the operands of float `+`/`-` never have it. Comparisons then
//! see the same bits everywhere, and no branch flips. Of the math functions, those every
//! backend rounds the same are drawn here (`floor ceil sqrt rsqrt fma`); the others only as a
//! stored value, with a tolerance (`super::approx`).

use super::ast::{BinOp, Expr, Func, LitForm, Ty};
use super::rng::Rng;

/// A value the expressions may read: a variable, a load at the loop's own element, a scalar
/// parameter, or an index (`usize`) to cast.
#[derive(Clone, Debug)]
pub struct Leaf {
    pub expr: Expr,
    pub ty: Ty,
    pub prod: bool,
}

/// The values in scope.
#[derive(Clone, Debug, Default)]
pub struct Env {
    pub leaves: Vec<Leaf>,
}

impl Env {
    pub fn add(&mut self, expr: Expr, ty: Ty, prod: bool) {
        self.leaves.push(Leaf { expr, ty, prod });
    }
}

/// A generated expression and whether it may be a float product (see the module docs).
pub struct Val {
    pub e: Expr,
    pub prod: bool,
}

const FLOATS: [f64; 11] = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 0.25, -1.0, -2.5, 100.0, -0.5];
const I32S: [i64; 9] = [0, 1, 2, 3, 7, -1, -5, 100, 1000];
const U32S: [i64; 8] = [0, 1, 2, 3, 7, 100, 1000, 65535];
const U8S: [i64; 7] = [0, 1, 2, 3, 7, 100, 255];

/// A literal of type `ty`, written with its type (a suffix, or a cast for the halves).
pub fn literal(rng: &mut Rng, ty: Ty) -> Expr {
    match ty {
        Ty::F16 | Ty::Bf16 | Ty::F32 | Ty::F64 => {
            Expr::Float(rng.pick(&FLOATS), ty, LitForm::Typed)
        }
        Ty::I32 => Expr::Int(rng.pick(&I32S), ty, LitForm::Typed),
        Ty::U32 => Expr::Int(rng.pick(&U32S), ty, LitForm::Typed),
        Ty::U8 => Expr::Int(rng.pick(&U8S), ty, LitForm::Typed),
        Ty::Index => Expr::Int(rng.below(4) as i64, ty, LitForm::Typed),
        Ty::Bool => Expr::Bool(rng.chance(1, 2)),
    }
}

/// `e` with a typed literal written untyped (its context gives the type), else `e`.
fn untyped(e: Expr) -> Expr {
    match e {
        Expr::Int(v, t, _) => Expr::Int(v, t, LitForm::Untyped),
        Expr::Float(v, t, _) => Expr::Float(v, t, LitForm::Untyped),
        e => e,
    }
}

/// Two operands of one type: a literal beside a non-literal is written untyped half the time,
/// as users write `x * 2.0`.
fn pair(rng: &mut Rng, a: Expr, b: Expr) -> (Expr, Expr) {
    match (a.is_literal(), b.is_literal()) {
        (true, false) if rng.chance(1, 2) => (untyped(a), b),
        (false, true) if rng.chance(1, 2) => (a, untyped(b)),
        _ => (a, b),
    }
}

pub struct ExprGen<'a> {
    pub rng: &'a mut Rng,
    pub env: &'a Env,
}

impl ExprGen<'_> {
    /// A value of type `ty` (an element type), at most `depth` operators deep; with `no_prod`,
    /// one that is no float product.
    pub fn value(&mut self, ty: Ty, depth: u32, no_prod: bool) -> Val {
        // Index values stay loop variables and offsets: only element types compute.
        if depth == 0 || ty == Ty::Index || self.rng.chance(1, 4) {
            return self.leaf(ty, no_prod);
        }
        let float = ty.is_float();
        loop {
            match self.rng.below(13) {
                0 | 1 => {
                    let op = if self.rng.chance(1, 2) {
                        BinOp::Add
                    } else {
                        BinOp::Sub
                    };
                    let a = self.value(ty, depth - 1, float);
                    let b = self.value(ty, depth - 1, float);
                    let (a, b) = pair(self.rng, a.e, b.e);
                    return Val {
                        e: Expr::bin(op, a, b),
                        prod: false,
                    };
                }
                2 if !(no_prod && float) => {
                    let a = self.value(ty, depth - 1, false);
                    let b = self.value(ty, depth - 1, false);
                    let (a, b) = pair(self.rng, a.e, b.e);
                    return Val {
                        e: Expr::bin(BinOp::Mul, a, b),
                        prod: float,
                    };
                }
                3 if ty.is_signed() => {
                    let x = self.value(ty, depth - 1, no_prod);
                    return Val {
                        e: Expr::Neg(Box::new(x.e)),
                        prod: x.prod,
                    };
                }
                4 => {
                    let from = self.other_type(ty);
                    let x = self.value(from, depth - 1, false);
                    return Val {
                        e: Expr::Cast(Box::new(x.e), ty),
                        prod: false,
                    };
                }
                5 => {
                    let f = if self.rng.chance(1, 2) {
                        Func::Max
                    } else {
                        Func::Min
                    };
                    let a = self.value(ty, depth - 1, false);
                    let b = self.value(ty, depth - 1, false);
                    let (a, b) = pair(self.rng, a.e, b.e);
                    return Val {
                        e: Expr::Call(f, vec![a, b]),
                        prod: false,
                    };
                }
                6 => {
                    let x = self.value(ty, depth - 1, false);
                    return Val {
                        e: Expr::Call(Func::Abs, vec![x.e]),
                        prod: false,
                    };
                }
                9 if !float => {
                    let op = self.rng.pick(&[BinOp::BitAnd, BinOp::BitOr, BinOp::BitXor]);
                    let a = self.value(ty, depth - 1, false);
                    let b = self.value(ty, depth - 1, false);
                    let (a, b) = pair(self.rng, a.e, b.e);
                    return Val {
                        e: Expr::bin(op, a, b),
                        prod: false,
                    };
                }
                // A shift by `b & 7` (the CPU backend and tl.h both take the amount modulo the
                // width; within it, no backend differs).
                10 if !float => {
                    let op = if self.rng.chance(1, 2) {
                        BinOp::Shl
                    } else {
                        BinOp::Shr
                    };
                    let a = self.value(ty, depth - 1, false);
                    let b = self.value(ty, depth - 1, false);
                    let amount = Expr::bin(BinOp::BitAnd, b.e, Expr::Int(7, ty, LitForm::Untyped));
                    return Val {
                        e: Expr::bin(op, a.e, amount),
                        prod: false,
                    };
                }
                // Division by a divisor that is never zero (nor -1 below i32::MIN): integers
                // by `(b & 7) + 1`, floats by `abs(b) + 1` (rounded once everywhere).
                11 => {
                    let a = self.value(ty, depth - 1, false);
                    let b = self.value(ty, depth - 1, float);
                    let divisor = if float {
                        Expr::bin(
                            BinOp::Add,
                            Expr::Call(Func::Abs, vec![b.e]),
                            Expr::Float(1.0, ty, LitForm::Untyped),
                        )
                    } else {
                        Expr::bin(
                            BinOp::Add,
                            Expr::bin(BinOp::BitAnd, b.e, Expr::Int(7, ty, LitForm::Untyped)),
                            Expr::Int(1, ty, LitForm::Untyped),
                        )
                    };
                    let op = if !float && self.rng.chance(1, 2) {
                        BinOp::Rem
                    } else {
                        BinOp::Div
                    };
                    return Val {
                        e: Expr::bin(op, a.e, divisor),
                        prod: false,
                    };
                }
                // The math functions every backend rounds the same (`Func::exact`).
                12 if float => {
                    let f = self.rng.pick(&[
                        Func::Floor,
                        Func::Ceil,
                        Func::Sqrt,
                        Func::Rsqrt,
                        Func::Fma,
                    ]);
                    let n = if f == Func::Fma { 3 } else { 1 };
                    let args = (0..n).map(|_| self.value(ty, depth - 1, false).e).collect();
                    return Val {
                        e: Expr::Call(f, args),
                        prod: false,
                    };
                }
                7 | 8 => {
                    let c = self.cond(depth - 1);
                    let a = self.value(ty, depth - 1, no_prod);
                    let b = self.value(ty, depth - 1, no_prod);
                    let prod = a.prod || b.prod;
                    let (a, b) = pair(self.rng, a.e, b.e);
                    return Val {
                        e: Expr::Select(Box::new(c), Box::new(a), Box::new(b)),
                        prod,
                    };
                }
                _ => {}
            }
        }
    }

    /// A `bool`: comparisons of values of one element type, `&&`, `||`, `!`.
    pub fn cond(&mut self, depth: u32) -> Expr {
        match self.rng.below(if depth == 0 { 1 } else { 5 }) {
            0..=2 => {
                let ty = self.element_type();
                let op = self.rng.pick(&[
                    BinOp::Lt,
                    BinOp::Le,
                    BinOp::Gt,
                    BinOp::Ge,
                    BinOp::Eq,
                    BinOp::Ne,
                ]);
                let d = depth.saturating_sub(1);
                let a = self.value(ty, d, false);
                let b = self.value(ty, d, false);
                let (a, b) = pair(self.rng, a.e, b.e);
                Expr::bin(op, a, b)
            }
            3 => {
                let op = if self.rng.chance(1, 2) {
                    BinOp::And
                } else {
                    BinOp::Or
                };
                Expr::bin(op, self.cond(depth - 1), self.cond(depth - 1))
            }
            _ => Expr::Not(Box::new(self.cond(depth - 1))),
        }
    }

    /// An element type, biased toward those the environment holds.
    fn element_type(&mut self) -> Ty {
        let held: Vec<Ty> = self
            .env
            .leaves
            .iter()
            .map(|l| l.ty)
            .filter(|t| *t != Ty::Index)
            .collect();
        if !held.is_empty() && self.rng.chance(3, 4) {
            self.rng.pick(&held)
        } else {
            self.rng.pick(&Ty::ELEMENTS)
        }
    }

    /// A type other than `ty` to cast from: an element type, or `usize` when an index is in
    /// scope.
    fn other_type(&mut self, ty: Ty) -> Ty {
        let has_index = self.env.leaves.iter().any(|l| l.ty == Ty::Index);
        if has_index && self.rng.chance(1, 5) {
            return Ty::Index;
        }
        loop {
            let t = self.element_type();
            if t != ty {
                return t;
            }
        }
    }

    /// A leaf of type `ty`: a value in scope, a literal, or a cast of a value of another type.
    fn leaf(&mut self, ty: Ty, no_prod: bool) -> Val {
        let ok = |l: &&Leaf| l.ty == ty && !(no_prod && l.prod);
        let candidates: Vec<&Leaf> = self.env.leaves.iter().filter(ok).collect();
        if !candidates.is_empty() && self.rng.chance(4, 5) {
            let l = candidates[self.rng.below(candidates.len())];
            return Val {
                e: l.expr.clone(),
                prod: l.prod,
            };
        }
        let others: Vec<&Leaf> = self.env.leaves.iter().filter(|l| l.ty != ty).collect();
        if ty != Ty::Index && !others.is_empty() && self.rng.chance(1, 2) {
            let l = others[self.rng.below(others.len())];
            return Val {
                e: Expr::Cast(Box::new(l.expr.clone()), ty),
                prod: false,
            };
        }
        Val {
            e: literal(self.rng, ty),
            prod: false,
        }
    }
}
