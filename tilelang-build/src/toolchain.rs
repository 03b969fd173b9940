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
                    .arg(target.nvcc_arch().expect("an NVIDIA target for nvcc"))
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
                let wrote = std::fs::metadata(&out).is_ok_and(|m| m.len() > 0);
                if o.status.success() && wrote {
                    return Ok(());
                }
                if o.status.success() {
                    return Err(format!(
                        "exited successfully but wrote no object at {}",
                        out.display()
                    ));
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
        Vendor::Nvidia => find_nvcc(&|k: &str| std::env::var(k).ok()).map(Tool::Nvcc),
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

/// nvcc, by its real path: `$NVCC`, `$CUDA_HOME/bin/nvcc`, `$CUDA_PATH/bin/nvcc`,
/// `/usr/local/cuda/bin/nvcc`, then `PATH`. `env` reads environment variables.
pub fn find_nvcc(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(p) = env("NVCC") {
        candidates.push(p.into());
    }
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(p) = env(var) {
            candidates.push(PathBuf::from(p).join("bin").join("nvcc"));
        }
    }
    candidates.push("/usr/local/cuda/bin/nvcc".into());
    if let Some(path) = env("PATH") {
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
/// A name is `gfx` and a digit, then digits and lower-case letters; the generic ISAs rocminfo
/// lists beside a GPU's own (`gfx11-generic`, `gfx10-3-generic`) are not GPUs and are left out.
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
        let generic = text[i + name.len()..].starts_with('-');
        let well_formed = name[3..].starts_with(|c: char| c.is_ascii_digit());
        if well_formed && !generic && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// What running a GPU-listing program gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ran {
    /// The program is not installed.
    Missing,
    /// It could not be started, or it exited with an error: why, in words.
    Failed(String),
    /// It succeeded; its standard output.
    Printed(String),
}

impl Ran {
    /// Runs `program` with `args`.
    pub fn run(program: &Path, args: &[&str]) -> Ran {
        match Command::new(program).args(args).output() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ran::Missing,
            Err(e) => Ran::Failed(format!("cannot be run: {e}")),
            Ok(o) if o.status.success() => {
                Ran::Printed(String::from_utf8_lossy(&o.stdout).into_owned())
            }
            Ok(o) => {
                let text = String::from_utf8_lossy(&o.stderr).into_owned()
                    + &String::from_utf8_lossy(&o.stdout);
                let first = text.lines().map(str::trim).find(|l| !l.is_empty());
                Ran::Failed(match first {
                    Some(l) => format!("{}: {l}", o.status),
                    None => o.status.to_string(),
                })
            }
        }
    }
}

/// The GPUs found on this machine, for builds that set no `TILELANG_TARGETS`.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Detected {
    /// Targets for the GPUs found, deduplicated, in the order found.
    pub targets: Vec<Target>,
    /// GPUs skipped and tool output ignored, each with the reason: one cargo warning each.
    pub warnings: Vec<String>,
    /// What the tools that found nothing said (`nvidia-smi: not found`), for the message
    /// saying that no GPU was found.
    pub notes: Vec<String>,
}

impl Detected {
    fn target(&mut self, t: Target) {
        if !self.targets.contains(&t) {
            self.targets.push(t);
        }
    }

    fn warn(&mut self, w: String) {
        if !self.warnings.contains(&w) {
            self.warnings.push(w);
        }
    }

    fn known(vendor: Vendor) -> String {
        let archs: Vec<&str> = tilelang_codegen::target::TARGETS
            .iter()
            .filter(|t| t.vendor == vendor)
            .map(|t| t.arch)
            .collect();
        archs.join(", ")
    }

    /// Reads `nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader`: one
    /// `name, major.minor` line per GPU. A failing nvidia-smi (a broken driver, an old one that
    /// does not know `compute_cap`) and lines that are not a compute capability are ignored with
    /// a warning; a GPU without a target is skipped with one.
    pub fn read_nvidia_smi(&mut self, ran: &Ran) {
        let out = match ran {
            Ran::Missing => return self.notes.push("nvidia-smi: not installed".into()),
            Ran::Failed(why) => {
                return self.warn(format!(
                    "nvidia-smi failed ({why}); ignored, so no NVIDIA GPU is detected (set TILELANG_TARGETS, e.g. sm_90, to choose targets)"
                ))
            }
            Ran::Printed(out) => out,
        };
        let mut any = false;
        for line in out.lines().map(str::trim).filter(|l| !l.is_empty()) {
            let (name, cap) = match line.rsplit_once(',') {
                Some((n, c)) => (n.trim(), c.trim()),
                None => ("", line),
            };
            let Some((major, minor)) = compute_capability(cap) else {
                self.warn(format!(
                    "nvidia-smi printed `{line}`, which does not end in a compute capability such as 9.0; ignored"
                ));
                continue;
            };
            any = true;
            let arch = format!("sm_{major}{minor}");
            match Target::by_arch(&arch) {
                Some(t) => {
                    self.target(t);
                    // Hopper (H100/H200): the sm_90a objects too (wgmma, TMA, warp
                    // specialisation), which the runtime prefers on a 9.0 device; they ran
                    // their checks on an H100 (docs/gpu/h100-check-2026-12-05-hopper.log at commit 0d10254).
                    if arch == "sm_90" {
                        self.target(Target::by_arch("sm_90a").expect("sm_90a is a target"));
                    }
                }
                None => {
                    let why = if (major, minor) < (8, 0) {
                        "tilelang's NVIDIA code needs compute capability 8.0 or newer (mma.sync, ldmatrix, cp.async)"
                    } else if (major, minor) > (9, 0) {
                        "not supported yet (the newest NVIDIA target is sm_90, and sm_90 cubins do not run on a later major version)"
                    } else {
                        "tilelang has no target for it"
                    };
                    let gpu = if name.is_empty() {
                        "an NVIDIA GPU".to_string()
                    } else {
                        name.to_string()
                    };
                    self.warn(format!(
                        "skipping {gpu} (compute capability {major}.{minor}, {arch}): {why}; the NVIDIA targets are {}",
                        Self::known(Vendor::Nvidia)
                    ));
                }
            }
        }
        if !any {
            self.notes.push("nvidia-smi: listed no GPU".into());
        }
    }

    /// Reads the output of an AMD GPU-listing program; whether it named a GPU (then later
    /// programs need not run). A failing program is normal where no AMD GPU is (`amdgpu-arch`
    /// comes with every LLVM): a note, not a warning. A GPU without a target is skipped with a
    /// warning.
    pub fn read_amd(&mut self, tool: &str, ran: &Ran) -> bool {
        let out = match ran {
            Ran::Missing => return false,
            Ran::Failed(why) => {
                self.notes.push(format!("{tool}: {why}"));
                return false;
            }
            Ran::Printed(out) => out,
        };
        // rocm_agent_enumerator names the CPU agent `gfx000`.
        let names: Vec<String> = gfx_names(out)
            .into_iter()
            .filter(|n| n != "gfx000")
            .collect();
        if names.is_empty() {
            self.notes.push(format!("{tool}: listed no GPU"));
            return false;
        }
        for n in names {
            match Target::by_arch(&n) {
                Some(t) => self.target(t),
                None => self.warn(format!(
                    "skipping an AMD GPU {n} (found by {tool}): tilelang has no target for it; the AMD targets are {}",
                    Self::known(Vendor::Amd)
                )),
            }
        }
        true
    }
}

/// `major.minor` as nvidia-smi prints a compute capability (`9.0`, `12.0`).
fn compute_capability(s: &str) -> Option<(u32, u32)> {
    let (major, minor) = s.split_once('.')?;
    let digits = |d: &str| !d.is_empty() && d.len() <= 3 && d.bytes().all(|b| b.is_ascii_digit());
    if !digits(major) || !digits(minor) {
        return None;
    }
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// The GPUs of this machine, for builds that set no `TILELANG_TARGETS`: NVIDIA through
/// `nvidia-smi`, AMD through `amdgpu-arch`, `rocm_agent_enumerator` or `rocminfo` (the first that
/// names a GPU). Never an error: what cannot be used is a warning in [`Detected::warnings`].
pub fn detect_gpus() -> Detected {
    let mut d = Detected::default();
    d.read_nvidia_smi(&Ran::run(
        Path::new("nvidia-smi"),
        &["--query-gpu=name,compute_cap", "--format=csv,noheader"],
    ));
    for tool in amd_detectors() {
        let name = tool.display().to_string();
        if d.read_amd(&name, &Ran::run(&tool, &[])) {
            break;
        }
    }
    d
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
pub(crate) mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "tilelang-toolchain-test-{}-{name}",
            std::process::id()
        ));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[cfg(unix)]
    pub(crate) fn make_executable(p: &Path) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
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
        let nvcc = Tool::Nvcc("/cuda/bin/nvcc".into()).command(
            &Target::by_arch("sm_90a").unwrap(),
            src,
            inc,
            out,
        );
        assert_eq!(
            args(&nvcc)[..2],
            ["-cubin", "-gencode=arch=compute_90a,code=sm_90a"]
        );
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
        // ROCm 6.3+ rocminfo lists generic ISAs beside the GPU's own: not GPUs.
        let generic = "  Name:                    gfx1100\n      Name:                    amdgcn-amd-amdhsa--gfx1100\n      Name:                    amdgcn-amd-amdhsa--gfx11-generic\n      Name:                    amdgcn-amd-amdhsa--gfx10-3-generic\n";
        assert_eq!(gfx_names(generic), ["gfx1100"]);
        // `gfx` without a number is not a name.
        assert!(gfx_names("gfxinfo gfx-driver gfx\n").is_empty());
    }

    fn archs(d: &Detected) -> Vec<&'static str> {
        d.targets.iter().map(|t| t.arch).collect()
    }

    fn smi(out: &str) -> Detected {
        let mut d = Detected::default();
        d.read_nvidia_smi(&Ran::Printed(out.into()));
        d
    }

    #[test]
    fn nvidia_smi_output_maps_to_targets_or_warnings() {
        let d = smi("NVIDIA H200, 9.0\nNVIDIA GeForce RTX 4090, 8.9\nNVIDIA H200, 9.0\n");
        assert_eq!(
            (archs(&d), d.warnings.len()),
            (vec!["sm_90", "sm_90a", "sm_89"], 0),
            "{d:?}"
        );
        for (line, arch) in [
            ("NVIDIA A100-SXM4-80GB, 8.0", "sm_80"),
            ("NVIDIA A10, 8.6", "sm_86"),
        ] {
            assert_eq!(archs(&smi(line)), [arch]);
        }
        // An A100 and a T4: the T4 is skipped, with the reason.
        let d = smi("NVIDIA A100-SXM4-80GB, 8.0\nTesla T4, 7.5\nTesla T4, 7.5\n");
        assert_eq!(archs(&d), ["sm_80"]);
        assert_eq!(d.warnings.len(), 1, "one warning per kind of GPU: {d:?}");
        let w = &d.warnings[0];
        assert!(
            w.starts_with("skipping Tesla T4 (compute capability 7.5, sm_75): "),
            "{w}"
        );
        assert!(w.contains("needs compute capability 8.0 or newer"), "{w}");
        assert!(
            w.contains("the NVIDIA targets are sm_80, sm_86, sm_89, sm_90"),
            "{w}"
        );
        let d = smi("NVIDIA B200, 10.0\n");
        assert!(d.targets.is_empty());
        assert!(
            d.warnings[0].contains("(compute capability 10.0, sm_100): not supported yet"),
            "{d:?}"
        );
        let d = smi("Orin, 8.7");
        assert!(
            d.targets.is_empty() && d.warnings[0].contains("sm_87): tilelang has no target"),
            "{d:?}"
        );
        // A bare capability (no name column) still counts.
        assert_eq!(archs(&smi("9.0\n")), ["sm_90", "sm_90a"]);
    }

    #[test]
    fn a_broken_nvidia_smi_is_ignored_with_a_warning() {
        // Non-zero exit (driver/library mismatch): its output is not read.
        let mut d = Detected::default();
        d.read_nvidia_smi(&Ran::Failed(
            "exit status: 18: Failed to initialize NVML: Driver/library version mismatch".into(),
        ));
        assert!(d.targets.is_empty());
        assert_eq!(d.warnings.len(), 1);
        assert!(d.warnings[0].starts_with("nvidia-smi failed (exit status: 18: Failed to initialize NVML: Driver/library version mismatch); ignored"), "{d:?}");
        // Exit 0 with garbage: every line that is not a compute capability is named and ignored.
        let d = smi(
            "Failed to initialize NVML: Unknown Error\nNVIDIA H200, [N/A]\nNVIDIA H200, 9.0.1\n",
        );
        assert!(d.targets.is_empty());
        assert_eq!(d.warnings.len(), 3, "{d:?}");
        assert!(d.warnings[0].contains("printed `Failed to initialize NVML: Unknown Error`, which does not end in a compute capability such as 9.0; ignored"), "{d:?}");
        assert!(d.warnings[1].contains("`NVIDIA H200, [N/A]`"), "{d:?}");
        assert_eq!(d.notes, ["nvidia-smi: listed no GPU"]);
        // Not installed: nothing to warn about.
        let mut d = Detected::default();
        d.read_nvidia_smi(&Ran::Missing);
        assert_eq!((d.warnings.len(), d.notes.len()), (0, 1));
    }

    #[test]
    fn amd_listings_map_to_targets_or_warnings() {
        let mut d = Detected::default();
        assert!(d.read_amd(
            "amdgpu-arch",
            &Ran::Printed("gfx1100\ngfx1036\ngfx1100\n".into())
        ));
        assert_eq!(archs(&d), ["gfx1100"]);
        assert_eq!(d.warnings.len(), 1);
        assert!(d.warnings[0].starts_with("skipping an AMD GPU gfx1036 (found by amdgpu-arch): tilelang has no target for it; the AMD targets are gfx1100,"), "{d:?}");
        // Failing or empty listings are notes, and the next tool is tried.
        let mut d = Detected::default();
        let why = "exit status: 1: Failed to 'dlopen' libhsa-runtime64.so";
        assert!(!d.read_amd("amdgpu-arch-19", &Ran::Failed(why.into())));
        assert!(!d.read_amd("rocm_agent_enumerator", &Ran::Printed("gfx000\n".into())));
        assert!(d.targets.is_empty() && d.warnings.is_empty());
        assert_eq!(
            d.notes,
            [
                format!("amdgpu-arch-19: {why}"),
                "rocm_agent_enumerator: listed no GPU".into()
            ]
        );
    }

    #[cfg(unix)]
    #[test]
    fn ran_reports_exit_status_and_first_line() {
        let d = temp("ran");
        let fail = d.join("fail.sh");
        std::fs::write(
            &fail,
            "#!/bin/sh\necho '' >&2\necho '  broken driver  ' >&2\necho second >&2\nexit 3\n",
        )
        .unwrap();
        let ok = d.join("ok.sh");
        std::fs::write(&ok, "#!/bin/sh\necho \"$1\"\n").unwrap();
        for f in [&fail, &ok] {
            make_executable(f);
        }
        assert_eq!(
            Ran::run(&fail, &[]),
            Ran::Failed("exit status: 3: broken driver".into())
        );
        assert_eq!(Ran::run(&ok, &["9.0"]), Ran::Printed("9.0\n".into()));
        assert_eq!(Ran::run(&d.join("absent"), &[]), Ran::Missing);
        std::fs::remove_dir_all(&d).unwrap();
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
