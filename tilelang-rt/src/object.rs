//! What the build embeds and a launch passes, as plain data: a compiled kernel ([`Object`]),
//! its TMA entry with the tensor maps it takes ([`Tma`]), and the kernel arguments
//! ([`KernelArg`]). A leaf, so that every layer of the runtime can name them; [`crate::gpu`]
//! and [`crate::tma`] re-export them where the generated launchers find them.

use half::{bf16, f16};
use std::ffi::c_void;
use std::fmt;
/// One compiled kernel: a device image for one config on one target arch.
#[derive(Clone, Copy)]
pub struct Object {
    /// The target arch, compared with [`Device::arch`](crate::Device::arch): `"sm_90"`,
    /// `"gfx1100"`, ...
    pub arch: &'static str,
    /// The config name, one of the kernel's `CONFIGS`.
    pub config: &'static str,
    /// The symbol of the `extern "C"` kernel function in the image.
    pub entry: &'static str,
    /// Threads per block (the block is `threads x 1 x 1`).
    pub threads: u32,
    /// Dynamic shared memory per block, in bytes.
    pub shared_bytes: u32,
    /// The image: a cubin (or fatbin) on NVIDIA; on AMD an ELF code object for `arch` (what
    /// `clang --offload-device-only --no-gpu-bundle-output` or `hipcc --genco` writes, not a
    /// clang offload bundle), loaded with `hipModuleLoadData`.
    pub image: &'static [u8],
    /// The image's second entry whose loads run on TMA, and the tensor maps it takes (NVIDIA
    /// sm_90a; see [`crate::tma`]).
    pub tma: Option<&'static Tma>,
}

impl fmt::Debug for Object {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Object")
            .field("arch", &self.arch)
            .field("config", &self.config)
            .field("entry", &self.entry)
            .field("threads", &self.threads)
            .field("shared_bytes", &self.shared_bytes)
            .field("image", &format_args!("[{} bytes]", self.image.len()))
            .field("tma", &self.tma.map(|t| t.object.entry))
            .finish()
    }
}

/// One kernel argument, in the kernel's parameter order. Each is passed by value with exactly
/// the size of its payload: `Ptr` is a 64-bit device address, `F16`/`Bf16` are 2 bytes, and so on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum KernelArg {
    /// A device address (see [`crate::Tensor::device_ptr`]).
    Ptr(u64),
    F16(f16),
    Bf16(bf16),
    F32(f32),
    F64(f64),
    I32(i32),
    U32(u32),
    U8(u8),
    I64(i64),
    /// A tensor map (`CUtensorMap`, 128 bytes) for a TMA entry, passed by value.
    TensorMap([u64; 16]),
}

impl KernelArg {
    /// The address of the value, as `cuLaunchKernel` and `hipModuleLaunchKernel` want each entry
    /// of `kernelParams`. Valid
    /// while `self` is borrowed; the driver only reads through it.
    pub(crate) fn param_ptr(&self) -> *mut c_void {
        match self {
            KernelArg::Ptr(v) => v as *const u64 as *mut c_void,
            KernelArg::F16(v) => v as *const f16 as *mut c_void,
            KernelArg::Bf16(v) => v as *const bf16 as *mut c_void,
            KernelArg::F32(v) => v as *const f32 as *mut c_void,
            KernelArg::F64(v) => v as *const f64 as *mut c_void,
            KernelArg::I32(v) => v as *const i32 as *mut c_void,
            KernelArg::U32(v) => v as *const u32 as *mut c_void,
            KernelArg::U8(v) => v as *const u8 as *mut c_void,
            KernelArg::I64(v) => v as *const i64 as *mut c_void,
            KernelArg::TensorMap(v) => v.as_ptr() as *mut c_void,
        }
    }
}

/// Where a tensor dimension's extent comes from at launch: a shape argument (an `I64` in the
/// argument list) or a constant of the kernel's signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TmaDim {
    Arg(usize),
    Const(u64),
}

/// The element type of a mapped tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TmaElem {
    F16,
    Bf16,
    U8,
}

impl TmaElem {
    /// Its size in bytes.
    pub fn bytes(self) -> u64 {
        match self {
            TmaElem::F16 | TmaElem::Bf16 => 2,
            TmaElem::U8 => 1,
        }
    }
}

/// One tensor map an entry takes: the tensor's argument (a `Ptr`), its dimensions (outermost
/// first, as the kernel declares them; the tensor is row-major and contiguous), its element
/// type, the box (innermost first, as the driver takes it) and the swizzle in bytes (128, 64
/// or 32).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TmaMap {
    pub arg: usize,
    pub dims: &'static [TmaDim],
    pub elem: TmaElem,
    pub boxes: &'static [u32],
    pub swizzle: u32,
}

/// The TMA entry of an object: the same image with its own entry and shared memory, and the
/// maps it takes.
#[derive(Debug, Clone, Copy)]
pub struct Tma {
    pub object: Object,
    pub maps: &'static [TmaMap],
    /// The entry walks the grid's tiles itself: it is launched with at most as many blocks
    /// as the device holds at once ([`persistent_grid`](crate::tma::persistent_grid)).
    pub persistent: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn param_ptrs_point_at_the_payload() {
        let args = [
            KernelArg::Ptr(0xdead_beef),
            KernelArg::F16(f16::from_f32(1.5)),
            KernelArg::U8(7),
        ];
        // SAFETY: each pointer points at the payload of the matching variant, in `args`.
        unsafe {
            assert_eq!(*(args[0].param_ptr() as *const u64), 0xdead_beef);
            assert_eq!(
                *(args[1].param_ptr() as *const u16),
                f16::from_f32(1.5).to_bits()
            );
            assert_eq!(*(args[2].param_ptr() as *const u8), 7);
        }
    }
}
