//! Pass 1b, row fragments: register layouts for the fragments that a reduction produces and
//! that loops read as broadcasts, and how each reduction runs in registers.
//!
//! A tile `(.., W)` held strided or chunked gives every thread, per register, an element of one
//! row; with `u` elements per unit (1 strided, [`CHUNK`] chunked) and `w = W / u` units per row,
//! either a row spans whole rounds of the block (`w % T == 0`: every thread meets every row) or
//! a round spans whole rows (`T % w == 0`: `w` consecutive threads share a row). In both cases
//! the rows a thread meets are a fixed function of its register and its group of
//! `width = min(w, T)` threads, which is [`Layout::Rows`]: a `(..)` fragment read as `m[i]`
//! inside a loop over `(i, j)`, or written by `reduce_*(&tile, &mut m, last)`, keeps in each
//! thread exactly the rows that thread's part of the tile needs, replicated across its group.
//! The broadcast read is then register `slot / q` (`q = w / width` slots per row), a constant
//! once the loop is unrolled, and the reduction is a fold over the thread's own registers, a
//! butterfly of shuffles across the group's lanes and, when a group spans several waves, one
//! exchange through a few bytes of shared memory and one barrier ([`ReducePlan`]).
//!
//! A matrix-unit accumulator (`gemm`'s, [`Layout::Matrix`]) gives its rows the same way: each
//! thread holds the rows its accumulator registers lie in, replicated across the lanes and the
//! waves of a row of waves that share them ([`Layout::AccRows`], tl.h's `mx::rows`); a
//! broadcast read is register `mx::rows::of<N>(__r)`, a constant once unrolled, and a reduction
//! folds the thread's elements of each row, then the row's lanes, then (when a row of the tile
//! spans several waves) the waves through shared memory (`tl::reduce_acc_rows`). Scores,
//! their row maxima and sums, and the rescaling of an attention kernel's output stay in
//! registers so.
//!
//! A fragment gets the row layout when everything that ties it to a parent agrees on one
//! (fragments tied by loops over their own shape or by register copies share their layout);
//! where not (no register parent, parents in different layouts, an access of another form) it is
//! demoted to shared memory as before, and a reduction with a demoted result keeps its source
//! in shared memory too.

use super::plan::*;
use crate::ir::visit::*;
use crate::ir::*;
use std::collections::{BTreeMap, BTreeSet};

/// How a fragment is used as a row fragment, gathered by the layout pass's access walk.
#[derive(Default)]
pub(super) struct Uses {
    /// `reduce_*(src, dst, last dimension)` between fragments: (src, dst).
    pub reduces: Vec<(BufId, BufId, crate::ctxt::Range)>,
    /// A fragment read as `f[i..]` (the loop's leading variables) in a loop over `ext`, with
    /// the fragments that loop touches in its own shape (they decide its thread mapping).
    pub broadcasts: Vec<(BufId, Vec<usize>, Vec<BufId>)>,
    /// A `(W,)` buffer read as `v[j]` (the loop's last variable) in a loop over `ext`, with the
    /// loop's fragments of its own shape ([`super::cols`]).
    pub columns: Vec<(BufId, Vec<usize>, Vec<BufId>)>,
    /// Buffers accessed in loops over their own shape.
    pub owned: BTreeSet<BufId>,
}

/// The row layout that meets a tile of shape `ext` held in `parent` over `threads`, with the
/// elements of a row each thread holds: for a strided or chunked parent the divisor that turns
/// the tile's register index into the row fragment's (`u · q` of the module docs), `None`
/// where the rows do not fall on whole thread groups or registers, or a group would be a
/// partial wave (its shuffles need every lane); for a matrix-unit accumulator its rows
/// ([`Layout::AccRows`], the same for every accumulator of its instruction, rows and wave
/// grid, whatever its columns).
pub(crate) fn rows_of(
    parent: Layout,
    ext: &[usize],
    threads: usize,
    wave: usize,
) -> Option<(Layout, usize)> {
    if let Layout::Matrix { inst, m, n, wm, wn } = parent {
        if ext != [m, n] {
            return None;
        }
        // wgmma's accumulator is mma.sync's, a warp per 16 rows.
        let inst = if inst == Inst::Wgmma {
            Inst::MmaSync
        } else {
            inst
        };
        let per = n / wn / inst.shape().1 * inst.row_elems();
        return Some((Layout::AccRows { inst, m, wm, wn }, per));
    }
    let u = parent.unit()?;
    let last = *ext.last()?;
    let total: usize = ext.iter().product();
    if ext.len() < 2 || last % u != 0 || total % (u * threads) != 0 || threads % wave != 0 {
        return None;
    }
    let w = last / u;
    let width = if w % threads == 0 {
        threads
    } else if threads % w == 0 {
        w
    } else {
        return None;
    };
    if width % wave != 0 && wave % width != 0 {
        return None;
    }
    let groups = threads / width;
    Some((Layout::Rows { groups, width }, u * (w / width)))
}

/// Groups of fragments that must share one layout: those a `parallel` loop touches in its own
/// shape, and the two sides of a register-to-register copy.
pub(super) fn ties(inst: &Instance, regs: &[bool]) -> Vec<Vec<BufId>> {
    let frag = |b: BufId| regs[b];
    let mut out = Vec::new();
    walk(&inst.k.body, &mut |s| match &s.kind {
        StmtKind::For {
            kind: LoopKind::Parallel { extents },
            body,
            ..
        } => {
            let ext = inst.extents(extents);
            out.push(full_shape(inst, regs, body, &ext));
        }
        StmtKind::Copy {
            src: Tile::Buffer(a),
            dst: Tile::Buffer(b),
        } if frag(*a) && frag(*b) => out.push(vec![*a, *b]),
        _ => {}
    });
    out
}

/// The fragments a loop body over `ext` accesses whose shape is `ext`.
pub(super) fn full_shape(
    inst: &Instance,
    regs: &[bool],
    body: &[Stmt],
    ext: &[usize],
) -> Vec<BufId> {
    let mut out = Vec::new();
    walk(body, &mut |t| {
        for_each_access(t, &mut |a| {
            if let Target::Buffer(b) = a.target {
                if regs[b] && inst.buffer_shape(b) == ext && !out.contains(&b) {
                    out.push(b);
                }
            }
        })
    });
    out
}

/// Gives row layouts to the fragments whose uses all agree on one, in `layouts`, and demotes
/// the others (and the sources of reductions whose results are demoted). Returns whether it
/// demoted anything.
#[allow(clippy::too_many_arguments)] // the layout pass's state, passed in and out
pub(super) fn assign(
    inst: &Instance,
    threads: usize,
    wave: usize,
    uses: &Uses,
    ties: &[Vec<BufId>],
    layouts: &mut [Layout],
    demoted: &mut Demoted,
) -> bool {
    let nbuf = inst.k.buffers.len();
    let mut req: Vec<Vec<Req>> = vec![Vec::new(); nbuf];
    // The reduction that first asked a row layout of each result, for the demotion's line.
    let mut asked: Vec<Option<crate::ctxt::Range>> = vec![None; nbuf];
    for &(src, dst, at) in &uses.reduces {
        asked[dst].get_or_insert(at);
        let shape = inst.buffer_shape(src);
        // (Shared buffers count as demoted.)
        let r = if demoted[src] {
            // Read from shared memory in whichever order the result's other uses need.
            Req::Any(
                Layout::READ_ORDERS
                    .iter()
                    .filter_map(|&l| rows_of(l, &shape, threads, wave).map(|(l, _)| l))
                    .collect(),
            )
        } else {
            Req::Exact(rows_of(layouts[src], &shape, threads, wave).map(|(l, _)| l))
        };
        req[dst].push(r);
    }
    for (f, ext, full) in &uses.broadcasts {
        let parent = full.iter().find(|&&b| !demoted[b]);
        let l = parent.and_then(|&p| rows_of(layouts[p], ext, threads, wave));
        req[*f].push(Req::Exact(l.map(|(l, _)| l)));
    }
    // Union-find over the ties.
    let mut root: Vec<BufId> = (0..nbuf).collect();
    fn find(root: &mut [BufId], b: BufId) -> BufId {
        let mut r = b;
        while root[r] != r {
            r = root[r];
        }
        root[b] = r;
        r
    }
    for g in ties {
        for w in g.windows(2) {
            let (a, b) = (find(&mut root, w[0]), find(&mut root, w[1]));
            root[a] = b;
        }
    }
    let mut changed = false;
    for r in 0..nbuf {
        let members: Vec<BufId> = (0..nbuf)
            .filter(|&b| find(&mut root, b) == r && !demoted[b])
            .collect();
        let reqs: Vec<&Req> = members.iter().flat_map(|&b| &req[b]).collect();
        if reqs.is_empty() {
            continue;
        }
        let shape = inst.buffer_shape(members[0]);
        let agreed = Req::agree(&reqs).filter(|_| {
            members.iter().all(|&b| {
                inst.buffer_shape(b) == shape && !matches!(layouts[b], Layout::Matrix { .. })
            })
        });
        for &b in &members {
            match agreed {
                Some(l) => layouts[b] = l,
                None if !req[b].is_empty() => {
                    changed |= demoted.set(b, Why::Rows, asked[b]);
                }
                None => {}
            }
        }
    }
    for &(src, dst, at) in &uses.reduces {
        if demoted[dst] && !demoted[src] {
            changed |= demoted.set(src, Why::Reduced, Some(at));
        }
    }
    changed
}

/// What one use asks of a row fragment's layout.
#[derive(Clone)]
enum Req {
    /// This layout (`None`: none serves, the fragment must be demoted).
    Exact(Option<Layout>),
    /// Any of these, preferred first (a reduction reading shared memory can take any order).
    Any(Vec<Layout>),
}

impl Req {
    /// The one layout every requirement accepts.
    fn agree(reqs: &[&Req]) -> Option<Layout> {
        let exact: Vec<Option<Layout>> = reqs
            .iter()
            .filter_map(|r| match r {
                Req::Exact(l) => Some(*l),
                Req::Any(_) => None,
            })
            .collect();
        let choice = match exact.first() {
            Some(first) => (*first)?,
            None => *reqs.iter().find_map(|r| match r {
                Req::Any(ls) => ls.first(),
                Req::Exact(_) => None,
            })?,
        };
        reqs.iter()
            .all(|r| match r {
                Req::Exact(l) => *l == Some(choice),
                Req::Any(ls) => ls.contains(&choice),
            })
            .then_some(choice)
    }
}

/// The reductions between a register tile and a row fragment, by [`StmtId`], with their
/// exchange areas placed after `*shared_bytes` (which grows by them).
pub(super) fn plan_reduces(
    inst: &Instance,
    threads: usize,
    wave: usize,
    storage: &[Storage],
    shared_bytes: &mut usize,
) -> BTreeMap<StmtId, ReducePlan> {
    let mut out = BTreeMap::new();
    walk(&inst.k.body, &mut |s| {
        let StmtKind::Reduce { src, dst, .. } = &s.kind else {
            return;
        };
        if let Storage::Reg {
            layout: Layout::AccRows { .. },
            ..
        } = storage[*dst]
        {
            let per = rows_of(
                storage[*src].layout(),
                &inst.buffer_shape(*src),
                threads,
                wave,
            )
            .map(|(_, per)| per)
            .expect("the layout pass gave the result its source's accumulator rows");
            let r = acc_reduce(inst, *src, storage, storage[*dst], per, shared_bytes);
            out.insert(inst.ids.stmt(s), r);
            return;
        }
        let Storage::Reg {
            layout: Layout::Rows { groups, width },
            nreg,
        } = storage[*dst]
        else {
            return;
        };
        let shape = inst.buffer_shape(*src);
        let fits = |l: Layout| {
            rows_of(l, &shape, threads, wave)
                .filter(|(r, _)| *r == storage[*dst].layout())
                .map(|(_, per)| per)
        };
        let (per, gather) = match storage[*src] {
            Storage::Reg { layout, .. } => (fits(layout), None),
            _ => Layout::READ_ORDERS
                .into_iter()
                .find_map(|l| fits(l).map(|per| (per, l)))
                .map_or((None, None), |(per, l)| (Some(per), Some(l))),
        };
        let Some(per) = per else {
            unreachable!("the layout pass gave the result a row layout its source meets")
        };
        let scratch = (width > wave).then(|| {
            let at = shared_bytes.div_ceil(16) * 16;
            let bytes = nreg * groups * (width / wave) * inst.k.buffers[*src].dtype.size_bytes();
            *shared_bytes = at + bytes;
            at
        });
        out.insert(
            inst.ids.stmt(s),
            ReducePlan {
                per,
                width,
                nreg,
                scratch,
                gather,
                acc: None,
            },
        );
    });
    out
}

/// The reduction of a matrix-unit accumulator `src` along its rows into `dst` (laid out in
/// its rows: tl.h's `reduce_acc_rows`; `per` of them a thread, [`rows_of`]), with its
/// exchange area, `m · wn` values, placed after `*shared_bytes` when a row spans several waves.
fn acc_reduce(
    inst: &Instance,
    src: BufId,
    storage: &[Storage],
    dst: Storage,
    per: usize,
    shared_bytes: &mut usize,
) -> ReducePlan {
    let Storage::Reg {
        layout: acc @ Layout::Matrix { .. },
        ..
    } = storage[src]
    else {
        unreachable!("accumulator rows are reduced from the accumulator in registers")
    };
    let Storage::Reg {
        layout: Layout::AccRows { inst: i, m, wn, .. },
        nreg,
    } = dst
    else {
        unreachable!("the result of an accumulator's rows")
    };
    let scratch = (wn > 1).then(|| {
        let at = shared_bytes.div_ceil(16) * 16;
        *shared_bytes = at + m * wn * inst.k.buffers[src].dtype.size_bytes();
        at
    });
    ReducePlan {
        per,
        width: i.wave() * i.row_regs() / i.shape().0 * wn,
        nreg,
        scratch,
        gather: None,
        acc: Some(acc),
    }
}
