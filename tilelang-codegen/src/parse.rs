//! Pass 1, parse: `syn` syntax → [`crate::ast`]. This pass knows which Rust constructs belong to the
//! kernel language; everything else becomes a spanned error with a hint. It never stops early:
//! an unsupported statement is reported and skipped so that later ones are checked too.

use crate::ast::*;
use crate::ctxt::{range, Ctxt, Range};

const PRIMITIVE_HINT: &str = "the kernel language has `copy`, `fill`, `clear`, `gemm`, `reduce_sum`, \
`reduce_max`, `atomic_add`, `parallel`, `serial`, `pipelined` and the math functions listed in the docs";

pub fn kernel(cx: &mut Ctxt, item: &syn::ItemFn) -> Option<KernelDef> {
    let sig = &item.sig;
    if let Some(t) = &sig.asyncness {
        cx.error_hint(
            range(&t),
            "a tile kernel cannot be `async`",
            "remove `async`",
        );
    }
    if let Some(t) = &sig.unsafety {
        cx.error_hint(
            range(&t),
            "a tile kernel cannot be `unsafe`",
            "remove `unsafe`: the generated launcher is safe",
        );
    }
    if let Some(t) = &sig.constness {
        cx.error_hint(
            range(&t),
            "a tile kernel cannot be `const fn`",
            "remove `const`",
        );
    }
    if let Some(v) = &sig.variadic {
        cx.error(range(&v), "a tile kernel cannot be variadic");
    }
    if let syn::ReturnType::Type(_, ty) = &sig.output {
        cx.error_hint(
            range(&ty),
            "a tile kernel returns nothing",
            "write results into a `&mut Tensor` parameter; the launcher returns `Result<(), tilelang::Error>`",
        );
    }
    if let Some(w) = &sig.generics.where_clause {
        cx.error_hint(
            range(&w),
            "`where` clauses are not supported on tile kernels",
            "remove the `where` clause",
        );
    }
    let mut consts = Vec::new();
    for g in &sig.generics.params {
        match g {
            syn::GenericParam::Const(c) => {
                if !is_ident(&c.ty, "usize") {
                    cx.error_hint(
                        range(&c.ty),
                        "const generics of a tile kernel must be `usize`",
                        "write `const NAME: usize`",
                    );
                }
                if let Some(d) = &c.default {
                    cx.error_hint(
                        range(&d),
                        "const generics cannot have defaults here",
                        "give values in `configs = [...]` instead",
                    );
                }
                consts.push(c.ident.clone());
            }
            other => cx.error_hint(
                range(&other),
                "only `const NAME: usize` generics are supported on tile kernels",
                "tile sizes are const generics; element types are written in tensor types",
            ),
        }
    }
    let mut params = Vec::new();
    for arg in &sig.inputs {
        match arg {
            syn::FnArg::Receiver(r) => cx.error(range(&r), "a tile kernel cannot take `self`"),
            syn::FnArg::Typed(pt) => {
                if let Some(p) = param(cx, pt) {
                    params.push(p);
                }
            }
        }
    }
    let mut stmts: &[syn::Stmt] = &item.block.stmts;
    if matches!(sig.output, syn::ReturnType::Type(..))
        && matches!(stmts.last(), Some(syn::Stmt::Expr(_, None)))
    {
        // The return type is already reported; its tail expression is the same mistake.
        stmts = &stmts[..stmts.len() - 1];
    }
    let body = block(cx, stmts);
    Some(KernelDef {
        attrs: item.attrs.clone(),
        vis: item.vis.clone(),
        name: sig.ident.clone(),
        consts,
        params,
        body,
    })
}

fn is_ident(ty: &syn::Type, name: &str) -> bool {
    matches!(ty, syn::Type::Path(p) if p.qself.is_none() && p.path.is_ident(name))
}

fn param(cx: &mut Ctxt, pt: &syn::PatType) -> Option<Param> {
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

fn path_name(p: &syn::Path) -> String {
    p.segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::")
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

/// Recognises `alloc_shared::<T, (dims)>()`. Returns `None` if `e` is not an allocation,
/// `Some(None)` if it is one but malformed (already reported).
#[allow(clippy::type_complexity)]
fn alloc_call(cx: &mut Ctxt, e: &syn::Expr) -> Option<Option<(Scope, Dtype, Vec<Expr>, Range)>> {
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

fn loop_vars(cx: &mut Ctxt, p: &syn::Pat) -> Option<Vec<syn::Ident>> {
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

fn loop_iter(cx: &mut Ctxt, e: &syn::Expr) -> Option<LoopIter> {
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

fn index_parts(cx: &mut Ctxt, ix: &syn::ExprIndex) -> Option<(syn::Ident, Vec<Expr>)> {
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
                        None => "the methods available are `.div_ceil(n)`, `.at(offsets)` and `.at_mut(offsets)`".into(),
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

/// `T::INFINITY`, `T::NEG_INFINITY` and `T::NAN` for a float type `T`: a literal of type `T`.
fn float_constant(p: &syn::ExprPath) -> Option<ExprKind> {
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

fn lit(cx: &mut Ctxt, l: &syn::Lit) -> Option<ExprKind> {
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
