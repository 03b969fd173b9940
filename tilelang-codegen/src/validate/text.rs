//! The source text of attribute expressions (`requires` conditions), for the errors a launch
//! reports.

use crate::ast;

/// Source text of an attribute expression, for error messages at launch.
pub(super) fn expr_text(e: &ast::Expr) -> String {
    use ast::ExprKind as K;
    match &e.kind {
        K::Int(v, _) => v.to_string(),
        K::Float(v, _) => v.to_string(),
        K::Bool(b) => b.to_string(),
        K::Var(id) => id.to_string(),
        K::Binary(op, a, b) => {
            let p = precedence(e);
            format!(
                "{} {} {}",
                expr_text_in(a, p, false),
                op.symbol(),
                expr_text_in(b, p, true)
            )
        }
        K::Unary(ast::UnOp::Neg, a) => format!("-{}", expr_text_in(a, 11, false)),
        K::Unary(ast::UnOp::Not, a) => format!("!{}", expr_text_in(a, 11, false)),
        K::Cast(a, t) => format!("{} as {}", expr_text_in(a, 10, false), t),
        K::Call(f, args) => format!(
            "{}({})",
            f,
            args.iter().map(expr_text).collect::<Vec<_>>().join(", ")
        ),
        K::DivCeil(a, b) => format!("{}.div_ceil({})", expr_text_in(a, 12, false), expr_text(b)),
        _ => "..".to_string(),
    }
}

/// Rust's binding strength of an operator (higher binds tighter).
fn precedence(e: &ast::Expr) -> u8 {
    use ast::BinOp::*;
    match &e.kind {
        ast::ExprKind::Binary(op, ..) => match op {
            Or => 1,
            And => 2,
            Eq | Ne | Lt | Le | Gt | Ge => 3,
            BitOr => 4,
            BitXor => 5,
            BitAnd => 6,
            Shl | Shr => 7,
            Add | Sub => 8,
            Mul | Div | Rem => 9,
        },
        ast::ExprKind::Cast(..) => 10,
        ast::ExprKind::Unary(..) => 11,
        _ => 12,
    }
}

/// The text of a child of `parent`, parenthesised only where Rust would need it.
fn expr_text_in(e: &ast::Expr, parent: u8, right: bool) -> String {
    let p = precedence(e);
    if p < parent || (right && p == parent && p < 10) {
        format!("({})", expr_text(e))
    } else {
        expr_text(e)
    }
}
