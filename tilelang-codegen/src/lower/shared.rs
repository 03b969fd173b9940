//! Shared memory: the arena (each shared buffer's offset, times its pipeline stages, 16-byte
//! aligned) and which tiles are stored swizzled.

use super::{Inst, Layout, Storage, *};
use crate::ir::*;
use crate::validate::walk;

/// Offsets for the shared-resident buffers, in buffer order, each a multiple of 16 bytes and
/// `stages[b]` copies long; the arena's size in bytes.
pub(super) fn arena(
    k: &Kernel,
    vals: &[u64],
    storage: &[Storage],
    stages: &[usize],
) -> (Vec<Storage>, usize) {
    let mut storage = storage.to_vec();
    let mut bytes: usize = 0;
    for (b, s) in storage.iter_mut().enumerate() {
        if let Storage::Shared { offset } = s {
            bytes = bytes.div_ceil(16) * 16;
            *offset = bytes;
            bytes += stage_bytes(k, b, vals) * stages[b];
        }
    }
    (storage, bytes)
}

/// The shared-memory buffers with their bytes (times their pipeline stages), largest first.
pub(super) fn shared_report(
    k: &Kernel,
    vals: &[u64],
    storage: &[Storage],
    stages: &[usize],
) -> String {
    let mut v: Vec<(usize, String)> = (0..k.buffers.len())
        .filter(|&b| matches!(storage[b], Storage::Shared { .. }))
        .map(|b| {
            let what = match k.buffers[b].scope {
                Scope::Shared => "",
                _ => " (a fragment demoted to shared memory)",
            };
            let n = stage_bytes(k, b, vals) * stages[b];
            let staged = if stages[b] > 1 {
                format!(" in {} stages", stages[b])
            } else {
                String::new()
            };
            (
                n,
                format!("`{}` {n} bytes{staged}{what}", k.buffers[b].name),
            )
        })
        .collect();
    v.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    v.into_iter().map(|(_, s)| s).collect::<Vec<_>>().join(", ")
}

/// Which shared buffers to store as swizzled tiles (tl.h `swz`): 2-D, 16-bit, rows of a
/// power-of-two number (at least 2) of 16-byte chunks, and only ever written by copies from
/// global memory and read as operands of `mma.sync` gemms, which are the accesses that know the
/// swizzle. Anything else touching the buffer (a load, a store, a fill, another copy or gemm)
/// keeps it plain. Swizzling spreads the 8 rows one `ldmatrix` phase reads over all the banks.
pub(super) fn plan_swizzle(k: &Kernel, vals: &[u64], storage: &[Storage]) -> Vec<bool> {
    let nbuf = k.buffers.len();
    let mut ok: Vec<bool> = (0..nbuf)
        .map(|b| {
            let shape = buf_shape(k, b, vals);
            let chunks = shape.get(1).map_or(0, |c| c * 2 / 16);
            matches!(storage[b], Storage::Shared { .. })
                && shape.len() == 2
                && k.buffers[b].dtype.size_bytes() == 2
                && shape[1] % 8 == 0
                && chunks >= 2
                && chunks.is_power_of_two()
        })
        .collect();
    let mut used = vec![false; nbuf];
    walk(&k.body, &mut |s| {
        let mut bad: Vec<BufId> = Vec::new();
        match &s.kind {
            StmtKind::Copy {
                src: Tile::Region { .. },
                dst: Tile::Buffer(b),
            } => {
                used[*b] = true;
                // Offsets that load from buffers are plain uses of those.
                for_each_access(s, &mut |a| {
                    if let Target::Buffer(x) = a.target {
                        bad.push(x)
                    }
                });
            }
            StmtKind::Gemm { a, b, c }
                if a != b
                    && matches!(
                        storage[*c],
                        Storage::Reg {
                            layout: Layout::Matrix {
                                inst: Inst::MmaSync,
                                ..
                            },
                            ..
                        }
                    ) =>
            {
                used[*a] = true;
                used[*b] = true;
                bad.push(*c);
            }
            _ => each_buffer(s, &mut |b| bad.push(b)),
        }
        for b in bad {
            ok[b] = false;
        }
    });
    ok.iter().zip(&used).map(|(&o, &u)| o && u).collect()
}
