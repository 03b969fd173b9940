//! Statements and loops: `let`, allocations (where each scope may be allocated), assignments
//! and stores (mutability, data races across `parallel` loops), `if`, and the three loop kinds.

use super::scope::{Binding, Checker};
use crate::ast::{self, Dtype};
use crate::ctxt::Range;
use crate::ir::*;
use std::collections::HashMap;
use syn::Ident;

impl Checker<'_> {
    pub(super) fn block(&mut self, stmts: &[ast::Stmt]) -> Vec<Stmt> {
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
}
