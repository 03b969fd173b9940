//! The scalars the kernel language computes with (the element types, `bool` and the index
//! type) and their arithmetic: conversions with one rounding, wrapping integers, IEEE floats.
//! Beneath [`crate::element`], whose element types are such scalars; [`crate::cpu`] computes
//! with them and re-exports them.

use half::{bf16, f16};

/// A scalar the kernel language computes with: the element types, `bool` and the index type.
pub trait Scalar: Copy + PartialOrd + std::fmt::Debug + 'static {
    const IS_FLOAT: bool;
    /// f16, bf16 and f32: widening to f32 is exact, so one rounding from f32 is correct.
    const NARROW_FLOAT: bool = false;
    fn to_f32(self) -> f32 {
        self.to_f64() as f32
    }
    fn from_f32(v: f32) -> Self {
        Self::from_f64(v as f64)
    }
    fn to_f64(self) -> f64;
    fn from_f64(v: f64) -> Self;
    fn to_i64(self) -> i64;
    fn from_i64(v: i64) -> Self;
}

macro_rules! scalar_float {
    ($t:ty, $to:expr, $from:expr, $narrow:expr, $to32:expr, $from32:expr) => {
        impl Scalar for $t {
            const IS_FLOAT: bool = true;
            const NARROW_FLOAT: bool = $narrow;
            #[inline(always)]
            fn to_f32(self) -> f32 {
                $to32(self)
            }
            #[inline(always)]
            fn from_f32(v: f32) -> Self {
                $from32(v)
            }
            fn to_f64(self) -> f64 {
                $to(self)
            }
            fn from_f64(v: f64) -> Self {
                $from(v)
            }
            fn to_i64(self) -> i64 {
                $to(self) as i64
            }
            fn from_i64(v: i64) -> Self {
                $from(v as f64)
            }
        }
    };
}
/// Rounds an f64 to nearest-even in a binary format with `eb` exponent and `mb` mantissa bits,
/// once (`half`'s conversions go through f32 and can round twice). Returns the bit pattern.
pub const fn round_f64(x: f64, eb: u32, mb: u32) -> u32 {
    let b = x.to_bits();
    let sign = ((b >> 63) as u32) << (eb + mb);
    let exp = ((b >> 52) & 0x7ff) as i64;
    let man = b & ((1u64 << 52) - 1);
    let max_e = (1i64 << eb) - 1;
    if exp == 0x7ff {
        // Infinity, or a quiet NaN keeping the payload's top bits.
        return sign
            | ((max_e as u32) << mb)
            | if man == 0 {
                0
            } else {
                (1 << (mb - 1)) | (man >> (52 - mb)) as u32
            };
    }
    if exp == 0 && man == 0 {
        return sign;
    }
    let bias = (1i64 << (eb - 1)) - 1;
    let e = exp - 1023 + bias;
    // The significand with its implicit bit (f64 subnormals are far below every target's range).
    let full = man | (1u64 << 52);
    let (base, shift) = if e >= 1 {
        ((e as u64) << mb, 52 - mb as i64)
    } else {
        (0, 52 - mb as i64 + 1 - e)
    };
    if shift >= 64 {
        return sign;
    }
    let kept = if e >= 1 { man >> shift } else { full >> shift };
    let rem = if e >= 1 {
        man & ((1u64 << shift) - 1)
    } else {
        full & ((1u64 << shift) - 1)
    };
    let halfway = 1u64 << (shift - 1);
    let mut r = base | kept;
    if rem > halfway || (rem == halfway && kept & 1 == 1) {
        r += 1; // a carry into the exponent is the correct result, up to infinity
    }
    if r >= (max_e as u64) << mb {
        return sign | ((max_e as u32) << mb);
    }
    sign | r as u32
}

scalar_float!(
    f16,
    |x: f16| x.to_f64(),
    |v: f64| f16::from_bits(round_f64(v, 5, 10) as u16),
    true,
    |x: f16| x.to_f32(),
    f16::from_f32
);
scalar_float!(
    bf16,
    |x: bf16| x.to_f64(),
    |v: f64| bf16::from_bits(round_f64(v, 8, 7) as u16),
    true,
    |x: bf16| x.to_f32(),
    bf16::from_f32
);
scalar_float!(
    f32,
    |x: f32| x as f64,
    |v: f64| v as f32,
    true,
    |x: f32| x,
    |x: f32| x
);
scalar_float!(
    f64,
    |x: f64| x,
    |v: f64| v,
    false,
    |x: f64| x as f32,
    |x: f32| x as f64
);

macro_rules! scalar_int {
    ($t:ty) => {
        impl Scalar for $t {
            const IS_FLOAT: bool = false;
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            fn to_i64(self) -> i64 {
                self as i64
            }
            fn from_i64(v: i64) -> Self {
                v as $t
            }
        }
    };
}
scalar_int!(i32);
scalar_int!(u32);
scalar_int!(u8);
scalar_int!(i64);

impl Scalar for bool {
    const IS_FLOAT: bool = false;
    fn to_f64(self) -> f64 {
        self as u8 as f64
    }
    fn from_f64(v: f64) -> Self {
        v != 0.0
    }
    fn to_i64(self) -> i64 {
        self as i64
    }
    fn from_i64(v: i64) -> Self {
        v != 0
    }
}

/// Arithmetic with the kernel language's rules: wrapping integers, IEEE floats.
pub trait Arith: Scalar {
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn div(self, o: Self) -> Option<Self>;
    fn rem(self, o: Self) -> Option<Self>;
    fn neg(self) -> Self;
}

macro_rules! arith_float {
    ($t:ty) => {
        impl Arith for $t {
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                self + o
            }
            #[inline(always)]
            fn sub(self, o: Self) -> Self {
                self - o
            }
            #[inline(always)]
            fn mul(self, o: Self) -> Self {
                self * o
            }
            #[inline(always)]
            fn div(self, o: Self) -> Option<Self> {
                Some(self / o)
            }
            #[inline(always)]
            fn rem(self, o: Self) -> Option<Self> {
                Some(self % o)
            }
            #[inline(always)]
            fn neg(self) -> Self {
                -self
            }
        }
    };
}
arith_float!(f16);
arith_float!(bf16);
arith_float!(f32);
arith_float!(f64);

macro_rules! arith_int {
    ($t:ty) => {
        impl Arith for $t {
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            #[inline(always)]
            fn sub(self, o: Self) -> Self {
                self.wrapping_sub(o)
            }
            #[inline(always)]
            fn mul(self, o: Self) -> Self {
                self.wrapping_mul(o)
            }
            #[inline(always)]
            fn div(self, o: Self) -> Option<Self> {
                (o != 0).then(|| self.wrapping_div(o))
            }
            #[inline(always)]
            fn rem(self, o: Self) -> Option<Self> {
                (o != 0).then(|| self.wrapping_rem(o))
            }
            #[inline(always)]
            fn neg(self) -> Self {
                (0 as $t).wrapping_sub(self)
            }
        }
    };
}
arith_int!(i32);
arith_int!(u32);
arith_int!(u8);
arith_int!(i64);
