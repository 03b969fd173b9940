//! The IR evaluator: runs a kernel's IR (`tilelang_codegen::ir`) with the CPU backend's
//! semantics without compiling it, so thousands of generated kernels get a reference in one
//! process (`docs/design/difftest.md` §2). The CPU backend (the macro's `__cpu` function over
//! `tilelang::__private::cpu`) defines the language; this walks the same statements in the
//! same order and calls the same functions for every operation ([`value`]) and tile operation
//! (`cpu::tiles`), so it is held bit-identical to it: `tests/eval.rs` compares the two on every
//! kernel of the committed snapshot, results and errors.

pub mod value;

use std::collections::HashMap;
use std::sync::Mutex;
use tilelang::__private::cpu::tiles;
use tilelang::__private::launch::check_grid;
use tilelang::{AnyScalar, Error};
use tilelang_codegen::ir::{
    Access, BinOp, DimRef, ExprKind, Kernel, LoopKind, ParamKind, ReduceOp, Stmt, StmtKind, Target,
    Tile,
};
use value::each_data;
pub use value::{Data, Value};

/// A tensor argument or a tile buffer: elements and shape.
#[derive(Clone, Debug)]
pub struct Array {
    pub data: Data,
    pub shape: Vec<i64>,
}

/// One launch argument, in parameter order.
#[derive(Clone, Debug)]
pub enum Arg {
    Tensor(Array),
    Scalar(AnyScalar),
}

/// A `&'static str` for a name, as the macro's errors carry (interned: generated kernels have
/// a few names each, and a run evaluates thousands of launches).
pub fn intern(s: &str) -> &'static str {
    static NAMES: Mutex<Option<HashMap<String, &'static str>>> = Mutex::new(None);
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    let names = names.get_or_insert_with(HashMap::new);
    if let Some(n) = names.get(s) {
        return n;
    }
    let n: &'static str = Box::leak(s.to_string().into_boxed_str());
    names.insert(s.to_string(), n);
    n
}

/// What a launch was bound to: its grid and its shape symbols' values (in `Kernel::symbols`
/// order), as the launcher computes them; a GPU launch of the same arguments takes both.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bound {
    pub grid: [i64; 3],
    pub syms: Vec<i64>,
}

/// Runs config `config` of `k` on `args` as `launch_dyn` on the CPU backend does: symbols
/// bound from the tensors' shapes, `requires` checked, the grid's blocks one after another.
/// The tensors in `args` are updated in place.
pub fn run(k: &Kernel, config: usize, args: &mut [Arg]) -> Result<Bound, Error> {
    let (mut m, grid) = Machine::bind(k, config, args)?;
    for z in 0..grid[2] {
        for y in 0..grid[1] {
            for x in 0..grid[0] {
                m.block = [x, y, z];
                m.stmts(&k.body)?;
            }
        }
    }
    Ok(Bound { grid, syms: m.syms })
}

struct Machine<'a> {
    k: &'a Kernel,
    kernel: &'static str,
    consts: Vec<i64>,
    syms: Vec<i64>,
    block: [i64; 3],
    vars: Vec<Value>,
    bufs: Vec<Option<Array>>,
    args: &'a mut [Arg],
}

impl<'a> Machine<'a> {
    /// Binds the shape symbols from `args`, checks the const dimensions and `requires`, and
    /// evaluates the grid.
    fn bind(k: &'a Kernel, config: usize, args: &'a mut [Arg]) -> Result<(Self, [i64; 3]), Error> {
        let kernel = intern(&k.name.to_string());
        let consts: Vec<i64> = k.configs[config].values.iter().map(|&v| v as i64).collect();
        let mut syms = vec![0i64; k.symbols.len()];
        for (p, a) in k.params.iter().zip(args.iter()) {
            if let (ParamKind::Tensor { dims, .. }, Arg::Tensor(t)) = (&p.kind, a) {
                for (d, &n) in dims.iter().zip(&t.shape) {
                    match *d {
                        DimRef::Sym(i) => syms[i] = n,
                        DimRef::Const(i) if consts[i] != n => {
                            return Err(Error::BadArgument {
                                kernel,
                                arg: intern(&p.name.to_string()),
                                expected: format!("dimension {}", consts[i]),
                                found: format!("{n}"),
                            })
                        }
                        DimRef::Const(_) => {}
                    }
                }
            }
        }
        let mut m = Machine {
            k,
            kernel,
            consts,
            syms,
            block: [0; 3],
            vars: vec![Value::Bool(false); k.vars.len()],
            bufs: vec![None; k.buffers.len()],
            args,
        };
        for (cond, text) in &k.requires {
            if !m.expr(cond)?.truth() {
                return Err(Error::Requirement {
                    kernel,
                    config: intern(&k.configs[config].name.to_string()),
                    condition: intern(text),
                    values: String::new(),
                });
            }
        }
        let mut grid = [1i64; 3];
        for (g, e) in grid.iter_mut().zip(&k.grid) {
            *g = m.expr(e)?.index();
        }
        let grid = check_grid(kernel, grid)?;
        Ok((m, grid))
    }
}

/// The row-major position of `idx` in `shape`; `None` out of bounds.
fn linear(idx: &[i64], shape: &[i64]) -> Option<usize> {
    let mut lin = 0i64;
    for (&i, &n) in idx.iter().zip(shape) {
        if i < 0 || i >= n {
            return None;
        }
        lin = lin * n + i;
    }
    Some(lin as usize)
}

impl Machine<'_> {
    fn tensor(&self, p: usize) -> &Array {
        match &self.args[p] {
            Arg::Tensor(t) => t,
            Arg::Scalar(_) => unreachable!("parameter {p} is a tensor"),
        }
    }

    fn tensor_mut(&mut self, p: usize) -> &mut Array {
        match &mut self.args[p] {
            Arg::Tensor(t) => t,
            Arg::Scalar(_) => unreachable!("parameter {p} is a tensor"),
        }
    }

    fn buf(&self, b: usize) -> &Array {
        self.bufs[b]
            .as_ref()
            .expect("a buffer is allocated before use")
    }

    /// The element an access names: its array's elements and its position there, or the CPU
    /// backend's out-of-bounds error.
    fn element(&mut self, a: &Access) -> Result<(&mut Data, usize), Error> {
        let idx = a
            .index
            .iter()
            .map(|i| Ok(self.expr(i)?.index()))
            .collect::<Result<Vec<i64>, Error>>()?;
        let (kernel, k) = (self.kernel, self.k);
        let (name, arr) = match a.target {
            Target::Tensor(p) => (&k.params[p].name, self.tensor_mut(p)),
            Target::Buffer(b) => (
                &k.buffers[b].name,
                self.bufs[b]
                    .as_mut()
                    .expect("a buffer is allocated before use"),
            ),
        };
        match linear(&idx, &arr.shape) {
            Some(i) => Ok((&mut arr.data, i)),
            None => Err(Error::OutOfBounds {
                kernel,
                buffer: intern(&name.to_string()),
                index: idx,
                shape: arr.shape.clone(),
            }),
        }
    }

    fn expr(&mut self, e: &tilelang_codegen::ir::Expr) -> Result<Value, Error> {
        let kernel = self.kernel;
        Ok(match &e.kind {
            ExprKind::Int(v) => Value::int(*v, e.ty),
            ExprKind::Float(v) => Value::float(*v, e.ty),
            ExprKind::Bool(b) => Value::Bool(*b),
            ExprKind::Const(i) => Value::Index(self.consts[*i]),
            ExprKind::Sym(i) => Value::Index(self.syms[*i]),
            ExprKind::Scalar(p) => match &self.args[*p] {
                Arg::Scalar(s) => Value::of_scalar(*s),
                Arg::Tensor(_) => unreachable!("parameter {p} is a scalar"),
            },
            ExprKind::Var(v) => self.vars[*v],
            ExprKind::BlockIdx(d) => Value::Index(self.block[*d as usize]),
            ExprKind::Load(a) => {
                let (data, i) = self.element(a)?;
                data.get(i)
            }
            ExprKind::Binary(BinOp::And, l, r) => {
                Value::Bool(self.expr(l)?.truth() && self.expr(r)?.truth())
            }
            ExprKind::Binary(BinOp::Or, l, r) => {
                Value::Bool(self.expr(l)?.truth() || self.expr(r)?.truth())
            }
            ExprKind::Binary(op, l, r) => {
                let (l, r) = (self.expr(l)?, self.expr(r)?);
                Value::binary(*op, l, r, kernel)?
            }
            ExprKind::Unary(tilelang_codegen::ir::UnOp::Neg, x) => self.expr(x)?.negate(),
            ExprKind::Unary(tilelang_codegen::ir::UnOp::Not, x) => self.expr(x)?.invert(),
            ExprKind::Cast(x) => self.expr(x)?.cast(e.ty),
            ExprKind::Math(f, args) => {
                let a = args
                    .iter()
                    .map(|a| self.expr(a))
                    .collect::<Result<Vec<_>, _>>()?;
                Value::math(*f, &a)
            }
            ExprKind::Select(c, a, b) => {
                if self.expr(c)?.truth() {
                    self.expr(a)?
                } else {
                    self.expr(b)?
                }
            }
            ExprKind::DivCeil(a, b) => {
                let (a, b) = (self.expr(a)?, self.expr(b)?);
                Value::div_ceil(a, b, kernel)?
            }
        })
    }

    fn stmts(&mut self, s: &[Stmt]) -> Result<(), Error> {
        s.iter().try_for_each(|s| self.stmt(s))
    }

    fn stmt(&mut self, s: &Stmt) -> Result<(), Error> {
        let kernel = self.kernel;
        match &s.kind {
            StmtKind::Let { var, init: value } | StmtKind::Assign { var, value } => {
                self.vars[*var] = self.expr(value)?;
            }
            StmtKind::Store { access, value } => {
                let v = self.expr(value)?;
                let (data, i) = self.element(access)?;
                data.set(i, v);
            }
            StmtKind::AtomicAdd { access, value } => {
                let v = self.expr(value)?;
                let (data, i) = self.element(access)?;
                let old = data.get(i);
                data.set(i, Value::binary(BinOp::Add, old, v, kernel)?);
            }
            StmtKind::Alloc(b) => {
                let buf = &self.k.buffers[*b];
                let shape = buf
                    .shape
                    .iter()
                    .map(|d| Ok(self.expr(d)?.index()))
                    .collect::<Result<Vec<i64>, Error>>()?;
                let n: i64 = shape.iter().product();
                self.bufs[*b] = Some(Array {
                    data: Data::poison(buf.dtype, n as usize),
                    shape,
                });
            }
            StmtKind::For { kind, vars, body } => match kind {
                LoopKind::Parallel { extents } => self.parallel(vars, extents, body)?,
                LoopKind::Serial { start, end } => {
                    let (s, e) = (self.expr(start)?, self.expr(end)?);
                    self.serial(vars[0], s, e, body)?;
                }
                LoopKind::Pipelined { extent, .. } => {
                    let e = self.expr(extent)?;
                    let zero = Value::int(0, self.k.vars[vars[0]].ty);
                    self.serial(vars[0], zero, e, body)?;
                }
            },
            StmtKind::If { cond, then, els } => {
                if self.expr(cond)?.truth() {
                    self.stmts(then)?;
                } else {
                    self.stmts(els)?;
                }
            }
            StmtKind::Copy { src, dst } => self.copy(src, dst)?,
            StmtKind::Fill { buf, value } => {
                let v = self.expr(value)?;
                self.bufs[*buf]
                    .as_mut()
                    .expect("a buffer is allocated before use")
                    .data
                    .fill(v);
            }
            StmtKind::Gemm { a, b, c, ta, tb } => {
                let (a, b) = (self.buf(*a).clone(), self.buf(*b));
                let (ashape, bshape) = ([a.shape[0], a.shape[1]], [b.shape[0], b.shape[1]]);
                let bdata = b.data.clone();
                let c = &mut self.bufs[*c].as_mut().expect("allocated").data;
                gemm(&a.data, ashape, *ta, &bdata, bshape, *tb, c);
            }
            StmtKind::Reduce { op, src, dst, dim } => {
                let s = self.buf(*src).clone();
                let d = &mut self.bufs[*dst].as_mut().expect("allocated").data;
                reduce(*op, &s, d, *dim);
            }
        }
        Ok(())
    }

    /// A `parallel` loop: its iterations in lexicographic order.
    fn parallel(
        &mut self,
        vars: &[usize],
        extents: &[tilelang_codegen::ir::Expr],
        body: &[Stmt],
    ) -> Result<(), Error> {
        let Some((&v, rest)) = vars.split_first() else {
            return self.stmts(body);
        };
        let n = self.expr(&extents[0])?.index();
        for i in 0..n {
            self.vars[v] = Value::Index(i);
            self.parallel(rest, &extents[1..], body)?;
        }
        Ok(())
    }

    /// `for v in start..end`, in the loop variable's type.
    fn serial(&mut self, v: usize, start: Value, end: Value, body: &[Stmt]) -> Result<(), Error> {
        let (s, e) = (
            start.cast(tilelang_codegen::ir::Dtype::Index).index(),
            end.cast(tilelang_codegen::ir::Dtype::Index).index(),
        );
        let ty = self.k.vars[v].ty;
        for i in s..e {
            self.vars[v] = Value::Index(i).cast(ty);
            self.stmts(body)?;
        }
        Ok(())
    }

    fn offsets(&mut self, offsets: &[tilelang_codegen::ir::Expr]) -> Result<Vec<i64>, Error> {
        offsets.iter().map(|o| Ok(self.expr(o)?.index())).collect()
    }

    fn copy(&mut self, src: &Tile, dst: &Tile) -> Result<(), Error> {
        match (src, dst) {
            (Tile::Region { tensor, offsets }, Tile::Buffer(b)) => {
                let offs = self.offsets(offsets)?;
                let t = self.tensor(*tensor).clone();
                let buf = self.bufs[*b].as_mut().expect("allocated");
                each_data!(&t.data, s => each_data!(&mut buf.data, d =>
                    tiles::copy_from_global(s, &t.shape, &offs, d, &buf.shape)));
            }
            (Tile::Buffer(b), Tile::Region { tensor, offsets }) => {
                let offs = self.offsets(offsets)?;
                let buf = self.buf(*b).clone();
                let t = self.tensor_mut(*tensor);
                each_data!(&buf.data, s => each_data!(&mut t.data, d =>
                    tiles::copy_to_global(s, &buf.shape, d, &t.shape, &offs)));
            }
            (Tile::Buffer(a), Tile::Buffer(b)) => {
                let src = self.buf(*a).data.clone();
                let dst = &mut self.bufs[*b].as_mut().expect("allocated").data;
                each_data!(&src, s => each_data!(dst, d => tiles::copy_buf(s, d)));
            }
            (Tile::Region { .. }, Tile::Region { .. }) => {
                unreachable!("a copy between two regions: validation refuses it")
            }
        }
        Ok(())
    }
}

/// `gemm`: operands of one dtype, the accumulator of any; `ta`, `tb` their `.t()` marks.
fn gemm(a: &Data, ashape: [i64; 2], ta: bool, b: &Data, bshape: [i64; 2], tb: bool, c: &mut Data) {
    macro_rules! with_c {
        ($a:expr, $b:expr) => {
            each_data!(c, c => tiles::gemm($a, ashape, ta, $b, bshape, tb, c))
        };
    }
    match (a, b) {
        (Data::F16(a), Data::F16(b)) => with_c!(a, b),
        (Data::Bf16(a), Data::Bf16(b)) => with_c!(a, b),
        (Data::F32(a), Data::F32(b)) => with_c!(a, b),
        (Data::F64(a), Data::F64(b)) => with_c!(a, b),
        (Data::I32(a), Data::I32(b)) => with_c!(a, b),
        (Data::U32(a), Data::U32(b)) => with_c!(a, b),
        (Data::U8(a), Data::U8(b)) => with_c!(a, b),
        _ => unreachable!("gemm operands of two dtypes: validation refuses it"),
    }
}

/// `reduce_sum` / `reduce_max` of `s` along `dim` into `d` (same dtype).
fn reduce(op: ReduceOp, s: &Array, d: &mut Data, dim: usize) {
    macro_rules! arms {
        ($($v:ident),*) => {
            match (&s.data, d) {
                $((Data::$v(s_), Data::$v(d)) => match op {
                    ReduceOp::Sum => tiles::reduce_sum(s_, &s.shape, d, dim),
                    ReduceOp::Max => tiles::reduce_max(s_, &s.shape, d, dim),
                },)*
                _ => unreachable!("a reduction across dtypes: validation refuses it"),
            }
        };
    }
    arms!(F16, Bf16, F32, F64, I32, U32, U8)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An element access out of bounds is the CPU backend's error, naming the tensor, index and
    /// shape; one in bounds stores.
    #[test]
    fn out_of_bounds_is_the_cpu_backends_error() {
        let k = crate::compile::to_ir(
            "#[tile_kernel(grid = [1], threads = 32)]\n\
             fn oob(x: &Tensor<f32, (N,)>, y: &mut Tensor<f32, (N,)>) {\n\
                 for i in parallel(4) { y[i] = x[i + 2]; }\n\
             }",
        )
        .unwrap();
        let t = |v: Vec<f32>| {
            Arg::Tensor(Array {
                shape: vec![v.len() as i64],
                data: Data::F32(v),
            })
        };
        let mut args = vec![t(vec![1.0, 2.0, 3.0, 4.0, 5.0]), t(vec![0.0; 5])];
        match run(&k, 0, &mut args) {
            Err(Error::OutOfBounds {
                buffer,
                index,
                shape,
                ..
            }) => assert_eq!((buffer, index, shape), ("x", vec![5], vec![5])),
            other => panic!("{other:?}"),
        }
        let Arg::Tensor(y) = &args[1] else {
            unreachable!()
        };
        assert_eq!(
            y.data.bits()[..3],
            [3.0f32, 4.0, 5.0].map(|v| v.to_bits() as u64)
        );
    }
}
