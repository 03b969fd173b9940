//! Walks over the IR: statements depth first, an expression's subexpressions, a statement's
//! element accesses and the buffers it names. A leaf: the validator, the CPU emitter and every
//! lowering pass read the IR through these.

use super::*;
use std::collections::{BTreeSet, HashMap};

/// Visits every statement, depth first.
pub fn walk(stmts: &[Stmt], f: &mut impl FnMut(&Stmt)) {
    for s in stmts {
        f(s);
        match &s.kind {
            StmtKind::For { body, .. } => walk(body, f),
            StmtKind::If { then, els, .. } => {
                walk(then, f);
                walk(els, f);
            }
            _ => {}
        }
    }
}

pub fn each_expr(e: &Expr, f: &mut impl FnMut(&Expr)) {
    f(e);
    match &e.kind {
        ExprKind::Load(a) => a.index.iter().for_each(|i| each_expr(i, f)),
        ExprKind::Binary(_, a, b) | ExprKind::DivCeil(a, b) => {
            each_expr(a, f);
            each_expr(b, f);
        }
        ExprKind::Unary(_, a) | ExprKind::Cast(a) => each_expr(a, f),
        ExprKind::Math(_, args) => args.iter().for_each(|a| each_expr(a, f)),
        ExprKind::Select(c, a, b) => {
            each_expr(c, f);
            each_expr(a, f);
            each_expr(b, f);
        }
        _ => {}
    }
}

/// Variables an expression reads.
pub fn expr_vars(e: &Expr, out: &mut BTreeSet<VarId>) {
    each_expr(e, &mut |x| {
        if let ExprKind::Var(v) = x.kind {
            out.insert(v);
        }
    });
}

/// Calls `f` on each element access made directly by `s` (not inside nested statements).
pub fn for_each_access(s: &Stmt, f: &mut impl FnMut(&Access)) {
    fn expr(e: &Expr, f: &mut impl FnMut(&Access)) {
        each_expr(e, &mut |x| {
            if let ExprKind::Load(a) = &x.kind {
                f(a)
            }
        });
    }
    match &s.kind {
        StmtKind::Let { init, .. } => expr(init, f),
        StmtKind::Assign { value, .. } => expr(value, f),
        StmtKind::Store { access, value } | StmtKind::AtomicAdd { access, value } => {
            f(access);
            access.index.iter().for_each(|i| expr(i, f));
            expr(value, f);
        }
        StmtKind::If { cond, .. } => expr(cond, f),
        StmtKind::For { kind, .. } => match kind {
            LoopKind::Parallel { extents } => extents.iter().for_each(|e| expr(e, f)),
            LoopKind::Serial { start, end } => {
                expr(start, f);
                expr(end, f);
            }
            LoopKind::Pipelined { extent, stages } => {
                expr(extent, f);
                expr(stages, f);
            }
        },
        StmtKind::Copy { src, dst } => {
            for t in [src, dst] {
                if let Tile::Region { offsets, .. } = t {
                    offsets.iter().for_each(|o| expr(o, f));
                }
            }
        }
        StmtKind::Fill { value, .. } => expr(value, f),
        _ => {}
    }
}

pub fn each_buffer(s: &Stmt, f: &mut impl FnMut(BufId)) {
    for_each_access(s, &mut |a| {
        if let Target::Buffer(b) = a.target {
            f(b)
        }
    });
    match &s.kind {
        StmtKind::Copy { src, dst } => {
            for t in [src, dst] {
                if let Tile::Buffer(b) = t {
                    f(*b)
                }
            }
        }
        StmtKind::Gemm { a, b, c } => [*a, *b, *c].into_iter().for_each(f),
        StmtKind::Fill { buf, .. } => f(*buf),
        StmtKind::Reduce { src, dst, .. } => [*src, *dst].into_iter().for_each(f),
        _ => {}
    }
}

/// A statement's identity within one kernel: its place in a depth-first walk of the body
/// ([`walk`]'s order), so decisions recorded per statement list in program order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StmtId(pub usize);

/// An element access's identity within one kernel: its place among the accesses that
/// [`for_each_access`] passes, statement by statement in [`walk`]'s order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AccessId(pub usize);

/// The ids of one kernel's statements and accesses, numbered once in one walk.
///
/// A statement or an access is looked up by its address, which is fixed while the kernel is
/// borrowed (`'k`): the ids themselves say nothing of memory, so what is keyed by them
/// iterates in program order. Looking up a statement or an access that is not the kernel's
/// own (a copy of one, say) is a bug, and panics.
#[derive(Debug)]
pub struct Ids<'k> {
    stmts: HashMap<*const Stmt, StmtId>,
    accesses: HashMap<*const Access, AccessId>,
    kernel: std::marker::PhantomData<&'k [Stmt]>,
}

impl<'k> Ids<'k> {
    /// Numbers the statements and accesses of `body` (a kernel's body).
    pub fn number(body: &'k [Stmt]) -> Ids<'k> {
        let (mut stmts, mut accesses) = (HashMap::new(), HashMap::new());
        walk(body, &mut |s| {
            stmts.insert(std::ptr::from_ref(s), StmtId(stmts.len()));
            for_each_access(s, &mut |a| {
                let id = AccessId(accesses.len());
                accesses.entry(std::ptr::from_ref(a)).or_insert(id);
            });
        });
        Ids {
            stmts,
            accesses,
            kernel: std::marker::PhantomData,
        }
    }

    /// The id of `s`, a statement of the numbered body.
    pub fn stmt(&self, s: &Stmt) -> StmtId {
        *self
            .stmts
            .get(&std::ptr::from_ref(s))
            .expect("a statement of the numbered kernel")
    }

    /// The id of `a`, an access of a statement of the numbered body.
    pub fn access(&self, a: &Access) -> AccessId {
        *self
            .accesses
            .get(&std::ptr::from_ref(a))
            .expect("an access of the numbered kernel")
    }
}
