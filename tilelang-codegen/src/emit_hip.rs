//! Pass 3 (GPU backends), lower: [`crate::ir`] → HIP C++ for one (kernel, config, target), written
//! against `include/tl.h`. The same source compiles with nvcc (NVIDIA), hipcc and clang (AMD).
//!
//! Decisions made here and nowhere else:
//! * **Storage.** Shared buffers live in (dynamic) shared memory. A fragment lives in registers
//!   when every access to it is owner-only: `parallel` loops over exactly its shape indexed by
//!   the loop variables, `copy`, `fill`, and as a `gemm` accumulator. Otherwise (a reduction
//!   reads it, a loop broadcasts it, a `gemm` reads it) it is *demoted* to shared memory, which
//!   is always correct.
//! * **Layouts.** A register fragment is strided (element `L` = register `L / T` of thread
//!   `L % T`), matching the thread mapping of `parallel` loops, or, as the accumulator of a
//!   `gemm` on a matrix unit (`mma.sync` on NVIDIA, WMMA on RDNA3/RDNA4, MFMA on CDNA), that
//!   instruction's accumulator layout over a grid of waves; loops touching it then iterate in
//!   that layout. A `gemm` whose shapes or dtypes fit no instruction uses FMA loops.
//! * **Chunks.** A register fragment of whole 8-element chunks per thread is laid out chunk-wise
//!   (each thread owns consecutive elements) and copied to and from global memory in vectors,
//!   unless loops over it would hit shared memory across its rows in that order
//!   (`chunk_conflicts`).
//! * **Swizzle.** A 16-bit shared tile that only copies from global memory write and only
//!   `mma.sync` gemms read is stored swizzled (tl.h `swz`), so that `ldmatrix` reads it without
//!   bank conflicts.
//! * **Barriers.** Between consecutive block-level statements a barrier is placed exactly when
//!   one writes a shared-resident buffer or a global tensor that the other reads or writes,
//!   including around the back edge of loops.

use crate::ctxt::{Diagnostic, Range};
use crate::ir::*;
use crate::target::{MatrixUnit, Target as Gpu};
use crate::validate::walk;
use std::collections::BTreeSet;
use std::fmt::Write;

/// The header every generated source includes.
pub const HEADER: &str = include_str!("../include/tl.h");

/// One compiled unit: a `__global__` function and what the launcher needs to call it.
#[derive(Debug, Clone, PartialEq)]
pub struct HipKernel {
    /// The `extern "C"` symbol.
    pub entry: String,
    pub source: String,
    pub threads: u32,
    /// Dynamic shared memory, bytes.
    pub shared_bytes: usize,
}

/// The symbol of a (kernel, config).
pub fn entry_name(k: &Kernel, config: usize) -> String {
    format!(
        "tl_{}__{}",
        c_name(&k.name),
        c_name(&k.configs[config].name)
    )
}

/// A Rust identifier as a C++ identifier: raw identifiers lose their `r#` (every name the
/// emitter prints has a prefix or suffix, so `r#type` cannot become the keyword `type`), and
/// characters outside ASCII (Rust allows Unicode identifiers) are written `_u<hex>_`, which
/// every C++ compiler accepts. ASCII names print unchanged.
pub fn c_name(i: &syn::Ident) -> String {
    use syn::ext::IdentExt;
    let mut out = String::new();
    for ch in i.unraw().to_string().chars() {
        if ch.is_ascii_alphanumeric() || ch == '_' {
            out.push(ch);
        } else {
            let _ = write!(out, "_u{:x}_", ch as u32);
        }
    }
    out
}

/// Elements per thread chunk of the [`Layout::Chunked`] layout.
const CHUNK: usize = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// Element `L` in register `L / T` of thread `L % T`.
    Strided,
    /// Chunks of [`CHUNK`] consecutive elements, chunk `c` in thread `c % T`: element `L` in
    /// register `(L / CHUNK / T) · CHUNK + L % CHUNK` of thread `(L / CHUNK) % T`. A thread's
    /// chunk is contiguous in the tile's innermost dimension (a multiple of CHUNK), so copies
    /// between the fragment and global memory move whole vectors.
    Chunked,
    /// Matrix-unit accumulator: block tile M×N over a WM×WN grid of waves, each wave a grid of
    /// `inst` tiles.
    Matrix {
        inst: Inst,
        m: usize,
        n: usize,
        wm: usize,
        wn: usize,
    },
}

/// A matrix instruction `gemm` can lower to (f16 or bf16 operands, f32 accumulators), with the
/// tl.h functions that run it and locate its accumulator registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Inst {
    /// NVIDIA `mma.sync.m16n8k16`.
    MmaSync,
    /// RDNA3 `v_wmma_f32_16x16x16_{f16,bf16}`, wave32.
    Wmma,
    /// RDNA4 `v_wmma_f32_16x16x16_{f16,bf16}` (gfx12 operands), wave32.
    Wmma12,
    /// CDNA `v_mfma_f32_32x32x8{f16,bf16_1k}`, wave64.
    Mfma32,
    /// CDNA `v_mfma_f32_16x16x16{f16,bf16_1k}`, wave64.
    Mfma16,
}

impl Inst {
    /// The instructions of a matrix unit, preferred first.
    fn of(unit: MatrixUnit) -> &'static [Inst] {
        match unit {
            MatrixUnit::MmaSync => &[Inst::MmaSync],
            MatrixUnit::Wmma => &[Inst::Wmma],
            MatrixUnit::Wmma12 => &[Inst::Wmma12],
            MatrixUnit::Mfma => &[Inst::Mfma32, Inst::Mfma16],
            MatrixUnit::None => &[],
        }
    }
    /// (M, N, K) of one instruction tile.
    fn shape(self) -> (usize, usize, usize) {
        match self {
            Inst::MmaSync => (16, 8, 16),
            Inst::Wmma | Inst::Wmma12 | Inst::Mfma16 => (16, 16, 16),
            Inst::Mfma32 => (32, 32, 8),
        }
    }
    /// The lanes executing one instruction.
    fn wave(self) -> usize {
        match self {
            Inst::MmaSync | Inst::Wmma | Inst::Wmma12 => 32,
            Inst::Mfma32 | Inst::Mfma16 => 64,
        }
    }
    /// The call `acc += a·b` in tl.h.
    fn gemm(self, t: &str, m: usize, n: usize, k: usize, wm: usize, wn: usize) -> String {
        match self {
            Inst::MmaSync => format!("tl::gemm_mma<{t}, {m}, {n}, {k}, {wm}, {wn}>"),
            Inst::Wmma => format!("tl::gemm_wmma<{t}, {m}, {n}, {k}, {wm}, {wn}>"),
            Inst::Wmma12 => format!("tl::gemm_wmma12<{t}, {m}, {n}, {k}, {wm}, {wn}>"),
            Inst::Mfma32 => format!("tl::gemm_mfma<{t}, {m}, {n}, {k}, {wm}, {wn}, 32>"),
            Inst::Mfma16 => format!("tl::gemm_mfma<{t}, {m}, {n}, {k}, {wm}, {wn}, 16>"),
        }
    }
    /// The function giving the (row, col) of an accumulator register in tl.h.
    fn coord(self, m: usize, n: usize, wm: usize, wn: usize) -> String {
        match self {
            Inst::MmaSync => format!("tl::mma_coord<{m}, {n}, {wm}, {wn}>"),
            Inst::Wmma => format!("tl::wmma_coord<{m}, {n}, {wm}, {wn}>"),
            Inst::Wmma12 => format!("tl::wmma12_coord<{m}, {n}, {wm}, {wn}>"),
            Inst::Mfma32 => format!("tl::mfma_coord<{m}, {n}, {wm}, {wn}, 32>"),
            Inst::Mfma16 => format!("tl::mfma_coord<{m}, {n}, {wm}, {wn}, 16>"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Storage {
    Shared { offset: usize },
    Reg { layout: Layout, nreg: usize },
    Local,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Res {
    Buf(BufId),
    Tensor(ParamId),
}

#[derive(Default, Clone)]
struct Pending {
    reads: BTreeSet<Res>,
    writes: BTreeSet<Res>,
}

impl Pending {
    fn conflicts(&self, r: &BTreeSet<Res>, w: &BTreeSet<Res>) -> bool {
        r.iter().any(|x| self.writes.contains(x))
            || w.iter()
                .any(|x| self.writes.contains(x) || self.reads.contains(x))
    }
    fn add(&mut self, r: &BTreeSet<Res>, w: &BTreeSet<Res>) {
        self.reads.extend(r.iter().copied());
        self.writes.extend(w.iter().copied());
    }
    fn union(&mut self, o: &Pending) {
        self.add(&o.reads, &o.writes);
    }
}

struct Emitter<'a> {
    k: &'a Kernel,
    target: &'a Gpu,
    vals: &'a [u64],
    threads: usize,
    storage: Vec<Storage>,
    /// Shared buffers stored as swizzled tiles (`plan_swizzle`).
    swizzled: Vec<bool>,
    /// Copies per shared buffer (`plan_pipelines`): more than one for the stages of a
    /// `pipelined` loop lowered to asynchronous copies.
    stages: Vec<usize>,
    /// Emitting the loads of a pipelined loop: global-to-shared copies are asynchronous.
    async_copies: bool,
    file: Option<&'a str>,
    /// Constructs the lowering cannot express (validation should have rejected them), with
    /// the statement's span.
    errors: Vec<(Range, String)>,
}

/// Lowers one (kernel, config) for `target`.
///
/// Validation has accepted the kernel, so what can still fail are the target's limits (shared
/// memory, registers per thread) and constructs this lowering cannot express. Both are a
/// [`Diagnostic`]: the limits on the config's name in `configs = [..]` (naming the target and
/// the numbers, with a hint), the others on the statement. The macro reports them as compile
/// errors; the build script leaves such an object out and lets the macro report it.
pub fn emit(
    k: &Kernel,
    config: usize,
    target: &Gpu,
    file: Option<&str>,
) -> Result<HipKernel, Diagnostic> {
    let vals = &k.configs[config].values;
    let cfg = &k.configs[config];
    let limit = |message: String, hint: String| Diagnostic {
        span: cfg.name.span().into(),
        message: format!(
            "config `{}` of kernel `{}` cannot be compiled for {}: {message}",
            cfg.name, k.name, target.arch
        ),
        hint: Some(hint),
    };
    let Some(threads) = eval_const(&k.threads, vals).filter(|t| (1..=1024).contains(t)) else {
        return Err(limit(
            "`threads` does not evaluate to 1..=1024".into(),
            "validation should have said so: please report this".into(),
        ));
    };
    let threads = threads as usize;
    let storage = plan_storage(k, vals, threads, target);
    let regs = thread_registers(k, vals, &storage);
    if regs > target.registers_per_thread() {
        return Err(limit(
            format!(
                "its fragments and local buffers need {regs} 32-bit registers per thread, and a thread of {} has {}",
                target.arch,
                target.registers_per_thread()
            ),
            format!(
                "use more threads or smaller fragments in this config (register use: {}), or keep the tile in shared memory (`alloc_shared`)",
                register_report(k, vals, &storage)
            ),
        ));
    }
    let layout_shared = |stages: &[usize]| {
        let mut storage = storage.clone();
        let mut bytes: usize = 0;
        for (b, s) in storage.iter_mut().enumerate() {
            if let Storage::Shared { offset } = s {
                bytes = bytes.div_ceil(16) * 16;
                *offset = bytes;
                bytes += stage_bytes(k, b, vals) * stages[b];
            }
        }
        (storage, bytes)
    };
    // Pipelined loops get their stages when they fit in shared memory, else run as plain loops.
    let mut stages = plan_pipelines(k, vals, &storage, target);
    let (mut storage2, mut shared_bytes) = layout_shared(&stages);
    if shared_bytes > target.max_shared && stages.iter().any(|&n| n > 1) {
        stages = vec![1; stages.len()];
        (storage2, shared_bytes) = layout_shared(&stages);
    }
    if shared_bytes > target.max_shared {
        return Err(limit(
            format!(
                "it needs {shared_bytes} bytes of shared memory per block, and {} allows {}",
                target.arch, target.max_shared
            ),
            format!(
                "use smaller tiles in this config (shared memory: {})",
                shared_report(k, vals, &storage2, &stages)
            ),
        ));
    }
    let swizzled = plan_swizzle(k, vals, &storage2);
    let mut e = Emitter {
        k,
        target,
        vals,
        threads,
        storage: storage2,
        swizzled,
        stages,
        async_copies: false,
        file,
        errors: Vec::new(),
    };
    let entry = entry_name(k, config);
    let mut src = String::new();
    let _ = writeln!(
        src,
        "// Generated by tilelang-codegen from kernel `{}`, config `{}`, target {}. Do not edit.",
        k.name, k.configs[config].name, target.arch
    );
    let _ = writeln!(src, "#include \"tl.h\"\n");
    let mut params = Vec::new();
    for (i, p) in k.params.iter().enumerate() {
        match &p.kind {
            ParamKind::Tensor { dtype, mutable, .. } => {
                let c = if *mutable { "" } else { "const " };
                params.push(format!(
                    "{c}{}* __restrict__ {}",
                    ctype(*dtype),
                    e.tensor(i)
                ));
            }
            ParamKind::Scalar { dtype } => {
                params.push(format!("{} {}", ctype(*dtype), e.scalar(i)))
            }
        }
    }
    for i in 0..k.symbols.len() {
        params.push(format!("tl::index {}", e.sym(i)));
    }
    let _ = writeln!(
        src,
        "TL_GLOBAL void __launch_bounds__({threads}) {entry}({}) {{",
        params.join(", ")
    );
    if shared_bytes > 0 {
        src.push_str("  extern __shared__ __attribute__((aligned(16))) unsigned char tl_smem[];\n");
    }
    for (i, v) in vals.iter().enumerate() {
        let _ = writeln!(src, "  constexpr tl::index {} = {v};", e.konst(i));
    }
    let mut pending = Pending::default();
    let body = e.block(&k.body, &mut pending, 1);
    src.push_str(&body);
    src.push_str("}\n");
    if let Some((span, what)) = e.errors.into_iter().next() {
        return Err(Diagnostic {
            span,
            message: format!(
                "config `{}` of kernel `{}`: the {} lowering cannot express {what}",
                cfg.name, k.name, target.arch
            ),
            hint: Some("validation should have rejected this: please report it; meanwhile write the statement another way".into()),
        });
    }
    Ok(HipKernel {
        entry,
        source: src,
        threads: threads as u32,
        shared_bytes,
    })
}

/// 32-bit registers per thread that register fragments and local buffers take.
fn thread_registers(k: &Kernel, vals: &[u64], storage: &[Storage]) -> usize {
    (0..k.buffers.len())
        .map(|b| buffer_registers(k, b, vals, storage[b]))
        .sum()
}

fn buffer_registers(k: &Kernel, b: BufId, vals: &[u64], storage: Storage) -> usize {
    let per_thread = match storage {
        Storage::Reg { nreg, .. } => nreg,
        Storage::Local => buf_len(k, b, vals),
        Storage::Shared { .. } => 0,
    };
    (per_thread * k.buffers[b].dtype.size_bytes()).div_ceil(4)
}

/// The register-resident buffers with their registers per thread, largest first.
fn register_report(k: &Kernel, vals: &[u64], storage: &[Storage]) -> String {
    let mut v: Vec<(usize, String)> = (0..k.buffers.len())
        .map(|b| {
            (
                buffer_registers(k, b, vals, storage[b]),
                k.buffers[b].name.to_string(),
            )
        })
        .filter(|(n, _)| *n > 0)
        .collect();
    v.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    v.iter()
        .map(|(n, name)| format!("`{name}` {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The shared-memory buffers with their bytes (times their pipeline stages), largest first.
fn shared_report(k: &Kernel, vals: &[u64], storage: &[Storage], stages: &[usize]) -> String {
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

fn buf_len(k: &Kernel, b: BufId, vals: &[u64]) -> usize {
    buf_shape(k, b, vals).iter().product()
}

fn buf_shape(k: &Kernel, b: BufId, vals: &[u64]) -> Vec<usize> {
    k.buffers[b]
        .shape
        .iter()
        .map(|d| eval_const(d, vals).unwrap_or(1) as usize)
        .collect()
}

/// The C++ type of a dtype.
pub fn ctype(d: Dtype) -> &'static str {
    match d {
        Dtype::F16 => "tl::half",
        Dtype::Bf16 => "tl::bfloat",
        Dtype::F32 => "float",
        Dtype::F64 => "double",
        Dtype::I32 => "int",
        Dtype::U32 => "unsigned int",
        Dtype::U8 => "unsigned char",
        Dtype::Bool => "bool",
        Dtype::Index => "tl::index",
    }
}

/// Decides where each buffer lives (see the module docs).
fn plan_storage(k: &Kernel, vals: &[u64], threads: usize, target: &Gpu) -> Vec<Storage> {
    let nbuf = k.buffers.len();
    let mut demoted = vec![false; nbuf];
    // Per gemm accumulator: the matrix layout all its gemms agree on, or `Some(None)` when one
    // of them fits no matrix instruction (FMA path).
    let mut mma: Vec<Option<Option<Layout>>> = vec![None; nbuf];
    for (b, buf) in k.buffers.iter().enumerate() {
        if buf.scope == Scope::Shared {
            demoted[b] = true;
        }
    }
    // Owner-only access analysis.
    #[allow(clippy::too_many_arguments)] // a recursive walk's state; the layout pass will own it
    fn visit(
        k: &Kernel,
        vals: &[u64],
        stmts: &[Stmt],
        ploop: Option<(&[VarId], &[usize])>,
        demoted: &mut [bool],
        threads: usize,
        target: &Gpu,
        mma: &mut [Option<Option<Layout>>],
    ) {
        for s in stmts {
            let check_access = |a: &Access, demoted: &mut [bool]| {
                if let Target::Buffer(b) = a.target {
                    if k.buffers[b].scope != Scope::Fragment {
                        return;
                    }
                    let shape = buf_shape(k, b, vals);
                    let direct = match ploop {
                        Some((vars, ext)) => {
                            ext == shape.as_slice()
                                && a.index
                                    .iter()
                                    .zip(vars)
                                    .all(|(i, v)| matches!(i.kind, ExprKind::Var(x) if x == *v))
                                && a.index.len() == vars.len()
                        }
                        None => false,
                    };
                    if !direct {
                        demoted[b] = true;
                    }
                }
            };
            for_each_access(s, &mut |a| check_access(a, demoted));
            match &s.kind {
                StmtKind::For {
                    kind: LoopKind::Parallel { extents },
                    vars,
                    body,
                } => {
                    let ext: Vec<usize> = extents
                        .iter()
                        .map(|e| eval_const(e, vals).unwrap_or(1) as usize)
                        .collect();
                    visit(
                        k,
                        vals,
                        body,
                        Some((vars, &ext)),
                        demoted,
                        threads,
                        target,
                        mma,
                    );
                }
                StmtKind::For { body, .. } => {
                    visit(k, vals, body, ploop, demoted, threads, target, mma)
                }
                StmtKind::If { then, els, .. } => {
                    visit(k, vals, then, ploop, demoted, threads, target, mma);
                    visit(k, vals, els, ploop, demoted, threads, target, mma);
                }
                StmtKind::Gemm { a, b, c } => {
                    for x in [a, b] {
                        demoted[*x] = true;
                    }
                    let l = matrix_layout(k, vals, *a, *b, *c, threads, target);
                    mma[*c] = match mma[*c] {
                        Some(prev) if prev != l => Some(None),
                        _ => Some(l),
                    };
                }
                StmtKind::Reduce { src, dst, .. } => {
                    demoted[*src] = true;
                    demoted[*dst] = true;
                }
                _ => {}
            }
        }
    }
    visit(
        k,
        vals,
        &k.body,
        None,
        &mut demoted,
        threads,
        target,
        &mut mma,
    );
    // Gemm accumulators on FMA loops keep the strided layout tl.h's gemm_fma expects; other
    // register fragments whose rows are whole chunks are chunked, unless a loop over them
    // would hit shared memory in the chunked order too often (`chunk_conflicts`).
    let acc: Vec<bool> = mma.iter().map(Option::is_some).collect();
    let strided_only = chunk_conflicts(k, vals, &demoted);
    let mma: Vec<Option<Layout>> = mma
        .into_iter()
        .enumerate()
        .map(|(b, l)| {
            l.flatten().or_else(|| {
                let shape = buf_shape(k, b, vals);
                let chunked =
                    // Every thread gets whole chunks (no idle registers, no tail guard).
                    !acc[b]
                        && !strided_only[b]
                        && shape.last().is_some_and(|&d| d % CHUNK == 0)
                        && buf_len(k, b, vals) % (CHUNK * threads) == 0;
                Some(if chunked {
                    Layout::Chunked
                } else {
                    Layout::Strided
                })
            })
        })
        .collect();

    // Layout agreement: a parallel loop or copy touching a matrix-unit fragment iterates in its
    // layout; any other register fragment it touches must share that layout, or is demoted.
    loop {
        let layout_of = |b: BufId, demoted: &[bool]| -> Option<Layout> {
            if k.buffers[b].scope != Scope::Fragment || demoted[b] {
                None
            } else {
                Some(mma[b].unwrap_or(Layout::Strided))
            }
        };
        let mut changed = false;
        walk(&k.body, &mut |s| {
            let mut regs: Vec<BufId> = Vec::new();
            match &s.kind {
                StmtKind::For {
                    kind: LoopKind::Parallel { .. },
                    body,
                    ..
                } => {
                    walk(body, &mut |t| {
                        for_each_access(t, &mut |a| {
                            if let Target::Buffer(b) = a.target {
                                regs.push(b)
                            }
                        })
                    });
                }
                StmtKind::Copy {
                    src: Tile::Buffer(a),
                    dst: Tile::Buffer(b),
                } => regs.extend([*a, *b]),
                _ => {}
            }
            let regs: Vec<(BufId, Layout)> = regs
                .into_iter()
                .filter_map(|b| layout_of(b, &demoted).map(|l| (b, l)))
                .collect();
            if let Some(&(_, first)) = regs
                .iter()
                .find(|(_, l)| matches!(l, Layout::Matrix { .. }))
                .or(regs.first())
            {
                for &(b, l) in &regs {
                    if l != first && !demoted[b] {
                        demoted[b] = true;
                        changed = true;
                    }
                }
            }
        });
        if !changed {
            break;
        }
    }
    (0..nbuf)
        .map(|b| match k.buffers[b].scope {
            Scope::Local => Storage::Local,
            _ if demoted[b] => Storage::Shared { offset: 0 },
            _ => {
                let layout = mma[b].unwrap_or(Layout::Strided);
                let n = buf_len(k, b, vals);
                let nreg = match layout {
                    Layout::Chunked => n.div_ceil(CHUNK * threads) * CHUNK,
                    _ => n.div_ceil(threads),
                };
                Storage::Reg { layout, nreg }
            }
        })
        .collect()
}

/// Fragments that stay strided because a parallel loop over them would read or write shared
/// memory across its innermost dimension in the chunked order: a thread's consecutive
/// elements sit side by side, so the lanes of a wave touch addresses CHUNK elements apart and
/// collide in the banks once a row of the loop spans more than 128 bytes. One such read per
/// element costs less than vector global copies gain (a broadcast row `b_s[j]`); a store, a
/// second access, or one inside a nested loop (a convolution's taps) costs more. The decision
/// spreads to every fragment a loop or a register copy ties to a strided one, so that they keep
/// one layout.
fn chunk_conflicts(k: &Kernel, vals: &[u64], demoted: &[bool]) -> Vec<bool> {
    let nbuf = k.buffers.len();
    let shared = |b: BufId| k.buffers[b].scope == Scope::Shared || demoted[b];
    let mut strided = vec![false; nbuf];
    // Fragments tied together (same loop or register copy), to spread the decision.
    let mut groups: Vec<Vec<BufId>> = Vec::new();
    walk(&k.body, &mut |s| match &s.kind {
        StmtKind::For {
            kind: LoopKind::Parallel { extents },
            vars,
            body,
        } => {
            let ext: Vec<usize> = extents
                .iter()
                .map(|e| eval_const(e, vals).unwrap_or(1) as usize)
                .collect();
            let (Some(&inner), Some(&e_in)) = (vars.last(), ext.last()) else {
                return;
            };
            let mut frags = Vec::new();
            let mut seen: BTreeSet<(BufId, String)> = BTreeSet::new();
            let mut cost = 0;
            let mut count = |a: &Access, store: bool, nested: bool| {
                let Target::Buffer(b) = a.target else { return };
                if k.buffers[b].scope == Scope::Fragment && !demoted[b] {
                    frags.push(b);
                    return;
                }
                let mut v = BTreeSet::new();
                if let Some(last) = a.index.last() {
                    expr_vars(last, &mut v);
                }
                let span = e_in * k.buffers[b].dtype.size_bytes();
                if shared(b) && v.contains(&inner) && span > 128 {
                    let key = (b, format!("{:?}{store}", a.index));
                    if seen.insert(key) || nested {
                        cost += 1 + usize::from(store) + usize::from(nested);
                    }
                }
            };
            // Direct statements of the body, and those in nested serial loops.
            fn visit(stmts: &[Stmt], nested: bool, f: &mut impl FnMut(&Access, bool, bool)) {
                for s in stmts {
                    let target = match &s.kind {
                        StmtKind::Store { access, .. } | StmtKind::AtomicAdd { access, .. } => {
                            Some(access)
                        }
                        _ => None,
                    };
                    for_each_access(s, &mut |a| {
                        let store = target.is_some_and(|t| std::ptr::eq(t, a));
                        f(a, store, nested)
                    });
                    match &s.kind {
                        StmtKind::For { body, .. } => visit(body, true, f),
                        StmtKind::If { then, els, .. } => {
                            visit(then, nested, f);
                            visit(els, nested, f);
                        }
                        _ => {}
                    }
                }
            }
            visit(body, false, &mut count);
            if cost > 1 {
                frags.iter().for_each(|&b| strided[b] = true);
            }
            groups.push(frags);
        }
        StmtKind::Copy {
            src: Tile::Buffer(a),
            dst: Tile::Buffer(b),
        } => groups.push(vec![*a, *b]),
        _ => {}
    });
    loop {
        let mut changed = false;
        for g in &groups {
            if g.iter().any(|&b| strided[b]) {
                for &b in g {
                    changed |= !strided[b];
                    strided[b] = true;
                }
            }
        }
        if !changed {
            return strided;
        }
    }
}

/// The matrix-unit layout for `c += a·b`, when the target has a matrix instruction for the
/// dtypes (f16 or bf16 operands, f32 accumulator) and the shapes fit: the threads are whole
/// waves of the instruction's width, K is a multiple of the instruction's K, and the block tile
/// splits over the waves into whole instruction tiles. Otherwise `gemm` uses FMA loops.
fn matrix_layout(
    k: &Kernel,
    vals: &[u64],
    a: BufId,
    b: BufId,
    c: BufId,
    threads: usize,
    target: &Gpu,
) -> Option<Layout> {
    let (da, dc) = (k.buffers[a].dtype, k.buffers[c].dtype);
    if !matches!(da, Dtype::F16 | Dtype::Bf16) || dc != Dtype::F32 || k.buffers[b].dtype != da {
        return None;
    }
    let (sa, sb) = (buf_shape(k, a, vals), buf_shape(k, b, vals));
    let (m, kk, n) = (sa[0], sa[1], sb[1]);
    let wave = target.wave as usize;
    for &inst in Inst::of(target.matrix) {
        let (im, in_, ik) = inst.shape();
        // The instruction is defined over a whole wave of the target.
        if inst.wave() != wave || threads % wave != 0 || kk % ik != 0 {
            continue;
        }
        let waves = threads / wave;
        // The most square wave grid that divides the tile.
        let mut best: Option<(usize, usize)> = None;
        for wm in 1..=waves {
            if waves % wm != 0 {
                continue;
            }
            let wn = waves / wm;
            if m % (im * wm) != 0 || n % (in_ * wn) != 0 {
                continue;
            }
            let score = |wm: usize, wn: usize| ((m / wm) as isize - (n / wn) as isize).abs();
            if best.is_none_or(|(bm, bn)| score(wm, wn) < score(bm, bn)) {
                best = Some((wm, wn));
            }
        }
        if let Some((wm, wn)) = best {
            return Some(Layout::Matrix { inst, m, n, wm, wn });
        }
    }
    None
}

/// Which shared buffers to store as swizzled tiles (tl.h `swz`): 2-D, 16-bit, rows of a
/// power-of-two number (at least 2) of 16-byte chunks, and only ever written by copies from
/// global memory and read as operands of `mma.sync` gemms, which are the accesses that know the
/// swizzle. Anything else touching the buffer (a load, a store, a fill, another copy or gemm)
/// keeps it plain. Swizzling spreads the 8 rows one `ldmatrix` phase reads over all the banks.
fn plan_swizzle(k: &Kernel, vals: &[u64], storage: &[Storage]) -> Vec<bool> {
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

/// Bytes of one copy of shared buffer `b`, rounded up to 16 (stages and buffers start aligned).
fn stage_bytes(k: &Kernel, b: BufId, vals: &[u64]) -> usize {
    (buf_len(k, b, vals) * k.buffers[b].dtype.size_bytes()).div_ceil(16) * 16
}

/// The buffer a pipelined load (a copy from global memory into a buffer) writes.
fn load_buf(s: &Stmt) -> BufId {
    match &s.kind {
        StmtKind::Copy {
            dst: Tile::Buffer(b),
            ..
        } => *b,
        _ => unreachable!("pipeline_loads checked the statement"),
    }
}

/// The number of leading statements of a `pipelined` loop body that can run ahead as the
/// loop's loads: copies from a global tensor into distinct shared buffers of the same dtype,
/// whose offsets read no buffer and no variable the body assigns, from tensors the body does
/// not write. `None` when there is none or the rest of the body is empty.
fn pipeline_loads(k: &Kernel, body: &[Stmt], storage: &[Storage]) -> Option<usize> {
    let mut assigned: BTreeSet<VarId> = BTreeSet::new();
    let mut written: BTreeSet<ParamId> = BTreeSet::new();
    walk(body, &mut |s| match &s.kind {
        StmtKind::Assign { var, .. } => {
            assigned.insert(*var);
        }
        StmtKind::Store { access, .. } | StmtKind::AtomicAdd { access, .. } => {
            if let Target::Tensor(p) = access.target {
                written.insert(p);
            }
        }
        StmtKind::Copy {
            dst: Tile::Region { tensor, .. },
            ..
        } => {
            written.insert(*tensor);
        }
        _ => {}
    });
    let mut bufs: Vec<BufId> = Vec::new();
    for s in body {
        let StmtKind::Copy {
            src: Tile::Region { tensor, offsets },
            dst: Tile::Buffer(b),
        } = &s.kind
        else {
            break;
        };
        let mut reads_buffer = false;
        for_each_access(s, &mut |_| reads_buffer = true);
        let mut vars = BTreeSet::new();
        offsets.iter().for_each(|o| expr_vars(o, &mut vars));
        let ok = matches!(storage[*b], Storage::Shared { .. })
            && !bufs.contains(b)
            && k.buffers[*b].dtype == tensor_dtype(k, *tensor)
            && !reads_buffer
            && vars.is_disjoint(&assigned)
            && !written.contains(tensor);
        if !ok {
            break;
        }
        bufs.push(*b);
    }
    (!bufs.is_empty() && bufs.len() < body.len()).then_some(bufs.len())
}

fn tensor_dtype(k: &Kernel, p: ParamId) -> Dtype {
    match k.params[p].kind {
        ParamKind::Tensor { dtype, .. } | ParamKind::Scalar { dtype } => dtype,
    }
}

/// Calls `f` on `e` and each of its sub-expressions, outermost first.
fn each_expr(e: &Expr, f: &mut impl FnMut(&Expr)) {
    f(e);
    match &e.kind {
        ExprKind::Load(a) => a.index.iter().for_each(|i| each_expr(i, f)),
        ExprKind::Binary(_, a, b) | ExprKind::DivCeil(a, b) => {
            each_expr(a, f);
            each_expr(b, f);
        }
        ExprKind::Unary(_, a) | ExprKind::Cast(a) => each_expr(a, f),
        ExprKind::Math(_, args) => args.iter().for_each(|a| each_expr(a, f)),
        ExprKind::Select(c, a, b) => {
            each_expr(c, f);
            each_expr(a, f);
            each_expr(b, f);
        }
        _ => {}
    }
}

/// Variables an expression reads.
fn expr_vars(e: &Expr, out: &mut BTreeSet<VarId>) {
    each_expr(e, &mut |x| {
        if let ExprKind::Var(v) = x.kind {
            out.insert(v);
        }
    });
}

/// Stages per buffer: `stages` copies of each load buffer of a `pipelined` loop that lowers to
/// asynchronous copies (NVIDIA: `cp.async`, sm_80 and newer; `stages` at least 2), when the
/// buffer is used nowhere but in that loop. Every other buffer has one copy.
fn plan_pipelines(k: &Kernel, vals: &[u64], storage: &[Storage], target: &Gpu) -> Vec<usize> {
    let mut stages = vec![1; k.buffers.len()];
    if !target.arch.starts_with("sm_") {
        return stages;
    }
    // How many statements outside each pipelined loop mention each buffer is found by
    // counting mentions over the whole kernel and inside the loop.
    let mentions = |stmts: &[Stmt]| -> Vec<usize> {
        let mut n = vec![0; k.buffers.len()];
        walk(stmts, &mut |s| each_buffer(s, &mut |b| n[b] += 1));
        n
    };
    let all = mentions(&k.body);
    walk(&k.body, &mut |s| {
        let StmtKind::For {
            kind: LoopKind::Pipelined { stages: st, .. },
            body,
            ..
        } = &s.kind
        else {
            return;
        };
        let Some(n) = eval_const(st, vals).filter(|&n| n >= 2) else {
            return;
        };
        let Some(nloads) = pipeline_loads(k, body, storage) else {
            return;
        };
        let inside = mentions(body);
        let bufs: Vec<BufId> = body[..nloads].iter().map(load_buf).collect();
        if bufs.iter().all(|&b| all[b] == inside[b] && stages[b] == 1) {
            for b in bufs {
                stages[b] = n.min(8) as usize;
            }
        }
    });
    stages
}

/// The coordinates of row-major element `lin` of a tile of shape `ext`.
fn tile_coords(ext: &[usize], lin: &str) -> Vec<String> {
    let mut stride: usize = ext.iter().product();
    ext.iter()
        .map(|&e| {
            stride /= e;
            format!("(tl::index)(({lin} / {stride}) % {e})")
        })
        .collect()
}

/// For tile coordinates `__c0..` of a rank-`r` tile at the offset of region `__g` (padded to
/// rank 4: tile dim d is region dim 4 - r + d): whether the element is inside the tensor, and
/// its linear index in it.
fn region_index(r: usize) -> (String, String) {
    let mut conds = Vec::new();
    let mut lin = String::from("0");
    for d in 0..4 {
        let g = if d + r >= 4 {
            format!("(__g.off[{d}] + __c{})", d + r - 4)
        } else {
            format!("__g.off[{d}]")
        };
        conds.push(format!("{g} >= 0 && {g} < __g.dims[{d}]"));
        lin = format!("({lin}) * __g.dims[{d}] + {g}");
    }
    (conds.join(" && "), lin)
}

/// Calls `f` on each buffer `s` names directly (not inside nested statements): element accesses
/// and tile operands.
fn each_buffer(s: &Stmt, f: &mut impl FnMut(BufId)) {
    for_each_access(s, &mut |a| {
        if let Target::Buffer(b) = a.target {
            f(b)
        }
    });
    match &s.kind {
        StmtKind::Copy { src, dst } => {
            for t in [src, dst] {
                if let Tile::Buffer(b) = t {
                    f(*b)
                }
            }
        }
        StmtKind::Gemm { a, b, c } => [*a, *b, *c].into_iter().for_each(f),
        StmtKind::Fill { buf, .. } => f(*buf),
        StmtKind::Reduce { src, dst, .. } => [*src, *dst].into_iter().for_each(f),
        _ => {}
    }
}

/// Calls `f` on each element access made directly by `s` (not inside nested statements).
fn for_each_access(s: &Stmt, f: &mut impl FnMut(&Access)) {
    fn expr(e: &Expr, f: &mut impl FnMut(&Access)) {
        each_expr(e, &mut |x| {
            if let ExprKind::Load(a) = &x.kind {
                f(a)
            }
        });
    }
    match &s.kind {
        StmtKind::Let { init, .. } => expr(init, f),
        StmtKind::Assign { value, .. } => expr(value, f),
        StmtKind::Store { access, value } | StmtKind::AtomicAdd { access, value } => {
            f(access);
            access.index.iter().for_each(|i| expr(i, f));
            expr(value, f);
        }
        StmtKind::If { cond, .. } => expr(cond, f),
        StmtKind::For { kind, .. } => match kind {
            LoopKind::Parallel { extents } => extents.iter().for_each(|e| expr(e, f)),
            LoopKind::Serial { start, end } => {
                expr(start, f);
                expr(end, f);
            }
            LoopKind::Pipelined { extent, stages } => {
                expr(extent, f);
                expr(stages, f);
            }
        },
        StmtKind::Copy { src, dst } => {
            for t in [src, dst] {
                if let Tile::Region { offsets, .. } = t {
                    offsets.iter().for_each(|o| expr(o, f));
                }
            }
        }
        StmtKind::Fill { value, .. } => expr(value, f),
        _ => {}
    }
}

impl Emitter<'_> {
    fn tensor(&self, p: ParamId) -> String {
        format!("t_{}", c_name(&self.k.params[p].name))
    }
    fn scalar(&self, p: ParamId) -> String {
        format!("s_{}", c_name(&self.k.params[p].name))
    }
    /// A const generic: `k_` keeps a name like `int` or `TL_TID` clear of C++ keywords and
    /// tl.h's macros.
    fn konst(&self, i: usize) -> String {
        format!("k_{}", c_name(&self.k.consts[i]))
    }
    fn sym(&self, i: usize) -> String {
        format!("n_{}", c_name(&self.k.symbols[i]))
    }
    fn var(&self, v: VarId) -> String {
        format!("v{}_{}", v, c_name(&self.k.vars[v].name))
    }
    fn buf(&self, b: BufId) -> String {
        format!("b{}_{}", b, c_name(&self.k.buffers[b].name))
    }

    fn is_resource(&self, b: BufId) -> bool {
        matches!(self.storage[b], Storage::Shared { .. })
    }

    /// Reads and writes of shared-resident buffers and global tensors by `s`, nested included.
    fn effects(&self, s: &Stmt) -> (BTreeSet<Res>, BTreeSet<Res>) {
        let mut r = BTreeSet::new();
        let mut w = BTreeSet::new();
        let res = |t: Target| -> Option<Res> {
            match t {
                Target::Tensor(p) => Some(Res::Tensor(p)),
                Target::Buffer(b) if self.is_resource(b) => Some(Res::Buf(b)),
                Target::Buffer(_) => None,
            }
        };
        walk(std::slice::from_ref(s), &mut |s| {
            // Loads anywhere in the statement are reads.
            let mut loads = Vec::new();
            for_each_access(s, &mut |a| loads.push(a.target));
            match &s.kind {
                StmtKind::Store { access, .. } | StmtKind::AtomicAdd { access, .. } => {
                    if let Some(x) = res(access.target) {
                        w.insert(x);
                    }
                    // The first access reported is the store target itself; count the others.
                    loads.remove(0);
                }
                StmtKind::Copy { src, dst } => {
                    for (t, write) in [(src, false), (dst, true)] {
                        let x = match t {
                            Tile::Buffer(b) => res(Target::Buffer(*b)),
                            Tile::Region { tensor, .. } => Some(Res::Tensor(*tensor)),
                        };
                        if let Some(x) = x {
                            if write {
                                w.insert(x);
                            } else {
                                r.insert(x);
                            }
                        }
                    }
                }
                StmtKind::Fill { buf, .. } => {
                    if let Some(x) = res(Target::Buffer(*buf)) {
                        w.insert(x);
                    }
                }
                StmtKind::Gemm { a, b, c } => {
                    for x in [a, b] {
                        if let Some(x) = res(Target::Buffer(*x)) {
                            r.insert(x);
                        }
                    }
                    if let Some(x) = res(Target::Buffer(*c)) {
                        r.insert(x);
                        w.insert(x);
                    }
                }
                StmtKind::Reduce { src, dst, .. } => {
                    if let Some(x) = res(Target::Buffer(*src)) {
                        r.insert(x);
                    }
                    if let Some(x) = res(Target::Buffer(*dst)) {
                        w.insert(x);
                    }
                }
                _ => {}
            }
            for t in loads {
                if let Some(x) = res(t) {
                    r.insert(x);
                }
            }
        });
        (r, w)
    }

    /// A `#line` directive naming the statement's Rust line, when the source file is known.
    fn line(&self, s: &Stmt) -> String {
        let line = s.span.start.start().line;
        match self.file {
            Some(f) if line > 0 => format!("#line {line} \"{}\"\n", f.replace('\\', "/")),
            _ => String::new(),
        }
    }

    /// A `pipelined` loop whose body starts with `nloads` copies from global memory into
    /// shared buffers of `stages` copies each (`plan_pipelines`): the copies of iteration
    /// `i + stages - 1` are issued asynchronously (`cp.async`, one commit group per iteration)
    /// while iteration `i` computes on its stage. A prologue issues the first `stages - 1`
    /// iterations' copies; each iteration waits for its own group, then one barrier makes
    /// every thread's copies visible and frees the stage the previous iteration read, which
    /// the new copies then overwrite.
    fn pipelined_loop(
        &mut self,
        var: VarId,
        extent: &Expr,
        stages: usize,
        body: &[Stmt],
        nloads: usize,
        depth: usize,
    ) -> String {
        let ind = "  ".repeat(depth);
        let (loads, compute) = body.split_at(nloads);
        let v = self.var(var);
        let n = format!("__n{depth}");
        let bufs: Vec<BufId> = loads.iter().map(load_buf).collect();
        let stage_ptrs = |e: &Emitter, stage: &str, d: usize| -> String {
            let ind = "  ".repeat(d);
            bufs.iter()
                .map(|&b| {
                    let Storage::Shared { offset } = e.storage[b] else {
                        unreachable!("pipelined loads write shared buffers")
                    };
                    let ty = ctype(e.k.buffers[b].dtype);
                    format!(
                        "{ind}{ty}* {} = ({ty}*)(tl_smem + {offset} + ({stage}) * {});\n",
                        e.buf(b),
                        stage_bytes(e.k, b, e.vals)
                    )
                })
                .collect()
        };
        self.async_copies = true;
        let issue_prologue = self.block(loads, &mut Pending::default(), depth + 3);
        let issue_steady = self.block(loads, &mut Pending::default(), depth + 4);
        self.async_copies = false;
        let compute_text = self.block(compute, &mut Pending::default(), depth + 3);
        let mut out = String::new();
        let _ = writeln!(out, "{ind}{{");
        let _ = writeln!(out, "{ind}  const tl::index {n} = {};", self.expr(extent));
        let _ = writeln!(
            out,
            "{ind}  for (tl::index __s{depth} = 0; __s{depth} < {}; ++__s{depth}) {{",
            stages - 1
        );
        let _ = writeln!(out, "{ind}    if (__s{depth} < {n}) {{");
        let _ = writeln!(out, "{ind}      const tl::index {v} = __s{depth};");
        out.push_str(&stage_ptrs(self, &format!("__s{depth}"), depth + 3));
        out.push_str(&issue_prologue);
        let _ = writeln!(out, "{ind}    }}");
        let _ = writeln!(out, "{ind}    tl::cp_async_commit();");
        let _ = writeln!(out, "{ind}  }}");
        let _ = writeln!(out, "{ind}  for (tl::index {v} = 0; {v} < {n}; ++{v}) {{");
        let _ = writeln!(out, "{ind}    tl::cp_async_wait<{}>();", stages - 2);
        let _ = writeln!(out, "{ind}    tl::sync();");
        let _ = writeln!(out, "{ind}    {{");
        let _ = writeln!(
            out,
            "{ind}      const tl::index __i{depth} = {v} + {};",
            stages - 1
        );
        let _ = writeln!(out, "{ind}      if (__i{depth} < {n}) {{");
        let _ = writeln!(out, "{ind}        const tl::index {v} = __i{depth};");
        out.push_str(&stage_ptrs(
            self,
            &format!("__i{depth} % {stages}"),
            depth + 4,
        ));
        out.push_str(&issue_steady);
        let _ = writeln!(out, "{ind}      }}");
        let _ = writeln!(out, "{ind}      tl::cp_async_commit();");
        let _ = writeln!(out, "{ind}    }}");
        let _ = writeln!(out, "{ind}    {{");
        out.push_str(&stage_ptrs(self, &format!("{v} % {stages}"), depth + 3));
        out.push_str(&compute_text);
        let _ = writeln!(out, "{ind}    }}");
        let _ = writeln!(out, "{ind}  }}");
        let _ = writeln!(out, "{ind}  tl::cp_async_wait<0>();");
        let _ = writeln!(out, "{ind}}}");
        out
    }

    /// For a `pipelined` loop body that got stages (`plan_pipelines`): its number of loads and
    /// of stages.
    fn staging(&self, body: &[Stmt]) -> Option<(usize, usize)> {
        let nloads = pipeline_loads(self.k, body, &self.storage)?;
        let stages = self.stages[load_buf(&body[0])];
        (stages > 1).then_some((nloads, stages))
    }

    /// A block-level statement sequence with barriers.
    fn block(&mut self, stmts: &[Stmt], pending: &mut Pending, depth: usize) -> String {
        let mut out = String::new();
        let ind = "  ".repeat(depth);
        for s in stmts {
            let (r, w) = self.effects(s);
            if pending.conflicts(&r, &w) {
                let _ = writeln!(out, "{ind}tl::sync();");
                *pending = Pending::default();
            }
            out.push_str(&self.line(s));
            if let StmtKind::For {
                kind: LoopKind::Pipelined { extent, .. },
                vars,
                body,
            } = &s.kind
            {
                if let Some((nloads, stages)) = self.staging(body) {
                    out.push_str(
                        &self.pipelined_loop(vars[0], extent, stages, body, nloads, depth),
                    );
                    pending.add(&r, &w);
                    continue;
                }
            }
            match &s.kind {
                StmtKind::For {
                    kind: LoopKind::Serial { .. } | LoopKind::Pipelined { .. },
                    vars,
                    body,
                } => {
                    let (start, end) = match &s.kind {
                        StmtKind::For {
                            kind: LoopKind::Serial { start, end },
                            ..
                        } => (self.expr(start), self.expr(end)),
                        StmtKind::For {
                            kind: LoopKind::Pipelined { extent, .. },
                            ..
                        } => ("((tl::index)0)".to_string(), self.expr(extent)),
                        _ => unreachable!(),
                    };
                    // Back edge: what the body leaves pending flows to its start.
                    let mut first = pending.clone();
                    let _ = self.block(body, &mut first, depth + 1);
                    let mut inner = pending.clone();
                    inner.union(&first);
                    let text = self.block(body, &mut inner, depth + 1);
                    let v = self.var(vars[0]);
                    let _ = writeln!(
                        out,
                        "{ind}for (tl::index {v} = {start}; {v} < {end}; ++{v}) {{\n{text}{ind}}}"
                    );
                    pending.union(&inner);
                }
                StmtKind::If { cond, then, els } => {
                    let c = self.expr(cond);
                    let mut pt = pending.clone();
                    let t = self.block(then, &mut pt, depth + 1);
                    let mut pe = pending.clone();
                    let e = self.block(els, &mut pe, depth + 1);
                    if els.is_empty() {
                        let _ = writeln!(out, "{ind}if ({c}) {{\n{t}{ind}}}");
                    } else {
                        let _ = writeln!(out, "{ind}if ({c}) {{\n{t}{ind}}} else {{\n{e}{ind}}}");
                    }
                    pending.union(&pt);
                    pending.union(&pe);
                }
                _ => {
                    out.push_str(&self.block_stmt(s, depth));
                    pending.add(&r, &w);
                }
            }
        }
        out
    }

    /// A block-level statement other than serial loops and `if`.
    fn block_stmt(&mut self, s: &Stmt, depth: usize) -> String {
        let ind = "  ".repeat(depth);
        let t = self.threads;
        match &s.kind {
            StmtKind::Let { .. } | StmtKind::Assign { .. } => self.thread_stmt(s, depth),
            StmtKind::Store { .. } | StmtKind::AtomicAdd { .. } => {
                // One thread performs a block-level store.
                format!(
                    "{ind}if (TL_TID == 0) {{\n{}{ind}}}\n",
                    self.thread_stmt(s, depth + 1)
                )
            }
            StmtKind::Alloc(b) => {
                let buf = &self.k.buffers[*b];
                let (ty, name) = (ctype(buf.dtype), self.buf(*b));
                match self.storage[*b] {
                    Storage::Shared { offset } => {
                        format!("{ind}{ty}* {name} = ({ty}*)(tl_smem + {offset});\n")
                    }
                    Storage::Reg { nreg, .. } => format!("{ind}{ty} {name}[{nreg}];\n"),
                    Storage::Local => {
                        format!("{ind}{ty} {name}[{}];\n", buf_len(self.k, *b, self.vals))
                    }
                }
            }
            StmtKind::For {
                kind: LoopKind::Parallel { extents },
                vars,
                body,
            } => {
                let ext: Vec<usize> = extents
                    .iter()
                    .map(|e| eval_const(e, self.vals).unwrap_or(1) as usize)
                    .collect();
                let layout = self.loop_layout(body, &ext);
                let (head, coords) = self.mapping(layout, &ext);
                let mut inner = String::new();
                for (d, v) in vars.iter().enumerate() {
                    let _ = writeln!(
                        inner,
                        "{ind}    const tl::index {} = {};",
                        self.var(*v),
                        coords[d]
                    );
                }
                for st in body {
                    inner.push_str(&self.line(st));
                    inner.push_str(&self.thread_stmt(st, depth + 2));
                }
                format!("{ind}{head}\n{inner}{ind}  }}\n{ind}}}\n")
            }
            StmtKind::Copy { src, dst } => self.copy(s.span, src, dst, depth),
            StmtKind::Fill { buf, value } => {
                let v = self.expr(value);
                let (ty, name) = (ctype(self.k.buffers[*buf].dtype), self.buf(*buf));
                match self.storage[*buf] {
                    Storage::Shared { .. } => format!(
                        "{ind}tl::fill_shared<{ty}, {}, {t}>({name}, {v});\n",
                        buf_len(self.k, *buf, self.vals)
                    ),
                    Storage::Reg { nreg, .. } => {
                        format!("{ind}for (int __r = 0; __r < {nreg}; ++__r) {name}[__r] = {v};\n")
                    }
                    Storage::Local => format!(
                        "{ind}for (int __r = 0; __r < {}; ++__r) {name}[__r] = {v};\n",
                        buf_len(self.k, *buf, self.vals)
                    ),
                }
            }
            StmtKind::Gemm { a, b, c } => {
                let (sa, sb) = (
                    buf_shape(self.k, *a, self.vals),
                    buf_shape(self.k, *b, self.vals),
                );
                let (m, kk, n) = (sa[0], sa[1], sb[1]);
                let (ta, tc) = (
                    ctype(self.k.buffers[*a].dtype),
                    ctype(self.k.buffers[*c].dtype),
                );
                let (na, nb, nc) = (self.buf(*a), self.buf(*b), self.buf(*c));
                match self.storage[*c] {
                    Storage::Reg { layout: Layout::Matrix { inst: Inst::MmaSync, wm, wn, .. }, .. }
                        if self.swizzled[*a] || self.swizzled[*b] =>
                    {
                        format!(
                            "{ind}tl::gemm_mma<{ta}, {m}, {n}, {kk}, {wm}, {wn}, {}, {}>({na}, {nb}, {nc});\n",
                            self.swizzled[*a], self.swizzled[*b]
                        )
                    }
                    Storage::Reg { layout: Layout::Matrix { inst, wm, wn, .. }, .. } => format!("{ind}{}({na}, {nb}, {nc});\n", inst.gemm(ta, m, n, kk, wm, wn)),
                    Storage::Reg { nreg, .. } => format!("{ind}tl::gemm_fma<{ta}, {tc}, {m}, {n}, {kk}, {t}, {nreg}>({na}, {nb}, {nc});\n"),
                    _ => format!("{ind}tl::gemm_fma_shared<{ta}, {tc}, {m}, {n}, {kk}, {t}>({na}, {nb}, {nc});\n"),
                }
            }
            StmtKind::Reduce { op, src, dst, dim } => {
                let shape = buf_shape(self.k, *src, self.vals);
                let outer: usize = shape[..*dim].iter().product();
                let len = shape[*dim];
                let inner: usize = shape[dim + 1..].iter().product();
                let outs = outer * inner;
                // Lanes per output: a power of two within one full wave that divides the block.
                let wave = self.target.wave as usize;
                let mut g = 1;
                while t % wave == 0
                    && g * 2 <= wave
                    && g * 2 * outs <= t
                    && g < len
                    && t % (g * 2) == 0
                {
                    g *= 2;
                }
                let opn = match op {
                    ReduceOp::Sum => "tl::Sum",
                    ReduceOp::Max => "tl::Max",
                };
                let ty = ctype(self.k.buffers[*src].dtype);
                format!(
                    "{ind}tl::reduce<{opn}, {ty}, {outer}, {len}, {inner}, {t}, {g}>({}, {});\n",
                    self.buf(*src),
                    self.buf(*dst)
                )
            }
            StmtKind::For { .. } | StmtKind::If { .. } => unreachable!("handled by block()"),
        }
    }

    /// The layout a parallel loop iterates in: that of a matrix-unit or chunked fragment it
    /// touches (the layout agreement made them all the same), else strided.
    fn loop_layout(&self, body: &[Stmt], ext: &[usize]) -> Layout {
        let mut layout = Layout::Strided;
        walk(body, &mut |s| {
            for_each_access(s, &mut |a| {
                if let Target::Buffer(b) = a.target {
                    if let Storage::Reg {
                        layout: l @ (Layout::Matrix { .. } | Layout::Chunked),
                        ..
                    } = self.storage[b]
                    {
                        if buf_shape(self.k, b, self.vals) == ext {
                            layout = l;
                        }
                    }
                }
            })
        });
        layout
    }

    /// The loop header over this thread's elements and the coordinate expressions.
    fn mapping(&self, layout: Layout, ext: &[usize]) -> (String, Vec<String>) {
        let t = self.threads;
        // Strided and chunked: element `__L` of the row-major tile, per register `__r`.
        let linear = |per_thread: usize, l: String| {
            let total: usize = ext.iter().product();
            let nreg = total.div_ceil(per_thread * t) * per_thread;
            let guard = if total % (per_thread * t) == 0 {
                "true".to_string()
            } else {
                format!("__L < {total}")
            };
            let head = format!("#pragma unroll\nfor (int __r = 0; __r < {nreg}; ++__r) {{\n  const int __L = {l};\n  if ({guard}) {{");
            (head, tile_coords(ext, "__L"))
        };
        match layout {
            Layout::Strided => linear(1, format!("__r * {t} + TL_TID")),
            Layout::Chunked => linear(
                CHUNK,
                format!("((__r / {CHUNK}) * {t} + TL_TID) * {CHUNK} + __r % {CHUNK}"),
            ),
            Layout::Matrix { inst, m, n, wm, wn } => {
                // Each thread holds m·n / t elements, each held by exactly one (thread, register).
                let nreg = m * n / t;
                let head = format!("#pragma unroll\nfor (int __r = 0; __r < {nreg}; ++__r) {{\n  int __row, __col;\n  {}(__r, __row, __col);\n  {{", inst.coord(m, n, wm, wn));
                (
                    head,
                    vec!["(tl::index)__row".into(), "(tl::index)__col".into()],
                )
            }
        }
    }

    /// A per-thread statement (inside a parallel loop, or block-level scalar code).
    fn thread_stmt(&mut self, s: &Stmt, depth: usize) -> String {
        let ind = "  ".repeat(depth);
        match &s.kind {
            StmtKind::Let { var, init } => format!(
                "{ind}{} {} = {};\n",
                ctype(self.k.vars[*var].ty),
                self.var(*var),
                self.expr(init)
            ),
            StmtKind::Assign { var, value } => {
                format!("{ind}{} = {};\n", self.var(*var), self.expr(value))
            }
            StmtKind::Store { access, value } => {
                format!("{ind}{} = {};\n", self.place(access), self.expr(value))
            }
            StmtKind::AtomicAdd { access, value } => format!(
                "{ind}tl::atomic_add(&{}, {});\n",
                self.place(access),
                self.expr(value)
            ),
            StmtKind::Alloc(_) => self.block_stmt(s, depth),
            StmtKind::If { cond, then, els } => {
                let c = self.expr(cond);
                let t: String = then
                    .iter()
                    .map(|x| self.line(x) + &self.thread_stmt(x, depth + 1))
                    .collect();
                if els.is_empty() {
                    format!("{ind}if ({c}) {{\n{t}{ind}}}\n")
                } else {
                    let e: String = els
                        .iter()
                        .map(|x| self.line(x) + &self.thread_stmt(x, depth + 1))
                        .collect();
                    format!("{ind}if ({c}) {{\n{t}{ind}}} else {{\n{e}{ind}}}\n")
                }
            }
            StmtKind::For {
                kind: LoopKind::Serial { start, end },
                vars,
                body,
            } => {
                let (v, a, b) = (self.var(vars[0]), self.expr(start), self.expr(end));
                let inner: String = body
                    .iter()
                    .map(|x| self.line(x) + &self.thread_stmt(x, depth + 1))
                    .collect();
                format!("{ind}for (tl::index {v} = {a}; {v} < {b}; ++{v}) {{\n{inner}{ind}}}\n")
            }
            // Validation keeps tile operations, parallel and pipelined loops out of parallel bodies.
            _ => {
                self.errors.push((
                    s.span,
                    "a tile operation or loop inside a parallel loop".into(),
                ));
                String::new()
            }
        }
    }

    fn place(&self, a: &Access) -> String {
        match a.target {
            Target::Tensor(p) => {
                let dims = self.tensor_dims(p);
                format!(
                    "{}[{}]",
                    self.tensor(p),
                    linear(
                        &a.index.iter().map(|i| self.expr(i)).collect::<Vec<_>>(),
                        &dims
                    )
                )
            }
            Target::Buffer(b) => match self.storage[b] {
                Storage::Reg { .. } => format!("{}[__r]", self.buf(b)),
                _ => {
                    let dims: Vec<String> = buf_shape(self.k, b, self.vals)
                        .iter()
                        .map(|d| d.to_string())
                        .collect();
                    format!(
                        "{}[{}]",
                        self.buf(b),
                        linear(
                            &a.index.iter().map(|i| self.expr(i)).collect::<Vec<_>>(),
                            &dims
                        )
                    )
                }
            },
        }
    }

    fn tensor_dims(&self, p: ParamId) -> Vec<String> {
        match &self.k.params[p].kind {
            ParamKind::Tensor { dims, .. } => dims
                .iter()
                .map(|d| match d {
                    DimRef::Sym(i) => self.sym(*i),
                    DimRef::Const(c) => format!("((tl::index){})", self.vals[*c]),
                })
                .collect(),
            ParamKind::Scalar { .. } => Vec::new(),
        }
    }

    fn copy(&mut self, span: Range, src: &Tile, dst: &Tile, depth: usize) -> String {
        let ind = "  ".repeat(depth);
        let t = self.threads;
        let region = |tensor: ParamId, offsets: &[Expr]| -> String {
            let mut dims = self.tensor_dims(tensor);
            let mut offs: Vec<String> = offsets.iter().map(|o| self.expr(o)).collect();
            while dims.len() < 4 {
                dims.insert(0, "1".into());
                offs.insert(0, "0".into());
            }
            format!(
                "tl::Region __g = {{{{{}}}, {{{}}}}};",
                dims.join(", "),
                offs.join(", ")
            )
        };
        let tile4 = |b: BufId| -> String {
            let mut s = buf_shape(self.k, b, self.vals);
            while s.len() < 4 {
                s.insert(0, 1);
            }
            s.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let ty = |b: BufId| ctype(self.k.buffers[b].dtype);
        match (src, dst) {
            (Tile::Region { tensor, offsets }, Tile::Buffer(b)) => {
                let st = ctype(self.tensor_dtype(*tensor));
                match self.storage[*b] {
                    Storage::Shared { .. } => format!(
                        "{ind}{{ {} tl::copy_g2s<{st}, {}, {}, {t}{}>({}, __g, {}); }}\n",
                        region(*tensor, offsets),
                        ty(*b),
                        tile4(*b),
                        match (self.swizzled[*b], self.async_copies) {
                            (sw, true) => format!(", {sw}, true"),
                            (true, false) => ", true".to_string(),
                            (false, false) => String::new(),
                        },
                        self.tensor(*tensor),
                        self.buf(*b)
                    ),
                    _ => {
                        let elementwise = |prelude: &str, depth: usize| {
                            self.reg_copy(
                                *b,
                                prelude,
                                |inside, lin| {
                                    format!(
                                        "{} = {inside} ? tl::cast<{}, {st}>({}[{lin}]) : tl::lit<{}>(0.0);",
                                        "{DST}",
                                        ty(*b),
                                        self.tensor(*tensor),
                                        ty(*b)
                                    )
                                },
                                depth,
                                true,
                            )
                        };
                        self.chunked_copy(
                            *b,
                            *tensor,
                            &region(*tensor, offsets),
                            true,
                            depth,
                            &elementwise,
                        )
                    }
                }
            }
            (Tile::Buffer(b), Tile::Region { tensor, offsets }) => {
                let dt = ctype(self.tensor_dtype(*tensor));
                match self.storage[*b] {
                    Storage::Shared { .. } => format!(
                        "{ind}{{ {} tl::copy_s2g<{}, {dt}, {}, {t}>({}, {}, __g); }}\n",
                        region(*tensor, offsets),
                        ty(*b),
                        tile4(*b),
                        self.buf(*b),
                        self.tensor(*tensor)
                    ),
                    _ => {
                        let elementwise = |prelude: &str, depth: usize| {
                            self.reg_copy(
                                *b,
                                prelude,
                                |inside, lin| {
                                    format!(
                                        "if ({inside}) {}[{lin}] = tl::cast<{dt}, {}>({});",
                                        self.tensor(*tensor),
                                        ty(*b),
                                        "{SRC}"
                                    )
                                },
                                depth,
                                true,
                            )
                        };
                        self.chunked_copy(
                            *b,
                            *tensor,
                            &region(*tensor, offsets),
                            false,
                            depth,
                            &elementwise,
                        )
                    }
                }
            }
            (Tile::Buffer(a), Tile::Buffer(b)) => {
                let n = buf_len(self.k, *a, self.vals);
                match (self.storage[*a], self.storage[*b]) {
                    (Storage::Shared { .. }, Storage::Shared { .. }) => format!("{ind}tl::copy_s2s<{}, {}, {n}, {t}>({}, {});\n", ty(*a), ty(*b), self.buf(*a), self.buf(*b)),
                    (Storage::Reg { .. }, Storage::Reg { .. }) => format!(
                        "{ind}for (int __r = 0; __r < {}; ++__r) {}[__r] = tl::cast<{}, {}>({}[__r]);\n",
                        self.nreg(*b), self.buf(*b), ty(*b), ty(*a), self.buf(*a)
                    ),
                    (Storage::Shared { .. }, _) => self.reg_copy(*b, "", |_, _| format!("{{DST}} = tl::cast<{}, {}>({}[__e]);", ty(*b), ty(*a), self.buf(*a)), depth, false),
                    (_, Storage::Shared { .. }) => self.reg_copy(*a, "", |_, _| format!("{}[__e] = tl::cast<{}, {}>({{SRC}});", self.buf(*b), ty(*b), ty(*a)), depth, false),
                    _ => {
                        self.errors.push((span, "a copy between local buffers".into()));
                        String::new()
                    }
                }
            }
            _ => {
                self.errors
                    .push((span, "a copy between two global tensors".into()));
                String::new()
            }
        }
    }

    fn nreg(&self, b: BufId) -> usize {
        match self.storage[b] {
            Storage::Reg { nreg, .. } => nreg,
            _ => buf_len(self.k, b, self.vals),
        }
    }

    fn tensor_dtype(&self, p: ParamId) -> Dtype {
        tensor_dtype(self.k, p)
    }

    /// A copy between the register fragment `b` and the global region `__g` (declared by
    /// `region`): for a chunked fragment, when the tensor's pointer, row length and offset allow
    /// (a check uniform over the block), each thread moves its chunks as whole vectors — a
    /// chunk then lies entirely inside or entirely outside the tensor — and otherwise, or for
    /// other layouts, `elementwise(prelude, depth)` element by element.
    fn chunked_copy(
        &self,
        b: BufId,
        tensor: ParamId,
        region: &str,
        to_regs: bool,
        depth: usize,
        elementwise: &dyn Fn(&str, usize) -> String,
    ) -> String {
        let ind = "  ".repeat(depth);
        let Storage::Reg {
            layout: Layout::Chunked,
            nreg,
        } = self.storage[b]
        else {
            return elementwise(&format!("{region} "), depth);
        };
        let t = self.threads;
        let shape = buf_shape(self.k, b, self.vals);
        let total: usize = shape.iter().product();
        let (rt, gt) = (
            ctype(self.k.buffers[b].dtype),
            ctype(self.tensor_dtype(tensor)),
        );
        let (name, ptr) = (self.buf(b), self.tensor(tensor));
        let r = shape.len();
        let mut s = format!("{ind}{{ {region}\n{ind}if (tl::chunk_aligned({ptr}, __g)) {{\n");
        let _ = writeln!(
            s,
            "{ind}  #pragma unroll\n{ind}  for (int __k = 0; __k < {}; ++__k) {{",
            nreg / CHUNK
        );
        let _ = writeln!(
            s,
            "{ind}    const int __L = (__k * {t} + TL_TID) * {CHUNK};"
        );
        let guard = if total % (CHUNK * t) == 0 {
            "true".to_string()
        } else {
            format!("__L < {total}")
        };
        let _ = writeln!(s, "{ind}    if ({guard}) {{");
        for (d, c) in tile_coords(&shape, "__L").iter().enumerate() {
            let _ = writeln!(s, "{ind}      const tl::index __c{d} = {c};");
        }
        // The chunk's first element.
        let (inside, lin) = region_index(r);
        let regs = format!("{name} + __k * {CHUNK}");
        if to_regs {
            let _ = writeln!(
                s,
                "{ind}      if ({inside}) tl::load_chunk<{gt}, {rt}>({ptr} + {lin}, {regs});\n{ind}      else for (int __v = 0; __v < {CHUNK}; ++__v) {name}[__k * {CHUNK} + __v] = tl::lit<{rt}>(0.0);"
            );
        } else {
            let _ = writeln!(
                s,
                "{ind}      if ({inside}) tl::store_chunk<{rt}, {gt}>({regs}, {ptr} + {lin});"
            );
        }
        let _ = writeln!(s, "{ind}    }}\n{ind}  }}\n{ind}}} else {{");
        s.push_str(&elementwise("", depth + 1));
        let _ = writeln!(s, "{ind}}}\n{ind}}}");
        s
    }

    /// A copy between a register fragment `b` and a global region (`global`) or a shared
    /// buffer, iterating over this thread's elements. `body(inside, lin)` renders the per-element
    /// statement with `{DST}` / `{SRC}` standing for the register; `__e` is the element's
    /// row-major index in the tile.
    fn reg_copy(
        &self,
        b: BufId,
        prelude: &str,
        body: impl Fn(&str, &str) -> String,
        depth: usize,
        global: bool,
    ) -> String {
        let ind = "  ".repeat(depth);
        let shape = buf_shape(self.k, b, self.vals);
        let (head, coords) = match self.storage[b] {
            Storage::Reg { layout, .. } => self.mapping(layout, &shape),
            _ => return format!("{ind}#error \"tilelang: copy of a non-register buffer through the register path\"\n"),
        };
        let r = shape.len();
        let mut s = format!("{ind}{{ {prelude}\n{ind}{head}\n");
        let mut e_lin = String::from("0");
        for d in 0..r {
            let _ = writeln!(s, "{ind}    const tl::index __c{d} = {};", coords[d]);
            e_lin = format!("({e_lin}) * {} + __c{d}", shape[d]);
        }
        let _ = writeln!(s, "{ind}    const tl::index __e = {e_lin};");
        let (inside, lin) = if global {
            let (inside, lin) = region_index(r);
            (format!("({inside})"), lin)
        } else {
            ("true".into(), "__e".into())
        };
        let stmt = body(&inside, &lin)
            .replace("{DST}", &format!("{}[__r]", self.buf(b)))
            .replace("{SRC}", &format!("{}[__r]", self.buf(b)));
        let _ = writeln!(s, "{ind}    {stmt}");
        let _ = writeln!(s, "{ind}  }}\n{ind}}}\n{ind}}}");
        s
    }

    fn expr(&self, e: &Expr) -> String {
        let t = ctype(e.ty);
        match &e.kind {
            ExprKind::Int(v) => match e.ty {
                Dtype::Bool => (*v != 0).to_string(),
                d if d.is_float() => format!("tl::lit<{t}>({v}.0)"),
                _ => format!(
                    "(({t}){v}{})",
                    if *v > i32::MAX as i128 || *v < i32::MIN as i128 {
                        "ll"
                    } else {
                        ""
                    }
                ),
            },
            ExprKind::Float(v) => {
                // GCC builtins, which nvcc, hipcc and clang all accept in device code.
                let lit = if v.is_finite() {
                    format!("{v:?}")
                } else if v.is_nan() {
                    "__builtin_nan(\"\")".into()
                } else if *v > 0.0 {
                    "__builtin_huge_val()".into()
                } else {
                    "-__builtin_huge_val()".into()
                };
                format!("tl::lit<{t}>({lit})")
            }
            ExprKind::Bool(b) => b.to_string(),
            ExprKind::Const(i) => self.konst(*i),
            ExprKind::Sym(i) => self.sym(*i),
            ExprKind::Scalar(p) => self.scalar(*p),
            ExprKind::Var(v) => self.var(*v),
            ExprKind::BlockIdx(d) => ["TL_BID_X", "TL_BID_Y", "TL_BID_Z"][*d as usize].to_string(),
            ExprKind::Load(a) => self.place(a),
            ExprKind::Binary(op, a, b) => {
                let (x, y) = (self.expr(a), self.expr(b));
                let ot = ctype(a.ty);
                match op {
                    BinOp::Add => format!("tl::add<{ot}>({x}, {y})"),
                    BinOp::Sub => format!("tl::sub<{ot}>({x}, {y})"),
                    BinOp::Mul => format!("tl::mul<{ot}>({x}, {y})"),
                    BinOp::Div => format!("tl::div<{ot}>({x}, {y})"),
                    BinOp::Rem => format!("tl::rem<{ot}>({x}, {y})"),
                    BinOp::Shl => format!("tl::shl<{ot}>({x}, {y})"),
                    BinOp::Shr => format!("tl::shr<{ot}>({x}, {y})"),
                    BinOp::BitAnd => format!("(({ot})({x} & {y}))"),
                    BinOp::BitOr => format!("(({ot})({x} | {y}))"),
                    BinOp::BitXor => format!("(({ot})({x} ^ {y}))"),
                    BinOp::And => format!("({x} && {y})"),
                    BinOp::Or => format!("({x} || {y})"),
                    cmp => format!("(tl::cmpv({x}) {} tl::cmpv({y}))", cmp.symbol()),
                }
            }
            ExprKind::Unary(UnOp::Neg, a) => format!("tl::neg<{t}>({})", self.expr(a)),
            ExprKind::Unary(UnOp::Not, a) if a.ty == Dtype::Bool => format!("(!{})", self.expr(a)),
            ExprKind::Unary(UnOp::Not, a) => format!("(({t})(~{}))", self.expr(a)),
            ExprKind::Cast(a) => format!("tl::cast<{t}, {}>({})", ctype(a.ty), self.expr(a)),
            ExprKind::Math(f, args) => {
                let args: Vec<String> = args.iter().map(|a| self.expr(a)).collect();
                format!("tl::{}<{t}>({})", f.name(), args.join(", "))
            }
            ExprKind::Select(c, a, b) => {
                format!("({} ? {} : {})", self.expr(c), self.expr(a), self.expr(b))
            }
            ExprKind::DivCeil(a, b) => {
                format!("tl::div_ceil<{t}>({}, {})", self.expr(a), self.expr(b))
            }
        }
    }
}

/// Row-major linear index: `((i0 * d1 + i1) * d2 + i2)`.
fn linear(idx: &[String], dims: &[String]) -> String {
    let mut s = idx[0].clone();
    for d in 1..idx.len() {
        s = format!("({s}) * {} + {}", dims[d], idx[d]);
    }
    s
}
