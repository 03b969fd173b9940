//! Pass 2, validate: [`ast`] → [`ir`]. Resolves names, infers and checks dtypes, enforces the
//! rules of the tile model (who may write what, where fragments may be indexed, which extents
//! must be constant), then checks every config's constants (shapes agree, extents positive).
//! All problems are collected; the IR is returned only when there were none.

use crate::ast::{self, Dtype};
use crate::attr::KernelAttr;
use crate::ctxt::Range;
use crate::ctxt::{count, Ctxt};
use crate::ir::visit::walk;
use crate::ir::{self, *};
use proc_macro2::Span;
use std::collections::HashMap;
use syn::Ident;

const PRIMITIVES: &[&str] = &[
    "copy",
    "fill",
    "clear",
    "gemm",
    "reduce_sum",
    "reduce_max",
    "atomic_add",
];
/// The functions a kernel may call, as listed in hints: the math library, then the rest.
fn functions() -> String {
    let math = MathFn::ALL.iter().map(|f| f.name());
    math.chain(["if_then_else", "block_idx"])
        .collect::<Vec<_>>()
        .join(", ")
}
const ORDINALS: [&str; 3] = ["first", "second", "third"];

#[derive(Clone, Copy)]
enum Binding {
    Var(VarId),
    Buffer(BufId),
    Tensor(ParamId),
    Scalar(ParamId),
    Const(usize),
    Sym(usize),
    /// A name whose declaration failed to check: uses are silently skipped, so one mistake
    /// gives one error, not one per use.
    Poisoned,
}

struct Checker<'a> {
    cx: &'a mut Ctxt,
    scopes: Vec<HashMap<String, Binding>>,
    params: Vec<ir::Param>,
    vars: Vec<Var>,
    /// Parallel-loop depth at which each var was declared.
    var_depth: Vec<usize>,
    buffers: Vec<Buffer>,
    buf_mutable: Vec<bool>,
    parallel_depth: usize,
    /// Loops and `if` branches enclosing the current statement.
    loop_depth: usize,
    loop_vars: std::collections::HashSet<VarId>,
    /// `None` when the `grid` attribute itself failed to parse.
    grid_rank: Option<usize>,
}

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

/// Source text of an attribute expression, for error messages at launch.
fn expr_text(e: &ast::Expr) -> String {
    use ast::ExprKind as K;
    match &e.kind {
        K::Int(v, _) => v.to_string(),
        K::Float(v, _) => v.to_string(),
        K::Bool(b) => b.to_string(),
        K::Var(id) => id.to_string(),
        K::Binary(op, a, b) => {
            let p = precedence(e);
            format!(
                "{} {} {}",
                expr_text_in(a, p, false),
                op.symbol(),
                expr_text_in(b, p, true)
            )
        }
        K::Unary(ast::UnOp::Neg, a) => format!("-{}", expr_text_in(a, 11, false)),
        K::Unary(ast::UnOp::Not, a) => format!("!{}", expr_text_in(a, 11, false)),
        K::Cast(a, t) => format!("{} as {}", expr_text_in(a, 10, false), t),
        K::Call(f, args) => format!(
            "{}({})",
            f,
            args.iter().map(expr_text).collect::<Vec<_>>().join(", ")
        ),
        K::DivCeil(a, b) => format!("{}.div_ceil({})", expr_text_in(a, 12, false), expr_text(b)),
        _ => "..".to_string(),
    }
}

/// Rust's binding strength of an operator (higher binds tighter).
fn precedence(e: &ast::Expr) -> u8 {
    use ast::BinOp::*;
    match &e.kind {
        ast::ExprKind::Binary(op, ..) => match op {
            Or => 1,
            And => 2,
            Eq | Ne | Lt | Le | Gt | Ge => 3,
            BitOr => 4,
            BitXor => 5,
            BitAnd => 6,
            Shl | Shr => 7,
            Add | Sub => 8,
            Mul | Div | Rem => 9,
        },
        ast::ExprKind::Cast(..) => 10,
        ast::ExprKind::Unary(..) => 11,
        _ => 12,
    }
}

/// The text of a child of `parent`, parenthesised only where Rust would need it.
fn expr_text_in(e: &ast::Expr, parent: u8, right: bool) -> String {
    let p = precedence(e);
    if p < parent || (right && p == parent && p < 10) {
        format!("({})", expr_text(e))
    } else {
        expr_text(e)
    }
}

fn is_float_literal(e: &ast::Expr) -> bool {
    match &e.kind {
        ast::ExprKind::Float(..) => true,
        ast::ExprKind::Unary(ast::UnOp::Neg, x) => is_float_literal(x),
        _ => false,
    }
}

fn is_untyped_literal(e: &ast::Expr) -> bool {
    match &e.kind {
        ast::ExprKind::Int(_, None) | ast::ExprKind::Float(_, None) => true,
        ast::ExprKind::Unary(ast::UnOp::Neg, x) => is_untyped_literal(x),
        _ => false,
    }
}

impl Checker<'_> {
    /// The binding of a name; `None` for unknown and for poisoned names.
    fn lookup(&self, name: &Ident) -> Option<Binding> {
        let s = name.to_string();
        match self.scopes.iter().rev().find_map(|sc| sc.get(&s).copied()) {
            Some(Binding::Poisoned) => None,
            b => b,
        }
    }

    /// Whether `name` is bound to a value whose definition had an error: its uses say
    /// nothing more.
    fn poisoned(&self, name: &Ident) -> bool {
        let s = name.to_string();
        self.scopes
            .iter()
            .rev()
            .find_map(|sc| sc.get(&s))
            .is_some_and(|b| matches!(b, Binding::Poisoned))
    }

    fn unknown_name(&mut self, name: &Ident) {
        let s = name.to_string();
        if self.poisoned(name) {
            return;
        }
        let hint = if s.chars().next().is_some_and(|c| c.is_ascii_uppercase()) {
            "shape symbols come from tensor types (e.g. `a: &Tensor<f32, (M, N)>` defines `M` and `N`); tile sizes are const generics".to_string()
        } else if PRIMITIVES.contains(&s.as_str()) || MathFn::from_name(&s).is_some() {
            format!("`{s}` is a function; call it")
        } else {
            "declare it with `let` before this point, or add a parameter".to_string()
        };
        self.cx
            .error_hint(name.span(), format!("unknown name `{s}`"), hint);
    }

    fn bind(&mut self, name: &Ident, b: Binding) {
        self.scopes.last_mut().unwrap().insert(name.to_string(), b);
    }

    fn new_var(&mut self, name: &Ident, ty: Dtype, mutable: bool) -> VarId {
        self.vars.push(Var {
            name: name.clone(),
            ty,
            mutable,
        });
        self.var_depth.push(self.parallel_depth);
        let id = self.vars.len() - 1;
        self.bind(name, Binding::Var(id));
        id
    }

    fn block(&mut self, stmts: &[ast::Stmt]) -> Vec<Stmt> {
        self.scopes.push(HashMap::new());
        let out = stmts.iter().filter_map(|s| self.stmt(s)).collect();
        self.scopes.pop();
        out
    }

    fn stmt(&mut self, s: &ast::Stmt) -> Option<Stmt> {
        match s {
            ast::Stmt::Let {
                name,
                mutable,
                ty,
                init,
            } => {
                let e = match ty {
                    Some((t, _)) => self.expr_as(init, *t, "this `let`"),
                    None => self.expr(init, None),
                };
                let Some(e) = e else {
                    self.bind(name, Binding::Poisoned);
                    return None;
                };
                let var = self.new_var(name, e.ty, *mutable);
                Some(Stmt {
                    kind: StmtKind::Let { var, init: e },
                    span: name.span().into(),
                })
            }
            ast::Stmt::Alloc {
                name,
                mutable,
                scope,
                dtype,
                shape,
                span,
            } => {
                let scope = match scope {
                    ast::Scope::Shared => Scope::Shared,
                    ast::Scope::Fragment => Scope::Fragment,
                    ast::Scope::Local => Scope::Local,
                };
                match scope {
                    Scope::Shared | Scope::Fragment if self.loop_depth > 0 => {
                        self.cx.error_hint(
                            *span,
                            format!(
                                "{} buffers are allocated once per block, outside every loop and `if`",
                                scope.name()
                            ),
                            "move the allocation to the top level of the kernel",
                        );
                    }
                    Scope::Local if self.parallel_depth == 0 => {
                        self.cx.error_hint(*span, "`alloc_local` is per-thread storage and must be inside a `parallel` loop", "allocate it inside `for i in parallel(..)`, or use `alloc_fragment` for a block-level tile");
                    }
                    _ => {}
                }
                let dims_in = shape.len();
                let shape: Vec<Expr> = shape
                    .iter()
                    .filter_map(|d| {
                        let e = self.expr_as(d, Dtype::Index, "a buffer dimension")?;
                        if !is_const(&e) {
                            self.cx.error_hint(d.span, "buffer dimensions must be constants", "use literals and const generics; shapes known only at launch belong to tensors");
                            return None;
                        }
                        Some(e)
                    })
                    .collect::<Vec<_>>();
                if shape.len() != dims_in {
                    return None;
                }
                self.buffers.push(Buffer {
                    name: name.clone(),
                    scope,
                    dtype: *dtype,
                    shape,
                    span: *span,
                });
                self.buf_mutable.push(*mutable);
                let id = self.buffers.len() - 1;
                self.bind(name, Binding::Buffer(id));
                Some(Stmt {
                    kind: StmtKind::Alloc(id),
                    span: *span,
                })
            }
            ast::Stmt::Assign {
                target,
                op,
                value,
                span,
            } => self.assign(target, *op, value, *span),
            ast::Stmt::For {
                vars,
                iter,
                body,
                span,
            } => self.for_loop(vars, iter, body, *span),
            ast::Stmt::If {
                cond,
                then,
                els,
                span,
            } => {
                let cond = self.expr_as(cond, Dtype::Bool, "an `if` condition");
                self.loop_depth += 1;
                let then = self.block(then);
                let els = els.as_ref().map(|e| self.block(e)).unwrap_or_default();
                self.loop_depth -= 1;
                Some(Stmt {
                    kind: StmtKind::If {
                        cond: cond?,
                        then,
                        els,
                    },
                    span: *span,
                })
            }
            ast::Stmt::Poisoned(name) => {
                self.bind(name, Binding::Poisoned);
                None
            }
            ast::Stmt::Call { func, args, span } => self.call_stmt(func, args, *span),
        }
    }

    fn assign(
        &mut self,
        target: &ast::Place,
        op: Option<BinOp>,
        value: &ast::Expr,
        span: Range,
    ) -> Option<Stmt> {
        match target {
            ast::Place::Var(name) => {
                let b = match self.lookup(name) {
                    Some(b) => b,
                    None => {
                        self.unknown_name(name);
                        return None;
                    }
                };
                let var = match b {
                    Binding::Var(v) => v,
                    Binding::Poisoned => return None,
                    Binding::Buffer(_) | Binding::Tensor(_) => {
                        self.cx.error_hint(name.span(), format!("cannot assign to `{name}` as a whole"), format!("assign elements: `{name}[(i, j)] = ..`, or use `fill(&mut {name}, value)`"));
                        return None;
                    }
                    Binding::Scalar(_) | Binding::Const(_) | Binding::Sym(_) => {
                        self.cx.error_hint(name.span(), format!("cannot assign to `{name}`: it is a parameter, shape symbol or const generic"), format!("copy it into a local first: `let mut {} = {name};`", name.to_string().to_lowercase()));
                        return None;
                    }
                };
                if self.loop_vars.contains(&var) {
                    self.cx.error_hint(
                        name.span(),
                        format!("cannot assign to loop variable `{name}`"),
                        format!("copy it into a local first: `let mut j = {name};`"),
                    );
                } else if !self.vars[var].mutable {
                    self.cx.error_hint(
                        name.span(),
                        format!("cannot assign twice to immutable variable `{name}`"),
                        format!("declare it `let mut {name}`"),
                    );
                }
                if self.var_depth[var] < self.parallel_depth {
                    self.cx.error_hint(
                        name.span(),
                        format!("`{name}` is declared outside this `parallel` loop; assigning to it from the loop is a data race"),
                        "declare the variable inside the loop, store into a buffer element, or use `reduce_sum` / `reduce_max`",
                    );
                }
                let ty = self.vars[var].ty;
                let v = self.expr_as(value, ty, "this assignment")?;
                let value = match op {
                    None => v,
                    Some(op) => self.compound(
                        op,
                        Expr {
                            kind: ExprKind::Var(var),
                            ty,
                            span: name.span().into(),
                        },
                        v,
                        span,
                    )?,
                };
                Some(Stmt {
                    kind: StmtKind::Assign { var, value },
                    span,
                })
            }
            ast::Place::Elem {
                base,
                index,
                span: espan,
            } => {
                let access = self.access(base, index, true, *espan)?;
                let ty = self.target_dtype(access.target);
                let v = self.expr_as(value, ty, "this store")?;
                let value = match op {
                    None => v,
                    Some(op) => {
                        let old = Expr {
                            kind: ExprKind::Load(access.clone()),
                            ty,
                            span: *espan,
                        };
                        self.compound(op, old, v, span)?
                    }
                };
                Some(Stmt {
                    kind: StmtKind::Store { access, value },
                    span,
                })
            }
        }
    }

    fn compound(&mut self, op: BinOp, old: Expr, v: Expr, span: Range) -> Option<Expr> {
        self.check_binary_types(op, old.ty, span)?;
        Some(Expr {
            ty: old.ty,
            kind: ExprKind::Binary(op, Box::new(old), Box::new(v)),
            span,
        })
    }

    fn target_dtype(&self, t: Target) -> Dtype {
        match t {
            Target::Tensor(p) => match self.params[p].kind {
                ParamKind::Tensor { dtype, .. } => dtype,
                ParamKind::Scalar { dtype } => dtype,
            },
            Target::Buffer(b) => self.buffers[b].dtype,
        }
    }

    fn target_rank(&self, t: Target) -> usize {
        match t {
            Target::Tensor(p) => match &self.params[p].kind {
                ParamKind::Tensor { dims, .. } => dims.len(),
                ParamKind::Scalar { .. } => 0,
            },
            Target::Buffer(b) => self.buffers[b].shape.len(),
        }
    }

    /// Resolves an element access `base[index]`, checking rank, index types and the rules on
    /// writes and fragments.
    fn access(
        &mut self,
        base: &Ident,
        index: &[ast::Expr],
        write: bool,
        span: Range,
    ) -> Option<Access> {
        let target = match self.lookup(base) {
            None => {
                self.unknown_name(base);
                return None;
            }
            Some(Binding::Tensor(p)) => {
                if write {
                    if let ParamKind::Tensor { mutable: false, .. } = self.params[p].kind {
                        self.cx.error_hint(
                            base.span(),
                            format!("cannot write to `{base}`: it is a read-only tensor"),
                            format!("declare the parameter as `{base}: &mut Tensor<..>`"),
                        );
                    }
                }
                Target::Tensor(p)
            }
            Some(Binding::Buffer(b)) => {
                if write && !self.buf_mutable[b] {
                    self.cx.error_hint(
                        base.span(),
                        format!("cannot write to buffer `{base}`: it is not declared `mut`"),
                        format!("declare it `let mut {base} = ...`"),
                    );
                }
                if self.buffers[b].scope == Scope::Fragment && self.parallel_depth == 0 {
                    self.cx.error_hint(
                        base.span(),
                        format!("fragment `{base}` is indexed outside a `parallel` loop"),
                        "a fragment is spread over the threads' registers: index it inside `for .. in parallel(..)`, or use a shared buffer",
                    );
                }
                Target::Buffer(b)
            }
            Some(_) => {
                self.cx.error_hint(
                    base.span(),
                    format!("`{base}` is a scalar and cannot be indexed"),
                    "only tensors and tile buffers have elements",
                );
                return None;
            }
        };
        let rank = self.target_rank(target);
        if rank != index.len() {
            self.cx.error_hint(
                span,
                format!(
                    "`{base}` has {rank} dimension{}, but {} index{} given",
                    if rank == 1 { "" } else { "s" },
                    index.len(),
                    if index.len() == 1 { " is" } else { "es are" }
                ),
                format!(
                    "write {} index{}: `{base}[{}]`",
                    rank,
                    if rank == 1 { "" } else { "es" },
                    if rank == 1 {
                        "i".to_string()
                    } else {
                        format!("({})", ["i", "j", "k", "l"][..rank.min(4)].join(", "))
                    }
                ),
            );
            return None;
        }
        let idx: Vec<Expr> = index
            .iter()
            .filter_map(|i| self.expr_as(i, Dtype::Index, "an index"))
            .collect();
        (idx.len() == index.len()).then_some(Access { target, index: idx })
    }

    fn for_loop(
        &mut self,
        vars: &[Ident],
        iter: &ast::LoopIter,
        body: &[ast::Stmt],
        span: Range,
    ) -> Option<Stmt> {
        let kind = match iter {
            ast::LoopIter::Parallel {
                extents,
                span: ispan,
            } => {
                if self.parallel_depth > 0 {
                    self.cx.error_hint(*ispan, "`parallel` loops cannot be nested", "use one multi-dimensional loop: `for (i, j) in parallel(BM, BN)`, or a `serial` loop inside");
                }
                if vars.len() != extents.len() {
                    self.cx.error_hint(
                        span,
                        format!(
                            "`parallel` has {} extent{} but {} loop variable{}",
                            extents.len(),
                            if extents.len() == 1 { "" } else { "s" },
                            vars.len(),
                            if vars.len() == 1 { "" } else { "s" }
                        ),
                        "give one variable per extent: `for (i, j) in parallel(BM, BN)`",
                    );
                }
                let ex: Vec<Expr> = extents
                    .iter()
                    .filter_map(|e| {
                        let x = self.expr_as(e, Dtype::Index, "a `parallel` extent")?;
                        if !is_const(&x) {
                            self.cx.error_hint(e.span, "a `parallel` extent must be a constant", "use literals and const generics (tile sizes); guard the tail with `if` inside the loop");
                            return None;
                        }
                        Some(x)
                    })
                    .collect();
                if ex.len() != extents.len() {
                    return None;
                }
                LoopKind::Parallel { extents: ex }
            }
            ast::LoopIter::Serial { start, end, .. } => {
                if vars.len() != 1 {
                    self.cx.error_hint(
                        span,
                        "a `serial` loop has one loop variable",
                        "write `for k in serial(n)`",
                    );
                }
                let s = match start {
                    Some(s) => self.expr_as(s, Dtype::Index, "a loop bound"),
                    None => Some(Expr {
                        kind: ExprKind::Int(0),
                        ty: Dtype::Index,
                        span,
                    }),
                };
                let e = self.expr_as(end, Dtype::Index, "a loop bound");
                LoopKind::Serial { start: s?, end: e? }
            }
            ast::LoopIter::Pipelined { extent, stages, .. } => {
                if vars.len() != 1 {
                    self.cx.error_hint(
                        span,
                        "a `pipelined` loop has one loop variable",
                        "write `for k in pipelined(n, STAGES)`",
                    );
                }
                if self.parallel_depth > 0 {
                    self.cx.error_hint(
                        span,
                        "`pipelined` loops cannot be inside a `parallel` loop",
                        "pipeline the block-level loop that issues the copies",
                    );
                }
                let e = self.expr_as(extent, Dtype::Index, "a loop bound");
                let s = self.expr_as(stages, Dtype::Index, "the number of stages");
                if let Some(s) = &s {
                    if !is_const(s) {
                        self.cx.error_hint(
                            stages.span,
                            "the number of pipeline stages must be a constant",
                            "use a literal or a const generic",
                        );
                    }
                }
                LoopKind::Pipelined {
                    extent: e?,
                    stages: s?,
                }
            }
        };
        let parallel = matches!(kind, LoopKind::Parallel { .. });
        self.scopes.push(HashMap::new());
        if parallel {
            self.parallel_depth += 1;
        }
        self.loop_depth += 1;
        let ids: Vec<VarId> = vars
            .iter()
            .map(|v| self.new_var(v, Dtype::Index, false))
            .collect();
        self.loop_vars.extend(ids.iter().copied());
        let body = self.block(body);
        self.loop_depth -= 1;
        if parallel {
            self.parallel_depth -= 1;
        }
        self.scopes.pop();
        Some(Stmt {
            kind: StmtKind::For {
                kind,
                vars: ids,
                body,
            },
            span,
        })
    }

    /// A buffer operand `&x` / `&mut x`.
    fn buffer_arg(
        &mut self,
        e: &ast::Expr,
        write: bool,
        func: &Ident,
        what: &str,
    ) -> Option<BufId> {
        let (name, is_mut) = match &e.kind {
            ast::ExprKind::Ref(n, m) => (n, *m),
            ast::ExprKind::Var(n) => {
                self.cx.error_hint(
                    e.span,
                    format!("`{func}` takes {what} by reference"),
                    format!("write `{}{n}`", if write { "&mut " } else { "&" }),
                );
                return None;
            }
            _ => {
                self.cx.error_hint(
                    e.span,
                    format!("`{func}` expects {what} here"),
                    format!(
                        "pass a tile buffer: `{}tile`",
                        if write { "&mut " } else { "&" }
                    ),
                );
                return None;
            }
        };
        let b = match self.lookup(name) {
            Some(Binding::Buffer(b)) => b,
            Some(Binding::Tensor(_)) => {
                self.cx.error_hint(
                    e.span,
                    format!("`{func}` expects a tile buffer, but `{name}` is a global tensor"),
                    format!("copy a tile of it first: `copy({name}.at((..)), &mut tile)`"),
                );
                return None;
            }
            Some(_) => {
                self.cx.error_hint(
                    e.span,
                    format!("`{func}` expects a tile buffer, but `{name}` is a scalar"),
                    "allocate a buffer with `alloc_shared` or `alloc_fragment`",
                );
                return None;
            }
            None => {
                self.unknown_name(name);
                return None;
            }
        };
        if write && !is_mut {
            self.cx.error_hint(
                e.span,
                format!("`{func}` writes {what}"),
                format!("pass it as `&mut {name}`"),
            );
        }
        if write && !self.buf_mutable[b] {
            self.cx.error_hint(
                name.span(),
                format!("cannot write to buffer `{name}`: it is not declared `mut`"),
                format!("declare it `let mut {name} = ...`"),
            );
        }
        Some(b)
    }

    fn tile_arg(&mut self, e: &ast::Expr, write: bool) -> Option<Tile> {
        let copy = Ident::new("copy", e.span.start);
        match &e.kind {
            ast::ExprKind::Region {
                tensor,
                offsets,
                mutable,
            } => {
                let p = match self.lookup(tensor) {
                    Some(Binding::Tensor(p)) => p,
                    Some(Binding::Buffer(_)) => {
                        self.cx.error_hint(
                            e.span,
                            format!(
                                "`.at()` applies to global tensors; `{tensor}` is a tile buffer"
                            ),
                            format!("pass the buffer itself: `&{tensor}`"),
                        );
                        return None;
                    }
                    Some(_) => {
                        self.cx.error_hint(
                            e.span,
                            format!("`{tensor}` is not a tensor"),
                            "`.at((..))` takes a tile of a tensor parameter",
                        );
                        return None;
                    }
                    None => {
                        self.unknown_name(tensor);
                        return None;
                    }
                };
                if write && !mutable {
                    self.cx.error_hint(
                        e.span,
                        "the destination of `copy` must be writable",
                        format!("write `{tensor}.at_mut((..))`"),
                    );
                }
                if !write && *mutable {
                    self.cx.error_hint(
                        e.span,
                        "the source of `copy` is read, not written",
                        format!("write `{tensor}.at((..))`"),
                    );
                }
                if write {
                    if let ParamKind::Tensor { mutable: false, .. } = self.params[p].kind {
                        self.cx.error_hint(
                            tensor.span(),
                            format!("cannot write to `{tensor}`: it is a read-only tensor"),
                            format!("declare the parameter as `{tensor}: &mut Tensor<..>`"),
                        );
                    }
                }
                let rank = self.target_rank(Target::Tensor(p));
                if offsets.len() != rank {
                    self.cx.error_hint(
                        e.span,
                        format!(
                            "`{tensor}` has {rank} dimension{}, but {} offset{} given",
                            if rank == 1 { "" } else { "s" },
                            offsets.len(),
                            if offsets.len() == 1 { " is" } else { "s are" }
                        ),
                        format!(
                            "give one offset per dimension: `{tensor}.at(({}))`",
                            vec!["0"; rank].join(", ")
                        ),
                    );
                    return None;
                }
                let offs: Vec<Expr> = offsets
                    .iter()
                    .filter_map(|o| self.expr_as(o, Dtype::Index, "a tile offset"))
                    .collect();
                (offs.len() == offsets.len()).then_some(Tile::Region {
                    tensor: p,
                    offsets: offs,
                })
            }
            ast::ExprKind::Var(name) if matches!(self.lookup(name), Some(Binding::Tensor(_))) => {
                self.cx.error_hint(
                    e.span,
                    format!("`copy` moves tiles; pass a tile of `{name}`"),
                    format!(
                        "write `{name}.{}((row, col))` for the tile at that element offset",
                        if write { "at_mut" } else { "at" }
                    ),
                );
                None
            }
            _ => self
                .buffer_arg(
                    e,
                    write,
                    &copy,
                    if write { "a destination" } else { "a source" },
                )
                .map(Tile::Buffer),
        }
    }

    fn arity(
        &mut self,
        func: &Ident,
        args: &[ast::Expr],
        n: usize,
        usage: &str,
        span: Range,
    ) -> bool {
        if args.len() != n {
            self.cx.error_hint(
                span,
                format!(
                    "`{func}` takes {}, found {}",
                    count(n, "argument"),
                    args.len()
                ),
                format!("write `{usage}`"),
            );
            return false;
        }
        true
    }

    fn call_stmt(&mut self, func: &Ident, args: &[ast::Expr], span: Range) -> Option<Stmt> {
        let name = func.to_string();
        if self.parallel_depth > 0 && name != "atomic_add" && PRIMITIVES.contains(&name.as_str()) {
            self.cx.error_hint(
                func.span(),
                format!("`{name}` works on whole tiles with all the block's threads and cannot be used inside a `parallel` loop"),
                "call it outside the loop; inside a `parallel` loop, read and write single elements",
            );
            return None;
        }
        let kind = match name.as_str() {
            "copy" => {
                if !self.arity(func, args, 2, "copy(src, &mut dst)", span) {
                    return None;
                }
                let src = self.tile_arg(&args[0], false);
                let dst = self.tile_arg(&args[1], true);
                let (src, dst) = (src?, dst?);
                if let (Tile::Buffer(a), Tile::Buffer(b)) = (&src, &dst) {
                    if a == b {
                        self.cx.error_hint(
                            span,
                            format!("`copy` from `{}` into itself", self.buffers[*a].name),
                            "copy into a different buffer",
                        );
                        return None;
                    }
                }
                if matches!((&src, &dst), (Tile::Region { .. }, Tile::Region { .. })) {
                    self.cx.error_hint(
                        span,
                        "`copy` between two global tensors is not supported",
                        "stage the tile through a shared or fragment buffer",
                    );
                    return None;
                }
                let rank = |t: &Tile| match t {
                    Tile::Buffer(b) => self.target_rank(Target::Buffer(*b)),
                    Tile::Region { tensor, .. } => self.target_rank(Target::Tensor(*tensor)),
                };
                let (rs, rd) = (rank(&src), rank(&dst));
                // A tile may drop leading dimensions of the tensor it is a region of (they are
                // the region's extent-1 dimensions: a `(BM, BK)` tile of a `(B, M, K)` tensor);
                // buffers copied into each other have one shape.
                let (tile, tensor) = match (&src, &dst) {
                    (Tile::Region { .. }, _) => (rd, rs),
                    (_, Tile::Region { .. }) => (rs, rd),
                    _ => (rs, rd),
                };
                let region =
                    matches!(src, Tile::Region { .. }) || matches!(dst, Tile::Region { .. });
                if (region && tile > tensor) || (!region && rs != rd) {
                    let hint = if region {
                        "a tile may drop the tensor's leading dimensions (a `(BM, BK)` tile of a `(B, M, K)` tensor), not add dimensions"
                    } else {
                        "give both buffers the same shape"
                    };
                    self.cx.error_hint(
                        span,
                        format!(
                            "`copy` between tiles of different ranks: the source has {}, the destination {}",
                            count(rs, "dimension"),
                            count(rd, "dimension")
                        ),
                        hint,
                    );
                    return None;
                }
                StmtKind::Copy { src, dst }
            }
            "fill" => {
                if !self.arity(func, args, 2, "fill(&mut tile, value)", span) {
                    return None;
                }
                let buf = self.buffer_arg(&args[0], true, func, "a buffer")?;
                let value = self.expr_as(&args[1], self.buffers[buf].dtype, "the fill value")?;
                StmtKind::Fill { buf, value }
            }
            "clear" => {
                if !self.arity(func, args, 1, "clear(&mut tile)", span) {
                    return None;
                }
                let buf = self.buffer_arg(&args[0], true, func, "a buffer")?;
                let ty = self.buffers[buf].dtype;
                let zero = if ty.is_float() {
                    ExprKind::Float(0.0)
                } else {
                    ExprKind::Int(0)
                };
                StmtKind::Fill {
                    buf,
                    value: Expr {
                        kind: zero,
                        ty,
                        span,
                    },
                }
            }
            "gemm" => {
                if !self.arity(func, args, 3, "gemm(&a, &b, &mut acc)", span) {
                    return None;
                }
                let a = self.buffer_arg(&args[0], false, func, "the A tile");
                let b = self.buffer_arg(&args[1], false, func, "the B tile");
                let c = self.buffer_arg(&args[2], true, func, "the accumulator");
                let (a, b, c) = (a?, b?, c?);
                if c == a || c == b {
                    self.cx.error_hint(
                        args[2].span,
                        format!(
                            "the accumulator `{}` is also an operand of `gemm`",
                            self.buffers[c].name
                        ),
                        "accumulate into a separate fragment",
                    );
                    return None;
                }
                let (ba, bb, bc) = (&self.buffers[a], &self.buffers[b], &self.buffers[c]);
                if bc.scope != Scope::Fragment {
                    self.cx.error_hint(
                        args[2].span,
                        format!(
                            "`gemm` accumulates into a fragment, but `{}` is a {} buffer",
                            bc.name,
                            bc.scope.name()
                        ),
                        format!(
                            "allocate `{}` with `alloc_fragment::<f32, (BM, BN)>()`",
                            bc.name
                        ),
                    );
                }
                for (buf, arg) in [(ba, &args[0]), (bb, &args[1])] {
                    if buf.scope == Scope::Local {
                        self.cx.error_hint(
                            arg.span,
                            format!(
                                "`gemm` operands are block tiles, but `{}` is a local buffer",
                                buf.name
                            ),
                            "use a shared or fragment buffer",
                        );
                    }
                }
                if ba.dtype != bb.dtype {
                    self.cx.error_hint(
                        span,
                        format!(
                            "`gemm` operands have different dtypes: {} and {}",
                            ba.dtype, bb.dtype
                        ),
                        "convert one operand into a buffer of the other's dtype first",
                    );
                }
                if !ba.dtype.is_float() || !bc.dtype.is_float() {
                    self.cx.error_hint(
                        span,
                        "`gemm` works on floating-point tiles",
                        "dequantize integer tiles into f16 buffers first",
                    );
                }
                for (buf, arg) in [(ba, &args[0]), (bb, &args[1]), (bc, &args[2])] {
                    if buf.shape.len() != 2 {
                        self.cx.error_hint(
                            arg.span,
                            format!(
                                "`gemm` operands are 2-D tiles, but `{}` has {}",
                                buf.name,
                                count(buf.shape.len(), "dimension")
                            ),
                            "allocate it with a shape `(ROWS, COLS)`",
                        );
                    }
                }
                StmtKind::Gemm { a, b, c }
            }
            "reduce_sum" | "reduce_max" => {
                if !self.arity(func, args, 3, &format!("{name}(&src, &mut dst, dim)"), span) {
                    return None;
                }
                let src = self.buffer_arg(&args[0], false, func, "the source tile");
                let dst = self.buffer_arg(&args[1], true, func, "the destination");
                let dim = match &args[2].kind {
                    ast::ExprKind::Int(v, _) => Some(*v as usize),
                    _ => {
                        self.cx.error_hint(
                            args[2].span,
                            "the reduced dimension must be an integer literal",
                            format!("write `{name}(&src, &mut dst, 1)` to reduce along columns"),
                        );
                        None
                    }
                };
                let (src, dst, dim) = (src?, dst?, dim?);
                if src == dst {
                    self.cx.error_hint(
                        args[1].span,
                        format!(
                            "`{name}` reads and writes the same buffer `{}`",
                            self.buffers[src].name
                        ),
                        "reduce into a separate buffer",
                    );
                    return None;
                }
                let (bs, bd) = (&self.buffers[src], &self.buffers[dst]);
                if dim >= bs.shape.len() {
                    self.cx.error_hint(
                        args[2].span,
                        format!(
                            "`{}` has {} dimension{}; there is no dimension {dim}",
                            bs.name,
                            bs.shape.len(),
                            if bs.shape.len() == 1 { "" } else { "s" }
                        ),
                        format!("reduce along 0..{}", bs.shape.len()),
                    );
                    return None;
                }
                let want = bs.shape.len().saturating_sub(1).max(1);
                if bd.shape.len() != want {
                    self.cx.error_hint(
                        args[1].span,
                        format!(
                            "reducing a {}-D tile gives a {want}-D result, but `{}` has {}",
                            bs.shape.len(),
                            bd.name,
                            count(bd.shape.len(), "dimension")
                        ),
                        "drop the reduced dimension from the destination's shape",
                    );
                    return None;
                }
                if bs.dtype != bd.dtype {
                    self.cx.error_hint(
                        span,
                        format!(
                            "`{name}` source is {} but destination is {}",
                            bs.dtype, bd.dtype
                        ),
                        "reduce into a buffer of the same dtype",
                    );
                }
                if bd.scope == Scope::Local || bs.scope == Scope::Local {
                    self.cx.error_hint(
                        span,
                        format!("`{name}` works on block tiles, not local buffers"),
                        "use shared or fragment buffers",
                    );
                }
                StmtKind::Reduce {
                    op: if name == "reduce_sum" {
                        ReduceOp::Sum
                    } else {
                        ReduceOp::Max
                    },
                    src,
                    dst,
                    dim,
                }
            }
            "atomic_add" => {
                if !self.arity(func, args, 2, "atomic_add(&mut c[(i, j)], value)", span) {
                    return None;
                }
                let (base, index) = match &args[0].kind {
                    ast::ExprKind::ElemRef(b, i) => (b, i),
                    _ => {
                        self.cx.error_hint(
                            args[0].span,
                            "`atomic_add` takes a mutable reference to an element",
                            "write `atomic_add(&mut c[(i, j)], value)`",
                        );
                        return None;
                    }
                };
                let access = self.access(base, index, true, args[0].span)?;
                if let Target::Buffer(b) = access.target {
                    if self.buffers[b].scope != Scope::Shared {
                        self.cx.error_hint(
                            args[0].span,
                            "`atomic_add` applies to global tensors and shared buffers",
                            "atomics on registers make no sense; add directly",
                        );
                    }
                }
                let ty = self.target_dtype(access.target);
                let value = self.expr_as(&args[1], ty, "the added value")?;
                StmtKind::AtomicAdd { access, value }
            }
            _ => {
                if MathFn::from_name(&name).is_some()
                    || name == "if_then_else"
                    || name == "block_idx"
                {
                    self.cx.error_hint(
                        span,
                        format!("the value of `{name}(..)` is unused"),
                        format!("bind it: `let x = {name}(..);`"),
                    );
                } else if !self.poisoned(func) {
                    self.cx.error_hint(
                        func.span(),
                        format!("unknown primitive `{name}`"),
                        format!(
                            "the primitives are {}; the functions are {}",
                            PRIMITIVES.join(", "),
                            functions()
                        ),
                    );
                }
                return None;
            }
        };
        Some(Stmt { kind, span })
    }

    /// Checks `e` and requires its dtype to be `ty`.
    fn expr_as(&mut self, e: &ast::Expr, ty: Dtype, what: &str) -> Option<Expr> {
        let x = self.expr(e, Some(ty))?;
        if x.ty != ty {
            let hint = if ty == Dtype::Bool {
                "use a comparison such as `x > 0.0`".to_string()
            } else if x.ty == Dtype::Bool {
                format!("convert with `if_then_else(cond, 1, 0)` or `cond as {ty}`")
            } else {
                format!("add a cast: `(..) as {ty}`")
            };
            self.cx.error_hint(
                e.span,
                format!("dtype mismatch: {what} must be {ty}, found {}", x.ty),
                hint,
            );
            return None;
        }
        Some(x)
    }

    /// A float literal must be finite in its type (`70000.0` is not an f16).
    fn float_fits(&mut self, v: f64, ty: Dtype, span: Range) -> Option<()> {
        let max = match ty {
            Dtype::F16 => 65504.0,
            Dtype::Bf16 => 3.3895313892515355e38,
            Dtype::F32 => f32::MAX as f64,
            _ => f64::MAX,
        };
        // Infinities are the constants `f32::INFINITY` etc.: parse rejects literals beyond f64.
        if v.is_finite() && v.abs() > max {
            self.cx.error_hint(
                span,
                format!("literal `{v}` is out of the range of {ty} (largest finite value {max:e})"),
                "use a smaller value or a wider type",
            );
            return None;
        }
        Some(())
    }

    fn check_binary_types(&mut self, op: BinOp, ty: Dtype, span: Range) -> Option<()> {
        let ok = if op.is_logical() {
            ty == Dtype::Bool
        } else if op.is_bitwise() {
            ty.is_int() || (ty == Dtype::Bool && !matches!(op, BinOp::Shl | BinOp::Shr))
        } else if op.is_comparison() {
            true
        } else {
            ty != Dtype::Bool
        };
        if !ok {
            let hint = if op.is_bitwise() {
                "bit operations apply to integers; cast first, e.g. `(x as u32)`"
            } else if op.is_logical() {
                "`&&` and `||` combine booleans (comparisons)"
            } else {
                "arithmetic applies to numbers, not booleans"
            };
            self.cx.error_hint(
                span,
                format!("operator `{}` cannot be applied to {ty}", op.symbol()),
                hint,
            );
            return None;
        }
        Some(())
    }

    fn expr(&mut self, e: &ast::Expr, expect: Option<Dtype>) -> Option<Expr> {
        use ast::ExprKind as K;
        let span = e.span;
        let mk = |kind, ty| Some(Expr { kind, ty, span });
        match &e.kind {
            K::Int(v, suffix) => {
                let ty = suffix
                    .or(expect.filter(|t| *t != Dtype::Bool))
                    .unwrap_or(Dtype::Index);
                if ty.is_float() {
                    self.float_fits(*v as f64, ty, span)?;
                    return mk(ExprKind::Float(*v as f64), ty);
                }
                if ir::int_in(*v as i128, ty).is_none() {
                    self.cx.error_hint(
                        span,
                        format!("literal `{v}` does not fit in {ty}"),
                        "use a smaller value or a wider type",
                    );
                    return None;
                }
                mk(ExprKind::Int(*v as i128), ty)
            }
            K::Float(v, suffix) => {
                let ty = match (suffix, expect) {
                    (Some(t), _) => *t,
                    (None, Some(t)) if t.is_float() => t,
                    (None, Some(t)) if t.is_int() => {
                        self.cx.error_hint(
                            span,
                            format!("float literal where {t} is expected"),
                            format!("write an integer, or cast: `{v} as {t}`"),
                        );
                        return None;
                    }
                    _ => Dtype::F32,
                };
                self.float_fits(*v, ty, span)?;
                mk(ExprKind::Float(*v), ty)
            }
            K::Bool(b) => mk(ExprKind::Bool(*b), Dtype::Bool),
            K::Var(name) => match self.lookup(name) {
                None => {
                    self.unknown_name(name);
                    None
                }
                Some(Binding::Var(v)) => mk(ExprKind::Var(v), self.vars[v].ty),
                Some(Binding::Poisoned) => None,
                Some(Binding::Const(i)) => mk(ExprKind::Const(i), Dtype::Index),
                Some(Binding::Sym(i)) => mk(ExprKind::Sym(i), Dtype::Index),
                Some(Binding::Scalar(p)) => {
                    mk(ExprKind::Scalar(p), self.target_dtype(Target::Tensor(p)))
                }
                Some(Binding::Buffer(_)) | Some(Binding::Tensor(_)) => {
                    self.cx.error_hint(
                        span,
                        format!("`{name}` is a tile, not a value"),
                        format!(
                            "index it (`{name}[(i, j)]`) or pass it to a primitive (`&{name}`)"
                        ),
                    );
                    None
                }
            },
            K::Binary(op, l, r) => {
                let operand_expect = if op.is_comparison() {
                    None
                } else if op.is_logical() {
                    Some(Dtype::Bool)
                } else {
                    expect
                };
                let (l, r) = if is_untyped_literal(l) && !is_untyped_literal(r) {
                    let r = self.expr(r, operand_expect)?;
                    let l = self.expr(l, Some(r.ty))?;
                    (l, r)
                } else {
                    let l = self.expr(l, operand_expect);
                    let r = self.expr(r, l.as_ref().map(|l| l.ty).or(operand_expect));
                    (l?, r?)
                };
                if l.ty != r.ty {
                    self.cx.error_hint(
                        span,
                        format!("dtype mismatch in `{}`: left is {}, right is {}", op.symbol(), l.ty, r.ty),
                        format!("the kernel language never converts implicitly; cast one side, e.g. `(..) as {}`", if l.ty == Dtype::Index { r.ty } else { l.ty }),
                    );
                    return None;
                }
                self.check_binary_types(*op, l.ty, span)?;
                let ty = if op.is_comparison() {
                    Dtype::Bool
                } else {
                    l.ty
                };
                mk(ExprKind::Binary(*op, Box::new(l), Box::new(r)), ty)
            }
            K::Unary(UnOp::Neg, inner)
                if matches!(inner.kind, K::Int(..)) && expect.is_none_or(|t| t.is_int()) =>
            {
                // `-2147483648` is one literal: check the negated value's range.
                let K::Int(v, suffix) = inner.kind else {
                    unreachable!()
                };
                let ty = suffix.or(expect).unwrap_or(Dtype::Index);
                let v = -(v as i128);
                if ir::int_in(v, ty).is_none() {
                    self.cx.error_hint(
                        span,
                        format!("literal `{v}` does not fit in {ty}"),
                        "use a value in the type's range or a wider type",
                    );
                    return None;
                }
                if matches!(ty, Dtype::U8 | Dtype::U32) {
                    self.cx.error_hint(
                        span,
                        format!("cannot negate a value of type {ty}"),
                        "cast to a signed type first, e.g. `(x as i32)`",
                    );
                    return None;
                }
                mk(ExprKind::Int(v), ty)
            }
            K::Unary(op, x) => {
                let x = self.expr(x, expect)?;
                match op {
                    UnOp::Neg if matches!(x.ty, Dtype::U8 | Dtype::U32 | Dtype::Bool) => {
                        self.cx.error_hint(
                            span,
                            format!("cannot negate a value of type {}", x.ty),
                            "cast to a signed type first, e.g. `(x as i32)`",
                        );
                        return None;
                    }
                    UnOp::Not if x.ty.is_float() => {
                        self.cx.error_hint(
                            span,
                            format!("`!` cannot be applied to {}", x.ty),
                            "`!` is logical not on bool and bitwise not on integers",
                        );
                        return None;
                    }
                    _ => {}
                }
                let ty = x.ty;
                mk(ExprKind::Unary(*op, Box::new(x)), ty)
            }
            K::Cast(x, ty) => {
                // An untyped literal takes the target type where it can (`1 as f16`); a float
                // literal cast to an integer is an f64 converted like any other float.
                let inner_expect = if !is_untyped_literal(x) {
                    None
                } else if is_float_literal(x) && !ty.is_float() {
                    Some(Dtype::F64)
                } else {
                    Some(*ty)
                };
                let x = self.expr(x, inner_expect)?;
                if *ty == Dtype::Bool && x.ty != Dtype::Bool {
                    self.cx.error_hint(
                        span,
                        "casting to bool is not supported",
                        "compare instead: `x != 0`",
                    );
                    return None;
                }
                mk(ExprKind::Cast(Box::new(x)), *ty)
            }
            K::DivCeil(a, b) => {
                let a = self.expr(a, expect.filter(|t| t.is_int()));
                let a = a?;
                if !a.ty.is_int() {
                    self.cx.error_hint(
                        span,
                        format!("`div_ceil` applies to integers, found {}", a.ty),
                        "use it on sizes and indices",
                    );
                    return None;
                }
                let b = self.expr_as(b, a.ty, "the divisor of `div_ceil`")?;
                let ty = a.ty;
                mk(ExprKind::DivCeil(Box::new(a), Box::new(b)), ty)
            }
            K::Index(base, index) => {
                let access = self.access(base, index, false, span)?;
                let ty = self.target_dtype(access.target);
                mk(ExprKind::Load(access), ty)
            }
            K::Call(func, args) => self.call_expr(func, args, expect, span),
            K::Ref(name, _) => {
                self.cx.error_hint(
                    span,
                    format!("`&{name}` can only be passed to a tile primitive"),
                    format!("use the value `{name}` directly"),
                );
                None
            }
            K::Region { tensor, .. } => {
                self.cx.error_hint(
                    span,
                    "a tile region can only be passed to `copy`",
                    format!("read one element with `{tensor}[(i, j)]`"),
                );
                None
            }
            K::ElemRef(..) => {
                self.cx.error_hint(
                    span,
                    "an element reference can only be passed to `atomic_add`",
                    "read the element without `&mut`",
                );
                None
            }
            K::Tuple(_) => {
                self.cx.error_hint(
                    span,
                    "tuples are only supported on the right of `let (a, b) = (x, y);`",
                    "use separate variables",
                );
                None
            }
        }
    }

    fn call_expr(
        &mut self,
        func: &Ident,
        args: &[ast::Expr],
        expect: Option<Dtype>,
        span: Range,
    ) -> Option<Expr> {
        let name = func.to_string();
        if let Some(f) = MathFn::from_name(&name) {
            let usage = match f.arity() {
                1 => format!("{name}(x)"),
                n => format!("{name}({})", ["a", "b", "c"][..n].join(", ")),
            };
            if !self.arity(func, args, f.arity(), &usage, span) {
                return None;
            }
            // The arguments share one type: that of the first one that is not an untyped
            // literal (`pow(2.0, x)` with `x: f16` is an f16 `pow`), else the first one's.
            let lead = args
                .iter()
                .position(|a| !is_untyped_literal(a))
                .unwrap_or(0);
            let first = self.expr(&args[lead], expect)?;
            let ty = first.ty;
            let mut a0 = Vec::with_capacity(args.len());
            for (i, a) in args.iter().enumerate() {
                if i == lead {
                    a0.push(first.clone());
                } else {
                    a0.push(self.expr_as(
                        a,
                        ty,
                        &format!("the {} argument of `{name}`", ORDINALS[i]),
                    )?);
                }
            }
            let ty = a0[0].ty;
            if f.float_only() && !ty.is_float() {
                self.cx.error_hint(
                    span,
                    format!("`{name}` is defined on floating-point values, found {ty}"),
                    match f.arity() {
                        1 => format!("cast first: `{name}(x as f32)`"),
                        _ => format!("cast the arguments first: `{name}(a as f32, ..)`"),
                    },
                );
                return None;
            }
            if ty == Dtype::Bool {
                self.cx.error_hint(
                    span,
                    format!("`{name}` cannot be applied to bool"),
                    "use `&&` / `||` on booleans",
                );
                return None;
            }
            return Some(Expr {
                kind: ExprKind::Math(f, a0),
                ty,
                span,
            });
        }
        match name.as_str() {
            "if_then_else" => {
                if !self.arity(func, args, 3, "if_then_else(cond, a, b)", span) {
                    return None;
                }
                let c = self.expr_as(&args[0], Dtype::Bool, "the condition of `if_then_else`");
                let (a, b) = if is_untyped_literal(&args[1]) && !is_untyped_literal(&args[2]) {
                    let b = self.expr(&args[2], expect)?;
                    let a = self.expr_as(&args[1], b.ty, "both branches of `if_then_else`")?;
                    (a, b)
                } else {
                    let a = self.expr(&args[1], expect)?;
                    let b = self.expr_as(&args[2], a.ty, "both branches of `if_then_else`")?;
                    (a, b)
                };
                let ty = a.ty;
                Some(Expr {
                    kind: ExprKind::Select(Box::new(c?), Box::new(a), Box::new(b)),
                    ty,
                    span,
                })
            }
            "block_idx" => {
                if !self.arity(func, args, 1, "block_idx(0)", span) {
                    return None;
                }
                let d = match args[0].kind {
                    ast::ExprKind::Int(v, _) => v,
                    _ => {
                        self.cx.error_hint(
                            args[0].span,
                            "`block_idx` takes a literal dimension",
                            "write `block_idx(0)`, `block_idx(1)` or `block_idx(2)`",
                        );
                        return None;
                    }
                };
                let rank = self.grid_rank.unwrap_or(3);
                if d as usize >= rank {
                    self.cx.error_hint(
                        args[0].span,
                        format!(
                            "the grid has {rank} dimension{}; there is no `block_idx({d})`",
                            if rank == 1 { "" } else { "s" }
                        ),
                        "add a grid dimension in the attribute: `grid = [X, Y]`",
                    );
                    return None;
                }
                Some(Expr {
                    kind: ExprKind::BlockIdx(d as u8),
                    ty: Dtype::Index,
                    span,
                })
            }
            _ if PRIMITIVES.contains(&name.as_str()) => {
                self.cx.error_hint(
                    span,
                    format!("`{name}` is a statement and has no value"),
                    format!("call it on its own line: `{name}(..);`"),
                );
                None
            }
            "parallel" | "serial" | "pipelined" => {
                self.cx.error_hint(
                    span,
                    format!("`{name}` is only meaningful as a loop iterator"),
                    format!("write `for i in {name}(..) {{ .. }}`"),
                );
                None
            }
            _ if self.poisoned(func) => None,
            _ => {
                self.cx.error_hint(
                    func.span(),
                    format!("unknown function `{name}`"),
                    format!("the functions are {}", functions()),
                );
                None
            }
        }
    }
}

fn check_threads(cx: &mut Ctxt, threads: &Expr, cfg: &Config, span: Range) {
    let label = format!("in config `{}`", cfg.name);
    match eval_const(threads, &cfg.values) {
        Some(t) if (1..=1024).contains(&t) => {}
        Some(t) => cx.error_hint(
            span,
            format!("{label}: `threads` is {t}, outside 1..=1024"),
            "pick a block size between 1 and 1024 threads",
        ),
        None => cx.error_hint(
            threads.span,
            format!("{label}: `threads` does not evaluate to a constant"),
            "use a literal or a const generic",
        ),
    }
}

fn check_occupancy(cx: &mut Ctxt, occupancy: Option<&ir::Occupancy>, cfg: &Config) {
    let Some(o) = occupancy else { return };
    let (key, e, range, hint) = match o {
        ir::Occupancy::MinBlocks(e) => (
            "min_blocks",
            e,
            1..=32,
            "ask for 1 to 32 resident blocks per multiprocessor",
        ),
        ir::Occupancy::MaxRegisters(e) => (
            "max_registers",
            e,
            16..=255,
            "cap registers per thread between 16 and 255",
        ),
    };
    match eval_const(e, &cfg.values) {
        Some(v) if range.contains(&v) => {}
        Some(v) => cx.error_hint(
            e.span,
            format!(
                "in config `{}`: `{key}` is {v}, outside {}..={}",
                cfg.name,
                range.start(),
                range.end()
            ),
            hint,
        ),
        None => cx.error_hint(
            e.span,
            format!(
                "in config `{}`: `{key}` does not evaluate to a constant",
                cfg.name
            ),
            "use a literal or a const generic",
        ),
    }
}

/// Per-config checks: every constant the kernel uses is evaluated under each config.
fn check_configs(cx: &mut Ctxt, k: &ir::Kernel, attr: &KernelAttr) {
    for (ci, cfg) in k.configs.iter().enumerate() {
        let vals = &cfg.values;
        let cfg_span = attr
            .configs
            .get(ci)
            .map(|c| c.name.span())
            .unwrap_or(k.name.span());
        let label = format!("in config `{}`", cfg.name);
        check_threads(cx, &k.threads, cfg, cfg_span.into());
        check_occupancy(cx, k.occupancy.as_ref(), cfg);
        let shape = |b: BufId| -> Vec<Option<i128>> {
            k.buffers[b]
                .shape
                .iter()
                .map(|d| eval_const(d, vals))
                .collect()
        };
        for b in &k.buffers {
            let dims: Vec<Option<i128>> = b.shape.iter().map(|d| eval_const(d, vals)).collect();
            for (d, v) in b.shape.iter().zip(&dims) {
                match *v {
                    Some(v) if v > 0 && v <= MAX_TILE_ELEMENTS => {}
                    Some(v) => cx.error_hint(
                        d.span,
                        format!("{label}: dimension of `{}` is {v}", b.name),
                        format!("buffer dimensions must be between 1 and {MAX_TILE_ELEMENTS}"),
                    ),
                    // (Reported where it was written.)
                    None if !is_const(d) => {}
                    None => cx.error_hint(
                        d.span,
                        format!("{label}: dimension of `{}` does not evaluate", b.name),
                        "check for division by zero, a shift by 64 or more, or an overflow of usize's 63-bit range",
                    ),
                }
            }
            check_elements(cx, &label, &format!("buffer `{}`", b.name), b.span, &dims);
        }
        walk(&k.body, &mut |s| match &s.kind {
            StmtKind::For {
                kind: LoopKind::Parallel { extents },
                ..
            } => {
                let dims: Vec<Option<i128>> = extents.iter().map(|e| eval_const(e, vals)).collect();
                // (An extent that is not a constant at all was reported where it was written.)
                for (e, v) in extents.iter().zip(&dims).filter(|(e, _)| is_const(e)) {
                    match *v {
                        Some(v) if v > 0 && v <= MAX_TILE_ELEMENTS => {}
                        v => cx.error_hint(
                            e.span,
                            format!(
                                "{label}: `parallel` extent is {}",
                                v.map_or(
                                    "not computable (division by zero or overflow)".to_string(),
                                    |v| v.to_string()
                                )
                            ),
                            format!("extents must be constants between 1 and {MAX_TILE_ELEMENTS}"),
                        ),
                    }
                }
                check_elements(cx, &label, "`parallel` loop", s.span, &dims);
            }
            StmtKind::For {
                kind: LoopKind::Pipelined { stages, .. },
                ..
            } => match eval_const(stages, vals) {
                Some(v) if (1..=8).contains(&v) => {}
                _ if !is_const(stages) => {}
                v => cx.error_hint(
                    stages.span,
                    format!(
                        "{label}: pipeline stages is {}",
                        v.map_or("not computable".to_string(), |v| v.to_string())
                    ),
                    "use 1 to 8 stages",
                ),
            },
            StmtKind::Copy {
                src: Tile::Buffer(a),
                dst: Tile::Buffer(b),
            } if shape(*a) != shape(*b) => {
                cx.error_hint(
                    s.span,
                    format!(
                        "{label}: `copy` between buffers of different shapes ({} vs {})",
                        fmt_shape(&shape(*a)),
                        fmt_shape(&shape(*b))
                    ),
                    "buffer-to-buffer copies need equal shapes",
                );
            }
            StmtKind::Gemm { a, b, c } => {
                let (sa, sb, sc) = (shape(*a), shape(*b), shape(*c));
                if sa.len() == 2
                    && sb.len() == 2
                    && sc.len() == 2
                    && (sa[1] != sb[0] || sa[0] != sc[0] || sb[1] != sc[1])
                {
                    cx.error_hint(
                        s.span,
                        format!(
                            "{label}: `gemm` shapes do not agree: A is {}, B is {}, C is {}",
                            fmt_shape(&sa),
                            fmt_shape(&sb),
                            fmt_shape(&sc)
                        ),
                        "A is (M, K), B is (K, N) and the accumulator is (M, N)",
                    );
                }
            }
            StmtKind::Reduce { src, dst, dim, .. } => {
                let (ss, sd) = (shape(*src), shape(*dst));
                let mut want = ss.clone();
                want.remove(*dim);
                if want.is_empty() {
                    want.push(Some(1));
                }
                if want != sd {
                    cx.error_hint(s.span, format!("{label}: reducing {} along dimension {dim} gives {}, but the destination is {}", fmt_shape(&ss), fmt_shape(&want), fmt_shape(&sd)), "make the destination's shape the source's without the reduced dimension");
                }
            }
            _ => {}
        });
    }
}

/// The most elements a buffer or a `parallel` loop may have (2^24), in each dimension and in
/// all: a block's tile, whose element index (and a GPU thread's register loop over it) fits a
/// 32-bit integer with room to spare.
pub const MAX_TILE_ELEMENTS: i128 = 1 << 24;

/// The product of `dims` (already checked one by one) is at most [`MAX_TILE_ELEMENTS`].
fn check_elements(cx: &mut Ctxt, label: &str, what: &str, span: Range, dims: &[Option<i128>]) {
    let Some(dims) = dims.iter().copied().collect::<Option<Vec<i128>>>() else {
        return;
    };
    if dims.iter().any(|&d| d <= 0 || d > MAX_TILE_ELEMENTS) {
        return;
    }
    let total = dims.iter().product::<i128>();
    if total > MAX_TILE_ELEMENTS {
        cx.error_hint(
            span,
            format!("{label}: {what} has {total} elements ({})", dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(" × ")),
            format!("a tile holds at most {MAX_TILE_ELEMENTS} elements: split the work over more blocks (the grid) or a `serial` loop"),
        );
    }
}

fn fmt_shape(s: &[Option<i128>]) -> String {
    format!(
        "({})",
        s.iter()
            .map(|d| d.map_or("?".to_string(), |v| v.to_string()))
            .collect::<Vec<_>>()
            .join(", ")
    )
}
