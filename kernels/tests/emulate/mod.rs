//! The emulation harness: the generated device code of a crate's kernels, executed on the host,
//! against the CPU backend (`kernels/tests/emulation.rs` says what and why; the examples'
//! `tests/emulation.rs` includes this module with `#[path]` for their kernels).
//!
//! The C++ driver, the host compile and the run are `tilelang_difftest::emulate`'s, which runs
//! generated kernels the same way. [`check_target`] emits the source of every config of a [`Suite`]'s kernels for one target
//! with `tilelang_codegen::lower::emit`, compiles them all into one host executable with
//! `clang++-19 -DTL_HOST_EMULATION -DTL_WAVE=<wave>`, runs each config at each of its case's
//! sizes with random inputs (and, on sm_90a, each TMA entry beside its plain entry where the
//! launcher would run it), and compares every output with the same launch on the CPU backend.
//! Every tensor is surrounded by guard bytes; a write past either end is reported.

use kernels::check::Rng;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tilelang::{bf16, f16, AnyScalar, AnyTensor, Arg, Device, KernelInfo};
use tilelang_codegen::ir::{BinOp, DimRef, Dtype, Expr, ExprKind, Kernel, MathFn, ParamKind};
use tilelang_codegen::ir::{Stmt, StmtKind};
use tilelang_codegen::lower;
use tilelang_codegen::target::{MatrixUnit, Target};
use tilelang_difftest::emulate as host;

/// How long one target's executable may run before it counts as hung (a barrier that some
/// threads never reach deadlocks the emulation, as it would hang a GPU).
const RUN_TIMEOUT: Duration = Duration::from_secs(300);

/// What the input tensors hold. (Each suite uses some of the variants.)
#[derive(Clone, Copy)]
#[allow(dead_code)]
pub enum Fill {
    /// Uniform in `[lo, hi)`, rounded to the element type (integers: random bits).
    Uniform(f64, f64),
    /// Floats as `Uniform(lo, hi)`, integers uniform in `[ilo, ihi)` (indices: some in range,
    /// some not).
    UniformInts(f64, f64, i64, i64),
    /// f16 values with random bit patterns, every finite value possible (the copies are exact).
    FiniteBits,
    /// Floats uniform among the multiples of 1/4 in `[lo, hi]` (integers: random bits): sums of
    /// products of them are exact in f32 in any order while they stay below 2^20, so a kernel
    /// that reduces in another order than the CPU backend still agrees bit for bit.
    Quarters(f64, f64),
}

/// How the emulated outputs must agree with the CPU backend's.
#[derive(Clone, Copy)]
pub enum Tol {
    /// Bit for bit: the same operations in the same order.
    Exact,
    /// `|emulated − cpu| ≤ atol + rtol·|cpu|`: the GPU code reduces in another order.
    Close { atol: f64, rtol: f64 },
}

/// How one kernel is emulated.
pub struct Case {
    pub kernel: &'static str,
    /// Size sets, each a value for every shape symbol of the kernel.
    pub sizes: &'static [&'static [(&'static str, usize)]],
    pub fill: Fill,
    pub tol: Tol,
    /// A value for every scalar parameter, by name.
    pub scalars: &'static [(&'static str, f64)],
}

/// The kernels of one crate, each with its case, and the tolerance of its `gemm` kernels on a
/// matrix unit (the f32 sums reordered: a bound that depends on the cases' sizes).
pub struct Suite {
    /// Names the scratch directory, `target/tmp/emulation-<name>-<arch>`.
    pub name: &'static str,
    pub kernels: Vec<(&'static KernelInfo, Case)>,
    pub matrix_tol: Tol,
}

impl Suite {
    /// One case per kernel of `list`, in its order: a kernel without a case, or a case for a
    /// kernel not in the list, fails the test.
    pub fn new(
        name: &'static str,
        list: impl IntoIterator<Item = &'static KernelInfo>,
        mut cases: Vec<Case>,
        matrix_tol: Tol,
    ) -> Suite {
        let kernels = list
            .into_iter()
            .map(|k| {
                let i = cases
                    .iter()
                    .position(|c| c.kernel == k.name)
                    .unwrap_or_else(|| {
                        panic!("no emulation case for `{}`: add one to cases()", k.name)
                    });
                (k, cases.remove(i))
            })
            .collect();
        let unknown: Vec<&str> = cases.iter().map(|c| c.kernel).collect();
        assert!(
            unknown.is_empty(),
            "cases for kernels that the list does not have (or has twice): {unknown:?}"
        );
        Suite {
            name,
            kernels,
            matrix_tol,
        }
    }
}

fn uses_gemm(stmts: &[Stmt]) -> bool {
    stmts.iter().any(|s| match &s.kind {
        StmtKind::Gemm { .. } => true,
        StmtKind::For { body, .. } => uses_gemm(body),
        StmtKind::If { then, els, .. } => uses_gemm(then) || uses_gemm(els),
        _ => false,
    })
}

/// One (case, config) launch, as prepared on the Rust side.
struct Run {
    id: usize,
    what: String,
    /// The kernel's tensor parameters, in order, and (parameter index, shape) of each.
    tensors: Vec<String>,
    shapes: Vec<(usize, Vec<usize>)>,
    /// Per output tensor: (name, shape, dtype, the CPU backend's result).
    outputs: Vec<(String, Vec<usize>, Dtype, Vec<u8>)>,
    /// The file names of the output tensors, in the same order.
    files: Vec<String>,
    tol: Tol,
}

/// Emulates every config of the cases' kernels (only those using `gemm` if `gemm_only`) as
/// generated for `arch` and compares the outputs with the CPU backend's.
/// Compiles `dir/src` against tl.h for the host (`TL_HOST_EMULATION`, a wave of `wave` lanes,
/// `TILELANG_EMU_CXXFLAGS` added) into `dir/exe`; a failure names `what` and the sources.
pub fn compile_host(dir: &Path, src: &str, exe: &str, wave: u32, what: &str) {
    host::compile_host(dir, src, exe, wave).unwrap_or_else(|e| panic!("on {what}: {e}"));
}

pub fn check_target(suite: &Suite, arch: &str, wave: u32, gemm_only: bool) {
    let target = Target::by_arch(arch).expect("known target");
    assert_eq!(target.wave, wave, "{arch}'s wave size");
    let seed = Rng::fresh_seed();
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("emulation-{}-{arch}", suite.name));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();

    let found = tilelang_build::find::kernels(&manifest.join("src")).unwrap();
    let dev = Device::cpu();
    let mut harness = String::from(host::PRELUDE);
    let mut entries = String::new();
    let mut manifest_text = String::new();
    let mut runs: Vec<Run> = Vec::new();
    let mut covered = Vec::new();
    for (info, case) in &suite.kernels {
        let k = &found
            .iter()
            .find(|f| f.ir.name == case.kernel)
            .unwrap_or_else(|| {
                panic!(
                    "kernel `{}` not found in {}",
                    case.kernel,
                    manifest.join("src").display()
                )
            })
            .ir;
        let gemm = uses_gemm(&k.body);
        if gemm_only && !gemm {
            continue;
        }
        let tol = if gemm && target.matrix != MatrixUnit::None {
            suite.matrix_tol
        } else {
            case.tol
        };
        // The configs the build compiles for this target (one over its limits is left out
        // when another fits, as `launcher::lower` decides).
        let built = tilelang_codegen::launcher::lower(k, &[target]).unwrap_or_else(|d| {
            let text: Vec<String> = d.iter().map(|d| d.text()).collect();
            panic!("{} for {arch}: {}", case.kernel, text.join("\n"))
        });
        for l in built {
            let c = l.config;
            let config = k.configs[c].name.to_string();
            let hip = lower::emit(k, c, &target, None)
                .unwrap_or_else(|e| panic!("{}[{config}] for {arch}: {}", case.kernel, e.text()));
            let tma = l.launch.tma;
            // The generated source and a call of its entry with the tensors' pointers and the
            // shape symbols.
            std::fs::write(dir.join(format!("{}.cu", hip.entry)), &hip.source).unwrap();
            let call_args = host::call_args(k);
            let _ = writeln!(
                harness,
                "#include \"{0}.cu\"\nstatic void call_{0}(void* const* b, const long long* s, const double* sc, const tl::TensorMap*) {{ {0}({1}); }}",
                hip.entry,
                call_args
            );
            let _ = writeln!(
                entries,
                "  {{\"{0}\", call_{0}, {1}, {2}}},",
                hip.entry, hip.threads, hip.shared_bytes
            );
            // The TMA entry takes the tensor maps after the same arguments.
            if let Some(t) = &tma {
                let maps = (0..t.maps.len()).map(|i| format!(", m[{i}]"));
                let _ = writeln!(
                    harness,
                    "static void call_{0}(void* const* b, const long long* s, const double* sc, const tl::TensorMap* m) {{ {0}({1}{2}); }}",
                    t.entry,
                    call_args,
                    maps.collect::<String>()
                );
                let _ = writeln!(
                    entries,
                    "  {{\"{0}\", call_{0}, {1}, {2}}},",
                    t.entry, t.threads, t.shared_bytes
                );
            }
            for sizes in case.sizes {
                let id = runs.len();
                let what = format!(
                    "{}[{config}] for {arch} (wave {wave}), {}",
                    case.kernel,
                    sizes
                        .iter()
                        .map(|(n, v)| format!("{n}={v}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                let mut rng = Rng::new(seed ^ (id as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
                let (line, run) = prepare(
                    &dev, &dir, k, info, c, &hip.entry, sizes, case, &mut rng, id, what,
                );
                manifest_text.push_str(&line);
                // The TMA entry on the same inputs, where the launcher would run it.
                let tma_line = tma.as_ref().and_then(|t| tma_run(k, t, &line, &run));
                runs.push(Run { tol, ..run });
                if let Some((line, run)) = tma_line {
                    manifest_text.push_str(&line);
                    runs.push(Run { tol, ..run });
                }
            }
        }
        covered.push(case.kernel);
    }
    harness.push_str("namespace {\nconst tl_emu::Entry entries[] = {\n");
    harness.push_str(&entries);
    harness.push_str("};\n}  // namespace\n");
    harness.push_str(host::RUNNER);
    std::fs::write(dir.join("harness.cpp"), harness).unwrap();
    std::fs::write(dir.join("runs.txt"), manifest_text).unwrap();

    // Compile once for all configs.
    let t0 = Instant::now();
    compile_host(
        &dir,
        "harness.cpp",
        "harness",
        wave,
        &format!("the generated code for {arch}"),
    );
    let compiled = t0.elapsed();

    // Run every launch.
    let t1 = Instant::now();
    let (status, stdout, stderr) = host::run_harness(&dir, RUN_TIMEOUT);
    let ran = t1.elapsed();
    let mut failures = Vec::new();
    let done: Vec<&str> = stdout.lines().collect();
    for line in &done {
        if let Some(rest) = line.strip_prefix("oob ") {
            let v: Vec<i64> = rest.split(' ').map(|x| x.parse().unwrap()).collect();
            let run = &runs[v[0] as usize];
            failures.push(format!(
                "{}: a write outside tensor `{}`: its byte {} (counted from its start) changed",
                run.what, run.tensors[v[1] as usize], v[2]
            ));
        }
    }
    if !status {
        let started = stderr
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix("start "))
            .and_then(|i| i.parse::<usize>().ok());
        let messages: Vec<&str> = stderr
            .lines()
            .filter(|l| !l.starts_with("start "))
            .collect();
        panic!(
            "the emulation for {arch} failed{} (TILELANG_SEED={seed}; files in {}):\n{}",
            started.map_or(String::new(), |i| format!(" during {}", runs[i].what)),
            dir.display(),
            messages.join("\n")
        );
    }

    for run in &runs {
        for ((name, shape, dtype, want), file) in run.outputs.iter().zip(&run.files) {
            let got = std::fs::read(dir.join(format!("{file}.{}.out", run.id)))
                .unwrap_or_else(|e| panic!("{}: no output for `{name}`: {e}", run.what));
            if let Some(msg) = compare(*dtype, shape, &got, want, run.tol) {
                failures.push(format!("{}: output `{name}`: {msg}", run.what));
            }
        }
    }
    println!(
        "{arch} (wave {wave}): {} launches of {} kernels ({}); compiled in {:.1} s, ran in {:.1} s; \
         TILELANG_SEED={seed}",
        runs.len(),
        covered.len(),
        covered.join(", "),
        compiled.as_secs_f64(),
        ran.as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "the emulated HIP code for {arch} (wave {wave}) disagrees with the CPU backend \
         (TILELANG_SEED={seed}; sources in {}):\n{}",
        dir.display(),
        failures.join("\n")
    );
}

/// Prepares launch `id` of config `c` of `k` at `sizes`: random inputs, the CPU backend's
/// outputs, the files for the harness; returns the manifest line and the run.
#[allow(clippy::too_many_arguments)]
fn prepare(
    dev: &Device,
    dir: &Path,
    k: &Kernel,
    info: &KernelInfo,
    c: usize,
    entry: &str,
    sizes: &[(&str, usize)],
    case: &Case,
    rng: &mut Rng,
    id: usize,
    what: String,
) -> (String, Run) {
    let syms: Vec<i128> = k
        .symbols
        .iter()
        .map(|s| {
            let name = s.to_string();
            sizes
                .iter()
                .find(|(n, _)| *n == name)
                .unwrap_or_else(|| panic!("{}: no size for symbol {name}", case.kernel))
                .1 as i128
        })
        .collect();
    assert_eq!(syms.len(), sizes.len(), "{what}: sizes for unknown symbols");
    let consts = &k.configs[c].values;
    // (param, name, shape, dtype, is output, CPU tensor, file)
    let mut tensors = Vec::new();
    let mut scalars = Vec::new();
    for (i, p) in k.params.iter().enumerate() {
        let (dtype, dims, mutable) = match &p.kind {
            ParamKind::Tensor {
                dtype,
                dims,
                mutable,
            } => (dtype, dims, mutable),
            ParamKind::Scalar { dtype } => {
                let name = p.name.to_string();
                let v = case
                    .scalars
                    .iter()
                    .find(|(n, _)| *n == name)
                    .unwrap_or_else(|| panic!("{what}: no value for scalar `{name}`"))
                    .1;
                scalars.push((i, scalar(*dtype, v)));
                continue;
            }
        };
        let shape: Vec<usize> = dims
            .iter()
            .map(|d| match d {
                DimRef::Sym(s) => syms[*s] as usize,
                DimRef::Const(q) => consts[*q] as usize,
            })
            .collect();
        let n: usize = shape.iter().product();
        let t = if *mutable {
            alloc(dev, *dtype, &shape)
        } else {
            upload(
                dev,
                *dtype,
                &random_bytes(rng, *dtype, n, case.fill),
                &shape,
            )
        };
        let file = format!("r{id}_{i}.bin");
        std::fs::write(dir.join(&file), download(&t)).unwrap();
        tensors.push((i, p.name.to_string(), shape, *dtype, *mutable, t, file));
    }

    // The same launch on the CPU backend, arguments in parameter order.
    let config = k.configs[c].name.to_string();
    let mut args: Vec<(usize, Arg)> = tensors
        .iter_mut()
        .map(|t| {
            let arg = if t.4 {
                Arg::Out(&mut t.5)
            } else {
                Arg::In(&t.5)
            };
            (t.0, arg)
        })
        .chain(scalars.iter().map(|(i, (s, _))| (*i, Arg::Scalar(*s))))
        .collect();
    args.sort_by_key(|a| a.0);
    (info.launch_dyn)(dev, &config, args.into_iter().map(|a| a.1).collect())
        .unwrap_or_else(|e| panic!("{what}: CPU launch: {e}"));

    // run <id> <entry> <gx> <gy> <gz> <ntensors> {<file> <bytes> <is_output>} <nsyms> {<value>}
    //   <nscalars> {<value>} <nmaps> {...}
    let grid: Vec<i128> = (0..3)
        .map(|d| k.grid.get(d).map_or(1, |g| eval(g, consts, &syms)))
        .collect();
    let mut line = format!(
        "run {id} {entry} {} {} {} {}",
        grid[0],
        grid[1],
        grid[2],
        tensors.len()
    );
    for t in &tensors {
        let bytes = t.2.iter().product::<usize>() * size(t.3);
        let _ = write!(line, " {} {bytes} {}", t.6, t.4 as u8);
    }
    let _ = write!(line, " {}", syms.len());
    for s in &syms {
        let _ = write!(line, " {s}");
    }
    let _ = write!(line, " {}", scalars.len());
    for (_, (_, v)) in &scalars {
        let _ = write!(line, " {v}");
    }
    line.push_str(" 0\n"); // no tensor maps
    let outs = || tensors.iter().filter(|t| t.4);
    let run = Run {
        id,
        what,
        tensors: tensors.iter().map(|t| t.1.clone()).collect(),
        shapes: tensors.iter().map(|t| (t.0, t.2.clone())).collect(),
        outputs: outs()
            .map(|t| (t.1.clone(), t.2.clone(), t.3, download(&t.5)))
            .collect(),
        files: outs().map(|t| t.6.clone()).collect(),
        tol: case.tol,
    };
    (line, run)
}

/// The blocks a persistent entry is launched with ([`tma_run`]).
const PERSISTENT_BLOCKS: u64 = 3;

/// The launch of `t`, the TMA entry of the config that `line` launches, on the same inputs and
/// with the same expected outputs: `line` with the entry's name and its tensor maps, or `None`
/// where the launcher would run the plain entry. The rule is the launcher's
/// (`tilelang_rt::tma`): every stride but the innermost a multiple of 16 bytes (the harness's
/// tensors start on 256-byte boundaries, as device allocations do).
fn tma_run(k: &Kernel, t: &lower::TmaLaunch, line: &str, run: &Run) -> Option<(String, Run)> {
    let mut maps = format!(" {}", t.maps.len());
    for m in &t.maps {
        let tensor = run.shapes.iter().position(|s| s.0 == m.param).unwrap();
        let shape = &run.shapes[tensor].1;
        let ParamKind::Tensor { dtype, .. } = &k.params[m.param].kind else {
            unreachable!("maps are of tensors")
        };
        let elem = size(*dtype);
        let mut stride = elem;
        for &d in shape.iter().rev().take(shape.len() - 1) {
            stride *= d;
            if stride % 16 != 0 {
                return None;
            }
        }
        let _ = write!(maps, " {tensor} {} {elem} {}", shape.len(), m.swizzle);
        for d in shape.iter().rev() {
            let _ = write!(maps, " {d}");
        }
        for b in &m.boxes {
            let _ = write!(maps, " {b}");
        }
    }
    let id = run.id + 1;
    let mut f: Vec<String> = line.split_whitespace().map(String::from).collect();
    f[1] = id.to_string();
    f[2] = t.entry.clone();
    if t.persistent {
        // As the launcher would on a device holding 3 blocks at once: fewer blocks than
        // tiles, each walking several (and the last ones fewer).
        let tiles: u64 = f[3..6].iter().map(|g| g.parse::<u64>().unwrap()).product();
        f[3] = tiles.min(PERSISTENT_BLOCKS).to_string();
        f[4] = "1".into();
        f[5] = "1".into();
    }
    f.pop(); // the plain launch's "0" maps
    let line = format!("{}{maps}\n", f.join(" "));
    let run = Run {
        id,
        what: format!("{} through TMA", run.what),
        tensors: run.tensors.clone(),
        shapes: run.shapes.clone(),
        outputs: run.outputs.clone(),
        files: run.files.clone(),
        tol: run.tol,
    };
    Some((line, run))
}

/// Evaluates a grid expression the way the launcher does (shape symbols and const generics).
fn eval(e: &Expr, consts: &[u64], syms: &[i128]) -> i128 {
    let ev = |x: &Expr| eval(x, consts, syms);
    match &e.kind {
        ExprKind::Int(v) => *v,
        ExprKind::Const(i) => consts[*i] as i128,
        ExprKind::Sym(i) => syms[*i],
        ExprKind::Cast(x) => ev(x),
        ExprKind::DivCeil(a, b) => {
            let (a, b) = (ev(a), ev(b));
            (a + b - 1).div_euclid(b)
        }
        ExprKind::Math(MathFn::Max, a) => ev(&a[0]).max(ev(&a[1])),
        ExprKind::Math(MathFn::Min, a) => ev(&a[0]).min(ev(&a[1])),
        ExprKind::Binary(op, a, b) => {
            let (a, b) = (ev(a), ev(b));
            match op {
                BinOp::Add => a + b,
                BinOp::Sub => a - b,
                BinOp::Mul => a * b,
                BinOp::Div => a / b,
                BinOp::Rem => a % b,
                _ => panic!("grid expression with {op:?}: not supported by this test"),
            }
        }
        other => panic!("grid expression {other:?}: not supported by this test"),
    }
}

/// A scalar argument of type `d` holding `v`, and `v` as the harness reads it (the value the
/// scalar holds, which a double represents exactly).
fn scalar(d: Dtype, v: f64) -> (AnyScalar, f64) {
    match d {
        Dtype::F32 => (AnyScalar::F32(v as f32), v as f32 as f64),
        Dtype::F64 => (AnyScalar::F64(v), v),
        Dtype::I32 => (AnyScalar::I32(v as i32), v as i32 as f64),
        _ => panic!("scalar parameters of {d:?} are not emulated yet"),
    }
}

fn size(d: Dtype) -> usize {
    d.size_bytes()
}

/// `n` random elements of `d`, little-endian.
fn random_bytes(rng: &mut Rng, d: Dtype, n: usize, fill: Fill) -> Vec<u8> {
    let (lo, hi) = match fill {
        Fill::Uniform(lo, hi) => (lo, hi),
        Fill::UniformInts(_, _, ilo, ihi) if !d.is_float() => {
            let v: Vec<i64> = (0..n)
                .map(|_| ilo + (rng.next_u64() % (ihi - ilo) as u64) as i64)
                .collect();
            return v
                .iter()
                .flat_map(|x| x.to_le_bytes()[..size(d)].to_vec())
                .collect();
        }
        Fill::UniformInts(lo, hi, _, _) => (lo, hi),
        Fill::FiniteBits => {
            assert_eq!(d, Dtype::F16, "FiniteBits is for f16 tensors");
            let v = kernels::ch01_copy::random_finite_f16(rng, n);
            return v.iter().flat_map(|x| x.to_le_bytes()).collect();
        }
        Fill::Quarters(lo, hi) if d.is_float() => {
            let q: Vec<f64> = rng
                .vec::<f64>(n, lo, hi)
                .iter()
                .map(|x| (x * 4.0).round() / 4.0)
                .collect();
            return match d {
                Dtype::F16 => q
                    .iter()
                    .flat_map(|&x| f16::from_f64(x).to_le_bytes())
                    .collect(),
                Dtype::Bf16 => q
                    .iter()
                    .flat_map(|&x| bf16::from_f64(x).to_le_bytes())
                    .collect(),
                Dtype::F32 => q.iter().flat_map(|&x| (x as f32).to_le_bytes()).collect(),
                _ => q.iter().flat_map(|x| x.to_le_bytes()).collect(),
            };
        }
        Fill::Quarters(lo, hi) => (lo, hi),
    };
    match d {
        Dtype::F16 => rng
            .vec::<f16>(n, lo, hi)
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect(),
        Dtype::Bf16 => rng
            .vec::<bf16>(n, lo, hi)
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect(),
        Dtype::F32 => rng
            .vec::<f32>(n, lo, hi)
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect(),
        Dtype::F64 => rng
            .vec::<f64>(n, lo, hi)
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect(),
        _ => rng.bytes(n * size(d)),
    }
}

/// `bytes` (little-endian elements of `d`) as a CPU tensor.
fn upload(dev: &Device, d: Dtype, bytes: &[u8], shape: &[usize]) -> AnyTensor {
    macro_rules! up {
        ($t:ty, $n:expr, $conv:expr) => {{
            let v: Vec<$t> = bytes
                .chunks_exact($n)
                .map(|c| $conv(c.try_into().unwrap()))
                .collect();
            AnyTensor::from(dev.upload(&v, shape).unwrap())
        }};
    }
    match d {
        Dtype::F16 => up!(f16, 2, f16::from_le_bytes),
        Dtype::Bf16 => up!(bf16, 2, bf16::from_le_bytes),
        Dtype::F32 => up!(f32, 4, f32::from_le_bytes),
        Dtype::F64 => up!(f64, 8, f64::from_le_bytes),
        Dtype::I32 => up!(i32, 4, i32::from_le_bytes),
        Dtype::U32 => up!(u32, 4, u32::from_le_bytes),
        Dtype::U8 => up!(u8, 1, u8::from_le_bytes),
        other => panic!("tensors of {other:?} do not exist"),
    }
}

/// A fresh (poisoned) CPU tensor of `d`.
fn alloc(dev: &Device, d: Dtype, shape: &[usize]) -> AnyTensor {
    match d {
        Dtype::F16 => AnyTensor::from(dev.alloc::<f16>(shape).unwrap()),
        Dtype::Bf16 => AnyTensor::from(dev.alloc::<bf16>(shape).unwrap()),
        Dtype::F32 => AnyTensor::from(dev.alloc::<f32>(shape).unwrap()),
        Dtype::F64 => AnyTensor::from(dev.alloc::<f64>(shape).unwrap()),
        Dtype::I32 => AnyTensor::from(dev.alloc::<i32>(shape).unwrap()),
        Dtype::U32 => AnyTensor::from(dev.alloc::<u32>(shape).unwrap()),
        Dtype::U8 => AnyTensor::from(dev.alloc::<u8>(shape).unwrap()),
        other => panic!("tensors of {other:?} do not exist"),
    }
}

/// A tensor's elements, little-endian.
fn download(t: &AnyTensor) -> Vec<u8> {
    macro_rules! down {
        ($x:expr) => {
            $x.to_vec()
                .unwrap()
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect()
        };
    }
    match t {
        AnyTensor::F16(x) => down!(x),
        AnyTensor::Bf16(x) => down!(x),
        AnyTensor::F32(x) => down!(x),
        AnyTensor::F64(x) => down!(x),
        AnyTensor::I32(x) => down!(x),
        AnyTensor::U32(x) => down!(x),
        AnyTensor::U8(x) => down!(x),
    }
}

/// Element `i` of little-endian `bytes` of `d`, as f64.
fn value(d: Dtype, bytes: &[u8], i: usize) -> f64 {
    let n = size(d);
    let c = &bytes[i * n..(i + 1) * n];
    match d {
        Dtype::F16 => f16::from_le_bytes(c.try_into().unwrap()).to_f64(),
        Dtype::Bf16 => bf16::from_le_bytes(c.try_into().unwrap()).to_f64(),
        Dtype::F32 => f32::from_le_bytes(c.try_into().unwrap()) as f64,
        Dtype::F64 => f64::from_le_bytes(c.try_into().unwrap()),
        Dtype::I32 => i32::from_le_bytes(c.try_into().unwrap()) as f64,
        Dtype::U32 => u32::from_le_bytes(c.try_into().unwrap()) as f64,
        Dtype::U8 => c[0] as f64,
        other => panic!("tensors of {other:?} do not exist"),
    }
}

/// `None` if `got` (emulated) agrees with `want` (CPU backend), else what differs: the first
/// differing element with its coordinates, and how many differ.
fn compare(d: Dtype, shape: &[usize], got: &[u8], want: &[u8], tol: Tol) -> Option<String> {
    if got.len() != want.len() {
        return Some(format!("{} bytes, want {}", got.len(), want.len()));
    }
    let n = size(d);
    let len = want.len() / n;
    let bad = |i: usize| -> bool {
        match tol {
            Tol::Exact => got[i * n..(i + 1) * n] != want[i * n..(i + 1) * n],
            Tol::Close { atol, rtol } => {
                let (g, w) = (value(d, got, i), value(d, want, i));
                if g.is_nan() || w.is_nan() {
                    g.is_nan() != w.is_nan()
                } else {
                    (g - w).abs() > atol + rtol * w.abs()
                }
            }
        }
    };
    let first = (0..len).find(|&i| bad(i))?;
    let count = (first..len).filter(|&i| bad(i)).count();
    let mut coords = vec![0; shape.len()];
    let mut rest = first;
    for (c, &dim) in coords.iter_mut().zip(shape).rev() {
        *c = rest % dim;
        rest /= dim;
    }
    let (g, w) = (value(d, got, first), value(d, want, first));
    let bits = |b: &[u8]| {
        b[first * n..(first + 1) * n]
            .iter()
            .rev()
            .map(|x| format!("{x:02x}"))
            .collect::<String>()
    };
    Some(format!(
        "{count} of {len} elements differ; first at {coords:?} (flat {first}): emulated {g:e} \
         (0x{}), CPU backend {w:e} (0x{}){}",
        bits(got),
        bits(want),
        match tol {
            Tol::Exact => " (bit-exact comparison)".to_string(),
            Tol::Close { atol, rtol } => format!(" (atol {atol:e}, rtol {rtol:e})"),
        }
    ))
}
