//! The kernel's parameters: plain names typed as `&Tensor<T, (DIMS)>`, `&mut Tensor<..>` or a
//! scalar type.

use crate::ast::*;
use crate::ctxt::{range, Ctxt};

pub(super) fn is_ident(ty: &syn::Type, name: &str) -> bool {
    matches!(ty, syn::Type::Path(p) if p.qself.is_none() && p.path.is_ident(name))
}

pub(super) fn param(cx: &mut Ctxt, pt: &syn::PatType) -> Option<Param> {
    let name = match &*pt.pat {
        syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
            if let Some(m) = &pi.mutability {
                cx.error_hint(
                    range(&m),
                    "kernel parameters cannot be `mut`",
                    "remove `mut`; write through `&mut Tensor` parameters",
                );
            }
            pi.ident.clone()
        }
        other => {
            cx.error_hint(
                range(&other),
                "kernel parameters must be plain names",
                "write `name: Type`",
            );
            return None;
        }
    };
    let ty_span = range(&pt.ty);
    match &*pt.ty {
        syn::Type::Reference(r) => {
            if let Some(l) = &r.lifetime {
                cx.error_hint(
                    range(&l),
                    "lifetimes are not needed on kernel parameters",
                    "remove the lifetime",
                );
            }
            let (dtype, shape) = tensor_type(cx, &r.elem)?;
            Some(Param {
                name,
                kind: ParamKind::Tensor {
                    dtype,
                    shape,
                    mutable: r.mutability.is_some(),
                },
                ty_span,
            })
        }
        syn::Type::Path(p) if p.qself.is_none() && p.path.get_ident().is_some() => {
            let id = p.path.get_ident().unwrap();
            match Dtype::from_name(&id.to_string()) {
                Some(dtype) if dtype != Dtype::Bool => Some(Param {
                    name,
                    kind: ParamKind::Scalar { dtype },
                    ty_span,
                }),
                _ => {
                    if id == "Tensor" {
                        cx.error_hint(
                            ty_span,
                            "tensor parameters are passed by reference",
                            "write `&Tensor<..>` for inputs or `&mut Tensor<..>` for outputs",
                        );
                    } else {
                        cx.error_hint(
                            ty_span,
                            format!("unsupported scalar parameter type `{id}`"),
                            "scalars may be f16, bf16, f32, f64, i32, u32, u8 or usize",
                        );
                    }
                    None
                }
            }
        }
        syn::Type::Path(_) => {
            cx.error_hint(
                ty_span,
                "tensor parameters are passed by reference",
                "write `&Tensor<f16, (M, N)>` or `&mut Tensor<f16, (M, N)>`",
            );
            None
        }
        other => {
            cx.error_hint(
                range(&other),
                "unsupported parameter type",
                "use `&Tensor<T, (DIMS)>`, `&mut Tensor<T, (DIMS)>` or a scalar type",
            );
            None
        }
    }
}

/// `Tensor<f16, (M, K)>` → (dtype, dims).
fn tensor_type(cx: &mut Ctxt, ty: &syn::Type) -> Option<(Dtype, Vec<Dim>)> {
    let hint = "write `Tensor<dtype, (DIM, ...)>`, e.g. `Tensor<f16, (M, K)>`";
    let seg = match ty {
        syn::Type::Path(p) if p.qself.is_none() && p.path.segments.len() == 1 => {
            &p.path.segments[0]
        }
        other => {
            cx.error_hint(range(&other), "expected a `Tensor` type", hint);
            return None;
        }
    };
    if seg.ident != "Tensor" {
        cx.error_hint(
            range(&seg.ident),
            format!("expected `Tensor`, found `{}`", seg.ident),
            hint,
        );
        return None;
    }
    let args = match &seg.arguments {
        syn::PathArguments::AngleBracketed(a) if a.args.len() == 2 => a,
        other => {
            cx.error_hint(
                if matches!(other, syn::PathArguments::None) {
                    range(&seg)
                } else {
                    range(&other)
                },
                "`Tensor` takes an element type and a shape",
                hint,
            );
            return None;
        }
    };
    let dtype = match &args.args[0] {
        syn::GenericArgument::Type(syn::Type::Path(p)) if p.path.get_ident().is_some() => {
            let id = p.path.get_ident().unwrap();
            match Dtype::from_name(&id.to_string()) {
                Some(d) if d.is_storable() => d,
                _ => {
                    cx.error_hint(
                        range(&id),
                        format!("unsupported tensor element type `{id}`"),
                        "tensors hold f16, bf16, f32, f64, i32, u32 or u8",
                    );
                    return None;
                }
            }
        }
        other => {
            cx.error_hint(
                range(&other),
                "expected an element type",
                "tensors hold f16, bf16, f32, f64, i32, u32 or u8",
            );
            return None;
        }
    };
    let shape = match &args.args[1] {
        syn::GenericArgument::Type(t) => shape_type(cx, t)?,
        syn::GenericArgument::Const(syn::Expr::Block(b)) => {
            cx.error_hint(range(&b), "expected a shape tuple", hint);
            return None;
        }
        other => {
            cx.error_hint(range(&other), "expected a shape tuple", hint);
            return None;
        }
    };
    Some((dtype, shape))
}

fn shape_type(cx: &mut Ctxt, t: &syn::Type) -> Option<Vec<Dim>> {
    let elems: Vec<&syn::Type> = match t {
        syn::Type::Tuple(tt) => tt.elems.iter().collect(),
        syn::Type::Paren(p) => vec![&*p.elem],
        syn::Type::Path(_) => vec![t],
        other => {
            cx.error_hint(
                range(&other),
                "expected a shape tuple",
                "write the shape as `(M, K)` or `(N,)`",
            );
            return None;
        }
    };
    if elems.is_empty() || elems.len() > 4 {
        cx.error_hint(
            range(&t),
            "tensors have 1 to 4 dimensions",
            "write the shape as `(M, K)` or `(N,)`",
        );
        return None;
    }
    let mut dims = Vec::new();
    for e in elems {
        match e {
            syn::Type::Path(p) if p.qself.is_none() && p.path.get_ident().is_some() => {
                dims.push(Dim::Sym(p.path.get_ident().unwrap().clone()))
            }
            other => {
                cx.error_hint(
                    range(&other),
                    "a dimension must be a shape symbol or a const generic",
                    "write a name such as `N`; literal sizes go in `requires = [N == 7]`",
                );
                return None;
            }
        }
    }
    Some(dims)
}
