//! Walks over the IR: statements depth first, an expression's subexpressions, a statement's
//! element accesses and the buffers it names. A leaf: the validator, the CPU emitter and every
//! lowering pass read the IR through these.

use super::*;
use std::collections::{BTreeSet, HashMap};

/// Visits every statement, depth first.
pub fn walk<'k>(stmts: &'k [Stmt], f: &mut impl FnMut(&'k Stmt)) {
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

/// A `parallel` loop statement with its parts, as [`walk_parallel`] passes it.
#[derive(Debug, Clone, Copy)]
pub struct Parallel<'k> {
    pub stmt: &'k Stmt,
    pub vars: &'k [VarId],
    pub extents: &'k [Expr],
    pub body: &'k [Stmt],
}

/// Visits every statement depth first, like [`walk`], with what `enter` made of the innermost
/// `parallel` loop around it: `None` outside parallel loops, and a parallel loop statement
/// itself gets the loop around it. `enter` runs once per parallel loop, before its body: the
/// passes that judge an access by the loop it runs in (its variables, extents, layout)
/// compute that there once.
pub fn walk_parallel<'k, C>(
    stmts: &'k [Stmt],
    enter: &mut impl FnMut(Parallel<'k>) -> C,
    f: &mut impl FnMut(&'k Stmt, Option<&C>),
) {
    fn go<'k, C>(
        stmts: &'k [Stmt],
        around: Option<&C>,
        enter: &mut impl FnMut(Parallel<'k>) -> C,
        f: &mut impl FnMut(&'k Stmt, Option<&C>),
    ) {
        for s in stmts {
            f(s, around);
            match &s.kind {
                StmtKind::For {
                    kind: LoopKind::Parallel { extents },
                    vars,
                    body,
                } => {
                    let c = enter(Parallel {
                        stmt: s,
                        vars,
                        extents,
                        body,
                    });
                    go(body, Some(&c), enter, f);
                }
                StmtKind::For { body, .. } => go(body, around, enter, f),
                StmtKind::If { then, els, .. } => {
                    go(then, around, enter, f);
                    go(els, around, enter, f);
                }
                _ => {}
            }
        }
    }
    go(stmts, None, enter, f)
}

pub fn each_expr<'k>(e: &'k Expr, f: &mut impl FnMut(&'k Expr)) {
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

/// Calls `f` on each expression written directly in `s` (not inside nested statements): an
/// initialiser or value, a store's indices, a condition, a loop's bounds, a region's offsets.
/// Their subexpressions are [`each_expr`]'s.
pub fn each_stmt_expr<'k>(s: &'k Stmt, f: &mut impl FnMut(&'k Expr)) {
    match &s.kind {
        StmtKind::Let { init, .. } => f(init),
        StmtKind::Assign { value, .. } => f(value),
        StmtKind::Store { access, value } | StmtKind::AtomicAdd { access, value } => {
            access.index.iter().for_each(&mut *f);
            f(value);
        }
        StmtKind::If { cond, .. } => f(cond),
        StmtKind::For { kind, .. } => match kind {
            LoopKind::Parallel { extents } => extents.iter().for_each(f),
            LoopKind::Serial { start, end } => {
                f(start);
                f(end);
            }
            LoopKind::Pipelined { extent, stages } => {
                f(extent);
                f(stages);
            }
        },
        StmtKind::Copy { src, dst } => {
            for t in [src, dst] {
                if let Tile::Region { offsets, .. } = t {
                    offsets.iter().for_each(&mut *f);
                }
            }
        }
        StmtKind::Fill { value, .. } => f(value),
        _ => {}
    }
}

/// The element access `s` writes: a store's or an atomic add's own access (`None` for other
/// statements; nested statements are not looked into).
pub fn stored_access(s: &Stmt) -> Option<&Access> {
    match &s.kind {
        StmtKind::Store { access, .. } | StmtKind::AtomicAdd { access, .. } => Some(access),
        _ => None,
    }
}

/// Calls `f` on each load made directly by `s` (not inside nested statements), in
/// [`each_stmt_expr`]'s order: every element access but [`stored_access`].
pub fn for_each_load(s: &Stmt, f: &mut impl FnMut(&Access)) {
    each_stmt_expr(s, &mut |e| {
        each_expr(e, &mut |x| {
            if let ExprKind::Load(a) = &x.kind {
                f(a)
            }
        })
    });
}

/// Calls `f` on each element access made directly by `s` (not inside nested statements): its
/// [`stored_access`] first, then its loads ([`for_each_load`]).
pub fn for_each_access(s: &Stmt, f: &mut impl FnMut(&Access)) {
    if let Some(a) = stored_access(s) {
        f(a);
    }
    for_each_load(s, f);
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
        StmtKind::Gemm { a, b, c, .. } => [*a, *b, *c].into_iter().for_each(f),
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

/// An expression's identity within one kernel: its place among the expressions and
/// subexpressions that [`each_stmt_expr`] and [`each_expr`] pass, statement by statement in
/// [`walk`]'s order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ExprId(pub usize);

/// The ids of one kernel's statements, accesses and expressions, numbered once in one walk.
///
/// A statement, an access or an expression is looked up by its address, which is fixed while
/// the kernel is borrowed (`'k`): the ids themselves say nothing of memory, so what is keyed
/// by them iterates in program order. Looking up one that is not the kernel's own (a copy of
/// one, say) is a bug, and panics: a decision that names an expression records its id.
#[derive(Debug)]
pub struct Ids<'k> {
    stmts: HashMap<*const Stmt, StmtId>,
    accesses: HashMap<*const Access, AccessId>,
    exprs: HashMap<*const Expr, ExprId>,
    by_id: Vec<&'k Expr>,
}

impl<'k> Ids<'k> {
    /// Numbers the statements, accesses and expressions of `body` (a kernel's body).
    pub fn number(body: &'k [Stmt]) -> Ids<'k> {
        let (mut stmts, mut accesses, mut exprs) = (HashMap::new(), HashMap::new(), HashMap::new());
        let mut by_id = Vec::new();
        walk(body, &mut |s| {
            stmts.insert(std::ptr::from_ref(s), StmtId(stmts.len()));
            for_each_access(s, &mut |a| {
                let id = AccessId(accesses.len());
                accesses.entry(std::ptr::from_ref(a)).or_insert(id);
            });
            each_stmt_expr(s, &mut |e| {
                each_expr(e, &mut |x| {
                    exprs.insert(std::ptr::from_ref(x), ExprId(by_id.len()));
                    by_id.push(x);
                })
            });
        });
        Ids {
            stmts,
            accesses,
            exprs,
            by_id,
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

    /// The id of `e`, an expression (or a subexpression) of a statement of the numbered body.
    pub fn expr(&self, e: &Expr) -> ExprId {
        *self
            .exprs
            .get(&std::ptr::from_ref(e))
            .expect("an expression of the numbered kernel")
    }

    /// The expression numbered `id`, for a decision that names one (a condition the
    /// vectoriser checks per chunk, say) to be printed as written.
    pub fn expr_at(&self, id: ExprId) -> &'k Expr {
        self.by_id[id.0]
    }
}

/// Whether two integer expressions are the same expression (spans aside): a shape's dimensions
/// named alike, an index written alike.
pub fn same(a: &Expr, b: &Expr) -> bool {
    match (&a.kind, &b.kind) {
        (ExprKind::Int(x), ExprKind::Int(y)) => x == y,
        (ExprKind::Const(x), ExprKind::Const(y)) => x == y,
        (ExprKind::Sym(x), ExprKind::Sym(y)) => x == y,
        (ExprKind::Var(x), ExprKind::Var(y)) => x == y,
        (ExprKind::BlockIdx(x), ExprKind::BlockIdx(y)) => x == y,
        (ExprKind::Binary(o, x1, y1), ExprKind::Binary(q, x2, y2)) => {
            o == q && same(x1, x2) && same(y1, y2)
        }
        (ExprKind::Cast(x), ExprKind::Cast(y)) => a.ty == b.ty && same(x, y),
        _ => false,
    }
}
