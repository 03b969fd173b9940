//! Expressions, and the 32-bit form of a tail guard on a tile coordinate.

use super::emitter::*;
use crate::ir::visit::*;
use crate::ir::*;
use crate::lower::names::*;
use crate::lower::util::*;

impl Emitter<'_> {
    pub(super) fn expr(&self, e: &Expr) -> String {
        let t = ctype(e.ty);
        match &e.kind {
            ExprKind::Int(v) => match e.ty {
                Dtype::Bool => (*v != 0).to_string(),
                d if d.is_float() => format!("tl::lit<{t}>({v}.0)"),
                _ => format!(
                    "(({t}){v}{})",
                    if *v > i32::MAX as i128 || *v < i32::MIN as i128 {
                        "ll"
                    } else {
                        ""
                    }
                ),
            },
            ExprKind::Float(v) => {
                // GCC builtins, which nvcc, hipcc and clang all accept in device code.
                let lit = if v.is_finite() {
                    format!("{v:?}")
                } else if v.is_nan() {
                    "__builtin_nan(\"\")".into()
                } else if *v > 0.0 {
                    "__builtin_huge_val()".into()
                } else {
                    "-__builtin_huge_val()".into()
                };
                format!("tl::lit<{t}>({lit})")
            }
            ExprKind::Bool(b) => b.to_string(),
            ExprKind::Const(i) => self.konst(*i),
            ExprKind::Sym(i) => self.sym(*i),
            ExprKind::Scalar(p) => self.scalar(*p),
            ExprKind::Var(v) => self.lane_var(*v).unwrap_or_else(|| self.var(*v)),
            ExprKind::BlockIdx(d) if self.persistent => {
                ["__bx", "__by", "__bz"][*d as usize].into()
            }
            ExprKind::BlockIdx(d) => ["TL_BID_X", "TL_BID_Y", "TL_BID_Z"][*d as usize].to_string(),
            ExprKind::Load(a) => self.lane_load(a).unwrap_or_else(|| self.place(a)),
            ExprKind::Binary(op, a, b) => {
                let (x, y) = (self.expr(a), self.expr(b));
                let ot = ctype(a.ty);
                match op {
                    BinOp::Add => format!("tl::add<{ot}>({x}, {y})"),
                    BinOp::Sub => format!("tl::sub<{ot}>({x}, {y})"),
                    BinOp::Mul => format!("tl::mul<{ot}>({x}, {y})"),
                    BinOp::Div => format!("tl::div<{ot}>({x}, {y})"),
                    BinOp::Rem => format!("tl::rem<{ot}>({x}, {y})"),
                    BinOp::Shl => format!("tl::shl<{ot}>({x}, {y})"),
                    BinOp::Shr => format!("tl::shr<{ot}>({x}, {y})"),
                    BinOp::BitAnd => format!("(({ot})({x} & {y}))"),
                    BinOp::BitOr => format!("(({ot})({x} | {y}))"),
                    BinOp::BitXor => format!("(({ot})({x} ^ {y}))"),
                    BinOp::And => format!("({x} && {y})"),
                    BinOp::Or => format!("({x} || {y})"),
                    cmp => self.coord_compare(*cmp, a, b).unwrap_or_else(|| {
                        format!("(tl::cmpv({x}) {} tl::cmpv({y}))", cmp.symbol())
                    }),
                }
            }
            ExprKind::Unary(UnOp::Neg, a) => format!("tl::neg<{t}>({})", self.expr(a)),
            ExprKind::Unary(UnOp::Not, a) if a.ty == Dtype::Bool => format!("(!{})", self.expr(a)),
            ExprKind::Unary(UnOp::Not, a) => format!("(({t})(~{}))", self.expr(a)),
            // An integer of at most 1024 values, down to -1024, as a half: exact through its
            // bits (tl.h), without the two conversions.
            ExprKind::Cast(a) if e.ty == Dtype::F16 && a.ty.is_int() && a.ty != Dtype::Bool => {
                match int_range(a, self.inst.vals) {
                    Some((lo, hi)) if lo.min(0) >= -1024 && hi - lo.min(0) < 1024 => format!(
                        "tl::small_int_to_half<{}>((int)({}))",
                        lo.min(0),
                        self.expr(a)
                    ),
                    _ => format!("tl::cast<{t}, {}>({})", ctype(a.ty), self.expr(a)),
                }
            }
            ExprKind::Cast(a) => format!("tl::cast<{t}, {}>({})", ctype(a.ty), self.expr(a)),
            ExprKind::Math(f, args) => {
                let args: Vec<String> = args.iter().map(|a| self.expr(a)).collect();
                format!("tl::{}<{t}>({})", f.name(), args.join(", "))
            }
            ExprKind::Select(c, a, b) => {
                format!("({} ? {} : {})", self.expr(c), self.expr(a), self.expr(b))
            }
            ExprKind::DivCeil(a, b) => {
                format!("tl::div_ceil<{t}>({}, {})", self.expr(a), self.expr(b))
            }
        }
    }

    /// A tail guard `c + j < n` inside a parallel loop, where `j` is one of the loop's
    /// variables (a tile coordinate: non-negative and below its extent) and `c`, `n` do not
    /// change across the loop's iterations, as the 32-bit `j < clamp32(n - c)`. The same value,
    /// but the bound is one register for the whole loop instead of a 64-bit comparison per
    /// element, which ptxas otherwise keeps one threshold per unrolled element for.
    pub(super) fn coord_compare(&self, op: BinOp, a: &Expr, b: &Expr) -> Option<String> {
        let (vars, declared) = self.coords.as_ref()?;
        if !matches!(op, BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge)
            || a.ty != Dtype::Index
            || b.ty != Dtype::Index
        {
            return None;
        }
        fn terms<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
            match &e.kind {
                ExprKind::Binary(BinOp::Add, x, y) if e.ty == Dtype::Index => {
                    terms(x, out);
                    terms(y, out);
                }
                _ => out.push(e),
            }
        }
        let invariant = |e: &Expr| {
            let mut ok = true;
            each_expr(e, &mut |x| match &x.kind {
                ExprKind::Load(_) => ok = false,
                ExprKind::Var(v) if vars.contains(v) || declared.contains(v) => ok = false,
                _ => {}
            });
            ok
        };
        let mut ts = Vec::new();
        terms(a, &mut ts);
        let at = ts
            .iter()
            .position(|t| matches!(t.kind, ExprKind::Var(v) if vars.contains(&v)))?;
        let j = ts.remove(at);
        // (`j < n` alone stays as it is: measured, ptxas then gives the whole-row softmax 100
        // registers instead of 64.)
        if ts.is_empty() || !ts.iter().all(|t| invariant(t)) || !invariant(b) {
            return None;
        }
        let mut bound = self.expr(b);
        for t in ts {
            bound = format!("tl::sub<tl::index>({bound}, {})", self.expr(t));
        }
        Some(format!(
            "(((int){}) {} tl::clamp32({bound}))",
            self.expr(j),
            op.symbol()
        ))
    }
}
