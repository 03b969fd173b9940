//! Expressions and their dtypes: literals (and whether they fit their type), names, operators
//! (the dtypes each accepts), casts, `div_ceil`, loads; no implicit conversions.

use super::scope::{Binding, Checker};
use crate::ast::{self, Dtype};
use crate::ctxt::Range;
use crate::ir::{self, *};

fn is_float_literal(e: &ast::Expr) -> bool {
    match &e.kind {
        ast::ExprKind::Float(..) => true,
        ast::ExprKind::Unary(ast::UnOp::Neg, x) => is_float_literal(x),
        _ => false,
    }
}

pub(super) fn is_untyped_literal(e: &ast::Expr) -> bool {
    match &e.kind {
        ast::ExprKind::Int(_, None) | ast::ExprKind::Float(_, None) => true,
        ast::ExprKind::Unary(ast::UnOp::Neg, x) => is_untyped_literal(x),
        _ => false,
    }
}

impl Checker<'_> {
    /// Checks `e` and requires its dtype to be `ty`.
    pub(super) fn expr_as(&mut self, e: &ast::Expr, ty: Dtype, what: &str) -> Option<Expr> {
        let x = self.expr(e, Some(ty))?;
        if x.ty != ty {
            let hint = if ty == Dtype::Bool {
                "use a comparison such as `x > 0.0`".to_string()
            } else if x.ty == Dtype::Bool {
                format!("convert with `if_then_else(cond, 1, 0)` or `cond as {ty}`")
            } else {
                format!("add a cast: `(..) as {ty}`")
            };
            self.cx.error_hint(
                e.span,
                format!("dtype mismatch: {what} must be {ty}, found {}", x.ty),
                hint,
            );
            return None;
        }
        Some(x)
    }

    /// A float literal must be finite in its type (`70000.0` is not an f16).
    fn float_fits(&mut self, v: f64, ty: Dtype, span: Range) -> Option<()> {
        let max = match ty {
            Dtype::F16 => 65504.0,
            Dtype::Bf16 => 3.3895313892515355e38,
            Dtype::F32 => f32::MAX as f64,
            _ => f64::MAX,
        };
        // Infinities are the constants `f32::INFINITY` etc.: parse rejects literals beyond f64.
        if v.is_finite() && v.abs() > max {
            self.cx.error_hint(
                span,
                format!("literal `{v}` is out of the range of {ty} (largest finite value {max:e})"),
                "use a smaller value or a wider type",
            );
            return None;
        }
        Some(())
    }

    pub(super) fn check_binary_types(&mut self, op: BinOp, ty: Dtype, span: Range) -> Option<()> {
        let ok = if op.is_logical() {
            ty == Dtype::Bool
        } else if op.is_bitwise() {
            ty.is_int() || (ty == Dtype::Bool && !matches!(op, BinOp::Shl | BinOp::Shr))
        } else if op.is_comparison() {
            true
        } else {
            ty != Dtype::Bool
        };
        if !ok {
            let hint = if op.is_bitwise() {
                "bit operations apply to integers; cast first, e.g. `(x as u32)`"
            } else if op.is_logical() {
                "`&&` and `||` combine booleans (comparisons)"
            } else {
                "arithmetic applies to numbers, not booleans"
            };
            self.cx.error_hint(
                span,
                format!("operator `{}` cannot be applied to {ty}", op.symbol()),
                hint,
            );
            return None;
        }
        Some(())
    }

    pub(super) fn expr(&mut self, e: &ast::Expr, expect: Option<Dtype>) -> Option<Expr> {
        use ast::ExprKind as K;
        let span = e.span;
        let mk = |kind, ty| Some(Expr { kind, ty, span });
        match &e.kind {
            K::Int(v, suffix) => {
                let ty = suffix
                    .or(expect.filter(|t| *t != Dtype::Bool))
                    .unwrap_or(Dtype::Index);
                if ty.is_float() {
                    self.float_fits(*v as f64, ty, span)?;
                    return mk(ExprKind::Float(*v as f64), ty);
                }
                if ir::int_in(*v as i128, ty).is_none() {
                    self.cx.error_hint(
                        span,
                        format!("literal `{v}` does not fit in {ty}"),
                        "use a smaller value or a wider type",
                    );
                    return None;
                }
                mk(ExprKind::Int(*v as i128), ty)
            }
            K::Float(v, suffix) => {
                let ty = match (suffix, expect) {
                    (Some(t), _) => *t,
                    (None, Some(t)) if t.is_float() => t,
                    (None, Some(t)) if t.is_int() => {
                        self.cx.error_hint(
                            span,
                            format!("float literal where {t} is expected"),
                            format!("write an integer, or cast: `{v} as {t}`"),
                        );
                        return None;
                    }
                    _ => Dtype::F32,
                };
                self.float_fits(*v, ty, span)?;
                mk(ExprKind::Float(*v), ty)
            }
            K::Bool(b) => mk(ExprKind::Bool(*b), Dtype::Bool),
            K::Var(name) => match self.lookup(name) {
                None => {
                    self.unknown_name(name);
                    None
                }
                Some(Binding::Var(v)) => mk(ExprKind::Var(v), self.vars[v].ty),
                Some(Binding::Poisoned) => None,
                Some(Binding::Const(i)) => mk(ExprKind::Const(i), Dtype::Index),
                Some(Binding::Sym(i)) => mk(ExprKind::Sym(i), Dtype::Index),
                Some(Binding::Scalar(p)) => {
                    mk(ExprKind::Scalar(p), self.target_dtype(Target::Tensor(p)))
                }
                Some(Binding::Buffer(_)) | Some(Binding::Tensor(_)) => {
                    self.cx.error_hint(
                        span,
                        format!("`{name}` is a tile, not a value"),
                        format!(
                            "index it (`{name}[(i, j)]`) or pass it to a primitive (`&{name}`)"
                        ),
                    );
                    None
                }
            },
            K::Binary(op, l, r) => {
                let operand_expect = if op.is_comparison() {
                    None
                } else if op.is_logical() {
                    Some(Dtype::Bool)
                } else {
                    expect
                };
                let (l, r) = if is_untyped_literal(l) && !is_untyped_literal(r) {
                    let r = self.expr(r, operand_expect)?;
                    let l = self.expr(l, Some(r.ty))?;
                    (l, r)
                } else {
                    let l = self.expr(l, operand_expect);
                    let r = self.expr(r, l.as_ref().map(|l| l.ty).or(operand_expect));
                    (l?, r?)
                };
                if l.ty != r.ty {
                    self.cx.error_hint(
                        span,
                        format!("dtype mismatch in `{}`: left is {}, right is {}", op.symbol(), l.ty, r.ty),
                        format!("the kernel language never converts implicitly; cast one side, e.g. `(..) as {}`", if l.ty == Dtype::Index { r.ty } else { l.ty }),
                    );
                    return None;
                }
                self.check_binary_types(*op, l.ty, span)?;
                let ty = if op.is_comparison() {
                    Dtype::Bool
                } else {
                    l.ty
                };
                mk(ExprKind::Binary(*op, Box::new(l), Box::new(r)), ty)
            }
            K::Unary(UnOp::Neg, inner)
                if matches!(inner.kind, K::Int(..)) && expect.is_none_or(|t| t.is_int()) =>
            {
                // `-2147483648` is one literal: check the negated value's range.
                let K::Int(v, suffix) = inner.kind else {
                    unreachable!()
                };
                let ty = suffix.or(expect).unwrap_or(Dtype::Index);
                let v = -(v as i128);
                if ir::int_in(v, ty).is_none() {
                    self.cx.error_hint(
                        span,
                        format!("literal `{v}` does not fit in {ty}"),
                        "use a value in the type's range or a wider type",
                    );
                    return None;
                }
                if matches!(ty, Dtype::U8 | Dtype::U32) {
                    self.cx.error_hint(
                        span,
                        format!("cannot negate a value of type {ty}"),
                        "cast to a signed type first, e.g. `(x as i32)`",
                    );
                    return None;
                }
                mk(ExprKind::Int(v), ty)
            }
            K::Unary(op, x) => {
                let x = self.expr(x, expect)?;
                match op {
                    UnOp::Neg if matches!(x.ty, Dtype::U8 | Dtype::U32 | Dtype::Bool) => {
                        self.cx.error_hint(
                            span,
                            format!("cannot negate a value of type {}", x.ty),
                            "cast to a signed type first, e.g. `(x as i32)`",
                        );
                        return None;
                    }
                    UnOp::Not if x.ty.is_float() => {
                        self.cx.error_hint(
                            span,
                            format!("`!` cannot be applied to {}", x.ty),
                            "`!` is logical not on bool and bitwise not on integers",
                        );
                        return None;
                    }
                    _ => {}
                }
                let ty = x.ty;
                mk(ExprKind::Unary(*op, Box::new(x)), ty)
            }
            K::Cast(x, ty) => {
                // An untyped literal takes the target type where it can (`1 as f16`); a float
                // literal cast to an integer is an f64 converted like any other float.
                let inner_expect = if !is_untyped_literal(x) {
                    None
                } else if is_float_literal(x) && !ty.is_float() {
                    Some(Dtype::F64)
                } else {
                    Some(*ty)
                };
                let x = self.expr(x, inner_expect)?;
                if *ty == Dtype::Bool && x.ty != Dtype::Bool {
                    self.cx.error_hint(
                        span,
                        "casting to bool is not supported",
                        "compare instead: `x != 0`",
                    );
                    return None;
                }
                mk(ExprKind::Cast(Box::new(x)), *ty)
            }
            K::DivCeil(a, b) => {
                let a = self.expr(a, expect.filter(|t| t.is_int()));
                let a = a?;
                if !a.ty.is_int() {
                    self.cx.error_hint(
                        span,
                        format!("`div_ceil` applies to integers, found {}", a.ty),
                        "use it on sizes and indices",
                    );
                    return None;
                }
                let b = self.expr_as(b, a.ty, "the divisor of `div_ceil`")?;
                let ty = a.ty;
                mk(ExprKind::DivCeil(Box::new(a), Box::new(b)), ty)
            }
            K::Index(base, index) => {
                let access = self.access(base, index, false, span)?;
                let ty = self.target_dtype(access.target);
                mk(ExprKind::Load(access), ty)
            }
            K::Call(func, args) => self.call_expr(func, args, expect, span),
            K::Ref(name, _) => {
                self.cx.error_hint(
                    span,
                    format!("`&{name}` can only be passed to a tile primitive"),
                    format!("use the value `{name}` directly"),
                );
                None
            }
            K::Transposed(name) => {
                self.cx.error_hint(
                    span,
                    format!("`&{name}.t()` can only be passed to `gemm` as A or B"),
                    format!("read elements of `{name}` with swapped indices instead"),
                );
                None
            }
            K::Region { tensor, .. } => {
                self.cx.error_hint(
                    span,
                    "a tile region can only be passed to `copy`",
                    format!("read one element with `{tensor}[(i, j)]`"),
                );
                None
            }
            K::ElemRef(..) => {
                self.cx.error_hint(
                    span,
                    "an element reference can only be passed to `atomic_add`",
                    "read the element without `&mut`",
                );
                None
            }
            K::Tuple(_) => {
                self.cx.error_hint(
                    span,
                    "tuples are only supported on the right of `let (a, b) = (x, y);`",
                    "use separate variables",
                );
                None
            }
        }
    }
}
