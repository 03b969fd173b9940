//! Expressions: names, operators, casts, calls of built-in functions, the methods `.div_ceil`,
//! `.at` and `.at_mut`, element accesses and borrows, tuples; and the hints shared with
//! statements.

use super::lit::{float_constant, lit};
use crate::ast::*;
use crate::ctxt::{range, Ctxt};

pub(super) const PRIMITIVE_HINT: &str = "the kernel language has `copy`, `fill`, `clear`, `gemm`, `reduce_sum`, \
`reduce_max`, `atomic_add`, `parallel`, `serial`, `pipelined` and the math functions listed in the docs";

pub(super) fn path_name(p: &syn::Path) -> String {
    p.segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::")
}

pub(super) fn index_parts(cx: &mut Ctxt, ix: &syn::ExprIndex) -> Option<(syn::Ident, Vec<Expr>)> {
    let base = match &*ix.expr {
        syn::Expr::Path(p) if p.path.get_ident().is_some() => p.path.get_ident().unwrap().clone(),
        other => {
            cx.error_hint(
                range(&other),
                "only tensors and buffers can be indexed",
                "index a name: `a[(i, j)]`",
            );
            return None;
        }
    };
    let index: Vec<&syn::Expr> = match &*ix.index {
        syn::Expr::Tuple(t) => t.elems.iter().collect(),
        syn::Expr::Array(a) => a.elems.iter().collect(),
        syn::Expr::Range(r) => {
            cx.error_hint(
                range(&r),
                "slicing with ranges is not supported",
                "use `copy(a.at((i, j)), &mut tile)` to move a tile",
            );
            return None;
        }
        other => vec![other],
    };
    let out: Vec<Expr> = index.iter().filter_map(|e| expr(cx, e)).collect();
    (out.len() == index.len()).then_some((base, out))
}

pub fn expr(cx: &mut Ctxt, e: &syn::Expr) -> Option<Expr> {
    let span = range(&e);
    let kind = match e {
        syn::Expr::Lit(l) => lit(cx, &l.lit)?,
        syn::Expr::Path(p) => match p.path.get_ident() {
            Some(id) if p.qself.is_none() => ExprKind::Var(id.clone()),
            _ => match float_constant(p) {
                Some(k) => k,
                None => {
                    cx.error_hint(
                        span,
                        format!(
                            "paths like `{}` are not supported in a tile kernel",
                            path_name(&p.path)
                        ),
                        "use a local name, a parameter, a shape symbol or a const generic; the \
                         only paths are the float constants `f32::INFINITY`, \
                         `f32::NEG_INFINITY` and `f32::NAN` (likewise for f16, bf16 and f64)",
                    );
                    return None;
                }
            },
        },
        syn::Expr::Paren(p) => {
            return expr(cx, &p.expr).map(|mut x| {
                x.span = span;
                x
            })
        }
        syn::Expr::Group(g) => return expr(cx, &g.expr),
        syn::Expr::Binary(b) => {
            let op = match b.op {
                syn::BinOp::Add(_) => BinOp::Add,
                syn::BinOp::Sub(_) => BinOp::Sub,
                syn::BinOp::Mul(_) => BinOp::Mul,
                syn::BinOp::Div(_) => BinOp::Div,
                syn::BinOp::Rem(_) => BinOp::Rem,
                syn::BinOp::And(_) => BinOp::And,
                syn::BinOp::Or(_) => BinOp::Or,
                syn::BinOp::BitXor(_) => BinOp::BitXor,
                syn::BinOp::BitAnd(_) => BinOp::BitAnd,
                syn::BinOp::BitOr(_) => BinOp::BitOr,
                syn::BinOp::Shl(_) => BinOp::Shl,
                syn::BinOp::Shr(_) => BinOp::Shr,
                syn::BinOp::Eq(_) => BinOp::Eq,
                syn::BinOp::Lt(_) => BinOp::Lt,
                syn::BinOp::Le(_) => BinOp::Le,
                syn::BinOp::Ne(_) => BinOp::Ne,
                syn::BinOp::Ge(_) => BinOp::Ge,
                syn::BinOp::Gt(_) => BinOp::Gt,
                _ => {
                    cx.error_hint(
                        range(&b.op),
                        "compound assignment is a statement, not an expression",
                        "move it into its own statement",
                    );
                    return None;
                }
            };
            let l = expr(cx, &b.left);
            let r = expr(cx, &b.right);
            ExprKind::Binary(op, Box::new(l?), Box::new(r?))
        }
        syn::Expr::Unary(u) => {
            let op = match u.op {
                syn::UnOp::Neg(_) => UnOp::Neg,
                syn::UnOp::Not(_) => UnOp::Not,
                _ => {
                    cx.error_hint(
                        range(&u.op),
                        "dereferencing is not supported in a tile kernel",
                        "values are used directly; remove `*`",
                    );
                    return None;
                }
            };
            ExprKind::Unary(op, Box::new(expr(cx, &u.expr)?))
        }
        syn::Expr::Cast(c) => {
            let inner = expr(cx, &c.expr);
            let ty = match &*c.ty {
                syn::Type::Path(p)
                    if p.path
                        .get_ident()
                        .and_then(|i| Dtype::from_name(&i.to_string()))
                        .is_some() =>
                {
                    Dtype::from_name(&p.path.get_ident().unwrap().to_string()).unwrap()
                }
                other => {
                    cx.error_hint(
                        range(&other),
                        "unsupported cast target",
                        "cast to f16, bf16, f32, f64, i32, u32, u8 or usize",
                    );
                    return None;
                }
            };
            ExprKind::Cast(Box::new(inner?), ty)
        }
        syn::Expr::Call(c) => {
            let func = match &*c.func {
                syn::Expr::Path(p) if p.qself.is_none() && p.path.get_ident().is_some() => {
                    p.path.get_ident().unwrap().clone()
                }
                syn::Expr::Path(p)
                    if p.path.segments.len() == 1
                        && p.path.segments[0].ident.to_string().starts_with("alloc_") =>
                {
                    cx.error_hint(
                        span,
                        "allocations must be bound with `let mut name = ...;`",
                        "write `let mut tile = alloc_shared::<f16, (BM, BK)>();`",
                    );
                    return None;
                }
                other => {
                    cx.error_hint(
                        range(&other),
                        "only the kernel language's built-in functions can be called",
                        PRIMITIVE_HINT,
                    );
                    return None;
                }
            };
            let args: Vec<Expr> = c.args.iter().filter_map(|a| expr(cx, a)).collect();
            if args.len() != c.args.len() {
                return None;
            }
            ExprKind::Call(func, args)
        }
        syn::Expr::MethodCall(m) => {
            if m.turbofish.is_some() {
                cx.error_hint(
                    range(&m.turbofish),
                    "turbofish is not supported here",
                    "remove `::<..>`",
                );
                return None;
            }
            let name = m.method.to_string();
            match name.as_str() {
                "t" => {
                    cx.error_hint(
                        range(&m),
                        "`.t()` marks an operand of `gemm` read transposed, borrowed in the call",
                        "write `gemm(&a, &b.t(), &mut c)`",
                    );
                    return None;
                }
                "div_ceil" => {
                    if m.args.len() != 1 {
                        cx.error_hint(
                            range(&m),
                            format!("`div_ceil` takes 1 argument, found {}", m.args.len()),
                            "write `n.div_ceil(BLOCK)`",
                        );
                        return None;
                    }
                    let recv = expr(cx, &m.receiver);
                    let arg = expr(cx, &m.args[0]);
                    ExprKind::DivCeil(Box::new(recv?), Box::new(arg?))
                }
                "at" | "at_mut" => {
                    let tensor = match &*m.receiver {
                        syn::Expr::Path(p) if p.path.get_ident().is_some() => {
                            p.path.get_ident().unwrap().clone()
                        }
                        other => {
                            cx.error_hint(
                                range(&other),
                                format!("`.{name}()` applies to a tensor parameter"),
                                "write `a.at((row, col))`",
                            );
                            return None;
                        }
                    };
                    if m.args.len() != 1 {
                        cx.error_hint(
                            range(&m),
                            format!(
                                "`.{name}()` takes one offset tuple, found {} arguments",
                                m.args.len()
                            ),
                            "write `a.at((row, col))`, or `a.at((i,))` for one dimension",
                        );
                        return None;
                    }
                    let offs: Vec<&syn::Expr> = match &m.args[0] {
                        syn::Expr::Tuple(t) => t.elems.iter().collect(),
                        other => vec![other],
                    };
                    let offsets: Vec<Expr> = offs.iter().filter_map(|e| expr(cx, e)).collect();
                    if offsets.len() != offs.len() {
                        return None;
                    }
                    ExprKind::Region {
                        tensor,
                        offsets,
                        mutable: name == "at_mut",
                    }
                }
                _ => {
                    // The receiver and the arguments are still read, for their own errors
                    // (`a[i].tanh().max(0.0)` reports both methods).
                    expr(cx, &m.receiver);
                    for a in &m.args {
                        expr(cx, a);
                    }
                    let function = match name.as_str() {
                        "min" | "max" | "exp" | "sqrt" | "abs" | "exp2" | "tanh" | "erf"
                        | "sin" | "cos" | "floor" | "ceil" => Some(name.as_str()),
                        "ln" => Some("log"),
                        "powf" | "powi" => Some("pow"),
                        "mul_add" => Some("fma"),
                        _ => None,
                    };
                    let hint = match function {
                        Some(f) => format!(
                            "call the built-in function instead: `{f}(x{})`",
                            match m.args.len() {
                                0 => "",
                                1 => ", y",
                                _ => ", y, z",
                            }
                        ),
                        None => "the methods available are `.div_ceil(n)`, `.at(offsets)`, `.at_mut(offsets)` and `.t()` on a `gemm` operand".into(),
                    };
                    cx.error_hint(
                        range(&m.method),
                        format!("method `.{name}()` is not supported in a tile kernel"),
                        hint,
                    );
                    return None;
                }
            }
        }
        syn::Expr::Index(ix) => {
            let (base, index) = index_parts(cx, ix)?;
            ExprKind::Index(base, index)
        }
        syn::Expr::Reference(r) => match &*r.expr {
            syn::Expr::Path(p) if p.path.get_ident().is_some() => {
                ExprKind::Ref(p.path.get_ident().unwrap().clone(), r.mutability.is_some())
            }
            syn::Expr::MethodCall(m) if m.method == "t" => {
                let tile = match &*m.receiver {
                    syn::Expr::Path(p) if p.path.get_ident().is_some() && m.args.is_empty() => {
                        p.path.get_ident().unwrap().clone()
                    }
                    _ => {
                        cx.error_hint(
                            range(&m),
                            "`.t()` applies to a tile buffer and takes no arguments",
                            "write `&tile.t()`",
                        );
                        return None;
                    }
                };
                if r.mutability.is_some() {
                    cx.error_hint(
                        range(&r),
                        "only `gemm`'s operands A and B can be read transposed; an accumulator \
                         is written as stored",
                        format!("store the accumulator as (M, N) and write `&mut {tile}`"),
                    );
                    return None;
                }
                ExprKind::Transposed(tile)
            }
            syn::Expr::Index(ix) => {
                let (base, index) = index_parts(cx, ix)?;
                ExprKind::ElemRef(base, index)
            }
            other => {
                cx.error_hint(
                    range(&other),
                    "only buffers and elements can be borrowed",
                    "write `&tile`, `&mut tile` or `&mut c[(i, j)]`",
                );
                return None;
            }
        },
        syn::Expr::Tuple(t) => {
            let v: Vec<Expr> = t.elems.iter().filter_map(|e| expr(cx, e)).collect();
            if v.len() != t.elems.len() {
                return None;
            }
            ExprKind::Tuple(v)
        }
        syn::Expr::If(_) => {
            cx.error_hint(
                span,
                "`if` expressions are not supported",
                "use `if_then_else(cond, a, b)` for a value, or an `if` statement",
            );
            return None;
        }
        syn::Expr::Closure(_) => {
            cx.error_hint(
                span,
                "closures are not supported in a tile kernel",
                "write the computation inline, or as a `parallel` loop",
            );
            return None;
        }
        syn::Expr::Macro(m) => {
            cx.error_hint(
                span,
                format!(
                    "macro `{}!` is not supported inside a tile kernel",
                    path_name(&m.mac.path)
                ),
                "kernels are compiled for the GPU; only the kernel language is available",
            );
            return None;
        }
        syn::Expr::Field(f) => {
            cx.error_hint(
                span,
                "field access is not supported in a tile kernel",
                format!(
                    "use plain names; `{}` is not a struct",
                    quote::ToTokens::to_token_stream(&f.base)
                ),
            );
            return None;
        }
        syn::Expr::Block(_) | syn::Expr::Unsafe(_) => {
            cx.error_hint(
                span,
                "block expressions are not supported in a tile kernel",
                "compute the value with `let` statements",
            );
            return None;
        }
        syn::Expr::Array(_) => {
            cx.error_hint(
                span,
                "array literals are not supported in a tile kernel",
                "allocate a buffer with `alloc_local::<T, (N,)>()`",
            );
            return None;
        }
        syn::Expr::Range(_) => {
            cx.error_hint(
                span,
                "ranges are only meaningful as loop bounds",
                "write `serial(n)` or `parallel(n)`",
            );
            return None;
        }
        _ => {
            cx.error_hint(span, "this expression is not supported in a tile kernel", "the kernel language has arithmetic, comparisons, casts, calls of built-in functions and element accesses `a[(i, j)]`");
            return None;
        }
    };
    Some(Expr { kind, span })
}
