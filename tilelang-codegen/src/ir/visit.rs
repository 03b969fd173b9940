//! Walks over the IR: statements depth first, an expression's subexpressions, a statement's
//! element accesses and the buffers it names. A leaf: the validator, the CPU emitter and every
//! lowering pass read the IR through these.

use super::*;
use std::collections::BTreeSet;

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
