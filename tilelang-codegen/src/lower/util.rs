//! What the passes share: parameters' types, and the values of index expressions (shapes
//! and extents are [`super::instance::Instance`]'s).

use crate::ir::*;

pub(crate) fn tensor_dtype(k: &Kernel, p: ParamId) -> Dtype {
    match k.params[p].kind {
        ParamKind::Tensor { dtype, .. } | ParamKind::Scalar { dtype } => dtype,
    }
}

/// A tensor the kernel cannot write (a `&Tensor` parameter; the launcher refuses outputs that
/// overlap it): loads may take the read-only path.
pub(crate) fn read_only(k: &Kernel, p: ParamId) -> bool {
    matches!(k.params[p].kind, ParamKind::Tensor { mutable: false, .. })
}

pub(crate) fn load_buf(s: &Stmt) -> BufId {
    match &s.kind {
        StmtKind::Copy {
            dst: Tile::Buffer(b),
            ..
        } => *b,
        _ => unreachable!("pipeline_loads checked the statement"),
    }
}

/// An integer index expression with the loop's variables bound (`None` for anything else: a
/// load, another variable, a symbol).
pub(crate) fn eval_at(e: &Expr, vals: &[u64], vars: &[VarId], bind: &[i128]) -> Option<i128> {
    let go = |x: &Expr| eval_at(x, vals, vars, bind);
    match &e.kind {
        ExprKind::Var(v) => vars.iter().position(|x| x == v).map(|i| bind[i]),
        ExprKind::Cast(x) if e.ty.is_int() && x.ty.is_int() => go(x),
        ExprKind::Binary(op, x, y) if e.ty.is_int() => {
            let (x, y) = (go(x)?, go(y)?);
            match op {
                BinOp::Add => x.checked_add(y),
                BinOp::Sub => x.checked_sub(y),
                BinOp::Mul => x.checked_mul(y),
                BinOp::Div => x.checked_div(y),
                BinOp::Rem => x.checked_rem(y),
                _ => None,
            }
        }
        _ => eval_const(e, vals),
    }
}

/// The values an integer expression can take, when a few rules bound them: constants, a `u8`
/// anywhere (0..=255), `x & m` for a constant `m >= 0` (0..=m in two's complement whatever
/// `x`), a right shift of a non-negative range by a constant, sums, differences and products,
/// integer casts. A range the expression's type does not hold (a wrap) says nothing, but a
/// `u8`'s values are 0..=255 whatever. `None` when unbounded by these rules.
pub(crate) fn int_range(e: &Expr, vals: &[u64]) -> Option<(i128, i128)> {
    int_range_in(e, vals, &[])
}

/// [`int_range`], with the variables of `env` in their ranges (the innermost binding of a
/// variable last): loop variables, say.
pub(crate) fn int_range_in(
    e: &Expr,
    vals: &[u64],
    env: &[(VarId, (i128, i128))],
) -> Option<(i128, i128)> {
    if let Some(v) = eval_const(e, vals) {
        return Some((v, v));
    }
    let of = |x: &Expr| int_range_in(x, vals, env);
    let r = match &e.kind {
        ExprKind::Var(v) => env.iter().rev().find(|(w, _)| w == v).map(|(_, r)| *r),
        ExprKind::Binary(BinOp::BitAnd, x, y) => match (eval_const(y, vals), eval_const(x, vals)) {
            (Some(m), _) | (None, Some(m)) if m >= 0 => Some((0, m)),
            _ => None,
        },
        ExprKind::Binary(BinOp::Shr, x, y) => match (of(x), eval_const(y, vals)) {
            (Some((lo, hi)), Some(k)) if lo >= 0 && hi < 1 << 31 && (0..31).contains(&k) => {
                Some((lo >> k, hi >> k))
            }
            _ => None,
        },
        ExprKind::Binary(BinOp::Add, x, y) => {
            let ((a, b), (c, d)) = (of(x)?, of(y)?);
            Some((a.checked_add(c)?, b.checked_add(d)?))
        }
        ExprKind::Binary(BinOp::Sub, x, y) => {
            let ((a, b), (c, d)) = (of(x)?, of(y)?);
            Some((a.checked_sub(d)?, b.checked_sub(c)?))
        }
        ExprKind::Binary(BinOp::Mul, x, y) => {
            let ((a, b), (c, d)) = (of(x)?, of(y)?);
            let p = [
                a.checked_mul(c)?,
                a.checked_mul(d)?,
                b.checked_mul(c)?,
                b.checked_mul(d)?,
            ];
            Some((*p.iter().min()?, *p.iter().max()?))
        }
        ExprKind::Cast(x) if x.ty.is_int() => of(x),
        _ => None,
    };
    // Sums and differences are exact modulo 2^bits, so a range the type holds is the values;
    // one it does not hold (a wrap, or a cast that reinterprets: -8 as a `u32`) is not.
    match r {
        Some((lo, hi)) if int_in(lo, e.ty).is_some() && int_in(hi, e.ty).is_some() => r,
        _ if e.ty == Dtype::U8 => Some((0, 255)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proc_macro2::Span;

    fn ex(kind: ExprKind, ty: Dtype) -> Expr {
        Expr {
            kind,
            ty,
            span: Span::call_site().into(),
        }
    }
    fn bin(op: BinOp, x: Expr, y: Expr) -> Expr {
        let ty = x.ty;
        ex(ExprKind::Binary(op, Box::new(x), Box::new(y)), ty)
    }
    fn cast(x: Expr, ty: Dtype) -> Expr {
        ex(ExprKind::Cast(Box::new(x)), ty)
    }
    fn int(v: i128, ty: Dtype) -> Expr {
        ex(ExprKind::Int(v), ty)
    }

    #[test]
    fn ranges_of_unpacked_nibbles_and_of_wraps() {
        let p = ex(ExprKind::Scalar(0), Dtype::U8);
        assert_eq!(int_range(&p, &[]), Some((0, 255)));
        // W4A16's high nibble: (((p >> 4) & 15) as i32) - 8.
        let hi = bin(BinOp::Shr, p.clone(), int(4, Dtype::U8));
        assert_eq!(int_range(&hi, &[]), Some((0, 15)));
        let hi = bin(BinOp::BitAnd, hi, int(15, Dtype::U8));
        let w = bin(BinOp::Sub, cast(hi, Dtype::I32), int(8, Dtype::I32));
        assert_eq!(int_range(&w, &[]), Some((-8, 7)));
        // -8..=7 as a u32 is 0..=7 and 2^32-8..: unknown here, and so through a cast back.
        let u = cast(w.clone(), Dtype::U32);
        assert_eq!(int_range(&u, &[]), None);
        assert_eq!(int_range(&cast(u, Dtype::I32), &[]), None);
        // A u8 sum past 255 wraps: only 0..=255 is known.
        let s = bin(BinOp::Add, p.clone(), int(200, Dtype::U8));
        assert_eq!(int_range(&s, &[]), Some((0, 255)));
        // An i32 scalar is unbounded.
        assert_eq!(int_range(&ex(ExprKind::Scalar(1), Dtype::I32), &[]), None);
    }

    #[test]
    fn ranges_of_loop_variables() {
        let (j, k) = (
            ex(ExprKind::Var(0), Dtype::Index),
            ex(ExprKind::Var(1), Dtype::Index),
        );
        let env = [(0, (0, 63)), (1, (-3, 3)), (0, (0, 31))];
        // The innermost binding of `j` counts: `j + 2` in 2..=33, `2j - k` in -3..=65.
        let at = bin(BinOp::Add, j.clone(), int(2, Dtype::Index));
        assert_eq!(int_range_in(&at, &[], &env), Some((2, 33)));
        let lin = bin(
            BinOp::Sub,
            bin(BinOp::Mul, int(2, Dtype::Index), j.clone()),
            k.clone(),
        );
        assert_eq!(int_range_in(&lin, &[], &env), Some((-3, 65)));
        assert_eq!(
            int_range_in(&bin(BinOp::Mul, k.clone(), k), &[], &env),
            Some((-9, 9))
        );
        // Unbound: no range, as without an environment.
        assert_eq!(int_range_in(&at, &[], &[]), None);
        assert_eq!(int_range(&at, &[]), None);
        // A product past i32 is a wrap in an i32.
        let big = ex(ExprKind::Var(2), Dtype::I32);
        let sq = bin(BinOp::Mul, big.clone(), big);
        assert_eq!(int_range_in(&sq, &[], &[(2, (0, 1 << 20))]), None);
    }
}
