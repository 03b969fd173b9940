//! `cargo xtask book`: the tutorials as a book in English (`book/en`) and Chinese (`book/zh`).
//!
//! The chapters' code is included from the real files by anchors (`// ANCHOR: name` in
//! `kernels/src/chNN_*.rs`, `# ANCHOR: name` in `peers/bench.py`), never pasted. The
//! performance tables and charts (from the committed JSON of the current run of each card,
//! `docs/perf/current/<card>/`) and the configs each target uses (from the kernels'
//! attributes) are generated here, before mdBook runs, into
//! `book/<lang>/src/generated/` (not committed). Then the two books are checked against each
//! other (the same chapter files, the same includes in each) and built with a pinned mdBook
//! (installed from crates.io into `target/tools` when missing) into `target/book/<lang>`, and
//! every relative link of the output is checked.

use crate::report::{fmt_rate, merge, ms, parse, speedup, with_config, Doc, Row};
use crate::workspace::root;
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The mdBook the books are built with.
const MDBOOK: &str = "0.5.4";

/// The runs the performance tables come from: one folder per card, each a run's `ours.json`
/// with the peers' `peers.json` / `peers-compile.json` beside it. Nothing else under
/// `docs/perf/` is read; a new run of a card replaces its folder.
pub const CURRENT: &str = "docs/perf/current";

/// The languages, each a book under `book/`.
pub const LANGS: [&str; 2] = ["en", "zh"];

pub fn book() -> Result<(), String> {
    let root = root();
    check_parity(&root)?;
    for lang in LANGS {
        generate_tables(&root, lang)?;
    }
    let mdbook = mdbook(&root)?;
    for lang in LANGS {
        let out = root.join("target/book").join(lang);
        let o = Command::new(&mdbook)
            .arg("build")
            .arg(root.join("book").join(lang))
            .arg("-d")
            .arg(&out)
            .output()
            .map_err(|e| format!("{}: {e}", mdbook.display()))?;
        let log = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        // mdBook reports a failed include as an error and still writes the page.
        if !o.status.success() || log.contains("ERROR") || log.contains("[ERROR]") {
            return Err(format!("mdbook build book/{lang} failed:\n{log}"));
        }
        check_links(&out)?;
        println!("book/{lang} -> {}", out.join("index.html").display());
    }
    Ok(())
}

/// `target/tools/bin/mdbook` at [`MDBOOK`], installed there from crates.io when missing.
fn mdbook(root: &Path) -> Result<PathBuf, String> {
    let tools = root.join("target/tools");
    let exe = tools.join("bin/mdbook");
    let version = |exe: &Path| {
        Command::new(exe)
            .arg("--version")
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    if version(&exe).is_some_and(|v| v.ends_with(MDBOOK)) {
        return Ok(exe);
    }
    eprintln!("xtask: installing mdbook {MDBOOK} into {}", tools.display());
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["install", "mdbook", "--locked", "--no-default-features"])
        .args(["--version", MDBOOK, "--root"])
        .arg(&tools)
        .status()
        .map_err(|e| format!("cargo install mdbook: {e}"))?;
    if !status.success() || !version(&exe).is_some_and(|v| v.ends_with(MDBOOK)) {
        return Err(format!(
            "could not install mdbook {MDBOOK} (cargo install mdbook --version {MDBOOK} --root {})",
            tools.display()
        ));
    }
    Ok(exe)
}

/// The chapter files a book's `SUMMARY.md` links, in order.
fn chapters(summary: &str) -> Vec<String> {
    summary
        .lines()
        .filter_map(|l| {
            let (_, rest) = l.split_once("](")?;
            let file = rest.split(')').next()?;
            (!file.is_empty()).then(|| file.to_string())
        })
        .collect()
}

/// The `{{#include ..}}` directives of a chapter, in order.
fn includes(text: &str) -> Vec<String> {
    text.match_indices("{{#include ")
        .filter_map(|(i, _)| {
            let rest = &text[i + "{{#include ".len()..];
            rest.split_once("}}")
                .map(|(path, _)| path.trim().to_string())
        })
        .collect()
}

/// Both books list the same chapter files, and each chapter includes the same code and
/// tables in the same order: the Chinese book is the English one translated, never a
/// different selection.
fn check_parity(root: &Path) -> Result<(), String> {
    let read =
        |p: PathBuf| std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()));
    let summaries: Vec<String> = LANGS
        .iter()
        .map(|l| read(root.join("book").join(l).join("src/SUMMARY.md")))
        .collect::<Result<_, _>>()?;
    let lists: Vec<Vec<String>> = summaries.iter().map(|s| chapters(s)).collect();
    if lists[0] != lists[1] {
        return Err(format!(
            "book/en and book/zh list different chapters:\n  en: {:?}\n  zh: {:?}",
            lists[0], lists[1]
        ));
    }
    let mut errors = Vec::new();
    for file in &lists[0] {
        let texts: Vec<String> = LANGS
            .iter()
            .map(|l| read(root.join("book").join(l).join("src").join(file)))
            .collect::<Result<_, _>>()?;
        let (en, zh) = (includes(&texts[0]), includes(&texts[1]));
        if en != zh {
            errors.push(format!(
                "{file}: the includes differ\n  en: {en:?}\n  zh: {zh:?}"
            ));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("\n"))
    }
}

/// The chapters' performance tables, `src/generated/perf-NN.md`, for every chapter the book
/// includes one of.
fn generate_tables(root: &Path, lang: &str) -> Result<(), String> {
    let src = root.join("book").join(lang).join("src");
    let summary = std::fs::read_to_string(src.join("SUMMARY.md")).map_err(|e| e.to_string())?;
    let mut wanted = BTreeSet::new();
    let mut configs = BTreeSet::new();
    for file in chapters(&summary) {
        let text = std::fs::read_to_string(src.join(&file)).map_err(|e| e.to_string())?;
        for inc in includes(&text) {
            if let Some(ch) = inc
                .strip_prefix("generated/perf-")
                .and_then(|r| r.strip_suffix(".md"))
            {
                wanted.insert(ch.to_string());
            }
            if let Some(ch) = inc
                .strip_prefix("generated/configs-")
                .and_then(|r| r.strip_suffix(".md"))
            {
                configs.insert(ch.to_string());
            }
        }
    }
    let dir = src.join("generated");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    for ch in configs {
        let md = chapter_configs(root, &ch, lang)?;
        std::fs::write(dir.join(format!("configs-{ch}.md")), md).map_err(|e| e.to_string())?;
    }
    let runs = current_runs(root)?;
    for ch in wanted {
        // The cards that measured the chapter first, then a line for each that did not.
        let (mut md, mut missing) = (String::new(), String::new());
        let mut any = false;
        for run in &runs {
            if !run.ours.recs.iter().any(|r| r.chapter == ch) {
                missing.push_str(&not_in_run(run, lang));
                continue;
            }
            any = true;
            md.push_str(&chapter_table(&ch, run, lang));
            let mut chart = merge(&run.ours, &run.peers);
            chart.rows.retain(|r| r.chapter == ch);
            std::fs::write(dir.join(format!("perf-{ch}-{}.svg", run.card)), chart.svg())
                .map_err(|e| e.to_string())?;
        }
        if !any {
            return Err(format!(
                "no run under {CURRENT}/ measured chapter {ch} (an ours.json with its records)"
            ));
        }
        md.push_str(&missing);
        std::fs::write(dir.join(format!("perf-{ch}.md")), md).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Chapter `ch`'s kernels (in `kernels/src/chNN_*.rs`) with the config each target runs
/// unless the autotuner picks another: the `defaults` of the attribute, `configs[0]` for a
/// target it does not name.
fn chapter_configs(root: &Path, ch: &str, lang: &str) -> Result<String, String> {
    let found = tilelang_build::find::kernels_with(&root.join("kernels/src"), None)?;
    let mut kernels: Vec<&tilelang_build::find::Found> = found
        .iter()
        .filter(|f| {
            f.file
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(&format!("ch{ch}_")))
        })
        .collect();
    kernels.sort_by_key(|f| f.ir.name.to_string());
    const TARGETS: [&str; 7] = [
        "sm_90", "gfx1100", "gfx1151", "gfx1201", "gfx90a", "gfx942", "cpu",
    ];
    let (head, note) = match lang {
        "zh" => (
            "| 内核 | 配置 |",
            "内核为 AMD 目标指定的默认配置沿用原始笔记本在这些 GPU 上的测量（例如在集成显卡 gfx1151 上每个线程块处理一行）；未指定的目标使用第一个配置。AMD 目标在 CI 中编译，生成的代码在主机上以设备模型的模拟运行并与 CPU 后端对照，但尚未在 AMD 硬件上运行。",
        ),
        _ => (
            "| kernel | configs |",
            "Where a kernel names AMD defaults, they follow the original notebooks' measurements on those GPUs (one row per block on the integrated gfx1151, for example); a target it does not name uses its first config. The AMD targets are compiled in CI and their generated code runs on the host under an emulation of the device model, checked against the CPU backend; it has not run on AMD hardware.",
        ),
    };
    let mut out = String::new();
    let _ = writeln!(out, "{head} {} |", TARGETS.join(" | "));
    let _ = writeln!(out, "|---|---|{}", "---|".repeat(TARGETS.len()));
    for f in kernels {
        let k = &f.ir;
        let names: Vec<String> = k.configs.iter().map(|c| format!("`{}`", c.name)).collect();
        let pick = |arch: &str| {
            let i = k
                .defaults
                .iter()
                .find(|(a, _)| a == arch)
                .map_or(0, |(_, i)| *i);
            format!("`{}`", k.configs[i].name)
        };
        let cells: Vec<String> = TARGETS.iter().map(|t| pick(t)).collect();
        let _ = writeln!(
            out,
            "| `{}` | {} | {} |",
            k.name,
            names.join(", "),
            cells.join(" | ")
        );
    }
    let _ = writeln!(out, "\n{note}");
    Ok(out)
}

/// One card's current run: its folder's name (`h100`), its path from the repository root and
/// its JSON.
struct Run {
    card: String,
    path: String,
    ours: Doc,
    peers: Doc,
}

/// Every folder of [`CURRENT`], in name order: each must hold an `ours.json` (the peers' JSON
/// is optional). An empty or missing `current/` is an error, not an empty book.
fn current_runs(root: &Path) -> Result<Vec<Run>, String> {
    let dir = root.join(CURRENT);
    let mut cards: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    cards.sort();
    let read = |p: PathBuf| -> Result<Doc, String> {
        let s = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        parse(&s).map_err(|e| format!("{}: {e}", p.display()))
    };
    let mut runs = Vec::new();
    for p in cards {
        let ours = read(p.join("ours.json"))?;
        let mut peers = Doc::default();
        for name in ["peers.json", "peers-compile.json"] {
            if p.join(name).is_file() {
                peers.extend(read(p.join(name))?);
            }
        }
        runs.push(Run {
            card: p.file_name().unwrap().to_string_lossy().into_owned(),
            path: format!("{CURRENT}/{}", p.file_name().unwrap().to_string_lossy()),
            ours,
            peers,
        });
    }
    if runs.is_empty() {
        return Err(format!(
            "{}: no run (a folder per card with its ours.json)",
            dir.display()
        ));
    }
    Ok(runs)
}

/// The words of a table in one language.
struct Words {
    source: &'static str,
    size: [&'static str; 2],
    head: &'static str,
    ceiling: &'static str,
    gemm_ceiling: &'static str,
    no_peers: &'static str,
    not_in_run: &'static str,
    chart: &'static str,
}

fn words(lang: &str) -> Words {
    match lang {
        "zh" => Words {
            source: "测量：{gpu}，{date}，提交 `{commit}`；数据：`{run}/`，由 `cargo xtask book` 从其 JSON 生成。时间为设备时间中位数（毫秒），每次启动前清空 L2；加速比 = 对方时间 / 本库时间（大于 1 表示本库更快）。",
            size: ["教程规模", "大规模"],
            head: "| 变体 | 形状 | PyTorch | Triton | 厂商库 | 本库（配置） | 吞吐 | 占上限 | 相对 PyTorch | 相对 Triton |",
            ceiling: "同一次运行中测得的设备内拷贝上限：{bw} TB/s。",
            gemm_ceiling: "同一次运行中最快的厂商 f16 GEMM：{tf} TFLOPS（GEMM 各行的上限）。",
            no_peers: "这次运行没有测量 PyTorch 与 Triton（它们更早的数字见 `docs/perf/README.md` 所列的运行）。",
            not_in_run: "{gpu} 上的当前运行（`{run}/`）没有本章的完整 JSON 记录；它的 README 说明了原因以及其余数字在哪里。",
            chart: "同一次运行的图表",
        },
        _ => Words {
            source: "Measured on {gpu}, {date}, commit `{commit}`; data: `{run}/`, generated from its JSON by `cargo xtask book`. Times are device-time medians in ms with the L2 flushed before every launch; speed-up = their time / ours (above 1: ours is faster).",
            size: ["Tutorial size", "Large size"],
            head: "| variant | shape | PyTorch | Triton | vendor | ours (config) | throughput | % of ceiling | vs PyTorch | vs Triton |",
            ceiling: "Device-to-device copy ceiling measured in the same run: {bw} TB/s.",
            gemm_ceiling: "Fastest vendor f16 GEMM in the same run: {tf} TFLOPS (the ceiling of the GEMM rows).",
            no_peers: "PyTorch and Triton were not measured in this run (earlier runs are listed in `docs/perf/README.md`).",
            not_in_run: "The current run on {gpu} (`{run}/`) has no full JSON records of this chapter; its README says why and where the rest of its numbers are.",
            chart: "The same run as a chart",
        },
    }
}

/// The note that a card's current run does not have chapter `ch`.
fn not_in_run(run: &Run, lang: &str) -> String {
    let gpu = run
        .ours
        .header
        .get("gpu")
        .cloned()
        .unwrap_or_else(|| run.card.clone());
    format!(
        "**{gpu}**\n\n{}\n\n",
        words(lang)
            .not_in_run
            .replace("{gpu}", &gpu)
            .replace("{run}", &run.path)
    )
}

/// Chapter `ch`'s rows of one card's run as Markdown: the card, the source line, then a table
/// per size set and the chart.
fn chapter_table(ch: &str, run: &Run, lang: &str) -> String {
    let w = words(lang);
    let (ours, peers) = (&run.ours, &run.peers);
    let table = merge(ours, peers);
    let h = &table.ours_header;
    let get = |k: &str| h.get(k).cloned().unwrap_or_else(|| "?".into());
    let commit: String = get("commit").chars().take(7).collect();
    let mut out = String::new();
    let _ = writeln!(out, "**{}**\n", get("gpu"));
    let _ = writeln!(
        out,
        "{}\n",
        w.source
            .replace("{gpu}", &get("gpu"))
            .replace("{date}", &get("date"))
            .replace("{commit}", &commit)
            .replace("{run}", &run.path)
    );
    if !peers.recs.iter().any(|r| r.chapter == ch) {
        let _ = writeln!(out, "{}\n", w.no_peers);
    }
    for (i, size) in ["tutorial", "large"].iter().enumerate() {
        let rows: Vec<&Row> = table
            .rows
            .iter()
            .filter(|r| r.chapter == ch && r.size_set == *size)
            .collect();
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(out, "**{}**\n\n{}", w.size[i], w.head);
        let _ = writeln!(out, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
        for r in rows {
            let best = r.ours();
            let vendor = r
                .vendor()
                .map(|v| format!("{} ({})", ms(&Some(v.clone())), v.imp))
                .unwrap_or_else(|| "—".into());
            let ours_cell = with_config(&best.cloned());
            let rate_cell = best.map_or_else(|| "—".into(), fmt_rate);
            let pct = table
                .percent_of_ceiling(r)
                .map_or_else(|| "—".into(), |p| format!("{p:.0}%"));
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                r.variant,
                r.shape,
                ms(&r.pytorch),
                ms(&r.triton),
                vendor,
                ours_cell,
                rate_cell,
                pct,
                speedup(r.pytorch.as_ref(), best),
                speedup(r.triton.as_ref(), best),
            );
        }
        out.push('\n');
    }
    if let Some(bw) = table.ceilings.bandwidth {
        let _ = writeln!(
            out,
            "{}",
            w.ceiling.replace("{bw}", &format!("{:.2}", bw / 1e12))
        );
    }
    let gemm_rows = table
        .rows
        .iter()
        .any(|r| r.chapter == ch && r.ours().is_some_and(|o| o.flops.is_some()));
    if let (true, Some(tf)) = (gemm_rows, table.ceilings.gemm) {
        let _ = writeln!(
            out,
            "{}",
            w.gemm_ceiling.replace("{tf}", &format!("{:.0}", tf / 1e12))
        );
    }
    // The chart beside it (`generate_tables` writes it; the link is relative to the chapter's
    // page, which includes this text from `src/`).
    let _ = writeln!(
        out,
        "\n![{}](generated/perf-{ch}-{}.svg)\n",
        w.chart, run.card
    );
    out
}

/// Every relative link (`href="..."`, `src="..."`) of the built pages names a file that exists.
fn check_links(out: &Path) -> Result<(), String> {
    let mut pages = Vec::new();
    html_files(out, &mut pages);
    let mut broken = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap_or_default();
        for attr in ["href=\"", "src=\""] {
            for (i, _) in text.match_indices(attr) {
                let rest = &text[i + attr.len()..];
                let Some(link) = rest.split('"').next() else {
                    continue;
                };
                let path = link.split(['#', '?']).next().unwrap_or("");
                if path.is_empty()
                    || path.contains("://")
                    || path.starts_with("mailto:")
                    || path.starts_with("data:")
                {
                    continue;
                }
                let target = page.parent().unwrap().join(path);
                if !target.exists() {
                    broken.push(format!(
                        "{}: {link}",
                        page.strip_prefix(out).unwrap_or(page).display()
                    ));
                }
            }
        }
    }
    if broken.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "broken links in {}:\n  {}",
            out.display(),
            broken.join("\n  ")
        ))
    }
}

fn html_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            html_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "html") {
            out.push(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_and_includes_are_read_in_order() {
        let s = "# Summary\n\n[Introduction](introduction.md)\n\n- [01 Copy](ch01-copy.md)\n- [02 Vector add]()\n";
        assert_eq!(chapters(s), ["introduction.md", "ch01-copy.md"]);
        let t = "a\n```rust\n{{#include ../../../kernels/src/ch01_copy.rs:copy_tiled}}\n```\n{{#include generated/perf-01.md}}\n";
        assert_eq!(
            includes(t),
            [
                "../../../kernels/src/ch01_copy.rs:copy_tiled",
                "generated/perf-01.md"
            ]
        );
    }

    /// The committed books mirror each other (the same check `cargo xtask book` runs first).
    #[test]
    fn the_two_books_list_the_same_chapters_and_includes() {
        check_parity(&root()).unwrap();
    }

    /// The configs table names chapter 01's kernels and the config sm_90 defaults to.
    #[test]
    fn chapter_configs_come_from_the_kernels() {
        let md = chapter_configs(&root(), "01", "en").unwrap();
        assert!(
            md.contains("| `copy_tiled` | `b1024`, `b2048`, `b8192` | `b1024` |"),
            "{md}"
        );
        assert!(md.contains("| `copy_one_thread` |"), "{md}");
    }

    /// The tables come from `docs/perf/current/`, one run per card (its folder holds the
    /// run and nothing else: no dated runs beside it).
    #[test]
    fn current_holds_one_run_per_card() {
        let runs = current_runs(&root()).unwrap();
        let cards: Vec<&str> = runs.iter().map(|r| r.card.as_str()).collect();
        assert_eq!(cards, ["h100", "h200"]);
        for run in &runs {
            let gpu = &run.ours.header["gpu"];
            assert!(
                gpu.to_lowercase().contains(&run.card),
                "{}: {gpu}",
                run.path
            );
        }
    }

    /// Chapter 01's table can be generated from the current runs, in both languages, with
    /// each card's chart named after the card.
    #[test]
    fn chapter_tables_come_from_committed_runs() {
        let runs = current_runs(&root()).unwrap();
        let run = runs.iter().find(|r| r.card == "h200").unwrap();
        for lang in LANGS {
            let md = chapter_table("01", run, lang);
            assert!(md.contains("| copy |"), "{md}");
            assert!(md.contains("×"), "{md}");
            assert!(md.contains("docs/perf/current/h200/"), "{md}");
            assert!(md.contains("](generated/perf-01-h200.svg)"), "{md}");
        }
    }
}
