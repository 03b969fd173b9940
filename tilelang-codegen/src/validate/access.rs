//! Element accesses `base[index]` of tensors and buffers: rank, index dtypes, writes to
//! read-only tensors and immutable buffers, fragments indexed only inside `parallel` loops.

use super::scope::{Binding, Checker};
use crate::ast::{self, Dtype};
use crate::ctxt::Range;
use crate::ir::*;
use syn::Ident;

impl Checker<'_> {
    pub(super) fn target_dtype(&self, t: Target) -> Dtype {
        match t {
            Target::Tensor(p) => match self.params[p].kind {
                ParamKind::Tensor { dtype, .. } => dtype,
                ParamKind::Scalar { dtype } => dtype,
            },
            Target::Buffer(b) => self.buffers[b].dtype,
        }
    }

    pub(super) fn target_rank(&self, t: Target) -> usize {
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
    pub(super) fn access(
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
}
