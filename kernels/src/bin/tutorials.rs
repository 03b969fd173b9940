//! Runs the ten tutorial chapters on the best device present: a correctness check against a
//! float64 reference for every variant, then a timing, printed as one table.
//!
//! ```text
//! cargo run --release -p kernels --bin tutorials [-- --scale tutorial|reduced] [--only 06] [--seed N] [--all-configs]
//! ```
//! On the CPU backend the default scale is `reduced` (each chapter states the sizes it used);
//! on a GPU it is `tutorial`. Each kernel runs in its default config for the device's arch;
//! with `--all-configs` every compiled config of every kernel is checked and timed (one row
//! each, the default first). The exit status is 1 if any check failed.

use kernels::check::{self, Case, Rng, Scale};
use kernels::CHAPTERS;
use std::process::ExitCode;
use tilelang::{Backend, Device};

fn usage() -> ExitCode {
    eprintln!(
        "usage: tutorials [--scale tutorial|reduced] [--only CHAPTER] [--seed N] [--all-configs]"
    );
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let mut scale = None;
    let mut only: Option<String> = None;
    let mut seed = Rng::fresh_seed();
    let mut all_configs = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--all-configs" {
            all_configs = true;
            continue;
        }
        match (a.as_str(), args.next()) {
            ("--scale", Some(v)) if v == "tutorial" => scale = Some(Scale::Tutorial),
            ("--scale", Some(v)) if v == "reduced" => scale = Some(Scale::Reduced),
            ("--only", Some(v)) => only = Some(v),
            ("--seed", Some(v)) => match v.parse() {
                Ok(s) => seed = s,
                Err(_) => return usage(),
            },
            _ => return usage(),
        }
    }
    check::set_all_configs(all_configs);
    let dev = match Device::best() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    #[allow(unreachable_patterns)]
    let scale = scale.unwrap_or(match dev.backend() {
        Backend::Cpu => Scale::Reduced,
        _ => Scale::Tutorial,
    });
    let configs = if all_configs { "all" } else { "default" };
    println!(
        "device: {} (arch {}), scale: {scale:?}, configs: {configs}, seed: {seed}",
        dev.name(),
        dev.arch()
    );
    if dev.backend() == Backend::Cpu {
        println!("note: the CPU backend is the reference implementation, not a fast path; its times are not GPU times.");
    }
    println!();

    let mut cases: Vec<Case> = Vec::new();
    let mut failed_chapters = Vec::new();
    for (title, run) in CHAPTERS {
        if only.as_deref().is_some_and(|o| !title.starts_with(o)) {
            continue;
        }
        eprintln!("running {title} ...");
        match run(&dev, scale, seed) {
            Ok(c) => cases.extend(c),
            Err(e) => {
                eprintln!("  error: {e}");
                failed_chapters.push(format!("{title}: {e}"));
            }
        }
    }

    let header = [
        "chapter",
        "variant",
        "config",
        "size",
        "max rel err",
        "check",
        "median ms",
        "throughput",
    ];
    let rows: Vec<[String; 8]> = cases
        .iter()
        .map(|c| {
            [
                c.chapter.to_string(),
                c.variant.clone(),
                c.config.clone(),
                c.size.clone(),
                format!("{:.2e}", c.check.max_rel),
                if c.check.passed() {
                    "pass".into()
                } else {
                    "FAIL".into()
                },
                format!("{:.4}", c.median_ms),
                c.throughput(),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for r in &rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.len());
        }
    }
    let line = |cells: Vec<&str>| {
        let s: Vec<String> = cells
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        println!("| {} |", s.join(" | "));
    };
    line(header.to_vec());
    println!(
        "|{}|",
        widths
            .iter()
            .map(|w| "-".repeat(w + 2))
            .collect::<Vec<_>>()
            .join("|")
    );
    for r in &rows {
        line(r.iter().map(String::as_str).collect());
    }

    let failures: Vec<&Case> = cases.iter().filter(|c| !c.check.passed()).collect();
    println!();
    for c in &failures {
        println!(
            "FAIL {} {} [{}]: {}",
            c.chapter, c.variant, c.config, c.check
        );
    }
    for f in &failed_chapters {
        println!("ERROR {f}");
    }
    let passed = cases.len() - failures.len();
    println!(
        "{passed} passed, {} failed",
        failures.len() + failed_chapters.len()
    );
    if failures.is_empty() && failed_chapters.is_empty() && !cases.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
