//! Device compilers: where to find them and how to call them.
//!
//! NVIDIA targets use `nvcc`. AMD targets use ROCm's `hipcc` when one is installed and able to
//! build the target, else a plain LLVM `clang++` (19 or newer), which compiles our HIP sources
//! without any ROCm files because `tl.h` brings its own device prelude.
//!
//! Every AMD compile produces a *raw ELF code object for one arch* (`--offload-device-only
//! --no-gpu-bundle-output`), not a host object with an embedded fat binary nor a clang offload
//! bundle: `hipModuleLoadData` accepts such an object directly, and the runtime picks the object
//! whose arch matches the device, exactly as it picks a cubin on NVIDIA. One object per
//! (kernel, config, arch) also keeps the cache and the resource report per arch.

use std::path::{Path, PathBuf};
use std::process::Command;
use tilelang_codegen::target::{Target, Vendor};

/// A compiler able to build objects for a target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tool {
    /// NVIDIA's nvcc, called by its real path (a symlink breaks its header lookup).
    Nvcc(PathBuf),
    /// ROCm's hipcc: clang with the HIP headers and the device libraries.
    Hipcc(PathBuf),
    /// A plain LLVM clang++ (19+), without ROCm: no HIP headers, no device libraries; `tl.h`
    /// supplies the device prelude from clang builtins.
    Clang(PathBuf),
}

/// Flags of every AMD compile, before the arch: HIP device code only, one raw code object.
const AMD_FLAGS: &[&str] = &[
    "-x",
    "hip",
    "-std=c++17",
    "--offload-device-only",
    "--no-gpu-bundle-output",
];
/// What plain clang adds: no ROCm device libraries or HIP headers (and `tl.h` must not pick up
/// HIP headers that happen to sit in a system include directory).
const CLANG_ONLY_FLAGS: &[&str] = &["-nogpulib", "-nogpuinc"];
/// Flags after the arch: optimise, and report VGPRs / SGPRs / scratch / LDS per kernel as
/// remarks, which [`crate::compile::parse_resources`] reads.
const AMD_TAIL_FLAGS: &[&str] = &["-O3", "-Rpass-analysis=kernel-resource-usage"];

impl Tool {
    /// The compiler's path.
    pub fn path(&self) -> &Path {
        match self {
            Tool::Nvcc(p) | Tool::Hipcc(p) | Tool::Clang(p) => p,
        }
    }

    /// The kind of compiler, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Tool::Nvcc(_) => "nvcc",
            Tool::Hipcc(_) => "hipcc",
            Tool::Clang(_) => "clang",
        }
    }

    /// Identifies the compiler in cache keys: its path and version banner (and, for the AMD
    /// compilers, the fixed flags, so that changing them invalidates cached objects).
    pub fn identity(&self) -> String {
        let v = version_banner(self.path());
        match self {
            Tool::Nvcc(p) => format!("{}\n{v}", p.display()),
            Tool::Hipcc(p) | Tool::Clang(p) => {
                let c = self.command_without_arch();
                let args: Vec<String> = c
                    .get_args()
                    .map(|a| a.to_string_lossy().into_owned())
                    .collect();
                format!("{}\n{v}\n{}", p.display(), args.join(" "))
            }
        }
    }

    /// The command compiling `src` into the object `out` for `target`.
    pub fn command(&self, target: &Target, src: &Path, include: &Path, out: &Path) -> Command {
        match self {
            Tool::Nvcc(p) => {
                let mut c = Command::new(p);
                c.arg("-cubin")
                    .arg(format!("-arch={}", target.arch))
                    .args(["-O3", "-std=c++17", "-lineinfo", "-Xptxas", "-v"])
                    .arg("-I")
                    .arg(include)
                    .arg("-o")
                    .arg(out)
                    .arg(src);
                c
            }
            Tool::Hipcc(_) | Tool::Clang(_) => {
                let mut c = self.command_without_arch();
                c.arg(format!("--offload-arch={}", target.arch))
                    .args(AMD_TAIL_FLAGS)
                    .arg("-I")
                    .arg(include)
                    .arg("-o")
                    .arg(out)
                    .arg(src);
                c
            }
        }
    }

    /// The AMD command up to the arch (used by [`Tool::command`] and in [`Tool::identity`]).
    fn command_without_arch(&self) -> Command {
        let mut c = Command::new(self.path());
        match self {
            Tool::Nvcc(_) => {}
            Tool::Hipcc(_) => {
                // hipcc would call nvcc if it guessed the NVIDIA platform.
                c.env("HIP_PLATFORM", "amd").args(AMD_FLAGS);
            }
            Tool::Clang(_) => {
                c.args(AMD_FLAGS)
                    .args(CLANG_ONLY_FLAGS)
                    .arg("-DTL_NO_HIP_HEADERS");
            }
        }
        c
    }

    /// Compiles a tiny kernel for `target`: whether this compiler can build it here (an old or
    /// distribution hipcc may not know a recent arch; a clang without lld cannot link).
    /// `Err` holds the compiler's first error line.
    pub fn probe(&self, target: &Target) -> Result<(), String> {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "tilelang-probe-{}-{}",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let src = dir.join("probe.cu");
        let source = match self {
            // Exercise the HIP headers and the device libraries, as generated code will.
            Tool::Hipcc(_) => "#include <hip/hip_runtime.h>\nextern \"C\" __global__ void tl_probe(float* p) { p[threadIdx.x] = expf(p[threadIdx.x]); }\n",
            _ => "extern \"C\" __attribute__((global)) void tl_probe(float* p) { p[__builtin_amdgcn_workitem_id_x()] = 1.0f; }\n",
        };
        let out = dir.join("probe.o");
        let r = std::fs::write(&src, source)
            .map_err(|e| format!("cannot write {}: {e}", src.display()))
            .and_then(|_| {
                self.command(target, &src, &dir, &out)
                    .output()
                    .map_err(|e| format!("cannot run {}: {e}", self.path().display()))
            })
            .and_then(|o| {
                if o.status.success() && out.is_file() {
                    return Ok(());
                }
                let text = String::from_utf8_lossy(&o.stderr).into_owned()
                    + &String::from_utf8_lossy(&o.stdout);
                let first = text
                    .lines()
                    .find(|l| l.contains("error"))
                    .or_else(|| text.lines().find(|l| !l.trim().is_empty()))
                    .unwrap_or("failed without a message");
                Err(first.trim().to_string())
            });
        let _ = std::fs::remove_dir_all(&dir);
        r
    }
}

fn version_banner(p: &Path) -> String {
    Command::new(p)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

/// The LLVM major version in a `--version` banner (`... clang version 19.1.7 ...`).
pub fn clang_major(banner: &str) -> Option<u32> {
    let i = banner.find("clang version ")?;
    let rest = &banner[i + "clang version ".len()..];
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse().ok()
}

/// The compiler for a target, if one is installed (and, on AMD, able to build the target).
pub fn for_target(t: &Target) -> Option<Tool> {
    match t.vendor {
        Vendor::Nvidia => find_nvcc().map(Tool::Nvcc),
        Vendor::Amd => {
            let env = |k: &str| std::env::var(k).ok();
            for var in ["HIPCC", "TILELANG_CLANG"] {
                if let Some(v) = env(var).filter(|v| resolve(v, &env).is_none()) {
                    println!("cargo:warning=tilelang: {var}={v} names no file; ignored");
                }
            }
            let mut failed = Vec::new();
            for (tool, explicit) in amd_candidates(&env) {
                match tool.probe(t) {
                    Ok(()) => {
                        // Say why a compiler the user named was passed over.
                        for (f, _) in failed.iter().filter(|(_, explicit)| *explicit) {
                            println!(
                                "cargo:warning=tilelang: {f}; using {} {}",
                                tool.kind(),
                                tool.path().display()
                            );
                        }
                        return Some(tool);
                    }
                    Err(e) => failed.push((
                        format!(
                            "{} {} cannot build {}: {e}",
                            tool.kind(),
                            tool.path().display(),
                            t.arch
                        ),
                        explicit,
                    )),
                }
            }
            for (f, _) in &failed {
                println!("cargo:warning=tilelang: {f}");
            }
            None
        }
    }
}

/// How to get a compiler for a target, for messages.
pub fn hint(t: &Target) -> &'static str {
    match t.vendor {
        Vendor::Nvidia => "install the CUDA toolkit, or the pinned pip wheels of the README, and set NVCC or CUDA_HOME",
        Vendor::Amd => "install ROCm (hipcc) or clang 19+ (e.g. apt-get install clang-19 lld-19), or set TILELANG_CLANG",
    }
}

fn find_nvcc() -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Ok(p) = std::env::var("NVCC") {
        candidates.push(p.into());
    }
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Ok(p) = std::env::var(var) {
            candidates.push(PathBuf::from(p).join("bin").join("nvcc"));
        }
    }
    candidates.push("/usr/local/cuda/bin/nvcc".into());
    if let Some(path) = std::env::var_os("PATH") {
        candidates.extend(std::env::split_paths(&path).map(|d| d.join("nvcc")));
    }
    candidates
        .into_iter()
        .filter(|p| p.is_file())
        .find_map(|p| std::fs::canonicalize(&p).ok())
}

/// `name` if it is a path to a file, else the first `PATH` entry holding a file of that name.
fn resolve(name: &str, env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let p = Path::new(name);
    if p.components().count() > 1 || p.is_absolute() {
        return p.is_file().then(|| p.to_path_buf());
    }
    let path = env("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|c| c.is_file())
}

/// The AMD compilers found, in order of preference, each with whether the user named it
/// explicitly. Explicit settings come first (`$HIPCC`, then `$TILELANG_CLANG`); then a ROCm
/// hipcc (`$ROCM_PATH/bin`, `$HIP_PATH/bin`, `/opt/rocm/bin`, `PATH`); then clang
/// (`clang++-22` .. `clang++-19` on `PATH`, else `clang++` if it is version 19 or newer).
/// `env` reads environment variables (a parameter so that tests need not change the process's).
/// Paths are not canonicalised: clang picks its driver mode from the name it is called by.
pub fn amd_candidates(env: &dyn Fn(&str) -> Option<String>) -> Vec<(Tool, bool)> {
    let mut out: Vec<(Tool, bool)> = Vec::new();
    let mut push = |t: Tool, explicit: bool| {
        if !out.iter().any(|(o, _)| *o == t) {
            out.push((t, explicit));
        }
    };
    if let Some(p) = env("HIPCC").and_then(|h| resolve(&h, env)) {
        push(Tool::Hipcc(p), true);
    }
    if let Some(p) = env("TILELANG_CLANG").and_then(|c| resolve(&c, env)) {
        push(Tool::Clang(p), true);
    }
    for var in ["ROCM_PATH", "HIP_PATH"] {
        if let Some(root) = env(var) {
            let p = PathBuf::from(root).join("bin").join("hipcc");
            if p.is_file() {
                push(Tool::Hipcc(p), false);
            }
        }
    }
    let rocm = PathBuf::from("/opt/rocm/bin/hipcc");
    if rocm.is_file() {
        push(Tool::Hipcc(rocm), false);
    }
    if let Some(p) = resolve("hipcc", env) {
        push(Tool::Hipcc(p), false);
    }
    for v in (19..=22).rev() {
        if let Some(p) = resolve(&format!("clang++-{v}"), env) {
            push(Tool::Clang(p), false);
        }
    }
    if let Some(p) = resolve("clang++", env) {
        if clang_major(&version_banner(&p)).is_some_and(|v| v >= 19) {
            push(Tool::Clang(p), false);
        }
    }
    out
}

/// The `gfx` names in the output of `amdgpu-arch`, `rocm_agent_enumerator` or `rocminfo`
/// (`gfx1100`, `amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-`), bare and deduplicated, in order.
pub fn gfx_names(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (i, _) in text.match_indices("gfx") {
        if text[..i]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        {
            continue;
        }
        let name: String = text[i..]
            .chars()
            .take_while(|c| c.is_ascii_digit() || c.is_ascii_lowercase())
            .collect();
        if name.len() > 3 && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// Archs of the GPUs on this machine, for builds that set no `TILELANG_TARGETS`: NVIDIA through
/// `nvidia-smi`, AMD through `amdgpu-arch`, `rocm_agent_enumerator` or `rocminfo` (the first that
/// names a GPU). AMD archs that tilelang has no target for are left out, with a warning.
pub fn detect_gpus() -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(o) = Command::new("nvidia-smi")
        .args(["--query-gpu=compute_cap", "--format=csv,noheader"])
        .output()
    {
        for line in String::from_utf8_lossy(&o.stdout).lines() {
            if let Some((maj, min)) = line.trim().split_once('.') {
                let arch = format!("sm_{maj}{min}");
                if !out.contains(&arch) {
                    out.push(arch);
                }
            }
        }
    }
    for tool in amd_detectors() {
        let Ok(o) = Command::new(&tool).output() else {
            continue;
        };
        let names = gfx_names(&String::from_utf8_lossy(&o.stdout));
        // rocm_agent_enumerator names the CPU agent `gfx000`.
        let names: Vec<String> = names.into_iter().filter(|n| n != "gfx000").collect();
        if names.is_empty() {
            continue;
        }
        for n in names {
            if Target::by_arch(&n).is_some() {
                if !out.contains(&n) {
                    out.push(n);
                }
            } else {
                println!("cargo:warning=tilelang: found an AMD GPU {n}, for which tilelang has no target; set TILELANG_TARGETS to choose targets");
            }
        }
        break;
    }
    out
}

/// The programs that list AMD GPUs, in the order tried.
fn amd_detectors() -> Vec<PathBuf> {
    let env = |k: &str| std::env::var(k).ok();
    let mut out: Vec<PathBuf> = Vec::new();
    let names = ["amdgpu-arch".to_string()]
        .into_iter()
        .chain((19..=22).rev().map(|v| format!("amdgpu-arch-{v}")));
    out.extend(names.filter_map(|n| resolve(&n, &env)));
    let mut roots: Vec<PathBuf> = ["ROCM_PATH", "HIP_PATH"]
        .iter()
        .filter_map(|v| env(v).map(PathBuf::from))
        .collect();
    roots.push("/opt/rocm".into());
    for r in &roots {
        out.push(r.join("llvm/bin/amdgpu-arch"));
    }
    for tool in ["rocm_agent_enumerator", "rocminfo"] {
        out.extend(resolve(tool, &env));
        out.extend(roots.iter().map(|r| r.join("bin").join(tool)));
    }
    let mut seen = Vec::new();
    out.retain(|p| {
        p.is_file() && !seen.contains(p) && {
            seen.push(p.clone());
            true
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "tilelang-toolchain-test-{}-{name}",
            std::process::id()
        ));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn args(c: &Command) -> Vec<String> {
        c.get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn detection_honours_tilelang_clang() {
        let d = temp("detect");
        let clang = d.join("my-clang++");
        std::fs::write(&clang, "").unwrap();
        let bin = d.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("clang++-20"), "").unwrap();
        let path = bin.display().to_string();
        let given = clang.display().to_string();
        let env = |k: &str| match k {
            "TILELANG_CLANG" => Some(given.clone()),
            "PATH" => Some(path.clone()),
            _ => None,
        };
        let found = amd_candidates(&env);
        assert_eq!(found[0], (Tool::Clang(clang.clone()), true), "{found:?}");
        assert!(
            found.contains(&(Tool::Clang(bin.join("clang++-20")), false)),
            "{found:?}"
        );
        // A bare name is looked up on PATH.
        let env = |k: &str| match k {
            "TILELANG_CLANG" => Some("clang++-20".to_string()),
            "PATH" => Some(path.clone()),
            _ => None,
        };
        assert_eq!(
            amd_candidates(&env)[0],
            (Tool::Clang(bin.join("clang++-20")), true)
        );
        // An explicit hipcc comes first, and a ROCm hipcc before any clang.
        let rocm = d.join("rocm");
        std::fs::create_dir_all(rocm.join("bin")).unwrap();
        std::fs::write(rocm.join("bin/hipcc"), "").unwrap();
        let root = rocm.display().to_string();
        let env = |k: &str| match k {
            "ROCM_PATH" => Some(root.clone()),
            "PATH" => Some(path.clone()),
            _ => None,
        };
        assert_eq!(
            amd_candidates(&env)[0],
            (Tool::Hipcc(rocm.join("bin/hipcc")), false)
        );
        // A TILELANG_CLANG that does not exist is ignored.
        let env = |k: &str| match k {
            "TILELANG_CLANG" => Some("/nonexistent/clang++".to_string()),
            _ => None,
        };
        assert!(amd_candidates(&env)
            .iter()
            .all(|(t, _)| t.path() != Path::new("/nonexistent/clang++")));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn amd_command_lines() {
        let t = Target::by_arch("gfx942").unwrap();
        let (src, inc, out) = (Path::new("k.cu"), Path::new("inc"), Path::new("k.bin"));
        let clang = Tool::Clang("/usr/bin/clang++-19".into()).command(&t, src, inc, out);
        assert_eq!(clang.get_program(), "/usr/bin/clang++-19");
        assert_eq!(
            args(&clang),
            [
                "-x",
                "hip",
                "-std=c++17",
                "--offload-device-only",
                "--no-gpu-bundle-output",
                "-nogpulib",
                "-nogpuinc",
                "-DTL_NO_HIP_HEADERS",
                "--offload-arch=gfx942",
                "-O3",
                "-Rpass-analysis=kernel-resource-usage",
                "-I",
                "inc",
                "-o",
                "k.bin",
                "k.cu",
            ]
        );
        let hipcc = Tool::Hipcc("/opt/rocm/bin/hipcc".into()).command(&t, src, inc, out);
        assert_eq!(hipcc.get_program(), "/opt/rocm/bin/hipcc");
        assert_eq!(
            args(&hipcc),
            [
                "-x",
                "hip",
                "-std=c++17",
                "--offload-device-only",
                "--no-gpu-bundle-output",
                "--offload-arch=gfx942",
                "-O3",
                "-Rpass-analysis=kernel-resource-usage",
                "-I",
                "inc",
                "-o",
                "k.bin",
                "k.cu",
            ]
        );
        assert!(hipcc
            .get_envs()
            .any(|(k, v)| k == "HIP_PLATFORM" && v == Some("amd".as_ref())));
        let nvcc = Tool::Nvcc("/cuda/bin/nvcc".into()).command(
            &Target::by_arch("sm_90").unwrap(),
            src,
            inc,
            out,
        );
        assert_eq!(args(&nvcc)[..2], ["-cubin", "-arch=sm_90"]);
    }

    #[test]
    fn reads_clang_versions_and_gfx_names() {
        assert_eq!(
            clang_major("Debian clang version 19.1.7 (3+b1)\nTarget: x86_64-pc-linux-gnu\n"),
            Some(19)
        );
        assert_eq!(clang_major("HIP version: 6.2.41133-dd7f95766\nAMD clang version 18.0.0git (https://github.com/RadeonOpenCompute/llvm-project roc-6.2.0 24292 26466ce804ac523b398608f17388eb6d605a3f09)\n"), Some(18));
        assert_eq!(clang_major("gcc (Debian 12.2.0-14) 12.2.0"), None);
        // amdgpu-arch: one arch a line.
        assert_eq!(
            gfx_names("gfx1100\ngfx1100\ngfx90a\n"),
            ["gfx1100", "gfx90a"]
        );
        // rocm_agent_enumerator: the CPU agent is gfx000.
        assert_eq!(gfx_names("gfx000\ngfx942\n"), ["gfx000", "gfx942"]);
        // rocminfo: agent names and ISA names with features.
        let rocminfo = "Agent 1\n  Name:                    AMD Ryzen 9 7950X\n  Marketing Name:          AMD Ryzen 9 7950X\nAgent 2\n  Name:                    gfx90a\n  Marketing Name:          AMD Instinct MI210\n  ISA Info:\n    ISA 1\n      Name:                    amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-\n";
        assert_eq!(gfx_names(rocminfo), ["gfx90a"]);
        assert!(gfx_names("Failed to 'dlopen' libhsa-runtime64.so\n").is_empty());
    }

    /// Runs only where clang++-19 is installed (it is on the development machine).
    #[test]
    fn clang_19_builds_every_amd_target() {
        let clang = Path::new("/usr/bin/clang++-19");
        assert!(
            clang.is_file(),
            "this test needs {} (apt-get install clang-19 lld-19; CI installs it)",
            clang.display()
        );
        let tool = Tool::Clang(clang.into());
        for t in tilelang_codegen::target::TARGETS
            .iter()
            .filter(|t| t.vendor == Vendor::Amd)
        {
            assert_eq!(tool.probe(t), Ok(()), "{}", t.arch);
        }
        // Not a HIP compiler: the probe fails with the compiler's error.
        let t = Target::by_arch("gfx1100").unwrap();
        assert!(Tool::Hipcc(clang.into()).probe(&t).is_err());
    }
}
