//! Every builtin a kernel may call, in one table: its name, what it is, how many arguments it
//! takes, how a call is written (the hint of a wrong call) and the dtypes it accepts. The
//! checker looks a called name up here and dispatches on what it finds (`tile_ops` for the
//! primitives, `functions` for the functions); the lists of names in hints are read from the
//! table, in its order. A leaf: the checker's modules import it, it imports none of them.

use crate::ast::Dtype;
use crate::ir::MathFn;
use crate::ir::ReduceOp::{self, Max, Sum};
use Dtypes::{Any, Float, Numeric};

/// What a builtin is, and so how a call of it is checked.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Op {
    /// A tile primitive: a statement that works on whole tiles with all the block's threads.
    Primitive(Primitive),
    /// A function: an expression with a value.
    Function(Function),
    /// A loop iterator (`for i in parallel(..)`): the parser reads loop headers, so a call
    /// anywhere else is a mistake.
    Iterator,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Primitive {
    Copy,
    Fill,
    Clear,
    Gemm,
    Reduce(ReduceOp),
    AtomicAdd,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Function {
    Math(MathFn),
    IfThenElse,
    BlockIdx,
}

/// The dtypes a builtin's operands may have.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Dtypes {
    Any,
    /// Every dtype but bool.
    Numeric,
    /// Floating-point dtypes only.
    Float,
}

impl Dtypes {
    pub(super) fn allows(self, ty: Dtype) -> bool {
        match self {
            Dtypes::Any => true,
            Dtypes::Numeric => ty != Dtype::Bool,
            Dtypes::Float => ty.is_float(),
        }
    }
}

pub(super) struct Builtin {
    pub(super) name: &'static str,
    pub(super) op: Op,
    /// The number of arguments; `None` for the loop iterators, whose arguments the parser
    /// reads with the loop header (a call elsewhere is an error before any counting).
    pub(super) arity: Option<usize>,
    /// The arguments as a call writes them, `(src, &mut dst)`.
    pub(super) params: &'static str,
    pub(super) dtypes: Dtypes,
}

impl Builtin {
    /// How a call is written, `copy(src, &mut dst)`: the hint of a call with the wrong number
    /// of arguments.
    pub(super) fn usage(&self) -> String {
        format!("{}{}", self.name, self.params)
    }
}

const fn primitive(
    name: &'static str,
    p: Primitive,
    arity: usize,
    params: &'static str,
    dtypes: Dtypes,
) -> Builtin {
    Builtin {
        name,
        op: Op::Primitive(p),
        arity: Some(arity),
        params,
        dtypes,
    }
}

const fn function(name: &'static str, f: Function, arity: usize, params: &'static str) -> Builtin {
    Builtin {
        name,
        op: Op::Function(f),
        arity: Some(arity),
        params,
        dtypes: Dtypes::Any,
    }
}

/// A math function: its name is the one the backends print (`MathFn::name`).
const fn math(f: MathFn, arity: usize, dtypes: Dtypes) -> Builtin {
    Builtin {
        name: f.name(),
        op: Op::Function(Function::Math(f)),
        arity: Some(arity),
        params: ["()", "(x)", "(a, b)", "(a, b, c)"][arity],
        dtypes,
    }
}

const fn iterator(name: &'static str) -> Builtin {
    Builtin {
        name,
        op: Op::Iterator,
        arity: None,
        params: "(..)",
        dtypes: Dtypes::Any,
    }
}

/// Every builtin: the primitives, then the functions (the math library first, in the order
/// `docs/language.md` lists it), then the loop iterators. Hints list them in this order.
// One row a line, in columns: rustfmt would spread the longer rows over several lines.
#[rustfmt::skip]
const BUILTINS: &[Builtin] = &[
    primitive("copy",       Primitive::Copy,        2, "(src, &mut dst)",         Any),
    primitive("fill",       Primitive::Fill,        2, "(&mut tile, value)",      Any),
    primitive("clear",      Primitive::Clear,       1, "(&mut tile)",             Any),
    primitive("gemm",       Primitive::Gemm,        3, "(&a, &b, &mut acc)",      Float),
    primitive("reduce_sum", Primitive::Reduce(Sum), 3, "(&src, &mut dst, dim)",   Any),
    primitive("reduce_max", Primitive::Reduce(Max), 3, "(&src, &mut dst, dim)",   Any),
    primitive("atomic_add", Primitive::AtomicAdd,   2, "(&mut c[(i, j)], value)", Any),
    math(MathFn::Exp,     1, Float),
    math(MathFn::Exp2,    1, Float),
    math(MathFn::Log,     1, Float),
    math(MathFn::Sqrt,    1, Float),
    math(MathFn::Rsqrt,   1, Float),
    math(MathFn::Abs,     1, Numeric),
    math(MathFn::Max,     2, Numeric),
    math(MathFn::Min,     2, Numeric),
    math(MathFn::Tanh,    1, Float),
    math(MathFn::Erf,     1, Float),
    math(MathFn::Sigmoid, 1, Float),
    math(MathFn::Pow,     2, Float),
    math(MathFn::Sin,     1, Float),
    math(MathFn::Cos,     1, Float),
    math(MathFn::Floor,   1, Float),
    math(MathFn::Ceil,    1, Float),
    math(MathFn::Fma,     3, Float),
    function("if_then_else", Function::IfThenElse, 3, "(cond, a, b)"),
    function("block_idx",    Function::BlockIdx,   1, "(0)"),
    iterator("parallel"),
    iterator("serial"),
    iterator("pipelined"),
];

/// Every builtin's name, in the table's order (a test of the kernel generator checks that it
/// calls each one).
pub fn names_all() -> impl Iterator<Item = &'static str> {
    BUILTINS.iter().map(|b| b.name)
}

/// The builtin called `name`.
pub(super) fn lookup(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}

/// The names of the builtins `op` picks, for a hint: `copy, fill, ..`.
fn names(pick: impl Fn(Op) -> bool) -> String {
    let picked = BUILTINS.iter().filter(|b| pick(b.op));
    picked.map(|b| b.name).collect::<Vec<_>>().join(", ")
}

/// The tile primitives, as listed in hints.
pub(super) fn primitives() -> String {
    names(|op| matches!(op, Op::Primitive(_)))
}

/// The functions a kernel may call, as listed in hints: the math library, then the rest.
pub(super) fn functions() -> String {
    names(|op| matches!(op, Op::Function(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        for (i, b) in BUILTINS.iter().enumerate() {
            assert!(BUILTINS[..i].iter().all(|a| a.name != b.name), "{}", b.name);
        }
    }
}
