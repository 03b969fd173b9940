//! The tile IR: a checked, typed kernel. Names are resolved to ids, every expression has a
//! dtype, every tile operand is known to be a global region or a buffer of a given scope.
//!
//! What the IR deliberately does *not* contain: thread mappings, layouts and barriers. A
//! backend derives those (the CPU backend needs none: it runs the block-sequential semantics
//! directly; a GPU backend maps `parallel` loops onto threads and inserts barriers).

pub use crate::ast::{BinOp, Dtype, UnOp};
use crate::ctxt::Range;
use syn::Ident;

pub mod visit;

pub type VarId = usize;
pub type BufId = usize;
pub type ParamId = usize;

#[derive(Debug, Clone)]
pub struct Kernel {
    pub name: Ident,
    pub vis: syn::Visibility,
    /// Outer attributes of the function (docs, `#[allow]`), kept on the launcher.
    pub attrs: Vec<syn::Attribute>,
    /// Const generics, in declaration order.
    pub consts: Vec<Ident>,
    /// Shape symbols, in order of first appearance in the parameters.
    pub symbols: Vec<Ident>,
    pub params: Vec<Param>,
    pub grid: Vec<Expr>,
    pub threads: Expr,
    /// The attribute's occupancy control, if any (`min_blocks` or `max_registers`).
    pub occupancy: Option<Occupancy>,
    pub configs: Vec<Config>,
    /// `(arch, index into configs)`; archs not listed use `configs[0]`.
    pub defaults: Vec<(String, usize)>,
    /// Launch-time conditions with their source text.
    pub requires: Vec<(Expr, String)>,
    pub vars: Vec<Var>,
    pub buffers: Vec<Buffer>,
    pub body: Vec<Stmt>,
}

/// An occupancy control: a constant expression per config, checked in range by validation.
#[derive(Debug, Clone)]
pub enum Occupancy {
    /// Blocks per multiprocessor the device compiler must let reside (a register cap).
    MinBlocks(Expr),
    /// Registers per thread at most.
    MaxRegisters(Expr),
}

#[derive(Debug, Clone)]
pub struct Config {
    pub name: Ident,
    /// One value per const generic, in `Kernel::consts` order.
    pub values: Vec<u64>,
}

#[derive(Debug, Clone)]
pub struct Param {
    pub name: Ident,
    pub kind: ParamKind,
}

#[derive(Debug, Clone)]
pub enum ParamKind {
    Tensor {
        dtype: Dtype,
        dims: Vec<DimRef>,
        mutable: bool,
    },
    Scalar {
        dtype: Dtype,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DimRef {
    /// Bound at launch from the tensor; index into `Kernel::symbols`.
    Sym(usize),
    /// Must equal a const generic's value in the chosen config; index into `Kernel::consts`.
    Const(usize),
}

#[derive(Debug, Clone)]
pub struct Var {
    pub name: Ident,
    pub ty: Dtype,
    pub mutable: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// One copy per block, visible to all its threads.
    Shared,
    /// One copy per block, spread over the threads' registers; indexed only in `parallel` loops.
    Fragment,
    /// Private to one iteration of the enclosing `parallel` loop (one thread's registers).
    Local,
}

impl Scope {
    pub fn name(self) -> &'static str {
        match self {
            Scope::Shared => "shared",
            Scope::Fragment => "fragment",
            Scope::Local => "local",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Buffer {
    pub name: Ident,
    pub scope: Scope,
    pub dtype: Dtype,
    /// Constant expressions (literals and const generics only).
    pub shape: Vec<Expr>,
    pub span: Range,
}

#[derive(Debug, Clone)]
pub struct Expr {
    pub kind: ExprKind,
    pub ty: Dtype,
    pub span: Range,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MathFn {
    Exp,
    Exp2,
    Log,
    Sqrt,
    Rsqrt,
    Abs,
    Max,
    Min,
    Tanh,
    Erf,
    Sigmoid,
    Pow,
    Sin,
    Cos,
    Floor,
    Ceil,
    Fma,
}

impl MathFn {
    /// The name in a kernel, which is also the name of the CPU backend's function and of
    /// tl.h's template. The checker's table of builtins reads it; its arity and dtypes are
    /// there (`validate/builtins.rs`).
    pub const fn name(self) -> &'static str {
        match self {
            MathFn::Exp => "exp",
            MathFn::Exp2 => "exp2",
            MathFn::Log => "log",
            MathFn::Sqrt => "sqrt",
            MathFn::Rsqrt => "rsqrt",
            MathFn::Abs => "abs",
            MathFn::Max => "max",
            MathFn::Min => "min",
            MathFn::Tanh => "tanh",
            MathFn::Erf => "erf",
            MathFn::Sigmoid => "sigmoid",
            MathFn::Pow => "pow",
            MathFn::Sin => "sin",
            MathFn::Cos => "cos",
            MathFn::Floor => "floor",
            MathFn::Ceil => "ceil",
            MathFn::Fma => "fma",
        }
    }
}

#[derive(Debug, Clone)]
pub enum ExprKind {
    Int(i128),
    Float(f64),
    Bool(bool),
    Const(usize),
    Sym(usize),
    Scalar(ParamId),
    Var(VarId),
    BlockIdx(u8),
    Load(Access),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Unary(UnOp, Box<Expr>),
    Cast(Box<Expr>),
    Math(MathFn, Vec<Expr>),
    Select(Box<Expr>, Box<Expr>, Box<Expr>),
    DivCeil(Box<Expr>, Box<Expr>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Tensor(ParamId),
    Buffer(BufId),
}

#[derive(Debug, Clone)]
pub struct Access {
    pub target: Target,
    pub index: Vec<Expr>,
}

/// A tile operand of `copy`.
#[derive(Debug, Clone)]
pub enum Tile {
    Buffer(BufId),
    /// The region of a global tensor starting at `offsets`, shaped like the other operand.
    Region {
        tensor: ParamId,
        offsets: Vec<Expr>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReduceOp {
    Sum,
    Max,
}

#[derive(Debug, Clone)]
pub enum LoopKind {
    /// Iterations are independent and spread over the block's threads; extents are constants.
    Parallel {
        extents: Vec<Expr>,
    },
    Serial {
        start: Expr,
        end: Expr,
    },
    /// Sequential; a GPU backend overlaps the copies of later iterations with this one.
    Pipelined {
        extent: Expr,
        stages: Expr,
    },
}

#[derive(Debug, Clone)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Range,
}

#[derive(Debug, Clone)]
pub enum StmtKind {
    Let {
        var: VarId,
        init: Expr,
    },
    Assign {
        var: VarId,
        value: Expr,
    },
    Store {
        access: Access,
        value: Expr,
    },
    Alloc(BufId),
    For {
        kind: LoopKind,
        vars: Vec<VarId>,
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
        buf: BufId,
        value: Expr,
    },
    /// `c += A·B`, where A is `a` (M, K), or `a` stored (K, M) when `ta` (`&a.t()`), and B is
    /// `b` (K, N), or `b` stored (N, K) when `tb`.
    Gemm {
        a: BufId,
        b: BufId,
        c: BufId,
        ta: bool,
        tb: bool,
    },
    Reduce {
        op: ReduceOp,
        src: BufId,
        dst: BufId,
        dim: usize,
    },
    AtomicAdd {
        access: Access,
        value: Expr,
    },
}

impl Kernel {
    pub fn config_value(&self, config: usize, konst: usize) -> u64 {
        self.configs[config].values[konst]
    }
}

/// Evaluates a constant expression (literals, const generics, integer arithmetic) under a config.
/// `None` when the expression is not constant or does not evaluate: division by zero, or an
/// overflow of the type of any subexpression (a shift by its bit width or more counts as one).
///
/// Every step is checked in the subexpression's own type, so a value this returns is exactly
/// what the CPU backend and the GPU compute at run time with their wrapping arithmetic: nothing
/// wrapped on the way. (In i128 without those checks, `(1 << 64) + 4` would be `2^64 + 4`
/// here and `5` at run time.)
pub fn eval_const(e: &Expr, consts: &[u64]) -> Option<i128> {
    let v = match &e.kind {
        ExprKind::Int(v) => *v,
        ExprKind::Const(i) => consts[*i] as i128,
        ExprKind::Cast(inner) if e.ty.is_int() => eval_const(inner, consts)?,
        ExprKind::Unary(UnOp::Neg, x) => eval_const(x, consts)?.checked_neg()?,
        ExprKind::DivCeil(a, b) => {
            let (a, b) = (eval_const(a, consts)?, eval_const(b, consts)?);
            if b <= 0 {
                return None;
            }
            int_in(a.checked_add(b - 1)?, e.ty)?.checked_div_euclid(b)?
        }
        ExprKind::Math(MathFn::Max, a) => {
            eval_const(&a[0], consts)?.max(eval_const(&a[1], consts)?)
        }
        ExprKind::Math(MathFn::Min, a) => {
            eval_const(&a[0], consts)?.min(eval_const(&a[1], consts)?)
        }
        ExprKind::Binary(op, a, b) => {
            let (a, b) = (eval_const(a, consts)?, eval_const(b, consts)?);
            let bits = int_bits(e.ty)? as i128;
            match op {
                BinOp::Add => a.checked_add(b)?,
                BinOp::Sub => a.checked_sub(b)?,
                BinOp::Mul => a.checked_mul(b)?,
                BinOp::Div => a.checked_div(b)?,
                BinOp::Rem => a.checked_rem(b)?,
                BinOp::BitAnd => a & b,
                BinOp::BitOr => a | b,
                BinOp::BitXor => a ^ b,
                BinOp::Shl if (0..bits).contains(&b) => a.checked_shl(b as u32)?,
                BinOp::Shr if (0..bits).contains(&b) => a.checked_shr(b as u32)?,
                _ => return None,
            }
        }
        _ => return None,
    };
    int_in(v, e.ty)
}

/// The width of an integer dtype in bits (`Index` is 64-bit on every backend).
fn int_bits(ty: Dtype) -> Option<u32> {
    match ty {
        Dtype::U8 => Some(8),
        Dtype::I32 | Dtype::U32 => Some(32),
        Dtype::Index => Some(64),
        _ => None,
    }
}

/// `v` when it is a value of the integer dtype `ty`.
pub(crate) fn int_in(v: i128, ty: Dtype) -> Option<i128> {
    let ok = match ty {
        Dtype::U8 => (0..=u8::MAX as i128).contains(&v),
        Dtype::I32 => (i32::MIN as i128..=i32::MAX as i128).contains(&v),
        Dtype::U32 => (0..=u32::MAX as i128).contains(&v),
        Dtype::Index => (i64::MIN as i128..=i64::MAX as i128).contains(&v),
        _ => false,
    };
    ok.then_some(v)
}

/// Whether an expression involves only literals and const generics.
pub fn is_const(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) | ExprKind::Const(_) => true,
        ExprKind::Cast(x) | ExprKind::Unary(_, x) => is_const(x),
        ExprKind::Binary(_, a, b) | ExprKind::DivCeil(a, b) => is_const(a) && is_const(b),
        ExprKind::Math(_, args) => args.iter().all(is_const),
        ExprKind::Select(c, a, b) => is_const(c) && is_const(a) && is_const(b),
        _ => false,
    }
}

/// A `gemm`'s (M, N, K) from its operands' stored shapes (`StmtKind::Gemm`'s `ta`, `tb`):
/// K as A holds it ([`gemm_mnkk`] gives B's too).
pub fn gemm_mnk<T: Clone>(sa: &[T], sb: &[T], ta: bool, tb: bool) -> (T, T, T) {
    let (m, n, k, _) = gemm_mnkk(sa, sb, ta, tb);
    (m, n, k)
}

/// A `gemm`'s (M, N, K of A, K of B) from its operands' stored shapes: the two Ks agree in a
/// valid kernel (the validator's checks).
pub fn gemm_mnkk<T: Clone>(sa: &[T], sb: &[T], ta: bool, tb: bool) -> (T, T, T, T) {
    let (m, ka) = if ta {
        (&sa[1], &sa[0])
    } else {
        (&sa[0], &sa[1])
    };
    let (kb, n) = if tb {
        (&sb[1], &sb[0])
    } else {
        (&sb[0], &sb[1])
    };
    (m.clone(), n.clone(), ka.clone(), kb.clone())
}
