//! Pass 6, occupancy: which requests for resident blocks per multiprocessor
//! (`__launch_bounds__(threads, blocks)`, a cap on registers per thread) the build may try.
//!
//! A kernel that loads its tile, computes and stores it, once, holds the tile in registers
//! whatever the cap: the registers ptxas spends beyond that are temporaries, and when they
//! push it over a multiprocessor's budget they cost resident warps, which is what hides the
//! memory's latency. The SiLU-gate example used 47 registers (five blocks of 256 threads, 62%
//! of the threads an H200 holds); asked for six it uses 40 with no spill, 0.372 → 0.353 ms.
//! Where a sequential loop reads or writes global memory the same cap is a loss: ptxas spends
//! those registers on later iterations' loads in flight (softmax 3-pass at 48 registers
//! instead of 64: 0.687 → 0.785 ms; cross-entropy 0.528 → 0.558), and a request that does not
//! bind still changes ptxas's choices (conv1d single asked for six blocks at 32 registers took
//! 34-40 and lost 4-18%). Measured on the H200, 2026-12-04, one run of each object.
//!
//! So requests are made only where they can pay:
//!
//! * NVIDIA targets ([`Gpu::multiprocessor`]); AMD has no measurements yet.
//! * No `gemm` (matrix-unit kernels keep accumulators and operands live on purpose), and no
//!   sequential loop that touches global memory.
//! * At most three quarters of the multiprocessor's threads, never more blocks than the
//!   block's shared memory lets reside, and no cap below the registers of the fragments and
//!   local buffers the layout counted ([`layout::thread_registers`]).
//!
//! The pass records the ladder of requests, each leaving more registers than the one before.
//! How many registers the code needs only ptxas knows, so the build (`tilelang-build`'s
//! `compile.rs`) compiles the kernel without a request first, then, only if that used more
//! registers than a request's cap, each such request in turn and keeps the first that does
//! not spill (`HipKernel::requests`, the same plan printed with each).
//!
//! A kernel whose attribute sets `min_blocks` or `max_registers` gets that instead, and no
//! requests: the user decided ([`explicit`]). NVIDIA: `__launch_bounds__(threads, blocks)`,
//! or `__maxnreg__` (which nvcc accepts only without launch bounds); AMD: the waves per SIMD
//! those blocks make (`amdgpu_waves_per_eu`, four SIMDs to a CU or WGP) or
//! `amdgpu_num_vgpr`. Where the request cannot hold on the target (more threads or shared
//! memory than a multiprocessor has, a cap below the fragments' registers) it is an error.

use super::plan::*;
use crate::ir::visit::*;
use crate::ir::*;
use crate::target::Target as Gpu;

/// The fraction of a multiprocessor's resident threads asked for, in quarters.
const QUARTERS: usize = 3;

/// The shared memory the driver reserves for each resident block, bytes.
const DRIVER_SHARED: usize = 1024;

/// SIMDs of an AMD compute unit (CDNA) or work-group processor (RDNA, where blocks run in
/// WGP mode): the unit `amdgpu_waves_per_eu` counts waves in.
const AMD_SIMDS: usize = 4;

/// The attribute's control for this config on `target`, or why it cannot hold there.
pub(super) fn explicit(
    inst: &Instance,
    target: &Gpu,
    threads: usize,
    shared: usize,
    fragment_registers: usize,
) -> Result<Option<Explicit>, String> {
    let Some(o) = &inst.k.occupancy else {
        return Ok(None);
    };
    let value = |e| eval_const(e, inst.vals).map_or(0, |v| v as usize);
    let sm = target.multiprocessor();
    match o {
        Occupancy::MinBlocks(e) => {
            let blocks = value(e);
            if let Some(sm) = sm {
                if blocks * threads > sm.threads || blocks > sm.blocks {
                    return Err(format!("`min_blocks = {blocks}`: {blocks} blocks of {threads} threads cannot reside on one {} multiprocessor ({} threads, {} blocks)", target.arch, sm.threads, sm.blocks));
                }
                if blocks * (shared + DRIVER_SHARED) > sm.shared {
                    return Err(format!("`min_blocks = {blocks}`: {blocks} blocks of {shared} bytes of shared memory (and 1 KB each for the driver) do not fit in the {} KB of a {} multiprocessor", sm.shared / 1024, target.arch));
                }
                let cap = register_cap(sm.registers, threads, blocks);
                if cap < fragment_registers {
                    return Err(format!("`min_blocks = {blocks}` leaves {cap} registers per thread, and the fragments and local buffers need {fragment_registers}"));
                }
            }
            let waves = (threads.div_ceil(target.wave as usize) * blocks).div_ceil(AMD_SIMDS);
            Ok(Some(Explicit::MinBlocks { blocks, waves }))
        }
        Occupancy::MaxRegisters(e) => {
            let registers = value(e);
            if registers < fragment_registers {
                return Err(format!("`max_registers = {registers}` is below the {fragment_registers} registers per thread the fragments and local buffers need"));
            }
            if let Some(sm) = sm {
                let need = threads.div_ceil(32) * 32 * registers.div_ceil(8) * 8;
                if need > sm.registers {
                    return Err(format!("`max_registers = {registers}`: a block of {threads} threads would need {need} registers, and a {} multiprocessor has {}", target.arch, sm.registers));
                }
            }
            Ok(Some(Explicit::MaxRegisters(registers)))
        }
    }
}

/// The requests worth trying, in order (each leaving more registers than the one before);
/// empty where nothing is asked for.
pub(super) fn plan_requests(
    k: &Kernel,
    target: &Gpu,
    threads: usize,
    shared: usize,
    fragment_registers: usize,
) -> Vec<Request> {
    let Some(sm) = target.multiprocessor() else {
        return Vec::new();
    };
    let mut gemm = false;
    walk(&k.body, &mut |s| {
        gemm |= matches!(s.kind, StmtKind::Gemm { .. })
    });
    if gemm || sequential_global(&k.body, false) {
        return Vec::new();
    }
    let mut blocks = (sm.threads * QUARTERS / 4 / threads).min(sm.blocks);
    if shared > 0 {
        blocks = blocks.min(sm.shared / (shared + DRIVER_SHARED));
    }
    let cap = |b| register_cap(sm.registers, threads, b);
    (2..=blocks)
        .rev()
        // Below the fragments' own registers a cap can only spill; of the counts that give
        // one cap, the largest is asked for.
        .filter(|&b| cap(b) >= fragment_registers && (b == blocks || cap(b) != cap(b + 1)))
        .map(|b| Request {
            blocks: b,
            registers: cap(b),
        })
        .filter(|r| r.registers < 255)
        .collect()
}

/// Whether a sequential loop among `stmts` (or `stmts` themselves, `inside` one) reads or
/// writes global memory: there the registers ptxas spends are loads of later iterations in
/// flight, which a cap would take away.
fn sequential_global(stmts: &[Stmt], inside: bool) -> bool {
    stmts.iter().any(|s| {
        let mut global = false;
        for_each_access(s, &mut |a| global |= matches!(a.target, Target::Tensor(_)));
        if let StmtKind::Copy { src, dst } = &s.kind {
            global |= [src, dst].iter().any(|t| matches!(t, Tile::Region { .. }));
        }
        if inside && global {
            return true;
        }
        match &s.kind {
            StmtKind::For { kind, body, .. } => {
                sequential_global(body, inside || !matches!(kind, LoopKind::Parallel { .. }))
            }
            StmtKind::If { then, els, .. } => {
                sequential_global(then, inside) || sequential_global(els, inside)
            }
            _ => false,
        }
    })
}

/// The registers per thread that `blocks` resident blocks of `threads` leave: the register
/// file over their warps, in the allocation unit of 8 registers a thread (256 a warp), at most
/// the ISA's 255.
pub(super) fn register_cap(registers: usize, threads: usize, blocks: usize) -> usize {
    let warps = threads.div_ceil(32) * blocks;
    (registers / (warps * 32) / 8 * 8).min(255)
}

#[cfg(test)]
mod tests {
    use super::register_cap;

    #[test]
    fn caps_follow_the_register_file_and_its_allocation_unit() {
        // 6 blocks of 256 threads: 65536 / 1536 = 42.7, allocated in 8s.
        assert_eq!(register_cap(65536, 256, 6), 40);
        assert_eq!(register_cap(65536, 512, 2), 64);
        assert_eq!(register_cap(65536, 128, 12), 40);
        assert_eq!(register_cap(65536, 256, 1), 255);
        // A block of 48 threads allocates two whole warps.
        assert_eq!(register_cap(65536, 48, 16), 64);
    }
}
