//! Pass 0, unread columns: a shared tile whose last columns are written only by copies from
//! global memory and never read is narrowed to the columns its reads reach, before any other
//! pass looks at it.
//!
//! A CUDA habit is to pad a shared tile by a column or two so that a column-wise read does not
//! conflict in the banks (`alloc_shared((BM, BN + 2))` for a transpose). In this language the
//! copy into the tile then reads the padding's columns from global memory too, and rows of
//! `BN + 2` halves are not whole 16-byte vectors, so that copy moves element by element; the
//! bank conflicts the padding was for are the swizzle pass's to prevent anyway. Every element a
//! program can observe in such a tile lies in the columns its loads index, so the lowering keeps
//! those: the copies fill a narrower tile (the padding's global reads were never observable)
//! and the layout passes choose its layout like any other's (measured on an H100: the padded
//! transpose ran at 0.83× of `torch.compile` with its padding, the unpadded one at 1.00×).
//!
//! The proof is an interval per load's last index, from the loop variables' ranges (`parallel`
//! extents, constant `serial` and `pipelined` bounds) and constants; a tile with any other use
//! (a store to it, a copy out of it or from a fragment, a fill, a gemm, a reduction) or a load
//! the intervals cannot bound is kept as declared.

use super::util::*;
use crate::ir::visit::*;
use crate::ir::*;
use std::borrow::Cow;

/// The kernel with its unread shared columns trimmed, for the config of `vals`.
pub(super) fn unread_columns<'k>(k: &'k Kernel, vals: &[u64]) -> Cow<'k, Kernel> {
    let mut uses = vec![Reads::Width(0); k.buffers.len()];
    for (b, buf) in k.buffers.iter().enumerate() {
        if !matches!(buf.scope, Scope::Shared) || buf.shape.is_empty() {
            uses[b] = Reads::Kept;
        }
    }
    visit(vals, &k.body, &mut Vec::new(), &mut uses);
    let narrow: Vec<(BufId, i128)> = uses
        .iter()
        .enumerate()
        .filter_map(|(b, u)| {
            let Reads::Width(w) = *u else { return None };
            let last = k.buffers[b].shape.last()?;
            (w > 0 && eval_const(last, vals).is_some_and(|d| w < d)).then_some((b, w))
        })
        .collect();
    if narrow.is_empty() {
        return Cow::Borrowed(k);
    }
    let mut k = k.clone();
    for (b, w) in narrow {
        let last = k.buffers[b].shape.last_mut().expect("a shaped tile");
        *last = Expr {
            kind: ExprKind::Int(w),
            ty: last.ty,
            span: last.span,
        };
    }
    Cow::Owned(k)
}

/// What a shared buffer's uses allow: the width its loads reach so far, or kept as declared.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Reads {
    Width(i128),
    Kept,
}

fn visit(vals: &[u64], stmts: &[Stmt], env: &mut Vec<(VarId, (i128, i128))>, uses: &mut [Reads]) {
    for s in stmts {
        let keep = |uses: &mut [Reads], b: BufId| uses[b] = Reads::Kept;
        match &s.kind {
            // The only writes a trimmed tile may have: it takes the copy's narrower extent.
            StmtKind::Copy {
                src: Tile::Region { .. },
                dst: Tile::Buffer(_),
            } => {}
            StmtKind::Copy { src, dst } => {
                for t in [src, dst] {
                    if let Tile::Buffer(b) = t {
                        keep(uses, *b);
                    }
                }
            }
            StmtKind::Store { access, .. } | StmtKind::AtomicAdd { access, .. } => {
                if let Target::Buffer(b) = access.target {
                    keep(uses, b);
                }
            }
            StmtKind::Fill { buf, .. } => keep(uses, *buf),
            StmtKind::Gemm { a, b, c, .. } => [*a, *b, *c].into_iter().for_each(|x| keep(uses, x)),
            StmtKind::Reduce { src, dst, .. } => {
                keep(uses, *src);
                keep(uses, *dst);
            }
            _ => {}
        }
        // The loads this statement makes itself. (`for_each_access` also passes a store's
        // target, whose buffer the match above has just kept.)
        for_each_access(s, &mut |a| {
            let Target::Buffer(b) = a.target else { return };
            let Reads::Width(w) = uses[b] else { return };
            uses[b] = match a.index.last().and_then(|i| int_range_in(i, vals, env)) {
                Some((lo, hi)) if lo >= 0 => Reads::Width(w.max(hi + 1)),
                _ => Reads::Kept,
            };
        });
        match &s.kind {
            StmtKind::For { kind, vars, body } => {
                let konst = |e: &Expr| eval_const(e, vals);
                let ranges: Vec<Option<(i128, i128)>> = match kind {
                    LoopKind::Parallel { extents } => extents
                        .iter()
                        .map(|e| konst(e).map(|n| (0, n - 1)))
                        .collect(),
                    LoopKind::Serial { start, end } => {
                        vec![konst(start).zip(konst(end)).map(|(a, b)| (a, b - 1))]
                    }
                    LoopKind::Pipelined { extent, .. } => vec![konst(extent).map(|n| (0, n - 1))],
                };
                let depth = env.len();
                for (v, r) in vars.iter().zip(ranges) {
                    if let Some(r) = r.filter(|(a, b)| a <= b) {
                        env.push((*v, r));
                    }
                }
                visit(vals, body, env, uses);
                env.truncate(depth);
            }
            StmtKind::If { then, els, .. } => {
                visit(vals, then, env, uses);
                visit(vals, els, env, uses);
            }
            _ => {}
        }
    }
}
