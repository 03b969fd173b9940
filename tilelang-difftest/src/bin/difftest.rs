//! `difftest`: generated kernels, the IR evaluator against a GPU (issue 38; `run.sh difftest`).
//!
//! ```text
//! difftest gpu     --dir D --offset O --n N [--archs sm_90,sm_90a] [--jobs 16] [--batch 24] [--chunk 100] [--procs 4] [--deadline 540]
//! difftest compile --dir D --offset O --n N [--archs ..] [--jobs ..] [--batch ..]
//! difftest run     --dir D --offset O --n N
//! difftest emulate --dir D --offset O --n N --archs gfx942,gfx1100 [--chunk 100] [--deadline ..]
//! difftest shrink  --dir D --seed HEX --archs A [--seconds 120]
//! ```
//! Kernel `i` is `gen::seed_of(i)` for `i` in `offset..offset + n`. `gpu` compiles and runs
//! the kernels `chunk` at a time (each chunk in its own folder under `dir`), compiling the next
//! chunk while the current one runs in `procs` child processes (`run`), which share the GPU and
//! evaluate in parallel: a fault poisons a CUDA context, so it costs one child, whose kernels
//! are then rerun one per process to name the culprit. Each sm_90a object with a TMA entry runs
//! twice, plain and through the runtime's TMA selection (persistent entries on 2 blocks, so
//! every block walks several tiles). Every compiled chunk's SASS is scanned
//! for known device-compiler miscompilations (`device::scan_sass`).
//! `DIFF_GREP=text` keeps only the kernels whose source contains `text`.
//! A chunk folder that already holds the chunk compiled for the same archs (`compile.log`,
//! which `compile` and `gpu` write last) is run without compiling it again.
//! `emulate` runs the kernels under the host emulation of each arch's device code instead
//! (`tilelang_difftest::emulate`, clang++-19 on this machine), a chunk at a time.
//! It stops starting chunks at the deadline (seconds) and says where to resume. Exit status 1
//! when anything was found or the deadline stopped it before the end. `shrink` minimises one kernel's failure on one arch
//! (`tilelang_difftest::shrink`; the oracle: the host emulation for an AMD arch, nvcc and the
//! GPU for an NVIDIA one) and prints the kernel before and after; `gpu` and `emulate` run it
//! on the first kernels of a chunk that fail (`--seconds` each, 0: never).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Instant;
use tilelang_difftest::device::Finding;
use tilelang_difftest::gen::Program;
use tilelang_difftest::{device, emulate, gen};

#[derive(Clone)]
struct Opts {
    dir: PathBuf,
    offset: u64,
    n: u64,
    archs: Vec<String>,
    jobs: usize,
    batch: usize,
    chunk: u64,
    procs: u64,
    deadline: f64,
    seed: u64,
    seconds: u64,
}

fn opts(args: &[String]) -> Result<Opts, String> {
    let mut o = Opts {
        dir: PathBuf::from("difftest-out"),
        offset: 0,
        n: 100,
        archs: vec!["sm_90".into(), "sm_90a".into()],
        jobs: std::thread::available_parallelism().map_or(4, |n| n.get()),
        batch: 24,
        chunk: 100,
        procs: 4,
        deadline: 540.0,
        seed: 0,
        seconds: 60,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let v = it.next().ok_or_else(|| format!("{a} needs a value"))?;
        let num = || v.parse::<u64>().map_err(|e| format!("{a} {v}: {e}"));
        match a.as_str() {
            "--dir" => o.dir = v.into(),
            "--offset" => o.offset = num()?,
            "--n" => o.n = num()?,
            "--archs" => o.archs = v.split(',').map(String::from).collect(),
            "--jobs" => o.jobs = num()? as usize,
            "--batch" => o.batch = num()? as usize,
            "--chunk" => o.chunk = num()?.max(1),
            "--procs" => o.procs = num()?.max(1),
            "--deadline" => o.deadline = num()? as f64,
            "--seed" => {
                let hex = v.trim_start_matches("0x");
                o.seed = u64::from_str_radix(hex, 16).map_err(|e| format!("--seed {v}: {e}"))?
            }
            "--seconds" => o.seconds = num()?,
            _ => return Err(format!("unknown option {a}")),
        }
    }
    Ok(o)
}

/// The seeds of kernels `offset..offset + n`; with `DIFF_GREP=text` set (children inherit it),
/// only those whose source contains `text`, to aim a run at one construct (`DIFF_GREP=.t()`).
fn seeds(offset: u64, n: u64) -> Vec<u64> {
    let grep = std::env::var("DIFF_GREP").ok();
    (offset..offset + n)
        .map(gen::seed_of)
        .filter(|&s| {
            grep.as_ref()
                .is_none_or(|g| gen::generate(s).source().contains(g.as_str()))
        })
        .collect()
}

/// Starts `run` for `offset..offset + n` of the kernels compiled in `dir` in a child process,
/// its persistent TMA entries on 2 blocks (each then walks several tiles at every size) unless
/// `TILELANG_PERSISTENT_BLOCKS` says otherwise.
fn spawn(dir: &Path, offset: u64, n: u64) -> Child {
    let exe = std::env::current_exe().expect("the executable's path");
    let blocks = std::env::var("TILELANG_PERSISTENT_BLOCKS").unwrap_or_else(|_| "2".into());
    Command::new(exe)
        .env("TILELANG_PERSISTENT_BLOCKS", blocks)
        .args(["run", "--dir"])
        .arg(dir)
        .args(["--offset", &offset.to_string(), "--n", &n.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn a child")
}

/// A child's report, and whether it exited normally (a child without a GPU ends the call).
fn finish(c: Child) -> (String, bool) {
    let out = c.wait_with_output().expect("wait for a child");
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(3) {
        eprint!("{text}");
        std::process::exit(3);
    }
    // 0: nothing found; 1: findings reported; anything else: the process died.
    (text, matches!(out.status.code(), Some(0) | Some(1)))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(cmd) = args.first() else {
        eprintln!("usage: difftest gpu|compile|run --dir D --offset O --n N [..]");
        std::process::exit(2);
    };
    let o = opts(&args[1..]).unwrap_or_else(|e| {
        eprintln!("difftest: {e}");
        std::process::exit(2)
    });
    let archs: Vec<&str> = o.archs.iter().map(String::as_str).collect();
    let t = Instant::now();
    let found = match cmd.as_str() {
        "compile" => {
            let lines = compiled(&o, &archs, &o.dir, o.offset, o.n);
            for l in &lines {
                println!("{l}");
            }
            lines.len() > 1
        }
        "run" => {
            let tally = device::run(&o.dir, &seeds(o.offset, o.n)).unwrap_or_else(|e| {
                eprintln!("difftest: {e}");
                std::process::exit(3)
            });
            print!("{}", device::report(&tally));
            !tally.findings.is_empty()
        }
        "gpu" => gpu(&o, &archs, t),
        "emulate" => emulate(&o, &archs, t),
        "shrink" => shrink(&o, archs.first().copied().unwrap_or("sm_90")),
        other => {
            eprintln!("difftest: unknown command {other}");
            std::process::exit(2)
        }
    };
    std::process::exit(found as i32)
}

/// Compiles kernels `at..at + n` into `dir` and scans their SASS: a line saying so, then one
/// line a finding.
fn compile_chunk(o: &Opts, archs: &[&str], dir: &Path, at: u64, n: u64) -> Vec<String> {
    let t = Instant::now();
    let mut f = device::compile(dir, &seeds(at, n), archs, o.batch, o.jobs)
        .unwrap_or_else(|e| panic!("{e}"));
    let scan = device::scan_sass(dir).unwrap_or_else(|e| panic!("{e}"));
    let scanned = if scan.is_some() {
        "SASS scanned"
    } else {
        "no cuobjdump: SASS not scanned"
    };
    f.extend(scan.unwrap_or_default());
    let mut lines = vec![format!(
        "[{at}..{}] compiled for {archs:?} in {:.1} s ({} findings; {scanned})",
        at + n,
        t.elapsed().as_secs_f64(),
        f.len()
    )];
    lines.extend(
        f.iter()
            .map(|x| format!("FINDING seed {:016x}: {}", x.seed, x.what)),
    );
    lines
}

/// `compile_chunk`, unless `dir` already holds this chunk compiled for `archs` (its
/// `compile.log`, written last, names them): chunks compiled beforehand on another machine
/// (`difftest compile --dir D/c<at>`) are carried and run as they are.
fn compiled(o: &Opts, archs: &[&str], dir: &Path, at: u64, n: u64) -> Vec<String> {
    let log = dir.join("compile.log");
    let first = format!("[{at}..{}] compiled for {archs:?} ", at + n);
    if let Ok(text) = std::fs::read_to_string(&log) {
        if text.starts_with(&first) {
            let mut lines: Vec<String> = text.lines().map(String::from).collect();
            lines[0].push_str(" (compiled beforehand)");
            return lines;
        }
    }
    let lines = compile_chunk(o, archs, dir, at, n);
    std::fs::write(&log, lines.join("\n") + "\n").unwrap_or_else(|e| panic!("{e}"));
    lines
}

/// `difftest gpu`: chunk by chunk, the next one compiling while this one runs.
fn gpu(o: &Opts, archs: &[&str], t: Instant) -> bool {
    let end = o.offset + o.n;
    let chunks: Vec<(u64, u64)> = (o.offset..end)
        .step_by(o.chunk as usize)
        .map(|at| (at, o.chunk.min(end - at)))
        .collect();
    let mut found = false;
    let mut done = o.offset;
    std::thread::scope(|s| {
        let chunk = |at: u64, n: u64| {
            let dir = o.dir.join(format!("c{at}"));
            let lines = compiled(o, archs, &dir, at, n);
            (dir, lines)
        };
        let mut next = chunks.first().map(|&(at, n)| s.spawn(move || chunk(at, n)));
        for (i, &(at, n)) in chunks.iter().enumerate() {
            let (dir, lines) = next.take().expect("a compile under way").join().unwrap();
            if t.elapsed().as_secs_f64() > o.deadline {
                println!("difftest: deadline reached; resume with --offset {at}");
                found = true;
                break;
            }
            next = chunks
                .get(i + 1)
                .map(|&(at, n)| s.spawn(move || chunk(at, n)));
            for l in &lines {
                println!("{l}");
            }
            found |= lines.len() > 1;
            // `procs` children on sub-ranges, all at once.
            let per = n.div_ceil(o.procs);
            let parts: Vec<(u64, u64)> = (at..at + n)
                .step_by(per as usize)
                .map(|a| (a, per.min(at + n - a)))
                .collect();
            let ran = Instant::now();
            let children: Vec<Child> = parts.iter().map(|&(a, m)| spawn(&dir, a, m)).collect();
            let mut chunk_text = lines.join("\n");
            for (&(a, m), c) in parts.iter().zip(children) {
                let (text, ok) = finish(c);
                print!("[{a}..{}] {text}", a + m);
                chunk_text.push_str(&text);
                found |= text.contains("FINDING");
                if !ok {
                    found = true;
                    println!(
                        "difftest: the child for {a}..{} died; one kernel a process:",
                        a + m
                    );
                    for i in a..a + m {
                        let (text, ok) = finish(spawn(&dir, i, 1));
                        if !ok || text.contains("FINDING") {
                            print!("  kernel {i} (seed {:016x}): {text}", gen::seed_of(i));
                            chunk_text
                                .push_str(&format!("\nFINDING seed {:016x}: ", gen::seed_of(i)));
                        }
                    }
                }
            }
            println!(
                "[{at}..{}] ran in {:.1} s",
                at + n,
                ran.elapsed().as_secs_f64()
            );
            if o.seconds > 0 {
                for seed in failing(found_seeds(&chunk_text)) {
                    let text = shrink_child(o, seed);
                    print!("{text}");
                }
            }
            done = at + n;
        }
    });
    println!(
        "difftest: kernels {}..{done} done in {:.1} s",
        o.offset,
        t.elapsed().as_secs_f64()
    );
    found
}

/// `difftest emulate`: chunk by chunk, each arch's host emulation against the evaluator.
fn emulate(o: &Opts, archs: &[&str], t: Instant) -> bool {
    let mut found = false;
    let mut at = o.offset;
    while at < o.offset + o.n {
        if t.elapsed().as_secs_f64() > o.deadline {
            println!("difftest: deadline reached; resume with --offset {at}");
            return true;
        }
        let n = o.chunk.min(o.offset + o.n - at);
        for arch in archs {
            let c = Instant::now();
            let dir = o.dir.join(arch);
            let tally = emulate::run(&dir, &seeds(at, n), arch).unwrap_or_else(|e| panic!("{e}"));
            found |= !tally.findings.is_empty();
            print!(
                "[{at}..{}] {arch} emulated in {:.1} s: {}",
                at + n,
                c.elapsed().as_secs_f64(),
                device::report(&tally)
            );
            for seed in failing(tally.findings.iter().map(|f| f.seed)) {
                if o.seconds > 0 {
                    shrink(&Opts { seed, ..o.clone() }, arch);
                }
            }
        }
        at += n;
    }
    println!(
        "difftest: kernels {}..{at} emulated in {:.1} s",
        o.offset,
        t.elapsed().as_secs_f64()
    );
    found
}

/// The distinct seeds of `seeds`, at most three (the rest are likely the same fault).
fn failing(seeds: impl Iterator<Item = u64>) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::new();
    for s in seeds {
        if !out.contains(&s) && out.len() < 3 {
            out.push(s);
        }
    }
    out
}

/// The seeds of the `FINDING seed <hex>:` lines of a report.
fn found_seeds(text: &str) -> impl Iterator<Item = u64> + '_ {
    text.match_indices("FINDING seed ").filter_map(|(i, m)| {
        let hex = text[i + m.len()..].split(':').next()?;
        u64::from_str_radix(hex.trim(), 16).ok()
    })
}

/// `difftest shrink` for `seed` on the first arch, in a child process (a fault poisons the
/// GPU context of the process it happens in), its output.
fn shrink_child(o: &Opts, seed: u64) -> String {
    let exe = std::env::current_exe().expect("the executable's path");
    let out = Command::new(exe)
        .args(["shrink", "--dir"])
        .arg(o.dir.join(format!("shrink-{seed:016x}")))
        .args(["--seed", &format!("{seed:016x}"), "--archs", &o.archs[0]])
        .args(["--seconds", &o.seconds.to_string()])
        .output()
        .expect("spawn a child");
    String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr)
}

/// What kernel `p` does wrong on `arch`: the host emulation's findings for an AMD arch; for
/// an NVIDIA one, nvcc's (and the SASS scan's) or else the GPU's, in `dir/<n>` (a fresh
/// folder each time: the runtime keeps loaded images by path).
fn findings(dir: &Path, n: usize, p: &Program, arch: &str) -> Vec<Finding> {
    let dir = dir.join(n.to_string());
    let run = || -> Result<Vec<Finding>, String> {
        if arch.starts_with("gfx") {
            return Ok(emulate::run_programs(&dir, std::slice::from_ref(p), arch)?.findings);
        }
        let mut f = device::compile_sources(&dir, &[(p.seed, p.source())], &[arch], 1, 1)?;
        f.extend(device::scan_sass(&dir)?.unwrap_or_default());
        if f.is_empty() {
            f = device::run_programs(&dir, std::slice::from_ref(p))?.findings;
        }
        Ok(f)
    };
    run().unwrap_or_else(|e| {
        vec![Finding {
            seed: p.seed,
            what: format!("the oracle fails: {e}"),
        }]
    })
}

/// `difftest shrink`: kernel `o.seed`'s first failure on `arch`, minimised within
/// `o.seconds`; prints the kernel before and after.
fn shrink(o: &Opts, arch: &str) -> bool {
    use tilelang_difftest::shrink::{kind, shrink};
    let p = gen::generate(o.seed);
    let mut n = 0;
    let first = findings(&o.dir, n, &p, arch);
    let Some(f) = first.first() else {
        println!("shrink: seed {:016x} does not fail on {arch}", o.seed);
        return false;
    };
    let want = kind(&f.what);
    println!(
        "shrink: seed {:016x} on {arch}: {} ({want})",
        o.seed, f.what
    );
    let deadline = Instant::now() + std::time::Duration::from_secs(o.seconds);
    let mut fails = |c: &Program| {
        n += 1;
        let f = findings(&o.dir, n, c, arch);
        let _ = std::fs::remove_dir_all(o.dir.join(n.to_string()));
        f.iter().any(|f| kind(&f.what) == want)
    };
    let s = shrink(&p, want == "rejected by the frontend", deadline, &mut fails);
    println!(
        "shrink: {} candidates tried, {} kept{}; minimised kernel (seed {:016x}, {arch}):\n{}",
        s.tried,
        s.kept,
        if s.done {
            ""
        } else {
            ", stopped at the deadline"
        },
        o.seed,
        s.program.source()
    );
    true
}
