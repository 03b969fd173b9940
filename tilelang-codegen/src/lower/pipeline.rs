//! Pass 2, pipelines: which `pipelined` loops run their loads ahead, and in how many stages.

use super::plan::*;
use super::util::*;
use crate::ir::visit::*;
use crate::ir::*;
use crate::target::Target as Gpu;
use std::collections::{BTreeMap, BTreeSet};

/// The number of leading statements of a `pipelined` loop body that can run ahead as the
/// loop's loads: copies from a global tensor into distinct shared buffers of the same dtype,
/// whose offsets read no buffer and no variable the body assigns, from tensors the body does
/// not write. `None` when there is none or the rest of the body is empty.
pub(super) fn pipeline_loads(k: &Kernel, body: &[Stmt], storage: &[Storage]) -> Option<usize> {
    let mut assigned: BTreeSet<VarId> = BTreeSet::new();
    let mut written: BTreeSet<ParamId> = BTreeSet::new();
    walk(body, &mut |s| match &s.kind {
        StmtKind::Assign { var, .. } => {
            assigned.insert(*var);
        }
        StmtKind::Store { access, .. } | StmtKind::AtomicAdd { access, .. } => {
            if let Target::Tensor(p) = access.target {
                written.insert(p);
            }
        }
        StmtKind::Copy {
            dst: Tile::Region { tensor, .. },
            ..
        } => {
            written.insert(*tensor);
        }
        _ => {}
    });
    let mut bufs: Vec<BufId> = Vec::new();
    for s in body {
        let StmtKind::Copy {
            src: Tile::Region { tensor, offsets },
            dst: Tile::Buffer(b),
        } = &s.kind
        else {
            break;
        };
        let mut reads_buffer = false;
        for_each_access(s, &mut |_| reads_buffer = true);
        let mut vars = BTreeSet::new();
        offsets.iter().for_each(|o| expr_vars(o, &mut vars));
        let ok = matches!(storage[*b], Storage::Shared { .. })
            && !bufs.contains(b)
            && k.buffers[*b].dtype == tensor_dtype(k, *tensor)
            && !reads_buffer
            && vars.is_disjoint(&assigned)
            && !written.contains(tensor);
        if !ok {
            break;
        }
        bufs.push(*b);
    }
    (!bufs.is_empty() && bufs.len() < body.len()).then_some(bufs.len())
}

/// Stages per buffer: `stages` copies of each load buffer of a `pipelined` loop that lowers to
/// asynchronous copies (NVIDIA: `cp.async`, sm_80 and newer; `stages` at least 2), when the
/// buffer is used nowhere but in that loop. Every other buffer has one copy.
pub(super) fn plan_pipelines(inst: &Instance, storage: &[Storage], target: &Gpu) -> Vec<usize> {
    let mut stages = vec![1; inst.k.buffers.len()];
    if !target.async_copies() {
        return stages;
    }
    // How many statements outside each pipelined loop mention each buffer is found by
    // counting mentions over the whole kernel and inside the loop.
    let mentions = |stmts: &[Stmt]| -> Vec<usize> {
        let mut n = vec![0; inst.k.buffers.len()];
        walk(stmts, &mut |s| each_buffer(s, &mut |b| n[b] += 1));
        n
    };
    let all = mentions(&inst.k.body);
    walk(&inst.k.body, &mut |s| {
        let StmtKind::For {
            kind: LoopKind::Pipelined { stages: st, .. },
            body,
            ..
        } = &s.kind
        else {
            return;
        };
        let Some(n) = eval_const(st, inst.vals).filter(|&n| n >= 2) else {
            return;
        };
        let Some(nloads) = pipeline_loads(inst.k, body, storage) else {
            return;
        };
        let inside = mentions(body);
        let bufs: Vec<BufId> = body[..nloads].iter().map(load_buf).collect();
        if bufs.iter().all(|&b| all[b] == inside[b] && stages[b] == 1) {
            for b in bufs {
                stages[b] = n.min(8) as usize;
            }
        }
    });
    stages
}

/// Every `pipelined` loop whose loads got stages (`stages`, the final count per buffer), by
/// [`StmtId`]: how many leading statements are its loads and in how many stages they run.
/// Computed once, read by the passes after this one and the printer.
pub(super) fn plan_staging(
    inst: &Instance,
    storage: &[Storage],
    stages: &[usize],
) -> BTreeMap<StmtId, Staging> {
    let (k, ids) = (inst.k, &inst.ids);
    let mut out = BTreeMap::new();
    walk(&k.body, &mut |s| {
        let StmtKind::For {
            kind: LoopKind::Pipelined { .. },
            body,
            ..
        } = &s.kind
        else {
            return;
        };
        if let Some(loads) = pipeline_loads(k, body, storage) {
            let stages = stages[load_buf(&body[0])];
            if stages > 1 {
                out.insert(ids.stmt(s), Staging { loads, stages });
            }
        }
    });
    out
}
