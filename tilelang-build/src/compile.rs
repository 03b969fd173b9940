//! Runs the device compiler over every (kernel, config, target), in parallel, with a cache.

use crate::find::Found;
use crate::toolchain::Tool;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use tilelang_codegen::emit_hip;
use tilelang_codegen::target::Target;

pub struct Job<'a> {
    pub kernel: &'a Found,
    pub config: usize,
    pub target: Target,
    pub tool: Tool,
}

/// A job with its source emitted: plain data, safe to hand to worker threads.
struct Prepared {
    kernel: String,
    config: String,
    target: Target,
    tool: Tool,
    file: std::path::PathBuf,
    hip: emit_hip::HipKernel,
}

/// What the device compiler reported for one object.
#[derive(Debug, Default, Clone)]
pub struct Resources {
    pub registers: u32,
    pub spill_bytes: u32,
    pub static_shared: u32,
}

/// The file name of an object: `<entry>.<arch>.bin` (the macro derives the same name).
pub fn object_name(entry: &str, arch: &str) -> String {
    format!("{entry}.{arch}.bin")
}

fn fnv(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Compiles every job into `dir`; writes `dir/manifest.tsv`.
pub fn run_all(jobs: &[Job<'_>], dir: &Path, manifest_dir: &Path) -> Result<(), String> {
    let include = dir.join("include");
    std::fs::create_dir_all(&include)
        .map_err(|e| format!("error: cannot create {}: {e}", include.display()))?;
    write_if_changed(&include.join("tl.h"), emit_hip::HEADER)?;
    // Emitting is cheap and works on the IR (which holds spans, not thread-safe): do it here.
    let mut prepared = Vec::new();
    let mut errors = Vec::new();
    for job in jobs {
        let k = &job.kernel.ir;
        match emit_hip::emit(
            k,
            job.config,
            &job.target,
            Some(&job.kernel.file.display().to_string()),
        ) {
            Ok(hip) => prepared.push(Prepared {
                kernel: k.name.to_string(),
                config: k.configs[job.config].name.to_string(),
                target: job.target,
                tool: job.tool.clone(),
                file: job.kernel.file.clone(),
                hip,
            }),
            Err(e) => errors.push(format!(
                "error: {e}
  --> {}",
                rel(&job.kernel.file, manifest_dir)
            )),
        }
    }
    let jobs = prepared;
    let identities: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Result<(String, Resources), String>)>> = Mutex::new(Vec::new());
    let workers = std::env::var("NUM_JOBS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
        .max(1);
    std::thread::scope(|s| {
        for _ in 0..workers.min(jobs.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(job) = jobs.get(i) else { break };
                let id = {
                    let key = format!("{:?}", job.tool);
                    let mut ids = identities.lock().unwrap();
                    match ids.iter().find(|(k, _)| *k == key) {
                        Some((_, v)) => v.clone(),
                        None => {
                            let v = job.tool.identity();
                            ids.push((key, v.clone()));
                            v
                        }
                    }
                };
                let r = compile_one(job, dir, &include, &id, manifest_dir);
                results.lock().unwrap().push((i, r));
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|(i, _)| *i);
    let mut manifest = String::from(
        "kernel\tconfig\tarch\tentry\tthreads\tshared_bytes\tregisters\tspill_bytes\n",
    );
    for (i, r) in results {
        let job = &jobs[i];
        match r {
            Ok((line, res)) => {
                if res.spill_bytes > 0 {
                    println!(
                        "cargo:warning=tilelang: kernel `{}` config `{}` ({}) spills {} bytes to local memory",
                        job.kernel, job.config, job.target.arch, res.spill_bytes
                    );
                }
                manifest.push_str(&line);
            }
            Err(e) => errors.push(e),
        }
    }
    write_if_changed(&dir.join("manifest.tsv"), &manifest)?;
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("\n"))
    }
}

fn write_if_changed(path: &Path, text: &str) -> Result<(), String> {
    if std::fs::read_to_string(path).ok().as_deref() == Some(text) {
        return Ok(());
    }
    std::fs::write(path, text).map_err(|e| format!("error: cannot write {}: {e}", path.display()))
}

fn compile_one(
    job: &Prepared,
    dir: &Path,
    include: &Path,
    tool_id: &str,
    manifest_dir: &Path,
) -> Result<(String, Resources), String> {
    let hip = &job.hip;
    let arch = job.target.arch;
    let src = dir.join(format!("{}.{arch}.cu", hip.entry));
    let obj = dir.join(object_name(&hip.entry, arch));
    let log = dir.join(format!("{}.{arch}.log", hip.entry));
    let stamp = dir.join(format!("{}.{arch}.hash", hip.entry));
    let hash = format!(
        "{:016x}",
        fnv(format!(
            "{}\0{}\0{}\0{:?}",
            hip.source,
            emit_hip::HEADER,
            tool_id,
            job.target
        )
        .as_bytes())
    );
    write_if_changed(&src, &hip.source)?;
    let cached =
        obj.is_file() && std::fs::read_to_string(&stamp).ok().as_deref() == Some(hash.as_str());
    if !cached {
        // A cache shared by every profile and build of the workspace, keyed by content.
        let shared =
            cache_dir(dir).map(|c| (c.join(format!("{hash}.bin")), c.join(format!("{hash}.log"))));
        let hit = shared.as_ref().filter(|(b, l)| b.is_file() && l.is_file());
        if let Some((b, l)) = hit {
            std::fs::copy(b, &obj)
                .map_err(|e| format!("error: cannot copy {}: {e}", b.display()))?;
            std::fs::copy(l, &log)
                .map_err(|e| format!("error: cannot copy {}: {e}", l.display()))?;
        } else {
            let out = job
                .tool
                .command(&job.target, &src, include, &obj)
                .output()
                .map_err(|e| format!("error: cannot run the device compiler: {e}"))?;
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            if !out.status.success() {
                return Err(render_failure(job, &text, &src, manifest_dir));
            }
            write_if_changed(&log, &text)?;
            if let Some((b, l)) = &shared {
                // Best effort: a failed cache write only costs a recompile later.
                let _ = std::fs::create_dir_all(b.parent().unwrap())
                    .and_then(|_| std::fs::copy(&obj, b))
                    .and_then(|_| std::fs::write(l, &text));
            }
        }
        write_if_changed(&stamp, &hash)?;
    }
    let res = parse_resources(&std::fs::read_to_string(&log).unwrap_or_default());
    let mut line = String::new();
    let _ = writeln!(
        line,
        "{}\t{}\t{arch}\t{}\t{}\t{}\t{}\t{}",
        job.kernel,
        job.config,
        hip.entry,
        hip.threads,
        hip.shared_bytes + res.static_shared as usize,
        res.registers,
        res.spill_bytes
    );
    Ok((line, res))
}

/// Reads `ptxas -v` output.
pub fn parse_resources(log: &str) -> Resources {
    let mut r = Resources::default();
    for line in log.lines() {
        if let Some(i) = line.find("Used ") {
            let rest = &line[i + 5..];
            if let Some(n) = rest.split_whitespace().next().and_then(|n| n.parse().ok()) {
                r.registers = n;
            }
            if let Some(j) = rest.find("bytes smem") {
                let before = rest[..j].trim_end();
                if let Some(n) = before
                    .rsplit([' ', ','])
                    .next()
                    .and_then(|n| n.parse().ok())
                {
                    r.static_shared = n;
                }
            }
        }
        if let Some(i) = line.find("bytes spill stores") {
            let before = line[..i].trim_end();
            if let Some(n) = before
                .rsplit([' ', ','])
                .next()
                .and_then(|n| n.parse::<u32>().ok())
            {
                r.spill_bytes = r.spill_bytes.max(n);
            }
        }
    }
    r
}

/// `TILELANG_CACHE_DIR`, else `<target dir>/tilelang-cache` when `dir` is inside a cargo
/// `OUT_DIR` (`<target>/<profile>/build/<pkg>/out/tilelang`).
fn cache_dir(dir: &Path) -> Option<std::path::PathBuf> {
    if let Ok(d) = std::env::var("TILELANG_CACHE_DIR") {
        return Some(d.into());
    }
    let target = dir.ancestors().nth(5)?;
    (dir.ancestors().nth(3)?.file_name()? == "build").then(|| target.join("tilelang-cache"))
}

fn rel(p: &Path, base: &Path) -> String {
    p.strip_prefix(base).unwrap_or(p).display().to_string()
}

/// A device-compiler failure as a rustc-style diagnostic at the kernel's Rust lines
/// (`#line` directives make the compiler name them).
fn render_failure(job: &Prepared, text: &str, src: &Path, manifest_dir: &Path) -> String {
    let mut out = format!(
        "error: the device compiler rejected kernel `{}` (config `{}`, target {})\n",
        job.kernel, job.config, job.target.arch
    );
    let file = job.file.display().to_string();
    let source = std::fs::read_to_string(&job.file).unwrap_or_default();
    let lines: Vec<&str> = source.lines().collect();
    let mut shown = 0;
    for l in text.lines() {
        // nvcc: `path(LINE): error: message`
        if let Some(rest) = l.strip_prefix(&file).and_then(|r| r.strip_prefix('(')) {
            if let Some((num, msg)) = rest.split_once("): ") {
                if let Ok(n) = num.parse::<usize>() {
                    if !msg.contains("error") {
                        continue;
                    }
                    let _ = writeln!(out, "  --> {}:{n}", rel(&job.file, manifest_dir));
                    if let Some(code) = lines.get(n.wrapping_sub(1)) {
                        let _ = writeln!(out, "   |\n{n:>4} | {code}\n   |");
                    }
                    let _ = writeln!(out, "   = {msg}");
                    shown += 1;
                    if shown >= 10 {
                        break;
                    }
                }
            }
        }
    }
    if shown == 0 {
        let _ = writeln!(out, "{}", text.trim_end());
    }
    let _ = writeln!(out, "   = note: generated source: {}", src.display());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_compiler_errors_point_at_the_rust_line() {
        let dir = std::env::temp_dir().join(format!("tilelang-build-test-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("src")).unwrap();
        let file = dir.join("src/lib.rs");
        std::fs::write(&file, "fn a() {}\n    let x = weird(y);\nfn b() {}\n").unwrap();
        let job = Prepared {
            kernel: "k".into(),
            config: "small".into(),
            target: Target::by_arch("sm_90").unwrap(),
            tool: Tool::Nvcc("nvcc".into()),
            file: file.clone(),
            hip: emit_hip::HipKernel { entry: "tl_k__small".into(), source: String::new(), threads: 32, shared_bytes: 0 },
        };
        let nvcc = format!("{}(2): error: identifier \"weird\" is undefined\n1 error detected\n", file.display());
        let text = render_failure(&job, &nvcc, Path::new("/tmp/out/tl_k__small.sm_90.cu"), &dir);
        assert!(text.starts_with("error: the device compiler rejected kernel `k` (config `small`, target sm_90)"), "{text}");
        assert!(text.contains("--> src/lib.rs:2"), "{text}");
        assert!(text.contains("let x = weird(y);"), "{text}");
        assert!(text.contains("identifier \"weird\" is undefined"), "{text}");
        assert!(text.contains("generated source: /tmp/out/tl_k__small.sm_90.cu"), "{text}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn reads_ptxas_report() {
        let log = "ptxas info    : Compiling entry function 'k' for 'sm_90'\nptxas info    : Function properties for k\n    16 bytes stack frame, 12 bytes spill stores, 12 bytes spill loads\nptxas info    : Used 31 registers, used 1 barriers, 1024 bytes smem, 384 bytes cmem[0]\n";
        let r = parse_resources(log);
        assert_eq!(
            (r.registers, r.spill_bytes, r.static_shared),
            (31, 12, 1024)
        );
    }
}
