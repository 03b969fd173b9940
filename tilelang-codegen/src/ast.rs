//! The surface syntax of a kernel, after parsing and before any name or type is checked.
//! Every node keeps the span of the tokens it came from, for diagnostics.

use crate::ctxt::Range;
use syn::Ident;

/// Element types a tensor, buffer or scalar may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dtype {
    F16,
    Bf16,
    F32,
    F64,
    I32,
    U32,
    U8,
    Bool,
    /// The type of shape symbols, const generics, loop variables and `block_idx`: a signed
    /// 64-bit integer on the CPU backend (negative offsets are meaningful in `copy`).
    Index,
}

impl Dtype {
    pub fn from_name(s: &str) -> Option<Dtype> {
        Some(match s {
            "f16" => Dtype::F16,
            "bf16" => Dtype::Bf16,
            "f32" => Dtype::F32,
            "f64" => Dtype::F64,
            "i32" => Dtype::I32,
            "u32" => Dtype::U32,
            "u8" => Dtype::U8,
            "bool" => Dtype::Bool,
            "usize" => Dtype::Index,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Dtype::F16 => "f16",
            Dtype::Bf16 => "bf16",
            Dtype::F32 => "f32",
            Dtype::F64 => "f64",
            Dtype::I32 => "i32",
            Dtype::U32 => "u32",
            Dtype::U8 => "u8",
            Dtype::Bool => "bool",
            Dtype::Index => "usize",
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, Dtype::F16 | Dtype::Bf16 | Dtype::F32 | Dtype::F64)
    }

    pub fn is_int(self) -> bool {
        matches!(self, Dtype::I32 | Dtype::U32 | Dtype::U8 | Dtype::Index)
    }

    /// Types a tensor or tile buffer may hold.
    pub fn is_storable(self) -> bool {
        !matches!(self, Dtype::Bool | Dtype::Index)
    }

    pub fn size_bytes(self) -> usize {
        match self {
            Dtype::F16 | Dtype::Bf16 => 2,
            Dtype::F32 | Dtype::I32 | Dtype::U32 => 4,
            Dtype::F64 | Dtype::Index => 8,
            Dtype::U8 | Dtype::Bool => 1,
        }
    }
}

impl std::fmt::Display for Dtype {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A whole `#[tile_kernel]` function.
#[derive(Debug, Clone)]
pub struct KernelDef {
    pub attrs: Vec<syn::Attribute>,
    pub vis: syn::Visibility,
    pub name: Ident,
    pub consts: Vec<Ident>,
    pub params: Vec<Param>,
    pub body: Vec<Stmt>,
}

#[derive(Debug, Clone)]
pub struct Param {
    pub name: Ident,
    pub kind: ParamKind,
    /// Range of the whole type, for diagnostics about it.
    pub ty_span: Range,
}

#[derive(Debug, Clone)]
pub enum ParamKind {
    Tensor {
        dtype: Dtype,
        shape: Vec<Dim>,
        mutable: bool,
    },
    Scalar {
        dtype: Dtype,
    },
}

/// One dimension of a tensor type: a symbol (bound at launch, or a const generic) or a literal.
#[derive(Debug, Clone)]
pub enum Dim {
    Sym(Ident),
    Lit(u64, Range),
}

#[derive(Debug, Clone)]
pub enum Scope {
    Shared,
    Fragment,
    Local,
}

impl Scope {
    pub fn alloc_name(&self) -> &'static str {
        match self {
            Scope::Shared => "alloc_shared",
            Scope::Fragment => "alloc_fragment",
            Scope::Local => "alloc_local",
        }
    }
}

#[derive(Debug, Clone)]
pub enum Stmt {
    /// `let x = e;`, `let mut x: f32 = e;` (scalars) and `let (a, b) = (e1, e2);` (desugared).
    Let {
        name: Ident,
        mutable: bool,
        ty: Option<(Dtype, Range)>,
        init: Expr,
    },
    /// `let mut s = alloc_shared::<f16, (BM, BK)>();`
    Alloc {
        name: Ident,
        mutable: bool,
        scope: Scope,
        dtype: Dtype,
        shape: Vec<Expr>,
        span: Range,
    },
    /// `x = e;`, `x += e;`, `c[(i, j)] = e;`
    Assign {
        target: Place,
        op: Option<BinOp>,
        value: Expr,
        span: Range,
    },
    For {
        vars: Vec<Ident>,
        iter: LoopIter,
        body: Vec<Stmt>,
        span: Range,
    },
    If {
        cond: Expr,
        then: Vec<Stmt>,
        els: Option<Vec<Stmt>>,
        span: Range,
    },
    /// A `let` whose right-hand side could not be parsed: binds the name so later uses do not
    /// report it again.
    Poisoned(Ident),
    /// A tile primitive used as a statement: `copy`, `fill`, `clear`, `gemm`, `reduce_*`, `atomic_add`.
    Call {
        func: Ident,
        args: Vec<Expr>,
        span: Range,
    },
}

#[derive(Debug, Clone)]
pub enum Place {
    Var(Ident),
    Elem {
        base: Ident,
        index: Vec<Expr>,
        span: Range,
    },
}

#[derive(Debug, Clone)]
pub enum LoopIter {
    Parallel {
        extents: Vec<Expr>,
        span: Range,
    },
    Serial {
        start: Option<Expr>,
        end: Expr,
        span: Range,
    },
    Pipelined {
        extent: Expr,
        stages: Expr,
        span: Range,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

impl BinOp {
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        )
    }
    pub fn is_logical(self) -> bool {
        matches!(self, BinOp::And | BinOp::Or)
    }
    pub fn is_bitwise(self) -> bool {
        matches!(
            self,
            BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr
        )
    }
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
}

#[derive(Debug, Clone)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Range,
}

#[derive(Debug, Clone)]
pub enum ExprKind {
    Int(u64, Option<Dtype>),
    Float(f64, Option<Dtype>),
    Bool(bool),
    Var(Ident),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Unary(UnOp, Box<Expr>),
    Cast(Box<Expr>, Dtype),
    /// A call of a built-in function: `exp(x)`, `max(a, b)`, `block_idx(0)`, `if_then_else(c, a, b)`.
    Call(Ident, Vec<Expr>),
    /// `a.div_ceil(b)`
    DivCeil(Box<Expr>, Box<Expr>),
    /// `a[i]`, `a[(i, j)]`
    Index(Ident, Vec<Expr>),
    /// `&x` or `&mut x`: how tile buffers are passed to primitives.
    Ref(Ident, bool),
    /// `&x.t()`: a tile read transposed, only as an operand of `gemm`.
    Transposed(Ident),
    /// `a.at((i, j))` / `a.at_mut((i, j))`: a tile of a global tensor at an element offset.
    Region {
        tensor: Ident,
        offsets: Vec<Expr>,
        mutable: bool,
    },
    /// `&mut c[(i, j)]`: an element place, for `atomic_add`.
    ElemRef(Ident, Vec<Expr>),
    /// `(a, b)`: only meaningful on the right of a tuple `let`.
    Tuple(Vec<Expr>),
}
