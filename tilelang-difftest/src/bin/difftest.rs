//! `difftest`: generated kernels, the IR evaluator against a GPU (issue 38; `run.sh difftest`).
//!
//! ```text
//! difftest gpu     --dir D --offset O --n N [--archs sm_90,sm_90a] [--jobs 16] [--batch 24] [--chunk 100] [--deadline 540]
//! difftest compile --dir D --offset O --n N [--archs ..] [--jobs ..] [--batch ..]
//! difftest run     --dir D --offset O --n N
//! ```
//! Kernel `i` is `gen::seed_of(i)` for `i` in `offset..offset + n`. `gpu` compiles and runs
//! the kernels `chunk` at a time, each chunk in a child process (`run`): a fault poisons a
//! CUDA context, so it costs one chunk, whose kernels are then rerun one per process to name
//! the culprit.
//! It stops starting chunks at the deadline (seconds) and says where to resume. Exit status 1
//! when anything was found.

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;
use tilelang_difftest::{device, gen};

struct Opts {
    dir: PathBuf,
    offset: u64,
    n: u64,
    archs: Vec<String>,
    jobs: usize,
    batch: usize,
    chunk: u64,
    deadline: f64,
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
        deadline: 540.0,
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
            "--deadline" => o.deadline = num()? as f64,
            _ => return Err(format!("unknown option {a}")),
        }
    }
    Ok(o)
}

fn seeds(offset: u64, n: u64) -> Vec<u64> {
    (offset..offset + n).map(gen::seed_of).collect()
}

/// Runs `run` for `offset..offset + n` in a child process: its report, and whether it exited
/// normally.
fn child(o: &Opts, offset: u64, n: u64) -> (String, bool) {
    let exe = std::env::current_exe().expect("the executable's path");
    let out = Command::new(exe)
        .args(["run", "--dir"])
        .arg(&o.dir)
        .args(["--offset", &offset.to_string(), "--n", &n.to_string()])
        .output()
        .expect("spawn a child");
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
            let f = device::compile(&o.dir, &seeds(o.offset, o.n), &archs, o.batch, o.jobs)
                .unwrap_or_else(|e| panic!("{e}"));
            for x in &f {
                println!("FINDING seed {:016x}: {}", x.seed, x.what);
            }
            println!(
                "compiled {} kernels for {archs:?} in {:.1} s",
                o.n,
                t.elapsed().as_secs_f64()
            );
            !f.is_empty()
        }
        "run" => {
            let tally = device::run(&o.dir, &seeds(o.offset, o.n)).unwrap_or_else(|e| {
                eprintln!("difftest: {e}");
                std::process::exit(3)
            });
            print!("{}", device::report(&tally));
            !tally.findings.is_empty()
        }
        "gpu" => {
            let mut found = false;
            let mut at = o.offset;
            while at < o.offset + o.n {
                if t.elapsed().as_secs_f64() > o.deadline {
                    println!("difftest: deadline reached; resume with --offset {at}");
                    found = true;
                    break;
                }
                let n = o.chunk.min(o.offset + o.n - at);
                // Compiled a chunk at a time, so the deadline bounds the compiles too (an H100
                // compiles ~9 GEMM-bearing kernels a second on 16 cores).
                let c0 = Instant::now();
                let f = device::compile(&o.dir, &seeds(at, n), &archs, o.batch, o.jobs)
                    .unwrap_or_else(|e| panic!("{e}"));
                println!(
                    "[{at}..{}] compiled for {archs:?} in {:.1} s ({} findings)",
                    at + n,
                    c0.elapsed().as_secs_f64(),
                    f.len()
                );
                found |= !f.is_empty();
                for x in &f {
                    println!("FINDING seed {:016x}: {}", x.seed, x.what);
                }
                let (text, ok) = child(&o, at, n);
                print!("[{at}..{}] {text}", at + n);
                found |= text.contains("FINDING");
                if !ok {
                    found = true;
                    println!(
                        "difftest: the child for {at}..{} died; one kernel a process:",
                        at + n
                    );
                    for i in at..at + n {
                        let (text, ok) = child(&o, i, 1);
                        if !ok || text.contains("FINDING") {
                            print!("  kernel {i} (seed {:016x}): {text}", gen::seed_of(i));
                        }
                    }
                }
                at += n;
            }
            println!(
                "difftest: kernels {}..{at} done in {:.1} s",
                o.offset,
                t.elapsed().as_secs_f64()
            );
            found
        }
        other => {
            eprintln!("difftest: unknown command {other}");
            std::process::exit(2)
        }
    };
    std::process::exit(found as i32)
}
