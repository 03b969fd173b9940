//! Expressions, and the 32-bit form of a tail guard on a tile coordinate.

use super::emitter::*;
use crate::ir::*;
use crate::lower::guards::terms;
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
                    cmp => match self.p.guards.get(&self.p.inst.ids.expr(e)) {
                        Some(&at) => self.coordinate_guard(*cmp, a, b, at),
                        None => format!("(tl::cmpv({x}) {} tl::cmpv({y}))", cmp.symbol()),
                    },
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

    /// A tail guard on a tile coordinate ([`crate::lower::guards`]) `c + j < n`, the
    /// coordinate `j` the `at`-th summand on the left, as the 32-bit `j < clamp32(n - c)`.
    fn coordinate_guard(&self, op: BinOp, a: &Expr, b: &Expr, at: usize) -> String {
        let mut ts = terms(a);
        let j = ts.remove(at);
        let mut bound = self.expr(b);
        for t in ts {
            bound = format!("tl::sub<tl::index>({bound}, {})", self.expr(t));
        }
        format!(
            "(((int){}) {} tl::clamp32({bound}))",
            self.expr(j),
            op.symbol()
        )
    }
}
