//! The `#[tile_kernel(...)]` attribute: `key = value` pairs, each value a Rust expression.
//!
//! ```text
//! #[tile_kernel(
//!     grid = [N.div_ceil(BLOCK)],                 // 1 to 3 block-count expressions
//!     threads = THREADS,                          // threads per block: a constant expression
//!     configs = [small(BLOCK = 256, THREADS = 64), large(BLOCK = 1024, THREADS = 256)],
//!     defaults = [gfx1100 = small, sm_90 = large],// the default config per target arch
//!     requires = [N % BLOCK == 0],                // launch-time conditions on shapes and configs
//!     min_blocks = 4,                             // or `max_registers = 64`: occupancy, per config
//! )]
//! ```

use crate::ast::Expr;
use crate::ctxt::{range, Ctxt, Range};
use crate::parse;
use proc_macro2::{Span, TokenStream};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::Ident;

pub const KEYS: &[&str] = &[
    "grid",
    "threads",
    "configs",
    "defaults",
    "requires",
    "min_blocks",
    "max_registers",
];

/// Target architectures a `defaults` entry may name.
pub const ARCHS: &[&str] = &[
    "cpu", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "gfx1030", "gfx1100", "gfx1151",
    "gfx1201", "gfx90a", "gfx942",
];

#[derive(Debug, Clone)]
pub struct KernelAttr {
    pub span: Span,
    pub grid: Vec<Expr>,
    pub grid_span: Range,
    pub threads: Option<Expr>,
    pub configs: Vec<ConfigDef>,
    pub defaults: Vec<(Ident, Ident)>,
    pub requires: Vec<Expr>,
    /// Blocks that must fit on one multiprocessor at once (a register cap the device
    /// compiler meets), a constant expression per config.
    pub min_blocks: Option<Expr>,
    /// Registers per thread at most, a constant expression per config.
    pub max_registers: Option<Expr>,
}

#[derive(Debug, Clone)]
pub struct ConfigDef {
    pub name: Ident,
    pub values: Vec<(Ident, u64, Range)>,
}

pub fn parse(cx: &mut Ctxt, tokens: TokenStream) -> KernelAttr {
    let span = Span::call_site();
    let mut out = KernelAttr {
        span,
        grid: Vec::new(),
        grid_span: span.into(),
        threads: None,
        configs: Vec::new(),
        defaults: Vec::new(),
        requires: Vec::new(),
        min_blocks: None,
        max_registers: None,
    };
    let items = match Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated.parse2(tokens) {
        Ok(items) => items,
        Err(e) => {
            cx.error_hint(
                e.span(),
                format!("cannot parse the `tile_kernel` attribute: {e}"),
                "write `#[tile_kernel(grid = [..], threads = N)]`",
            );
            return out;
        }
    };
    let mut seen: Vec<Ident> = Vec::new();
    let mut has_grid = false;
    for item in items {
        let syn::Expr::Assign(assign) = &item else {
            cx.error_hint(
                range(&item),
                "expected `key = value`",
                format!("the keys are {}", KEYS.join(", ")),
            );
            continue;
        };
        let key = match &*assign.left {
            syn::Expr::Path(p) if p.path.get_ident().is_some() => {
                p.path.get_ident().unwrap().clone()
            }
            other => {
                cx.error_hint(
                    range(&other),
                    "expected a key name",
                    format!("the keys are {}", KEYS.join(", ")),
                );
                continue;
            }
        };
        if let Some(prev) = seen.iter().find(|k| **k == key) {
            let _ = prev;
            cx.error_hint(
                range(&key),
                format!("duplicate key `{key}`"),
                "give each key once",
            );
            continue;
        }
        seen.push(key.clone());
        let value = &*assign.right;
        match key.to_string().as_str() {
            "grid" => {
                has_grid = true;
                out.grid_span = range(&value);
                let syn::Expr::Array(arr) = value else {
                    cx.error_hint(
                        range(&value),
                        "`grid` must be a list of 1 to 3 block counts",
                        "write `grid = [N.div_ceil(BLOCK)]` or `grid = [GX, GY]`",
                    );
                    continue;
                };
                if arr.elems.is_empty() || arr.elems.len() > 3 {
                    cx.error_hint(
                        range(&value),
                        format!("`grid` has 1 to 3 dimensions, found {}", arr.elems.len()),
                        "write `grid = [X]`, `[X, Y]` or `[X, Y, Z]`",
                    );
                    continue;
                }
                out.grid = arr
                    .elems
                    .iter()
                    .filter_map(|e| parse::expr(cx, e))
                    .collect();
            }
            "threads" => out.threads = parse::expr(cx, value),
            "min_blocks" => out.min_blocks = parse::expr(cx, value),
            "max_registers" => out.max_registers = parse::expr(cx, value),
            "configs" => {
                let syn::Expr::Array(arr) = value else {
                    cx.error_hint(
                        range(&value),
                        "`configs` must be a list of named configs",
                        "write `configs = [small(BM = 64, BN = 64), large(BM = 128, BN = 128)]`",
                    );
                    continue;
                };
                for c in &arr.elems {
                    if let Some(cfg) = config(cx, c) {
                        let variant = |n: &Ident| crate::launcher::variant_name(&n.to_string());
                        if out.configs.iter().any(|o| o.name == cfg.name) {
                            cx.error_hint(
                                range(&cfg.name),
                                format!("duplicate config `{}`", cfg.name),
                                "give each config a different name",
                            );
                        } else if let Some(o) = out
                            .configs
                            .iter()
                            .find(|o| variant(&o.name) == variant(&cfg.name))
                        {
                            cx.error_hint(
                                range(&cfg.name),
                                format!(
                                    "configs `{}` and `{}` are both `Config::{}` in the launcher",
                                    o.name,
                                    cfg.name,
                                    variant(&cfg.name)
                                ),
                                "rename one: configs become UpperCamelCase variants (`small_tile` is `SmallTile`)",
                            );
                        } else {
                            out.configs.push(cfg);
                        }
                    }
                }
                if arr.elems.is_empty() {
                    cx.error_hint(range(&value), "`configs` is empty", "list at least one config, or remove the key for a kernel without const generics");
                }
            }
            "defaults" => {
                let syn::Expr::Array(arr) = value else {
                    cx.error_hint(
                        range(&value),
                        "`defaults` must be a list of `arch = config`",
                        "write `defaults = [gfx1100 = small, sm_90 = large]`",
                    );
                    continue;
                };
                for d in &arr.elems {
                    let pair = match d {
                        syn::Expr::Assign(a) => match (&*a.left, &*a.right) {
                            (syn::Expr::Path(l), syn::Expr::Path(r))
                                if l.path.get_ident().is_some() && r.path.get_ident().is_some() =>
                            {
                                Some((
                                    l.path.get_ident().unwrap().clone(),
                                    r.path.get_ident().unwrap().clone(),
                                ))
                            }
                            _ => None,
                        },
                        _ => None,
                    };
                    match pair {
                        Some((arch, cfg)) => {
                            if !ARCHS.contains(&arch.to_string().as_str()) {
                                cx.error_hint(
                                    range(&arch),
                                    format!("unknown target arch `{arch}`"),
                                    format!("known archs: {}", ARCHS.join(", ")),
                                );
                            } else if out.defaults.iter().any(|(a, _)| *a == arch) {
                                cx.error_hint(
                                    range(&arch),
                                    format!("duplicate default for `{arch}`"),
                                    "give one default config per arch",
                                );
                            } else {
                                out.defaults.push((arch, cfg));
                            }
                        }
                        None => cx.error_hint(
                            range(&d),
                            "expected `arch = config`",
                            "write `defaults = [gfx1100 = small, sm_90 = large]`",
                        ),
                    }
                }
            }
            "requires" => {
                let syn::Expr::Array(arr) = value else {
                    cx.error_hint(
                        range(&value),
                        "`requires` must be a list of conditions",
                        "write `requires = [K % BK == 0]`",
                    );
                    continue;
                };
                out.requires = arr
                    .elems
                    .iter()
                    .filter_map(|e| parse::expr(cx, e))
                    .collect();
            }
            other => cx.error_hint(
                range(&key),
                format!("unknown key `{other}` in `tile_kernel`"),
                format!("the keys are {}", KEYS.join(", ")),
            ),
        }
    }
    if !has_grid {
        cx.error_hint(
            span,
            "missing `grid` in `tile_kernel`",
            "add `grid = [..]`: the number of blocks, e.g. `grid = [N.div_ceil(BLOCK)]`",
        );
    }
    if out.threads.is_none() && !seen.iter().any(|k| k == "threads") {
        cx.error_hint(
            span,
            "missing `threads` in `tile_kernel`",
            "add `threads = 128` (threads per block; a constant or const generic)",
        );
    }
    out
}

fn config(cx: &mut Ctxt, e: &syn::Expr) -> Option<ConfigDef> {
    let hint = "write a config as `name(BM = 128, BN = 64)`";
    let syn::Expr::Call(call) = e else {
        cx.error_hint(range(e), "expected a named config", hint);
        return None;
    };
    let name = match &*call.func {
        syn::Expr::Path(p) if p.path.get_ident().is_some() => p.path.get_ident().unwrap().clone(),
        other => {
            cx.error_hint(range(&other), "expected a config name", hint);
            return None;
        }
    };
    let mut values = Vec::new();
    for a in &call.args {
        let syn::Expr::Assign(asg) = a else {
            cx.error_hint(range(&a), "expected `CONST = value`", hint);
            continue;
        };
        let key = match &*asg.left {
            syn::Expr::Path(p) if p.path.get_ident().is_some() => {
                p.path.get_ident().unwrap().clone()
            }
            other => {
                cx.error_hint(range(&other), "expected a const generic name", hint);
                continue;
            }
        };
        let v = match &*asg.right {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(i),
                ..
            }) => i.base10_parse::<u64>().ok(),
            _ => None,
        };
        match v {
            Some(v) => {
                if values
                    .iter()
                    .any(|(k, _, _): &(Ident, u64, Range)| *k == key)
                {
                    cx.error_hint(
                        range(&key),
                        format!("`{key}` is given twice in config `{name}`"),
                        "give each const once",
                    );
                } else {
                    values.push((key, v, range(&asg.right)));
                }
            }
            None => cx.error_hint(
                range(&asg.right),
                "config values must be integer literals",
                "write e.g. `BM = 128`",
            ),
        }
    }
    Some(ConfigDef { name, values })
}
