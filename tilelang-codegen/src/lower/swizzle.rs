//! Pass 3b, swizzles: which shared tiles are stored with their 16-byte chunks permuted within
//! each row (tl.h `swz<CHUNKS, DIV>`: chunk `c` of row `r` at `c ^ ((r / DIV') % SPAN)`), and
//! with which row step `DIV`. The value is per buffer: 0 plain, else `DIV`.
//!
//! * **Matrix-unit operands.** A tile only written by copies from global memory and read by
//!   `mma.sync` gemms gets `DIV = 1`: the 8 consecutive rows one `ldmatrix` phase reads fall in
//!   distinct banks.
//! * **Tiles read across their rows.** A tile written by copies (or stores) along its rows and
//!   read in another order (a transpose: `t[(j, i)] = s[(i, j)]`) has the lanes of a wave reading
//!   rows several apart at one column, which sit in the same banks when a row is a multiple of
//!   128 bytes. For such a tile the pass runs a bank model: for every element access in a
//!   `parallel` loop, the words the first wave touches per unrolled register under the loop's
//!   thread mapping, counted per bank (a wave's access takes as many passes as the busiest
//!   bank's distinct words), for `DIV` = none, 1, 2, 4, .. up to the tile's rows, and keeps the
//!   cheapest, plain on ties. A copy's 16-byte stores along a row are a permutation of that
//!   row's chunks under every `DIV`, so they stay conflict-free and the choice is the reads'.
//!
//! * **wgmma operands.** The tiles of a gemm that runs on wgmma are stored in the layout the
//!   tensor cores read through their descriptors, [`ATOMS`] (tl.h's `sidx<ATOMS, ..>`): the
//!   layout pass chose wgmma only for tiles every use of which goes through `sidx`
//!   ([`super::layout::atoms_ok`]), so this is not a choice here but a consequence.
//!
//! A swizzled tile must be indexed through `sidx` everywhere, so a tile with any other use (a
//! copy out of it, a fill, a reduction, a loop the model cannot follow) stays plain. The
//! element loops' grouped 16-byte accesses ([`super::vectorize`]) are not taken for swizzled
//! tiles; the model only swizzles where loops read element by element anyway.

use super::plan::*;
use super::util::*;
use crate::ir::visit::*;
use crate::ir::*;
use std::collections::{BTreeMap, BTreeSet};

/// Banks of shared memory, 4 bytes each (NVIDIA; AMD's LDS has as many).
const BANKS: usize = 32;

/// The swizzle of each buffer (0: plain, [`ATOMS`], else tl.h's `DIV`).
pub(super) fn plan_swizzle(
    inst: &Instance,
    storage: &[Storage],
    threads: usize,
    wave: usize,
) -> Vec<usize> {
    let nbuf = inst.k.buffers.len();
    let shape_ok: Vec<bool> = (0..nbuf)
        .map(|b| {
            let shape = inst.buffer_shape(b);
            let chunks = shape.get(1).map_or(0, |c| c * 2 / 16);
            matches!(storage[b], Storage::Shared { .. })
                && shape.len() == 2
                && inst.k.buffers[b].dtype.size_bytes() == 2
                && shape[1] % 8 == 0
                && chunks >= 2
                && chunks.is_power_of_two()
        })
        .collect();
    let mut uses = vec![Uses::default(); nbuf];
    visit(inst, storage, &mut uses);
    (0..nbuf)
        .map(|b| {
            let u = &uses[b];
            if u.wgmma {
                ATOMS
            } else if !shape_ok[b] || u.other {
                0
            } else if u.mma && u.copied_in && u.elems.is_empty() {
                1
            } else if !u.mma && !u.elems.is_empty() {
                cheapest(inst, b, &u.elems, threads, wave)
            } else {
                0
            }
        })
        .collect()
}

/// How a shared buffer is used, as far as a swizzle cares.
#[derive(Default, Clone)]
struct Uses<'k> {
    /// Written by a copy from global memory.
    copied_in: bool,
    /// An operand of an `mma.sync` gemm.
    mma: bool,
    /// An operand of a wgmma gemm.
    wgmma: bool,
    /// Element accesses in `parallel` loops whose thread mapping the model follows: the access
    /// with its loop's variables, extents and layout.
    elems: Vec<(Access, &'k [VarId], Vec<usize>, Layout)>,
    /// Anything else: it stays plain.
    other: bool,
}

/// Gathers each buffer's [`Uses`]: inside a parallel loop every buffer use is an element
/// access (nested loops and `if`s included, with the loop around them).
fn visit<'k>(inst: &Instance<'k>, storage: &[Storage], uses: &mut [Uses<'k>]) {
    walk_parallel(
        &inst.k.body,
        &mut |l| {
            let ext = inst.extents(l.extents);
            let layout = mapping(inst, storage, l.body, &ext);
            (l.vars, ext, layout)
        },
        &mut |s, ploop| {
            if let Some((vars, ext, layout)) = ploop {
                for_each_access(s, &mut |a| {
                    if let Target::Buffer(b) = a.target {
                        match layout {
                            Some(l) if a.index.len() == 2 => {
                                uses[b].elems.push((a.clone(), vars, ext.clone(), *l));
                            }
                            _ => uses[b].other = true,
                        }
                    }
                });
                return;
            }
            match &s.kind {
                // (Their bodies are visited on their own.)
                StmtKind::For { .. } | StmtKind::If { .. } => {}
                StmtKind::Copy {
                    src: Tile::Region { .. },
                    dst: Tile::Buffer(b),
                } => {
                    uses[*b].copied_in = true;
                    // Offsets that load from buffers are plain uses of those.
                    for_each_access(s, &mut |a| {
                        if let Target::Buffer(x) = a.target {
                            uses[x].other = true;
                        }
                    });
                }
                StmtKind::Gemm { a, b, c, .. } if storage[*c].matrix() == Some(Inst::Wgmma) => {
                    uses[*a].wgmma = true;
                    uses[*b].wgmma = true;
                    uses[*c].other = true;
                }
                StmtKind::Gemm { a, b, c, .. }
                    if a != b && storage[*c].matrix() == Some(Inst::MmaSync) =>
                {
                    uses[*a].mma = true;
                    uses[*b].mma = true;
                    uses[*c].other = true;
                }
                _ => each_buffer(s, &mut |b| uses[b].other = true),
            }
        },
    );
}

/// The element order of a `parallel` loop the model can follow: strided or chunked, from a
/// register fragment of the loop's shape (the layout pass made them agree). `None` for loops
/// over no such fragment (their mapping is the vector pass's to choose) and other layouts.
fn mapping(inst: &Instance, storage: &[Storage], body: &[Stmt], ext: &[usize]) -> Option<Layout> {
    let mut layout = None;
    walk(body, &mut |s| {
        for_each_access(s, &mut |a| {
            if let Target::Buffer(b) = a.target {
                if let Storage::Reg { layout: l, .. } = storage[b] {
                    if inst.buffer_shape(b) == ext {
                        layout = Some(l);
                    }
                }
            }
        })
    });
    layout.filter(|l| l.unit().is_some())
}

/// The cheapest `DIV` for a tile under the bank model (0 when plain is as cheap, or when the
/// model cannot evaluate an access).
fn cheapest(
    inst: &Instance,
    b: BufId,
    elems: &[(Access, &[VarId], Vec<usize>, Layout)],
    threads: usize,
    wave: usize,
) -> usize {
    let shape = inst.buffer_shape(b);
    let mut best: Option<(usize, usize)> = None;
    let mut div = 0;
    while div <= shape[0] {
        let cost: Option<usize> = elems
            .iter()
            .map(|(a, vars, ext, l)| {
                passes(inst.vals, a, vars, ext, *l, threads, wave, &shape, div)
            })
            .sum();
        let Some(cost) = cost else { return 0 };
        if best.is_none_or(|(c, _)| cost < c) {
            best = Some((cost, div));
        }
        div = if div == 0 { 1 } else { div * 2 };
    }
    best.map_or(0, |(_, d)| d)
}

/// The element offset of (row, col) in a 16-bit tile of `cols` columns under swizzle `div`:
/// tl.h's `sidx` (its host test checks the tile layouts this chooses).
pub(crate) fn sidx(div: usize, cols: usize, row: usize, col: usize) -> usize {
    if div == 0 {
        return row * cols + col;
    }
    let chunks = cols / 8;
    let per_line = if chunks >= 8 { 1 } else { 8 / chunks };
    let span = chunks.min(8);
    row * cols + ((col / 8) ^ ((row / (per_line * div)) % span)) * 8 + col % 8
}

/// Passes through the banks the first wave of a loop needs for access `a` (2-byte elements),
/// summed over the loop's unrolled registers; `None` when an index is not a function of the
/// loop's variables alone or leaves the tile.
#[allow(clippy::too_many_arguments)] // one access in one loop, and the candidate
fn passes(
    vals: &[u64],
    a: &Access,
    vars: &[VarId],
    ext: &[usize],
    layout: Layout,
    threads: usize,
    wave: usize,
    shape: &[usize],
    div: usize,
) -> Option<usize> {
    let unit = layout.unit().unwrap_or(1);
    let total: usize = ext.iter().product();
    let nreg = total.div_ceil(unit * threads) * unit;
    let mut sum = 0;
    for r in 0..nreg {
        let mut banks: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
        for t in 0..wave.min(threads) {
            let l = ((r / unit) * threads + t) * unit + r % unit;
            if l >= total {
                continue;
            }
            let mut rest = l;
            let mut bind = vec![0i128; vars.len()];
            for d in (0..ext.len()).rev() {
                bind[d] = (rest % ext[d]) as i128;
                rest /= ext[d];
            }
            let at = |e: &Expr| eval_at(e, vals, vars, &bind);
            let (row, col) = (at(&a.index[0])?, at(&a.index[1])?);
            if row < 0 || col < 0 || row as usize >= shape[0] || col as usize >= shape[1] {
                return None;
            }
            let word = sidx(div, shape[1], row as usize, col as usize) / 2;
            banks.entry(word % BANKS).or_default().insert(word);
        }
        sum += banks.values().map(BTreeSet::len).max().unwrap_or(0);
    }
    Some(sum)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The model's `sidx` permutes each row's chunks for every step (what keeps a copy's
    /// 16-byte stores conflict-free and the tile a bijection).
    #[test]
    fn every_swizzle_permutes_the_chunks_of_each_row() {
        for cols in [16, 32, 64, 128, 256] {
            for div in [0, 1, 2, 4, 8, 16] {
                for row in 0..64 {
                    let mut seen = vec![false; cols / 8];
                    for c in 0..cols / 8 {
                        let off = sidx(div, cols, row, c * 8);
                        assert_eq!(off % 8, 0);
                        assert_eq!(off / cols, row);
                        let p = (off % cols) / 8;
                        assert!(!seen[p], "cols {cols} div {div} row {row}");
                        seen[p] = true;
                    }
                }
            }
        }
    }
}
