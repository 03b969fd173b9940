//! Pass 5, synchronisation: between consecutive block-level statements a barrier is placed
//! exactly when one writes a shared-resident buffer or a global tensor that the other reads or
//! writes, including around the back edge of loops. A reduction that exchanges partial results
//! across waves ([`super::rows`]) writes its exchange area, passes a barrier of its own and
//! reads the area: after it only that read is pending. A reduction deferred across a loop
//! ([`super::defer`]) exchanges once, after the loop: the loop writes and then reads its area.

use super::*;
use crate::validate::walk;
use std::collections::BTreeSet;

/// The statements that a block barrier precedes, by [`stmt_key`].
pub(super) fn plan_barriers(p: &Plan) -> BTreeSet<usize> {
    let mut out = BTreeSet::new();
    block(p, &p.k.body, &mut Pending::default(), &mut out);
    out
}

/// A block-level statement sequence entered with `pending` effects not yet separated by a
/// barrier; records its barriers in `out`. Mirrors the structure [`super::print`] walks.
fn block(p: &Plan, stmts: &[Stmt], pending: &mut Pending, out: &mut BTreeSet<usize>) {
    for s in stmts {
        let (r, w) = effects(p, s);
        if pending.conflicts(&r, &w) {
            out.insert(stmt_key(s));
            *pending = Pending::default();
        }
        match &s.kind {
            StmtKind::For {
                kind: LoopKind::Pipelined { .. },
                body,
                ..
            } if pipeline::staging(p, body).is_some() => {
                // The staged loop orders its own loads and compute (`print::pipelined_loop`).
                let (nloads, _) = pipeline::staging(p, body).expect("checked");
                let (loads, compute) = body.split_at(nloads);
                block(p, loads, &mut Pending::default(), out);
                block(p, compute, &mut Pending::default(), out);
                pending.add(&r, &w);
                pending.reads.extend(finished_after(p, s));
            }
            StmtKind::For {
                kind: LoopKind::Serial { .. } | LoopKind::Pipelined { .. },
                body,
                ..
            } => {
                // Back edge: what the body leaves pending flows to its start.
                let mut first = pending.clone();
                block(p, body, &mut first, &mut BTreeSet::new());
                let mut inner = pending.clone();
                inner.union(&first);
                block(p, body, &mut inner, out);
                pending.union(&inner);
                // The finishing exchange after the loop (skipped when it runs no iteration, so
                // what is pending stays pending).
                pending.reads.extend(finished_after(p, s));
            }
            StmtKind::If { then, els, .. } => {
                let mut pt = pending.clone();
                block(p, then, &mut pt, out);
                let mut pe = pending.clone();
                block(p, els, &mut pe, out);
                pending.union(&pt);
                pending.union(&pe);
            }
            StmtKind::Reduce { .. } if exchanges(p, s) => {
                *pending = Pending::default();
                pending.reads.insert(Res::Scratch(stmt_key(s)));
            }
            _ => pending.add(&r, &w),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Res {
    Buf(BufId),
    Tensor(ParamId),
    /// The exchange area of a register reduction, by [`stmt_key`].
    Scratch(usize),
}

/// A reduction in registers whose rows span several waves (with a barrier inside), run where
/// it stands (a deferred one only folds registers there).
fn exchanges(p: &Plan, s: &Stmt) -> bool {
    p.reduces
        .get(&stmt_key(s))
        .is_some_and(|r| r.scratch.is_some())
        && p.deferral_of_reduce(stmt_key(s)).is_none()
}

/// The exchange areas of the reductions that loop `s` carries and finishes after its last
/// iteration ([`super::defer`]).
fn finished_after(p: &Plan, s: &Stmt) -> Vec<Res> {
    p.deferred
        .get(&stmt_key(s))
        .into_iter()
        .flatten()
        .filter(|d| p.reduces[&d.reduce].scratch.is_some())
        .map(|d| Res::Scratch(d.reduce))
        .collect()
}

#[derive(Default, Clone)]
struct Pending {
    reads: BTreeSet<Res>,
    writes: BTreeSet<Res>,
}

impl Pending {
    fn conflicts(&self, r: &BTreeSet<Res>, w: &BTreeSet<Res>) -> bool {
        r.iter().any(|x| self.writes.contains(x))
            || w.iter()
                .any(|x| self.writes.contains(x) || self.reads.contains(x))
    }
    fn add(&mut self, r: &BTreeSet<Res>, w: &BTreeSet<Res>) {
        self.reads.extend(r.iter().copied());
        self.writes.extend(w.iter().copied());
    }
    fn union(&mut self, o: &Pending) {
        self.add(&o.reads, &o.writes);
    }
}

/// Reads and writes of shared-resident buffers and global tensors by `s`, nested included.
fn effects(p: &Plan, s: &Stmt) -> (BTreeSet<Res>, BTreeSet<Res>) {
    let mut r = BTreeSet::new();
    let mut w = BTreeSet::new();
    let res = |t: Target| -> Option<Res> {
        match t {
            Target::Tensor(p) => Some(Res::Tensor(p)),
            Target::Buffer(b) if matches!(p.storage[b], Storage::Shared { .. }) => {
                Some(Res::Buf(b))
            }
            Target::Buffer(_) => None,
        }
    };
    walk(std::slice::from_ref(s), &mut |s| {
        // A loop finishing a deferred reduction writes its exchange area after the loop.
        w.extend(finished_after(p, s));
        // Loads anywhere in the statement are reads.
        let mut loads = Vec::new();
        for_each_access(s, &mut |a| loads.push(a.target));
        match &s.kind {
            StmtKind::Store { access, .. } | StmtKind::AtomicAdd { access, .. } => {
                if let Some(x) = res(access.target) {
                    w.insert(x);
                }
                // The first access reported is the store target itself; count the others.
                loads.remove(0);
            }
            StmtKind::Copy { src, dst } => {
                for (t, write) in [(src, false), (dst, true)] {
                    let x = match t {
                        Tile::Buffer(b) => res(Target::Buffer(*b)),
                        Tile::Region { tensor, .. } => Some(Res::Tensor(*tensor)),
                    };
                    if let Some(x) = x {
                        if write {
                            w.insert(x);
                        } else {
                            r.insert(x);
                        }
                    }
                }
            }
            StmtKind::Fill { buf, .. } => {
                if let Some(x) = res(Target::Buffer(*buf)) {
                    w.insert(x);
                }
            }
            StmtKind::Gemm { a, b, c } => {
                for x in [a, b] {
                    if let Some(x) = res(Target::Buffer(*x)) {
                        r.insert(x);
                    }
                }
                if let Some(x) = res(Target::Buffer(*c)) {
                    r.insert(x);
                    w.insert(x);
                }
            }
            StmtKind::Reduce { src, .. } if exchanges(p, s) => {
                w.insert(Res::Scratch(stmt_key(s)));
                if let Some(x) = res(Target::Buffer(*src)) {
                    r.insert(x);
                }
            }
            StmtKind::Reduce { src, dst, .. } => {
                if let Some(x) = res(Target::Buffer(*src)) {
                    r.insert(x);
                }
                if let Some(x) = res(Target::Buffer(*dst)) {
                    w.insert(x);
                }
            }
            _ => {}
        }
        for t in loads {
            if let Some(x) = res(t) {
                r.insert(x);
            }
        }
    });
    (r, w)
}
