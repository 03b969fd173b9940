//! Literals: integers and floats with their suffixes, booleans; and the float constants
//! `f32::INFINITY`, `f32::NEG_INFINITY` and `f32::NAN` (likewise for f16, bf16 and f64).

use crate::ast::*;
use crate::ctxt::{range, Ctxt};

/// `T::INFINITY`, `T::NEG_INFINITY` and `T::NAN` for a float type `T`: a literal of type `T`.
pub(super) fn float_constant(p: &syn::ExprPath) -> Option<ExprKind> {
    let segs: Vec<&syn::PathSegment> = p.path.segments.iter().collect();
    let [ty, name] = segs[..] else {
        return None;
    };
    if p.qself.is_some()
        || p.path.leading_colon.is_some()
        || !ty.arguments.is_none()
        || !name.arguments.is_none()
    {
        return None;
    }
    let ty = Dtype::from_name(&ty.ident.to_string()).filter(|d| d.is_float())?;
    let v = match name.ident.to_string().as_str() {
        "INFINITY" => f64::INFINITY,
        "NEG_INFINITY" => f64::NEG_INFINITY,
        "NAN" => f64::NAN,
        _ => return None,
    };
    Some(ExprKind::Float(v, Some(ty)))
}

pub(super) fn lit(cx: &mut Ctxt, l: &syn::Lit) -> Option<ExprKind> {
    match l {
        syn::Lit::Int(i) => {
            let suffix = i.suffix();
            let ty = if suffix.is_empty() {
                None
            } else {
                match Dtype::from_name(suffix) {
                    Some(d) if d != Dtype::Bool => Some(d),
                    _ => {
                        cx.error_hint(
                            range(&i),
                            format!("unsupported literal suffix `{suffix}`"),
                            "use one of i32, u32, u8, usize, f16, bf16, f32, f64",
                        );
                        return None;
                    }
                }
            };
            match i.base10_parse::<u64>() {
                Ok(v) => Some(if ty.is_some_and(|t| t.is_float()) {
                    ExprKind::Float(v as f64, ty)
                } else {
                    ExprKind::Int(v, ty)
                }),
                Err(_) => {
                    cx.error_hint(
                        range(&i),
                        format!("integer literal `{}` is too large", i.base10_digits()),
                        "integers in kernels fit in 64 bits",
                    );
                    None
                }
            }
        }
        syn::Lit::Float(f) => {
            let suffix = f.suffix();
            let ty = if suffix.is_empty() {
                None
            } else {
                match Dtype::from_name(suffix) {
                    Some(d) if d.is_float() => Some(d),
                    _ => {
                        cx.error_hint(
                            range(&f),
                            format!("unsupported float literal suffix `{suffix}`"),
                            "use f16, bf16, f32 or f64",
                        );
                        return None;
                    }
                }
            };
            match f.base10_parse::<f64>() {
                Ok(v) if v.is_infinite() => {
                    cx.error_hint(
                        range(&f),
                        format!(
                            "float literal `{}` is out of the range of f64",
                            f.base10_digits()
                        ),
                        "write `f32::INFINITY` (or f64::INFINITY, ..) for an infinity",
                    );
                    None
                }
                Ok(v) => Some(ExprKind::Float(v, ty)),
                Err(e) => {
                    cx.error(range(&f), e);
                    None
                }
            }
        }
        syn::Lit::Bool(b) => Some(ExprKind::Bool(b.value)),
        other => {
            cx.error_hint(
                range(&other),
                "only number and boolean literals are supported",
                "strings and characters have no meaning on the GPU",
            );
            None
        }
    }
}
