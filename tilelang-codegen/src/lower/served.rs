//! Pass 1d, served: the layout pass's last word on each register buffer. A buffer stays in
//! registers only when **every** access to it reaches, in every thread, an element that thread
//! holds under the buffer's own layout; otherwise it is demoted to shared memory, which is always
//! correct.
//!
//! The other layout passes each look at one kind of use (owner-only loops and copies in
//! `layout`, row broadcasts and reductions in [`super::rows`], column broadcasts in
//! [`super::cols`]); a buffer used in two kinds of loop can satisfy each pass on its own and
//! still be laid out for only one of them. A `(BN,)` tile read as `v[j]` in a loop over
//! `(BM, BN)` (a column broadcast) and again as `v[j]` in a loop over `(BN, BM)` (a row
//! broadcast) got the column layout, and the second loop read each thread's column register
//! where it needed its row: a silent wrong result on the GPU (issue 36). This pass states what
//! the printer assumes of each access, in one place, for every access:
//!
//! * in a `parallel` loop over `ext` that iterates in layout `L` (that of the loop's register
//!   fragments of its own shape, else strided: [`loop_layout`]),
//!   - an access by the loop's variables to a buffer of shape `ext` (owner-only) needs the
//!     buffer in `L`;
//!   - a read by the loop's leading variables (a row broadcast, `m[i]` in a loop over `(i, j)`)
//!     needs the row layout that meets `L` ([`super::rows::rows_of`]);
//!   - a read by the loop's last variable of a `(W,)` buffer (a column broadcast, `w[j]`) needs
//!     the column layout that meets `L` ([`super::cols::cols_of`]);
//!   - nothing else is served;
//! * outside `parallel` loops no element access is served (a register belongs to one thread);
//! * a register-to-register copy needs both sides in one layout;
//! * a reduction into a register buffer needs it in the row layout its source meets (a source
//!   in shared memory can be read in any of [`Layout::READ_ORDERS`]); a source in registers
//!   needs its result in registers;
//! * a `gemm` accumulator in registers needs a matrix unit's layout or the strided one of the
//!   FMA path; an A operand in registers needs the layout of an mma.sync accumulator the
//!   product's own matches ([`Check::register_a`]); B is never in registers.
//!
//! The layout pass demotes what this finds until nothing is left; the planner runs the same
//! check on the finished plan with each loop's chosen mapping, and reports anything it finds as
//! an internal error on the statement instead of printing code that reads the wrong element.

use super::plan::Inst::{MmaSync, Wgmma};
use super::plan::*;
use super::{cols, rows};
use crate::ctxt::Range;
use crate::ir::visit::*;
use crate::ir::*;

/// A register buffer's access that its layout does not serve: the buffer and the span of the
/// statement that makes it.
pub(crate) type Unserved = (BufId, Range);

/// The layout a `parallel` loop over `ext` iterates in: that of a matrix-unit, chunked or row
/// fragment (of either kind) of the loop's own shape it touches (the layout pass makes them agree), else
/// strided. `layout_of` gives the layout of a buffer held in registers.
pub(crate) fn loop_layout(
    inst: &Instance,
    body: &[Stmt],
    ext: &[usize],
    layout_of: &dyn Fn(BufId) -> Option<Layout>,
) -> Layout {
    let mut layout = Layout::Strided;
    walk(body, &mut |s| {
        for_each_access(s, &mut |a| {
            if let Target::Buffer(b) = a.target {
                if let Some(
                    l @ (Layout::Matrix { .. }
                    | Layout::Chunked { .. }
                    | Layout::Rows { .. }
                    | Layout::AccRows { .. }),
                ) = layout_of(b)
                {
                    if inst.buffer_shape(b) == ext {
                        layout = l;
                    }
                }
            }
        })
    });
    layout
}

/// The accesses of register buffers (`layout_of` is `Some` for them) that their layouts do not
/// serve (module docs), in statement order. `loop_layout` gives the layout a `parallel` loop
/// statement iterates in.
pub(crate) fn unserved(
    inst: &Instance,
    threads: usize,
    wave: usize,
    layout_of: &dyn Fn(BufId) -> Option<Layout>,
    loop_layout: &dyn Fn(&Stmt) -> Layout,
) -> Vec<Unserved> {
    let c = Check {
        inst,
        threads,
        wave,
        layout_of,
    };
    let mut out = Vec::new();
    walk_parallel(
        &inst.k.body,
        &mut |l| (l.vars, inst.extents(l.extents), loop_layout(l.stmt)),
        &mut |s, ploop| {
            c.stmt(
                s,
                ploop.map(|(vars, ext, l)| (*vars, &ext[..], *l)),
                &mut out,
            )
        },
    );
    out
}

/// The enclosing `parallel` loop: its variables, extents and layout.
type Ploop<'a> = Option<(&'a [VarId], &'a [usize], Layout)>;

struct Check<'a> {
    inst: &'a Instance<'a>,
    threads: usize,
    wave: usize,
    layout_of: &'a dyn Fn(BufId) -> Option<Layout>,
}

impl Check<'_> {
    /// Records what `s` itself (not its nested statements) accesses that is not served.
    fn stmt(&self, s: &Stmt, ploop: Ploop, out: &mut Vec<Unserved>) {
        let mut access = |a: &Access, read: bool| {
            if let Target::Buffer(b) = a.target {
                if !self.access_served(b, a, read, ploop) {
                    out.push((b, s.span));
                }
            }
        };
        if let Some(a) = stored_access(s) {
            access(a, false);
        }
        for_each_load(s, &mut |a| access(a, true));
        let mut need = |b: BufId, ok: bool| {
            if !ok {
                out.push((b, s.span));
            }
        };
        match &s.kind {
            StmtKind::Copy {
                src: Tile::Buffer(a),
                dst: Tile::Buffer(b),
            } => {
                if let (Some(la), Some(lb)) = ((self.layout_of)(*a), (self.layout_of)(*b)) {
                    need(*a, la == lb);
                    need(*b, la == lb);
                }
            }
            StmtKind::Reduce { src, dst, .. } => {
                let shape = self.inst.buffer_shape(*src);
                let meets =
                    |l: Layout| rows::rows_of(l, &shape, self.threads, self.wave).map(|(r, _)| r);
                match ((self.layout_of)(*src), (self.layout_of)(*dst)) {
                    (Some(ls), Some(ld)) => {
                        let ok = meets(ls) == Some(ld);
                        need(*src, ok);
                        need(*dst, ok);
                    }
                    (Some(_), None) => need(*src, false),
                    (None, Some(ld)) => need(
                        *dst,
                        Layout::READ_ORDERS.iter().any(|&l| meets(l) == Some(ld)),
                    ),
                    (None, None) => {}
                }
            }
            StmtKind::Gemm { a, b, c, ta, .. } => {
                let lc = (self.layout_of)(*c);
                if let Some(l) = lc {
                    need(*c, matches!(l, Layout::Matrix { .. } | Layout::Strided));
                }
                if let Some(la) = (self.layout_of)(*a) {
                    need(*a, self.register_a(la, lc, [*a, *b], *ta));
                }
                if (self.layout_of)(*b).is_some() {
                    need(*b, false);
                }
            }
            _ => {}
        }
    }

    /// Whether a `gemm`'s A operand held in registers in layout `la` feeds an mma.sync product
    /// into an accumulator in `lc`: for m16n8k16 the accumulator elements of n-tiles `2k` and
    /// `2k + 1`, packed two by two, are the A operand of k-step `k` (tl.h's `gemm_mma_rs`), so
    /// A must be a 16-bit tile in the layout of an mma.sync or wgmma accumulator (the same a
    /// warp) whose warps own whole rows, the accumulator's rows and warps the same, `K` (A's
    /// columns) a multiple of 16, B of A's dtype, and A read as stored.
    fn register_a(&self, la: Layout, lc: Option<Layout>, [a, b]: [BufId; 2], ta: bool) -> bool {
        let k = self.inst.k;
        let Layout::Matrix {
            inst: MmaSync | Wgmma,
            m,
            n: kk,
            wm,
            wn: 1,
        } = la
        else {
            return false;
        };
        // wgmma's RS form takes one 16-row m-tile a warp.
        let (mc, wmc) = match lc {
            Some(Layout::Matrix {
                inst: MmaSync,
                m,
                wm,
                wn: 1,
                ..
            }) => (m, wm),
            Some(Layout::Matrix {
                inst: Wgmma,
                m,
                wm,
                wn: 1,
                ..
            }) if m == 16 * wm => (m, wm),
            _ => return false,
        };
        let dt = k.buffers[a].dtype;
        !ta && m == mc
            && wm == wmc
            && kk % 16 == 0
            && matches!(dt, Dtype::F16 | Dtype::Bf16)
            && k.buffers[b].dtype == dt
    }

    /// Whether the element access `a` to buffer `b` reaches, in every thread, an element that
    /// thread holds (true for buffers not in registers).
    fn access_served(&self, b: BufId, a: &Access, read: bool, ploop: Ploop) -> bool {
        let Some(lb) = (self.layout_of)(b) else {
            return true;
        };
        let Some((vars, ext, l)) = ploop else {
            return false;
        };
        match indexing(&self.inst.buffer_shape(b), a, read, vars, ext) {
            Indexing::Owner => lb == l,
            Indexing::Row => {
                rows::rows_of(l, ext, self.threads, self.wave).map(|(rl, _)| rl) == Some(lb)
            }
            Indexing::Column => cols::cols_of(l, ext, self.threads) == Some(lb),
            Indexing::Other => false,
        }
    }
}

/// How an element access is indexed relative to the `parallel` loop around it: the one
/// classification that the layout pass lays register buffers out by and this pass checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Indexing {
    /// By the loop's variables, to a buffer of the loop's shape (owner-only).
    Owner,
    /// A read by the loop's leading variables, to a buffer of their extents (a row
    /// broadcast, `m[i]` in a loop over `(i, j)`).
    Row,
    /// A read by the loop's last variable, to a `(W,)` buffer of its extent (a column
    /// broadcast, `w[j]`).
    Column,
    /// Anything else (and no access outside `parallel` loops is any of these).
    Other,
}

/// How access `a` (a read unless `read` is false: a store's own access), to a buffer of
/// `shape`, is indexed relative to the enclosing `parallel` loop's variables `vars` over
/// extents `ext`.
pub(crate) fn indexing(
    shape: &[usize],
    a: &Access,
    read: bool,
    vars: &[VarId],
    ext: &[usize],
) -> Indexing {
    let by = |vars: &[VarId]| {
        a.index.len() == vars.len()
            && a.index
                .iter()
                .zip(vars)
                .all(|(i, v)| matches!(i.kind, ExprKind::Var(x) if x == *v))
    };
    let r = a.index.len();
    if shape == ext && by(vars) {
        Indexing::Owner
    } else if read && r + 1 == vars.len() && shape == &ext[..r] && by(&vars[..r]) {
        Indexing::Row
    } else if read
        && r == 1
        && vars.len() >= 2
        && shape == &ext[ext.len() - 1..]
        && by(&vars[vars.len() - 1..])
    {
        Indexing::Column
    } else {
        Indexing::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 36's kernel: `cv_t` a column broadcast in the first loop, a row broadcast in the
    /// second.
    const ISSUE_36: &str = r#"
        #[tile_kernel(grid = [N.div_ceil(BN), M.div_ceil(BM)], threads = 256, configs = [c0(BM = 4, BN = 64)])]
        pub fn k<const BM: usize, const BN: usize>(
            a: &Tensor<f16, (M, N)>, cv: &Tensor<f32, (N,)>, o: &mut Tensor<f16, (N, M)>,
        ) {
            let row0 = block_idx(1) * BM;
            let col0 = block_idx(0) * BN;
            let mut a_t = alloc_shared::<f16, (BM, BN)>();
            let mut cv_t = alloc_shared::<f32, (BN,)>();
            let mut t_f = alloc_fragment::<f32, (BM, BN)>();
            let mut o_f = alloc_fragment::<f32, (BN, BM)>();
            copy(a.at((row0, col0)), &mut a_t);
            copy(cv.at((col0,)), &mut cv_t);
            for (i, j) in parallel(BM, BN) {
                t_f[(i, j)] = (a_t[(i, j)] as f32) + cv_t[j];
            }
            for (j, i) in parallel(BN, BM) {
                o_f[(j, i)] = cv_t[j];
            }
            copy(&o_f, o.at_mut((col0, row0)));
        }
    "#;

    fn kernel(src: &str) -> Kernel {
        let file = syn::parse_file(src).unwrap();
        let syn::Item::Fn(mut f) = file.items.into_iter().next().unwrap() else {
            panic!("a function")
        };
        let attr = f.attrs.remove(0);
        let syn::Meta::List(list) = attr.meta else {
            panic!("attribute list")
        };
        crate::compile(list.tokens, quote::ToTokens::into_token_stream(f)).unwrap()
    }

    /// The check finds the column layout the passes used to give `cv_t` (the wrong result of
    /// issue 36) and the row layout alike, each at one access; the plan as made now has
    /// nothing to find.
    #[test]
    fn the_column_layout_does_not_serve_a_row_broadcast() {
        let k = kernel(ISSUE_36);
        let target = crate::target::Target::by_arch("sm_90").unwrap();
        let p = crate::lower::plan(&k, 0, &target).unwrap();
        let cv_t = k.buffers.iter().position(|b| b.name == "cv_t").unwrap();
        assert!(matches!(p.storage[cv_t], Storage::Shared { .. }));
        let check = |storage: &[Storage]| {
            let layout_of = |b: BufId| match storage[b] {
                Storage::Reg { layout, .. } => Some(layout),
                _ => None,
            };
            let loop_layout = |s: &Stmt| p.loops[&p.inst.ids.stmt(s)].layout;
            unserved(&p.inst, p.threads, 32, &layout_of, &loop_layout)
        };
        assert!(check(&p.storage).is_empty());
        let mut wrong = p.storage.clone();
        wrong[cv_t] = Storage::Reg {
            layout: cols::cols_of(Layout::Strided, &[4, 64], 256).unwrap(),
            nreg: 1,
        };
        let found = check(&wrong);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, cv_t);
        // And the row layout the second loop wants does not serve the first loop's column read.
        wrong[cv_t] = Storage::Reg {
            layout: rows::rows_of(Layout::Strided, &[64, 4], 256, 32).unwrap().0,
            nreg: 1,
        };
        let found = check(&wrong);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, cv_t);
    }
}
