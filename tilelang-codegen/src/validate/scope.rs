//! The checker's state: the scopes of names and what each is bound to, the variables and buffers
//! declared so far, the loop context; name lookup and its "unknown name" error.

use super::builtins::{self, Function, Op};
use crate::ast::Dtype;
use crate::ctxt::Ctxt;
use crate::ir::{self, *};
use std::collections::HashMap;
use syn::Ident;

/// What a name in scope stands for.
#[derive(Clone, Copy)]
pub(super) enum Binding {
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

/// The state of checking one kernel's body. Its methods are spread over the sibling modules by
/// concept (statements, accesses, expressions, tile operations, function calls).
pub(super) struct Checker<'a> {
    pub(super) cx: &'a mut Ctxt,
    pub(super) scopes: Vec<HashMap<String, Binding>>,
    pub(super) params: Vec<ir::Param>,
    pub(super) vars: Vec<Var>,
    /// Parallel-loop depth at which each var was declared.
    pub(super) var_depth: Vec<usize>,
    pub(super) buffers: Vec<Buffer>,
    pub(super) buf_mutable: Vec<bool>,
    pub(super) parallel_depth: usize,
    /// Loops and `if` branches enclosing the current statement.
    pub(super) loop_depth: usize,
    pub(super) loop_vars: std::collections::HashSet<VarId>,
    /// `None` when the `grid` attribute itself failed to parse.
    pub(super) grid_rank: Option<usize>,
}

impl Checker<'_> {
    /// The binding of a name; `None` for unknown and for poisoned names.
    pub(super) fn lookup(&self, name: &Ident) -> Option<Binding> {
        let s = name.to_string();
        match self.scopes.iter().rev().find_map(|sc| sc.get(&s).copied()) {
            Some(Binding::Poisoned) => None,
            b => b,
        }
    }

    /// Whether `name` is bound to a value whose definition had an error: its uses say
    /// nothing more.
    pub(super) fn poisoned(&self, name: &Ident) -> bool {
        let s = name.to_string();
        self.scopes
            .iter()
            .rev()
            .find_map(|sc| sc.get(&s))
            .is_some_and(|b| matches!(b, Binding::Poisoned))
    }

    pub(super) fn unknown_name(&mut self, name: &Ident) {
        let s = name.to_string();
        if self.poisoned(name) {
            return;
        }
        let hint = if s.chars().next().is_some_and(|c| c.is_ascii_uppercase()) {
            "shape symbols come from tensor types (e.g. `a: &Tensor<f32, (M, N)>` defines `M` and `N`); tile sizes are const generics".to_string()
        } else if builtins::lookup(&s)
            .is_some_and(|b| matches!(b.op, Op::Primitive(_) | Op::Function(Function::Math(_))))
        {
            format!("`{s}` is a function; call it")
        } else {
            "declare it with `let` before this point, or add a parameter".to_string()
        };
        self.cx
            .error_hint(name.span(), format!("unknown name `{s}`"), hint);
    }

    pub(super) fn bind(&mut self, name: &Ident, b: Binding) {
        self.scopes.last_mut().unwrap().insert(name.to_string(), b);
    }

    pub(super) fn new_var(&mut self, name: &Ident, ty: Dtype, mutable: bool) -> VarId {
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
}
