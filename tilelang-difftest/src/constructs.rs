//! Which language constructs a kernel's IR reaches: the attribute's keys, parameter kinds,
//! statements, tile operations, expression forms, operators and dtypes. Read from the
//! compiled IR (`tilelang_codegen::ir`), not from the generator's intentions, so a construct
//! counts only if the compiler saw it.

use crate::gen::ast::Ty;
use std::collections::BTreeSet;
use tilelang_codegen::ir::{self, visit, Dtype, ExprKind, ParamKind, Scope, StmtKind, Tile};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Construct {
    /// A grid of 1, 2 or 3 dimensions.
    Grid(usize),
    ThreadsLiteral,
    ThreadsConst,
    /// A kernel without const generics (no `configs`).
    NoConsts,
    SeveralConfigs,
    Defaults,
    /// A tensor parameter of this rank.
    Tensor(usize),
    TensorOf(Ty),
    OutputOf(Ty),
    Scalar(Ty),
    Let,
    Assign,
    StoreTensor,
    StoreBuffer,
    AllocShared,
    AllocFragment,
    /// A `parallel` loop of this many dimensions.
    Parallel(usize),
    If,
    IfElse,
    /// `copy` from a tensor region into a buffer / out of a buffer into a region.
    CopyIn,
    CopyOut,
    /// A region copy whose tensor has more dimensions than the buffer (leading ones dropped).
    CopyRankDrop,
    /// A region copy between different dtypes.
    CopyConvert,
    CopyBuffers,
    /// A buffer-to-buffer copy with a dtype change.
    CopyBuffersConvert,
    Fill,
    /// `gemm` with the A operand in shared memory / in registers (a fragment).
    GemmShared,
    GemmFragmentA,
    /// A `gemm` whose A operand is a fragment written from another `gemm`'s accumulator (a
    /// `parallel` store reading the accumulator, or a buffer copy out of it): a chained
    /// product, as FlashAttention's P·V.
    GemmAccumulatorA,
    /// `gemm` with the A / the B operand stored transposed (`&a_s.t()`, `&b_s.t()`).
    GemmTransA,
    GemmTransB,
    /// `reduce_sum` / `reduce_max` along a dimension.
    ReduceSum(usize),
    ReduceMax(usize),
    /// A reduction of a `gemm` accumulator (along its rows: a matrix unit's layout).
    ReduceOfAccumulator,
    /// `atomic_add` into a global tensor / a shared buffer.
    AtomicGlobal,
    AtomicShared,
    /// `serial(start, end)` / `pipelined(n, stages)` loops.
    Serial,
    Pipelined,
    LitInt,
    LitFloat,
    LitBool,
    ConstGeneric,
    ShapeSymbol,
    ScalarRead,
    VarRead,
    BlockIdx(u8),
    LoadTensor,
    LoadBuffer,
    /// A binary operator, by its symbol.
    Op(&'static str),
    /// `+`, `-` or `*` computing in this dtype.
    Arith(Ty),
    Neg,
    Not,
    /// A cast, by kind: `(from float, to float)`.
    Cast(bool, bool),
    CastFromIndex,
    Math(&'static str),
    Select,
    DivCeil,
}

/// The constructs stage 1 of the generator reaches (the test asserts it over the default
/// seeds); the full language list comes with stage 3.
pub fn stage1() -> Vec<Construct> {
    use Construct::*;
    let mut v = vec![
        Grid(1),
        Grid(2),
        Grid(3),
        ThreadsLiteral,
        ThreadsConst,
        NoConsts,
        SeveralConfigs,
        Defaults,
        Tensor(1),
        Tensor(2),
        Tensor(3),
        Let,
        Assign,
        StoreTensor,
        StoreBuffer,
        AllocShared,
        AllocFragment,
        Parallel(1),
        Parallel(2),
        Parallel(3),
        If,
        IfElse,
        CopyIn,
        CopyOut,
        CopyRankDrop,
        CopyConvert,
        CopyBuffers,
        CopyBuffersConvert,
        Fill,
        GemmShared,
        GemmFragmentA,
        GemmAccumulatorA,
        GemmTransA,
        GemmTransB,
        ReduceSum(0),
        ReduceSum(1),
        ReduceMax(0),
        ReduceMax(1),
        ReduceOfAccumulator,
        AtomicGlobal,
        AtomicShared,
        Serial,
        Pipelined,
        LitInt,
        LitFloat,
        ConstGeneric,
        ShapeSymbol,
        ScalarRead,
        VarRead,
        BlockIdx(0),
        BlockIdx(1),
        BlockIdx(2),
        LoadTensor,
        LoadBuffer,
        Neg,
        Not,
        Cast(true, true),
        Cast(true, false),
        Cast(false, true),
        Cast(false, false),
        CastFromIndex,
        Math("max"),
        Math("min"),
        Math("abs"),
        Select,
        DivCeil,
    ];
    for op in [
        "+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "<", "<=", ">", ">=", "==", "!=", "&&",
        "||",
    ] {
        v.push(Op(op));
    }
    for t in Ty::ELEMENTS {
        v.extend([TensorOf(t), OutputOf(t), Scalar(t), Arith(t)]);
    }
    v
}

fn ty(d: Dtype) -> Ty {
    match d {
        Dtype::F16 => Ty::F16,
        Dtype::Bf16 => Ty::Bf16,
        Dtype::F32 => Ty::F32,
        Dtype::F64 => Ty::F64,
        Dtype::I32 => Ty::I32,
        Dtype::U32 => Ty::U32,
        Dtype::U8 => Ty::U8,
        Dtype::Bool => Ty::Bool,
        Dtype::Index => Ty::Index,
    }
}

/// The constructs `k` reaches.
pub fn of(k: &ir::Kernel) -> BTreeSet<Construct> {
    use Construct as C;
    let mut out = BTreeSet::new();
    out.insert(C::Grid(k.grid.len()));
    out.insert(
        if ir::is_const(&k.threads) && matches!(k.threads.kind, ExprKind::Int(_)) {
            C::ThreadsLiteral
        } else {
            C::ThreadsConst
        },
    );
    if k.consts.is_empty() {
        out.insert(C::NoConsts);
    }
    if k.configs.len() > 1 {
        out.insert(C::SeveralConfigs);
    }
    if !k.defaults.is_empty() {
        out.insert(C::Defaults);
    }
    let tensor_rank = |p: usize| match &k.params[p].kind {
        ParamKind::Tensor { dims, .. } => dims.len(),
        ParamKind::Scalar { .. } => 0,
    };
    let dtype_of = |t: &Tile| match t {
        Tile::Buffer(b) => k.buffers[*b].dtype,
        Tile::Region { tensor, .. } => match &k.params[*tensor].kind {
            ParamKind::Tensor { dtype, .. } | ParamKind::Scalar { dtype } => *dtype,
        },
    };
    for p in &k.params {
        match &p.kind {
            ParamKind::Tensor {
                dtype,
                dims,
                mutable,
            } => {
                out.insert(C::Tensor(dims.len()));
                out.insert(if *mutable {
                    C::OutputOf(ty(*dtype))
                } else {
                    C::TensorOf(ty(*dtype))
                });
            }
            ParamKind::Scalar { dtype } => {
                out.insert(C::Scalar(ty(*dtype)));
            }
        }
    }
    for e in &k.grid {
        visit::each_expr(e, &mut |e| expr(e, &mut out));
    }
    let mut accumulators = BTreeSet::new();
    visit::walk(&k.body, &mut |s| {
        if let StmtKind::Gemm { c, .. } = &s.kind {
            accumulators.insert(*c);
        }
    });
    // Buffers written from an accumulator: stored to with a value that reads one, or copied
    // into from one.
    let mut from_accumulator = BTreeSet::new();
    visit::walk(&k.body, &mut |s| match &s.kind {
        StmtKind::Store {
            access:
                ir::Access {
                    target: ir::Target::Buffer(b),
                    ..
                },
            value,
        } => {
            let mut reads = false;
            visit::each_expr(value, &mut |e| {
                if let ExprKind::Load(a) = &e.kind {
                    reads |= matches!(a.target, ir::Target::Buffer(x) if accumulators.contains(&x));
                }
            });
            if reads {
                from_accumulator.insert(*b);
            }
        }
        StmtKind::Copy {
            src: Tile::Buffer(x),
            dst: Tile::Buffer(b),
        } if accumulators.contains(x) => {
            from_accumulator.insert(*b);
        }
        _ => {}
    });
    visit::walk(&k.body, &mut |s| {
        match &s.kind {
            StmtKind::Let { .. } => {
                out.insert(C::Let);
            }
            StmtKind::Assign { .. } => {
                out.insert(C::Assign);
            }
            StmtKind::Store { access, .. } => {
                out.insert(match access.target {
                    ir::Target::Tensor(_) => C::StoreTensor,
                    ir::Target::Buffer(_) => C::StoreBuffer,
                });
            }
            StmtKind::Alloc(b) => {
                out.insert(match k.buffers[*b].scope {
                    Scope::Shared => C::AllocShared,
                    Scope::Fragment | Scope::Local => C::AllocFragment,
                });
            }
            StmtKind::For {
                kind: ir::LoopKind::Parallel { extents },
                ..
            } => {
                out.insert(C::Parallel(extents.len()));
            }
            StmtKind::If { els, .. } => {
                out.insert(if els.is_empty() { C::If } else { C::IfElse });
            }
            StmtKind::Copy { src, dst } => {
                let convert = dtype_of(src) != dtype_of(dst);
                match (src, dst) {
                    (Tile::Buffer(_), Tile::Buffer(_)) => {
                        out.insert(C::CopyBuffers);
                        if convert {
                            out.insert(C::CopyBuffersConvert);
                        }
                    }
                    (Tile::Region { tensor, .. }, Tile::Buffer(b))
                    | (Tile::Buffer(b), Tile::Region { tensor, .. }) => {
                        out.insert(if matches!(src, Tile::Region { .. }) {
                            C::CopyIn
                        } else {
                            C::CopyOut
                        });
                        if tensor_rank(*tensor) > k.buffers[*b].shape.len() {
                            out.insert(C::CopyRankDrop);
                        }
                        if convert {
                            out.insert(C::CopyConvert);
                        }
                    }
                    _ => {}
                }
            }
            StmtKind::Fill { .. } => {
                out.insert(C::Fill);
            }
            StmtKind::Gemm { a, ta, tb, .. } => {
                out.insert(match k.buffers[*a].scope {
                    Scope::Shared => C::GemmShared,
                    Scope::Fragment | Scope::Local => C::GemmFragmentA,
                });
                if matches!(k.buffers[*a].scope, Scope::Fragment) && from_accumulator.contains(a) {
                    out.insert(C::GemmAccumulatorA);
                }
                if *ta {
                    out.insert(C::GemmTransA);
                }
                if *tb {
                    out.insert(C::GemmTransB);
                }
            }
            StmtKind::AtomicAdd { access, .. } => {
                out.insert(match access.target {
                    ir::Target::Buffer(_) => C::AtomicShared,
                    ir::Target::Tensor(_) => C::AtomicGlobal,
                });
            }
            StmtKind::Reduce { op, dim, src, .. } => {
                out.insert(match op {
                    ir::ReduceOp::Sum => C::ReduceSum(*dim),
                    ir::ReduceOp::Max => C::ReduceMax(*dim),
                });
                if accumulators.contains(src) {
                    out.insert(C::ReduceOfAccumulator);
                }
            }
            StmtKind::For {
                kind: ir::LoopKind::Serial { .. },
                ..
            } => {
                out.insert(C::Serial);
            }
            StmtKind::For {
                kind: ir::LoopKind::Pipelined { .. },
                ..
            } => {
                out.insert(C::Pipelined);
            }
        }
        visit::each_stmt_expr(s, &mut |e| visit::each_expr(e, &mut |e| expr(e, &mut out)));
    });
    out
}

fn expr(e: &ir::Expr, out: &mut BTreeSet<Construct>) {
    use Construct as C;
    let c = match &e.kind {
        ExprKind::Int(_) => C::LitInt,
        ExprKind::Float(_) => C::LitFloat,
        ExprKind::Bool(_) => C::LitBool,
        ExprKind::Const(_) => C::ConstGeneric,
        ExprKind::Sym(_) => C::ShapeSymbol,
        ExprKind::Scalar(_) => C::ScalarRead,
        ExprKind::Var(_) => C::VarRead,
        ExprKind::BlockIdx(d) => C::BlockIdx(*d),
        ExprKind::Load(a) => match a.target {
            ir::Target::Tensor(_) => C::LoadTensor,
            ir::Target::Buffer(_) => C::LoadBuffer,
        },
        ExprKind::Binary(op, a, _) => {
            if matches!(op, ir::BinOp::Add | ir::BinOp::Sub | ir::BinOp::Mul)
                && a.ty != Dtype::Index
            {
                out.insert(C::Arith(ty(a.ty)));
            }
            C::Op(op.symbol())
        }
        ExprKind::Unary(ir::UnOp::Neg, _) => C::Neg,
        ExprKind::Unary(_, _) => C::Not,
        ExprKind::Cast(x) if x.ty == Dtype::Index => C::CastFromIndex,
        ExprKind::Cast(x) => C::Cast(x.ty.is_float(), e.ty.is_float()),
        ExprKind::Math(f, _) => C::Math(f.name()),
        ExprKind::Select(..) => C::Select,
        ExprKind::DivCeil(..) => C::DivCeil,
    };
    out.insert(c);
}
