//! Element types of tensors and buffers.

use half::{bf16, f16};
use std::fmt;

/// The dtype of a tensor, checked at launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dtype {
    F16,
    Bf16,
    F32,
    F64,
    I32,
    U32,
    U8,
}

impl Dtype {
    pub fn name(self) -> &'static str {
        match self {
            Dtype::F16 => "f16",
            Dtype::Bf16 => "bf16",
            Dtype::F32 => "f32",
            Dtype::F64 => "f64",
            Dtype::I32 => "i32",
            Dtype::U32 => "u32",
            Dtype::U8 => "u8",
        }
    }
    /// The byte that fresh device memory of this dtype is filled with to poison it: `0xFF` for
    /// floats (every such pattern is a NaN), else the repeated byte of [`Element::POISON`].
    pub fn poison_byte(self) -> u8 {
        match self {
            Dtype::F16 | Dtype::Bf16 | Dtype::F32 | Dtype::F64 => 0xFF,
            Dtype::I32 => 0x5A,
            Dtype::U32 | Dtype::U8 => 0xA5,
        }
    }
    pub fn size_bytes(self) -> usize {
        match self {
            Dtype::F16 | Dtype::Bf16 => 2,
            Dtype::F32 | Dtype::I32 | Dtype::U32 => 4,
            Dtype::F64 => 8,
            Dtype::U8 => 1,
        }
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A type that tensors and tile buffers can hold. Sealed: device memory is copied to and from
/// these types byte for byte, which is sound only for plain numbers without padding, for which
/// every bit pattern is a valid value.
pub trait Element:
    sealed::Sealed + crate::scalar::Scalar + crate::scalar::Arith + Default + Send + Sync + 'static
{
    const DTYPE: Dtype;
    /// The value fresh CPU buffers and poisoned tensors hold: NaN for floats, a recognisable
    /// pattern for integers. Reading it back means something was never written.
    const POISON: Self;
    /// `true` if this is the poison value (NaN for floats).
    fn is_poison(self) -> bool;
}

macro_rules! float_element {
    ($t:ty, $d:ident, $nan:expr) => {
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: Dtype = Dtype::$d;
            const POISON: Self = $nan;
            fn is_poison(self) -> bool {
                self.is_nan()
            }
        }
    };
}
float_element!(f16, F16, f16::NAN);
float_element!(bf16, Bf16, bf16::NAN);
float_element!(f32, F32, f32::NAN);
float_element!(f64, F64, f64::NAN);

macro_rules! int_element {
    ($t:ty, $d:ident, $poison:expr) => {
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: Dtype = Dtype::$d;
            const POISON: Self = $poison;
            fn is_poison(self) -> bool {
                self == $poison
            }
        }
    };
}
int_element!(i32, I32, 0x5A5A_5A5A);
int_element!(u32, U32, 0xA5A5_A5A5);
int_element!(u8, U8, 0xA5);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poison_bytes_are_poison() {
        fn check<T: Element>(from_bytes: impl Fn(u8) -> T) {
            let b = T::DTYPE.poison_byte();
            assert!(from_bytes(b).is_poison(), "{} filled with {b:#x}", T::DTYPE);
            assert_eq!(std::mem::size_of::<T>(), T::DTYPE.size_bytes());
        }
        check(|b| f16::from_bits(u16::from_ne_bytes([b; 2])));
        check(|b| bf16::from_bits(u16::from_ne_bytes([b; 2])));
        check(|b| f32::from_ne_bytes([b; 4]));
        check(|b| f64::from_ne_bytes([b; 8]));
        check(|b| i32::from_ne_bytes([b; 4]));
        check(|b| u32::from_ne_bytes([b; 4]));
        check(|b| b);
        // Integer poison on the device is bit-identical to the CPU's.
        assert_eq!(
            i32::from_ne_bytes([Dtype::I32.poison_byte(); 4]),
            i32::POISON
        );
        assert_eq!(
            u32::from_ne_bytes([Dtype::U32.poison_byte(); 4]),
            u32::POISON
        );
        assert_eq!(Dtype::U8.poison_byte(), u8::POISON);
    }
}
