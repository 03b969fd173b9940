//! Device compilers: where to find them and how to call them.

use std::path::PathBuf;
use std::process::Command;
use tilelang_codegen::target::{Target, Vendor};

/// A compiler able to build objects for a target.
#[derive(Debug, Clone)]
pub enum Tool {
    /// NVIDIA's nvcc, called by its real path (a symlink breaks its header lookup).
    Nvcc(PathBuf),
}

impl Tool {
    /// Identifies the compiler in cache keys: its path and version banner.
    pub fn identity(&self) -> String {
        match self {
            Tool::Nvcc(p) => {
                let v = Command::new(p)
                    .arg("--version")
                    .output()
                    .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                    .unwrap_or_default();
                format!("{}\n{v}", p.display())
            }
        }
    }

    /// The command compiling `src` into the object `out` for `target`.
    pub fn command(
        &self,
        target: &Target,
        src: &std::path::Path,
        include: &std::path::Path,
        out: &std::path::Path,
    ) -> Command {
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
        }
    }
}

/// The compiler for a target, if one is installed.
pub fn for_target(t: &Target) -> Option<Tool> {
    match t.vendor {
        Vendor::Nvidia => find_nvcc().map(Tool::Nvcc),
        Vendor::Amd => None,
    }
}

/// How to get a compiler for a target, for messages.
pub fn hint(t: &Target) -> &'static str {
    match t.vendor {
        Vendor::Nvidia => "install the CUDA toolkit, or the pinned pip wheels of the README, and set NVCC or CUDA_HOME",
        Vendor::Amd => "the AMD targets are not supported yet",
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

/// Archs of the GPUs on this machine (NVIDIA through nvidia-smi), for builds that set no
/// `TILELANG_TARGETS`.
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
    out
}
