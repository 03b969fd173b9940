//! How an index moves: the change of an integer expression when one loop variable grows by one,
//! when the expression is affine in it (`c + v·s` with `s` a constant and `c` not moving). The
//! one analysis behind every pass that asks it: `interior` (how far a copy's region moves per
//! iteration of a sequential loop) and `vectorize` (how an access moves from one lane of a
//! chunk to the next). What differs between them is what they know of the other variables and
//! of memory, which [`Affine`] takes as data.

use crate::ir::*;

/// What the analysis knows of a variable.
pub(crate) enum Var<'e> {
    /// The variable that grows by one.
    Moves,
    /// The same value throughout.
    Fixed,
    /// A value that may change in ways the analysis cannot follow (assigned in the loop).
    Varies,
    /// A `let` whose value is this expression.
    Is(&'e Expr),
}

/// The question's context: the config's values, what each variable is, and whether a load at
/// an index that does not move reads one value (true within one chunk of lanes, not across the
/// iterations of a loop that may write memory), and whether an integer cast to the index type
/// keeps its operand's movement (true for the small values of one chunk).
pub(crate) struct Affine<'a, F: Fn(VarId) -> Var<'a>> {
    pub vals: &'a [u64],
    pub var: F,
    pub loads_fixed: bool,
    pub casts: bool,
}

impl<'a, F: Fn(VarId) -> Var<'a>> Affine<'a, F> {
    /// How much `e` grows when the moving variable grows by one (`Some(0)`: not at all);
    /// `None` when it is not affine in it or depends on something that varies.
    pub(crate) fn step(&self, e: &Expr) -> Option<i128> {
        let fixed = |xs: &[&Expr]| -> Option<i128> {
            for x in xs {
                if self.step(x)? != 0 {
                    return None;
                }
            }
            Some(0)
        };
        match &e.kind {
            ExprKind::Var(v) => match (self.var)(*v) {
                Var::Moves => Some(1),
                Var::Fixed => Some(0),
                Var::Varies => None,
                Var::Is(init) => self.step(init),
            },
            ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Bool(_)
            | ExprKind::Const(_)
            | ExprKind::Sym(_)
            | ExprKind::Scalar(_)
            | ExprKind::BlockIdx(_) => Some(0),
            ExprKind::Binary(BinOp::Add, a, b) if e.ty.is_int() => {
                self.step(a)?.checked_add(self.step(b)?)
            }
            ExprKind::Binary(BinOp::Sub, a, b) if e.ty.is_int() => {
                self.step(a)?.checked_sub(self.step(b)?)
            }
            ExprKind::Binary(BinOp::Mul, a, b) if e.ty.is_int() => {
                match (self.step(a)?, self.step(b)?) {
                    (0, 0) => Some(0),
                    (s, 0) => eval_const(b, self.vals)?.checked_mul(s),
                    (0, s) => eval_const(a, self.vals)?.checked_mul(s),
                    _ => None,
                }
            }
            ExprKind::Cast(a) if self.casts && e.ty == Dtype::Index && a.ty.is_int() => {
                self.step(a)
            }
            ExprKind::Load(a) if self.loads_fixed => fixed(&a.index.iter().collect::<Vec<_>>()),
            ExprKind::Load(_) => None,
            ExprKind::Binary(_, a, b) | ExprKind::DivCeil(a, b) => fixed(&[a, b]),
            ExprKind::Unary(_, a) | ExprKind::Cast(a) => fixed(&[a]),
            ExprKind::Math(_, args) => fixed(&args.iter().collect::<Vec<_>>()),
            ExprKind::Select(c, a, b) => fixed(&[c, a, b]),
        }
    }
}
