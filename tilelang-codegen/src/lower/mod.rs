//! Pass 3 (GPU backends), lower: [`crate::ir`] → HIP C++ for one (kernel, config, target),
//! written against `include/tl.h`. The same source compiles with nvcc (NVIDIA), hipcc and clang
//! (AMD).
//!
//! The tile IR carries no hardware decisions (ARCHITECTURE.md, invariant 7). They are made
//! here, by passes that each decide one thing and record it in a `Plan`, in this order:
//!
//! 0. `trim`: shared tiles' columns that no load reaches and only copies from global memory
//!    write (a tile padded against bank conflicts) are dropped; the passes below see the
//!    narrower kernel.
//! 1. `layout`: where each buffer lives and, for register fragments, how its elements map onto
//!    threads and registers (strided, chunked, a matrix unit's accumulator layout, and with
//!    `rows` the row layout of reduction results and row broadcasts, with `cols` the column
//!    layout of rows read as column broadcasts); demotion to shared memory where no register
//!    layout serves every access (what serves an access is `served`'s, which the planner also
//!    checks on the finished plan).
//! 2. `pipeline`: the stages of `pipelined` loops whose loads can run ahead (`cp.async`).
//! 3. `shared`: the shared-memory arena (offsets, stage copies); `swizzle`: which tiles are
//!    stored swizzled, for `ldmatrix` or, by a bank model, for loops that read across rows;
//!    `rows` then places the exchange areas of reductions that run in registers, and `defer`
//!    picks the reductions a loop carries across its iterations (one exchange after the loop
//!    instead of one per tile).
//! 4. `vectorize`: per `parallel` loop, the thread mapping and vector width of its accesses;
//!    `guards`: the tail guards on tile coordinates compared in 32 bits;
//!    `reuse`: the L2 hints of copies that read what the block reads again; `interior`: the
//!    sequential loops split into the iterations whose copies need no edge tests and the rest.
//! 5. `sync`: where block barriers go.
//! 6. `occupancy`: the requests for resident blocks per multiprocessor (a register cap) the
//!    build may try (NVIDIA, kernels without `gemm` or sequential loops over global memory).
//! 7. `notes`: each fragment kept in shared memory and its first cause, each `gemm` on a
//!    slower path than its target's first matrix instruction, the path and the first
//!    condition it failed (`layout::matrix_miss`), on their lines (the build prints them).
//!
//! `print` then writes the C++ and decides nothing. `plan` alone is what the macro needs
//! (entry, threads, shared bytes, the target's limits as diagnostics); [`emit`] also prints.
//!
//! Imports go one way (`xtask/tests/imports.rs`): this driver imports the passes; the passes
//! import the decisions' types from `plan` (the `Plan` and each pass's record), the IR walkers
//! from [`crate::ir::visit`], shared helpers from `util` and `names`, and a pass they build on
//! by name (`served` uses `rows` and `cols`), never this module.

mod affine;
mod check;
mod cols;
mod defer;
mod guards;
mod instance;
mod interior;
mod layout;
mod names;
mod notes;
mod occupancy;
mod pipeline;
mod plan;
mod print;
mod reuse;
mod rows;
mod served;
mod shared;
mod swizzle;
mod sync;
mod tma;
mod trim;
mod util;
mod vectorize;

use crate::ctxt::Diagnostic;
use crate::ir::*;
use crate::target::Target as Gpu;
use std::collections::{BTreeMap, BTreeSet};

pub use names::{c_name, ctype, entry_name};
pub use plan::TmaMap;
pub(crate) use plan::*;

/// The tile library's headers, as (file name, text): every generated source includes `tl.h`,
/// which includes the others (`tl_host.h`, the host emulation's platform layer, is not among
/// them: device builds never include it). The build writes them all beside the sources.
pub const HEADERS: &[(&str, &str)] = &[
    ("tl.h", include_str!("../../include/tl.h")),
    ("tl_platform.h", include_str!("../../include/tl_platform.h")),
    ("tl_libm.h", include_str!("../../include/tl_libm.h")),
    ("tl_scalar.h", include_str!("../../include/tl_scalar.h")),
    ("tl_reduce.h", include_str!("../../include/tl_reduce.h")),
    ("tl_copy.h", include_str!("../../include/tl_copy.h")),
    ("tl_mma.h", include_str!("../../include/tl_mma.h")),
    ("tl_hopper.h", include_str!("../../include/tl_hopper.h")),
    ("tl_amd_mma.h", include_str!("../../include/tl_amd_mma.h")),
    ("tl_acc_rows.h", include_str!("../../include/tl_acc_rows.h")),
];

/// One compiled unit: a `__global__` function and what the launcher needs to call it.
#[derive(Debug, Clone, PartialEq)]
pub struct HipKernel {
    /// The `extern "C"` symbol.
    pub entry: String,
    pub source: String,
    pub threads: u32,
    /// Dynamic shared memory, bytes.
    pub shared_bytes: usize,
    /// Fragments kept in shared memory because no register layout serves all their uses (the
    /// build reports them: they cost shared memory and barriers).
    pub demoted: Vec<String>,
    /// Each fragment kept in shared memory and each `gemm` on a slower path than the target's
    /// first matrix instruction: its line, what happens and why (`notes.rs`; the build
    /// reports them).
    pub notes: Vec<String>,
    /// The path each `gemm` takes, in program order (`notes::gemm_paths`: `wgmma`,
    /// `mma.sync`, `FMA`, ...): `manifest.tsv`'s `gemms` column.
    pub gemms: Vec<String>,
    /// The same plan printed with each request for resident blocks (the occupancy pass), in the
    /// order the build tries them; `source` asks for none.
    pub requests: Vec<Bounded>,
    /// The blocks per multiprocessor `source` asks for (the attribute's `min_blocks`), else 1.
    pub min_blocks: usize,
}

/// A kernel's source asking the device compiler to keep `min_blocks` blocks resident per
/// multiprocessor, which caps it at `registers` per thread.
#[derive(Debug, Clone, PartialEq)]
pub struct Bounded {
    pub min_blocks: usize,
    pub registers: usize,
    pub source: String,
}

/// What the launcher needs to call a lowered (kernel, config): no source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    pub entry: String,
    pub threads: u32,
    pub shared_bytes: usize,
    /// The object's second entry, whose pipelined loads run on TMA (`lower/tma.rs`), when it has one.
    pub tma: Option<TmaLaunch>,
}

/// The TMA entry of an object: its symbol, its shared memory and the tensor maps it takes after
/// the plain entry's parameters, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TmaLaunch {
    pub entry: String,
    /// Its block: the plain entry's, or 128 threads more when warp-specialised.
    pub threads: u32,
    pub shared_bytes: usize,
    pub maps: Vec<TmaMap>,
    /// The entry walks the grid's tiles itself (warp-specialised entries): launch it with at
    /// most as many blocks as the device holds at once, in one dimension.
    pub persistent: bool,
}

/// Plans one (kernel, config) for `target`: every decision, nothing printed.
///
/// Validation has accepted the kernel, so what can still fail are the target's limits (shared
/// memory, registers per thread) and constructs this lowering cannot express. Both are a
/// [`Diagnostic`]: the limits on the config's name in `configs = [..]` (naming the target and
/// the numbers, with a hint), the others on the statement. The macro reports them as compile
/// errors; the build script leaves such an object out and lets the macro report it.
pub(crate) fn plan<'a>(
    k: &'a Kernel,
    config: usize,
    target: &'a Gpu,
) -> Result<Plan<'a>, Diagnostic> {
    let cfg = &k.configs[config];
    let limit = |message: String, hint: String| Diagnostic {
        span: cfg.name.span().into(),
        message: format!(
            "config `{}` of kernel `{}` cannot be compiled for {}: {message}",
            cfg.name, k.name, target.arch
        ),
        hint: Some(hint),
        over_limits: true,
    };
    let Some(threads) = eval_const(&k.threads, &cfg.values).filter(|t| (1..=1024).contains(t))
    else {
        return Err(Diagnostic {
            over_limits: false,
            ..limit(
                "`threads` does not evaluate to 1..=1024".into(),
                "validation should have said so: please report this".into(),
            )
        });
    };
    let threads = threads as usize;
    let inst = Instance::new(k, config);
    let (storage, demotions) = layout::plan_storage(&inst, threads, target);
    if let Some((span, what)) = check::unsupported(k, &storage) {
        return Err(Diagnostic {
            span,
            message: format!(
                "config `{}` of kernel `{}`: the {} lowering cannot express {what}",
                cfg.name, k.name, target.arch
            ),
            hint: Some("validation should have rejected this: please report it; meanwhile write the statement another way".into()),
            over_limits: false,
        });
    }
    let regs = layout::thread_registers(&inst, &storage);
    if regs > target.registers_per_thread() {
        return Err(limit(
            format!(
                "its fragments and local buffers need {regs} 32-bit registers per thread, and a thread of {} has {}",
                target.arch,
                target.registers_per_thread()
            ),
            format!(
                "use more threads or smaller fragments in this config (register use: {}), or keep the tile in shared memory (`alloc_shared`)",
                layout::register_report(&inst, &storage)
            ),
        ));
    }
    let swizzled = swizzle::plan_swizzle(&inst, &storage, threads, target.wave as usize);
    // Pipelined loops get their stages when they fit in shared memory, else run as plain loops.
    let mut stages = pipeline::plan_pipelines(&inst, &storage, target);
    let (mut storage, mut shared_bytes) = shared::arena(&inst, &storage, &stages, &swizzled);
    if shared_bytes > target.max_shared && stages.iter().any(|&n| n > 1) {
        stages = vec![1; stages.len()];
        (storage, shared_bytes) = shared::arena(&inst, &storage, &stages, &swizzled);
    }
    let staged = pipeline::plan_staging(&inst, &storage, &stages);
    let reduces = rows::plan_reduces(
        &inst,
        threads,
        target.wave as usize,
        &storage,
        &mut shared_bytes,
    );
    if shared_bytes > target.max_shared {
        return Err(limit(
            format!(
                "it needs {shared_bytes} bytes of shared memory per block, and {} allows {}",
                target.arch, target.max_shared
            ),
            format!(
                "use smaller tiles in this config (shared memory: {})",
                shared::shared_report(&inst, &storage, &stages)
            ),
        ));
    }
    let deferred = defer::plan_deferred(&inst, &storage, &reduces);
    let reuse = if target.l2_hints() {
        reuse::plan_reuse(&inst, &storage)
    } else {
        BTreeMap::new()
    };
    let async_proxy = storage.iter().any(|s| s.matrix() == Some(Inst::Wgmma));
    let mut plan = Plan {
        inst,
        target,
        threads,
        storage,
        demotions,
        async_proxy,
        tma: TmaPlan::default(),
        swizzled,
        staged,
        shared_bytes,
        loops: BTreeMap::new(),
        store_strides: Vec::new(),
        guards: BTreeMap::new(),
        write_once: Vec::new(),
        barriers: BTreeSet::new(),
        reduces,
        deferred,
        reuse,
        splits: BTreeMap::new(),
        requests: Vec::new(),
        min_blocks: 1,
        explicit: None,
    };
    plan.write_once = vectorize::write_once(k);
    plan.loops = vectorize::plan_loops(&plan);
    plan.store_strides = vectorize::store_strides(&plan);
    plan.guards = guards::plan_guards(&plan.inst);
    // The printer reads each register buffer as its layout says: an access the layout does
    // not serve would read another thread's element. The layout pass demoted every such
    // buffer; this is the backstop that turns a gap in it into an error, not a wrong result.
    let layout_of = |b: BufId| match plan.storage[b] {
        Storage::Reg { layout, .. } => Some(layout),
        _ => None,
    };
    let loop_layout = |s: &Stmt| {
        plan.loops
            .get(&plan.inst.ids.stmt(s))
            .map_or(Layout::Strided, |l| l.layout)
    };
    if let Some(&(b, span)) = served::unserved(
        &plan.inst,
        threads,
        target.wave as usize,
        &layout_of,
        &loop_layout,
    )
    .first()
    {
        return Err(Diagnostic {
            span,
            message: format!(
                "config `{}` of kernel `{}`: internal error: the {} lowering holds `{}` in registers in a layout this statement's access does not meet",
                cfg.name, k.name, target.arch, k.buffers[b].name
            ),
            hint: Some("please report this; meanwhile `alloc_shared` keeps the buffer in shared memory".into()),
            over_limits: false,
        });
    }
    plan.splits = interior::plan_splits(&plan);
    plan.barriers = sync::plan_barriers(&plan);
    let fragment_registers = layout::thread_registers(&plan.inst, &plan.storage);
    plan.explicit = occupancy::explicit(
        &plan.inst,
        target,
        threads,
        plan.shared_bytes,
        fragment_registers,
    )
    .map_err(|m| {
        limit(
            m,
            "relax the request in the attribute, or change this config's tiles or threads".into(),
        )
    })?;
    if let Some(Explicit::MinBlocks { blocks, .. }) = plan.explicit {
        plan.min_blocks = blocks;
    }
    if plan.explicit.is_none() {
        plan.requests =
            occupancy::plan_requests(k, target, threads, plan.shared_bytes, fragment_registers);
    }
    plan.tma = tma::plan_tma(&plan);
    Ok(plan)
}

impl Plan<'_> {
    /// The deferral whose reduction is the statement `key`, if any.
    pub(crate) fn deferral_of_reduce(&self, key: StmtId) -> Option<&Deferred> {
        self.deferred.values().flatten().find(|d| d.reduce == key)
    }

    /// Whether `s` is the combine statement of a deferred reduction ([`defer`]).
    pub(crate) fn is_deferred_combine(&self, s: &Stmt) -> bool {
        let key = self.inst.ids.stmt(s);
        self.deferred.values().flatten().any(|d| d.combine == key)
    }

    /// The fragments demoted to shared memory, by name.
    pub fn demoted(&self) -> Vec<String> {
        (0..self.inst.k.buffers.len())
            .filter(|&b| {
                self.inst.k.buffers[b].scope == Scope::Fragment
                    && matches!(self.storage[b], Storage::Shared { .. })
            })
            .map(|b| self.inst.k.buffers[b].name.to_string())
            .collect()
    }

    pub fn launch(&self) -> Launch {
        let entry = entry_name(self.inst.k, self.inst.config);
        Launch {
            tma: (!self.tma.maps.is_empty()).then(|| TmaLaunch {
                entry: format!("{entry}{}", crate::names::TMA_SUFFIX),
                threads: self
                    .tma
                    .specialized
                    .as_ref()
                    .map_or(self.threads, |w| w.threads) as u32,
                shared_bytes: self.tma.shared_bytes,
                maps: self.tma.maps.clone(),
                persistent: self.tma.specialized.is_some(),
            }),
            entry,
            threads: self.threads as u32,
            shared_bytes: self.shared_bytes,
        }
    }
}

/// What the launcher needs for one (kernel, config, target), or the diagnostic of `plan`.
pub fn launch(k: &Kernel, config: usize, target: &Gpu) -> Result<Launch, Diagnostic> {
    let k = trim::unread_columns(k, &k.configs[config].values);
    plan(&k, config, target).map(|p| p.launch())
}

/// Lowers one (kernel, config) for `target`: `plan`, then `print`. `file` names the Rust
/// source for `#line` directives.
pub fn emit(
    k: &Kernel,
    config: usize,
    target: &Gpu,
    file: Option<&str>,
) -> Result<HipKernel, Diagnostic> {
    let k = trim::unread_columns(k, &k.configs[config].values);
    let mut plan = plan(&k, config, target)?;
    let source = print::kernel(&plan, file);
    let min_blocks = plan.min_blocks;
    let mut requests = Vec::new();
    for r in plan.requests.clone() {
        plan.min_blocks = r.blocks;
        requests.push(Bounded {
            min_blocks: r.blocks,
            registers: r.registers,
            source: print::kernel(&plan, file),
        });
    }
    let demoted = plan.demoted();
    let notes = notes::notes(&plan, target);
    let gemms = notes::gemm_paths(&plan);
    let Launch {
        entry,
        threads,
        shared_bytes,
        ..
    } = plan.launch();
    Ok(HipKernel {
        entry,
        source,
        threads,
        shared_bytes,
        demoted,
        notes,
        gemms,
        requests,
        min_blocks,
    })
}
