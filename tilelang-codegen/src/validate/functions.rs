//! Calls of functions as values: the math library, `if_then_else` and `block_idx`; the arity
//! check every call of a builtin shares.

use super::builtins::{self, Builtin, Dtypes, Function, Op};
use super::expr::is_untyped_literal;
use super::scope::Checker;
use crate::ast::{self, Dtype};
use crate::ctxt::{count, Range};
use crate::ir::*;
use syn::Ident;

const ORDINALS: [&str; 3] = ["first", "second", "third"];

impl Checker<'_> {
    /// Whether the call of `b` has as many arguments as `b` takes; an error if not. An
    /// iterator's arguments are not counted here (the parser reads them with the loop header).
    pub(super) fn arity(
        &mut self,
        func: &Ident,
        args: &[ast::Expr],
        b: &Builtin,
        span: Range,
    ) -> bool {
        let Some(n) = b.arity else { return true };
        if args.len() != n {
            self.cx.error_hint(
                span,
                format!(
                    "`{func}` takes {}, found {}",
                    count(n, "argument"),
                    args.len()
                ),
                format!("write `{}`", b.usage()),
            );
            return false;
        }
        true
    }

    pub(super) fn call_expr(
        &mut self,
        func: &Ident,
        args: &[ast::Expr],
        expect: Option<Dtype>,
        span: Range,
    ) -> Option<Expr> {
        let name = func.to_string();
        let Some(builtin) = builtins::lookup(&name) else {
            if !self.poisoned(func) {
                self.cx.error_hint(
                    func.span(),
                    format!("unknown function `{name}`"),
                    format!("the functions are {}", builtins::functions()),
                );
            }
            return None;
        };
        let f = match builtin.op {
            Op::Function(f) => f,
            Op::Primitive(_) => {
                self.cx.error_hint(
                    span,
                    format!("`{name}` is a statement and has no value"),
                    format!("call it on its own line: `{name}(..);`"),
                );
                return None;
            }
            Op::Iterator => {
                self.cx.error_hint(
                    span,
                    format!("`{name}` is only meaningful as a loop iterator"),
                    format!("write `for i in {} {{ .. }}`", builtin.usage()),
                );
                return None;
            }
        };
        if !self.arity(func, args, builtin, span) {
            return None;
        }
        match f {
            Function::Math(f) => self.math(f, builtin, args, expect, span),
            Function::IfThenElse => {
                let c = self.expr_as(&args[0], Dtype::Bool, "the condition of `if_then_else`");
                let (a, b) = if is_untyped_literal(&args[1]) && !is_untyped_literal(&args[2]) {
                    let b = self.expr(&args[2], expect)?;
                    let a = self.expr_as(&args[1], b.ty, "both branches of `if_then_else`")?;
                    (a, b)
                } else {
                    let a = self.expr(&args[1], expect)?;
                    let b = self.expr_as(&args[2], a.ty, "both branches of `if_then_else`")?;
                    (a, b)
                };
                let ty = a.ty;
                Some(Expr {
                    kind: ExprKind::Select(Box::new(c?), Box::new(a), Box::new(b)),
                    ty,
                    span,
                })
            }
            Function::BlockIdx => {
                let d = match args[0].kind {
                    ast::ExprKind::Int(v, _) => v,
                    _ => {
                        self.cx.error_hint(
                            args[0].span,
                            "`block_idx` takes a literal dimension",
                            "write `block_idx(0)`, `block_idx(1)` or `block_idx(2)`",
                        );
                        return None;
                    }
                };
                let rank = self.grid_rank.unwrap_or(3);
                if d as usize >= rank {
                    self.cx.error_hint(
                        args[0].span,
                        format!(
                            "the grid has {rank} dimension{}; there is no `block_idx({d})`",
                            if rank == 1 { "" } else { "s" }
                        ),
                        "add a grid dimension in the attribute: `grid = [X, Y]`",
                    );
                    return None;
                }
                Some(Expr {
                    kind: ExprKind::BlockIdx(d as u8),
                    ty: Dtype::Index,
                    span,
                })
            }
        }
    }

    /// A call of a math function `b`, whose arguments are counted already.
    fn math(
        &mut self,
        f: MathFn,
        b: &Builtin,
        args: &[ast::Expr],
        expect: Option<Dtype>,
        span: Range,
    ) -> Option<Expr> {
        let name = b.name;
        // The arguments share one type: that of the first one that is not an untyped
        // literal (`pow(2.0, x)` with `x: f16` is an f16 `pow`), else the first one's.
        let lead = args
            .iter()
            .position(|a| !is_untyped_literal(a))
            .unwrap_or(0);
        let first = self.expr(&args[lead], expect)?;
        let ty = first.ty;
        let mut a0 = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            if i == lead {
                a0.push(first.clone());
            } else {
                a0.push(self.expr_as(
                    a,
                    ty,
                    &format!("the {} argument of `{name}`", ORDINALS[i]),
                )?);
            }
        }
        let ty = a0[0].ty;
        if !b.dtypes.allows(ty) {
            if b.dtypes == Dtypes::Float {
                self.cx.error_hint(
                    span,
                    format!("`{name}` is defined on floating-point values, found {ty}"),
                    match b.arity {
                        Some(1) => format!("cast first: `{name}(x as f32)`"),
                        _ => format!("cast the arguments first: `{name}(a as f32, ..)`"),
                    },
                );
            } else {
                self.cx.error_hint(
                    span,
                    format!("`{name}` cannot be applied to bool"),
                    "use `&&` / `||` on booleans",
                );
            }
            return None;
        }
        Some(Expr {
            kind: ExprKind::Math(f, a0),
            ty,
            span,
        })
    }
}
