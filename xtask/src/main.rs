//! Repository automation.
//!
//! `cargo xtask gpu-bundle [DIR]`: builds, on a machine without a GPU, everything the GPU
//! checks and benchmarks need (release binaries with the sm_90 and sm_90a objects embedded, the bench
//! binary, the peers' Python script), strips them into one folder (default `.gpu/`) with the
//! script that runs them there:
//!
//! ```text
//! cargo xtask gpu-bundle          # here: needs nvcc (NVCC, CUDA_HOME or the README's wheels)
//!                                 # also packs it: target/gpu-bundle.tgz (scripts/pack-gpu.sh)
//! tar -xzf target/gpu-bundle.tgz  # on the GPU machine, then:
//! bash .gpu/run.sh                # logs go to $OUT (or .gpu/out)
//! bash .gpu/run.sh bench          # the benchmarks: $OUT/{ours,peers}.json, perf.md, perf.svg
//! bash .gpu/prof.sh ex tl_transpose__t32x32   # Nsight Compute on one kernel: $OUT/prof-*.txt
//! ```
//!
//! `cargo xtask report <ours.json> <peers.json> [more-peers.json ..] [--out docs/perf]`: the performance table
//! (markdown on stdout, `perf.md`, `perf.svg`), see `report.rs`.
//!
//! `cargo xtask book`: the tutorials as a book in English and Chinese (`book/en`, `book/zh`)
//! into `target/book/`, with the chapters' performance tables generated from the current run of
//! each card, `docs/perf/current/<card>/`; see `book.rs`.
//!
//! `cargo xtask test [ARGS..]`: the README's test command. Installs what the tests need when
//! it is missing (clang 19 and LLVM 19 from the distribution, see `tools.rs`), then runs
//! `cargo test --workspace ARGS..`.

mod book;
mod report;
mod tools;
mod workspace;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use workspace::root;

const USAGE: &str = "usage: cargo xtask test [CARGO TEST ARGS..]\n       cargo xtask gpu-bundle [DIR]\n       cargo xtask book\n       cargo xtask report <ours.json> <peers.json> [more-peers.json ..] [--out docs/perf]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("test") => test(&args[1..]),
        Some("gpu-bundle") => gpu_bundle(Path::new(args.get(1).map_or(".gpu", String::as_str))),
        Some("report") => report::report(&args[1..]),
        Some("book") => book::book(),
        _ => Err(USAGE.to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `cargo test --workspace` after making sure the host tools the tests call are there.
fn test(args: &[String]) -> Result<(), String> {
    tools::ensure_clang()?;
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(root())
        .args(["test", "--workspace"])
        .args(args);
    eprintln!("xtask: running {c:?}");
    let status = c.status().map_err(|e| format!("cannot run {c:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{c:?} failed ({status})"))
    }
}

/// Cargo for the bundle's builds: `TILELANG_TARGETS` as set, else the H200's two targets,
/// `sm_90` and `sm_90a` (the device prefers the second; an A/B against a bundle of `sm_90`
/// alone compares the two lowerings).
fn cargo() -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(root());
    c.env(
        "TILELANG_TARGETS",
        std::env::var("TILELANG_TARGETS").unwrap_or_else(|_| "sm_90,sm_90a".into()),
    );
    c
}

fn run(mut c: Command) -> Result<String, String> {
    let out = c.output().map_err(|e| format!("cannot run {c:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{c:?} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Executables cargo reports in `--message-format=json` output, with their target names.
fn executables(json: &str) -> Vec<(String, bool, PathBuf)> {
    let mut out = Vec::new();
    for line in json.lines() {
        let Some(exe) = field(line, "\"executable\":\"") else {
            continue;
        };
        let name = field(line, "\"name\":\"").unwrap_or_default();
        // The profile's `test` flag (the target object has a `test` key of its own).
        let test = line
            .find("\"profile\":")
            .is_some_and(|i| line[i..].contains("\"test\":true"));
        out.push((name, test, PathBuf::from(exe)));
    }
    out
}

fn field(line: &str, key: &str) -> Option<String> {
    let i = line.find(key)? + key.len();
    let j = line[i..].find('"')?;
    Some(line[i..i + j].to_string())
}

fn gpu_bundle(dir: &Path) -> Result<(), String> {
    // A bundle without sm_90 objects fails every check on the GPU machine and spends its
    // device time for nothing: refuse before a long build rather than after.
    let env = |k: &str| std::env::var(k).ok();
    if tilelang_build::toolchain::find_nvcc(&env).is_none() {
        return Err(
            "gpu-bundle needs nvcc for the sm_90 objects and found none (NVCC, CUDA_HOME, \
             CUDA_PATH, /usr/local/cuda, PATH); without a CUDA toolkit run \
             `eval \"$(bash scripts/nvcc-env.sh)\"` first (the README's pinned wheels)"
                .into(),
        );
    }
    let dir = root().join(dir);
    // An earlier `scripts/ab-base.sh` bench binary would be timed against this bundle as if it
    // were chosen for it: ab-base runs after the bundle, every time.
    let base = dir.join("base");
    if base.is_dir() {
        std::fs::remove_dir_all(&base).map_err(|e| format!("remove {}: {e}", base.display()))?;
        eprintln!(
            "xtask: removed the old A/B base in {} (scripts/ab-base.sh REV makes a new one)",
            base.display()
        );
    }
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).map_err(|e| e.to_string())?;
    // The tutorials' binaries and the differential tester (`run.sh difftest`: generated
    // kernels, compiled there).
    let mut build = cargo();
    build.args([
        "build",
        "--release",
        "-p",
        "kernels",
        "-p",
        "tilelang-difftest",
        "--bins",
        "--message-format=json",
    ]);
    // The tutorials' and the examples' tests (`kernels-tests`, `examples-tests`).
    let mut tests = cargo();
    tests.args([
        "test",
        "--release",
        "-p",
        "kernels",
        "-p",
        "examples",
        "--lib",
        "--no-run",
        "--message-format=json",
    ]);
    let mut rt = cargo();
    rt.args([
        "test",
        "--release",
        "-p",
        "tilelang-rt",
        "--test",
        "cuda",
        "--no-run",
        "--message-format=json",
    ]);
    // The benchmarks: `cargo bench`'s executable (the bench profile, optimised like release).
    let mut bench = cargo();
    bench.args([
        "bench",
        "-p",
        "benches",
        "--bench",
        "tutorials",
        "--no-run",
        "--message-format=json",
    ]);
    // The token fuzzer (`run.sh check` runs 1,000,000 mutants of a fresh seed range on the
    // cores the GPU checks leave; issue 38), with the tutorial kernels it mutates.
    let mut fuzz = cargo();
    fuzz.args([
        "test",
        "--release",
        "-p",
        "tilelang-codegen",
        "--test",
        "fuzz",
        "--no-run",
        "--message-format=json",
    ]);
    // The report, so that the GPU machine can make the table and chart itself.
    let mut xtask = cargo();
    xtask.args(["build", "--release", "-p", "xtask", "--message-format=json"]);
    let mut exes = executables(&run(build)?);
    exes.extend(
        executables(&run(xtask)?)
            .into_iter()
            .map(|(_, _, p)| ("report".to_string(), false, p)),
    );
    exes.extend(executables(&run(tests)?));
    exes.extend(
        executables(&run(rt)?)
            .into_iter()
            .map(|(_, t, p)| ("rt-cuda".to_string(), t, p)),
    );
    exes.extend(
        executables(&run(fuzz)?)
            .into_iter()
            .map(|(_, _, p)| ("fuzz".to_string(), false, p)),
    );
    exes.extend(
        executables(&run(bench)?)
            .into_iter()
            .map(|(_, _, p)| ("bench-tutorials".to_string(), false, p)),
    );
    let mut copied = Vec::new();
    for (name, test, exe) in exes {
        let dest = bin.join(if test {
            format!("{name}-tests")
        } else {
            name.clone()
        });
        std::fs::copy(&exe, &dest).map_err(|e| format!("copy {}: {e}", exe.display()))?;
        let _ = Command::new("strip").arg(&dest).status();
        copied.push(dest);
    }
    // The objects themselves, for disassembly on the GPU machine: only this build's (an old
    // bundle's objects, or an older build directory's, would be checked as if current).
    let objects = dir.join("objects");
    let _ = std::fs::remove_dir_all(&objects);
    std::fs::create_dir_all(&objects).map_err(|e| e.to_string())?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map_or_else(|| root().join("target"), |t| root().join(t));
    let built = glob_objects(&target.join("release/build"));
    let sm90 = built
        .iter()
        .filter(|p| {
            let name = p.to_string_lossy();
            name.ends_with(".sm_90.bin") || name.ends_with(".sm_90a.bin")
        })
        .count();
    if sm90 == 0 {
        return Err(format!(
            "the build compiled no sm_90 or sm_90a objects ({} objects in all): is one of them \
             in TILELANG_TARGETS, and did the build's warnings name a compiler error?",
            built.len()
        ));
    }
    for entry in built {
        let _ = std::fs::copy(&entry, objects.join(entry.file_name().unwrap()));
    }
    for script in ["run.sh", "prof.sh"] {
        std::fs::copy(root().join("xtask/gpu").join(script), dir.join(script))
            .map_err(|e| e.to_string())?;
    }
    copy_tree(&root().join("kernels/src"), &dir.join("kernels-src"))?;
    // The A/B phase's comparison (`run.sh ab`).
    std::fs::copy(
        root().join("scripts/bench-diff.py"),
        dir.join("bench-diff.py"),
    )
    .map_err(|e| e.to_string())?;
    // The peers' script (PyTorch and Triton timings), when the repository has it.
    let peers = root().join("peers");
    if peers.is_dir() {
        copy_tree(&peers, &dir.join("peers"))?;
    } else {
        eprintln!("xtask: no peers/ folder; the bundle's `bench` phase will only run ours");
    }
    let commit = run({
        let mut c = Command::new("git");
        c.current_dir(root()).args(["rev-parse", "HEAD"]);
        c
    })
    .unwrap_or_default();
    let dirty = run({
        let mut c = Command::new("git");
        c.current_dir(root())
            .args(["status", "--porcelain", "--untracked-files=no"]);
        c
    })
    .map(|s| !s.trim().is_empty())
    .unwrap_or(false);
    std::fs::write(
        dir.join("COMMIT"),
        format!(
            "{}{}\n",
            commit.trim(),
            if dirty {
                " (with uncommitted changes)"
            } else {
                ""
            }
        ),
    )
    .map_err(|e| e.to_string())?;
    for c in &copied {
        println!("{}", c.display());
    }
    let mib = |p: &Path| dir_size(p) as f64 / (1024.0 * 1024.0);
    let (total, objects_mib) = (mib(&dir), mib(&objects));
    println!(
        "bundle ready in {} ({total:.0} MiB: bin {:.0}, objects {objects_mib:.0}): run `bash {}/run.sh` on the GPU machine",
        dir.display(),
        mib(&bin),
        dir.file_name().unwrap().to_string_lossy()
    );
    // What travels to a GPU machine is often capped (the device tool here: 64 MiB with the
    // working tree): the bundle also goes into one archive, about a quarter of its size.
    let mut pack = Command::new("bash");
    pack.current_dir(root())
        .arg(root().join("scripts/pack-gpu.sh"))
        .arg(&dir);
    let status = pack
        .status()
        .map_err(|e| format!("scripts/pack-gpu.sh: {e}"))?;
    if !status.success() {
        return Err("scripts/pack-gpu.sh failed".into());
    }
    Ok(())
}

/// Bytes under `p`, recursively (0 where it cannot be read).
fn dir_size(p: &Path) -> u64 {
    match std::fs::symlink_metadata(p) {
        Ok(m) if m.is_dir() => std::fs::read_dir(p)
            .map(|rd| rd.flatten().map(|e| dir_size(&e.path())).sum())
            .unwrap_or(0),
        Ok(m) => m.len(),
        Err(_) => 0,
    }
}

/// Copies the files of `src` into `dest`, recursively, skipping caches (`__pycache__`, dot
/// files).
fn copy_tree(src: &Path, dest: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dest).map_err(|e| format!("{}: {e}", dest.display()))?;
    let entries = std::fs::read_dir(src).map_err(|e| format!("{}: {e}", src.display()))?;
    for e in entries.flatten() {
        let name = e.file_name();
        let n = name.to_string_lossy();
        if n.starts_with('.') || n == "__pycache__" {
            continue;
        }
        let path = e.path();
        if path.is_dir() {
            copy_tree(&path, &dest.join(&name))?;
        } else {
            std::fs::copy(&path, dest.join(&name))
                .map_err(|e| format!("copy {}: {e}", path.display()))?;
        }
    }
    Ok(())
}

/// The objects of the newest `target/release/build/kernels-*/out/tilelang` (the manifest
/// written last), as its manifest lists them.
fn glob_objects(build: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(build) else {
        return out;
    };
    let newest = rd
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("kernels-"))
        .filter_map(|e| {
            let dir = e.path().join("out/tilelang");
            let t = std::fs::metadata(dir.join("manifest.tsv"))
                .ok()?
                .modified()
                .ok()?;
            Some((t, dir))
        })
        .max_by_key(|(t, _)| *t);
    // The objects the manifest lists (kernel, config, arch, entry, ...): `<entry>.<arch>.bin`;
    // the folder may also hold objects of configs that no longer exist.
    let Some((_, dir)) = newest else {
        return out;
    };
    let manifest = std::fs::read_to_string(dir.join("manifest.tsv")).unwrap_or_default();
    for line in manifest.lines() {
        let cols: Vec<&str> = line.split('\t').collect();
        if let [_, _, arch, entry, ..] = cols[..] {
            let obj = dir.join(format!("{entry}.{arch}.bin"));
            if obj.is_file() {
                out.push(obj);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::root;
    use std::path::Path;

    fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            let name = e.file_name();
            let name = name.to_string_lossy();
            if p.is_dir() {
                if !name.starts_with('.') && name != "target" {
                    rust_files(&p, out);
                }
            } else if name.ends_with(".rs") {
                out.push(p);
            }
        }
    }

    /// ARCHITECTURE.md's code map names every Rust file of the repository over 200 lines (a
    /// newcomer's map must not leave the big modules out).
    #[test]
    fn code_map_lists_every_module_over_200_lines() {
        let root = root();
        let map = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
        let mut files = Vec::new();
        rust_files(&root, &mut files);
        let mut missing: Vec<String> = files
            .iter()
            .filter(|p| std::fs::read_to_string(p).unwrap().lines().count() > 200)
            .map(|p| {
                p.strip_prefix(&root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .filter(|rel| !map.contains(&format!("`{rel}`")))
            .collect();
        missing.sort();
        assert!(
            files.len() > 50,
            "found only {} Rust files under {}",
            files.len(),
            root.display()
        );
        assert!(
            missing.is_empty(),
            "ARCHITECTURE.md's code map does not name these files over 200 lines (add a row, with the path in backticks):\n{}",
            missing.join("\n")
        );
    }
}
