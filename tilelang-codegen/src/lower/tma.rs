//! Pass: TMA loads (sm_90a). A `pipelined` loop whose stages hold wgmma operands can load them
//! with the tensor memory accelerator instead of `cp.async`: one thread issues one bulk tensor
//! copy per 64-column atom of each tile, which lands in shared memory already in the swizzled
//! `ATOMS` layout the tensor cores read (the copy engine applies the 128/64/32-byte swizzle
//! the atom's width implies), and completes on an mbarrier per stage that every thread waits
//! on. Out-of-bounds elements of a box read as zeros, which is `copy`'s tail.
//!
//! The host encodes one tensor map per (tensor, box) ([`TmaMap`]), and the kernel takes them as
//! parameters of a second entry point, `<entry>__tma`, printed beside the plain one in the
//! same object: the launcher runs it when the tensors meet what TMA needs (16-byte aligned
//! base, rows a multiple of 16 bytes: checked at run time, `tilelang_rt::tma`), else the plain
//! entry. The pass decides which loops and copies qualify:
//!
//! * the target issues wgmma (`MatrixUnit::Wgmma`), the loop has stages ([`super::pipeline`])
//!   and a gemm on wgmma;
//! * every load of the loop goes into a tile of at most 256 rows from a tensor of the same
//!   dtype and rank 2 to 5 (a rank-dropping copy's leading dimensions are boxes of extent 1):
//!   an `ATOMS` tile ([`super::swizzle`], one box per atom), or a plain row-major tile whose
//!   rows are whole 16-byte vectors of at most 256 elements (one box; a tile of bytes that
//!   the consumers unpack, say);
//! * the region's innermost offset is provably a multiple of 16 bytes: a TMA coordinate that
//!   is not faults at run time (measured, shared/LOWERING.md §4), so a copy whose offset the
//!   facts do not settle keeps the loop on `cp.async`.

use super::plan::*;
use super::util::*;
use super::{layout, sync};
use crate::ir::visit::*;
use crate::ir::*;
use crate::target::MatrixUnit;

impl TmaPlan {
    /// The index of `map` among the entry's maps, added if new (one map per tensor and box).
    fn map_index(&mut self, map: TmaMap) -> usize {
        match self.maps.iter().position(|m| *m == map) {
            Some(i) => i,
            None => {
                self.maps.push(map);
                self.maps.len() - 1
            }
        }
    }
}

pub(super) fn plan_tma(p: &Plan) -> TmaPlan {
    let mut out = TmaPlan {
        shared_bytes: p.shared_bytes,
        ..TmaPlan::default()
    };
    if p.target.matrix != MatrixUnit::Wgmma {
        return out;
    }
    walk(&p.inst.k.body, &mut |s| {
        let StmtKind::For {
            kind: LoopKind::Pipelined { .. },
            body,
            ..
        } = &s.kind
        else {
            return;
        };
        let Some(&Staging {
            loads: nloads,
            stages,
        }) = p.staged.get(&p.inst.ids.stmt(s))
        else {
            return;
        };
        // Loops that feed the tensor cores: what TMA is for here (and what was measured).
        let mut wgmma = false;
        walk(body, &mut |s| {
            wgmma |= matches!(&s.kind, StmtKind::Gemm { c, .. } if p.storage[*c].matrix() == Some(Inst::Wgmma));
        });
        if !wgmma {
            return;
        }
        // Every load qualifies, or the loop stays on cp.async and adds no map.
        let Some(copies) = body[..nloads]
            .iter()
            .map(|load| tma_copy(p, load))
            .collect::<Option<Vec<_>>>()
        else {
            return;
        };
        let mut maps = Vec::new();
        let mut bytes = 0;
        for (map, n) in copies {
            maps.push(out.map_index(map));
            bytes += n;
        }
        // `full` mbarriers, then `empty` ones (used when warp-specialised).
        let barriers = out.shared_bytes.div_ceil(8) * 8;
        out.shared_bytes = barriers + 16 * stages;
        out.loops.insert(
            p.inst.ids.stmt(s),
            TmaLoop {
                maps,
                bytes,
                barriers,
            },
        );
    });
    // The TMA entry's mbarriers must fit beside the plain entry's shared memory.
    if out.shared_bytes > p.target.max_shared {
        return TmaPlan {
            shared_bytes: p.shared_bytes,
            ..TmaPlan::default()
        };
    }
    out.specialized = specialize(p, &out);
    // The rotated tiles' second copies lie after the mbarriers.
    if let Some(&(b, at)) = out.specialized.as_ref().and_then(|w| w.rotated.last()) {
        out.shared_bytes = at + p.inst.stage_bytes(b);
    }
    plan_store(p, &mut out);
    out
}

/// The staging bytes of a TMA store per consumer warpgroup: two 64 × 64 boxes of 16-bit values.
const STORE_STAGE_BYTES: usize = 2 * 64 * 64 * 2;

/// Where a TMA store's staging buffers start after `bytes` of shared memory (1024-aligned, for
/// the 128-byte swizzle) and where they end, for an accumulator of `warps` warps.
fn store_stage(bytes: usize, warps: usize) -> (usize, usize) {
    let stage = bytes.div_ceil(1024) * 1024;
    (stage, stage + STORE_STAGE_BYTES * (warps / 4))
}

/// The warp-specialised entry's epilogue store, when it can leave through TMA: the kernel's
/// last statement copies a wgmma accumulator (f32, a warp per 16 rows, whole 64-column boxes,
/// every consumer warp holding rows of it) to a region of a 16-bit tensor whose innermost
/// offset is a multiple of 16 bytes (a store's coordinate faults otherwise, as a load's), and
/// the staging buffers fit after the rest of the entry's shared memory. Each consumer
/// warpgroup then converts its rows into shared memory with `stmatrix` (four instructions per
/// 64 × 64 box and thread, where the register stores took 32 of 4 bytes, half of each 32-byte
/// sector), and one of its threads stores the box with the copy engine, which writes whole
/// lines and clips the box at the tensor's edges (`copy`'s tail) while the consumers go on to
/// the next tile; two buffers a warpgroup let the next box be staged while one is stored
/// (`tl::store_acc_tma`).
fn plan_store(p: &Plan, out: &mut TmaPlan) {
    let Some(w) = &out.specialized else {
        return;
    };
    let Some((map, warps)) = store_copy(p, w.at) else {
        return;
    };
    let (stage, end) = store_stage(out.shared_bytes, warps);
    if end > p.target.max_shared {
        return;
    }
    let map = out.map_index(map);
    let last = p.inst.k.body.last().expect("a store follows the loop");
    out.stores
        .insert(p.inst.ids.stmt(last), TmaStore { map, stage });
    out.shared_bytes = end;
}

/// The tensor map of [`plan_store`]'s TMA store and the accumulator's warps (of 16 rows each),
/// when the kernel's last statement, after the pipelined loop at `at`, qualifies.
fn store_copy(p: &Plan, at: usize) -> Option<(TmaMap, usize)> {
    let k = p.inst.k;
    let (last, _) = k.body.split_last()?;
    if k.body.len() <= at + 1 {
        return None;
    }
    let StmtKind::Copy {
        src: Tile::Buffer(acc),
        dst: Tile::Region { tensor, offsets },
    } = &last.kind
    else {
        return None;
    };
    let Storage::Reg {
        layout:
            Layout::Matrix {
                inst: Inst::Wgmma,
                m,
                n,
                wm,
                wn,
            },
        ..
    } = p.storage[*acc]
    else {
        return None;
    };
    let rank = offsets.len();
    let ok = k.buffers[*acc].dtype == Dtype::F32
        && p.inst.buffer_shape(*acc) == [m, n]
        && wn == 1
        && m == 16 * wm
        && wm * 32 == p.threads
        && n % 64 == 0
        && matches!(tensor_dtype(k, *tensor), Dtype::F16 | Dtype::Bf16)
        && (2..=5).contains(&rank)
        && multiple_of(&p.inst, &offsets[rank - 1], 8);
    let mut boxes = vec![64, 64];
    boxes.resize(rank, 1);
    let map = TmaMap {
        param: *tensor,
        boxes,
        swizzle: 128,
    };
    ok.then_some((map, wm))
}

/// Rows of blocks per group of consecutive tiles: 8 rows of 128 × 64 A tiles (1 MiB of f16 at
/// K = 4096) stay in the L2 while a group sweeps the columns.
const RASTER_ROWS: usize = 8;

/// Whether the TMA entry can be warp-specialised (see [`Specialized`]).
fn specialize(p: &Plan, t: &TmaPlan) -> Option<Specialized> {
    let body = &p.inst.k.body;
    let at = body
        .iter()
        .position(|s| t.loops.contains_key(&p.inst.ids.stmt(s)))?;
    // The producer's 128 threads must fit in a block beside the user's (boxes of at most 256
    // rows already keep wgmma tiles to 4 warpgroups; this keeps the rule where it belongs).
    if t.loops.len() != 1 || p.threads % 128 != 0 || p.threads + 128 > 1024 || p.explicit.is_some()
    {
        return None;
    }
    let prelude_ok = body[..at].iter().all(|s| match &s.kind {
        StmtKind::Let { init, .. } => {
            let mut loads = false;
            each_expr(init, &mut |e| loads |= matches!(e.kind, ExprKind::Load(_)));
            !loads
        }
        StmtKind::Fill { buf, .. } => matches!(p.storage[*buf], Storage::Reg { .. }),
        StmtKind::Alloc(_) => true,
        _ => false,
    });
    // Barriers after the prelude become the consumers' own (the producer never meets them);
    // the prelude, which both roles run, must need none. Reductions keep theirs inside tl.h,
    // over the whole block.
    let mut prelude_barrier = p.barriers.contains(&p.inst.ids.stmt(&body[at]));
    walk(&body[..at], &mut |s| {
        prelude_barrier |= p.barriers.contains(&p.inst.ids.stmt(s))
    });
    if !prelude_ok || prelude_barrier || !p.reduces.is_empty() || !p.deferred.is_empty() {
        return None;
    }
    let consumers = p.threads / 128;
    let fragments = layout::thread_registers(&p.inst, &p.storage);
    let StmtKind::For { body: lbody, .. } = &body[at].kind else {
        unreachable!("TMA loops are pipelined loops")
    };
    let nloads = p.staged.get(&p.inst.ids.stmt(&body[at]))?.loads;
    let (loads, compute) = lbody.split_at(nloads);
    let top_barrier = sync::back_edge(p, &[compute]);
    // A tile's epilogue, then the next tile's loop (whose first barrier, with `top_barrier`,
    // already separates them) or, with no iteration, its epilogue.
    let epilogue = &body[at + 1..];
    let tile_barrier =
        !top_barrier && sync::back_edge(p, &[compute, epilogue]) || sync::back_edge(p, &[epilogue]);
    // Where the consumers' fragments take 128 registers a thread or more (a 64 × 256
    // accumulator per warpgroup), or they do more than the gemm (unpacking a tile), the
    // block's 64 K registers are rebalanced: the producer keeps 40 a thread, the consumers
    // share the rest (multiples of 8, at most 256). This needs one block per multiprocessor;
    // smaller tiles with the gemm alone keep the compiler's allocation and may fit two.
    // (W4A16's 128 × 128 × 64 consumers spilled 8 bytes at the 168 registers of 384 threads.)
    let (heavy, computes) = (fragments >= 128, compute.len() > 1);
    let registers = (consumers >= 2 && (heavy || computes)).then(|| {
        let up = ((65536 / 128 - 40) / consumers / 8 * 8).min(256);
        (40, up)
    });
    let staged: Vec<BufId> = loads.iter().map(load_buf).collect();
    // The entry's shared bytes, with the rotated tiles' second copies when they fit.
    let mut bytes = t.shared_bytes;
    let (in_flight, rotated) = match in_flight(p, &staged, compute) {
        Some((g, computed)) => {
            // The computed operands get a second copy after the TMA entry's arena.
            let mut rotated = Vec::new();
            for b in computed {
                let align = if p.swizzled[b] == ATOMS { 1024 } else { 16 };
                bytes = bytes.div_ceil(align) * align;
                rotated.push((b, bytes));
                bytes += p.inst.stage_bytes(b);
            }
            if bytes <= p.target.max_shared {
                (Some(g), rotated)
            } else {
                bytes = t.shared_bytes;
                (None, Vec::new())
            }
        }
        None => (None, Vec::new()),
    };
    // Consumers with 64 × 256 accumulators and more work than the gemm fit the rebalanced
    // registers only when their accumulator leaves through the TMA store ([`plan_store`]):
    // with register stores ptxas spilled W4A16's 128 × 256 × 64 consumers at 232 registers
    // (64 bytes; 2026-12-05), with `stmatrix` none. Otherwise they keep the TMA entry that is
    // not specialised, whose 256 threads use 254.
    if heavy && computes {
        let (_, warps) = store_copy(p, at)?;
        if store_stage(bytes, warps).1 > p.target.max_shared {
            return None;
        }
    }
    Some(Specialized {
        at,
        threads: p.threads + 128,
        registers,
        raster: RASTER_ROWS,
        top_barrier,
        tile_barrier,
        in_flight,
        rotated,
    })
}

/// The gemm of a warp-specialised loop that may stay in flight, and its operands that the
/// consumers compute (which then rotate between two copies): the consumers' part of the body
/// ends with a wgmma gemm; nothing before it touches the accumulator; each operand is a stage
/// of the loop's loads, or a shared tile that the statements before the gemm overwrite
/// entirely ([`overwrites`]) and that nothing else in the kernel touches. With those, the
/// group reading iteration `i`'s tiles can run on while iteration `i + 1` computes.
fn in_flight(p: &Plan, staged: &[BufId], compute: &[Stmt]) -> Option<(StmtId, Vec<BufId>)> {
    let (g, rest) = compute.split_last()?;
    let StmtKind::Gemm { a, b, c, .. } = &g.kind else {
        return None;
    };
    if p.storage[*c].matrix() != Some(Inst::Wgmma) {
        return None;
    }
    // The statements of `stmts` (nested ones included) that touch buffer `x`.
    let touching = |stmts: &[Stmt], x: BufId| {
        let mut n = 0;
        walk(stmts, &mut |s| {
            let mut hit = false;
            each_buffer(s, &mut |y| hit |= y == x);
            n += usize::from(hit);
        });
        n
    };
    if touching(rest, *c) > 0 {
        return None;
    }
    let mut computed = Vec::new();
    for x in [*a, *b] {
        if staged.contains(&x) || computed.contains(&x) {
            continue;
        }
        // Touched anywhere but in `rest` and the gemm: its copies would disagree.
        let (elsewhere, here) = (touching(&p.inst.k.body, x), touching(compute, x));
        let fresh = rest.iter().any(|s| overwrites(p, s, x));
        if elsewhere != here || !fresh || !matches!(p.storage[x], Storage::Shared { .. }) {
            return None;
        }
        computed.push(x);
    }
    Some((p.inst.ids.stmt(g), computed))
}

/// Whether `s` writes every element of buffer `b` whenever it runs: a copy into it or a fill
/// of it, or a `parallel` loop whose unconditional stores to it (at the top of its body) hit
/// every element, counted by running the loop's iterations on the indices (its extents are
/// constants; indices that are not integer expressions of its variables count as misses).
fn overwrites(p: &Plan, s: &Stmt, b: BufId) -> bool {
    match &s.kind {
        StmtKind::Copy {
            dst: Tile::Buffer(x),
            ..
        } => *x == b,
        StmtKind::Fill { buf, .. } => *buf == b,
        StmtKind::For {
            kind: LoopKind::Parallel { extents },
            vars,
            body,
        } => {
            let Some(ext) = extents
                .iter()
                .map(|e| eval_const(e, p.inst.vals).and_then(|v| usize::try_from(v).ok()))
                .collect::<Option<Vec<usize>>>()
            else {
                return false;
            };
            let shape = p.inst.buffer_shape(b);
            let elems: usize = shape.iter().product();
            let iters: usize = ext.iter().product();
            let stores: Vec<&Access> = body
                .iter()
                .filter_map(|s| match &s.kind {
                    StmtKind::Store { access, .. } if access.target == Target::Buffer(b) => {
                        Some(access)
                    }
                    _ => None,
                })
                .collect();
            if stores.is_empty() || iters.saturating_mul(stores.len()) > 1 << 20 {
                return false;
            }
            let mut seen = vec![false; elems];
            let mut bind = vec![0i128; vars.len()];
            for it in 0..iters {
                let mut rest = it;
                for d in (0..ext.len()).rev() {
                    bind[d] = (rest % ext[d]) as i128;
                    rest /= ext[d];
                }
                for a in &stores {
                    let mut lin: usize = 0;
                    for (d, e) in a.index.iter().enumerate() {
                        match eval_at(e, p.inst.vals, vars, &bind) {
                            Some(i) if i >= 0 && (i as usize) < shape[d] => {
                                lin = lin * shape[d] + i as usize
                            }
                            _ => return false,
                        }
                    }
                    seen[lin] = true;
                }
            }
            seen.iter().all(|&x| x)
        }
        _ => false,
    }
}

/// The map a load copy takes and the bytes it moves, when it qualifies (see the module docs).
fn tma_copy(p: &Plan, s: &Stmt) -> Option<(TmaMap, usize)> {
    let StmtKind::Copy {
        src: Tile::Region { tensor, offsets },
        dst: Tile::Buffer(b),
    } = &s.kind
    else {
        return None;
    };
    let (k, inst) = (p.inst.k, &p.inst);
    let shape = inst.buffer_shape(*b);
    let elem = k.buffers[*b].dtype.size_bytes();
    let rank = offsets.len();
    let atoms = p.swizzled[*b] == ATOMS;
    // A bulk tensor copy writes to a 128-byte aligned destination: the tile's place in the
    // arena and every stage of it (atom tiles are 1024-byte aligned already).
    let Storage::Shared { offset } = p.storage[*b] else {
        return None;
    };
    let aligned = offset % 128 == 0 && inst.stage_bytes(*b) % 128 == 0;
    let plain = p.swizzled[*b] == 0 && shape.len() == 2 && shape[1] * elem % 16 == 0 && aligned;
    let dtype = k.buffers[*b].dtype;
    let ok = (atoms || plain)
        && matches!(dtype, Dtype::F16 | Dtype::Bf16 | Dtype::U8)
        && shape.len() == 2
        && shape[0] <= 256
        && shape[1] <= 256
        && tensor_dtype(k, *tensor) == k.buffers[*b].dtype
        && (2..=5).contains(&rank)
        && multiple_of(inst, &offsets[rank - 1], 16 / elem as i128);
    if !ok {
        return None;
    }
    let (rows, cols) = (shape[0], shape[1]);
    let width = if atoms { cols.min(64) } else { cols };
    let mut boxes = vec![width as u32, rows as u32];
    boxes.resize(rank, 1);
    let map = TmaMap {
        param: *tensor,
        boxes,
        swizzle: if atoms { (width * elem) as u32 } else { 0 },
    };
    Some((map, rows * cols * elem))
}

/// Whether integer expression `e` is a multiple of `m` whatever the run-time values: constant
/// expressions that are, sums of such, and products with such a factor; a variable only through a `let`
/// of the kernel's top level, never assigned, whose value is (loop variables and block
/// indices are not).
pub(crate) fn multiple_of(inst: &Instance, e: &Expr, m: i128) -> bool {
    if let Some(v) = eval_const(e, inst.vals) {
        return v % m == 0;
    }
    match &e.kind {
        ExprKind::Int(_) | ExprKind::Const(_) => {
            eval_const(e, inst.vals).is_some_and(|v| v % m == 0)
        }
        ExprKind::Binary(BinOp::Add | BinOp::Sub, x, y) if e.ty.is_int() => {
            multiple_of(inst, x, m) && multiple_of(inst, y, m)
        }
        ExprKind::Binary(BinOp::Mul, x, y) if e.ty.is_int() => {
            multiple_of(inst, x, m) || multiple_of(inst, y, m)
        }
        ExprKind::Cast(x) if e.ty.is_int() && x.ty.is_int() => multiple_of(inst, x, m),
        ExprKind::Var(v) => {
            let mut assigned = false;
            walk(&inst.k.body, &mut |s| {
                assigned |= matches!(&s.kind, StmtKind::Assign { var, .. } if var == v);
            });
            !assigned
                && inst.k.body.iter().any(|s| match &s.kind {
                    StmtKind::Let { var, init } if var == v => multiple_of(inst, init, m),
                    _ => false,
                })
        }
        _ => false,
    }
}
