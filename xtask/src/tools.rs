//! Host tools the test suite calls, installed when missing.
//!
//! The AMD compile tests and the host emulation of the generated HIP need clang 19 and LLVM 19
//! (`clang++-19`, `llvm-objdump-19`): `_Float16`, `__bf16` and HIP mode without ROCm. A fresh
//! Debian machine has neither; as root we install them from the distribution (`apt-get`), as
//! anyone else we say the exact command. Nothing here is skipped: a missing tool is an error.

use std::path::Path;
use std::process::Command;

/// The programs the tests look for, and the Debian packages that bring them.
const NEEDED: [&str; 2] = ["clang++-19", "llvm-objdump-19"];
const PACKAGES: [&str; 3] = ["clang-19", "lld-19", "llvm-19"];

fn on_path(program: &str) -> bool {
    let Some(path) = std::env::var_os("PATH") else {
        return false;
    };
    std::env::split_paths(&path).any(|dir| dir.join(program).is_file())
        || Path::new("/usr/bin").join(program).is_file()
}

fn missing() -> Vec<&'static str> {
    NEEDED.into_iter().filter(|p| !on_path(p)).collect()
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn apt(args: &[&str]) -> Result<(), String> {
    eprintln!("xtask: apt-get {}", args.join(" "));
    let status = Command::new("apt-get")
        .args(args)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .status()
        .map_err(|e| format!("cannot run apt-get: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("apt-get {} failed ({status})", args.join(" ")))
    }
}

/// Makes sure `clang++-19` and `llvm-objdump-19` can be run, installing them as root.
pub fn ensure_clang() -> Result<(), String> {
    let missing = missing();
    if missing.is_empty() {
        return Ok(());
    }
    let install = format!("apt-get install -y {}", PACKAGES.join(" "));
    if !is_root() || !on_path("apt-get") {
        return Err(format!(
            "the tests need {} (AMD compile and host-emulation tests); install them with \
             `sudo apt-get update && sudo {install}` and run `cargo xtask test` again",
            missing.join(" and ")
        ));
    }
    eprintln!(
        "xtask: {} missing; installing {} from the distribution",
        missing.join(" and "),
        PACKAGES.join(" ")
    );
    apt(&["update", "-q"])?;
    let mut args = vec!["install", "-y", "-q"];
    args.extend(PACKAGES);
    apt(&args)?;
    let still = self::missing();
    if still.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "`{install}` ran but {} is still not on PATH",
            still.join(" and ")
        ))
    }
}
