//! Shared memory: the arena (each shared buffer's offset, times its pipeline stages, 16-byte
//! aligned; 1024-byte aligned for tiles in wgmma's atom layout, whose swizzle the hardware
//! computes from the address).

use super::plan::*;
use crate::ir::*;

/// Offsets for the shared-resident buffers, in buffer order, each a multiple of 16 bytes
/// (1024 for [`ATOMS`] tiles, whose stages are whole 1024-byte multiples as
/// `layout::wgmma_fits` admits them) and `stages[b]` copies long; the arena's size in bytes.
pub(super) fn arena(
    inst: &Instance,
    storage: &[Storage],
    stages: &[usize],
    swizzled: &[usize],
) -> (Vec<Storage>, usize) {
    let mut storage = storage.to_vec();
    let mut bytes: usize = 0;
    for (b, s) in storage.iter_mut().enumerate() {
        if let Storage::Shared { offset } = s {
            let align = if swizzled[b] == ATOMS { 1024 } else { 16 };
            bytes = bytes.div_ceil(align) * align;
            *offset = bytes;
            bytes += inst.stage_bytes(b) * stages[b];
        }
    }
    (storage, bytes)
}

/// The shared-memory buffers with their bytes (times their pipeline stages), largest first.
pub(super) fn shared_report(inst: &Instance, storage: &[Storage], stages: &[usize]) -> String {
    let mut v: Vec<(usize, String)> = (0..inst.k.buffers.len())
        .filter(|&b| matches!(storage[b], Storage::Shared { .. }))
        .map(|b| {
            let what = match inst.k.buffers[b].scope {
                Scope::Shared => "",
                _ => " (a fragment demoted to shared memory)",
            };
            let n = inst.stage_bytes(b) * stages[b];
            let staged = if stages[b] > 1 {
                format!(" in {} stages", stages[b])
            } else {
                String::new()
            };
            (
                n,
                format!("`{}` {n} bytes{staged}{what}", inst.k.buffers[b].name),
            )
        })
        .collect();
    v.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    v.into_iter().map(|(_, s)| s).collect::<Vec<_>>().join(", ")
}
