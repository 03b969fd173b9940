//! The printer's state ([`Emitter`]) and what every part of it uses: names of the kernel's
//! parameters, buffers and variables, `#line` directives, tile coordinates and the small
//! formatting helpers. A leaf of the printer.

use crate::ir::*;
use crate::lower::names::*;
use crate::lower::plan::*;
use crate::target::Target as Gpu;
use std::collections::{BTreeMap, BTreeSet};

pub(super) struct Emitter<'a> {
    pub(super) p: &'a Plan<'a>,
    pub(super) k: &'a Kernel,
    pub(super) target: &'a Gpu,
    pub(super) inst: &'a Instance<'a>,
    pub(super) threads: usize,
    pub(super) storage: &'a [Storage],
    pub(super) swizzled: &'a [usize],
    /// Emitting the loads of a pipelined loop: global-to-shared copies are asynchronous.
    pub(super) async_copies: bool,
    pub(super) file: Option<&'a str>,
    /// Inside a chunk-wise loop: how the lanes' values are named (`print_vector`).
    pub(super) lane: Option<Lanes<'a>>,
    /// Temporaries named so far (`__v<n>`).
    pub(super) temps: usize,
    /// Inside a loop over row fragments, whose iterations every thread of a group runs: the
    /// condition that picks one thread per group for stores outside registers.
    pub(super) lead: Option<String>,
    /// Inside a loop whose layout has row fragments (a strided, chunked or matrix-unit tile):
    /// its rank and how its register index reads theirs (`LoopPlan::row_read`).
    pub(super) bcast: Option<(usize, RowRead)>,
    /// Printing the statements that finish a loop's deferred reductions after it
    /// ([`super::defer`]): their combine statements print here, not in the loop.
    pub(super) finishing: bool,
    /// Printing a copy whose loads carry an L2 hint ([`super::reuse`]).
    pub(super) hint: Option<Reuse>,
    /// Printing the interior iterations of a split loop ([`super::interior`]): its copies
    /// that take the unconditional path there, by [`StmtId`].
    pub(super) interior: BTreeSet<StmtId>,
    /// Printing such a copy.
    pub(super) inside: bool,
    /// Printing the TMA entry ([`super::tma`]): its pipelined loops load through tensor maps.
    pub(super) tma: bool,
    /// Printing the tile loop of a persistent entry ([`Specialized`]): block
    /// indices are the tile's (`__bx`, `__by`, `__bz`), not the block's.
    pub(super) persistent: bool,
    /// Printing the consumers' code of a warp-specialised entry: barriers are among these
    /// threads only (`tl::consumer_sync`), the producer warpgroup never meets them.
    pub(super) consumers: Option<usize>,
}

/// How expressions name per-lane values inside a chunk.
#[derive(Clone)]
pub(super) struct Lanes<'a> {
    pub(super) plan: &'a VectorPlan,
    /// The lane index expression (`__l` in a lane loop, `0` for lane 0).
    pub(super) idx: &'static str,
    /// The body's `let`s are lane arrays (the vector body) or inlined (the uniformity check).
    pub(super) inline: bool,
    /// Grouped loads already in registers: access → lane array.
    pub(super) loads: BTreeMap<AccessId, String>,
    /// Interleaved store groups being gathered: group → (the chunk's array, the place of its
    /// first element once the residue-0 store has printed it).
    pub(super) gathers: BTreeMap<usize, (String, Option<String>)>,
}

/// The coordinates of row-major element `lin` of a tile of shape `ext`.
pub(super) fn tile_coords(ext: &[usize], lin: &str) -> Vec<String> {
    let mut stride: usize = ext.iter().product();
    ext.iter()
        .map(|&e| {
            stride /= e;
            format!("(tl::index)(({lin} / {stride}) % {e})")
        })
        .collect()
}

/// [`tile_coords`] of a thread's chunks, `lin` advancing by `step` from one chunk to the next
/// and `first` in its first: a coordinate the step cannot change (its extent times its stride
/// divides the step) is printed from `first`, the same expression in every chunk, so the
/// compiler sees that the chunks share it (one load of a row broadcast, not one a chunk).
pub(super) fn chunk_coords(ext: &[usize], lin: &str, step: usize, first: &str) -> Vec<String> {
    let mut stride: usize = ext.iter().product();
    ext.iter()
        .zip(tile_coords(ext, lin))
        .map(|(&e, c)| {
            stride /= e;
            if step % (stride * e) == 0 {
                format!("(tl::index)(({first} / {stride}) % {e})")
            } else {
                c
            }
        })
        .collect()
}

/// For tile coordinates `__c0..` of a rank-`r` tile at the offset of region `__g` (padded to
/// rank 4: tile dim d is region dim 4 - r + d): whether the element is inside the tensor, and
/// its linear index in it.
pub(super) fn region_index(r: usize) -> (String, String) {
    let mut conds = Vec::new();
    let mut lin = String::from("0");
    for d in 0..4 {
        let g = if d + r >= 4 {
            format!("(__g.off[{d}] + __c{})", d + r - 4)
        } else {
            format!("__g.off[{d}]")
        };
        conds.push(format!("{g} >= 0 && {g} < __g.dims[{d}]"));
        lin = format!("({lin}) * __g.dims[{d}] + {g}");
    }
    (conds.join(" && "), lin)
}

/// For the chunk at tile coordinates `__c0..` of a rank-`r` tile in the region `__g`: whether
/// its row (every dimension but the innermost) is inside the tensor, and the linear index of
/// its first element, column `__gc`.
pub(super) fn region_row(r: usize) -> (String, String) {
    let mut conds = Vec::new();
    let mut lin = String::from("0");
    for d in 0..4 {
        let g = if d == 3 {
            "__gc".to_string()
        } else if d + r >= 4 {
            format!("(__g.off[{d}] + __c{})", d + r - 4)
        } else {
            format!("__g.off[{d}]")
        };
        if d < 3 {
            conds.push(format!("{g} >= 0 && {g} < __g.dims[{d}]"));
        }
        lin = format!("({lin}) * __g.dims[{d}] + {g}");
    }
    (conds.join(" && "), lin)
}

/// The tl.h operator of a reduction.
pub(super) fn reduce_op(op: ReduceOp) -> &'static str {
    match op {
        ReduceOp::Sum => "tl::Sum",
        ReduceOp::Max => "tl::Max",
    }
}

/// The lead-thread condition of a loop in `layout`, when its iterations run in every thread
/// of a group (row fragments).
pub(super) fn lead(layout: Layout) -> Option<String> {
    match layout {
        Layout::Rows { groups: 1, .. } => Some("TL_TID == 0".into()),
        Layout::Rows { width, .. } => Some(format!("TL_TID % {width} == 0")),
        Layout::Cols { width, .. } => Some(format!("TL_TID < {width}")),
        Layout::AccRows { inst, m, wm, wn } => {
            Some(format!("{}::lead(TL_TID)", inst.rows(m, wm, wn)))
        }
        _ => None,
    }
}

/// A tile's swizzle as tl.h's `SW` argument: `false` plain, `true` the `ldmatrix` step, else
/// the step.
pub(super) fn swizzle_arg(div: usize) -> String {
    match div {
        0 => "false".into(),
        1 => "true".into(),
        ATOMS => "tl::ATOMS".into(),
        d => d.to_string(),
    }
}

/// A thread's index within its group of `width` of the block's `threads`.
pub(super) fn group_tid(width: usize, threads: usize) -> String {
    if width == threads {
        "TL_TID".into()
    } else {
        format!("(TL_TID % {width})")
    }
}

/// Row-major linear index: `((i0 * d1 + i1) * d2 + i2)`.
pub(super) fn linear(idx: &[String], dims: &[String]) -> String {
    let mut s = idx[0].clone();
    for d in 1..idx.len() {
        s = format!("({s}) * {} + {}", dims[d], idx[d]);
    }
    s
}

impl Emitter<'_> {
    pub(super) fn tensor(&self, p: ParamId) -> String {
        format!("t_{}", c_name(&self.k.params[p].name))
    }

    pub(super) fn scalar(&self, p: ParamId) -> String {
        format!("s_{}", c_name(&self.k.params[p].name))
    }

    /// A const generic: `k_` keeps a name like `int` or `TL_TID` clear of C++ keywords and
    /// tl.h's macros.
    pub(super) fn konst(&self, i: usize) -> String {
        format!("k_{}", c_name(&self.k.consts[i]))
    }

    pub(super) fn sym(&self, i: usize) -> String {
        format!("n_{}", c_name(&self.k.symbols[i]))
    }

    pub(super) fn var(&self, v: VarId) -> String {
        format!("v{}_{}", v, c_name(&self.k.vars[v].name))
    }

    pub(super) fn buf(&self, b: BufId) -> String {
        format!("b{}_{}", b, c_name(&self.k.buffers[b].name))
    }

    /// A `#line` directive naming the statement's Rust line, when the source file is known.
    pub(super) fn line(&self, s: &Stmt) -> String {
        let line = s.span.start.start().line;
        match self.file {
            Some(f) if line > 0 => format!("#line {line} \"{}\"\n", f.replace('\\', "/")),
            _ => String::new(),
        }
    }
}
