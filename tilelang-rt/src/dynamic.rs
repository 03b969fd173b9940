//! Type-erased launch arguments, for code that launches kernels chosen at run time (autotuners,
//! benchmark drivers, bindings): the dtype of each tensor is checked at launch instead of by the
//! Rust type system, and a mismatch is [`Error::DtypeMismatch`].

use crate::element::{Dtype, Element};
use crate::error::{Error, Result};
use crate::tensor::Tensor;
use half::{bf16, f16};

/// A tensor of any element type.
#[derive(Debug)]
pub enum AnyTensor {
    F16(Tensor<f16>),
    Bf16(Tensor<bf16>),
    F32(Tensor<f32>),
    F64(Tensor<f64>),
    I32(Tensor<i32>),
    U32(Tensor<u32>),
    U8(Tensor<u8>),
}

/// Conversions between [`Tensor<T>`] and [`AnyTensor`].
pub trait Erase: Element {
    fn erase(t: Tensor<Self>) -> AnyTensor;
    fn view(t: &AnyTensor) -> Option<&Tensor<Self>>;
    fn view_mut(t: &mut AnyTensor) -> Option<&mut Tensor<Self>>;
}

macro_rules! erase {
    ($t:ty, $v:ident) => {
        impl Erase for $t {
            fn erase(t: Tensor<Self>) -> AnyTensor {
                AnyTensor::$v(t)
            }
            fn view(t: &AnyTensor) -> Option<&Tensor<Self>> {
                match t {
                    AnyTensor::$v(x) => Some(x),
                    _ => None,
                }
            }
            fn view_mut(t: &mut AnyTensor) -> Option<&mut Tensor<Self>> {
                match t {
                    AnyTensor::$v(x) => Some(x),
                    _ => None,
                }
            }
        }
        impl From<Tensor<$t>> for AnyTensor {
            fn from(t: Tensor<$t>) -> AnyTensor {
                AnyTensor::$v(t)
            }
        }
    };
}
erase!(f16, F16);
erase!(bf16, Bf16);
erase!(f32, F32);
erase!(f64, F64);
erase!(i32, I32);
erase!(u32, U32);
erase!(u8, U8);

impl AnyTensor {
    pub fn dtype(&self) -> Dtype {
        match self {
            AnyTensor::F16(_) => Dtype::F16,
            AnyTensor::Bf16(_) => Dtype::Bf16,
            AnyTensor::F32(_) => Dtype::F32,
            AnyTensor::F64(_) => Dtype::F64,
            AnyTensor::I32(_) => Dtype::I32,
            AnyTensor::U32(_) => Dtype::U32,
            AnyTensor::U8(_) => Dtype::U8,
        }
    }

    pub fn get<T: Erase>(&self) -> Option<&Tensor<T>> {
        T::view(self)
    }

    pub fn get_mut<T: Erase>(&mut self) -> Option<&mut Tensor<T>> {
        T::view_mut(self)
    }
}

/// A scalar argument of any type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AnyScalar {
    F16(f16),
    Bf16(bf16),
    F32(f32),
    F64(f64),
    I32(i32),
    U32(u32),
    U8(u8),
    Usize(usize),
}

/// One argument of a type-erased launch, in the kernel's parameter order.
#[derive(Debug)]
pub enum Arg<'a> {
    /// For a `&Tensor` parameter.
    In(&'a AnyTensor),
    /// For a `&mut Tensor` parameter.
    Out(&'a mut AnyTensor),
    Scalar(AnyScalar),
}

impl Arg<'_> {
    fn kind(&self) -> String {
        match self {
            Arg::In(t) => format!("an input tensor of {}", t.dtype()),
            Arg::Out(t) => format!("an output tensor of {}", t.dtype()),
            Arg::Scalar(s) => format!("the scalar {s:?}"),
        }
    }
}

/// Unpacks the arguments of a type-erased launch; used by generated `launch_dyn` functions.
pub struct Args<'a> {
    kernel: &'static str,
    args: std::vec::IntoIter<Arg<'a>>,
}

impl<'a> Args<'a> {
    pub fn new(kernel: &'static str, args: Vec<Arg<'a>>, expected: usize) -> Result<Args<'a>> {
        if args.len() != expected {
            return Err(Error::BadArgument {
                kernel,
                arg: "(all)",
                expected: format!("{expected} arguments"),
                found: format!("{}", args.len()),
            });
        }
        Ok(Args {
            kernel,
            args: args.into_iter(),
        })
    }

    pub fn input<T: Erase>(&mut self, name: &'static str) -> Result<&'a Tensor<T>> {
        match self.args.next() {
            Some(Arg::In(t)) => {
                let found = t.dtype();
                T::view(t).ok_or(Error::DtypeMismatch {
                    kernel: self.kernel,
                    tensor: name,
                    expected: T::DTYPE,
                    found,
                })
            }
            other => Err(self.bad(name, format!("an input tensor of {}", T::DTYPE), other)),
        }
    }

    pub fn output<T: Erase>(&mut self, name: &'static str) -> Result<&'a mut Tensor<T>> {
        match self.args.next() {
            Some(Arg::Out(t)) => {
                let found = t.dtype();
                T::view_mut(t).ok_or(Error::DtypeMismatch {
                    kernel: self.kernel,
                    tensor: name,
                    expected: T::DTYPE,
                    found,
                })
            }
            other => Err(self.bad(name, format!("an output tensor of {}", T::DTYPE), other)),
        }
    }

    pub fn scalar<T: FromScalar>(&mut self, name: &'static str) -> Result<T> {
        match self.args.next() {
            Some(Arg::Scalar(s)) => T::from_scalar(s).ok_or_else(|| {
                self.bad(
                    name,
                    format!("a scalar of type {}", T::NAME),
                    Some(Arg::Scalar(s)),
                )
            }),
            other => Err(self.bad(name, format!("a scalar of type {}", T::NAME), other)),
        }
    }

    fn bad(&self, name: &'static str, expected: String, found: Option<Arg<'_>>) -> Error {
        Error::BadArgument {
            kernel: self.kernel,
            arg: name,
            expected,
            found: found.map_or("nothing".into(), |a| a.kind()),
        }
    }
}

/// Scalar types a kernel parameter may have.
pub trait FromScalar: Sized {
    const NAME: &'static str;
    fn from_scalar(s: AnyScalar) -> Option<Self>;
}

macro_rules! from_scalar {
    ($t:ty, $v:ident, $n:expr) => {
        impl FromScalar for $t {
            const NAME: &'static str = $n;
            fn from_scalar(s: AnyScalar) -> Option<Self> {
                match s {
                    AnyScalar::$v(x) => Some(x),
                    _ => None,
                }
            }
        }
    };
}
from_scalar!(f16, F16, "f16");
from_scalar!(bf16, Bf16, "bf16");
from_scalar!(f32, F32, "f32");
from_scalar!(f64, F64, "f64");
from_scalar!(i32, I32, "i32");
from_scalar!(u32, U32, "u32");
from_scalar!(u8, U8, "u8");
from_scalar!(usize, Usize, "usize");
