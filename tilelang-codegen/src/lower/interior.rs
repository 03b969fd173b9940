//! Pass 4c, interior iterations: which sequential loops run in two parts, the iterations in
//! which every tile their copies move lies wholly inside its tensor, then the rest.
//!
//! A copy between a register fragment and a global region decides at run time, each time it
//! runs, between moving whole vectors with no test, testing each chunk against the tensor's
//! edge, and going element by element (`print::chunked_copy`). In a loop that walks a row
//! chunk by chunk (a normalisation's passes, softmax's), the decision is the same in every
//! iteration but the last: the region advances by a constant step, and the pointer, the row
//! length and the other coordinates do not change. Taken in every iteration, it cost the
//! LayerNorm example 3-way branches, 64-bit compares and address chains around 8 elements a
//! thread (ncu: issue-bound at 80% of issue slots, 38 instructions an element against 14 of
//! work).
//!
//! So a loop whose copies' regions are affine in its variable (a constant, non-negative step
//! per dimension, everything else invariant in the loop) is split: before it, each such copy's
//! region is evaluated at the first iteration, and `tl::iterations_inside` gives how many
//! iterations from there keep its tile inside; the loop then runs that many iterations (the
//! fewest over its copies) with those copies printed as the unconditional vector path, and the
//! rest with the copies as they are. A chunked copy also needs its alignment (pointer, row
//! length, innermost offset) for the vector path; it holds in every interior iteration when it
//! holds in the first and the innermost step is a multiple of the chunk.
//!
//! Only innermost loops are split (the body is printed twice; nested, it would be four
//! times), and only `serial` loops and `pipelined` loops that run as plain loops (the staged
//! ones have their own copies).

use super::affine::{Affine, Var};
use super::plan::*;
use crate::ir::visit::*;
use crate::ir::*;
use std::collections::{BTreeMap, BTreeSet};

/// The loops to split, by [`StmtId`].
pub(super) fn plan_splits(p: &Plan) -> BTreeMap<StmtId, Split> {
    let mut out = BTreeMap::new();
    walk(&p.inst.k.body, &mut |s| {
        let StmtKind::For { kind, vars, body } = &s.kind else {
            return;
        };
        let plain = match kind {
            LoopKind::Serial { .. } => true,
            LoopKind::Pipelined { .. } => !p.staged.contains_key(&p.inst.ids.stmt(s)),
            LoopKind::Parallel { .. } => false,
        };
        if !plain || has_sequential_loop(body) {
            return;
        }
        // Variables whose value can change between iterations (besides the loop's).
        let mut varying = BTreeSet::new();
        walk(body, &mut |st| match &st.kind {
            StmtKind::Let { var, .. } | StmtKind::Assign { var, .. } => {
                varying.insert(*var);
            }
            StmtKind::For { vars, .. } => varying.extend(vars.iter().copied()),
            _ => {}
        });
        let copies: Vec<Interior> = body
            .iter()
            .filter_map(|st| interior_copy(p, st, vars[0], &varying))
            .collect();
        if !copies.is_empty() {
            out.insert(p.inst.ids.stmt(s), Split { copies });
        }
    });
    out
}

fn has_sequential_loop(body: &[Stmt]) -> bool {
    let mut found = false;
    walk(body, &mut |s| {
        found |= matches!(
            &s.kind,
            StmtKind::For {
                kind: LoopKind::Serial { .. } | LoopKind::Pipelined { .. },
                ..
            }
        );
    });
    found
}

/// `s` as a copy of a split loop over `v`, when it is a copy between a register fragment and
/// a global region whose offsets are affine in `v` with constant non-negative steps.
fn interior_copy(p: &Plan, s: &Stmt, v: VarId, varying: &BTreeSet<VarId>) -> Option<Interior> {
    let StmtKind::Copy { src, dst } = &s.kind else {
        return None;
    };
    let (offsets, b) = match (src, dst) {
        (Tile::Region { offsets, .. }, Tile::Buffer(b))
        | (Tile::Buffer(b), Tile::Region { offsets, .. }) => (offsets, *b),
        _ => return None,
    };
    let Storage::Reg { layout, .. } = p.storage[b] else {
        return None;
    };
    let chunk = match layout {
        Layout::Chunked { unit } | Layout::Cols { unit, .. } if unit > 1 => Some(unit),
        _ => None,
    };
    let mut step = [0i64; 4];
    let pad = 4 - offsets.len();
    for (d, o) in offsets.iter().enumerate() {
        let s = Affine {
            vals: p.inst.vals,
            var: |x| {
                if x == v {
                    Var::Moves
                } else if varying.contains(&x) {
                    Var::Varies
                } else {
                    Var::Fixed
                }
            },
            loads_fixed: false,
            casts: false,
        }
        .step(o)?;
        step[pad + d] = i64::try_from(s)
            .ok()
            .filter(|s| (0..=i32::MAX as i64).contains(s))?;
    }
    if let Some(unit) = chunk {
        // The vector path's alignment must hold in every interior iteration.
        if step[3] % unit as i64 != 0 {
            return None;
        }
    }
    Some(Interior {
        copy: p.inst.ids.stmt(s),
        step,
        chunk,
    })
}
