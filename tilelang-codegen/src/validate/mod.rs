//! Pass 2, validate: [`ast`] → [`ir`]. Resolves names, infers and checks dtypes, enforces the
//! rules of the tile model (who may write what, where fragments may be indexed, which extents
//! must be constant), then checks every config's constants (shapes agree, extents positive).
//! All problems are collected; the IR is returned only when there were none.
//!
//! This file holds the kernel as a whole: its parameters, shape symbols and const generics, the
//! launch geometry and occupancy of the attribute, the configs and defaults; then it checks the
//! body and hands the IR to the per-config checks. The rest is by concept: `scope` (the
//! checker's state, bindings and name lookup), `stmt` (statements and loops), `access`
//! (element accesses), `expr` (expressions and dtypes), `builtins` (the table of builtins:
//! primitives, functions, loop iterators), `tile_ops` (the tile primitives), `functions` (calls
//! of functions), `config` (per-config checks) and `text` (the source text of `requires`
//! conditions).

use crate::ast::{self, Dtype};
use crate::attr::KernelAttr;
use crate::ctxt::Ctxt;
use crate::ir::{self, *};
use proc_macro2::Span;
use std::collections::HashMap;
use syn::Ident;

mod access;
mod builtins;
mod config;
mod expr;
mod functions;
mod scope;
mod stmt;
mod text;
mod tile_ops;

pub use builtins::names_all as builtin_names;
pub use config::MAX_TILE_ELEMENTS;
use config::{check_configs, check_threads};
use scope::{Binding, Checker};
use text::expr_text;

pub fn kernel(cx: &mut Ctxt, def: &ast::KernelDef, attr: &KernelAttr) -> Option<ir::Kernel> {
    let mut globals: HashMap<String, Binding> = HashMap::new();
    let consts: Vec<Ident> = def.consts.clone();
    for (i, c) in consts.iter().enumerate() {
        if globals.insert(c.to_string(), Binding::Const(i)).is_some() {
            cx.error(c.span(), format!("const generic `{c}` is declared twice"));
        }
    }
    // Shape symbols come from the tensor types, in order of first appearance.
    let mut symbols: Vec<Ident> = Vec::new();
    let mut params = Vec::new();
    for p in &def.params {
        let kind = match &p.kind {
            ast::ParamKind::Tensor {
                dtype,
                shape,
                mutable,
            } => {
                let dims = shape
                    .iter()
                    .filter_map(|d| match d {
                        ast::Dim::Sym(id) => match globals.get(&id.to_string()) {
                            Some(Binding::Const(i)) => Some(DimRef::Const(*i)),
                            Some(Binding::Sym(i)) => Some(DimRef::Sym(*i)),
                            _ => {
                                if !id.to_string().chars().next().is_some_and(|c| c.is_ascii_uppercase()) {
                                    cx.error_hint(id.span(), format!("shape symbol `{id}` should start with an upper-case letter"), "name dimensions like `M`, `N`, `K` or `SEQ`");
                                }
                                symbols.push(id.clone());
                                globals.insert(id.to_string(), Binding::Sym(symbols.len() - 1));
                                Some(DimRef::Sym(symbols.len() - 1))
                            }
                        },
                        ast::Dim::Lit(_, span) => {
                            cx.error_hint(*span, "literal dimensions are not supported", "use a symbol and `requires = [N == 7]`");
                            None
                        }
                    })
                    .collect();
                ParamKind::Tensor {
                    dtype: *dtype,
                    dims,
                    mutable: *mutable,
                }
            }
            ast::ParamKind::Scalar { dtype } => ParamKind::Scalar { dtype: *dtype },
        };
        params.push(ir::Param {
            name: p.name.clone(),
            kind,
        });
    }
    for (i, p) in params.iter().enumerate() {
        let name = p.name.to_string();
        if let Some(prev) = globals.get(&name) {
            let what = match prev {
                Binding::Const(_) => "a const generic",
                Binding::Sym(_) => "a shape symbol",
                _ => "another parameter",
            };
            cx.error_hint(
                p.name.span(),
                format!("parameter `{name}` has the same name as {what}"),
                "rename the parameter",
            );
            continue;
        }
        let b = match p.kind {
            ParamKind::Tensor { .. } => Binding::Tensor(i),
            ParamKind::Scalar { .. } => Binding::Scalar(i),
        };
        globals.insert(name, b);
    }

    check_reserved_names(cx, def);
    let mut ck = Checker {
        cx,
        scopes: vec![globals],
        params,
        vars: Vec::new(),
        var_depth: Vec::new(),
        buffers: Vec::new(),
        buf_mutable: Vec::new(),
        parallel_depth: 0,
        loop_depth: 0,
        loop_vars: Default::default(),
        grid_rank: (!attr.grid.is_empty()).then_some(attr.grid.len()),
    };

    // The launch geometry: grid over symbols, consts and scalars; threads constant.
    let grid: Vec<Expr> = attr
        .grid
        .iter()
        .filter_map(|g| ck.expr_as(g, Dtype::Index, "a grid dimension"))
        .collect();
    let threads = attr.threads.as_ref().and_then(|t| {
        let e = ck.expr_as(t, Dtype::Index, "`threads`")?;
        if !is_const(&e) {
            ck.cx.error_hint(
                t.span,
                "`threads` must be a constant",
                "use a literal or a const generic, e.g. `threads = 128`",
            );
        }
        Some(e)
    });
    let mut constant = |key: &str, example: &str, e: &Option<ast::Expr>| {
        let e = e.as_ref()?;
        let ir = ck.expr_as(e, Dtype::Index, &format!("`{key}`"))?;
        if !is_const(&ir) {
            ck.cx.error_hint(
                e.span,
                format!("`{key}` must be a constant"),
                format!("use a literal or a const generic, e.g. `{key} = {example}`"),
            );
            return None;
        }
        Some(ir)
    };
    let min_blocks = constant("min_blocks", "4", &attr.min_blocks);
    let max_registers = constant("max_registers", "64", &attr.max_registers);
    let occupancy = match (min_blocks, max_registers) {
        (Some(b), None) => Some(ir::Occupancy::MinBlocks(b)),
        (None, Some(r)) => Some(ir::Occupancy::MaxRegisters(r)),
        (None, None) => None,
        (Some(_), Some(r)) => {
            ck.cx.error_hint(
                r.span,
                "`min_blocks` and `max_registers` cannot both be given",
                "keep one: `min_blocks = B` caps registers at what B resident blocks leave; `max_registers = R` caps them directly",
            );
            None
        }
    };
    let requires: Vec<(Expr, String)> = attr
        .requires
        .iter()
        .filter_map(|r| {
            let e = ck.expr_as(r, Dtype::Bool, "a `requires` condition")?;
            Some((e, expr_text(r)))
        })
        .collect();

    let body = ck.block(&def.body);

    // Configs.
    let mut configs = Vec::new();
    if attr.configs.is_empty() {
        if !consts.is_empty() {
            ck.cx.error_hint(
                def.name.span(),
                format!("kernel `{}` has const generics but no `configs`", def.name),
                format!(
                    "add `configs = [default({})]` to the attribute",
                    consts
                        .iter()
                        .map(|c| format!("{c} = .."))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
        }
        configs.push(Config {
            name: Ident::new("default", Span::call_site()),
            values: Vec::new(),
        });
    }
    for c in &attr.configs {
        let mut values = vec![None; consts.len()];
        for (k, v, span) in &c.values {
            match consts.iter().position(|x| x == k) {
                Some(i) => values[i] = Some(*v),
                None => ck.cx.error_hint(
                    k.span(),
                    format!("`{k}` is not a const generic of this kernel"),
                    format!(
                        "the const generics are: {}",
                        if consts.is_empty() {
                            "none".to_string()
                        } else {
                            consts
                                .iter()
                                .map(|c| c.to_string())
                                .collect::<Vec<_>>()
                                .join(", ")
                        }
                    ),
                ),
            }
            let _ = span;
        }
        let missing: Vec<String> = consts
            .iter()
            .zip(&values)
            .filter(|(_, v)| v.is_none())
            .map(|(c, _)| c.to_string())
            .collect();
        if !missing.is_empty() {
            ck.cx.error_hint(
                c.name.span(),
                format!("config `{}` does not set {}", c.name, missing.join(", ")),
                "every config gives a value to every const generic",
            );
            continue;
        }
        configs.push(Config {
            name: c.name.clone(),
            values: values.into_iter().map(|v| v.unwrap()).collect(),
        });
    }
    let mut defaults = Vec::new();
    for (arch, cfg) in &attr.defaults {
        match configs.iter().position(|c| c.name == *cfg) {
            Some(i) => defaults.push((arch.to_string(), i)),
            None => ck.cx.error_hint(
                cfg.span(),
                format!("unknown config `{cfg}`"),
                format!(
                    "the configs are: {}{}",
                    configs
                        .iter()
                        .map(|c| c.name.to_string())
                        .collect::<Vec<_>>()
                        .join(", "),
                    if attr.configs.is_empty() {
                        " (a kernel without `configs` has the one config `default`)"
                    } else {
                        ""
                    }
                ),
            ),
        }
    }

    let Checker {
        cx,
        params,
        vars,
        buffers,
        ..
    } = ck;
    let threads = threads?;
    let complete = is_const(&threads) && configs.iter().all(|c| c.values.len() == consts.len());
    let body_errors = cx.has_errors();
    if body_errors && !complete {
        // The configs themselves are incomplete: only the launch geometry of those that are
        // whole can still be checked.
        for (ci, cfg) in configs
            .iter()
            .enumerate()
            .filter(|(_, c)| c.values.len() == consts.len() && is_const(&threads))
        {
            check_threads(
                cx,
                &threads,
                cfg,
                attr.configs
                    .get(ci)
                    .map_or(def.name.span().into(), |c| c.name.span().into()),
            );
        }
        return None;
    }
    let k = ir::Kernel {
        name: def.name.clone(),
        vis: def.vis.clone(),
        attrs: def.attrs.clone(),
        consts,
        symbols,
        params,
        grid,
        threads,
        occupancy,
        configs,
        defaults,
        requires,
        vars,
        buffers,
        body,
    };
    // With errors in the body the IR lacks the statements that had them (and whatever used
    // their names, which are poisoned), but what it has is whole: its per-config errors are
    // reported in the same round as the rest.
    check_configs(cx, &k, attr);
    (!cx.has_errors()).then_some(k)
}

/// Names the generated launcher uses itself, and raw identifiers (`r#a` is `a` there).
fn check_reserved_names(cx: &mut Ctxt, def: &ast::KernelDef) {
    let raw = |id: &Ident| id.to_string().starts_with("r#");
    if raw(&def.name) {
        cx.error_hint(
            def.name.span(),
            "raw identifiers cannot name a tile kernel",
            "rename the kernel",
        );
    }
    for c in &def.consts {
        let s = c.to_string();
        if raw(c)
            || s.starts_with("__")
            || ["NAME", "CONFIGS", "DEFAULTS", "SYMBOLS", "OBJECTS"].contains(&s.as_str())
        {
            cx.error_hint(
                c.span(),
                format!("`{s}` is reserved: the generated module defines it"),
                "rename the const generic",
            );
        }
    }
    for p in &def.params {
        let s = p.name.to_string();
        if raw(&p.name) {
            cx.error_hint(
                p.name.span(),
                format!("raw identifiers cannot name a parameter (`{s}`)"),
                "rename the parameter (raw identifiers are fine for `let` variables and buffers)",
            );
        } else if s.starts_with("__") || ["config", "args"].contains(&s.as_str()) {
            cx.error_hint(
                p.name.span(),
                format!("parameter name `{s}` is reserved by the generated launcher"),
                "rename the parameter",
            );
        }
    }
}
