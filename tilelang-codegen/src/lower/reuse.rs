//! Pass 4b, L2 reuse: which copies from global memory read lines the block will read again.
//!
//! A kernel that walks its rows several times (a normalisation's statistics pass, then its
//! output pass) reads the same tensor in several copy statements. Between the first read of a
//! row and the next, the rest of the GPU streams far more than the L2 holds unless the lines
//! are marked: every such copy but the last reads with an evict-last hint (the lines stay), the
//! last with evict-first (they are not needed again). A tensor read by one copy statement, or
//! written by the kernel, gets no hint. Only read-only tensors, only the vector paths of copies
//! into register fragments; hints change no value, only what the L2 keeps, and targets without
//! them (AMD) print none.

use super::plan::*;
use super::util::*;
use crate::ir::visit::*;
use crate::ir::*;
use std::collections::BTreeMap;

/// The hint of each copy from a tensor that several copy statements read, by [`StmtId`].
pub(super) fn plan_reuse(inst: &Instance, storage: &[Storage]) -> BTreeMap<StmtId, Reuse> {
    let (k, ids) = (inst.k, &inst.ids);
    let mut reads: BTreeMap<ParamId, Vec<StmtId>> = BTreeMap::new();
    walk(&k.body, &mut |s| {
        if let StmtKind::Copy {
            src: Tile::Region { tensor, .. },
            dst: Tile::Buffer(b),
        } = &s.kind
        {
            if read_only(k, *tensor) && matches!(storage[*b], Storage::Reg { .. }) {
                reads.entry(*tensor).or_default().push(ids.stmt(s));
            }
        }
    });
    let mut out = BTreeMap::new();
    for copies in reads.values().filter(|c| c.len() > 1) {
        let (last, rest) = copies.split_last().expect("two or more");
        out.extend(rest.iter().map(|&c| (c, Reuse::Keep)));
        out.insert(*last, Reuse::Last);
    }
    out
}
