//! `for` loops: their variables (a name or a tuple of names) and their iterators
//! (`parallel(..)`, `serial(..)`, `pipelined(n, stages)`).

use super::expr::expr;
use crate::ast::*;
use crate::ctxt::{range, Ctxt};

pub(super) fn loop_vars(cx: &mut Ctxt, p: &syn::Pat) -> Option<Vec<syn::Ident>> {
    match p {
        syn::Pat::Ident(pi)
            if pi.mutability.is_none() && pi.by_ref.is_none() && pi.subpat.is_none() =>
        {
            Some(vec![pi.ident.clone()])
        }
        syn::Pat::Tuple(t) => {
            let mut v = Vec::new();
            for e in &t.elems {
                match e {
                    syn::Pat::Ident(pi)
                        if pi.mutability.is_none()
                            && pi.by_ref.is_none()
                            && pi.subpat.is_none() =>
                    {
                        v.push(pi.ident.clone())
                    }
                    other => {
                        cx.error_hint(
                            range(&other),
                            "loop variables must be plain names",
                            "write `for (i, j) in parallel(BM, BN)`",
                        );
                        return None;
                    }
                }
            }
            Some(v)
        }
        other => {
            cx.error_hint(
                range(&other),
                "loop variables must be plain names",
                "write `for i in serial(n)` or `for (i, j) in parallel(BM, BN)`",
            );
            None
        }
    }
}

pub(super) fn loop_iter(cx: &mut Ctxt, e: &syn::Expr) -> Option<LoopIter> {
    let span = range(&e);
    if let syn::Expr::Range(_) = e {
        cx.error_hint(span, "plain ranges do not say how a loop maps to threads", "write `serial(n)` for a sequential loop or `parallel(n)` for a loop spread over the block's threads");
        return None;
    }
    let syn::Expr::Call(c) = e else {
        cx.error_hint(
            span,
            "unsupported loop iterator",
            "iterate over `parallel(..)`, `serial(..)` or `pipelined(n, stages)`",
        );
        return None;
    };
    let name = match &*c.func {
        syn::Expr::Path(p) if p.path.get_ident().is_some() => {
            p.path.get_ident().unwrap().to_string()
        }
        other => {
            cx.error_hint(
                range(&other),
                "unsupported loop iterator",
                "iterate over `parallel(..)`, `serial(..)` or `pipelined(n, stages)`",
            );
            return None;
        }
    };
    let args: Vec<Expr> = c.args.iter().filter_map(|a| expr(cx, a)).collect();
    if args.len() != c.args.len() {
        return None;
    }
    match name.as_str() {
        "parallel" => {
            if args.is_empty() || args.len() > 3 {
                cx.error_hint(
                    span,
                    format!("`parallel` takes 1 to 3 extents, found {}", args.len()),
                    "write `parallel(N)`, `parallel(BM, BN)` or `parallel(A, B, C)`",
                );
                return None;
            }
            Some(LoopIter::Parallel {
                extents: args,
                span,
            })
        }
        "serial" => match args.len() {
            1 => Some(LoopIter::Serial {
                start: None,
                end: args.into_iter().next().unwrap(),
                span,
            }),
            2 => {
                let mut it = args.into_iter();
                let start = it.next();
                Some(LoopIter::Serial {
                    start,
                    end: it.next().unwrap(),
                    span,
                })
            }
            n => {
                cx.error_hint(
                    span,
                    format!("`serial` takes 1 or 2 arguments, found {n}"),
                    "write `serial(n)` or `serial(start, end)`",
                );
                None
            }
        },
        "pipelined" => {
            if args.len() != 2 {
                cx.error_hint(
                    span,
                    format!("`pipelined` takes 2 arguments, found {}", args.len()),
                    "write `pipelined(n, STAGES)`",
                );
                return None;
            }
            let mut it = args.into_iter();
            Some(LoopIter::Pipelined {
                extent: it.next().unwrap(),
                stages: it.next().unwrap(),
                span,
            })
        }
        other => {
            cx.error_hint(
                range(&c.func),
                format!("unknown loop iterator `{other}`"),
                "iterate over `parallel(..)`, `serial(..)` or `pipelined(n, stages)`",
            );
            None
        }
    }
}
