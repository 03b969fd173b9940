//! Pass 1, layouts: where each buffer lives and how a register fragment's elements map onto
//! threads and registers.
//!
//! * **Storage.** Shared buffers live in (dynamic) shared memory. A fragment lives in registers
//!   when every access to it is owner-only (`parallel` loops over exactly its shape indexed by
//!   the loop variables, `copy`, `fill`, a `gemm` accumulator, the source of a reduction along
//!   its last dimension) or, for the results of such reductions and fragments read as row
//!   broadcasts, when [`super::rows`] finds one row layout for all their uses, and for rows
//!   only ever read as column broadcasts (`w[j]` in a loop over `(i, j)`) and loaded from
//!   global memory, when [`super::cols`] finds one column layout for them. Otherwise (an
//!   index of another form, a `gemm` operand, uses that disagree) it is *demoted* to shared
//!   memory, which is always correct.
//! * **Layouts.** A register fragment is strided (element `L` = register `L / T` of thread
//!   `L % T`), matching the thread mapping of `parallel` loops, or, as the accumulator of a
//!   `gemm` on a matrix unit (`mma.sync` on NVIDIA, WMMA on RDNA3/RDNA4, MFMA on CDNA), that
//!   instruction's accumulator layout over a grid of waves; loops touching it then iterate in
//!   that layout. A `gemm` whose shapes or dtypes fit no instruction uses FMA loops.
//! * **Shared tiles in registers.** A shared tile that the same analysis finds owner-only (a
//!   copy from global memory writes it, loops over its own shape and reductions along its rows
//!   read it) is held in registers like a fragment: each thread only ever reads what it wrote, so
//!   shared memory would add a round trip and barriers and nothing else. The loads of a
//!   `pipelined` loop are promoted all or none (a promoted one beside staged ones would not
//!   run ahead: `split_stages`); not a tile read as a row
//!   broadcast (its shared copy serves every thread once; a row read as a column broadcast is
//!   held as a column fragment), and only while the fragments stay
//!   within [`PROMOTED_REGISTERS`] registers a thread.
//! * **Chunks.** A register fragment of whole 8-element chunks per thread is laid out chunk-wise
//!   (each thread owns consecutive elements) and copied to and from global memory in vectors,
//!   unless loops over it would hit shared memory across its rows in that order
//!   (`chunk_conflicts`; a shared row read as whole vectors, `w_s[j]`, does not count).

use super::plan::*;
use super::served::Indexing;
use super::util::*;
use super::{cols, rows, served};
use crate::ir::visit::*;
use crate::ir::*;
use crate::target::Target as Gpu;
use std::collections::BTreeSet;

/// 32-bit registers per thread that register fragments and local buffers take.
pub(super) fn thread_registers(inst: &Instance, storage: &[Storage]) -> usize {
    (0..inst.k.buffers.len())
        .map(|b| buffer_registers(inst, b, storage[b]))
        .sum()
}

fn buffer_registers(inst: &Instance, b: BufId, storage: Storage) -> usize {
    let per_thread = match storage {
        Storage::Reg { nreg, .. } => nreg,
        Storage::Local => inst.buffer_len(b),
        Storage::Shared { .. } => 0,
    };
    (per_thread * inst.k.buffers[b].dtype.size_bytes()).div_ceil(4)
}

/// The register-resident buffers with their registers per thread, largest first.
pub(super) fn register_report(inst: &Instance, storage: &[Storage]) -> String {
    let mut v: Vec<(usize, String)> = (0..inst.k.buffers.len())
        .map(|b| {
            (
                buffer_registers(inst, b, storage[b]),
                inst.k.buffers[b].name.to_string(),
            )
        })
        .filter(|(n, _)| *n > 0)
        .collect();
    v.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    v.iter()
        .map(|(n, name)| format!("`{name}` {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Registers per thread that fragments may take with shared tiles held in registers: above
/// it the shared tiles stay in shared memory (a register budget is a performance limit here,
/// not an error, and the kernel's own fragments come first).
const PROMOTED_REGISTERS: usize = 64;

/// Decides where each buffer lives (see the module docs).
pub(super) fn plan_storage(
    inst: &Instance,
    threads: usize,
    target: &Gpu,
) -> (Vec<Storage>, Demoted) {
    let mut regs: Vec<bool> = inst
        .k
        .buffers
        .iter()
        .map(|b| b.scope == Scope::Fragment)
        .collect();
    let plain = storage_with(inst, threads, target, &regs);
    let promotable = promotable(inst.k);
    if promotable.is_empty() {
        return plain;
    }
    promotable.iter().for_each(|&b| regs[b] = true);
    loop {
        let (storage, demoted) = storage_with(inst, threads, target, &regs);
        // A promoted tile read as a row broadcast would be replicated across threads; its
        // shared copy serves that better.
        let rows: Vec<BufId> = promotable
            .iter()
            .copied()
            .filter(|&b| {
                matches!(
                    storage[b],
                    Storage::Reg {
                        layout: Layout::Rows { .. } | Layout::AccRows { .. },
                        ..
                    }
                )
            })
            .collect();
        if !rows.is_empty() {
            rows.iter().for_each(|&b| regs[b] = false);
            continue;
        }
        // A `pipelined` loop loads ahead all its tiles through shared memory or none: one
        // promoted tile beside staged ones would be a load the stages no longer cover.
        let split = split_stages(inst.k, &storage, &promotable);
        if !split.is_empty() {
            split.iter().for_each(|&b| regs[b] = false);
            continue;
        }
        let any = promotable
            .iter()
            .any(|&b| matches!(storage[b], Storage::Reg { .. }));
        let fits = thread_registers(inst, &storage)
            <= PROMOTED_REGISTERS.max(thread_registers(inst, &plain.0));
        return if any && fits {
            (storage, demoted)
        } else {
            plain
        };
    }
}

/// Shared tiles that may be held in registers instead, when every access is one a register
/// fragment serves (the same owner-only analysis): not the target of an atomic add.
fn promotable(k: &Kernel) -> Vec<BufId> {
    let mut out: BTreeSet<BufId> = (0..k.buffers.len())
        .filter(|&b| k.buffers[b].scope == Scope::Shared)
        .collect();
    walk(&k.body, &mut |s| {
        if let StmtKind::AtomicAdd {
            access:
                Access {
                    target: Target::Buffer(b),
                    ..
                },
            ..
        } = &s.kind
        {
            out.remove(b);
        }
    });
    out.into_iter().collect()
}

/// The promoted tiles that a `pipelined` loop loads beside tiles that stay shared.
fn split_stages(k: &Kernel, storage: &[Storage], promotable: &[BufId]) -> Vec<BufId> {
    let mut out = Vec::new();
    walk(&k.body, &mut |s| {
        if let StmtKind::For {
            kind: LoopKind::Pipelined { .. },
            body,
            ..
        } = &s.kind
        {
            let loaded: Vec<BufId> = body
                .iter()
                .filter_map(|t| match &t.kind {
                    StmtKind::Copy {
                        src: Tile::Region { .. },
                        dst: Tile::Buffer(b),
                    } if k.buffers[*b].scope == Scope::Shared => Some(*b),
                    _ => None,
                })
                .collect();
            let reg = |b: &&BufId| matches!(storage[**b], Storage::Reg { .. });
            if loaded.iter().any(|b| !reg(&b)) {
                out.extend(
                    loaded
                        .iter()
                        .filter(|b| reg(b) && promotable.contains(b))
                        .copied(),
                );
            }
        }
    });
    out
}

/// Where each buffer lives when the buffers `regs` marks may be held in registers.
fn storage_with(
    inst: &Instance,
    threads: usize,
    target: &Gpu,
    regs: &[bool],
) -> (Vec<Storage>, Demoted) {
    // A product predicted to read A from registers on wgmma whose A then could not stay there
    // (its layout is not its accumulator's) would read a shared tile wgmma cannot: plan it
    // again with that A in shared memory (and the product where that leaves it).
    let mut no_rs = BTreeSet::new();
    loop {
        let (storage, demoted) = storage_once(inst, threads, target, regs, &no_rs);
        let mut missed = Vec::new();
        walk(&inst.k.body, &mut |s| {
            if let StmtKind::Gemm { a, c, .. } = &s.kind {
                if storage[*c].matrix() == Some(Inst::Wgmma)
                    && inst.k.buffers[*a].scope == Scope::Fragment
                    && demoted[*a]
                {
                    missed.push(*a);
                }
            }
        });
        if missed.is_empty() || missed.iter().all(|a| no_rs.contains(a)) {
            return (storage, demoted);
        }
        no_rs.extend(missed);
    }
}

fn storage_once(
    inst: &Instance,
    threads: usize,
    target: &Gpu,
    regs: &[bool],
    no_rs: &BTreeSet<BufId>,
) -> (Vec<Storage>, Demoted) {
    let nbuf = inst.k.buffers.len();
    let mut demoted = Demoted::new(nbuf);
    // Per gemm accumulator: the matrix layout all its gemms agree on, or `Some(None)` when one
    // of them fits no matrix instruction (FMA path).
    let mut mma: Vec<Option<Option<Layout>>> = vec![None; nbuf];
    for (b, buf) in inst.k.buffers.iter().enumerate() {
        if buf.scope == Scope::Shared && !regs[b] {
            demoted.set(b, Why::Shared, None);
        }
    }
    // Owner-only access analysis; row-fragment uses are gathered for `rows::assign`.
    let mut uses = rows::Uses::default();
    // The fragments read as a `gemm`'s A operand.
    let mut register_a: Vec<BufId> = Vec::new();
    let k = inst.k;
    // Fragment A operands written from another gemm's accumulator, which may stay in
    // registers; their accumulators, both sides, take whole rows per warp (below), which A in
    // registers needs ([`served`]'s `register_a`).
    let sources = a_sources(k);
    let fed: BTreeSet<BufId> = sources
        .iter()
        .map(|&(a, _, _)| a)
        .filter(|a| !no_rs.contains(a))
        .collect();
    walk_parallel(
        &k.body,
        // The enclosing parallel loop: its variables, extents and fragments of its own shape.
        &mut |l| {
            let ext = inst.extents(l.extents);
            let full = rows::full_shape(inst, regs, l.body, &ext);
            (l.vars, ext, full)
        },
        &mut |s, ploop| {
            let mut check_access = |a: &Access, read: bool| {
                let Target::Buffer(b) = a.target else { return };
                if !regs[b] {
                    return;
                }
                let Some((vars, ext, full)) = ploop else {
                    demoted.set(b, Why::Outside, Some(s.span));
                    return;
                };
                match served::indexing(&inst.buffer_shape(b), a, read, vars, ext) {
                    Indexing::Owner => {
                        uses.owned.insert(b);
                    }
                    Indexing::Row => uses.broadcasts.push((b, ext.clone(), full.clone())),
                    Indexing::Column => uses.columns.push((b, ext.clone(), full.clone())),
                    Indexing::Other => {
                        demoted.set(b, Why::Index, Some(s.span));
                    }
                }
            };
            if let Some(a) = stored_access(s) {
                check_access(a, false);
            }
            for_each_load(s, &mut |a| check_access(a, true));
            match &s.kind {
                StmtKind::Gemm { a, b, c, ta, tb } => {
                    // A fragment as A may stay in registers in its accumulator's layout
                    // (`served` decides); everything else is read from shared memory.
                    for x in [a, b] {
                        if x != a || !fed.contains(a) {
                            demoted.set(*x, Why::GemmOperand, Some(s.span));
                        }
                    }
                    register_a.push(*a);
                    let a_regs = !no_rs.contains(a);
                    let l = matrix_layout(inst, [*a, *b, *c], [*ta, *tb], threads, target, a_regs);
                    mma[*c] = match mma[*c] {
                        Some(prev) if prev != l => Some(None),
                        _ => Some(l),
                    };
                }
                StmtKind::Reduce { src, dst, dim, .. } => {
                    let (ss, ds) = (inst.buffer_shape(*src), inst.buffer_shape(*dst));
                    let frag = |b: BufId| regs[b];
                    let memory = |b: BufId| frag(b) || k.buffers[b].scope == Scope::Shared;
                    if memory(*src)
                        && frag(*dst)
                        && ss.len() >= 2
                        && *dim + 1 == ss.len()
                        && ds == ss[..*dim]
                    {
                        uses.reduces.push((*src, *dst, s.span));
                    } else {
                        demoted.set(*src, Why::Reduce, Some(s.span));
                        demoted.set(*dst, Why::Reduce, Some(s.span));
                    }
                }
                _ => {}
            }
        },
    );
    // An accumulator whose rows are reduced or read as broadcasts gives each wave whole rows
    // where its tile allows (as FlashAttention's warps own rows): its row fragments then need
    // no exchange between waves.
    // So does one a register A operand comes from or goes into (`sources`): A stays in
    // registers only where both accumulators give each warp whole rows.
    let row_used = (uses.reduces.iter().map(|r| r.0))
        .chain(
            uses.broadcasts
                .iter()
                .flat_map(|(_, _, full)| full.iter().copied()),
        )
        .chain(sources.iter().flat_map(|&(_, c, x)| [c, x]));
    for c in row_used.collect::<BTreeSet<_>>() {
        if let Some(Some(Layout::Matrix { inst, m, n, wm, wn })) = mma[c] {
            if wn > 1 && m % (inst.shape().0 * wm * wn) == 0 {
                let (wm, wn) = (wm * wn, 1);
                mma[c] = Some(Some(Layout::Matrix { inst, m, n, wm, wn }));
            }
        }
    }
    // Gemm accumulators on FMA loops keep the strided layout tl.h's gemm_fma expects; other
    // register fragments whose rows are whole chunks are chunked, unless a loop over them
    // would hit shared memory in the chunked order too often (`chunk_conflicts`).
    let acc: Vec<bool> = mma.iter().map(Option::is_some).collect();
    let strided_only = chunk_conflicts(inst, regs, &demoted);
    let unit = chunk_unit(inst.k, |b| regs[b] && !acc[b] && !strided_only[b]);
    let base: Vec<Layout> = mma
        .into_iter()
        .enumerate()
        .map(|(b, l)| {
            l.flatten().unwrap_or_else(|| {
                let shape = inst.buffer_shape(b);
                let chunked =
                    // Every thread gets whole chunks (no idle registers, no tail guard).
                    !acc[b]
                        && !strided_only[b]
                        && shape.last().is_some_and(|&d| d % unit == 0)
                        && inst.buffer_len(b) % (unit * threads) == 0;
                if chunked {
                    Layout::Chunked { unit }
                } else {
                    Layout::Strided
                }
            })
        })
        .collect();

    // Row layouts, then layout agreement, until neither demotes anything more.
    let ties = rows::ties(inst, regs);
    let wave = target.wave as usize;
    let mut layouts = base.clone();
    loop {
        layouts.clone_from(&base);
        agree(inst, regs, &acc, &mut layouts, &mut demoted, false);
        let mut changed = rows::assign(
            inst,
            threads,
            wave,
            &uses,
            &ties,
            &mut layouts,
            &mut demoted,
        );
        changed |= agree(inst, regs, &acc, &mut layouts, &mut demoted, true);
        changed |= cols::assign(inst.k, threads, &uses, &mut layouts, &mut demoted);
        // Every access of what is left in registers must be served by its layout: a buffer
        // the passes above laid out for one kind of use may have another (`served`).
        let layout_of = |b: BufId| (regs[b] && !demoted[b]).then_some(layouts[b]);
        let loop_layout = |s: &Stmt| match &s.kind {
            StmtKind::For {
                kind: LoopKind::Parallel { extents },
                body,
                ..
            } => served::loop_layout(inst, body, &inst.extents(extents), &layout_of),
            _ => Layout::Strided,
        };
        let unserved = served::unserved(inst, threads, wave, &layout_of, &loop_layout);
        for (b, at) in unserved {
            let why = if register_a.contains(&b) {
                Why::RegisterA
            } else {
                Why::Unserved
            };
            changed |= demoted.set(b, why, Some(at).filter(|_| why == Why::RegisterA));
        }
        if !changed {
            break;
        }
    }
    let storage = (0..nbuf)
        .map(|b| match inst.k.buffers[b].scope {
            Scope::Local => Storage::Local,
            _ if demoted[b] => Storage::Shared { offset: 0 },
            _ => {
                let layout = layouts[b];
                let n = inst.buffer_len(b);
                let nreg = match layout {
                    Layout::Chunked { unit } => n.div_ceil(unit * threads) * unit,
                    Layout::Rows { groups, .. } => n.div_ceil(groups),
                    Layout::AccRows { inst, m, wm, .. } => {
                        m / wm / inst.shape().0 * inst.row_regs()
                    }
                    Layout::Cols { width, .. } => n / width,
                    _ => n.div_ceil(threads),
                };
                Storage::Reg { layout, nreg }
            }
        })
        .collect();
    (storage, demoted)
}

/// The `gemm`s whose A operand is a fragment written from another `gemm`'s accumulator (by a
/// `copy` into it, or a `parallel` loop storing into it that reads the accumulator:
/// `p[(i, j)] = s[(i, j)] - m[i]`): (A, the product's accumulator, the accumulator A is
/// written from). A fragment A filled from memory is in none of them.
pub(super) fn a_sources(k: &Kernel) -> Vec<(BufId, BufId, BufId)> {
    let mut accs = BTreeSet::new();
    let mut products = Vec::new();
    walk(&k.body, &mut |s| {
        if let StmtKind::Gemm { a, c, .. } = &s.kind {
            accs.insert(*c);
            if k.buffers[*a].scope == Scope::Fragment {
                products.push((*a, *c));
            }
        }
    });
    // (buffer written, buffer read where it is written)
    let mut fed = Vec::new();
    walk(&k.body, &mut |s| match &s.kind {
        StmtKind::Copy {
            src: Tile::Buffer(x),
            dst: Tile::Buffer(a),
        } => fed.push((*a, *x)),
        StmtKind::For {
            kind: LoopKind::Parallel { .. },
            body,
            ..
        } => {
            let (mut writes, mut reads) = (Vec::new(), Vec::new());
            walk(body, &mut |t| {
                if let Some(Access {
                    target: Target::Buffer(b),
                    ..
                }) = stored_access(t)
                {
                    writes.push(*b);
                }
                for_each_load(t, &mut |x| {
                    if let Target::Buffer(b) = x.target {
                        reads.push(b);
                    }
                });
            });
            for &a in &writes {
                fed.extend(reads.iter().map(|&x| (a, x)));
            }
        }
        _ => {}
    });
    let mut out = Vec::new();
    for (a, c) in products {
        for &(_, x) in fed.iter().filter(|(f, x)| *f == a && accs.contains(x)) {
            if !out.contains(&(a, c, x)) {
                out.push((a, c, x));
            }
        }
    }
    out
}

/// Layout agreement, one sweep: a parallel loop or copy touching a matrix-unit fragment
/// iterates in its layout; any other register fragment it touches in the loop's own shape
/// takes that layout when it is a fragment (not a shared tile held in registers), no
/// accumulator, and has not taken another matrix layout (a
/// softmax's `P`, converted from the scores, is then laid out as the scores are, and can feed
/// the next `gemm` as its A from registers), else must share it or is demoted (only when
/// `demote`: the sweep before the row layouts adopts only, so that the rows read in a loop
/// that fills such a fragment, `p[(i, j)] = s[(i, j)] - m[i]`, see one layout). Returns
/// whether it demoted anything.
fn agree(
    inst: &Instance,
    regs: &[bool],
    acc: &[bool],
    layouts: &mut [Layout],
    demoted: &mut Demoted,
    demote: bool,
) -> bool {
    let in_regs = |b: BufId, demoted: &Demoted| regs[b] && !demoted[b];
    let mut changed = false;
    walk(&inst.k.body, &mut |s| {
        let touched: Vec<BufId> = match &s.kind {
            StmtKind::For {
                kind: LoopKind::Parallel { extents },
                body,
                ..
            } => rows::full_shape(inst, regs, body, &inst.extents(extents)),
            StmtKind::Copy {
                src: Tile::Buffer(a),
                dst: Tile::Buffer(b),
            } => vec![*a, *b],
            _ => Vec::new(),
        };
        let regs: Vec<(BufId, Layout)> = touched
            .into_iter()
            .filter(|&b| in_regs(b, demoted))
            .map(|b| (b, layouts[b]))
            .collect();
        if let Some(&(_, first)) = regs
            .iter()
            .find(|(_, l)| matches!(l, Layout::Matrix { .. }))
            .or(regs.first())
        {
            for &(b, l) in &regs {
                let adopts = matches!(first, Layout::Matrix { .. })
                    && !acc[b]
                    && inst.k.buffers[b].scope == Scope::Fragment
                    && matches!(l, Layout::Strided | Layout::Chunked { .. });
                if adopts {
                    layouts[b] = first;
                } else if demote && l != first && !demoted[b] {
                    changed |= demoted.set(b, Why::Agree, Some(s.span));
                }
            }
        }
    });
    changed
}

/// The kernel's chunk ([`chunk_for`]): 16 bytes of the widest element that a copy between
/// memory and a fragment that may be chunked (`candidate`) moves on the memory side (an f16
/// tensor copied into f32 registers moves 2-byte elements: 8 of them are one 16-byte vector);
/// [`CHUNK`] when no copy does (`chunk_for(0)`: the chunks then only order registers).
fn chunk_unit(k: &Kernel, candidate: impl Fn(BufId) -> bool) -> usize {
    let mut widest = 0;
    walk(&k.body, &mut |s| {
        if let StmtKind::Copy { src, dst } = &s.kind {
            let memory = |t: &Tile| match t {
                Tile::Region { tensor, .. } => tensor_dtype(k, *tensor).size_bytes(),
                Tile::Buffer(b) if k.buffers[*b].scope == Scope::Shared => {
                    k.buffers[*b].dtype.size_bytes()
                }
                Tile::Buffer(_) => 0,
            };
            for (frag, other) in [(src, dst), (dst, src)] {
                if matches!(frag, Tile::Buffer(b) if candidate(*b)) {
                    widest = widest.max(memory(other));
                }
            }
        }
    });
    chunk_for(widest)
}

/// Fragments that stay strided because a parallel loop over them would read or write shared
/// memory across its innermost dimension in the chunked order: a thread's consecutive
/// elements sit side by side, so the lanes of a wave touch addresses CHUNK elements apart and
/// collide in the banks once a row of the loop spans more than 128 bytes. One such read per
/// element costs less than vector global copies gain (a broadcast row `b_s[j]`); a store, a
/// second access, or one inside a nested loop (a convolution's taps) costs more. An access the
/// chunk-wise loop moves as whole vectors (`moves_as_vector`) costs nothing here: the rule
/// dates from before loops ran chunk-wise, and it kept LayerNorm's output pass (two broadcast
/// rows) element by element, 2 bytes an access. The decision spreads to every fragment a loop
/// or a register copy ties to a strided one, so that they keep one layout.
fn chunk_conflicts(inst: &Instance, regs: &[bool], demoted: &Demoted) -> Vec<bool> {
    let nbuf = inst.k.buffers.len();
    let shared = |b: BufId| !regs[b] || demoted[b];
    let mut strided = vec![false; nbuf];
    // Fragments tied together (same loop or register copy), to spread the decision.
    let mut groups: Vec<Vec<BufId>> = Vec::new();
    walk(&inst.k.body, &mut |s| match &s.kind {
        StmtKind::For {
            kind: LoopKind::Parallel { extents },
            vars,
            body,
        } => {
            let ext = inst.extents(extents);
            let (Some(&inner), Some(&e_in)) = (vars.last(), ext.last()) else {
                return;
            };
            let mut frags = Vec::new();
            let mut seen: BTreeSet<(BufId, String)> = BTreeSet::new();
            let mut cost = 0;
            let local = body_vars(body);
            let mut count = |a: &Access, store: bool, nested: bool| {
                let Target::Buffer(b) = a.target else { return };
                if regs[b] && !demoted[b] {
                    frags.push(b);
                    return;
                }
                if !nested && moves_as_vector(inst, b, a, inner, &local) {
                    return;
                }
                let mut v = BTreeSet::new();
                if let Some(last) = a.index.last() {
                    expr_vars(last, &mut v);
                }
                let span = e_in * inst.k.buffers[b].dtype.size_bytes();
                if shared(b) && v.contains(&inner) && span > 128 {
                    let key = (b, format!("{:?}{store}", a.index));
                    if seen.insert(key) || nested {
                        cost += 1 + usize::from(store) + usize::from(nested);
                    }
                }
            };
            // Direct statements of the body, and those in nested serial loops.
            fn visit(stmts: &[Stmt], nested: bool, f: &mut impl FnMut(&Access, bool, bool)) {
                for s in stmts {
                    if let Some(a) = stored_access(s) {
                        f(a, true, nested);
                    }
                    for_each_load(s, &mut |a| f(a, false, nested));
                    match &s.kind {
                        StmtKind::For { body, .. } => visit(body, true, f),
                        StmtKind::If { then, els, .. } => {
                            visit(then, nested, f);
                            visit(els, nested, f);
                        }
                        _ => {}
                    }
                }
            }
            visit(body, false, &mut count);
            if cost > 1 {
                frags.iter().for_each(|&b| strided[b] = true);
            }
            groups.push(frags);
        }
        StmtKind::Copy {
            src: Tile::Buffer(a),
            dst: Tile::Buffer(b),
        } => groups.push(vec![*a, *b]),
        _ => {}
    });
    loop {
        let mut changed = false;
        for g in &groups {
            if g.iter().any(|&b| strided[b]) {
                for &b in g {
                    changed |= !strided[b];
                    strided[b] = true;
                }
            }
        }
        if !changed {
            return strided;
        }
    }
}

/// Variables a loop body declares (`let`s, nested loops' variables): they may differ per lane.
fn body_vars(body: &[Stmt]) -> BTreeSet<VarId> {
    let mut out = BTreeSet::new();
    walk(body, &mut |s| match &s.kind {
        StmtKind::Let { var, .. } => {
            out.insert(*var);
        }
        StmtKind::For { vars, .. } => out.extend(vars.iter().copied()),
        _ => {}
    });
    out
}

/// Whether a chunk-wise loop moves shared access `a` as whole 16-byte vectors, so that the
/// chunked order costs its banks nothing worth counting (8 lanes of f32 are two vectors 32
/// bytes apart per thread: a 2-way conflict per vector, a quarter of the element-wise
/// mapping's wavefronts): its last index is the innermost variable plus something the loop
/// does not change, the other indices do not depend on it, and rows are whole vectors.
fn moves_as_vector(
    inst: &Instance,
    b: BufId,
    a: &Access,
    inner: VarId,
    local: &BTreeSet<VarId>,
) -> bool {
    let Some((last, lead)) = a.index.split_last() else {
        return false;
    };
    let invariant = |e: &Expr| {
        let mut v = BTreeSet::new();
        expr_vars(e, &mut v);
        let mut loads = false;
        each_expr(e, &mut |x| loads |= matches!(x.kind, ExprKind::Load(_)));
        !loads && !v.contains(&inner) && v.is_disjoint(local)
    };
    let is_inner = |e: &Expr| matches!(e.kind, ExprKind::Var(v) if v == inner);
    let unit = match &last.kind {
        ExprKind::Var(v) => *v == inner,
        ExprKind::Binary(BinOp::Add, x, y) => {
            (is_inner(x) && invariant(y)) || (is_inner(y) && invariant(x))
        }
        _ => false,
    };
    let row =
        inst.buffer_shape(b).last().copied().unwrap_or(0) * inst.k.buffers[b].dtype.size_bytes();
    unit && lead.iter().all(invariant) && row % 16 == 0
}

/// The matrix-unit layout for `c += a·b`: the target's first matrix instruction that
/// [`matrix_miss`] lets it run on. Otherwise `gemm` uses FMA loops.
fn matrix_layout(
    inst: &Instance,
    abc: [BufId; 3],
    t: [bool; 2],
    threads: usize,
    target: &Gpu,
    a_regs: bool,
) -> Option<Layout> {
    let (m, n, _) = inst.gemm_mnk(abc, t);
    let wave = target.wave as usize;
    let i = *Inst::of(target.matrix)
        .iter()
        .find(|&&i| matrix_miss(inst, abc, t, i, threads, wave, a_regs).is_none())?;
    let (wm, wn) = if i == Inst::Wgmma {
        (threads / wave, 1)
    } else {
        let (im, in_, _) = i.shape();
        wave_grid(m, n, im, in_, threads / wave)?
    };
    Some(Layout::Matrix {
        inst: i,
        m,
        n,
        wm,
        wn,
    })
}

/// Why `c += a·b` cannot run on matrix instruction `i` (f16 or bf16 operands, an f32
/// accumulator; the threads whole waves of the instruction's width; K a multiple of its K; the
/// block tile split over the waves into whole instruction tiles; for wgmma, tl.h's
/// `wg::fits`): the first condition it fails, in the user's terms, or `None`. The layout pass
/// decides by it, and the build's notes (`notes.rs`) say it.
#[allow(clippy::too_many_arguments)]
pub(super) fn matrix_miss(
    inst: &Instance,
    [a, b, c]: [BufId; 3],
    t: [bool; 2],
    i: Inst,
    threads: usize,
    wave: usize,
    a_regs: bool,
) -> Option<String> {
    let k = inst.k;
    let (da, db, dc) = (k.buffers[a].dtype, k.buffers[b].dtype, k.buffers[c].dtype);
    if !matches!(da, Dtype::F16 | Dtype::Bf16) || db != da {
        return Some(format!(
            "the matrix units take f16 or bf16 operands and an f32 accumulator, these are {da} and {db}"
        ));
    }
    if dc != Dtype::F32 {
        return Some(format!(
            "the accumulator is {dc}; the matrix units accumulate in f32"
        ));
    }
    let (m, n, kk) = inst.gemm_mnk([a, b, c], t);
    if i == Inst::Wgmma {
        // A B marked `.t()` is read K-major (like A); an A marked `.t()` (MN-major) not yet.
        if t[0] {
            return Some(format!(
                "A `{}` is read transposed (`.t()`), which the wgmma lowering does not take yet",
                k.buffers[a].name
            ));
        }
        // A fragment A written from an accumulator of the same rows is read from registers
        // (wgmma's RS form: each warp then holds 16 of them, as A's fragment needs; `served`
        // checks the layouts it gets) unless `a_regs` says its registers could not feed it;
        // any other A is read from shared memory.
        let fed = k.buffers[a].scope == Scope::Fragment
            && a_sources(k)
                .iter()
                .any(|&(fa, fc, x)| fa == a && fc == c && inst.buffer_shape(x)[0] == m);
        if fed && !a_regs {
            return Some(format!(
                "A `{}` is not held in registers in a layout wgmma reads (see its warning)",
                k.buffers[a].name
            ));
        }
        return wgmma_miss(k, m, n, kk, threads, a, b, fed);
    }
    let (im, in_, ik) = i.shape();
    // The instruction is defined over a whole wave of the target.
    if i.wave() != wave || threads % wave != 0 {
        Some(format!(
            "its {threads} threads are not whole waves of {}",
            i.wave()
        ))
    } else if kk % ik != 0 {
        Some(format!("K is {kk}, not a multiple of {ik}"))
    } else if wave_grid(m, n, im, in_, threads / wave).is_none() {
        Some(format!(
            "the {m} × {n} tile does not split over {} waves into {im} × {in_} instruction tiles",
            threads / wave
        ))
    } else {
        None
    }
}

/// The most square grid of `waves` waves (rows, columns) that splits an `m × n` tile into
/// whole `im × in_` instruction tiles.
fn wave_grid(m: usize, n: usize, im: usize, in_: usize, waves: usize) -> Option<(usize, usize)> {
    let mut best: Option<(usize, usize)> = None;
    for wm in 1..=waves {
        if waves % wm != 0 {
            continue;
        }
        let wn = waves / wm;
        if m % (im * wm) != 0 || n % (in_ * wn) != 0 {
            continue;
        }
        let score = |wm: usize, wn: usize| ((m / wm) as isize - (n / wn) as isize).abs();
        if best.is_none_or(|(bm, bn)| score(wm, wn) < score(bm, bn)) {
            best = Some((wm, wn));
        }
    }
    best
}

/// Why `c += a·b` does not run on wgmma (tl.h's `wg::fits`, the shapes whose descriptors are
/// known): warpgroups of 128 threads stacked along M, 64 rows each; N of 64, 128 or 256 (one
/// instruction, 128-byte atoms of B); K of 32 (64-byte atoms of A) or whole 64-wide atoms.
/// Both operands must be free to take the `ATOMS` layout ([`atoms_ok`]).
#[allow(clippy::too_many_arguments)]
fn wgmma_miss(
    k: &Kernel,
    m: usize,
    n: usize,
    kk: usize,
    threads: usize,
    a: BufId,
    b: BufId,
    a_regs: bool,
) -> Option<String> {
    let wg = threads / 128;
    if threads % 128 != 0 {
        Some(format!(
            "its {threads} threads are not whole warpgroups of 128"
        ))
    } else if m != 64 * wg {
        Some(format!(
            "M is {m}; wgmma takes 64 rows a warpgroup, {} with {threads} threads",
            64 * wg
        ))
    } else if !matches!(n, 64 | 128 | 256) {
        Some(format!("N is {n}; wgmma takes 64, 128 or 256"))
    } else if a_regs && kk % 16 != 0 {
        Some(format!(
            "K is {kk}; wgmma from registers takes a multiple of 16"
        ))
    } else if !(a_regs || kk == 32 || kk % 64 == 0) {
        Some(format!("K is {kk}; wgmma takes 32 or a multiple of 64"))
    } else if a == b {
        Some("A and B are the same tile".into())
    } else {
        let shared = if a_regs { vec![b] } else { vec![a, b] };
        shared.into_iter().find(|&x| !atoms_ok(k, x)).map(|x| {
            format!(
                "`{}` has a use wgmma's operand layout cannot serve (only copies into it from \
                 global memory, `gemm` and element accesses with a row and a column can)",
                k.buffers[x].name
            )
        })
    }
}

/// Whether shared tile `b` can be stored in tl.h's `ATOMS` layout: every use indexes it
/// through `sidx`, i.e. copies from global memory into it, `gemm` operands and element
/// accesses with a row and a column; not a copy out of it or from a buffer, a fill, a
/// reduction or an atomic.
pub(super) fn atoms_ok(k: &Kernel, b: BufId) -> bool {
    let mut ok = k.buffers[b].dtype.size_bytes() == 2;
    let is_b = |t: &Tile| matches!(t, Tile::Buffer(x) if *x == b);
    walk(&k.body, &mut |s| {
        for_each_access(s, &mut |x| {
            ok &= !matches!(x.target, Target::Buffer(y) if y == b) || x.index.len() == 2;
        });
        match &s.kind {
            StmtKind::Copy {
                src: Tile::Region { .. },
                dst: Tile::Buffer(_),
            } => {}
            StmtKind::Copy { src, dst } => ok &= !is_b(src) && !is_b(dst),
            StmtKind::Gemm { c, .. } => ok &= *c != b,
            StmtKind::Fill { buf, .. } => ok &= *buf != b,
            StmtKind::Reduce { src, dst, .. } => ok &= *src != b && *dst != b,
            StmtKind::AtomicAdd { access, .. } => {
                ok &= !matches!(access.target, Target::Buffer(y) if y == b);
            }
            _ => {}
        }
    });
    ok
}
