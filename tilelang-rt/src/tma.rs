//! Tensor maps for the TMA entries of NVIDIA objects (sm_90a).
//!
//! An object whose pipelined loads can run on the tensor memory accelerator carries a second
//! entry point ([`Tma`]) that takes, after the plain entry's arguments, one tensor map per
//! [`TmaMap`]: the driver's encoding (`cuTensorMapEncodeTiled`) of a tensor argument's address,
//! shape and strides with the box the kernel copies and its swizzle. [`crate::Device::launch_gpu`]
//! runs it when every map's tensor meets what the driver requires (`encoding`: a 16-byte
//! aligned base, dimensions in `1..=2^32`, every stride but the innermost a multiple of 16 bytes
//! below `2^40`), else the plain entry, which computes the same result. Encodings are cached
//! per device and (address, shape, map). `TILELANG_TMA=off` in the environment runs the plain
//! entries only ([`enabled`]). A warp-specialised TMA entry is persistent: it is launched with
//! as many blocks as the device holds at once, each walking tiles of the kernel's grid
//! ([`persistent_grid`]; `TILELANG_PERSISTENT_BLOCKS` overrides the count, [`persistent_blocks`]).

use crate::object::KernelArg;
use std::sync::OnceLock;

pub use crate::object::{Tma, TmaDim, TmaElem, TmaMap};

/// Whether TMA entries may run: not when `TILELANG_TMA=off` (read once), which makes every
/// launch take the plain entry, to compare the two or to rule TMA out when chasing a bug.
pub fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var("TILELANG_TMA").map_or(true, |v| v != "off"))
}

/// The blocks a persistent entry is launched with, when `TILELANG_PERSISTENT_BLOCKS` sets it
/// (read once): a small number makes every block walk several tiles at any size, which the
/// GPU checks use; otherwise the device's resident blocks decide ([`persistent_grid`]).
pub fn persistent_blocks() -> Option<u32> {
    static N: OnceLock<Option<u32>> = OnceLock::new();
    *N.get_or_init(|| {
        std::env::var("TILELANG_PERSISTENT_BLOCKS")
            .ok()
            .and_then(|v| v.parse().ok())
            .filter(|&n| n > 0)
    })
}

/// The grid of a persistent entry: the kernel's `grid` as one dimension of at most `resident`
/// blocks (what the device holds at once), each of which runs every `resident`-th tile.
pub fn persistent_grid(grid: [u32; 3], resident: u32) -> [u32; 3] {
    let tiles = u64::from(grid[0]) * u64::from(grid[1]) * u64::from(grid[2]);
    [tiles.min(u64::from(resident.max(1))) as u32, 1, 1]
}

/// What `cuTensorMapEncodeTiled` takes for one map.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Encoding {
    pub ptr: u64,
    /// Innermost first.
    pub dims: Vec<u64>,
    /// Bytes between consecutive indices of dimensions 1.. (innermost first).
    pub strides: Vec<u64>,
    pub map: TmaMap,
}

/// The encoding of `map` for these launch arguments, or `None` when the tensor does not meet
/// the driver's rules (then the plain entry runs).
pub(crate) fn encoding(map: &TmaMap, args: &[KernelArg]) -> Option<Encoding> {
    let Some(KernelArg::Ptr(ptr)) = args.get(map.arg) else {
        return None;
    };
    let mut dims = Vec::with_capacity(map.dims.len());
    for d in map.dims.iter().rev() {
        let n = match *d {
            TmaDim::Const(n) => n,
            TmaDim::Arg(i) => match args.get(i) {
                Some(KernelArg::I64(n)) => u64::try_from(*n).ok()?,
                _ => return None,
            },
        };
        if n == 0 || n > 1 << 32 {
            return None;
        }
        dims.push(n);
    }
    let mut strides = Vec::with_capacity(dims.len().saturating_sub(1));
    let mut stride = map.elem.bytes();
    for &d in &dims[..dims.len().saturating_sub(1)] {
        stride = stride.checked_mul(d)?;
        if stride % 16 != 0 || stride >= 1 << 40 {
            return None;
        }
        strides.push(stride);
    }
    let boxes_fit =
        map.boxes.len() == dims.len() && map.boxes.iter().all(|&b| (1..=256).contains(&b));
    (ptr % 16 == 0 && boxes_fit).then_some(Encoding {
        ptr: *ptr,
        dims,
        strides,
        map: *map,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn persistent_grids_hold_at_most_the_resident_blocks_in_one_dimension() {
        // 32 × 16 tiles on 132 resident blocks; a grid smaller than that keeps one block a
        // tile; the 2^32 tiles of a huge grid do not overflow; no cap at all keeps the tiles.
        assert_eq!(persistent_grid([32, 16, 1], 132), [132, 1, 1]);
        assert_eq!(persistent_grid([5, 3, 2], 132), [30, 1, 1]);
        assert_eq!(persistent_grid([65536, 65536, 1], 264), [264, 1, 1]);
        assert_eq!(persistent_grid([7, 3, 1], u32::MAX), [21, 1, 1]);
        assert_eq!(persistent_grid([7, 3, 1], 0), [1, 1, 1]);
    }

    const A: TmaMap = TmaMap {
        arg: 0,
        dims: &[TmaDim::Arg(2), TmaDim::Arg(3)],
        elem: TmaElem::F16,
        boxes: &[32, 128],
        swizzle: 64,
    };

    fn args(ptr: u64, m: i64, k: i64) -> Vec<KernelArg> {
        vec![
            KernelArg::Ptr(ptr),
            KernelArg::Ptr(0x1000),
            KernelArg::I64(m),
            KernelArg::I64(k),
        ]
    }

    #[test]
    fn encodes_row_major_tensors_innermost_first() {
        let e = encoding(&A, &args(0x7f00_0000_0100, 4096, 1000)).unwrap();
        assert_eq!(e.dims, [1000, 4096]);
        assert_eq!(e.strides, [2000]);
        assert_eq!(e.ptr, 0x7f00_0000_0100);
        // A rank-3 tensor with a constant dimension: strides of both outer dimensions.
        const B: TmaMap = TmaMap {
            arg: 1,
            dims: &[TmaDim::Const(8), TmaDim::Arg(2), TmaDim::Arg(3)],
            elem: TmaElem::Bf16,
            boxes: &[64, 64, 1],
            swizzle: 128,
        };
        let e = encoding(&B, &args(0, 48, 64)).unwrap();
        assert_eq!((e.dims, e.strides), (vec![64, 48, 8], vec![128, 128 * 48]));
        // Bytes (packed int4 weights): strides in bytes, rows of a multiple of 16 of them.
        const P: TmaMap = TmaMap {
            elem: TmaElem::U8,
            swizzle: 0,
            ..A
        };
        let e = encoding(&P, &args(0x100, 64, 4096)).unwrap();
        assert_eq!((e.dims, e.strides), (vec![4096, 64], vec![4096]));
        assert!(encoding(&P, &args(0x100, 64, 24)).is_none());
        assert!(encoding(&A, &args(0x100, 64, 24)).is_some());
    }

    #[test]
    fn tensors_outside_the_drivers_rules_take_the_plain_entry() {
        // Rows of 999 f16 are not a multiple of 16 bytes; a base 8 bytes off; empty and
        // negative dimensions; arguments that are not what the map names.
        assert!(encoding(&A, &args(0x100, 4096, 999)).is_none());
        assert!(encoding(&A, &args(0x108, 4096, 1000)).is_none());
        assert!(encoding(&A, &args(0x100, 0, 1000)).is_none());
        assert!(encoding(&A, &args(0x100, -1, 1000)).is_none());
        let mut bad = args(0x100, 64, 64);
        bad[0] = KernelArg::I64(5);
        assert!(encoding(&A, &bad).is_none());
        assert!(encoding(&A, &bad[..1]).is_none());
        // A dimension above 2^32; a stride of 2^40 bytes or more.
        assert!(encoding(&A, &args(0x100, 2, (1 << 32) + 8)).is_none());
        assert!(encoding(&A, &args(0x100, 2, 1 << 32)).is_some());
        const C: TmaMap = TmaMap {
            dims: &[TmaDim::Arg(2), TmaDim::Const(1 << 8), TmaDim::Arg(3)],
            boxes: &[32, 128, 1],
            ..A
        };
        assert!(encoding(&C, &args(0x100, 2, 1 << 31)).is_none());
        assert!(encoding(&C, &args(0x100, 2, 1 << 30)).is_some());
    }
}
