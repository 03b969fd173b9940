//! Runs the device compiler over every (kernel, config, target), in parallel, with a cache.

use crate::find::Found;
use crate::toolchain::Tool;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use tilelang_codegen::lower;
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
    hip: lower::HipKernel,
}

/// A (config, target arch) pair, for the notes' warnings.
type ConfigArch = (String, String);

/// What the device compiler reported for one object.
#[derive(Debug, Default, Clone)]
pub struct Resources {
    pub registers: u32,
    pub spill_bytes: u32,
    pub static_shared: u32,
}

/// The file name of an object, as the macro derives it ([`tilelang_codegen::names`]).
pub use tilelang_codegen::names::object_name;

fn fnv(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// One job's outcome: the device compiler's log and the resources it reported, or its errors.
type Compiled = Result<(String, Resources), String>;

/// Compiles every job into `dir`; writes `dir/manifest.tsv`.
pub fn run_all(jobs: &[Job<'_>], dir: &Path, manifest_dir: &Path) -> Result<(), String> {
    let include = dir.join("include");
    std::fs::create_dir_all(&include)
        .map_err(|e| format!("error: cannot create {}: {e}", include.display()))?;
    for (name, text) in lower::HEADERS {
        write_if_changed(&include.join(name), text)?;
    }
    // Emitting is cheap and works on the IR (which holds spans, not thread-safe): do it here.
    let mut prepared = Vec::new();
    let mut errors = Vec::new();
    let mut over_limits = Vec::new();
    for job in jobs {
        let k = &job.kernel.ir;
        // A config over a target's limits gives no object. The macro lowers the same kernel
        // for the same targets: when another config fits that target it leaves this one out
        // there (warned below), else it reports a compile error on the config's name (with
        // rustc's rendering of the user's line), so nothing is dropped silently and nothing is
        // said twice.
        match lower::emit(
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
            Err(d) if d.over_limits => over_limits.push((job, d.message)),
            Err(_) => {}
        }
    }
    for (job, message) in over_limits {
        let fits = prepared.iter().any(|p| {
            job.kernel.ir.name == p.kernel
                && p.file == job.kernel.file
                && p.target.arch == job.target.arch
        });
        if fits {
            println!(
                "cargo:warning=tilelang: {message}; it is left out for {} (its other configs are compiled there, and a launch of this one there is an error)",
                job.target.arch
            );
        }
    }
    let jobs = prepared;
    let identities: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Compiled)>> = Mutex::new(Vec::new());
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
        "kernel\tconfig\tarch\tentry\tthreads\tshared_bytes\tregisters\tspill_bytes\tdemoted\tmin_blocks\tgemms\n",
    );
    // Fragments kept in shared memory and gemms off their target's fastest path (`notes`):
    // one warning per kernel and note, with the configs and targets where it happens.
    let mut warnings: Vec<(String, String, Vec<ConfigArch>)> = Vec::new();
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
                for note in &job.hip.notes {
                    // `line N: ...` on the kernel's own file.
                    let message = match note.strip_prefix("line ") {
                        Some(rest) => format!("{}:{rest}", rel(&job.file, manifest_dir)),
                        None => note.clone(),
                    };
                    let at = (job.config.clone(), job.target.arch.to_string());
                    match warnings
                        .iter_mut()
                        .find(|(k, m, _)| *k == job.kernel && *m == message)
                    {
                        Some((_, _, ats)) => ats.push(at),
                        None => warnings.push((job.kernel.clone(), message, vec![at])),
                    }
                }
            }
            Err(e) => errors.push(e),
        }
    }
    for (kernel, message, ats) in warnings {
        // Configs with the targets where they demote, configs of the same targets together.
        let mut by_config: Vec<(String, Vec<String>)> = Vec::new();
        for (config, arch) in ats {
            match by_config.iter_mut().find(|(c, _)| *c == config) {
                Some((_, archs)) => archs.push(arch),
                None => by_config.push((config, vec![arch])),
            }
        }
        let mut groups: Vec<(Vec<String>, Vec<String>)> = Vec::new();
        for (config, archs) in by_config {
            match groups.iter_mut().find(|(_, a)| *a == archs) {
                Some((configs, _)) => configs.push(config),
                None => groups.push((vec![config], archs)),
            }
        }
        let at: Vec<String> = groups
            .iter()
            .map(|(configs, archs)| format!("`{}` on {}", configs.join("`, `"), archs.join(", ")))
            .collect();
        println!(
            "cargo:warning=tilelang: kernel `{kernel}`: {message} (config(s) {})",
            at.join("; ")
        );
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
    let log = build_object(job, &hip.source, dir, include, tool_id, manifest_dir)?;
    let mut res = parse_resources(&log);
    // A kernel over a request's register cap may run better with fewer registers and more
    // resident warps (`lower::occupancy`). Two tries at most: the fullest request below the
    // registers this object used, else the one that buys a single block more; the first
    // whose object does not spill wins (a spill costs more than the warps it buys), and if
    // neither does, the object without a request. (A kernel whose attribute asks for blocks
    // has no requests: its source already says how many.)
    let mut min_blocks = hip.min_blocks;
    let below: Vec<&lower::Bounded> = if res.spill_bytes == 0 {
        let used = res.registers as usize;
        hip.requests.iter().filter(|r| r.registers < used).collect()
    } else {
        Vec::new()
    };
    let over: Vec<&lower::Bounded> = match below[..] {
        [] => Vec::new(),
        [only] => vec![only],
        [fullest, .., one_more] => vec![fullest, one_more],
    };
    for r in &over {
        let got = parse_resources(&build_object(
            job,
            &r.source,
            dir,
            include,
            tool_id,
            manifest_dir,
        )?);
        if got.spill_bytes == 0 {
            (res, min_blocks) = (got, r.min_blocks);
            break;
        }
    }
    if min_blocks == hip.min_blocks && !over.is_empty() {
        res = parse_resources(&build_object(
            job,
            &hip.source,
            dir,
            include,
            tool_id,
            manifest_dir,
        )?);
    }
    let mut line = String::new();
    let _ = writeln!(
        line,
        "{}\t{}\t{arch}\t{}\t{}\t{}\t{}\t{}\t{}\t{min_blocks}\t{}",
        job.kernel,
        job.config,
        hip.entry,
        hip.threads,
        hip.shared_bytes + res.static_shared as usize,
        res.registers,
        res.spill_bytes,
        if hip.demoted.is_empty() {
            "-".to_string()
        } else {
            hip.demoted.join(",")
        },
        if hip.gemms.is_empty() {
            "-".to_string()
        } else {
            hip.gemms.join(",")
        }
    );
    Ok((line, res))
}

/// Compiles `source` into the job's object (`<entry>.<arch>.bin`), or takes it from the cache
/// when the same source, header, compiler and target were compiled before; returns the
/// device compiler's log (its resource report).
fn build_object(
    job: &Prepared,
    source: &str,
    dir: &Path,
    include: &Path,
    tool_id: &str,
    manifest_dir: &Path,
) -> Result<String, String> {
    let hip = &job.hip;
    let arch = job.target.arch;
    let src = dir.join(format!("{}.{arch}.cu", hip.entry));
    let obj = dir.join(object_name(&hip.entry, arch));
    let log = dir.join(format!("{}.{arch}.log", hip.entry));
    let stamp = dir.join(format!("{}.{arch}.hash", hip.entry));
    // Every header, by name and text: the source includes them all, through tl.h.
    let headers: Vec<&str> = lower::HEADERS
        .iter()
        .flat_map(|(name, text)| [*name, *text])
        .collect();
    let hash = format!(
        "{:016x}",
        fnv(format!(
            "{}\0{}\0{}\0{:?}",
            source,
            headers.join("\0"),
            tool_id,
            job.target
        )
        .as_bytes())
    );
    write_if_changed(&src, source)?;
    let cached =
        obj.is_file() && std::fs::read_to_string(&stamp).ok().as_deref() == Some(hash.as_str());
    if !cached {
        // A cache shared by every profile and build of the workspace, keyed by content.
        let shared =
            cache_dir(dir).map(|c| (c.join(format!("{hash}.bin")), c.join(format!("{hash}.log"))));
        let hit = shared.as_ref().filter(|(b, l)| non_empty(b) && l.is_file());
        if let Some((b, l)) = hit {
            std::fs::copy(b, &obj)
                .map_err(|e| format!("error: cannot copy {}: {e}", b.display()))?;
            std::fs::copy(l, &log)
                .map_err(|e| format!("error: cannot copy {}: {e}", l.display()))?;
        } else {
            // An object left by an earlier build must not pass for this compile's output.
            let _ = std::fs::remove_file(&obj);
            let mut command = job.tool.command(&job.target, &src, include, &obj);
            let out = command.output().map_err(|e| {
                format!(
                    "error: cannot run the device compiler: {e}\n   = command: {}",
                    command_line(&command)
                )
            })?;
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            if !out.status.success() {
                return Err(render_failure(job, &text, &src, manifest_dir));
            }
            if !non_empty(&obj) {
                let what = if obj.exists() {
                    "wrote an empty object"
                } else {
                    "wrote no object"
                };
                let mut e = format!(
                    "error: the device compiler exited successfully but {what} for kernel `{}` (config `{}`, target {})\n   = object: {}\n   = command: {}\n",
                    job.kernel,
                    job.config,
                    job.target.arch,
                    obj.display(),
                    command_line(&command)
                );
                if !text.trim().is_empty() {
                    let _ = writeln!(e, "   = its output:\n{}", text.trim_end());
                }
                return Err(e);
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
    Ok(std::fs::read_to_string(&log).unwrap_or_default())
}

/// Whether `p` is a file with something in it.
fn non_empty(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.len() > 0)
}

/// A command as one could type it in a shell: environment settings, program, arguments, each
/// quoted where needed.
pub fn command_line(c: &std::process::Command) -> String {
    let quote = |s: &std::ffi::OsStr| {
        let s = s.to_string_lossy();
        let plain = !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_=+./,:@%".contains(c));
        if plain {
            s.into_owned()
        } else {
            format!("'{}'", s.replace('\'', "'\\''"))
        }
    };
    let mut parts: Vec<String> = c
        .get_envs()
        .filter_map(|(k, v)| Some(format!("{}={}", k.to_string_lossy(), quote(v?))))
        .collect();
    parts.push(quote(c.get_program()));
    parts.extend(c.get_args().map(quote));
    parts.join(" ")
}

/// The tag ending every line of clang's AMDGPU resource report.
const AMD_REMARK: &str = "[-Rpass-analysis=kernel-resource-usage]";

/// Reads the device compiler's resource report: `ptxas -v` (nvcc) or, on AMD, the remarks of
/// clang's `-Rpass-analysis=kernel-resource-usage` (hipcc or clang).
pub fn parse_resources(log: &str) -> Resources {
    if log.contains(AMD_REMARK) {
        parse_amd_resources(log)
    } else {
        parse_ptxas(log)
    }
}

/// `ptxas -v`: `Used N registers, ... M bytes smem`, `K bytes spill stores`; over several
/// entries (an object with a TMA entry beside the plain one), the largest.
fn parse_ptxas(log: &str) -> Resources {
    let mut r = Resources::default();
    for line in log.lines() {
        if let Some(i) = line.find("Used ") {
            let rest = &line[i + 5..];
            if let Some(n) = rest
                .split_whitespace()
                .next()
                .and_then(|n| n.parse::<u32>().ok())
            {
                r.registers = r.registers.max(n);
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

/// clang's AMDGPU remarks, one block per function (`Function Name: f`, then `SGPRs: n`,
/// `VGPRs: n`, `AGPRs: n` (gfx90a/gfx942 only), `ScratchSize [bytes/lane]: n`, `SGPRs Spill: n`,
/// `VGPRs Spill: n`, `LDS Size [bytes/block]: n`, ...). Over several functions, the largest.
///
/// - `registers`: VGPRs, plus AGPRs where there are any: on gfx90a/gfx942 both come out of one
///   per-lane register file, and the compiler also parks spilled VGPRs in AGPRs.
/// - `spill_bytes`: per lane, the spilled registers (4 bytes each) that can have reached memory,
///   that is at most the scratch size: SGPR spills usually go to VGPR lanes and VGPR spills on
///   gfx90a/gfx942 to AGPRs, neither of which needs scratch; scratch without spills is a private
///   array (like ptxas's stack frame, not counted).
/// - `static_shared`: LDS of static `__shared__` variables (the dynamic part is in the launch).
fn parse_amd_resources(log: &str) -> Resources {
    let mut r = Resources::default();
    let (mut vgprs, mut agprs, mut scratch, mut spilled) = (0u32, 0u32, 0u32, 0u32);
    let mut functions = Vec::new();
    for line in log.lines() {
        let Some(body) = line.trim_end().strip_suffix(AMD_REMARK) else {
            continue;
        };
        let Some(i) = body.find("remark: ") else {
            continue;
        };
        let Some((key, value)) = body[i + 8..].trim().rsplit_once(": ") else {
            continue;
        };
        if key == "Function Name" {
            functions.push((vgprs, agprs, scratch, spilled));
            (vgprs, agprs, scratch, spilled) = (0, 0, 0, 0);
            continue;
        }
        let Ok(n) = value.trim().parse::<u32>() else {
            continue;
        };
        match key.trim() {
            "VGPRs" => vgprs = n,
            "AGPRs" => agprs = n,
            "ScratchSize [bytes/lane]" => scratch = n,
            "VGPRs Spill" | "SGPRs Spill" => spilled += n,
            "LDS Size [bytes/block]" => r.static_shared = r.static_shared.max(n),
            _ => {}
        }
    }
    functions.push((vgprs, agprs, scratch, spilled));
    for (vgprs, agprs, scratch, spilled) in functions {
        r.registers = r.registers.max(vgprs + agprs);
        r.spill_bytes = r.spill_bytes.max(scratch.min(4 * spilled));
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
        let Some((n, msg)) = diagnostic_at(l, &file) else {
            continue;
        };
        // `error`, `fatal error`, `error #20-D`, `catastrophic error`; not notes or warnings.
        if !msg.split(':').next().unwrap_or("").contains("error") {
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
    if shown == 0 {
        let _ = writeln!(out, "{}", without_remarks(text).trim_end());
    }
    let _ = writeln!(out, "   = note: generated source: {}", src.display());
    out
}

/// The line and message of a diagnostic about `file`, in nvcc's form `file(LINE): error: msg` or
/// clang's `file:LINE:COL: error: msg`.
fn diagnostic_at<'a>(l: &'a str, file: &str) -> Option<(usize, &'a str)> {
    let rest = l.strip_prefix(file)?;
    if let Some(r) = rest.strip_prefix('(') {
        let (num, msg) = r.split_once("): ")?;
        return Some((num.parse().ok()?, msg));
    }
    let (num, r) = rest.strip_prefix(':')?.split_once(':')?;
    let n = num.parse().ok()?;
    let msg = match r.split_once(": ") {
        Some((col, msg)) if col.parse::<usize>().is_ok() => msg,
        _ => r.trim_start(),
    };
    Some((n, msg))
}

/// A compiler's output without clang's resource remarks and the source lines it quotes under
/// them (they accompany back-end errors, which name no source line).
fn without_remarks(text: &str) -> String {
    let mut out = String::new();
    let mut in_remark = false;
    for l in text.lines() {
        if l.trim_end().ends_with(AMD_REMARK) {
            in_remark = true;
            continue;
        }
        // clang quotes the line as `  12 | code` and marks it with `     |  ^`.
        let quoted = l
            .trim_start()
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .starts_with(" |")
            || l.trim_start().starts_with('|');
        if in_remark && quoted {
            continue;
        }
        in_remark = false;
        out.push_str(l);
        out.push('\n');
    }
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
            hip: lower::HipKernel {
                entry: "tl_k__small".into(),
                source: String::new(),
                threads: 32,
                shared_bytes: 0,
                demoted: Vec::new(),
                notes: Vec::new(),
                gemms: Vec::new(),
                requests: Vec::new(),
                min_blocks: 1,
            },
        };
        let nvcc = format!(
            "{}(2): error: identifier \"weird\" is undefined\n1 error detected\n",
            file.display()
        );
        let text = render_failure(
            &job,
            &nvcc,
            Path::new("/tmp/out/tl_k__small.sm_90.cu"),
            &dir,
        );
        assert!(
            text.starts_with(
                "error: the device compiler rejected kernel `k` (config `small`, target sm_90)"
            ),
            "{text}"
        );
        assert!(text.contains("--> src/lib.rs:2"), "{text}");
        assert!(text.contains("let x = weird(y);"), "{text}");
        assert!(text.contains("identifier \"weird\" is undefined"), "{text}");
        assert!(
            text.contains("generated source: /tmp/out/tl_k__small.sm_90.cu"),
            "{text}"
        );

        // clang (hipcc or plain clang, AMD): `file:LINE:COL: error: msg`, with the line quoted.
        let job = Prepared {
            target: Target::by_arch("gfx1100").unwrap(),
            tool: Tool::Clang("clang++-19".into()),
            ..job
        };
        let clang = format!(
            "{f}:2:19: error: use of undeclared identifier 'y'\n    2 |     let x = weird(y);\n      |                   ^\n{f}:2:13: note: something noted\n{f}:3:1: warning: a warning\n1 error generated when compiling for gfx1100.\n",
            f = file.display()
        );
        let gen = Path::new("/tmp/out/tl_k__small.gfx1100.cu");
        let text = render_failure(&job, &clang, gen, &dir);
        assert!(
            text.starts_with(
                "error: the device compiler rejected kernel `k` (config `small`, target gfx1100)"
            ),
            "{text}"
        );
        assert!(text.contains("--> src/lib.rs:2\n"), "{text}");
        assert!(text.contains("   2 |     let x = weird(y);"), "{text}");
        assert!(
            text.contains("= error: use of undeclared identifier 'y'"),
            "{text}"
        );
        assert!(
            !text.contains("noted") && !text.contains("a warning"),
            "{text}"
        );
        assert!(!text.contains("src/lib.rs:3"), "{text}");
        assert!(
            text.contains("generated source: /tmp/out/tl_k__small.gfx1100.cu"),
            "{text}"
        );

        // A back-end error names no line: the output is shown whole, less the resource remarks.
        let backend = "error: no libcall available for fexp\n/tmp/out/l.cu:1:1: remark: Function Name: k [-Rpass-analysis=kernel-resource-usage]\n    1 | extern \"C\" __global__ void k(double* p) {\n      | ^\n/tmp/out/l.cu:1:1: remark:     SGPRs: 2 [-Rpass-analysis=kernel-resource-usage]\n1 error generated when compiling for gfx1100.\n";
        let text = render_failure(&job, backend, gen, &dir);
        assert!(text.contains("\nerror: no libcall available for fexp\n1 error generated when compiling for gfx1100.\n"), "{text}");
        assert!(!text.contains("remark") && !text.contains(" | "), "{text}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A crate whose `src/lib.rs` is `lib`, in a fresh temporary folder, and its kernels.
    fn temp_crate(tag: &str, lib: &str) -> (std::path::PathBuf, Vec<crate::find::Found>) {
        let d = std::env::temp_dir().join(format!("tilelang-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(d.join("src")).unwrap();
        std::fs::write(d.join("src/lib.rs"), lib).unwrap();
        let found = crate::find::kernels_with(&d.join("src"), None).unwrap();
        (d, found)
    }

    /// Fake nvccs, set through `NVCC` as a user would: one exits 0 and writes nothing, one
    /// writes an empty object, one a real-looking one. The first two are errors naming the
    /// command; an object left by an earlier build does not hide them.
    #[cfg(unix)]
    #[test]
    fn a_compiler_that_writes_no_object_is_an_error_naming_the_command() {
        let (d, found) = temp_crate(
            "fake-nvcc",
            "#[tile_kernel(grid = [1], threads = 32)]\npub fn fill(a: &mut Tensor<f32, (N,)>) {\n    for i in parallel(32) {\n        if i < N {\n            a[i] = 1.0;\n        }\n    }\n}\n",
        );
        assert_eq!(found.len(), 1);
        // `-o FILE`: the scripts find the object's path the way nvcc does.
        let write = |content: &str| {
            format!("#!/bin/sh\nwhile [ $# -gt 0 ]; do\n  if [ \"$1\" = -o ]; then printf '{content}' > \"$2\"; fi\n  shift\ndone\n")
        };
        let scripts = [
            ("silent", "#!/bin/sh\necho 'all fine'\nexit 0\n".to_string()),
            ("empty", write("")),
            ("good", write("ELF-ish")),
        ];
        let target = Target::by_arch("sm_80").unwrap();
        let config = found[0].ir.configs[0].name.to_string();
        for (name, script) in scripts {
            let path = d.join(format!("nvcc-{name}"));
            std::fs::write(&path, script).unwrap();
            crate::toolchain::tests::make_executable(&path);
            let given = path.display().to_string();
            let env = |k: &str| (k == "NVCC").then(|| given.clone());
            let nvcc = crate::toolchain::find_nvcc(&env).unwrap();
            assert_eq!(nvcc, std::fs::canonicalize(&path).unwrap());
            let out = d.join(format!("out-{name}"));
            std::fs::create_dir_all(&out).unwrap();
            // A stale object from an earlier build.
            let obj = out.join(object_name(&format!("tl_fill__{config}"), "sm_80"));
            std::fs::write(&obj, "stale").unwrap();
            let jobs = [Job {
                kernel: &found[0],
                config: 0,
                target,
                tool: Tool::Nvcc(nvcc.clone()),
            }];
            let r = run_all(&jobs, &out, &d);
            if name == "good" {
                assert_eq!(r, Ok(()));
                assert_eq!(std::fs::read_to_string(&obj).unwrap(), "ELF-ish");
                continue;
            }
            let e = r.unwrap_err();
            let what = if name == "silent" {
                "wrote no object"
            } else {
                "wrote an empty object"
            };
            assert!(
                e.starts_with(&format!("error: the device compiler exited successfully but {what} for kernel `fill` (config `{config}`, target sm_80)")),
                "{e}"
            );
            assert!(e.contains(&format!("= object: {}", obj.display())), "{e}");
            assert!(
                e.contains(&format!(
                    "= command: {} -cubin -arch=sm_80 ",
                    nvcc.display()
                )),
                "{e}"
            );
            assert!(e.contains(&format!(" -o {} ", obj.display())), "{e}");
            if name == "silent" {
                assert!(e.contains("its output:\nall fine"), "{e}");
            }
        }
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// The occupancy requests through fake nvccs whose register use depends on the
    /// `__launch_bounds__` of the source: a kernel over a request's cap gets the fullest
    /// request that does not spill, else the one buying a single block, else none.
    #[cfg(unix)]
    #[test]
    fn occupancy_requests_are_kept_only_without_spills() {
        let (d, found) = temp_crate(
            "fake-occ",
            "#[tile_kernel(grid = [N.div_ceil(1024)], threads = 256)]\npub fn fill(a: &mut Tensor<f32, (N,)>) {\n    let i0 = block_idx(0) * 1024;\n    for i in parallel(1024) {\n        if i0 + i < N {\n            a[i0 + i] = 1.0;\n        }\n    }\n}\n",
        );
        let target = Target::by_arch("sm_90").unwrap();
        let hip = lower::emit(&found[0].ir, 0, &target, None).unwrap();
        let asked: Vec<(usize, usize)> = hip
            .requests
            .iter()
            .map(|r| (r.min_blocks, r.registers))
            .collect();
        assert_eq!(asked, [(6, 40), (5, 48), (4, 64), (3, 80), (2, 128)]);
        assert!(hip
            .source
            .contains("__launch_bounds__(256) tl_fill__default("));
        assert!(hip.requests[0]
            .source
            .contains("__launch_bounds__(256, 6) tl_fill__default("));
        // (registers, spill bytes) by the request in the source; the object records it.
        let fake = |six: &str, three: &str, none: &str| {
            let report = |rs: &str| {
                let (r, sp) = rs.split_once('/').unwrap();
                format!("echo 'ptxas info    : Used {r} registers'; echo '    0 bytes stack frame, {sp} bytes spill stores, {sp} bytes spill loads'")
            };
            format!(
                "#!/bin/sh\nfor a in \"$@\"; do case \"$a\" in *.cu) src=\"$a\";; esac; done\nwhile [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=\"$2\"; shift; done\nb=$(grep -o '__launch_bounds__([0-9, ]*)' \"$src\")\nprintf '%s' \"$b\" > \"$out\"\ncase \"$b\" in\n  *', 6)') {};;\n  *', 3)') {};;\n  *', '*) echo 'ptxas info    : Used 200 registers';;\n  *) {};;\nesac\n",
                report(six),
                report(three),
                report(none)
            )
        };
        let cases = [
            (
                "fits",
                fake("40/0", "80/0", "100/0"),
                "__launch_bounds__(256, 6)",
                6,
            ),
            (
                "one-more",
                fake("40/16", "80/0", "100/0"),
                "__launch_bounds__(256, 3)",
                3,
            ),
            (
                "spills",
                fake("40/16", "80/8", "100/0"),
                "__launch_bounds__(256)",
                1,
            ),
            (
                "under",
                fake("40/0", "80/0", "36/0"),
                "__launch_bounds__(256)",
                1,
            ),
        ];
        for (name, script, object, blocks) in cases {
            let path = d.join(format!("nvcc-{name}"));
            std::fs::write(&path, script).unwrap();
            crate::toolchain::tests::make_executable(&path);
            let out = d.join(format!("out-{name}"));
            std::fs::create_dir_all(&out).unwrap();
            let jobs = [Job {
                kernel: &found[0],
                config: 0,
                target,
                tool: Tool::Nvcc(path.clone()),
            }];
            assert_eq!(run_all(&jobs, &out, &d), Ok(()), "{name}");
            let obj = out.join(object_name("tl_fill__default", "sm_90"));
            assert_eq!(std::fs::read_to_string(&obj).unwrap(), object, "{name}");
            let manifest = std::fs::read_to_string(out.join("manifest.tsv")).unwrap();
            let row: Vec<&str> = manifest.lines().nth(1).unwrap().split('\t').collect();
            assert_eq!(row[9], blocks.to_string(), "{name}: {manifest}");
        }
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn command_lines_are_shell_quoted() {
        let mut c = std::process::Command::new("/opt/my tools/nvcc");
        c.env("HIP_PLATFORM", "amd")
            .args(["-arch=sm_80", "-o", "it's.bin", "k.cu"]);
        assert_eq!(
            command_line(&c),
            "HIP_PLATFORM=amd '/opt/my tools/nvcc' -arch=sm_80 -o 'it'\\''s.bin' k.cu"
        );
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

    /// Real `-Rpass-analysis=kernel-resource-usage` output of clang 19 (Debian 19.1.7) for
    /// generated tutorial kernels (`compile_dir kernels/src`), paths shortened.
    #[test]
    fn reads_amdgpu_resource_remarks() {
        // gfx942: AGPRs share the register file; VGPRs spill partly to AGPRs, partly to scratch.
        let gfx942 = "\
/tmp/amdout/tl_gemm_fragment__r64x64x32.gfx942.cu:4:1: remark: Function Name: tl_gemm_fragment__r64x64x32 [-Rpass-analysis=kernel-resource-usage]
    4 | TL_GLOBAL void __launch_bounds__(128) tl_gemm_fragment__r64x64x32(const tl::half* __restrict__ t_a, const tl::half* __restrict__ t_b, tl::half* __restrict__ t_c, tl::index n_M, tl::index n_K, tl::index n_N) {
      | ^
/tmp/amdout/tl_gemm_fragment__r64x64x32.gfx942.cu:4:1: remark:     SGPRs: 66 [-Rpass-analysis=kernel-resource-usage]
/tmp/amdout/tl_gemm_fragment__r64x64x32.gfx942.cu:4:1: remark:     VGPRs: 256 [-Rpass-analysis=kernel-resource-usage]
/tmp/amdout/tl_gemm_fragment__r64x64x32.gfx942.cu:4:1: remark:     AGPRs: 256 [-Rpass-analysis=kernel-resource-usage]
/tmp/amdout/tl_gemm_fragment__r64x64x32.gfx942.cu:4:1: remark:     ScratchSize [bytes/lane]: 404 [-Rpass-analysis=kernel-resource-usage]
/tmp/amdout/tl_gemm_fragment__r64x64x32.gfx942.cu:4:1: remark:     Dynamic Stack: False [-Rpass-analysis=kernel-resource-usage]
/tmp/amdout/tl_gemm_fragment__r64x64x32.gfx942.cu:4:1: remark:     Occupancy [waves/SIMD]: 1 [-Rpass-analysis=kernel-resource-usage]
/tmp/amdout/tl_gemm_fragment__r64x64x32.gfx942.cu:4:1: remark:     SGPRs Spill: 0 [-Rpass-analysis=kernel-resource-usage]
/tmp/amdout/tl_gemm_fragment__r64x64x32.gfx942.cu:4:1: remark:     VGPRs Spill: 116 [-Rpass-analysis=kernel-resource-usage]
/tmp/amdout/tl_gemm_fragment__r64x64x32.gfx942.cu:4:1: remark:     LDS Size [bytes/block]: 0 [-Rpass-analysis=kernel-resource-usage]
";
        let r = parse_resources(gfx942);
        assert_eq!((r.registers, r.spill_bytes, r.static_shared), (512, 404, 0));

        // gfx90a: SGPRs spilled to VGPR lanes only (no scratch): not a memory spill.
        let gfx90a = "\
/tmp/amdout/tl_gemm_w4a16__w16x32x16s2.gfx90a.cu:4:1: remark: Function Name: tl_gemm_w4a16__w16x32x16s2 [-Rpass-analysis=kernel-resource-usage]
/tmp/amdout/tl_gemm_w4a16__w16x32x16s2.gfx90a.cu:4:1: remark:     SGPRs: 100 [-Rpass-analysis=kernel-resource-usage]
/tmp/amdout/tl_gemm_w4a16__w16x32x16s2.gfx90a.cu:4:1: remark:     VGPRs: 96 [-Rpass-analysis=kernel-resource-usage]
/tmp/amdout/tl_gemm_w4a16__w16x32x16s2.gfx90a.cu:4:1: remark:     AGPRs: 0 [-Rpass-analysis=kernel-resource-usage]
/tmp/amdout/tl_gemm_w4a16__w16x32x16s2.gfx90a.cu:4:1: remark:     ScratchSize [bytes/lane]: 0 [-Rpass-analysis=kernel-resource-usage]
/tmp/amdout/tl_gemm_w4a16__w16x32x16s2.gfx90a.cu:4:1: remark:     SGPRs Spill: 16 [-Rpass-analysis=kernel-resource-usage]
/tmp/amdout/tl_gemm_w4a16__w16x32x16s2.gfx90a.cu:4:1: remark:     VGPRs Spill: 0 [-Rpass-analysis=kernel-resource-usage]
/tmp/amdout/tl_gemm_w4a16__w16x32x16s2.gfx90a.cu:4:1: remark:     LDS Size [bytes/block]: 0 [-Rpass-analysis=kernel-resource-usage]
";
        let r = parse_resources(gfx90a);
        assert_eq!((r.registers, r.spill_bytes, r.static_shared), (96, 0, 0));

        // gfx1100 (no AGPRs line): heavy VGPR spilling, bounded by the scratch size.
        let gfx1100 = "\
/tmp/amdout/tl_gemm_tiled__t128x128x32s3.gfx1100.cu:4:1: remark: Function Name: tl_gemm_tiled__t128x128x32s3 [-Rpass-analysis=kernel-resource-usage]
/tmp/amdout/tl_gemm_tiled__t128x128x32s3.gfx1100.cu:4:1: remark:     SGPRs: 41 [-Rpass-analysis=kernel-resource-usage]
/tmp/amdout/tl_gemm_tiled__t128x128x32s3.gfx1100.cu:4:1: remark:     VGPRs: 256 [-Rpass-analysis=kernel-resource-usage]
/tmp/amdout/tl_gemm_tiled__t128x128x32s3.gfx1100.cu:4:1: remark:     ScratchSize [bytes/lane]: 4284 [-Rpass-analysis=kernel-resource-usage]
/tmp/amdout/tl_gemm_tiled__t128x128x32s3.gfx1100.cu:4:1: remark:     SGPRs Spill: 0 [-Rpass-analysis=kernel-resource-usage]
/tmp/amdout/tl_gemm_tiled__t128x128x32s3.gfx1100.cu:4:1: remark:     VGPRs Spill: 1180 [-Rpass-analysis=kernel-resource-usage]
/tmp/amdout/tl_gemm_tiled__t128x128x32s3.gfx1100.cu:4:1: remark:     LDS Size [bytes/block]: 0 [-Rpass-analysis=kernel-resource-usage]
";
        let r = parse_resources(gfx1100);
        assert_eq!((r.registers, r.spill_bytes), (256, 4284));

        // Static LDS, and a second (non-inlined) function: the largest of each.
        let two = "\
a.cu:1:1: remark: Function Name: k [-Rpass-analysis=kernel-resource-usage]
a.cu:1:1: remark:     VGPRs: 3 [-Rpass-analysis=kernel-resource-usage]
a.cu:1:1: remark:     LDS Size [bytes/block]: 1024 [-Rpass-analysis=kernel-resource-usage]
a.cu:2:1: remark: Function Name: f [-Rpass-analysis=kernel-resource-usage]
a.cu:2:1: remark:     VGPRs: 40 [-Rpass-analysis=kernel-resource-usage]
a.cu:2:1: remark:     ScratchSize [bytes/lane]: 64 [-Rpass-analysis=kernel-resource-usage]
";
        let r = parse_resources(two);
        assert_eq!((r.registers, r.spill_bytes, r.static_shared), (40, 0, 1024));
    }
}
