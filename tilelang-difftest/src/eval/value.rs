//! The evaluator's run-time values: one scalar of any of the language's types ([`Value`]) and
//! the elements of a tensor or tile buffer ([`Data`]). Every operation dispatches by type to
//! the CPU backend's own function (`tilelang::__private::cpu`), so the arithmetic is the
//! macro's, bit for bit.

use tilelang::__private::cpu::{self, Scalar};
use tilelang::{bf16, f16, AnyScalar, Element, Error};
use tilelang_codegen::ir::{BinOp, Dtype, MathFn};

/// A scalar of one of the language's types.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    F16(f16),
    Bf16(bf16),
    F32(f32),
    F64(f64),
    I32(i32),
    U32(u32),
    U8(u8),
    Bool(bool),
    Index(i64),
}

/// Elements of one dtype, row-major.
#[derive(Clone, Debug)]
pub enum Data {
    F16(Vec<f16>),
    Bf16(Vec<bf16>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    I32(Vec<i32>),
    U32(Vec<u32>),
    U8(Vec<u8>),
}

/// Runs `$body` with `$v` bound to the typed vector of a [`Data`].
macro_rules! each_data {
    ($d:expr, $v:ident => $body:expr) => {
        match $d {
            Data::F16($v) => $body,
            Data::Bf16($v) => $body,
            Data::F32($v) => $body,
            Data::F64($v) => $body,
            Data::I32($v) => $body,
            Data::U32($v) => $body,
            Data::U8($v) => $body,
        }
    };
}
pub(crate) use each_data;

/// `$op` on two values of the same variant among those listed, wrapped back in that variant.
macro_rules! same {
    ($a:expr, $b:expr, |$x:ident, $y:ident| $e:expr, [$($v:ident),*]) => {
        match ($a, $b) {
            $((Value::$v($x), Value::$v($y)) => Value::$v($e),)*
            (a, b) => unreachable!("operands {a:?} and {b:?}: the IR is typed"),
        }
    };
}

/// A comparison or logical operation on two values of the same variant: a `bool` (`bool`s
/// compare as the CPU backend's `false < true`).
macro_rules! test {
    ($a:expr, $b:expr, |$x:ident, $y:ident| $e:expr, [$($v:ident),*]) => {
        match ($a, $b) {
            $((Value::$v($x), Value::$v($y)) => Value::Bool($e),)*
            (a, b) => unreachable!("operands {a:?} and {b:?}: the IR is typed"),
        }
    };
}

/// `$e` on one value of the variants listed.
macro_rules! one {
    ($a:expr, |$x:ident| $e:expr, [$($v:ident),*]) => {
        match $a {
            $(Value::$v($x) => Value::$v($e),)*
            a => unreachable!("operand {a:?}: the IR is typed"),
        }
    };
}

/// `$e` with `$x` bound to a value's payload, whatever its variant.
macro_rules! any {
    ($a:expr, |$x:ident| $e:expr) => {
        match $a {
            Value::F16($x) => $e,
            Value::Bf16($x) => $e,
            Value::F32($x) => $e,
            Value::F64($x) => $e,
            Value::I32($x) => $e,
            Value::U32($x) => $e,
            Value::U8($x) => $e,
            Value::Bool($x) => $e,
            Value::Index($x) => $e,
        }
    };
}

impl Value {
    /// `v as ty` for a value of a Rust scalar type, as the CPU backend's `cast` converts it.
    fn cast_from<A: Scalar>(a: A, ty: Dtype) -> Value {
        match ty {
            Dtype::F16 => Value::F16(cpu::cast(a)),
            Dtype::Bf16 => Value::Bf16(cpu::cast(a)),
            Dtype::F32 => Value::F32(cpu::cast(a)),
            Dtype::F64 => Value::F64(cpu::cast(a)),
            Dtype::I32 => Value::I32(cpu::cast(a)),
            Dtype::U32 => Value::U32(cpu::cast(a)),
            Dtype::U8 => Value::U8(cpu::cast(a)),
            Dtype::Bool => Value::Bool(cpu::cast(a)),
            Dtype::Index => Value::Index(cpu::cast(a)),
        }
    }

    /// `self as ty` in the kernel language.
    pub fn cast(self, ty: Dtype) -> Value {
        any!(self, |x| Value::cast_from(x, ty))
    }

    /// An integer literal of type `ty` (`emit_cpu::int_lit`).
    pub fn int(v: i128, ty: Dtype) -> Value {
        match ty {
            Dtype::Index => Value::Index(v as i64),
            Dtype::I32 => Value::I32(v as i32),
            Dtype::U32 => Value::U32(v as u32),
            Dtype::U8 => Value::U8(v as u8),
            other => Value::float(v as f64, other),
        }
    }

    /// A float literal of type `ty` (`emit_cpu::float_lit`: half types rounded once from f64).
    pub fn float(v: f64, ty: Dtype) -> Value {
        match ty {
            Dtype::F16 => Value::F16(f16::from_bits(cpu::round_f64(v, 5, 10) as u16)),
            Dtype::Bf16 => Value::Bf16(bf16::from_bits(cpu::round_f64(v, 8, 7) as u16)),
            Dtype::F32 => Value::F32(cpu::lit(v)),
            Dtype::F64 => Value::F64(cpu::lit(v)),
            Dtype::I32 => Value::I32(cpu::lit(v)),
            Dtype::U32 => Value::U32(cpu::lit(v)),
            Dtype::U8 => Value::U8(cpu::lit(v)),
            Dtype::Bool => Value::Bool(cpu::lit(v)),
            Dtype::Index => Value::Index(cpu::lit(v)),
        }
    }

    /// A scalar argument.
    pub fn of_scalar(s: AnyScalar) -> Value {
        match s {
            AnyScalar::F16(v) => Value::F16(v),
            AnyScalar::Bf16(v) => Value::Bf16(v),
            AnyScalar::F32(v) => Value::F32(v),
            AnyScalar::F64(v) => Value::F64(v),
            AnyScalar::I32(v) => Value::I32(v),
            AnyScalar::U32(v) => Value::U32(v),
            AnyScalar::U8(v) => Value::U8(v),
            AnyScalar::Usize(v) => Value::Index(v as i64),
        }
    }

    /// An index-typed value as `i64` (loop variables, indices, extents).
    pub fn index(self) -> i64 {
        match self {
            Value::Index(v) => v,
            other => unreachable!("an index of type {other:?}: the IR is typed"),
        }
    }

    pub fn truth(self) -> bool {
        match self {
            Value::Bool(b) => b,
            other => unreachable!("a condition of type {other:?}: the IR is typed"),
        }
    }

    /// `a op b` for every operator but `&&` and `||` (which the caller short-circuits).
    #[allow(clippy::bool_comparison)]
    pub fn binary(op: BinOp, a: Value, b: Value, kernel: &'static str) -> Result<Value, Error> {
        Ok(match op {
            BinOp::Add => same!(
                a,
                b,
                |x, y| cpu::add(x, y),
                [F16, Bf16, F32, F64, I32, U32, U8, Index]
            ),
            BinOp::Sub => same!(
                a,
                b,
                |x, y| cpu::sub(x, y),
                [F16, Bf16, F32, F64, I32, U32, U8, Index]
            ),
            BinOp::Mul => same!(
                a,
                b,
                |x, y| cpu::mul(x, y),
                [F16, Bf16, F32, F64, I32, U32, U8, Index]
            ),
            BinOp::Div => same!(
                a,
                b,
                |x, y| cpu::div(x, y, kernel)?,
                [F16, Bf16, F32, F64, I32, U32, U8, Index]
            ),
            BinOp::Rem => same!(
                a,
                b,
                |x, y| cpu::rem(x, y, kernel)?,
                [F16, Bf16, F32, F64, I32, U32, U8, Index]
            ),
            BinOp::Shl => same!(a, b, |x, y| cpu::shl(x, y), [I32, U32, U8, Index]),
            BinOp::Shr => same!(a, b, |x, y| cpu::shr(x, y), [I32, U32, U8, Index]),
            BinOp::BitAnd => same!(a, b, |x, y| x & y, [I32, U32, U8, Index, Bool]),
            BinOp::BitOr => same!(a, b, |x, y| x | y, [I32, U32, U8, Index, Bool]),
            BinOp::BitXor => same!(a, b, |x, y| x ^ y, [I32, U32, U8, Index, Bool]),
            BinOp::Eq => test!(
                a,
                b,
                |x, y| x == y,
                [F16, Bf16, F32, F64, I32, U32, U8, Index, Bool]
            ),
            BinOp::Ne => test!(
                a,
                b,
                |x, y| x != y,
                [F16, Bf16, F32, F64, I32, U32, U8, Index, Bool]
            ),
            BinOp::Lt => test!(
                a,
                b,
                |x, y| x < y,
                [F16, Bf16, F32, F64, I32, U32, U8, Index, Bool]
            ),
            BinOp::Le => test!(
                a,
                b,
                |x, y| x <= y,
                [F16, Bf16, F32, F64, I32, U32, U8, Index, Bool]
            ),
            BinOp::Gt => test!(
                a,
                b,
                |x, y| x > y,
                [F16, Bf16, F32, F64, I32, U32, U8, Index, Bool]
            ),
            BinOp::Ge => test!(
                a,
                b,
                |x, y| x >= y,
                [F16, Bf16, F32, F64, I32, U32, U8, Index, Bool]
            ),
            BinOp::And => test!(a, b, |x, y| x && y, [Bool]),
            BinOp::Or => test!(a, b, |x, y| x || y, [Bool]),
        })
    }

    /// `-a`.
    pub fn negate(self) -> Value {
        one!(
            self,
            |x| cpu::neg(x),
            [F16, Bf16, F32, F64, I32, U32, U8, Index]
        )
    }

    /// `!a`: logical on `bool`, bitwise on integers.
    pub fn invert(self) -> Value {
        one!(self, |x| !x, [Bool, I32, U32, U8, Index])
    }

    /// `a.div_ceil(b)`.
    pub fn div_ceil(a: Value, b: Value, kernel: &'static str) -> Result<Value, Error> {
        Ok(same!(
            a,
            b,
            |x, y| cpu::div_ceil(x, y, kernel)?,
            [F16, Bf16, F32, F64, I32, U32, U8, Index]
        ))
    }

    /// A math function on its arguments.
    pub fn math(f: MathFn, a: &[Value]) -> Value {
        macro_rules! float1 {
            ($f:ident) => {
                one!(a[0], |x| cpu::$f(x), [F16, Bf16, F32, F64])
            };
        }
        match f {
            MathFn::Exp => float1!(exp),
            MathFn::Exp2 => float1!(exp2),
            MathFn::Log => float1!(log),
            MathFn::Sqrt => float1!(sqrt),
            MathFn::Rsqrt => float1!(rsqrt),
            MathFn::Tanh => float1!(tanh),
            MathFn::Erf => float1!(erf),
            MathFn::Sigmoid => float1!(sigmoid),
            MathFn::Sin => float1!(sin),
            MathFn::Cos => float1!(cos),
            MathFn::Floor => float1!(floor),
            MathFn::Ceil => float1!(ceil),
            MathFn::Abs => one!(
                a[0],
                |x| cpu::abs(x),
                [F16, Bf16, F32, F64, I32, U32, U8, Index]
            ),
            MathFn::Pow => same!(a[0], a[1], |x, y| cpu::pow(x, y), [F16, Bf16, F32, F64]),
            MathFn::Max => same!(
                a[0],
                a[1],
                |x, y| cpu::max(x, y),
                [F16, Bf16, F32, F64, I32, U32, U8, Index, Bool]
            ),
            MathFn::Min => same!(
                a[0],
                a[1],
                |x, y| cpu::min(x, y),
                [F16, Bf16, F32, F64, I32, U32, U8, Index, Bool]
            ),
            MathFn::Fma => match (a[0], a[1], a[2]) {
                (Value::F16(x), Value::F16(y), Value::F16(z)) => Value::F16(cpu::fma(x, y, z)),
                (Value::Bf16(x), Value::Bf16(y), Value::Bf16(z)) => Value::Bf16(cpu::fma(x, y, z)),
                (Value::F32(x), Value::F32(y), Value::F32(z)) => Value::F32(cpu::fma(x, y, z)),
                (Value::F64(x), Value::F64(y), Value::F64(z)) => Value::F64(cpu::fma(x, y, z)),
                other => unreachable!("fma of {other:?}: the IR is typed"),
            },
        }
    }
}

impl Data {
    /// `n` elements of `ty` holding the CPU backend's poison (fresh buffers).
    pub fn poison(ty: Dtype, n: usize) -> Data {
        fn p<T: Element>(n: usize) -> Vec<T> {
            vec![T::POISON; n]
        }
        match ty {
            Dtype::F16 => Data::F16(p(n)),
            Dtype::Bf16 => Data::Bf16(p(n)),
            Dtype::F32 => Data::F32(p(n)),
            Dtype::F64 => Data::F64(p(n)),
            Dtype::I32 => Data::I32(p(n)),
            Dtype::U32 => Data::U32(p(n)),
            Dtype::U8 => Data::U8(p(n)),
            other => unreachable!("a buffer of {other:?}: validation refuses it"),
        }
    }

    pub fn len(&self) -> usize {
        each_data!(self, v => v.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i`.
    pub fn get(&self, i: usize) -> Value {
        match self {
            Data::F16(v) => Value::F16(v[i]),
            Data::Bf16(v) => Value::Bf16(v[i]),
            Data::F32(v) => Value::F32(v[i]),
            Data::F64(v) => Value::F64(v[i]),
            Data::I32(v) => Value::I32(v[i]),
            Data::U32(v) => Value::U32(v[i]),
            Data::U8(v) => Value::U8(v[i]),
        }
    }

    /// Sets element `i` to `x`, a value of the same type.
    pub fn set(&mut self, i: usize, x: Value) {
        match (self, x) {
            (Data::F16(v), Value::F16(x)) => v[i] = x,
            (Data::Bf16(v), Value::Bf16(x)) => v[i] = x,
            (Data::F32(v), Value::F32(x)) => v[i] = x,
            (Data::F64(v), Value::F64(x)) => v[i] = x,
            (Data::I32(v), Value::I32(x)) => v[i] = x,
            (Data::U32(v), Value::U32(x)) => v[i] = x,
            (Data::U8(v), Value::U8(x)) => v[i] = x,
            (_, x) => unreachable!("a store of {x:?} of another type: the IR is typed"),
        }
    }

    /// Every element set to `x`.
    pub fn fill(&mut self, x: Value) {
        for i in 0..self.len() {
            self.set(i, x);
        }
    }

    /// The elements as little-endian bytes, as a device holds them.
    pub fn le_bytes(&self) -> Vec<u8> {
        each_data!(self, v => v.iter().flat_map(|x| x.to_le_bytes()).collect())
    }

    /// Elements of this one's dtype read from little-endian `bytes` (a whole number of them).
    pub fn like_le_bytes(&self, bytes: &[u8]) -> Data {
        macro_rules! read {
            ($t:ty, $var:ident) => {
                Data::$var(
                    bytes
                        .chunks_exact(std::mem::size_of::<$t>())
                        .map(|c| <$t>::from_le_bytes(c.try_into().unwrap()))
                        .collect(),
                )
            };
        }
        match self {
            Data::F16(_) => read!(f16, F16),
            Data::Bf16(_) => read!(bf16, Bf16),
            Data::F32(_) => read!(f32, F32),
            Data::F64(_) => read!(f64, F64),
            Data::I32(_) => read!(i32, I32),
            Data::U32(_) => read!(u32, U32),
            Data::U8(_) => read!(u8, U8),
        }
    }

    /// Each element's bits, widened (for comparisons that must not equate NaNs or ±0).
    pub fn bits(&self) -> Vec<u64> {
        match self {
            Data::F16(v) => v.iter().map(|x| x.to_bits() as u64).collect(),
            Data::Bf16(v) => v.iter().map(|x| x.to_bits() as u64).collect(),
            Data::F32(v) => v.iter().map(|x| x.to_bits() as u64).collect(),
            Data::F64(v) => v.iter().map(|x| x.to_bits()).collect(),
            Data::I32(v) => v.iter().map(|x| *x as u32 as u64).collect(),
            Data::U32(v) => v.iter().map(|x| *x as u64).collect(),
            Data::U8(v) => v.iter().map(|x| *x as u64).collect(),
        }
    }
}
