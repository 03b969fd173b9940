//! Generated kernels on a GPU (`docs/design/difftest.md` §2, stage 4): their device sources
//! compiled in batches by the target's own compiler where the GPU is (the GPU machine has no
//! Rust, so nothing is compiled ahead), the cubins loaded as the runtime loads embedded ones,
//! every config launched at several shapes on the same random inputs as the IR evaluator, and
//! every output compared with the evaluator's: bit for bit where the expression is exact on
//! every backend (a NaN matches any NaN), within a tolerance derived from the call where it
//! stores an inexact math function's result ([`agrees`]); any other difference is a bug.
//!
//! [`compile`] lowers and compiles a range of seeds into a folder and writes its index;
//! [`run`] reads the index and runs a sub-range against the evaluator. The `difftest` binary
//! runs `run` in child processes, so a fault (which poisons the CUDA context) costs one chunk
//! and is named, not the whole call.

use crate::eval::{self, Array, Data, Value};
use crate::gen::{self, ast, ast::Tol, rng::Rng};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use tilelang::__private::gpu::{KernelArg, Object};
use tilelang::__private::tma::Tma;
use tilelang::{bf16, f16, AnyScalar, AnyTensor, Device, Element, Tensor};
use tilelang_codegen::{ir, lower, target::Target};

/// The shape symbols' values (`L`, `M`, `N`, `K`) of the cases each config runs: all ones, odd
/// sizes that fit no tile, a tile multiple plus one, and multiples of 8 (the vector paths).
pub const SIZES: [[usize; 4]; 4] = [
    [1, 1, 1, 1],
    [2, 37, 53, 19],
    [3, 65, 129, 70],
    [2, 64, 256, 128],
];

/// A symbol's value in a case.
pub fn size(sizes: &[usize; 4], sym: &str) -> usize {
    match sym {
        "L" => sizes[0],
        "M" => sizes[1],
        "K" => sizes[3],
        _ => sizes[2],
    }
}

/// One (kernel, config, arch) entry of a compiled batch: a line of the index.
#[derive(Clone, Debug)]
pub struct Entry {
    pub seed: u64,
    pub config: usize,
    pub arch: String,
    pub entry: String,
    pub threads: u32,
    pub shared_bytes: u32,
    /// The cubin holding it, relative to the folder.
    pub image: String,
}

impl Entry {
    fn line(&self) -> String {
        format!(
            "{:016x}\t{}\t{}\t{}\t{}\t{}\t{}\n",
            self.seed,
            self.config,
            self.arch,
            self.entry,
            self.threads,
            self.shared_bytes,
            self.image
        )
    }

    fn parse(line: &str) -> Option<Entry> {
        let f: Vec<&str> = line.split('\t').collect();
        Some(Entry {
            seed: u64::from_str_radix(f.first()?, 16).ok()?,
            config: f.get(1)?.parse().ok()?,
            arch: f.get(2)?.to_string(),
            entry: f.get(3)?.to_string(),
            threads: f.get(4)?.parse().ok()?,
            shared_bytes: f.get(5)?.parse().ok()?,
            image: f.get(6)?.to_string(),
        })
    }
}

/// What went wrong with one kernel, named by its seed.
#[derive(Clone, Debug)]
pub struct Finding {
    pub seed: u64,
    pub what: String,
}

/// The IR of a seed's kernel.
pub fn ir_of(seed: u64) -> Result<ir::Kernel, String> {
    crate::compile::to_ir(&gen::generate(seed).source())
}

/// Compiles the kernels of seeds `seeds` for `archs` into `dir` (`dir/index.tsv` lists every
/// entry and its cubin). Sources go `batch` to a file, compiled by `jobs` compilers at once; a
/// batch that fails is compiled source by source, so a failure names its kernel. Returns the
/// findings (a rejection by the frontend, the lowering or the device compiler).
pub fn compile(
    dir: &Path,
    seeds: &[u64],
    archs: &[&str],
    batch: usize,
    jobs: usize,
) -> Result<Vec<Finding>, String> {
    let sources: Vec<(u64, String)> = seeds
        .iter()
        .map(|&s| (s, gen::generate(s).source()))
        .collect();
    compile_sources(dir, &sources, archs, batch, jobs)
}

/// [`compile`] for `#[tile_kernel]` sources, each named by a number (a seed) in the index and
/// the findings.
pub fn compile_sources(
    dir: &Path,
    sources: &[(u64, String)],
    archs: &[&str],
    batch: usize,
    jobs: usize,
) -> Result<Vec<Finding>, String> {
    let include = dir.join("include");
    std::fs::create_dir_all(&include).map_err(|e| format!("{}: {e}", include.display()))?;
    for (name, text) in lower::HEADERS {
        std::fs::write(include.join(name), text).map_err(|e| format!("{name}: {e}"))?;
    }
    let mut findings = Vec::new();
    // (arch, seed, source, entry): every source to compile.
    let mut units: Vec<(Target, Entry, String)> = Vec::new();
    for (seed, source) in sources {
        let seed = *seed;
        let k = match crate::compile::to_ir(source) {
            Ok(k) => k,
            Err(e) => {
                findings.push(Finding {
                    seed,
                    what: format!("rejected by the frontend: {e}"),
                });
                continue;
            }
        };
        for arch in archs {
            let t = Target::by_arch(arch).ok_or_else(|| format!("unknown arch {arch}"))?;
            for c in 0..k.configs.len() {
                match lower::emit(&k, c, &t, None) {
                    Ok(h) => units.push((
                        t,
                        Entry {
                            seed,
                            config: c,
                            arch: arch.to_string(),
                            entry: h.entry,
                            threads: h.threads,
                            shared_bytes: h.shared_bytes as u32,
                            image: String::new(),
                        },
                        h.source,
                    )),
                    Err(d) => findings.push(Finding {
                        seed,
                        what: format!("rejected by the lowering for {arch}: {}", d.text()),
                    }),
                }
            }
        }
    }
    // Batches of one arch.
    let mut batches: Vec<Vec<usize>> = Vec::new();
    for arch in archs {
        let of_arch: Vec<usize> = (0..units.len())
            .filter(|&i| units[i].1.arch == *arch)
            .collect();
        batches.extend(of_arch.chunks(batch.max(1)).map(|c| c.to_vec()));
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: std::sync::Mutex<Vec<(usize, Result<(), String>)>> = Default::default();
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| loop {
                let b = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(members) = batches.get(b) else { break };
                let r = compile_one(dir, &include, &format!("b{b}"), &units, members);
                results.lock().unwrap().push((b, r));
            });
        }
    });
    let mut index = String::new();
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|r| r.0);
    for (b, r) in results {
        let members = &batches[b];
        match r {
            Ok(()) => {
                for &i in members {
                    let mut e = units[i].1.clone();
                    e.image = format!("b{b}.cubin");
                    index.push_str(&e.line());
                }
            }
            Err(_) => {
                // Source by source, to name the kernel.
                for &i in members {
                    let name = format!("b{b}_{i}");
                    match compile_one(dir, &include, &name, &units, &[i]) {
                        Ok(()) => {
                            let mut e = units[i].1.clone();
                            e.image = format!("{name}.cubin");
                            index.push_str(&e.line());
                        }
                        Err(msg) => findings.push(Finding {
                            seed: units[i].1.seed,
                            what: format!(
                                "rejected by the device compiler for {} (config {}): {msg}",
                                units[i].1.arch, units[i].1.config
                            ),
                        }),
                    }
                }
            }
        }
    }
    std::fs::write(dir.join("index.tsv"), index).map_err(|e| format!("index: {e}"))?;
    Ok(findings)
}

/// Compiles `members` of `units` (one arch) into `dir/<name>.cubin`.
fn compile_one(
    dir: &Path,
    include: &Path,
    name: &str,
    units: &[(Target, Entry, String)],
    members: &[usize],
) -> Result<(), String> {
    let t = &units[members[0]].0;
    let src = dir.join(format!("{name}.cu"));
    let mut text = String::new();
    for &i in members {
        text.push_str(&units[i].2);
        text.push('\n');
    }
    std::fs::write(&src, text).map_err(|e| format!("{}: {e}", src.display()))?;
    let tool = tilelang_build::toolchain::for_target(t)
        .ok_or_else(|| format!("no compiler for {}", t.arch))?;
    let out = tool
        .command(t, &src, include, &dir.join(format!("{name}.cubin")))
        .output()
        .map_err(|e| format!("{}: {e}", tool.path().display()))?;
    if out.status.success() {
        // `DIFF_KEEP_SOURCES=1` keeps them, to read the PTX of what ran.
        if std::env::var_os("DIFF_KEEP_SOURCES").is_none() {
            let _ = std::fs::remove_file(&src);
        }
        Ok(())
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        Err(err
            .lines()
            .filter(|l| l.contains("error"))
            .take(3)
            .collect::<Vec<_>>()
            .join(" | "))
    }
}

/// Known device-compiler miscompilations, checked in the SASS of every NVIDIA object in `dir`
/// (by `cuobjdump` beside the compiler): a signed `VIMNMX3` (ptxas 13.0 for sm_90 drops the
/// sign of a negated operand when it fuses two signed maxima or minima into one, §7 of the
/// plan; `tl_scalar.h` compares signed integers as unsigned so that none is formed). One
/// finding per entry that has one. `Ok(None)` when no `cuobjdump` is found.
pub fn scan_sass(dir: &Path) -> Result<Option<Vec<Finding>>, String> {
    let entries = index(dir)?;
    let mut images: Vec<&str> = entries
        .iter()
        .filter(|e| e.arch.starts_with("sm_"))
        .map(|e| e.image.as_str())
        .collect();
    images.sort_unstable();
    images.dedup();
    let Some(first) = entries.iter().find(|e| e.arch.starts_with("sm_")) else {
        return Ok(Some(Vec::new()));
    };
    let t = Target::by_arch(&first.arch).ok_or("unknown arch")?;
    let beside = |tool: tilelang_build::toolchain::Tool| tool.path().with_file_name("cuobjdump");
    let Some(cuobjdump) = std::env::var_os("CUOBJDUMP")
        .map(PathBuf::from)
        .or_else(|| {
            tilelang_build::toolchain::for_target(&t)
                .map(beside)
                .filter(|p| p.exists())
        })
    else {
        return Ok(None);
    };
    let mut findings = Vec::new();
    for image in images {
        let out = std::process::Command::new(&cuobjdump)
            .arg("-sass")
            .arg(dir.join(image))
            .output()
            .map_err(|e| format!("{}: {e}", cuobjdump.display()))?;
        if !out.status.success() {
            return Err(format!(
                "{} -sass {image}: {}",
                cuobjdump.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let mut function = "";
        let text = String::from_utf8_lossy(&out.stdout);
        for line in text.lines() {
            if let Some(f) = line.trim().strip_prefix("Function : ") {
                function = f;
            } else if let Some(op) = signed_vimnmx3(line) {
                let e = entries
                    .iter()
                    .find(|e| e.image == image && e.entry == function);
                findings.push(Finding {
                    seed: e.map_or(0, |e| e.seed),
                    what: format!(
                        "{image}: {function} has `{op}`, a signed 3-way integer min/max that \
                         ptxas miscompiles with a negated operand"
                    ),
                });
                break;
            }
        }
    }
    Ok(Some(findings))
}

/// The instruction of a SASS line when it is a signed `VIMNMX3` (`VIMNMX3`, `.S16x2`; not
/// `.U32` or `.U16x2`).
fn signed_vimnmx3(line: &str) -> Option<&str> {
    let code = line.split(';').next()?;
    let op = code.split_whitespace().find(|w| w.starts_with("VIMNMX3"))?;
    let unsigned = op.split('.').skip(1).any(|m| m.starts_with('U'));
    (!unsigned).then_some(code.trim())
}

#[cfg(test)]
mod tests {
    use super::{agrees, within, Tol, Value};
    use tilelang::f16;

    #[test]
    fn within_a_tolerance() {
        let t = Tol {
            atol: 1e-3,
            rtol: 1e-6,
        };
        let f = |x: f32| Value::F32(x);
        assert!(within(t, f(1.0), f(1.0009)));
        assert!(!within(t, f(1.0), f(1.0011)));
        // rtol scales with the larger magnitude.
        assert!(within(t, f(1e6), f(1e6 + 0.875)));
        assert!(!within(t, f(1e6), f(1e6 + 1.25)));
        assert!(within(t, f(f32::NAN), f(f32::NAN)));
        assert!(!within(t, f(f32::NAN), f(1.0)));
        assert!(!within(t, f(0.0), f(f32::NAN)));
        assert!(within(t, f(f32::INFINITY), f(f32::INFINITY)));
        assert!(!within(t, f(f32::INFINITY), f(f32::NEG_INFINITY)));
        assert!(!within(t, f(f32::INFINITY), f(1.0)));
        // Across the overflow threshold: f16's largest finite value against infinity.
        let h = |x: f32| Value::F16(f16::from_f32(x));
        let wide = Tol {
            atol: 1.0,
            rtol: 2f64.powi(-10),
        };
        assert!(within(wide, h(f32::INFINITY), h(65504.0)));
        assert!(!within(wide, h(f32::NEG_INFINITY), h(65504.0)));
        assert!(!within(wide, h(f32::INFINITY), h(60000.0)));
        // Integers never are.
        assert!(!within(t, Value::I32(1), Value::I32(1)));
    }

    #[test]
    fn nan_payloads_agree() {
        use tilelang::bf16;
        let (x86, nvidia) = (f32::from_bits(0xffc0_0000), f32::from_bits(0x7fff_ffff));
        assert!(agrees(None, Value::F32(x86), Value::F32(nvidia)));
        let h = |b: u16| Value::Bf16(bf16::from_bits(b));
        assert!(agrees(None, h(0xffff), h(0x7fc0)));
        assert!(!agrees(None, Value::F32(x86), Value::F32(0.0)));
        assert!(!agrees(None, Value::F32(1.0), Value::F32(x86)));
        // Exact outputs do not round.
        assert!(!agrees(None, Value::F32(1.0), Value::F32(1.0000001)));
        assert!(!agrees(None, Value::I32(1), Value::I32(2)));
    }

    #[test]
    fn signed_vimnmx3_is_told_from_unsigned() {
        let line = |op: &str| format!("        /*0090*/   {op} R7, R5, R0, R0, !PT ;   /* 0x0 */");
        assert!(super::signed_vimnmx3(&line("VIMNMX3")).is_some());
        assert!(super::signed_vimnmx3(&line("VIMNMX3.S16x2")).is_some());
        assert!(super::signed_vimnmx3(&line("VIMNMX3.U32")).is_none());
        assert!(super::signed_vimnmx3(&line("VIMNMX3.U16x2")).is_none());
        assert!(super::signed_vimnmx3(&line("VIMNMX.U32")).is_none());
        assert!(super::signed_vimnmx3(&line("VIMNMX")).is_none());
    }
}

/// The index of a compiled folder.
pub fn index(dir: &Path) -> Result<Vec<Entry>, String> {
    let text = std::fs::read_to_string(dir.join("index.tsv"))
        .map_err(|e| format!("{}: {e}", dir.join("index.tsv").display()))?;
    Ok(text.lines().filter_map(Entry::parse).collect())
}

/// The arguments of a case, as the runner builds them: random inputs (`inputs::input`),
/// outputs holding the CPU backend's poison, scalars, in parameter order; drawn from the
/// kernel's seed and the case's sizes, so a case replays (`examples/case.rs`).
pub fn case_args(k: &ast::Kernel, seed: u64, sizes: &[usize; 4]) -> Vec<eval::Arg> {
    let mut rng = Rng::new(seed ^ (sizes[1] * 1000 + sizes[2]) as u64);
    let slots = crate::inputs::slots(&Device::cpu(), k, |d| size(sizes, d), &mut rng);
    crate::inputs::eval_args(&slots)
}

fn upload(dev: &Device, a: &Array) -> AnyTensor {
    fn up<T: Element>(dev: &Device, v: &[T], shape: &[usize]) -> AnyTensor
    where
        AnyTensor: From<Tensor<T>>,
    {
        dev.upload(v, shape).expect("upload").into()
    }
    let shape: Vec<usize> = a.shape.iter().map(|&d| d as usize).collect();
    match &a.data {
        Data::F16(v) => up::<f16>(dev, v, &shape),
        Data::Bf16(v) => up::<bf16>(dev, v, &shape),
        Data::F32(v) => up::<f32>(dev, v, &shape),
        Data::F64(v) => up::<f64>(dev, v, &shape),
        Data::I32(v) => up::<i32>(dev, v, &shape),
        Data::U32(v) => up::<u32>(dev, v, &shape),
        Data::U8(v) => up::<u8>(dev, v, &shape),
    }
}

fn scalar_arg(s: AnyScalar) -> KernelArg {
    match s {
        AnyScalar::F16(v) => KernelArg::F16(v),
        AnyScalar::Bf16(v) => KernelArg::Bf16(v),
        AnyScalar::F32(v) => KernelArg::F32(v),
        AnyScalar::F64(v) => KernelArg::F64(v),
        AnyScalar::I32(v) => KernelArg::I32(v),
        AnyScalar::U32(v) => KernelArg::U32(v),
        AnyScalar::U8(v) => KernelArg::U8(v),
        AnyScalar::Usize(v) => KernelArg::I64(v as i64),
    }
}

/// What [`run`] did.
#[derive(Default, Debug)]
pub struct Tally {
    pub kernels: usize,
    pub launches: usize,
    /// Launches of an object with a TMA entry (the runtime takes it where the tensors qualify).
    pub tma_launches: usize,
    pub elements: usize,
    /// Cases the evaluator refused (a `requires`), skipped on both sides.
    pub skipped: usize,
    pub findings: Vec<Finding>,
}

/// Runs every entry of `entries` (one seed's) on `dev` against the evaluator at every size of
/// [`SIZES`].
fn run_kernel(dev: &Device, dir: &Path, p: &gen::Program, entries: &[&Entry], tally: &mut Tally) {
    let seed = p.seed;
    let k = match crate::compile::to_ir(&p.source()) {
        Ok(k) => k,
        Err(e) => {
            tally.findings.push(Finding {
                seed,
                what: format!("rejected by the frontend: {e}"),
            });
            return;
        }
    };
    tally.kernels += 1;
    for (c, cfg) in k.configs.iter().enumerate() {
        let config = eval::intern(&cfg.name.to_string());
        // This config's entries (one an arch, and an arch's TMA entry where the lowering made
        // one), each as the one object of a launch, named.
        let mut objects: Vec<(String, &'static [Object])> = Vec::new();
        for e in entries.iter().filter(|e| e.config == c) {
            match std::fs::read(dir.join(&e.image)) {
                Ok(b) => {
                    let plain = Object {
                        arch: eval::intern(&e.arch),
                        config,
                        entry: eval::intern(&e.entry),
                        threads: e.threads,
                        shared_bytes: e.shared_bytes,
                        image: images(dir.join(&e.image), b),
                        tma: None,
                    };
                    objects.push((e.arch.clone(), Box::leak(Box::new([plain]))));
                    if let Some(tma) = tma_entry(&k, c, &plain) {
                        let with = Object {
                            tma: Some(tma),
                            ..plain
                        };
                        let name = match tma.persistent {
                            true => "TMA, persistent",
                            false => "TMA",
                        };
                        objects.push((format!("{} ({name})", e.arch), Box::leak(Box::new([with]))));
                    }
                }
                Err(err) => tally.findings.push(Finding {
                    seed,
                    what: format!("{}: {err}", e.image),
                }),
            }
        }
        if objects.is_empty() {
            continue;
        }
        for sizes in SIZES {
            // The evaluator once a case; every arch's entry against it.
            let args = case_args(&p.kernel, seed, &sizes);
            let mut want = args.clone();
            let bound = match eval::run(&k, c, &mut want) {
                Ok(b) => b,
                Err(tilelang::Error::Requirement { .. }) => {
                    tally.skipped += 1;
                    continue;
                }
                Err(err) => {
                    tally.findings.push(Finding {
                        seed,
                        what: format!(
                            "config {config} sizes {sizes:?}: the evaluator fails: {err}"
                        ),
                    });
                    continue;
                }
            };
            for (name, objects) in &objects {
                let what = format!("{name} config {config} sizes {sizes:?}");
                let got = match launch(dev, &k, objects, config, &bound, &args) {
                    Ok(got) => got,
                    Err(err) => {
                        tally.findings.push(Finding {
                            seed,
                            what: format!("{what}: the launch fails: {err}"),
                        });
                        continue;
                    }
                };
                tally.launches += 1;
                tally.tma_launches += usize::from(objects[0].tma.is_some());
                compare(&k, &p.kernel.tols, seed, &what, &args, &want, &got, tally);
            }
        }
    }
}

/// Compares every output of a launch (`got`: `Some` for each mutable tensor, by parameter) with
/// the evaluator's (`want`, from `args`) into `tally`: bit for bit, or as [`agrees`] with the
/// output's tolerance in `tols`; `what` names the launch.
#[allow(clippy::too_many_arguments)]
pub(crate) fn compare(
    k: &ir::Kernel,
    tols: &[(String, Tol)],
    seed: u64,
    what: &str,
    args: &[eval::Arg],
    want: &[eval::Arg],
    got: &[Option<Array>],
    tally: &mut Tally,
) {
    for (i, (w, g)) in want.iter().zip(got).enumerate() {
        let (eval::Arg::Tensor(w), Some(g)) = (w, g) else {
            continue;
        };
        let name = &k.params[i].name;
        let tol = tols.iter().find(|(n, _)| *name == n).map(|(_, t)| *t);
        let (wb, gb) = (w.data.bits(), g.data.bits());
        tally.elements += wb.len();
        let bad: Vec<usize> = (0..wb.len())
            .filter(|&j| wb.get(j) != gb.get(j) && !agrees(tol, g.data.get(j), w.data.get(j)))
            .collect();
        if !bad.is_empty() || wb.len() != gb.len() {
            tally.findings.push(Finding {
                seed,
                what: format!(
                    "{what}: output {name} (shape {:?}) differs in {} of {} elements{}: {}",
                    w.shape,
                    bad.len(),
                    wb.len(),
                    tol.map_or(String::new(), |t| format!(
                        " (beyond atol {:e}, rtol {:e})",
                        t.atol, t.rtol
                    )),
                    explain(k, args, &bad, &w.data, &g.data)
                ),
            });
        }
    }
}

/// Whether `got` agrees with `want` where their bits differ: both are NaN (IEEE 754 leaves a
/// NaN's sign and payload to the hardware: an x86 `sqrt(-1.0)` is `0xffc00000`, an NVIDIA one
/// `0x7fffffff`, and a NaN operand's payload propagates on one and not the other), or both are
/// floats `within` the output's tolerance. A missed write still shows wherever the expected
/// value is not a NaN (the poison of a float output is a NaN).
pub fn agrees(tol: Option<Tol>, got: Value, want: Value) -> bool {
    let nan = |v: Value| match v {
        Value::F16(x) => x.is_nan(),
        Value::Bf16(x) => x.is_nan(),
        Value::F32(x) => x.is_nan(),
        Value::F64(x) => x.is_nan(),
        _ => false,
    };
    (nan(got) && nan(want)) || tol.is_some_and(|t| within(t, got, want))
}

/// Whether float `got` is within `tol` of `want`: both NaN, or `|got - want| <= atol +
/// rtol·max(|got|, |want|)`, or an infinity on one side where the other is of its sign and
/// that close to the dtype's largest finite value (a rounding across the overflow threshold).
pub fn within(tol: Tol, got: Value, want: Value) -> bool {
    use ast::Ty;
    let f = |v: Value| match v {
        Value::F16(x) => Some((x.to_f64(), Ty::F16)),
        Value::Bf16(x) => Some((x.to_f64(), Ty::Bf16)),
        Value::F32(x) => Some((x as f64, Ty::F32)),
        Value::F64(x) => Some((x, Ty::F64)),
        _ => None,
    };
    let (Some((g, ty)), Some((w, _))) = (f(got), f(want)) else {
        return false;
    };
    if g.is_nan() || w.is_nan() {
        return g.is_nan() && w.is_nan();
    }
    let close = |a: f64, b: f64| (a - b).abs() <= tol.atol + tol.rtol * a.abs().max(b.abs());
    match (g.is_infinite(), w.is_infinite()) {
        (false, false) => close(g, w),
        (true, true) => g == w,
        (g_inf, _) => {
            let (inf, fin) = if g_inf { (g, w) } else { (w, g) };
            let largest = gen::approx::max_finite(ty).copysign(fin);
            inf.signum() == fin.signum() && close(fin, largest)
        }
    }
}

/// The first differing elements: each one's position, the evaluator's and the GPU's values,
/// and the inputs' values at the same position where a tensor has as many elements.
fn explain(k: &ir::Kernel, args: &[eval::Arg], bad: &[usize], want: &Data, got: &Data) -> String {
    let mut s = String::new();
    for &j in bad.iter().take(3) {
        let _ = write!(
            s,
            "[{j}] evaluator {:?}, GPU {:?}; before:",
            want.get(j),
            got.get(j)
        );
        for (p, a) in k.params.iter().zip(args) {
            match a {
                eval::Arg::Tensor(t) if t.data.len() == want.len() => {
                    let _ = write!(s, " {}={:?}", p.name, t.data.get(j));
                }
                eval::Arg::Scalar(v) => {
                    let _ = write!(s, " {}={v:?}", p.name);
                }
                _ => {}
            }
        }
        s.push_str("; ");
    }
    s
}

/// The TMA entry of `plain`'s image for config `c` of `k`, as the macro's launcher describes
/// it (`launcher::objects`), when the lowering made one for its arch: the runtime runs it where
/// every mapped tensor qualifies, else the plain entry.
fn tma_entry(k: &ir::Kernel, c: usize, plain: &Object) -> Option<&'static Tma> {
    use tilelang::__private::tma::{TmaDim, TmaElem, TmaMap};
    let t = lower::launch(k, c, &Target::by_arch(plain.arch)?)
        .ok()?
        .tma?;
    let vals = &k.configs[c].values;
    let maps: Vec<TmaMap> = t
        .maps
        .iter()
        .map(|m| {
            let ir::ParamKind::Tensor { dims, dtype, .. } = &k.params[m.param].kind else {
                unreachable!("TMA maps describe tensors")
            };
            let dims: Vec<TmaDim> = dims
                .iter()
                .map(|d| match d {
                    ir::DimRef::Sym(i) => TmaDim::Arg(k.params.len() + i),
                    ir::DimRef::Const(i) => TmaDim::Const(vals[*i]),
                })
                .collect();
            TmaMap {
                arg: m.param,
                dims: Box::leak(dims.into_boxed_slice()),
                elem: match dtype {
                    ir::Dtype::F16 => TmaElem::F16,
                    ir::Dtype::Bf16 => TmaElem::Bf16,
                    _ => TmaElem::U8,
                },
                boxes: Box::leak(m.boxes.clone().into_boxed_slice()),
                swizzle: m.swizzle,
            }
        })
        .collect();
    Some(Box::leak(Box::new(Tma {
        object: Object {
            entry: eval::intern(&t.entry),
            threads: t.threads,
            shared_bytes: t.shared_bytes as u32,
            ..*plain
        },
        maps: Box::leak(maps.into_boxed_slice()),
        persistent: t.persistent,
    })))
}

/// One image per file, leaked once (the runtime caches modules by image).
fn images(path: PathBuf, bytes: Vec<u8>) -> &'static [u8] {
    use std::collections::HashMap;
    use std::sync::Mutex;
    static LOADED: Mutex<Option<HashMap<PathBuf, &'static [u8]>>> = Mutex::new(None);
    let mut l = LOADED.lock().unwrap();
    let l = l.get_or_insert_with(HashMap::new);
    l.entry(path)
        .or_insert_with(|| Box::leak(bytes.into_boxed_slice()))
}

/// Uploads `args`, launches on the grid and symbols the evaluator bound them to, and downloads
/// every mutable tensor (`None` for the others).
fn launch(
    dev: &Device,
    k: &ir::Kernel,
    objects: &'static [Object],
    config: &str,
    bound: &eval::Bound,
    args: &[eval::Arg],
) -> Result<Vec<Option<Array>>, tilelang::Error> {
    let kernel = eval::intern(&k.name.to_string());
    let mut tensors: Vec<Option<AnyTensor>> = Vec::new();
    let mut kargs = Vec::new();
    for a in args {
        match a {
            eval::Arg::Tensor(t) => {
                let g = upload(dev, t);
                kargs.push(KernelArg::Ptr(any_ptr(&g)));
                tensors.push(Some(g));
            }
            eval::Arg::Scalar(s) => {
                kargs.push(scalar_arg(*s));
                tensors.push(None);
            }
        }
    }
    kargs.extend(bound.syms.iter().map(|&s| KernelArg::I64(s)));
    // SAFETY: the arguments follow the entry's parameter list (tensors and scalars in order,
    // then the shape symbols), every pointer is a live allocation of `dev` of the shape the
    // symbols say, and the objects were compiled from this kernel's lowering.
    unsafe { dev.launch_gpu(kernel, config, objects, bound.grid, &kargs)? };
    dev.synchronize()?;
    Ok(k.params
        .iter()
        .zip(tensors)
        .map(|(p, t)| match (&p.kind, t) {
            (ir::ParamKind::Tensor { mutable: true, .. }, Some(t)) => {
                Some(crate::inputs::array(&t))
            }
            _ => None,
        })
        .collect())
}

fn any_ptr(t: &AnyTensor) -> u64 {
    match t {
        AnyTensor::F16(t) => t.device_ptr(),
        AnyTensor::Bf16(t) => t.device_ptr(),
        AnyTensor::F32(t) => t.device_ptr(),
        AnyTensor::F64(t) => t.device_ptr(),
        AnyTensor::I32(t) => t.device_ptr(),
        AnyTensor::U32(t) => t.device_ptr(),
        AnyTensor::U8(t) => t.device_ptr(),
    }
}

/// Runs every kernel of `dir`'s index whose seed is in `seeds` on the first GPU.
pub fn run(dir: &Path, seeds: &[u64]) -> Result<Tally, String> {
    let programs: Vec<gen::Program> = seeds.iter().map(|&s| gen::generate(s)).collect();
    run_programs(dir, &programs)
}

/// [`run`] for programs (a shrinker's candidates), each compiled into `dir`'s index under
/// its seed.
pub fn run_programs(dir: &Path, programs: &[gen::Program]) -> Result<Tally, String> {
    let dev = Device::cuda(0).map_err(|e| format!("no GPU: {e}"))?;
    let idx = index(dir)?;
    let mut tally = Tally::default();
    for p in programs {
        let entries: Vec<&Entry> = idx.iter().filter(|e| e.seed == p.seed).collect();
        if entries.is_empty() {
            continue;
        }
        run_kernel(&dev, dir, p, &entries, &mut tally);
    }
    Ok(tally)
}

/// A tally as lines of text.
pub fn report(t: &Tally) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} kernels, {} launches ({} of them of an object with a TMA entry), {} output elements compared, {} cases skipped by requires, {} findings",
        t.kernels,
        t.launches,
        t.tma_launches,
        t.elements,
        t.skipped,
        t.findings.len()
    );
    for f in &t.findings {
        let _ = writeln!(s, "FINDING seed {:016x}: {}", f.seed, f.what);
    }
    s
}
