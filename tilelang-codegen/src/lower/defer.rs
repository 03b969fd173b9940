//! Pass 3b, deferred reductions: a reduction whose only use is to be folded into an
//! accumulator, tile after tile of a loop,
//!
//! ```text
//! for t in serial(..) {            // or pipelined
//!     ..
//!     reduce_sum(&tile, &mut part, last);
//!     for i in parallel(BM) { acc[i] += part[i]; }      // or acc[i] = max(acc[i], part[i])
//!     ..
//! }
//! ```
//!
//! is carried across the loop instead: each iteration folds the thread's own registers of the
//! tile into one running value per row (no shuffles, no exchange, no barrier), and after the
//! loop one reduction across threads finishes the rows and the combine statement runs once.
//! This is the same sum (or maximum) in another order: which order a reduction's additions take
//! is the lowering's (language.md), and every order here stays within the bound of a sum that
//! adds at most `BN − 1 + ⌈N / BN⌉` terms along any path (a tree over the thread's registers,
//! then one addition per tile, then the trees across lanes and waves).
//!
//! It applies only where nothing else can see the difference: `part` is written by reductions
//! and read by nothing but their combine statements, anywhere in the kernel (so no value of it
//! is ever observed); `acc` is touched by nothing else in the loop; both are register row
//! fragments of one dtype, and the reduction runs in registers ([`super::rows`]). A maximum
//! ignores order outright; the running values start at the operation's identity (`-0.0` for a
//! float sum, which leaves every value's bits alone, and −∞ for a maximum), and when the loop
//! runs no iteration the finishing step is skipped, so `acc` keeps its bits.

use super::plan::*;
use crate::ir::visit::*;
use crate::ir::*;
use std::collections::{BTreeMap, BTreeSet};

/// Per serial or pipelined loop (by [`StmtId`]), the reductions it carries, in body order.
pub(super) fn plan_deferred(
    inst: &Instance,
    storage: &[Storage],
    reduces: &BTreeMap<StmtId, ReducePlan>,
) -> BTreeMap<StmtId, Vec<Deferred>> {
    let partials = only_partials(inst.k);
    let mut out = BTreeMap::new();
    walk(&inst.k.body, &mut |s| {
        let StmtKind::For {
            kind: LoopKind::Serial { .. } | LoopKind::Pipelined { .. },
            body,
            ..
        } = &s.kind
        else {
            return;
        };
        // A partial carries one reduction a loop (its running values are named after it):
        // a second reduction into it runs where it stands.
        let mut carried = BTreeSet::new();
        let found: Vec<Deferred> = (0..body.len().saturating_sub(1))
            .filter(|&at| {
                let Some((part, acc)) = pair(inst.k, &body[at], &body[at + 1]) else {
                    return false;
                };
                let reg = |b: BufId| matches!(storage[b], Storage::Reg { .. });
                reduces.contains_key(&inst.ids.stmt(&body[at]))
                    && partials.contains(&part)
                    && reg(part)
                    && reg(acc)
                    && storage[part].layout() == storage[acc].layout()
                    && inst.buffer_shape(part) == inst.buffer_shape(acc)
                    && !touched_elsewhere(body, at + 1, acc)
                    && carried.insert(part)
            })
            .map(|at| Deferred {
                at,
                reduce: inst.ids.stmt(&body[at]),
                combine: inst.ids.stmt(&body[at + 1]),
            })
            .collect();
        if !found.is_empty() {
            out.insert(inst.ids.stmt(s), found);
        }
    });
    out
}

/// `reduce_op(&src, &mut part, last)` followed by `for i in parallel(..) { acc[i] = acc[i] op
/// part[i] }` (either operand order) with `op` the reduction's own operation and one dtype:
/// `Some((part, acc))`.
fn pair(k: &Kernel, red: &Stmt, comb: &Stmt) -> Option<(BufId, BufId)> {
    let StmtKind::Reduce { op, src, dst, dim } = &red.kind else {
        return None;
    };
    let (acc, cop, a, b) = combine(comb)?;
    let is = |e: &Expr, buf: BufId| matches!(&e.kind, ExprKind::Load(x) if x.target == Target::Buffer(buf));
    let operands = (is(a, acc) && is(b, *dst)) || (is(a, *dst) && is(b, acc));
    let fits = *dim + 1 == k.buffers[*src].shape.len()
        && cop == *op
        && operands
        && acc != *dst
        && k.buffers[acc].dtype == k.buffers[*dst].dtype;
    fits.then_some((*dst, acc))
}

/// A `parallel` loop over one dimension whose body is the single store `acc[i] = f(a, b)`, `f`
/// an addition or `max`, every element access indexed by the loop variable alone:
/// `(acc, the operation, a, b)`.
fn combine(s: &Stmt) -> Option<(BufId, ReduceOp, &Expr, &Expr)> {
    let StmtKind::For {
        kind: LoopKind::Parallel { extents },
        vars,
        body,
    } = &s.kind
    else {
        return None;
    };
    let [Stmt {
        kind: StmtKind::Store { access, value },
        ..
    }] = &body[..]
    else {
        return None;
    };
    let Target::Buffer(acc) = access.target else {
        return None;
    };
    let (op, a, b) = match &value.kind {
        ExprKind::Binary(BinOp::Add, a, b) => (ReduceOp::Sum, &**a, &**b),
        ExprKind::Math(MathFn::Max, args) if args.len() == 2 => (ReduceOp::Max, &args[0], &args[1]),
        _ => return None,
    };
    let by_var =
        |index: &[Expr]| matches!(index, [Expr { kind: ExprKind::Var(v), .. }] if *v == vars[0]);
    let loads_by_var = [a, b]
        .iter()
        .all(|e| matches!(&e.kind, ExprKind::Load(x) if by_var(&x.index)));
    (extents.len() == 1 && by_var(&access.index) && loads_by_var).then_some((acc, op, a, b))
}

/// The buffers that only carry a reduction's result to its combine statement: written by
/// `reduce_*` alone, read by combine statements directly after such a reduction alone.
fn only_partials(k: &Kernel) -> BTreeSet<BufId> {
    fn scan(k: &Kernel, stmts: &[Stmt], ok: &mut BTreeSet<BufId>) {
        for (i, s) in stmts.iter().enumerate() {
            let combines = i > 0 && pair(k, &stmts[i - 1], s).is_some();
            match &s.kind {
                StmtKind::Reduce { src, dst, .. } => {
                    ok.remove(src);
                    if stmts.get(i + 1).and_then(|c| pair(k, s, c)).is_none() {
                        ok.remove(dst);
                    }
                }
                // A combine reads its partial; its accumulator is no partial.
                _ if combines => {
                    if let Some((_, acc)) = pair(k, &stmts[i - 1], s) {
                        ok.remove(&acc);
                    }
                }
                StmtKind::For { body, .. } => {
                    each_buffer(s, &mut |b| {
                        ok.remove(&b);
                    });
                    scan(k, body, ok);
                }
                StmtKind::If { then, els, .. } => {
                    each_buffer(s, &mut |b| {
                        ok.remove(&b);
                    });
                    scan(k, then, ok);
                    scan(k, els, ok);
                }
                _ => each_buffer(s, &mut |b| {
                    ok.remove(&b);
                }),
            }
        }
    }
    let mut ok = (0..k.buffers.len()).collect();
    scan(k, &k.body, &mut ok);
    ok
}

/// Whether `acc` is touched in `body` other than by the statement at `except`.
fn touched_elsewhere(body: &[Stmt], except: usize, acc: BufId) -> bool {
    body.iter().enumerate().any(|(i, s)| {
        let mut hit = false;
        if i != except {
            walk(std::slice::from_ref(s), &mut |x| {
                each_buffer(x, &mut |b| hit |= b == acc);
            });
        }
        hit
    })
}
