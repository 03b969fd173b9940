//! Pass 5, synchronisation: between consecutive block-level statements a barrier is placed
//! exactly when one writes a shared-resident buffer or a global tensor that the other reads or
//! writes, including around the back edge of loops. A reduction that exchanges partial results
//! across waves ([`super::rows`]) writes its exchange area, passes a barrier of its own and
//! reads the area: after it only that read is pending. A reduction deferred across a loop
//! ([`super::defer`]) exchanges once, after the loop: the loop writes and then reads its area.

use super::plan::*;
use crate::ir::visit::*;
use crate::ir::*;
use std::collections::{BTreeMap, BTreeSet};

/// The statements that a block barrier precedes, by [`StmtId`].
pub(super) fn plan_barriers(p: &Plan) -> BTreeSet<StmtId> {
    let mut out = BTreeSet::new();
    let cx = Cx {
        p,
        apart: written_apart(p),
    };
    block(&cx, &p.inst.k.body, &mut Pending::default(), &mut out);
    out
}

/// Whether `body` (the statements of `parts`, one after another), run again right after
/// itself (a loop's back edge), needs a barrier before its first statement that its own
/// barriers do not already give: what one run leaves pending conflicts with what the next run
/// touches before its first barrier. The consumers of a warp-specialised loop (`lower/tma.rs`)
/// ask it of their part of the body, whose loads the mbarriers order, and of that part and the
/// epilogue after the loop.
pub(super) fn back_edge(p: &Plan, parts: &[&[Stmt]]) -> bool {
    let cx = Cx {
        p,
        apart: written_apart(p),
    };
    let (mut once, mut twice) = (Pending::default(), BTreeSet::new());
    let mut alone = BTreeSet::new();
    // `block` threads all its state through `pending` and `out`, so running it on each part
    // in turn is running it on their concatenation.
    for part in parts {
        block(&cx, part, &mut once, &mut alone);
    }
    for part in parts {
        block(&cx, part, &mut once, &mut twice);
    }
    twice != alone
}

/// The plan, and the tensors whose writes never need a barrier ([`written_apart`]).
struct Cx<'p, 'a> {
    p: &'p Plan<'a>,
    apart: BTreeSet<ParamId>,
}

/// Outputs whose writes need no barrier between them: never read by the kernel and written by
/// one copy only, whose region moves by at least its own extent, in a dimension of its own,
/// with each iteration of every loop around it. No two of its runs then write one element, so
/// there is no order between threads to keep (between blocks a barrier could not help anyway).
/// The usual output copy `copy(&tile, y.at_mut((row0, t * BN)))` in a loop over `t` is one;
/// without this rule it paid a barrier per iteration for the back edge to itself.
fn written_apart(p: &Plan) -> BTreeSet<ParamId> {
    let k = p.inst.k;
    // Per tensor: whether every write seen so far is such a copy, and how many there are.
    let mut writes: BTreeMap<ParamId, (bool, usize)> = BTreeMap::new();
    fn visit<'s>(
        p: &Plan,
        stmts: &'s [Stmt],
        loops: &mut Vec<(VarId, &'s [Stmt])>,
        writes: &mut BTreeMap<ParamId, (bool, usize)>,
    ) {
        for s in stmts {
            let mut note = |t: ParamId, ok: bool| {
                let e = writes.entry(t).or_insert((true, 0));
                *e = (e.0 && ok, e.1 + 1);
            };
            if let Some(Access {
                target: Target::Tensor(t),
                ..
            }) = stored_access(s)
            {
                note(*t, false);
            }
            if let StmtKind::Copy {
                src: Tile::Buffer(b),
                dst: Tile::Region { tensor, offsets },
            } = &s.kind
            {
                note(*tensor, moves_apart(p, *b, offsets, loops));
            }
            match &s.kind {
                StmtKind::For {
                    kind: LoopKind::Serial { .. } | LoopKind::Pipelined { .. },
                    vars,
                    body,
                } => {
                    loops.push((vars[0], body));
                    visit(p, body, loops, writes);
                    loops.pop();
                }
                StmtKind::For { body, .. } => visit(p, body, loops, writes),
                StmtKind::If { then, els, .. } => {
                    visit(p, then, loops, writes);
                    visit(p, els, loops, writes);
                }
                _ => {}
            }
        }
    }
    visit(p, &k.body, &mut Vec::new(), &mut writes);
    writes
        .into_iter()
        .filter(|&(t, (ok, n))| ok && n == 1 && p.write_once[t])
        .map(|(t, _)| t)
        .collect()
}

/// Whether the region at `offsets`, shaped like buffer `b`, is disjoint between any two
/// iterations of the enclosing `loops`: each loop's variable `v` appears in exactly one offset,
/// as `v · E (+ c)` with `E` at least the tile's extent there, and everything else is the same
/// in every iteration (no loop variable, nothing the loops declare or assign).
fn moves_apart(p: &Plan, b: BufId, offsets: &[Expr], loops: &[(VarId, &[Stmt])]) -> bool {
    let Some(&(_, outer)) = loops.first() else {
        return true;
    };
    let shape = p.inst.buffer_shape(b);
    let rank = offsets.len();
    if shape.len() > rank {
        return false;
    }
    let lvars: Vec<VarId> = loops.iter().map(|l| l.0).collect();
    let mut varying: BTreeSet<VarId> = lvars.iter().copied().collect();
    walk(outer, &mut |s| match &s.kind {
        StmtKind::Let { var, .. } | StmtKind::Assign { var, .. } => {
            varying.insert(*var);
        }
        StmtKind::For { vars, .. } => varying.extend(vars.iter().copied()),
        _ => {}
    });
    let invariant = |e: &Expr| {
        let mut v = BTreeSet::new();
        expr_vars(e, &mut v);
        let mut loads = false;
        each_expr(e, &mut |x| loads |= matches!(x.kind, ExprKind::Load(_)));
        !loads && v.is_disjoint(&varying)
    };
    let mut covered = Vec::new();
    for (d, off) in offsets.iter().enumerate() {
        if invariant(off) {
            continue;
        }
        let ext = if d + shape.len() >= rank {
            shape[d + shape.len() - rank]
        } else {
            1
        };
        // `v · E` or `E · v`, with `E` a constant at least `ext`.
        let scaled = |e: &Expr| -> Option<VarId> {
            let ExprKind::Binary(BinOp::Mul, x, y) = &e.kind else {
                return None;
            };
            let (v, c) = match (&x.kind, &y.kind) {
                (ExprKind::Var(v), _) => (*v, y),
                (_, ExprKind::Var(v)) => (*v, x),
                _ => return None,
            };
            let big = eval_const(c, p.inst.vals).is_some_and(|c| c >= ext as i128);
            (lvars.contains(&v) && big).then_some(v)
        };
        let v = match &off.kind {
            ExprKind::Binary(BinOp::Add, x, y) => scaled(x)
                .filter(|_| invariant(y))
                .or_else(|| scaled(y).filter(|_| invariant(x))),
            _ => scaled(off),
        };
        match v {
            Some(v) if !covered.contains(&v) => covered.push(v),
            _ => return false,
        }
    }
    lvars.iter().all(|v| covered.contains(v))
}

/// A block-level statement sequence entered with `pending` effects not yet separated by a
/// barrier; records its barriers in `out`. Mirrors the structure [`super::print`] walks.
fn block(cx: &Cx, stmts: &[Stmt], pending: &mut Pending, out: &mut BTreeSet<StmtId>) {
    let p = cx.p;
    for s in stmts {
        let (r, w) = effects(cx, s);
        if pending.conflicts(&r, &w) {
            out.insert(p.inst.ids.stmt(s));
            *pending = Pending::default();
        }
        match &s.kind {
            StmtKind::For {
                kind: LoopKind::Pipelined { .. },
                body,
                ..
            } if p.staged.contains_key(&p.inst.ids.stmt(s)) => {
                // The staged loop orders its own loads and compute (`print::pipelined_loop`).
                let nloads = p.staged[&p.inst.ids.stmt(s)].loads;
                let (loads, compute) = body.split_at(nloads);
                block(cx, loads, &mut Pending::default(), out);
                block(cx, compute, &mut Pending::default(), out);
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
                block(cx, body, &mut first, &mut BTreeSet::new());
                let mut inner = pending.clone();
                inner.union(&first);
                block(cx, body, &mut inner, out);
                pending.union(&inner);
                // The finishing exchange after the loop (skipped when it runs no iteration, so
                // what is pending stays pending).
                pending.reads.extend(finished_after(p, s));
            }
            StmtKind::If { then, els, .. } => {
                let mut pt = pending.clone();
                block(cx, then, &mut pt, out);
                let mut pe = pending.clone();
                block(cx, els, &mut pe, out);
                pending.union(&pt);
                pending.union(&pe);
            }
            StmtKind::Reduce { .. } if exchanges(p, s) => {
                *pending = Pending::default();
                pending.reads.insert(Res::Scratch(p.inst.ids.stmt(s)));
            }
            _ => pending.add(&r, &w),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Res {
    Buf(BufId),
    Tensor(ParamId),
    /// The exchange area of a register reduction, by [`StmtId`].
    Scratch(StmtId),
}

/// A reduction in registers whose rows span several waves (with a barrier inside), run where
/// it stands (a deferred one only folds registers there).
fn exchanges(p: &Plan, s: &Stmt) -> bool {
    p.reduces
        .get(&p.inst.ids.stmt(s))
        .is_some_and(|r| r.scratch.is_some())
        && p.deferral_of_reduce(p.inst.ids.stmt(s)).is_none()
}

/// The exchange areas of the reductions that loop `s` carries and finishes after its last
/// iteration ([`super::defer`]).
fn finished_after(p: &Plan, s: &Stmt) -> Vec<Res> {
    p.deferred
        .get(&p.inst.ids.stmt(s))
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
fn effects(cx: &Cx, s: &Stmt) -> (BTreeSet<Res>, BTreeSet<Res>) {
    let p = cx.p;
    let mut r = BTreeSet::new();
    let mut w = BTreeSet::new();
    let res = |t: Target| -> Option<Res> {
        match t {
            Target::Tensor(t) if cx.apart.contains(&t) => None,
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
        // Loads anywhere in the statement are reads; what it stores to is a write.
        let mut loads = Vec::new();
        for_each_load(s, &mut |a| loads.push(a.target));
        if let Some(x) = stored_access(s).and_then(|a| res(a.target)) {
            w.insert(x);
        }
        match &s.kind {
            StmtKind::Copy { src, dst } => {
                for (t, write) in [(src, false), (dst, true)] {
                    let x = match t {
                        Tile::Buffer(b) => res(Target::Buffer(*b)),
                        Tile::Region { tensor, .. } => res(Target::Tensor(*tensor)),
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
            StmtKind::Gemm { a, b, c, .. } => {
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
                w.insert(Res::Scratch(p.inst.ids.stmt(s)));
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
