//! Pass 4, loop plans: how each `parallel` loop's iterations map onto the block's threads, and
//! which of its accesses move as vectors.
//!
//! A loop whose innermost extent is a multiple of [`CHUNK`] runs **chunk-wise** when its
//! mapping is free (it touches no register fragment) or already chunked (the fragments it
//! touches are): each thread takes chunks of `CHUNK` consecutive innermost iterations, its
//! *lanes*. An access whose element index advances by exactly one per lane (affine in the
//! innermost variable with coefficient 1, every other index lane-invariant) to a global tensor
//! or a shared-memory buffer is **grouped**: the chunk moves it as one vector (16 bytes for
//! 16-bit types) when its address is aligned, which the generated code tests per chunk, else
//! lane by lane. Nothing about alignment has to be proven: a misaligned tensor is slower, never
//! wrong.
//!
//! Control flow is the other condition. The lanes of a chunk run the body together, so every
//! `if` in it must take the same branch in all lanes. Conditions that read no memory (index
//! arithmetic: the usual tail guards `g < N`) are evaluated for every lane before the chunk
//! runs; a chunk whose lanes disagree (the one chunk that straddles a tensor's edge) runs lane
//! by lane through the plain body instead. Loops whose bodies need more (a condition reading
//! memory, a local buffer) keep the element-wise mapping.
//!
//! Write-once outputs (tensors the kernel never reads) are stored with an evict-first hint.

use super::affine::{Affine, Var};
use super::plan::*;
use super::served;
use super::util::*;
use crate::ir::visit::*;
use crate::ir::*;
use std::collections::{BTreeMap, BTreeSet};

/// How a condition's value can change over consecutive lanes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Monotone {
    /// The same in every lane.
    Const,
    /// True, then false from some lane on.
    Prefix,
    /// False, then true from some lane on.
    Suffix,
}

impl Monotone {
    fn both(self, other: Monotone) -> Option<Monotone> {
        match (self, other) {
            (Monotone::Const, x) | (x, Monotone::Const) => Some(x),
            (a, b) if a == b => Some(a),
            _ => None,
        }
    }
    fn not(self) -> Monotone {
        match self {
            Monotone::Const => Monotone::Const,
            Monotone::Prefix => Monotone::Suffix,
            Monotone::Suffix => Monotone::Prefix,
        }
    }
}

/// A plan for every `parallel` loop of the kernel, by [`StmtId`].
pub(super) fn plan_loops(p: &Plan) -> BTreeMap<StmtId, LoopPlan> {
    let read = tensors_read(p.inst.k);
    let mut out = BTreeMap::new();
    walk(&p.inst.k.body, &mut |s| {
        if let StmtKind::For {
            kind: LoopKind::Parallel { extents },
            vars,
            body,
        } = &s.kind
        {
            let ext = p.inst.extents(extents);
            let layout = loop_layout(p, body, &ext);
            let vector = vector_plan(p, vars, body, &ext, layout, &read);
            let layout = match &vector {
                Some(v) => Layout::Chunked { unit: v.lanes },
                None => layout,
            };
            let wave = p.target.wave as usize;
            let row_read =
                super::rows::rows_of(layout, &ext, p.threads, wave).map(|(l, d)| match l {
                    Layout::AccRows { inst, m, wm, wn } => RowRead::Acc {
                        inst,
                        m,
                        n: ext[1],
                        wm,
                        wn,
                    },
                    _ => RowRead::Div(d),
                });
            out.insert(
                p.inst.ids.stmt(s),
                LoopPlan {
                    layout,
                    vector,
                    row_read,
                },
            );
        }
    });
    out
}

/// The layout a parallel loop iterates in ([`served::loop_layout`]).
fn loop_layout(p: &Plan, body: &[Stmt], ext: &[usize]) -> Layout {
    served::loop_layout(&p.inst, body, ext, &|b| match p.storage[b] {
        Storage::Reg { layout, .. } => Some(layout),
        _ => None,
    })
}

/// Per buffer, for a fragment held in chunks (chunked, or a column fragment of chunks): where
/// its chunks lie one fixed distance apart in a copy's region ([`chunk_stride`]), the form a
/// copy out of it stores in. Chunk 0's address is then computed once and the others are
/// offsets from it: the conv1d multi store's index arithmetic fell from about 100
/// instructions a thread to about 30, 0.2030 -> 0.2007 ms on an H100 (`__L` unsigned did the
/// same but cost the whole-row softmax 27 registers). Loads keep their own address each: in
/// the flash attention's row loops the offset form left ptxas fewer loads in flight (106 -> 72
/// registers) and ran 0.76-0.84x.
pub(super) fn store_strides(p: &Plan) -> Vec<Option<(usize, usize)>> {
    (0..p.inst.k.buffers.len())
        .map(|b| {
            let (t, nreg, unit) = match p.storage[b] {
                Storage::Reg {
                    layout: Layout::Chunked { unit },
                    nreg,
                } => (p.threads, nreg, unit),
                Storage::Reg {
                    layout: Layout::Cols { unit, width },
                    nreg,
                } if unit > 1 => (width, nreg, unit),
                _ => return None,
            };
            chunk_stride(&p.inst.buffer_shape(b), unit * t, nreg / unit)
        })
        .collect()
}

/// Where a thread's chunks of a chunked copy lie one fixed distance apart in the tensor: the
/// chunk step `step` (tile elements) is a whole number `rows` of tile dimension `d`'s rows (the
/// outermost dimension whose stride divides it), and `n` chunks never carry into an outer
/// dimension (`rows · n ≤` its extent), so chunk `k` is chunk 0 moved `k · rows` along `d`.
/// Returns `(d, rows)`; `None` for one chunk or a step that wraps.
fn chunk_stride(ext: &[usize], step: usize, n: usize) -> Option<(usize, usize)> {
    if n < 2 {
        return None;
    }
    let mut stride: usize = ext.iter().product();
    for (d, &e) in ext.iter().enumerate() {
        stride /= e;
        if step % stride == 0 {
            let rows = step / stride;
            return (rows * n <= e).then_some((d, rows));
        }
    }
    None
}

/// Per parameter: a mutable tensor the kernel never reads.
pub(super) fn write_once(k: &Kernel) -> Vec<bool> {
    let read = tensors_read(k);
    k.params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            matches!(p.kind, ParamKind::Tensor { mutable: true, .. }) && !read.contains(&i)
        })
        .collect()
}

/// Tensors the kernel reads anywhere (loads, copy sources).
fn tensors_read(k: &Kernel) -> BTreeSet<ParamId> {
    let mut read = BTreeSet::new();
    walk(&k.body, &mut |s| {
        let mut note = |a: &Access| {
            if let Target::Tensor(t) = a.target {
                read.insert(t);
            }
        };
        // A store's own target is not a read (an atomic add is).
        if let (StmtKind::AtomicAdd { .. }, Some(a)) = (&s.kind, stored_access(s)) {
            note(a);
        }
        for_each_load(s, &mut note);
        if let StmtKind::Copy {
            src: Tile::Region { tensor, .. },
            ..
        } = &s.kind
        {
            read.insert(*tensor);
        }
    });
    read
}

/// What the body analysis knows about the loop's variables.
struct Body<'a> {
    inner: VarId,
    /// `let`s of the body with their initialisers.
    lets: BTreeMap<VarId, &'a Expr>,
    /// Variables the body assigns.
    assigned: BTreeSet<VarId>,
    /// Variables of serial loops inside the body (lane-invariant, not pure constants).
    serial: BTreeSet<VarId>,
}

impl Body<'_> {
    /// The change of `e` from one lane to the next when `e` is affine in the innermost loop
    /// variable (`Some(0)`: the same in every lane); `None` when it is not affine or depends
    /// on something per lane that is not (a reassigned variable, a load that varies).
    fn stride(&self, e: &Expr, vals: &[u64]) -> Option<i128> {
        Affine {
            vals,
            var: |v| {
                if v == self.inner {
                    Var::Moves
                } else if self.assigned.contains(&v) {
                    Var::Varies
                } else {
                    self.lets.get(&v).map_or(Var::Fixed, |init| Var::Is(init))
                }
            },
            loads_fixed: true,
            casts: true,
        }
        .step(e)
    }

    /// Whether `e`'s value in lane 0 is a multiple of `m` in every chunk (the innermost
    /// variable's lane 0 is a chunk's first element: a multiple of the lanes).
    fn multiple(&self, e: &Expr, m: i128, vals: &[u64]) -> bool {
        match &e.kind {
            ExprKind::Var(v) if *v == self.inner => true,
            ExprKind::Var(v) if self.assigned.contains(v) => false,
            ExprKind::Var(v) => self
                .lets
                .get(v)
                .is_some_and(|init| self.multiple(init, m, vals)),
            ExprKind::Int(_) | ExprKind::Const(_) => {
                eval_const(e, vals).is_some_and(|v| v % m == 0)
            }
            ExprKind::Binary(BinOp::Add | BinOp::Sub, x, y) if e.ty.is_int() => {
                self.multiple(x, m, vals) && self.multiple(y, m, vals)
            }
            ExprKind::Binary(BinOp::Mul, x, y) if e.ty.is_int() => {
                self.multiple(x, m, vals) || self.multiple(y, m, vals)
            }
            ExprKind::Cast(x) if e.ty.is_int() && x.ty.is_int() => self.multiple(x, m, vals),
            _ => false,
        }
    }

    /// How `c` changes over consecutive lanes, when it changes at most once: comparisons of
    /// affine integer expressions (`<`, `<=`, `>`, `>=` of any slope; `==`, `!=` only when
    /// lane-invariant), combined by `&&`, `||` and `!` in one direction.
    fn monotone(&self, c: &Expr, vals: &[u64]) -> Option<Monotone> {
        if self.stride(c, vals) == Some(0) {
            return Some(Monotone::Const);
        }
        match &c.kind {
            ExprKind::Binary(BinOp::And | BinOp::Or, a, b) => {
                self.monotone(a, vals)?.both(self.monotone(b, vals)?)
            }
            ExprKind::Unary(UnOp::Not, a) => Some(self.monotone(a, vals)?.not()),
            ExprKind::Binary(op, a, b) if a.ty.is_int() && b.ty.is_int() => {
                // a - b moves by d from one lane to the next.
                let d = self.stride(a, vals)?.checked_sub(self.stride(b, vals)?)?;
                match (op, d.signum()) {
                    (_, 0) => Some(Monotone::Const),
                    (BinOp::Lt | BinOp::Le, 1) | (BinOp::Gt | BinOp::Ge, -1) => {
                        Some(Monotone::Prefix)
                    }
                    (BinOp::Lt | BinOp::Le, -1) | (BinOp::Gt | BinOp::Ge, 1) => {
                        Some(Monotone::Suffix)
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// Whether `e` reads no memory and no variable that changes within the body other than
    /// the loop's own and pure `let`s: what the uniformity check can evaluate up front.
    fn pure(&self, e: &Expr) -> bool {
        let mut ok = true;
        each_expr(e, &mut |x| match &x.kind {
            ExprKind::Load(_) => ok = false,
            ExprKind::Var(v) => {
                if self.assigned.contains(v) || self.serial.contains(v) {
                    ok = false
                } else if let Some(init) = self.lets.get(v) {
                    ok &= self.pure(init)
                }
            }
            _ => {}
        });
        ok
    }
}

/// The vector plan for a loop, when it can run chunk-wise (module docs).
fn vector_plan(
    p: &Plan,
    vars: &[VarId],
    body: &[Stmt],
    ext: &[usize],
    layout: Layout,
    read: &BTreeSet<ParamId>,
) -> Option<VectorPlan> {
    let (&inner, &e_in) = (vars.last()?, ext.last()?);
    // The mapping must be free or chunked already.
    let mut regs = false;
    let mut locals = false;
    walk(body, &mut |s| {
        each_buffer(s, &mut |b| match p.storage[b] {
            Storage::Reg { .. } => regs = true,
            Storage::Local => locals = true,
            Storage::Shared { .. } => {}
        });
        if matches!(s.kind, StmtKind::Alloc(_)) {
            locals = true;
        }
    });
    let free = layout == Layout::Strided && !regs;
    // A chunked loop's lanes are its fragments' chunk; a free loop's are chosen below.
    let lanes = match layout {
        Layout::Chunked { unit } => unit,
        _ if free => CHUNK,
        _ => return None,
    };
    if locals || e_in % lanes != 0 {
        return None;
    }
    let mut b = Body {
        inner,
        lets: BTreeMap::new(),
        assigned: BTreeSet::new(),
        serial: BTreeSet::new(),
    };
    fn collect<'a>(stmts: &'a [Stmt], b: &mut Body<'a>) {
        for s in stmts {
            match &s.kind {
                StmtKind::Let { var, init } => {
                    b.lets.insert(*var, init);
                }
                StmtKind::Assign { var, .. } => {
                    b.assigned.insert(*var);
                }
                StmtKind::For { vars, body, .. } => {
                    b.serial.extend(vars.iter().copied());
                    collect(body, b);
                }
                StmtKind::If { then, els, .. } => {
                    collect(then, b);
                    collect(els, b);
                }
                _ => {}
            }
        }
    }
    collect(body, &mut b);
    // Only the body's own variables may be assigned (a write to an outer one is a race).
    if b.assigned.iter().any(|v| !b.lets.contains_key(v)) {
        return None;
    }
    let mut plan = VectorPlan {
        inner,
        lanes,
        grouped: BTreeSet::new(),
        streaming: BTreeSet::new(),
        aligned: BTreeSet::new(),
        lane_vars: b.lets.keys().copied().collect(),
        conditions: Vec::new(),
        interleaved: BTreeMap::new(),
        groups: Vec::new(),
        pure_lets: b
            .lets
            .iter()
            .filter(|(v, init)| !b.assigned.contains(v) && b.pure(init))
            .map(|(v, init)| (*v, p.inst.ids.expr(init)))
            .collect(),
        endpoints: false,
    };
    // Conditions: pure ones at the top level (checked per chunk); inside serial loops they
    // must be the same in every lane outright.
    fn conditions<'k>(
        stmts: &'k [Stmt],
        nested: bool,
        b: &Body,
        vals: &[u64],
        out: &mut Vec<&'k Expr>,
    ) -> bool {
        for s in stmts {
            match &s.kind {
                StmtKind::If { cond, then, els } => {
                    // Nested in a serial loop, a condition is evaluated per iteration: it must be
                    // the same in every lane outright.
                    let ok = if nested {
                        b.stride(cond, vals) == Some(0)
                    } else {
                        b.pure(cond)
                    };
                    if !ok {
                        return false;
                    }
                    if !nested {
                        out.push(cond);
                    }
                    if !conditions(then, nested, b, vals, out)
                        || !conditions(els, nested, b, vals, out)
                    {
                        return false;
                    }
                }
                StmtKind::For {
                    kind: LoopKind::Serial { start, end },
                    body,
                    ..
                } => {
                    if b.stride(start, vals) != Some(0) || b.stride(end, vals) != Some(0) {
                        return false;
                    }
                    if !conditions(body, true, b, vals, out) {
                        return false;
                    }
                }
                StmtKind::For { .. } => return false,
                _ => {}
            }
        }
        true
    }
    let mut conds = Vec::new();
    if !conditions(body, false, &b, p.inst.vals, &mut conds) {
        return None;
    }
    plan.endpoints = conds.iter().all(|c| b.monotone(c, p.inst.vals).is_some());
    plan.conditions = conds.iter().map(|c| p.inst.ids.expr(c)).collect();
    // Stores that fill whole vectors together; a free loop takes their lanes.
    let (interleaved, groups) = interleaves(p, &b, body, e_in, (!free).then_some(lanes));
    plan.interleaved = interleaved;
    plan.groups = groups;
    // Group the unit-stride accesses to tensors and shared memory, except where only some
    // lanes would perform them (the arms of a select, the right of `&&` / `||`).
    let mut shared_unit = true;
    // A load from memory that is the same in every lane: chunk-wise, a chunk reads it once.
    let mut invariant_load = false;
    let mut grouped_bytes: Vec<usize> = Vec::new();
    let mut tensor_accesses: BTreeSet<AccessId> = BTreeSet::new();
    walk(body, &mut |s| {
        let atomic_add = matches!(s.kind, StmtKind::AtomicAdd { .. });
        let mut conditional = BTreeSet::new();
        each_stmt_expr(s, &mut |e| {
            conditional_loads(&p.inst.ids, e, false, &mut conditional)
        });
        // `own`: the statement's stored access.
        let mut access = |a: &Access, own: bool| {
            let shared = match a.target {
                Target::Tensor(_) => false,
                Target::Buffer(x) => match p.storage[x] {
                    Storage::Shared { .. } => true,
                    _ => return,
                },
            };
            if matches!(a.target, Target::Tensor(_)) {
                tensor_accesses.insert(p.inst.ids.access(a));
            }
            if plan.interleaved.contains_key(&p.inst.ids.access(a)) {
                return;
            }
            // (A swizzled tile is read element by element: its vectors are not contiguous.)
            let swizzled = matches!(a.target, Target::Buffer(x) if p.swizzled[x] != 0);
            let unit = unit_stride(p, &b, a) && !swizzled;
            let atomic = own && atomic_add;
            invariant_load |= !own && b.stride(&linear_index(p, a), p.inst.vals) == Some(0);
            if unit && !atomic && !conditional.contains(&p.inst.ids.access(a)) {
                plan.grouped.insert(p.inst.ids.access(a));
                grouped_bytes.push(match a.target {
                    Target::Buffer(x) => p.inst.k.buffers[x].dtype.size_bytes(),
                    Target::Tensor(t) => tensor_dtype(p.inst.k, t).size_bytes(),
                });
                // (A store's, not an atomic add's: that is the branch's condition.)
                if let (true, Target::Tensor(t)) = (own, a.target) {
                    if !read.contains(&t) {
                        plan.streaming.insert(p.inst.ids.access(a));
                    }
                }
            } else if shared && b.stride(&linear_index(p, a), p.inst.vals) != Some(0) {
                // A shared access that varies per lane but moves no vector: chunk-wise it
                // would hit the banks CHUNK elements apart. Keep the plain mapping.
                shared_unit = false;
            }
        };
        if let Some(a) = stored_access(s) {
            access(a, true);
        }
        for_each_load(s, &mut |a| access(a, false));
    });
    if free {
        let widest = grouped_bytes.iter().max().copied().unwrap_or(1);
        plan.lanes = match plan.groups.first() {
            Some(g) => 16 / (g.factor * g.elem),
            None => chunk_for(widest),
        };
    }
    // Grouped shared accesses whose vectors of the final lanes are aligned in every chunk.
    walk(body, &mut |s| {
        for_each_access(s, &mut |a| {
            let shared = matches!(a.target, Target::Buffer(x) if matches!(p.storage[x], Storage::Shared { .. }));
            if shared
                && plan.grouped.contains(&p.inst.ids.access(a))
                && chunk_multiple(p, &b, a, plan.lanes)
            {
                plan.aligned.insert(p.inst.ids.access(a));
            }
        });
    });
    // A free loop changes its mapping only for a vector access to global memory: over shared
    // memory alone the element-wise mapping is already conflict-free for 4-byte elements.
    let global =
        plan.grouped.iter().any(|k| tensor_accesses.contains(k)) || !plan.groups.is_empty();
    // A chunked loop also gains from reading a lane-invariant value once per chunk (a row
    // broadcast `a_s[i]` from shared memory, with the columns in registers).
    let worth = (!plan.grouped.is_empty() || !plan.groups.is_empty() || (invariant_load && !free))
        && (shared_unit || !free)
        && (global || !free)
        && plan.lanes >= 2;
    worth.then_some(plan)
}

/// The interleaved store groups of a free loop's body ([`Interleave`]), all of the same
/// lanes (the first group's), with the residue of each store.
fn interleaves(
    p: &Plan,
    b: &Body,
    body: &[Stmt],
    e_in: usize,
    fixed: Option<usize>,
) -> (BTreeMap<AccessId, (usize, usize)>, Vec<Interleave>) {
    struct Cand<'s> {
        key: AccessId,
        stmt: StmtId,
        pos: usize,
        value: &'s Expr,
        buf: BufId,
        lead: &'s [Expr],
        x: &'s Expr,
        c: i128,
        factor: i128,
    }
    let mut cands = Vec::new();
    for (pos, s) in body.iter().enumerate() {
        let StmtKind::Store { access, value } = &s.kind else {
            continue;
        };
        let Target::Buffer(buf) = access.target else {
            continue;
        };
        if !matches!(p.storage[buf], Storage::Shared { .. }) {
            continue;
        }
        let Some((last, lead)) = access.index.split_last() else {
            continue;
        };
        if !lead.iter().all(|i| b.stride(i, p.inst.vals) == Some(0)) {
            continue;
        }
        let (x, c) = match &last.kind {
            ExprKind::Binary(BinOp::Add, x, y) if eval_const(y, p.inst.vals).is_some() => {
                (&**x, eval_const(y, p.inst.vals).unwrap_or(0))
            }
            _ => (last, 0),
        };
        // A group fills 16-byte vectors (`16 % (factor·elem) == 0` below): a larger stride
        // (a user's constant, however large) is never a candidate, which also bounds
        // everything sized by `factor` here.
        match b.stride(x, p.inst.vals) {
            Some(factor) if (2..=16).contains(&factor) => cands.push(Cand {
                key: p.inst.ids.access(access),
                stmt: p.inst.ids.stmt(s),
                pos,
                value,
                buf,
                lead,
                x,
                c,
                factor,
            }),
            _ => {}
        }
    }
    let mut out = BTreeMap::new();
    let mut groups: Vec<Interleave> = Vec::new();
    let mut lanes = None;
    let mut taken = vec![false; cands.len()];
    for i in 0..cands.len() {
        if taken[i] {
            continue;
        }
        let first = &cands[i];
        let members: Vec<usize> = (i..cands.len())
            .filter(|&j| {
                let o = &cands[j];
                !taken[j]
                    && o.buf == first.buf
                    && o.factor == first.factor
                    && same(o.x, first.x)
                    && o.lead.len() == first.lead.len()
                    && o.lead.iter().zip(first.lead).all(|(u, v)| same(u, v))
            })
            .collect();
        members.iter().for_each(|&j| taken[j] = true);
        let factor = first.factor as usize;
        let mut residues: Vec<i128> = members.iter().map(|&j| cands[j].c).collect();
        residues.sort_unstable();
        let elem = p.inst.k.buffers[first.buf].dtype.size_bytes();
        if !residues.iter().copied().eq(0..factor as i128) || 16 % (factor * elem) != 0 {
            continue;
        }
        // A free loop's chunk fills one vector; a chunked loop's (its fragments' chunk) may
        // fill several, adjacent only where the tile is not swizzled.
        let n = fixed.unwrap_or(16 / (factor * elem));
        let bytes = factor * n * elem;
        if bytes % 16 != 0 || (p.swizzled[first.buf] != 0 && bytes != 16) {
            continue;
        }
        let shape = p.inst.buffer_shape(first.buf);
        // The chunk's vector starts at `factor·base + y`: a multiple of `factor·n` when `y`
        // is, and the rows keep it so (swizzled tiles move whole 16-byte chunks).
        let aligned = aligned_start(p, b, first.x, (factor * n) as i128)
            && (p.swizzled[first.buf] != 0 || shape.last().is_some_and(|d| d % (factor * n) == 0));
        // Nothing else in the body touches the buffer: the group's elements are written when
        // its last store runs.
        let mut others = 0;
        walk(body, &mut |s| {
            for_each_access(s, &mut |a| {
                others += usize::from(a.target == Target::Buffer(first.buf));
            })
        });
        if !aligned || e_in % n != 0 || others != members.len() || lanes.is_some_and(|l| l != n) {
            continue;
        }
        lanes = Some(n);
        let g = groups.len();
        for &j in &members {
            out.insert(cands[j].key, (g, cands[j].c as usize));
        }
        // The nibble pair: two adjacent stores (nothing between them reassigns the byte).
        let nibbles = match members.as_slice() {
            &[i, j] if cands[i].pos.abs_diff(cands[j].pos) == 1 && n % 4 == 0 => {
                let (lo, hi) = if cands[i].c == 0 { (i, j) } else { (j, i) };
                nibble_pair(p, cands[lo].value, cands[hi].value)
            }
            _ => None,
        }
        .filter(|_| p.inst.k.buffers[first.buf].dtype == Dtype::F16);
        groups.push(Interleave {
            factor,
            elem,
            last: members
                .iter()
                .map(|&j| cands[j].stmt)
                .max()
                .expect("a group has members"),
            nibbles,
        });
    }
    (out, groups)
}

/// The [`Nibbles`] of the values stored at residues 0 and 1 of a pair, when they are.
fn nibble_pair(p: &Plan, first: &Expr, second: &Expr) -> Option<Nibbles> {
    let (x0, s0, off0) = nibble(p, first)?;
    let (x1, s1, off1) = nibble(p, second)?;
    (same(x0, x1) && s0 != s1 && off0 == off1).then(|| Nibbles {
        byte: p.inst.ids.expr(x0),
        high_first: s0 == 4,
        off: off0,
    })
}

/// `e` as `((x >> s) & 15) as int + off` converted to a half, with `x` a byte, `s` 0 or 4,
/// the sum taken in a signed type (so that it cannot wrap) and `off` in [-1024, 1024] (so
/// that every value and the constants of the bit trick are exact halves).
fn nibble<'e>(p: &Plan, e: &'e Expr) -> Option<(&'e Expr, u32, i128)> {
    let ExprKind::Cast(sum) = &e.kind else {
        return None;
    };
    if e.ty != Dtype::F16 {
        return None;
    }
    let konst = |x: &Expr| eval_const(x, p.inst.vals);
    let (x, off) = match &sum.kind {
        ExprKind::Binary(BinOp::Add, x, y) if konst(y).is_some() => (&**x, konst(y)?),
        ExprKind::Binary(BinOp::Add, y, x) if konst(y).is_some() => (&**x, konst(y)?),
        ExprKind::Binary(BinOp::Sub, x, y) => (&**x, -konst(y)?),
        _ => (&**sum, 0),
    };
    if off != 0 && !matches!(sum.ty, Dtype::I32 | Dtype::Index) || !(-1024..=1024).contains(&off) {
        return None;
    }
    // Integer conversions keep a nibble's value.
    let mut x = x;
    while let ExprKind::Cast(inner) = &x.kind {
        if !(x.ty.is_int() && inner.ty.is_int() && x.ty != Dtype::Bool && inner.ty != Dtype::Bool) {
            return None;
        }
        x = inner;
    }
    let ExprKind::Binary(BinOp::BitAnd, a, m) = &x.kind else {
        return None;
    };
    let (a, m) = if konst(m) == Some(15) { (a, m) } else { (m, a) };
    if konst(m) != Some(15) {
        return None;
    }
    let (byte, shift) = match &a.kind {
        ExprKind::Binary(BinOp::Shr, y, k) if konst(k) == Some(4) => (&**y, 4),
        _ => (&**a, 0),
    };
    (byte.ty == Dtype::U8).then_some((byte, shift, off))
}

/// Whether `x`, affine in the innermost variable `j` with coefficient `a`, is `a·j` plus a
/// lane-invariant multiple of `m` (given that `a·j` at a chunk's first lane is one).
fn aligned_start(p: &Plan, b: &Body, x: &Expr, m: i128) -> bool {
    let is_aj = |e: &Expr| match &e.kind {
        ExprKind::Binary(BinOp::Mul, u, v) => {
            let var = |w: &Expr| matches!(w.kind, ExprKind::Var(v) if v == b.inner);
            (var(u) && eval_const(v, p.inst.vals).is_some())
                || (var(v) && eval_const(u, p.inst.vals).is_some())
        }
        _ => false,
    };
    match &x.kind {
        _ if is_aj(x) => true,
        ExprKind::Binary(BinOp::Add, u, v) => {
            (is_aj(u) && b.stride(v, p.inst.vals) == Some(0) && b.multiple(v, m, p.inst.vals))
                || (is_aj(v)
                    && b.stride(u, p.inst.vals) == Some(0)
                    && b.multiple(u, m, p.inst.vals))
        }
        _ => false,
    }
}

/// Whether lane `l` of access `a` is element `l` past lane 0's.
fn unit_stride(p: &Plan, b: &Body, a: &Access) -> bool {
    let Some((last, lead)) = a.index.split_last() else {
        return false;
    };
    lead.iter().all(|i| b.stride(i, p.inst.vals) == Some(0))
        && b.stride(last, p.inst.vals) == Some(1)
}

/// Whether lane 0's element offset in `a` (a grouped access to an unswizzled shared buffer)
/// is a multiple of `m` in every chunk: each index is a multiple of `m` or multiplies a
/// stride that is.
fn chunk_multiple(p: &Plan, b: &Body, a: &Access, m: usize) -> bool {
    let Target::Buffer(x) = a.target else {
        return false;
    };
    let shape = p.inst.buffer_shape(x);
    let mut stride = 1;
    let mut ok = true;
    for (i, d) in a.index.iter().zip(&shape).rev() {
        ok &= stride % m == 0 || b.multiple(i, m as i128, p.inst.vals);
        stride *= d;
    }
    ok && p.swizzled[x] == 0
}

/// The access's row-major element index as one expression, for stride questions only (the
/// dimensions are stood in for by their own symbols or values).
fn linear_index(p: &Plan, a: &Access) -> Expr {
    let dims: Vec<Expr> = match a.target {
        Target::Tensor(t) => match &p.inst.k.params[t].kind {
            ParamKind::Tensor { dims, .. } => dims
                .iter()
                .map(|d| {
                    let kind = match d {
                        DimRef::Sym(i) => ExprKind::Sym(*i),
                        DimRef::Const(c) => ExprKind::Int(p.inst.vals[*c] as i128),
                    };
                    index_expr(kind, a)
                })
                .collect(),
            ParamKind::Scalar { .. } => Vec::new(),
        },
        Target::Buffer(x) => p
            .inst
            .buffer_shape(x)
            .iter()
            .map(|&d| index_expr(ExprKind::Int(d as i128), a))
            .collect(),
    };
    let mut lin = a.index[0].clone();
    for (i, d) in a.index.iter().zip(&dims).skip(1) {
        let span = lin.span;
        let mul = Expr {
            kind: ExprKind::Binary(BinOp::Mul, Box::new(lin), Box::new(d.clone())),
            ty: Dtype::Index,
            span,
        };
        lin = Expr {
            kind: ExprKind::Binary(BinOp::Add, Box::new(mul), Box::new(i.clone())),
            ty: Dtype::Index,
            span,
        };
    }
    lin
}

fn index_expr(kind: ExprKind, a: &Access) -> Expr {
    Expr {
        kind,
        ty: Dtype::Index,
        span: a.index[0].span,
    }
}

/// Collects the loads of `e` that only some lanes may perform: those in the arms of a select
/// and on the right of `&&` / `||` (the C++ evaluates them conditionally).
fn conditional_loads(ids: &Ids, e: &Expr, cond: bool, out: &mut BTreeSet<AccessId>) {
    match &e.kind {
        ExprKind::Load(a) => {
            if cond {
                out.insert(ids.access(a));
            }
            a.index
                .iter()
                .for_each(|i| conditional_loads(ids, i, cond, out));
        }
        ExprKind::Select(c, a, b) => {
            conditional_loads(ids, c, cond, out);
            conditional_loads(ids, a, true, out);
            conditional_loads(ids, b, true, out);
        }
        ExprKind::Binary(BinOp::And | BinOp::Or, a, b) => {
            conditional_loads(ids, a, cond, out);
            conditional_loads(ids, b, true, out);
        }
        ExprKind::Binary(_, a, b) | ExprKind::DivCeil(a, b) => {
            conditional_loads(ids, a, cond, out);
            conditional_loads(ids, b, cond, out);
        }
        ExprKind::Unary(_, a) | ExprKind::Cast(a) => conditional_loads(ids, a, cond, out),
        ExprKind::Math(_, args) => args
            .iter()
            .for_each(|a| conditional_loads(ids, a, cond, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::chunk_stride;

    #[test]
    fn chunks_one_distance_apart_only_where_no_step_carries() {
        // conv1d multi's (1, 128, 32) tile, 128 threads × 8: four chunks 32 rows apart.
        assert_eq!(chunk_stride(&[1, 128, 32], 1024, 4), Some((1, 32)));
        // Rows of 256, two chunks 2 rows apart; a step inside a row moves along the row.
        assert_eq!(chunk_stride(&[4, 256], 512, 2), Some((0, 2)));
        assert_eq!(chunk_stride(&[4, 256], 128, 2), Some((1, 128)));
        // A step of whole planes moves along the outer dimension.
        assert_eq!(chunk_stride(&[2, 8, 32], 256, 2), Some((0, 1)));
        // 2 × 4 rows overrun 6 rows: the second chunk would carry into the next plane.
        assert_eq!(chunk_stride(&[3, 6, 32], 128, 2), None);
        assert_eq!(chunk_stride(&[4, 256], 128, 3), None);
        // One chunk needs no distance.
        assert_eq!(chunk_stride(&[1, 128, 32], 4096, 1), None);
    }
}
