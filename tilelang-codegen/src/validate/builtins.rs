//! Calls of functions as values: the math library, `if_then_else` and `block_idx`; the arity
//! check every call shares; the list of functions named in hints.

use super::expr::is_untyped_literal;
use super::scope::{Checker, PRIMITIVES};
use crate::ast::{self, Dtype};
use crate::ctxt::{count, Range};
use crate::ir::*;
use syn::Ident;

/// The functions a kernel may call, as listed in hints: the math library, then the rest.
pub(super) fn functions() -> String {
    let math = MathFn::ALL.iter().map(|f| f.name());
    math.chain(["if_then_else", "block_idx"])
        .collect::<Vec<_>>()
        .join(", ")
}
const ORDINALS: [&str; 3] = ["first", "second", "third"];

impl Checker<'_> {
    pub(super) fn arity(
        &mut self,
        func: &Ident,
        args: &[ast::Expr],
        n: usize,
        usage: &str,
        span: Range,
    ) -> bool {
        if args.len() != n {
            self.cx.error_hint(
                span,
                format!(
                    "`{func}` takes {}, found {}",
                    count(n, "argument"),
                    args.len()
                ),
                format!("write `{usage}`"),
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
        if let Some(f) = MathFn::from_name(&name) {
            let usage = match f.arity() {
                1 => format!("{name}(x)"),
                n => format!("{name}({})", ["a", "b", "c"][..n].join(", ")),
            };
            if !self.arity(func, args, f.arity(), &usage, span) {
                return None;
            }
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
            if f.float_only() && !ty.is_float() {
                self.cx.error_hint(
                    span,
                    format!("`{name}` is defined on floating-point values, found {ty}"),
                    match f.arity() {
                        1 => format!("cast first: `{name}(x as f32)`"),
                        _ => format!("cast the arguments first: `{name}(a as f32, ..)`"),
                    },
                );
                return None;
            }
            if ty == Dtype::Bool {
                self.cx.error_hint(
                    span,
                    format!("`{name}` cannot be applied to bool"),
                    "use `&&` / `||` on booleans",
                );
                return None;
            }
            return Some(Expr {
                kind: ExprKind::Math(f, a0),
                ty,
                span,
            });
        }
        match name.as_str() {
            "if_then_else" => {
                if !self.arity(func, args, 3, "if_then_else(cond, a, b)", span) {
                    return None;
                }
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
            "block_idx" => {
                if !self.arity(func, args, 1, "block_idx(0)", span) {
                    return None;
                }
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
            _ if PRIMITIVES.contains(&name.as_str()) => {
                self.cx.error_hint(
                    span,
                    format!("`{name}` is a statement and has no value"),
                    format!("call it on its own line: `{name}(..);`"),
                );
                None
            }
            "parallel" | "serial" | "pipelined" => {
                self.cx.error_hint(
                    span,
                    format!("`{name}` is only meaningful as a loop iterator"),
                    format!("write `for i in {name}(..) {{ .. }}`"),
                );
                None
            }
            _ if self.poisoned(func) => None,
            _ => {
                self.cx.error_hint(
                    func.span(),
                    format!("unknown function `{name}`"),
                    format!("the functions are {}", functions()),
                );
                None
            }
        }
    }
}
