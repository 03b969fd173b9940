//! Pass 4 (with `vectorize`), guards: the tail guards inside `parallel` loops that compare a
//! tile coordinate in 32 bits.
//!
//! A guard `c + j < n` inside a parallel loop, where `j` is one of the loop's variables (a tile
//! coordinate: non-negative and below its extent) and `c`, `n` do not change across the loop's
//! iterations, has the same value as the 32-bit `j < clamp32(n - c)`. The bound is then one
//! register for the whole loop instead of a 64-bit comparison per element, which ptxas
//! otherwise keeps one threshold per unrolled element for. The printer writes each guard
//! recorded here in that form, and every other comparison as written.

use super::plan::*;
use crate::ir::visit::*;
use crate::ir::*;
use std::collections::{BTreeMap, BTreeSet};

/// The guards on tile coordinates, by the comparison's id: for each, the position of the
/// coordinate `j` among the [`terms`] of the comparison's left side.
pub(crate) fn plan_guards(inst: &Instance) -> BTreeMap<ExprId, usize> {
    let mut guards = BTreeMap::new();
    walk(&inst.k.body, &mut |s| {
        let StmtKind::For {
            kind: LoopKind::Parallel { .. },
            vars,
            body,
        } = &s.kind
        else {
            return;
        };
        // What changes across the loop's iterations: its variables and what its body declares.
        let mut varying: BTreeSet<VarId> = vars.iter().copied().collect();
        walk(body, &mut |st| match &st.kind {
            StmtKind::Let { var, .. } => {
                varying.insert(*var);
            }
            StmtKind::For { vars, .. } => varying.extend(vars.iter().copied()),
            _ => {}
        });
        walk(body, &mut |st| {
            each_stmt_expr(st, &mut |e| {
                each_expr(e, &mut |x| {
                    if let Some(j) = coordinate_guard(x, vars, &varying) {
                        guards.insert(inst.ids.expr(x), j);
                    }
                })
            })
        });
    });
    guards
}

/// The summands of an index sum, left to right (`e` itself when it is not a sum).
pub(crate) fn terms(e: &Expr) -> Vec<&Expr> {
    fn go<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
        match &e.kind {
            ExprKind::Binary(BinOp::Add, x, y) if e.ty == Dtype::Index => {
                go(x, out);
                go(y, out);
            }
            _ => out.push(e),
        }
    }
    let mut out = Vec::new();
    go(e, &mut out);
    out
}

/// Whether `e` is an ordering of index values `j + c < n` (any of `<`, `<=`, `>`, `>=`, the
/// summands in any order) with `j` one of the loop's variables `coords` and neither `c` nor `n`
/// reading memory or a variable in `varying`: the position of `j` among the left side's
/// [`terms`] if so.
fn coordinate_guard(e: &Expr, coords: &[VarId], varying: &BTreeSet<VarId>) -> Option<usize> {
    let ExprKind::Binary(op, a, b) = &e.kind else {
        return None;
    };
    if !matches!(op, BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge)
        || a.ty != Dtype::Index
        || b.ty != Dtype::Index
    {
        return None;
    }
    let invariant = |e: &Expr| {
        let mut ok = true;
        each_expr(e, &mut |x| match &x.kind {
            ExprKind::Load(_) => ok = false,
            ExprKind::Var(v) if varying.contains(v) => ok = false,
            _ => {}
        });
        ok
    };
    let ts = terms(a);
    let at = ts
        .iter()
        .position(|t| matches!(t.kind, ExprKind::Var(v) if coords.contains(&v)))?;
    // (`j < n` alone stays as it is: measured, ptxas then gives the whole-row softmax 100
    // registers instead of 64.)
    let others_invariant = ts.iter().enumerate().all(|(i, t)| i == at || invariant(t));
    (ts.len() > 1 && others_invariant && invariant(b)).then_some(at)
}
