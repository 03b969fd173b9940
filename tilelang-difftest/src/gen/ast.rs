//! The generator's own syntax tree: small, typed where the printer needs it, and owned by the
//! generator (the shrinker of a later stage edits it). A leaf: it imports nothing of the crate.

/// A value's type: the seven element types, `bool` and the index type `usize`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Ty {
    F16,
    Bf16,
    F32,
    F64,
    I32,
    U32,
    U8,
    Bool,
    Index,
}

impl Ty {
    /// The element types tensors, buffers and scalars hold.
    pub const ELEMENTS: [Ty; 7] = [
        Ty::F16,
        Ty::Bf16,
        Ty::F32,
        Ty::F64,
        Ty::I32,
        Ty::U32,
        Ty::U8,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Ty::F16 => "f16",
            Ty::Bf16 => "bf16",
            Ty::F32 => "f32",
            Ty::F64 => "f64",
            Ty::I32 => "i32",
            Ty::U32 => "u32",
            Ty::U8 => "u8",
            Ty::Bool => "bool",
            Ty::Index => "usize",
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, Ty::F16 | Ty::Bf16 | Ty::F32 | Ty::F64)
    }

    /// Whether a value of this type may be negated (`-x`).
    pub fn is_signed(self) -> bool {
        self.is_float() || self == Ty::I32
    }

    /// Bytes of one element (buffers' sizes).
    pub fn bytes(self) -> usize {
        match self {
            Ty::F16 | Ty::Bf16 => 2,
            Ty::F32 | Ty::I32 | Ty::U32 => 4,
            Ty::F64 | Ty::Index => 8,
            Ty::U8 | Ty::Bool => 1,
        }
    }
}

/// How a literal is written: untyped (`2.5`, typed by its context), with a suffix (`2.5f32`),
/// or as a cast (`(2.5 as f16)`: Rust has no suffix for the halves).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LitForm {
    Untyped,
    Typed,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    And,
    Or,
    Div,
    Rem,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::And => "&&",
            BinOp::Or => "||",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
        }
    }
}

/// The functions the generator calls: `max min abs` and the math functions. `floor ceil sqrt
/// rsqrt fma` give the same bits on every backend (`docs/language.md`, "Math functions"); the
/// rest ([`Func::exact`] false) only within a tolerance (`super::approx`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    Max,
    Min,
    Abs,
    Floor,
    Ceil,
    Sqrt,
    Rsqrt,
    Fma,
    Exp,
    Exp2,
    Log,
    Tanh,
    Erf,
    Sigmoid,
    Pow,
    Sin,
    Cos,
}

impl Func {
    pub fn name(self) -> &'static str {
        match self {
            Func::Max => "max",
            Func::Min => "min",
            Func::Abs => "abs",
            Func::Floor => "floor",
            Func::Ceil => "ceil",
            Func::Sqrt => "sqrt",
            Func::Rsqrt => "rsqrt",
            Func::Fma => "fma",
            Func::Exp => "exp",
            Func::Exp2 => "exp2",
            Func::Log => "log",
            Func::Tanh => "tanh",
            Func::Erf => "erf",
            Func::Sigmoid => "sigmoid",
            Func::Pow => "pow",
            Func::Sin => "sin",
            Func::Cos => "cos",
        }
    }

    /// Whether every backend computes the same bits.
    pub fn exact(self) -> bool {
        matches!(
            self,
            Func::Max
                | Func::Min
                | Func::Abs
                | Func::Floor
                | Func::Ceil
                | Func::Sqrt
                | Func::Rsqrt
                | Func::Fma
        )
    }
}

/// How far a float output may be from the evaluator's: `|got - want| <= atol + rtol *
/// max(|got|, |want|)`, an overflow to infinity on one side only where the other is within
/// that of the largest finite value (`device::compare`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tol {
    pub atol: f64,
    pub rtol: f64,
}

impl Tol {
    /// The looser of two tolerances, element by element.
    pub fn max(self, o: Tol) -> Tol {
        Tol {
            atol: self.atol.max(o.atol),
            rtol: self.rtol.max(o.rtol),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// An integer (of an integer type or `usize`), a float or a bool literal, of type `ty`.
    Int(i64, Ty, LitForm),
    Float(f64, Ty, LitForm),
    Bool(bool),
    /// A variable, a loop variable, a scalar parameter, a shape symbol or a const generic.
    Name(String),
    BlockIdx(u8),
    /// `t[i]` or `t[(i, j, ..)]`.
    Load(String, Vec<Expr>),
    Bin(BinOp, Box<Expr>, Box<Expr>),
    Neg(Box<Expr>),
    Not(Box<Expr>),
    Cast(Box<Expr>, Ty),
    Call(Func, Vec<Expr>),
    /// `if_then_else(c, a, b)`.
    Select(Box<Expr>, Box<Expr>, Box<Expr>),
    DivCeil(Box<Expr>, Box<Expr>),
}

impl Expr {
    pub fn name(s: &str) -> Expr {
        Expr::Name(s.to_string())
    }

    /// An untyped `usize` literal (index arithmetic).
    pub fn idx(v: i64) -> Expr {
        Expr::Int(v, Ty::Index, LitForm::Untyped)
    }

    pub fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
        Expr::Bin(op, Box::new(a), Box::new(b))
    }

    pub fn load(t: &str, index: &[&str]) -> Expr {
        Expr::Load(t.to_string(), index.iter().map(|i| Expr::name(i)).collect())
    }

    pub fn is_literal(&self) -> bool {
        matches!(self, Expr::Int(..) | Expr::Float(..) | Expr::Bool(_))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Shared,
    Fragment,
    /// Per-thread storage (`alloc_local`), inside a `parallel` loop.
    Local,
}

/// A `copy` operand: a buffer, or the region of a tensor at element offsets.
#[derive(Clone, Debug, PartialEq)]
pub enum Tile {
    Buf(String),
    Region { tensor: String, offsets: Vec<Expr> },
}

#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `let [mut] name[: ty] = value;`
    Let {
        name: String,
        mutable: bool,
        ty: Option<Ty>,
        value: Expr,
    },
    /// `let (a, b, ..) = (e1, e2, ..);`
    LetTuple(Vec<(String, Expr)>),
    /// `name = value;`
    Assign(String, Expr),
    /// `t[index] = value;` or, with an operator, `t[index] op= value;`
    Store {
        target: String,
        index: Vec<Expr>,
        op: Option<BinOp>,
        value: Expr,
    },
    /// `let mut name = alloc_<scope>::<dtype, (shape)>();` (the argument form when
    /// `arg_form`: `alloc_<scope>::<dtype>((shape))`).
    Alloc {
        name: String,
        scope: Scope,
        dtype: Ty,
        shape: Vec<String>,
        arg_form: bool,
    },
    /// `for (vars) in parallel(extents) { body }`
    Parallel {
        vars: Vec<String>,
        extents: Vec<String>,
        body: Vec<Stmt>,
    },
    If {
        cond: Expr,
        then: Vec<Stmt>,
        els: Vec<Stmt>,
    },
    Copy {
        src: Tile,
        dst: Tile,
    },
    Fill {
        buf: String,
        value: Expr,
    },
    Clear(String),
    /// `gemm(&a, &b, &mut c);`, `&a.t()` when `ta`, `&b.t()` when `tb`.
    Gemm {
        a: String,
        b: String,
        c: String,
        ta: bool,
        tb: bool,
    },
    /// `reduce_<op>(&src, &mut dst, dim);` (`op`: `sum` or `max`)
    Reduce {
        op: &'static str,
        src: String,
        dst: String,
        dim: usize,
    },
    /// `atomic_add(&mut target[index], value);`
    Atomic {
        target: String,
        index: Vec<Expr>,
        value: Expr,
    },
    /// `for var in serial(start, end) { body }`, or with stages `for var in pipelined(end,
    /// stages) { body }`.
    Loop {
        var: String,
        start: Expr,
        end: Expr,
        stages: Option<String>,
        body: Vec<Stmt>,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub enum ParamKind {
    Tensor {
        dtype: Ty,
        dims: Vec<String>,
        mutable: bool,
        /// A `&mut` tensor the kernel also reads (in-out): a runner fills it like an input.
        read: bool,
    },
    Scalar(Ty),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: String,
    pub kind: ParamKind,
}

/// A named config: one value per const generic, in `Kernel::consts` order.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub name: String,
    pub values: Vec<u64>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Threads {
    Literal(u64),
    Const(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    pub name: String,
    pub grid: Vec<Expr>,
    pub threads: Threads,
    pub consts: Vec<String>,
    pub configs: Vec<Config>,
    /// `(arch, config name)` pairs of the `defaults` key (absent when empty).
    pub defaults: Vec<(String, String)>,
    pub params: Vec<Param>,
    pub body: Vec<Stmt>,
    /// The `requires` conditions (absent when empty).
    pub requires: Vec<Expr>,
    /// `min_blocks = v` or `max_registers = v`, as `(key, v)`.
    pub occupancy: Option<(&'static str, u64)>,
    /// The outputs compared within a tolerance, by parameter name (the others bit for bit).
    pub tols: Vec<(String, Tol)>,
}

/// Which skeleton a program was built from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Skeleton {
    /// Element-wise `parallel` loop over tensors of rank 1, 2 or 3.
    Elementwise(u8),
    /// Tiles: copies in, element-wise loops over the tiles, copies out.
    Tiles,
    /// A GEMM: tiles of A and B copied in a `serial` or `pipelined` loop over K, `gemm` into a
    /// fragment accumulator, the accumulator copied out.
    Gemm,
    /// A reduction along either dimension of a tile, its result copied out and broadcast back,
    /// or reductions of successive tiles folded into an accumulator in a loop.
    Reduce,
    /// Sums by `atomic_add`, into a global tensor or a shared buffer.
    Atomic,
}

/// One generated kernel and the seed it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub seed: u64,
    pub skeleton: Skeleton,
    pub kernel: Kernel,
}
