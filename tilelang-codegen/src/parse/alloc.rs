//! Tile-buffer allocations: `alloc_shared`, `alloc_fragment` and `alloc_local`, with the shape
//! as a tuple type of names or as one argument of expressions.

use super::expr::expr;
use crate::ast::*;
use crate::ctxt::{range, Ctxt, Range};

/// Recognises `alloc_shared::<T, (dims)>()`. Returns `None` if `e` is not an allocation,
/// `Some(None)` if it is one but malformed (already reported).
#[allow(clippy::type_complexity)]
pub(super) fn alloc_call(
    cx: &mut Ctxt,
    e: &syn::Expr,
) -> Option<Option<(Scope, Dtype, Vec<Expr>, Range)>> {
    let syn::Expr::Call(call) = e else {
        return None;
    };
    let syn::Expr::Path(p) = &*call.func else {
        return None;
    };
    if p.path.segments.len() != 1 {
        return None;
    }
    let seg = &p.path.segments[0];
    let scope = match seg.ident.to_string().as_str() {
        "alloc_shared" => Scope::Shared,
        "alloc_fragment" => Scope::Fragment,
        "alloc_local" => Scope::Local,
        _ => return None,
    };
    let hint = format!("write `{0}::<f16, (BM, BK)>()`, or `{0}::<u8>((BK, BN / 2))` when a dimension is an expression", scope.alloc_name());
    let syn::PathArguments::AngleBracketed(ab) = &seg.arguments else {
        cx.error_hint(
            range(&seg),
            format!("`{}` needs an element type and a shape", seg.ident),
            &hint,
        );
        return Some(None);
    };
    // Two forms: the shape as a tuple type of names, or as one argument of expressions.
    let shape_in_args = ab.args.len() == 1 && call.args.len() == 1;
    if !(shape_in_args || ab.args.len() == 2 && call.args.is_empty()) {
        cx.error_hint(
            range(&call),
            format!("`{}` needs an element type and a shape", seg.ident),
            &hint,
        );
        return Some(None);
    }
    let dtype = match &ab.args[0] {
        syn::GenericArgument::Type(syn::Type::Path(tp)) if tp.path.get_ident().is_some() => {
            match Dtype::from_name(&tp.path.get_ident().unwrap().to_string()) {
                Some(d) if d.is_storable() => d,
                _ => {
                    cx.error_hint(
                        range(&tp),
                        "unsupported buffer element type",
                        "buffers hold f16, bf16, f32, f64, i32, u32 or u8",
                    );
                    return Some(None);
                }
            }
        }
        other => {
            cx.error_hint(range(&other), "expected an element type", &hint);
            return Some(None);
        }
    };
    let mut shape = Vec::new();
    if shape_in_args {
        let elems: Vec<&syn::Expr> = match &call.args[0] {
            syn::Expr::Tuple(t) => t.elems.iter().collect(),
            syn::Expr::Paren(p) => vec![&*p.expr],
            other => vec![other],
        };
        if elems.is_empty() || elems.len() > 4 {
            cx.error_hint(
                range(&call.args),
                "tile buffers have 1 to 4 dimensions",
                &hint,
            );
            return Some(None);
        }
        for e in elems {
            shape.push(expr(cx, e)?);
        }
        return Some(Some((scope, dtype, shape, range(&call))));
    }
    let dims: Vec<&syn::Type> = match &ab.args[1] {
        syn::GenericArgument::Type(syn::Type::Tuple(t)) => t.elems.iter().collect(),
        syn::GenericArgument::Type(syn::Type::Paren(t)) => vec![&*t.elem],
        syn::GenericArgument::Type(t @ syn::Type::Path(_)) => vec![t],
        other => {
            cx.error_hint(range(&other), "expected a shape tuple", &hint);
            return Some(None);
        }
    };
    if dims.is_empty() || dims.len() > 4 {
        cx.error_hint(
            range(&ab.args[1]),
            "tile buffers have 1 to 4 dimensions",
            &hint,
        );
        return Some(None);
    }
    for d in dims {
        match d {
            syn::Type::Path(tp) if tp.path.get_ident().is_some() => {
                let id = tp.path.get_ident().unwrap().clone();
                shape.push(Expr {
                    span: range(&id),
                    kind: ExprKind::Var(id),
                });
            }
            other => {
                cx.error_hint(range(&other), "a buffer dimension in the type must be a name", "pass the shape as an argument for expressions: `alloc_shared::<u8>((BK, BN / 2))`");
                return Some(None);
            }
        }
    }
    Some(Some((scope, dtype, shape, range(&call))))
}
