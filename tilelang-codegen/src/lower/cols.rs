//! Pass 1c, column fragments: a register layout for `(W,)` buffers that loops over `(.., W)`
//! tiles read as `v[j]` (the loop's last variable), the mirror of [`super::rows`].
//!
//! A weight or bias row (`y = x · r · w[j]`, `x · w[j] + b[j]`) is the same for every row of
//! the tile. Held in shared memory it costs a store, a load per element and two barriers per
//! chunk; held in registers, each thread needs only the columns its part of the tile covers.
//! With `u` elements per unit of the tile's layout (1 strided, [`CHUNK`] chunked) and
//! `w = W / u` units per row, either a row spans whole rounds of the block (`w % T == 0`) or a
//! round spans whole rows (`T % w == 0`); in both cases thread `t` meets only the units
//! `c ≡ t (mod width)`, `width = min(w, T)`, in the same order in every row. That is
//! [`Layout::Cols`]: the fragment laid out over a block of `width` threads, replicated in each
//! of the `T / width` groups (threads `t`, `t + width`, ..), so tile register `r` meets column
//! register `r % nreg`, a constant once the loop is unrolled.
//!
//! A buffer gets it when it is only ever read that way and written by copies from global
//! memory (or `fill`): every thread then loads its own columns, a vector per unit where the
//! tile is chunked. Anything else (a loop over its own shape, a copy out of it, a reduction)
//! keeps the layouts and demotions of [`super::layout`].

use super::plan::*;
use super::rows;
use crate::ir::visit::*;
use crate::ir::*;

/// The column layout meeting a tile of shape `ext` held in `parent` (strided or chunked) over
/// `threads`. `None` where the tile's rows do not fall on whole thread groups or registers.
pub(crate) fn cols_of(parent: Layout, ext: &[usize], threads: usize) -> Option<Layout> {
    let unit = parent.unit()?;
    let last = *ext.last()?;
    let total: usize = ext.iter().product();
    if ext.len() < 2 || last % unit != 0 || total % (unit * threads) != 0 {
        return None;
    }
    let w = last / unit;
    let width = if w % threads == 0 {
        threads
    } else if threads % w == 0 {
        w
    } else {
        return None;
    };
    Some(Layout::Cols { unit, width })
}

/// Whether every statement that names `b` is one a column fragment serves: copies from global
/// memory into it and fills (its reads are checked access by access by the layout walk).
pub(super) fn written_from_global(k: &Kernel, b: BufId) -> bool {
    let mut ok = true;
    walk(&k.body, &mut |s| match &s.kind {
        StmtKind::Copy { src, dst } => {
            let names = |t: &Tile| matches!(t, Tile::Buffer(x) if *x == b);
            if names(src) || (names(dst) && !matches!(src, Tile::Region { .. })) {
                ok = false;
            }
        }
        StmtKind::Reduce { src, dst, .. } => ok &= *src != b && *dst != b,
        StmtKind::Gemm { a, b: bb, c, .. } => ok &= *a != b && *bb != b && *c != b,
        _ => {}
    });
    ok
}

/// Gives column layouts to the buffers read as column broadcasts whose reads all meet one
/// (the tiles they meet are in registers, in layouts [`cols_of`] serves, and agree) and that
/// nothing else touches ([`written_from_global`], no loop over their own shape); demotes the
/// other column-broadcast buffers. Returns whether it demoted anything.
pub(super) fn assign(
    k: &Kernel,
    threads: usize,
    uses: &rows::Uses,
    layouts: &mut [Layout],
    demoted: &mut Demoted,
) -> bool {
    let mut changed = false;
    let mut seen = Vec::new();
    for (b, _, _) in &uses.columns {
        if seen.contains(b) || demoted[*b] {
            continue;
        }
        seen.push(*b);
        let wanted: Vec<Option<Layout>> = uses
            .columns
            .iter()
            .filter(|(x, _, _)| x == b)
            .map(|(_, ext, full)| {
                let parent = full.iter().find(|&&p| !demoted[p])?;
                cols_of(layouts[*parent], ext, threads)
            })
            .collect();
        let one = wanted[0].filter(|l| wanted.iter().all(|w| *w == Some(*l)));
        match one {
            Some(l) if !uses.owned.contains(b) && written_from_global(k, *b) => layouts[*b] = l,
            _ => {
                changed |= demoted.set(*b, Why::Cols, None);
            }
        }
    }
    changed
}
