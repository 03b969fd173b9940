//! Launch arguments for a generated kernel: random inputs (small multiples of 1/4, exact in
//! every dtype), outputs as the runtime allocates them (poison), scalars; in parameter order,
//! for a kernel's type-erased `launch_dyn`.

use crate::gen::ast::{Kernel, ParamKind, Ty};
use crate::gen::rng::Rng;
use tilelang::{bf16, f16, AnyScalar, AnyTensor, Arg, Device, Element, Tensor};

/// One launch argument, owned.
pub enum Slot {
    In(AnyTensor),
    /// An output and its bits before the launch (the allocation's poison); `None` for an in-out
    /// tensor, which is filled like an input.
    Out(AnyTensor, Option<Vec<u64>>),
    Scalar(AnyScalar),
}

fn upload<T: Element>(dev: &Device, v: Vec<T>, shape: &[usize]) -> Tensor<T> {
    dev.upload(&v, shape).expect("upload")
}

/// A tensor of `shape` of random values in -8..=8 in steps of 1/4 (integers: scaled by 4, the
/// unsigned ones offset by 128).
pub fn input(dev: &Device, rng: &mut Rng, ty: Ty, shape: &[usize]) -> AnyTensor {
    let n: usize = shape.iter().product();
    let v: Vec<f64> = (0..n)
        .map(|_| (rng.below(65) as f64 - 32.0) * 0.25)
        .collect();
    match ty {
        Ty::F16 => upload(dev, v.iter().map(|x| f16::from_f64(*x)).collect(), shape).into(),
        Ty::Bf16 => upload(dev, v.iter().map(|x| bf16::from_f64(*x)).collect(), shape).into(),
        Ty::F32 => upload(dev, v.iter().map(|x| *x as f32).collect(), shape).into(),
        Ty::F64 => upload(dev, v.clone(), shape).into(),
        Ty::I32 => upload(dev, v.iter().map(|x| (x * 4.0) as i32).collect(), shape).into(),
        Ty::U32 => upload(
            dev,
            v.iter().map(|x| (x * 4.0 + 128.0) as u32).collect(),
            shape,
        )
        .into(),
        _ => upload(
            dev,
            v.iter().map(|x| (x * 4.0 + 128.0) as u8).collect(),
            shape,
        )
        .into(),
    }
}

/// A new tensor as the runtime allocates it (poison).
pub fn output(dev: &Device, ty: Ty, shape: &[usize]) -> AnyTensor {
    fn alloc<T: Element>(dev: &Device, shape: &[usize]) -> Tensor<T> {
        dev.alloc(shape).expect("alloc")
    }
    match ty {
        Ty::F16 => alloc::<f16>(dev, shape).into(),
        Ty::Bf16 => alloc::<bf16>(dev, shape).into(),
        Ty::F32 => alloc::<f32>(dev, shape).into(),
        Ty::F64 => alloc::<f64>(dev, shape).into(),
        Ty::I32 => alloc::<i32>(dev, shape).into(),
        Ty::U32 => alloc::<u32>(dev, shape).into(),
        _ => alloc::<u8>(dev, shape).into(),
    }
}

/// A random scalar in -4..=4 (unsigned: 0..=4).
pub fn scalar(rng: &mut Rng, ty: Ty) -> AnyScalar {
    let v = rng.below(9) as f64 - 4.0;
    match ty {
        Ty::F16 => AnyScalar::F16(f16::from_f64(v)),
        Ty::Bf16 => AnyScalar::Bf16(bf16::from_f64(v)),
        Ty::F32 => AnyScalar::F32(v as f32),
        Ty::F64 => AnyScalar::F64(v),
        Ty::I32 => AnyScalar::I32(v as i32),
        Ty::U32 => AnyScalar::U32(v.abs() as u32),
        _ => AnyScalar::U8(v.abs() as u8),
    }
}

/// Each element's bits.
pub fn bits(t: &AnyTensor) -> Vec<u64> {
    array(t).data.bits()
}

/// The arguments of `k`, in parameter order, with each shape symbol's extent from `size`.
pub fn slots(dev: &Device, k: &Kernel, size: impl Fn(&str) -> usize, rng: &mut Rng) -> Vec<Slot> {
    k.params
        .iter()
        .map(|p| match &p.kind {
            ParamKind::Tensor {
                dtype,
                dims,
                mutable,
                read,
            } => {
                let shape: Vec<usize> = dims.iter().map(|d| size(d)).collect();
                if *read {
                    Slot::Out(input(dev, rng, *dtype, &shape), None)
                } else if *mutable {
                    let t = output(dev, *dtype, &shape);
                    let poison = bits(&t);
                    Slot::Out(t, Some(poison))
                } else {
                    Slot::In(input(dev, rng, *dtype, &shape))
                }
            }
            ParamKind::Scalar(ty) => Slot::Scalar(scalar(rng, *ty)),
        })
        .collect()
}

/// The launch's arguments, borrowing `slots`.
pub fn args(slots: &mut [Slot]) -> Vec<Arg<'_>> {
    slots
        .iter_mut()
        .map(|s| match s {
            Slot::In(t) => Arg::In(t),
            Slot::Out(t, _) => Arg::Out(t),
            Slot::Scalar(v) => Arg::Scalar(*v),
        })
        .collect()
}

/// A tensor's elements and shape, for the IR evaluator.
pub fn array(t: &AnyTensor) -> crate::eval::Array {
    use crate::eval::{Array, Data};
    fn of<T: Element>(t: &Tensor<T>, data: impl Fn(Vec<T>) -> Data) -> Array {
        Array {
            data: data(t.to_vec().expect("download")),
            shape: t.shape().iter().map(|&d| d as i64).collect(),
        }
    }
    match t {
        AnyTensor::F16(t) => of(t, Data::F16),
        AnyTensor::Bf16(t) => of(t, Data::Bf16),
        AnyTensor::F32(t) => of(t, Data::F32),
        AnyTensor::F64(t) => of(t, Data::F64),
        AnyTensor::I32(t) => of(t, Data::I32),
        AnyTensor::U32(t) => of(t, Data::U32),
        AnyTensor::U8(t) => of(t, Data::U8),
    }
}

/// The evaluator's arguments for `slots`, copied.
pub fn eval_args(slots: &[Slot]) -> Vec<crate::eval::Arg> {
    slots
        .iter()
        .map(|s| match s {
            Slot::In(t) | Slot::Out(t, _) => crate::eval::Arg::Tensor(array(t)),
            Slot::Scalar(v) => crate::eval::Arg::Scalar(*v),
        })
        .collect()
}
