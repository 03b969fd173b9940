//! Statements: `let` (values, tuples and allocations), assignments and compound assignments,
//! `for`, `if` and primitive calls; every other statement of Rust is rejected with a hint.

use super::alloc::alloc_call;
use super::expr::{expr, index_parts, path_name, PRIMITIVE_HINT};
use super::loops::{loop_iter, loop_vars};
use crate::ast::*;
use crate::ctxt::{range, Ctxt};

pub fn block(cx: &mut Ctxt, stmts: &[syn::Stmt]) -> Vec<Stmt> {
    let mut out = Vec::new();
    for s in stmts {
        stmt(cx, s, &mut out);
    }
    out
}

fn stmt(cx: &mut Ctxt, s: &syn::Stmt, out: &mut Vec<Stmt>) {
    match s {
        syn::Stmt::Local(local) => let_stmt(cx, local, out),
        syn::Stmt::Item(item) => cx.error_hint(
            range(&item),
            "items cannot be declared inside a tile kernel",
            "move the item outside the kernel",
        ),
        syn::Stmt::Macro(m) => cx.error_hint(
            range(&m),
            format!(
                "macro `{}!` is not supported inside a tile kernel",
                path_name(&m.mac.path)
            ),
            "kernels are compiled for the GPU; only the kernel language is available",
        ),
        syn::Stmt::Expr(e, semi) => {
            if semi.is_none()
                && !matches!(
                    e,
                    syn::Expr::ForLoop(_)
                        | syn::Expr::If(_)
                        | syn::Expr::While(_)
                        | syn::Expr::Loop(_)
                        | syn::Expr::Block(_)
                        | syn::Expr::Match(_)
                )
            {
                cx.error_hint(
                    range(&e),
                    "a tile kernel returns nothing; this expression has no effect",
                    "end the statement with `;` or remove it",
                );
                return;
            }
            expr_stmt(cx, e, out)
        }
    }
}

fn let_stmt(cx: &mut Ctxt, local: &syn::Local, out: &mut Vec<Stmt>) {
    if let Some(d) = &local.init.as_ref().and_then(|i| i.diverge.as_ref()) {
        cx.error_hint(
            range(&d.1),
            "`let ... else` is not supported in a tile kernel",
            "use `if` instead",
        );
        return;
    }
    let Some(init) = &local.init else {
        cx.error_hint(
            range(&local),
            "a `let` in a tile kernel needs a value",
            "write `let x = value;`",
        );
        return;
    };
    let init = &*init.expr;
    // Peel a type annotation `x: f32`.
    let (pat, ty) = match &local.pat {
        syn::Pat::Type(pt) => {
            let ty = match &*pt.ty {
                syn::Type::Path(p)
                    if p.path
                        .get_ident()
                        .and_then(|i| Dtype::from_name(&i.to_string()))
                        .is_some() =>
                {
                    Some((
                        Dtype::from_name(&p.path.get_ident().unwrap().to_string()).unwrap(),
                        range(&pt.ty),
                    ))
                }
                other => {
                    cx.error_hint(
                        range(&other),
                        "unsupported type annotation",
                        "annotate scalars with f16, bf16, f32, f64, i32, u32, u8, bool or usize",
                    );
                    None
                }
            };
            (&*pt.pat, ty)
        }
        p => (p, None),
    };
    match pat {
        syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
            let name = pi.ident.clone();
            let mutable = pi.mutability.is_some();
            if let Some(alloc) = alloc_call(cx, init) {
                let (scope, dtype, shape, span) = match alloc {
                    Some(a) => a,
                    None => {
                        out.push(Stmt::Poisoned(name));
                        return;
                    }
                };
                if let Some((_, s)) = ty {
                    cx.error_hint(
                        s,
                        "tile buffers take their type from the allocation",
                        "remove the type annotation",
                    );
                }
                out.push(Stmt::Alloc {
                    name,
                    mutable,
                    scope,
                    dtype,
                    shape,
                    span,
                });
                return;
            }
            match expr(cx, init) {
                Some(init) => out.push(Stmt::Let {
                    name,
                    mutable,
                    ty,
                    init,
                }),
                None => out.push(Stmt::Poisoned(name)),
            }
        }
        syn::Pat::Tuple(pt) => {
            let Some(init) = expr(cx, init) else { return };
            let ExprKind::Tuple(values) = init.kind else {
                cx.error_hint(
                    init.span,
                    "a tuple pattern needs a tuple of the same length on the right",
                    "write `let (a, b) = (x, y);`",
                );
                return;
            };
            if values.len() != pt.elems.len() {
                cx.error_hint(
                    init.span,
                    format!(
                        "expected a tuple of {}, found {}",
                        crate::ctxt::count(pt.elems.len(), "value"),
                        values.len()
                    ),
                    "give one value per name",
                );
                return;
            }
            if let Some((_, s)) = ty {
                cx.error_hint(
                    s,
                    "type annotations on tuple patterns are not supported",
                    "annotate with casts instead",
                );
            }
            for (p, v) in pt.elems.iter().zip(values) {
                match p {
                    syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                        out.push(Stmt::Let {
                            name: pi.ident.clone(),
                            mutable: pi.mutability.is_some(),
                            ty: None,
                            init: v,
                        })
                    }
                    other => cx.error_hint(
                        range(&other),
                        "only names may appear in a tuple pattern",
                        "write `let (a, b) = ...`",
                    ),
                }
            }
        }
        syn::Pat::Wild(w) => cx.error_hint(
            range(&w),
            "`let _ = ...` has no effect in a tile kernel",
            "remove the statement",
        ),
        other => cx.error_hint(
            range(&other),
            "unsupported pattern in `let`",
            "bind a plain name: `let x = ...;`",
        ),
    }
}

fn expr_stmt(cx: &mut Ctxt, e: &syn::Expr, out: &mut Vec<Stmt>) {
    match e {
        syn::Expr::ForLoop(f) => {
            if let Some(l) = &f.label {
                cx.error_hint(
                    range(&l),
                    "loop labels are not supported",
                    "remove the label",
                );
            }
            let vars = loop_vars(cx, &f.pat);
            let iter = loop_iter(cx, &f.expr);
            let body = block(cx, &f.body.stmts);
            if let (Some(vars), Some(iter)) = (vars, iter) {
                out.push(Stmt::For {
                    vars,
                    iter,
                    body,
                    span: range(&f),
                });
            }
        }
        syn::Expr::If(i) => {
            if let Some(s) = if_stmt(cx, i) {
                out.push(s);
            }
        }
        syn::Expr::Assign(a) => {
            let target = place(cx, &a.left);
            let value = expr(cx, &a.right);
            if let (Some(target), Some(value)) = (target, value) {
                out.push(Stmt::Assign {
                    target,
                    op: None,
                    value,
                    span: range(&a),
                });
            }
        }
        syn::Expr::Binary(b) if compound_op(&b.op).is_some() => {
            let target = place(cx, &b.left);
            let value = expr(cx, &b.right);
            if let (Some(target), Some(value)) = (target, value) {
                out.push(Stmt::Assign {
                    target,
                    op: compound_op(&b.op),
                    value,
                    span: range(&b),
                });
            }
        }
        syn::Expr::Call(c) => {
            let func = match &*c.func {
                syn::Expr::Path(p) if p.qself.is_none() && p.path.get_ident().is_some() => {
                    p.path.get_ident().unwrap().clone()
                }
                other => {
                    cx.error_hint(
                        range(&other),
                        "only the kernel language's primitives can be called",
                        PRIMITIVE_HINT,
                    );
                    return;
                }
            };
            let args: Vec<Expr> = c.args.iter().filter_map(|a| expr(cx, a)).collect();
            if args.len() == c.args.len() {
                out.push(Stmt::Call {
                    func,
                    args,
                    span: range(&c),
                });
            }
        }
        syn::Expr::While(w) => cx.error_hint(
            w.while_token.span,
            "`while` loops are not supported in a tile kernel",
            "use `for i in serial(n)` with a bound known at launch",
        ),
        syn::Expr::Loop(l) => cx.error_hint(
            l.loop_token.span,
            "`loop` is not supported in a tile kernel",
            "use `for i in serial(n)` with a bound known at launch",
        ),
        syn::Expr::Match(m) => cx.error_hint(
            m.match_token.span,
            "`match` is not supported in a tile kernel",
            "use `if` / `else`",
        ),
        syn::Expr::Return(r) => cx.error_hint(
            range(&r),
            "`return` is not supported in a tile kernel",
            "guard the work with `if` instead",
        ),
        syn::Expr::Break(b) => cx.error_hint(
            range(&b),
            "`break` is not supported in a tile kernel",
            "loops run a fixed number of iterations; guard the body with `if`",
        ),
        syn::Expr::Continue(b) => cx.error_hint(
            range(&b),
            "`continue` is not supported in a tile kernel",
            "guard the rest of the body with `if`",
        ),
        syn::Expr::Block(b) => cx.error_hint(
            range(&b),
            "nested blocks are not supported in a tile kernel",
            "remove the braces",
        ),
        syn::Expr::Unsafe(u) => cx.error_hint(
            u.unsafe_token.span,
            "`unsafe` blocks are not supported in a tile kernel",
            "remove `unsafe`; the kernel language is safe by construction",
        ),
        syn::Expr::Macro(m) => cx.error_hint(
            range(&m),
            format!(
                "macro `{}!` is not supported inside a tile kernel",
                path_name(&m.mac.path)
            ),
            "kernels are compiled for the GPU; only the kernel language is available",
        ),
        syn::Expr::MethodCall(m) => cx.error_hint(
            range(&m.method),
            format!(
                "method `.{}()` cannot be used as a statement in a tile kernel",
                m.method
            ),
            PRIMITIVE_HINT,
        ),
        other => cx.error_hint(
            range(&other),
            "this expression is not a statement of the kernel language",
            "statements are `let`, assignments, `for`, `if` and primitive calls such as `copy(..)`",
        ),
    }
}

fn compound_op(op: &syn::BinOp) -> Option<BinOp> {
    Some(match op {
        syn::BinOp::AddAssign(_) => BinOp::Add,
        syn::BinOp::SubAssign(_) => BinOp::Sub,
        syn::BinOp::MulAssign(_) => BinOp::Mul,
        syn::BinOp::DivAssign(_) => BinOp::Div,
        syn::BinOp::RemAssign(_) => BinOp::Rem,
        syn::BinOp::BitAndAssign(_) => BinOp::BitAnd,
        syn::BinOp::BitOrAssign(_) => BinOp::BitOr,
        syn::BinOp::BitXorAssign(_) => BinOp::BitXor,
        syn::BinOp::ShlAssign(_) => BinOp::Shl,
        syn::BinOp::ShrAssign(_) => BinOp::Shr,
        _ => return None,
    })
}

fn if_stmt(cx: &mut Ctxt, i: &syn::ExprIf) -> Option<Stmt> {
    let cond = expr(cx, &i.cond);
    let then = block(cx, &i.then_branch.stmts);
    let els = match &i.else_branch {
        None => None,
        Some((_, e)) => match &**e {
            syn::Expr::Block(b) => Some(block(cx, &b.block.stmts)),
            syn::Expr::If(inner) => Some(if_stmt(cx, inner).into_iter().collect()),
            other => {
                cx.error(range(&other), "unexpected `else` branch");
                None
            }
        },
    };
    Some(Stmt::If {
        cond: cond?,
        then,
        els,
        span: range(&i),
    })
}

fn place(cx: &mut Ctxt, e: &syn::Expr) -> Option<Place> {
    match e {
        syn::Expr::Path(p) if p.path.get_ident().is_some() => {
            Some(Place::Var(p.path.get_ident().unwrap().clone()))
        }
        syn::Expr::Index(ix) => {
            let (base, index) = index_parts(cx, ix)?;
            Some(Place::Elem {
                base,
                index,
                span: range(&ix),
            })
        }
        syn::Expr::Paren(p) => place(cx, &p.expr),
        other => {
            cx.error_hint(
                range(&other),
                "cannot assign to this expression",
                "assign to a variable `x = ..` or an element `c[(i, j)] = ..`",
            );
            None
        }
    }
}
