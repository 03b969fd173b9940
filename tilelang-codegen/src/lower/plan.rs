//! The lowering's decisions as data: the [`Plan`] of one (kernel, config, target) and the
//! record of each pass, which the passes fill in and the printer reads. A leaf of `lower`:
//! every pass and the printer import it; it imports no pass.

pub(crate) use super::instance::Instance;
pub(crate) use crate::ir::visit::{AccessId, ExprId, StmtId};
use crate::ir::*;
use crate::target::{MatrixUnit, Target as Gpu};
use std::collections::{BTreeMap, BTreeSet};

/// Every decision the passes made for one (kernel, config, target).
pub(crate) struct Plan<'a> {
    /// The (kernel, config), whose ids key the decisions below.
    pub inst: Instance<'a>,
    pub target: &'a Gpu,
    pub threads: usize,
    /// Per buffer ([`super::layout`], offsets from [`super::shared`]).
    pub storage: Vec<Storage>,
    /// Per fragment kept in shared memory ([`super::layout`]): why, and on which statement.
    pub demotions: Demoted,
    /// Per buffer, how a shared tile is swizzled ([`super::swizzle`]): 0 plain,
    /// [`ATOMS`], else tl.h's `DIV`.
    pub swizzled: Vec<usize>,
    /// The loops whose loads run on TMA in the object's second entry, and their tensor maps
    /// ([`super::tma`]).
    pub tma: TmaPlan,
    /// Whether a gemm runs on wgmma, whose tensor cores read shared memory through the async
    /// proxy: every barrier then fences each thread's shared-memory writes for it first.
    pub async_proxy: bool,
    /// The `pipelined` loops whose loads run ahead, by [`StmtId`] ([`super::pipeline`]).
    pub staged: BTreeMap<StmtId, Staging>,
    pub shared_bytes: usize,
    /// Per `parallel` loop (by [`StmtId`]): its thread mapping ([`super::vectorize`]).
    pub loops: BTreeMap<StmtId, LoopPlan>,
    /// Per buffer held in chunks: the distance between a thread's chunks in a copy's region
    /// when it is fixed, as (dimension, rows), which stores out of it use
    /// ([`super::vectorize::store_strides`]).
    pub store_strides: Vec<Option<(usize, usize)>>,
    /// The tail guards on tile coordinates printed in 32 bits, by the comparison's id: the
    /// position of the coordinate among the summands of its left side ([`super::guards`]).
    pub guards: BTreeMap<ExprId, usize>,
    /// Per parameter: a tensor the kernel writes and never reads, whose stores stream
    /// (evict-first: nothing will read the lines again in this kernel).
    pub write_once: Vec<bool>,
    /// Statements preceded by a block barrier ([`super::sync`]), by [`StmtId`].
    pub barriers: BTreeSet<StmtId>,
    /// Reductions that run in registers ([`super::rows`]), by [`StmtId`].
    pub reduces: BTreeMap<StmtId, ReducePlan>,
    /// Per serial or pipelined loop, by [`StmtId`]: the reductions it carries across its
    /// iterations ([`super::defer`]).
    pub deferred: BTreeMap<StmtId, Vec<Deferred>>,
    /// Copies whose loads carry an L2 hint ([`super::reuse`]), by [`StmtId`]: empty where the
    /// target has none.
    pub reuse: BTreeMap<StmtId, Reuse>,
    /// Sequential loops run as interior iterations and the rest ([`super::interior`]), by
    /// [`StmtId`].
    pub splits: BTreeMap<StmtId, Split>,
    /// The requests for resident blocks the build may try ([`super::occupancy`]).
    pub requests: Vec<Request>,
    /// The request printed: 1 asks nothing.
    pub min_blocks: usize,
    /// The attribute's occupancy control, printed instead of any request ([`super::occupancy`]).
    pub explicit: Option<Explicit>,
}

// ---- Storage and layouts ([`super::layout`], [`super::rows`], [`super::cols`]) -----------------

/// The most elements per thread chunk of the [`Layout::Chunked`] layout (16 bytes of 16-bit
/// elements; 1-byte elements stop at 8, an 8-byte access).
pub(crate) const CHUNK: usize = 8;

/// Elements per chunk for fragments of `bytes`-byte elements: 16 bytes, at most [`CHUNK`].
/// A chunk is what one lane moves in one access, so the lanes of a wave touch consecutive
/// 16-byte pieces: 8 f32 elements per lane would put each lane's two vectors 32 bytes apart,
/// every access using half of each sector it touches (measured on the H200: the whole-row
/// softmax at 3.32 TB/s with chunks of 8 floats, 4.14 TB/s with chunks of 4).
pub(crate) fn chunk_for(bytes: usize) -> usize {
    (16 / bytes.max(1)).clamp(1, CHUNK)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// Element `L` in register `L / T` of thread `L % T`.
    Strided,
    /// Chunks of `unit` consecutive elements, chunk `c` in thread `c % T`: element `L` in
    /// register `(L / unit / T) · unit + L % unit` of thread `(L / unit) % T`. A thread's
    /// chunk is contiguous in the tile's innermost dimension (a multiple of `unit`), so copies
    /// between the fragment and global memory move whole vectors. One kernel's chunked
    /// fragments share one `unit` ([`chunk_for`] of the widest element a copy moves), so
    /// fragments of one loop agree whatever their types.
    Chunked { unit: usize },
    /// Matrix-unit accumulator: block tile M×N over a WM×WN grid of waves, each wave a grid of
    /// `inst` tiles.
    Matrix {
        inst: Inst,
        m: usize,
        n: usize,
        wm: usize,
        wn: usize,
    },
    /// A *row fragment* ([`super::rows`]): the result of reducing a register tile along its
    /// last dimension, or a fragment read as a broadcast (`m[i]` in a loop over `(i, j)`).
    /// The block's threads form `groups` groups of `width` consecutive threads; element `i`
    /// is register `i / groups` of every thread of group `i % groups`, replicated across the
    /// group: exactly where the threads of a strided or chunked `(.., W)` tile need row `i`.
    Rows { groups: usize, width: usize },
    /// A *column fragment* ([`super::cols`]): a `(W,)` buffer read as `v[j]` in loops over
    /// `(.., W)` tiles held strided (`unit` 1) or chunked (`unit` [`CHUNK`]). It is laid out
    /// as such a tile's row over a block of `width` threads and replicated in each group of
    /// `width` threads: element `j` is register `(j / unit / width) · unit + j % unit` of every
    /// thread `t` with `t % width == (j / unit) % width`, and tile register `r` meets column
    /// register `r % nreg`.
    Cols { unit: usize, width: usize },
    /// A *row fragment* of a matrix-unit accumulator ([`super::rows`]): the rows of an `m`-row
    /// accumulator of `inst` over a `wm × wn` grid of waves, whatever its columns. Every
    /// thread holds the rows its accumulator registers lie in, [`Inst::row_regs`] an
    /// instruction tile, replicated across the lanes and the `wn` waves that share them
    /// (tl.h's `mx::rows`). `inst` is never `Wgmma`, whose accumulator is `MmaSync`'s.
    AccRows {
        inst: Inst,
        m: usize,
        wm: usize,
        wn: usize,
    },
}

impl Layout {
    /// The orders a thread can read a tile of shared memory in for a reduction: chunked with
    /// any unit [`chunk_for`] gives, or strided.
    pub(crate) const READ_ORDERS: [Layout; 4] = [
        Layout::Chunked { unit: 8 },
        Layout::Chunked { unit: 4 },
        Layout::Chunked { unit: 2 },
        Layout::Strided,
    ];
    /// Consecutive elements per register run of a strided (1) or chunked layout; `None` for
    /// the others.
    pub(crate) fn unit(self) -> Option<usize> {
        match self {
            Layout::Strided => Some(1),
            Layout::Chunked { unit } => Some(unit),
            _ => None,
        }
    }
}

/// A matrix instruction `gemm` can lower to (f16 or bf16 operands, f32 accumulators), with the
/// tl.h functions that run it and locate its accumulator registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Inst {
    /// NVIDIA `mma.sync.m16n8k16`.
    MmaSync,
    /// Hopper `wgmma.mma_async.m64nNk16` (sm_90a): a warpgroup of 4 warps per 64 rows of the
    /// block tile, the whole N per instruction, operands read from shared memory through
    /// descriptors. Its accumulator layout is `MmaSync`'s with one warp per 16 rows.
    Wgmma,
    /// RDNA3 `v_wmma_f32_16x16x16_{f16,bf16}`, wave32.
    Wmma,
    /// RDNA4 `v_wmma_f32_16x16x16_{f16,bf16}` (gfx12 operands), wave32.
    Wmma12,
    /// CDNA `v_mfma_f32_32x32x8{f16,bf16_1k}`, wave64.
    Mfma32,
    /// CDNA `v_mfma_f32_16x16x16{f16,bf16_1k}`, wave64.
    Mfma16,
}

/// A gemm's `.t()` marks as the last template arguments of its `tl.h` function, left out when
/// neither is set (their defaults).
pub(super) fn trans_args([ta, tb]: [bool; 2]) -> String {
    if ta || tb {
        format!(", {ta}, {tb}")
    } else {
        String::new()
    }
}

impl Inst {
    /// The instructions of a matrix unit, preferred first.
    pub(super) fn of(unit: MatrixUnit) -> &'static [Inst] {
        match unit {
            MatrixUnit::MmaSync => &[Inst::MmaSync],
            MatrixUnit::Wgmma => &[Inst::Wgmma, Inst::MmaSync],
            MatrixUnit::Wmma => &[Inst::Wmma],
            MatrixUnit::Wmma12 => &[Inst::Wmma12],
            MatrixUnit::Mfma => &[Inst::Mfma32, Inst::Mfma16],
            MatrixUnit::None => &[],
        }
    }
    /// (M, N, K) of one instruction tile.
    pub(super) fn shape(self) -> (usize, usize, usize) {
        match self {
            Inst::MmaSync => (16, 8, 16),
            // Per warp: 16 rows of the warpgroup's m64 (`matrix_layout` checks the rest).
            Inst::Wgmma => (16, 64, 16),
            Inst::Wmma | Inst::Wmma12 | Inst::Mfma16 => (16, 16, 16),
            Inst::Mfma32 => (32, 32, 8),
        }
    }
    /// The rows a lane holds of one instruction tile's accumulator (tl.h's `mx::rows::RPT`):
    /// mma.sync's lanes hold two elements of each of two rows, WMMA's and MFMA's one element
    /// of each of their rows.
    pub(crate) fn row_regs(self) -> usize {
        match self {
            Inst::MmaSync | Inst::Wgmma => 2,
            Inst::Wmma | Inst::Wmma12 => 8,
            Inst::Mfma32 => 16,
            Inst::Mfma16 => 4,
        }
    }
    /// The accumulator elements a lane holds of each of its rows of one instruction tile.
    pub(crate) fn row_elems(self) -> usize {
        match self {
            Inst::MmaSync | Inst::Wgmma => 2,
            _ => 1,
        }
    }
    /// tl.h's row policy (`mx::rows`) of an `m`-row accumulator over `wm × wn` waves.
    pub(super) fn rows(self, m: usize, wm: usize, wn: usize) -> String {
        let i = match self {
            Inst::MmaSync | Inst::Wgmma => "MmaSync",
            Inst::Wmma => "Wmma11",
            Inst::Wmma12 => "Wmma12",
            Inst::Mfma32 => "Mfma32",
            Inst::Mfma16 => "Mfma16",
        };
        format!("tl::mx::rows<tl::mx::{i}, {m}, {wm}, {wn}>")
    }
    /// The lanes executing one instruction.
    pub(super) fn wave(self) -> usize {
        match self {
            Inst::MmaSync | Inst::Wgmma | Inst::Wmma | Inst::Wmma12 => 32,
            Inst::Mfma32 | Inst::Mfma16 => 64,
        }
    }
    /// The call `acc += a·b` in tl.h. `issue_only` (wgmma alone, which is asynchronous):
    /// the call that issues the instructions and returns, leaving the wait to the caller.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn gemm(
        self,
        t: &str,
        m: usize,
        n: usize,
        k: usize,
        wm: usize,
        wn: usize,
        [ta, tb]: [bool; 2],
        issue_only: bool,
    ) -> String {
        debug_assert!(
            !issue_only || self == Inst::Wgmma,
            "only wgmma is asynchronous"
        );
        let tt = trans_args([ta, tb]);
        match self {
            Inst::MmaSync if ta || tb => {
                format!("tl::gemm_mma<{t}, {m}, {n}, {k}, {wm}, {wn}, false, false{tt}>")
            }
            Inst::MmaSync => format!("tl::gemm_mma<{t}, {m}, {n}, {k}, {wm}, {wn}>"),
            Inst::Wgmma => {
                debug_assert!(!ta, "wgmma reads A as stored");
                let f = if issue_only {
                    "gemm_wgmma_async"
                } else {
                    "gemm_wgmma"
                };
                let kb = if tb { ", true" } else { "" };
                format!("tl::{f}<{t}, {m}, {n}, {k}, {}{kb}>", wm * wn / 4)
            }
            Inst::Wmma => format!("tl::gemm_wmma<{t}, {m}, {n}, {k}, {wm}, {wn}{tt}>"),
            Inst::Wmma12 => format!("tl::gemm_wmma12<{t}, {m}, {n}, {k}, {wm}, {wn}{tt}>"),
            Inst::Mfma32 => format!("tl::gemm_mfma<{t}, {m}, {n}, {k}, {wm}, {wn}, 32{tt}>"),
            Inst::Mfma16 => format!("tl::gemm_mfma<{t}, {m}, {n}, {k}, {wm}, {wn}, 16{tt}>"),
        }
    }
    /// The function giving the (row, col) of an accumulator register in tl.h.
    pub(super) fn coord(self, m: usize, n: usize, wm: usize, wn: usize) -> String {
        match self {
            Inst::MmaSync | Inst::Wgmma => format!("tl::mma_coord<{m}, {n}, {wm}, {wn}>"),
            Inst::Wmma => format!("tl::wmma_coord<{m}, {n}, {wm}, {wn}>"),
            Inst::Wmma12 => format!("tl::wmma12_coord<{m}, {n}, {wm}, {wn}>"),
            Inst::Mfma32 => format!("tl::mfma_coord<{m}, {n}, {wm}, {wn}, 32>"),
            Inst::Mfma16 => format!("tl::mfma_coord<{m}, {n}, {wm}, {wn}, 16>"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Storage {
    Shared { offset: usize },
    Reg { layout: Layout, nreg: usize },
    Local,
}

impl Storage {
    /// The register layout (strided for buffers not in registers).
    pub(crate) fn layout(self) -> Layout {
        match self {
            Storage::Reg { layout, .. } => layout,
            _ => Layout::Strided,
        }
    }

    /// The matrix instruction whose accumulator this is, for a gemm accumulator held in a
    /// matrix unit's layout.
    pub(crate) fn matrix(self) -> Option<Inst> {
        match self {
            Storage::Reg {
                layout: Layout::Matrix { inst, .. },
                ..
            } => Some(inst),
            _ => None,
        }
    }
}

/// A `pipelined` loop whose loads run ahead: its first `loads` statements are the loads, each
/// into a shared buffer held in `stages` copies ([`super::pipeline`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Staging {
    pub loads: usize,
    pub stages: usize,
}

// ---- Swizzles ([`super::swizzle`]) -------------------------------------------------------------

/// The swizzle value of a tile in wgmma's atom layout (tl.h `ATOMS`): 64-column atoms, each
/// 128-byte swizzled (64- or 32-byte for narrower tiles), starting on 1024-byte boundaries
/// ([`super::shared::arena`] aligns them).
pub(crate) const ATOMS: usize = usize::MAX;

// ---- Reductions in registers ([`super::rows`]) -------------------------------------------------

/// A reduction that runs in registers ([`plan_reduces`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReducePlan {
    /// Source registers folded into each result register.
    pub per: usize,
    /// Threads sharing a row (a power of two within a wave, or whole waves).
    pub width: usize,
    /// Result registers per thread.
    pub nreg: usize,
    /// Offset of the cross-wave exchange in the shared arena, when a row spans several waves.
    pub scratch: Option<usize>,
    /// For a source in shared memory: the order in which each thread reads its elements into
    /// registers first.
    pub gather: Option<Layout>,
    /// For a matrix-unit accumulator's rows ([`Layout::AccRows`]): the accumulator's layout
    /// (tl.h's `reduce_acc_rows`; `per` and `width` are then its elements a row a thread and
    /// the threads sharing a row).
    pub acc: Option<Layout>,
}

// ---- Deferred reductions ([`super::defer`]) ----------------------------------------------------

/// One deferred reduction of a loop body: `body[at]` is the reduction, `body[at + 1]` its
/// combine statement; `reduce` and `combine` are their [`StmtId`]s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Deferred {
    pub at: usize,
    pub reduce: StmtId,
    pub combine: StmtId,
}

// ---- L2 hints ([`super::reuse`]) ---------------------------------------------------------------

/// The L2 hint of a copy's loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reuse {
    /// The block reads these lines again: evict them last.
    Keep,
    /// The block's last read of lines it read before: evict them first.
    Last,
}

impl Reuse {
    /// The `POL` argument of tl.h's loads.
    pub(crate) fn policy(self) -> u8 {
        match self {
            Reuse::Keep => 1,
            Reuse::Last => 2,
        }
    }
}

// ---- Loop plans ([`super::vectorize`]) ---------------------------------------------------------

/// The decision for one `parallel` loop.
#[derive(Debug, Clone)]
pub(crate) struct LoopPlan {
    /// The order in which threads take the iterations: that of a register fragment the loop
    /// touches, so each thread reaches exactly the elements it holds.
    pub layout: Layout,
    /// Present when the loop runs chunk-wise (then `layout` is [`Layout::Chunked`]).
    pub vector: Option<VectorPlan>,
    /// How the loop reads a row fragment as a broadcast (`m[i]` in a loop over `(i, j)`), when
    /// its layout has one ([`super::rows::rows_of`]).
    pub row_read: Option<RowRead>,
}

/// The register of a row fragment that register `__r` of a loop's layout meets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RowRead {
    /// Strided or chunked loops: `__r / d`.
    Div(usize),
    /// Loops over a matrix-unit accumulator of `n` columns, whose rows are
    /// [`Layout::AccRows`] `{ inst, m, wm, wn }`: tl.h's `mx::rows::of<n>(__r)`.
    Acc {
        inst: Inst,
        m: usize,
        n: usize,
        wm: usize,
        wn: usize,
    },
}

/// How a chunk-wise loop runs its lanes.
#[derive(Debug, Clone)]
pub(crate) struct VectorPlan {
    /// The innermost loop variable: lane `l` of a chunk is its value `base + l`.
    pub inner: VarId,
    /// Lanes per chunk: the chunk of the fragments the loop touches, or for a free mapping
    /// [`chunk_for`] of the widest element it moves as vectors (a wave's vectors then sit side
    /// by side: 8 lanes of f32 would put each lane's 16 bytes 32 bytes apart, half of every
    /// sector unused in global memory and a 2-way bank conflict in shared memory).
    pub lanes: usize,
    /// Accesses moved as one vector per chunk, by [`AccessId`].
    pub grouped: BTreeSet<AccessId>,
    /// Grouped stores whose tensor the kernel never reads: stored evict-first.
    pub streaming: BTreeSet<AccessId>,
    /// Grouped shared-memory accesses whose vectors are aligned in every chunk (lane 0's
    /// element offset is a multiple of `lanes`, and shared buffers start on 16 bytes): moved
    /// as vectors with no run-time test. (A test left in a serial loop's body keeps the
    /// compiler from unrolling it and from sharing the vector between a thread's chunks.)
    pub aligned: BTreeSet<AccessId>,
    /// Variables the body declares: one value per lane.
    pub lane_vars: BTreeSet<VarId>,
    /// The body's conditions (outside nested loops), which must agree across a chunk's lanes.
    pub conditions: Vec<ExprId>,
    /// The body's `let`s that read no memory and are never reassigned, which the uniformity
    /// check evaluates inline.
    pub pure_lets: BTreeMap<VarId, ExprId>,
    /// Every condition changes its value at most once over a chunk's consecutive lanes (tail
    /// guards `base + j < N` and their conjunctions): the lanes all agree exactly when the
    /// first and the last do, so the uniformity check tests those two, not every lane.
    pub endpoints: bool,
    /// Stores that together fill a 16-byte vector per chunk ([`Interleave`]), by the
    /// [`AccessId`] of each store: its group and its residue.
    pub interleaved: BTreeMap<AccessId, (usize, usize)>,
    pub groups: Vec<Interleave>,
}

/// `factor` unconditional stores to one shared buffer at `factor·j + c` of its innermost
/// dimension, `c` running over `0..factor` (`b[2j] = lo(p); b[2j + 1] = hi(p)`: unpacking),
/// all else alike and the same in every lane: a chunk of `lanes` consecutive `j` writes
/// `factor·lanes` consecutive elements, 16 bytes (a multiple of 16 in an unswizzled tile),
/// which the chunk gathers and stores as vectors (aligned: the chunk's first element is a
/// multiple of `factor·lanes`). Nothing else in the loop reads or writes the buffer.
#[derive(Debug, Clone)]
pub(crate) struct Interleave {
    pub factor: usize,
    /// The buffer's element size in bytes.
    pub elem: usize,
    /// The statement of the last of its stores in the body: where the vector is stored.
    pub last: StmtId,
    /// The two stores unpack the nibbles of one byte per lane into halves ([`Nibbles`]).
    pub nibbles: Option<Nibbles>,
}

/// A pair of adjacent stores of halves, `b[2j + c] = (((x >> s_c) & 15) as int + off) as f16`
/// with `{s_0, s_1} = {0, 4}` and `x` the same byte in both: int4 values unpacked, one byte a
/// lane. A chunk's bytes (four or a multiple) then become its halves with packed operations, two halves
/// a register (tl.h `nibbles_to_half`: a byte permute spreads two bytes into 16-bit lanes, a
/// logic operation masks a nibble and ors in the exponent of 1024, a half2 subtraction or
/// fused multiply-add removes it), instead of a shift, two logic operations and a pack per
/// half: W4A16's consumers spent 55% of the ALU pipe's cycles on that unpacking (H100, ncu).
#[derive(Debug, Clone)]
pub(crate) struct Nibbles {
    /// The byte `x`.
    pub byte: ExprId,
    /// The nibble stored first is the high one (`s_0 = 4`).
    pub high_first: bool,
    /// The integer `off` added to each nibble, in [-1024, 1024].
    pub off: i128,
}

// ---- Interior iterations ([`super::interior`]) -------------------------------------------------

/// A split loop: the copies that take the unconditional path in its interior iterations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Split {
    pub copies: Vec<Interior>,
}

/// A copy of a split loop, by [`StmtId`]: how far its region moves per iteration, per
/// dimension of the region padded to rank 4 (as `tl::Region` is), and the chunk whose
/// alignment its interior path needs (`None` for element-wise copies).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Interior {
    pub copy: StmtId,
    pub step: [i64; 4],
    pub chunk: Option<usize>,
}

// ---- Occupancy requests ([`super::occupancy`]) -------------------------------------------------

/// One request: blocks per multiprocessor, and the registers per thread that leaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Request {
    pub blocks: usize,
    pub registers: usize,
}

/// The attribute's occupancy control, evaluated for one config and target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Explicit {
    /// `__launch_bounds__(threads, blocks)` on NVIDIA; on AMD, `waves` per SIMD.
    MinBlocks {
        blocks: usize,
        waves: usize,
    },
    MaxRegisters(usize),
}

// ---- TMA entries ([`super::tma`]) --------------------------------------------------------------

/// A tensor map the launcher encodes: the tensor parameter, the box (innermost first, as the
/// driver takes it) and the swizzle in bytes (128, 64 or 32; 0 for a plain tile).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TmaMap {
    pub param: ParamId,
    pub boxes: Vec<u32>,
    pub swizzle: u32,
}

/// A loop whose loads run on TMA: the map of each load (in body order), the bytes one stage
/// receives (what its mbarrier expects) and where its mbarriers live in shared memory (one of
/// 8 bytes per stage).
#[derive(Debug, Clone)]
pub(crate) struct TmaLoop {
    pub maps: Vec<usize>,
    pub bytes: usize,
    pub barriers: usize,
}

/// A copy of a wgmma accumulator out to a global region that leaves through shared memory and
/// TMA stores, in the warp-specialised entry (see [`plan_store`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TmaStore {
    /// The map of the region's tensor: 64 × 64 boxes in the 128-byte swizzle.
    pub map: usize,
    /// Where the staging buffers start in shared memory (1024-byte aligned): two of 8 KiB per
    /// consumer warpgroup.
    pub stage: usize,
}

/// The pass's decisions: the maps, the loops and the stores by [`StmtId`].
#[derive(Debug, Clone, Default)]
pub(crate) struct TmaPlan {
    pub maps: Vec<TmaMap>,
    pub loops: BTreeMap<StmtId, TmaLoop>,
    pub stores: BTreeMap<StmtId, TmaStore>,
    /// Shared memory of the TMA entry: the plain entry's plus the mbarriers.
    pub shared_bytes: usize,
    /// The TMA entry's roles, when it is warp-specialised ([`Specialized`]).
    pub specialized: Option<Specialized>,
}

/// A warp-specialised TMA entry: the kernel's one TMA loop, a top-level statement, runs as a
/// producer warpgroup of 128 threads after the user's `threads` (one thread of it issuing the
/// loads, each stage guarded by a `full` and an `empty` mbarrier) and the user's threads as
/// consumers computing on each stage as soon as it is full, with no block barrier in the loop.
/// Taken when what comes before the loop is only `let`s, allocations and register fills
/// (every thread runs them, the producer's offsets need them) and needs no barrier, and no
/// reduction exchanges across warps (tl.h's exchange takes the whole block). The barriers in
/// and after the loop are the consumers' alone (`tl::consumer_sync`, a named barrier of the
/// user's threads): the producer only loads stages, which the mbarriers order. With two or more consumer warpgroups holding large accumulators, the producer gives
/// registers to them (`setmaxnreg`).
///
/// The entry is persistent: a block runs tiles of the kernel's grid (its own linear index,
/// then every `TL_BLOCKS`-th), so the producer loads the next tile's stages while the
/// consumers run this tile's epilogue, and the launcher gives it only as many blocks as the
/// device holds at once. That changes nothing the program can see: blocks are independent, and
/// a tile's block indices are its own (`tl::raster` maps the linear tile index onto the grid,
/// `raster` rows of blocks at a time, so that consecutive tiles share rows of A and columns
/// of B in the L2). What comes before the loop runs again for every tile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Specialized {
    /// The loop's index in the kernel body.
    pub at: usize,
    /// The entry's threads: the consumers' (the user's `threads`) and 128.
    pub threads: usize,
    /// `setmaxnreg` for the producer (down) and the consumers (up), when used.
    pub registers: Option<(usize, usize)>,
    /// Rows of blocks (`block_idx(1)`) a group of consecutive tiles spans (`tl::raster`).
    pub raster: usize,
    /// The consumers' part of the loop body writes shared memory that its previous iteration
    /// read (a tile the consumers compute, say): a consumer barrier begins each iteration
    /// ([`super::sync::back_edge`]).
    pub top_barrier: bool,
    /// The consumers' part of a tile (loop body and epilogue) touches shared memory that the
    /// next tile's touches again (an epilogue staged through a shared tile): a consumer
    /// barrier ends each tile.
    pub tile_barrier: bool,
    /// The loop body's gemm, by [`StmtId`], when it is the body's last statement and runs on
    /// wgmma, and its operands are stages or tiles the body computes afresh every iteration
    /// ([`in_flight`]): it is issued without waiting, so one group stays in flight while the
    /// next iteration runs, and each stage is released one iteration later, once
    /// `wgmma.wait_group 1` says its group is done.
    pub in_flight: Option<StmtId>,
    /// The computed operands of the in-flight gemm, each with the offset of its second copy
    /// in shared memory: iteration `i` writes copy `i % 2`, so the next iteration computes
    /// into the other while the tensor cores still read this one.
    pub rotated: Vec<(BufId, usize)>,
}

/// Why a register fragment is kept in shared memory: the first use that no register layout
/// served ([`super::layout`], [`super::rows`], [`super::cols`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Why {
    /// A shared tile (never in registers): not a demotion.
    Shared,
    /// Accessed outside every `parallel` loop.
    Outside,
    /// Indexed other than by its loop's variables.
    Index,
    /// An A or B operand of `gemm`.
    GemmOperand,
    /// A `gemm`'s A operand that its accumulator's registers cannot feed.
    RegisterA,
    /// A reduction the registers do not serve (only along the last dimension, into a
    /// fragment of the leading ones).
    Reduce,
    /// No row layout serves its row uses: rows read from fragments of different layouts.
    Rows,
    /// The source of a reduction whose result is kept in shared memory.
    Reduced,
    /// A loop or copy touches it beside a fragment of another layout.
    Agree,
    /// Read as a column broadcast that no column layout serves.
    Cols,
    /// An access its layout does not serve.
    Unserved,
}

impl Why {
    /// In the user's terms.
    pub(crate) fn text(self) -> &'static str {
        match self {
            Why::Shared => "a shared tile",
            Why::Outside => "accessed outside a `parallel` loop",
            Why::Index => "indexed other than by its loop's variables",
            Why::GemmOperand => "an A or B operand of `gemm`",
            Why::RegisterA => {
                "the A operand of a `gemm` that its registers cannot feed (A stays in registers \
                 when it is laid out as a 16-bit mma.sync or wgmma accumulator whose warps own \
                 whole rows, as the product's own accumulator is, and is not read `.t()`)"
            }
            Why::Reduce => {
                "a reduction the registers do not serve (they reduce along the last dimension \
                 into a fragment of the leading ones)"
            }
            Why::Rows => {
                "no row layout serves its rows (they are read from fragments in different layouts)"
            }
            Why::Reduced => "the source of a reduction whose result is kept in shared memory",
            Why::Agree => "a loop or copy touches it beside a fragment of another layout",
            Why::Cols => "read as a column broadcast that no column layout serves",
            Why::Unserved => "an access its layout does not serve",
        }
    }
}

/// Which buffers are kept in shared memory, each with its first cause ([`Why`]) and the
/// statement that caused it where one did. Reads as `demoted[b]`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Demoted(Vec<Option<(Why, Option<crate::ctxt::Range>)>>);

impl Demoted {
    pub(crate) fn new(n: usize) -> Demoted {
        Demoted(vec![None; n])
    }
    /// Demotes `b` (the first cause stays); whether it was not demoted yet.
    pub(crate) fn set(&mut self, b: BufId, why: Why, at: Option<crate::ctxt::Range>) -> bool {
        let new = self.0[b].is_none();
        if new {
            self.0[b] = Some((why, at));
        }
        new
    }
    pub(crate) fn why(&self, b: BufId) -> Option<(Why, Option<crate::ctxt::Range>)> {
        self.0[b]
    }
}

impl std::ops::Index<BufId> for Demoted {
    type Output = bool;
    fn index(&self, b: BufId) -> &bool {
        if self.0[b].is_some() {
            &true
        } else {
            &false
        }
    }
}
