//! Pass 1, parse: `syn` syntax → [`crate::ast`]. This pass knows which Rust constructs belong to the
//! kernel language; everything else becomes a spanned error with a hint. It never stops early:
//! an unsupported statement is reported and skipped so that later ones are checked too.
//!
//! This file holds the kernel's shape: its signature's qualifiers, const generics and
//! parameters, and its body. The rest is by concept: `signature` (parameters and tensor types),
//! `stmt` (statements), `loops` (loop variables and iterators), `alloc` (tile-buffer
//! allocations), `expr` (expressions) and `lit` (literals and float constants).

use crate::ast::*;
use crate::ctxt::{range, Ctxt};

mod alloc;
mod expr;
mod lit;
mod loops;
mod signature;
mod stmt;

pub use expr::expr;
use signature::{is_ident, param};
pub use stmt::block;

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
