//! The table as markdown (`perf.md`).

use super::parse::Rec;
use super::table::{rate, vendor_order, Row, Table};
use std::fmt::Write as _;

pub(crate) fn ms(r: &Option<Rec>) -> String {
    match r {
        Some(r) => match r.median_ms {
            Some(m) => format!(
                "{}{}",
                fmt_ms(m),
                if r.passed == Some(false) { " ✗" } else { "" }
            ),
            None => "error".into(),
        },
        None => "—".into(),
    }
}

fn fmt_ms(m: f64) -> String {
    if m >= 100.0 {
        format!("{m:.1}")
    } else if m >= 1.0 {
        format!("{m:.3}")
    } else {
        format!("{m:.4}")
    }
}

/// `2.41 TB/s` or `612 TFLOPS`.
pub(crate) fn fmt_rate(r: &Rec) -> String {
    match (rate(r), r.flops.is_some()) {
        (Some(x), true) => format!("{:.1} TFLOPS", x / 1e12),
        (Some(x), false) => format!("{:.2} TB/s", x / 1e12),
        (None, _) => "—".into(),
    }
}

pub(crate) fn speedup(theirs: Option<&Rec>, ours: Option<&Rec>) -> String {
    match (
        theirs.and_then(|r| r.median_ms),
        ours.and_then(|r| r.median_ms),
    ) {
        (Some(t), Some(o)) if o > 0.0 => format!("{:.2}×", t / o),
        _ => "—".into(),
    }
}

pub(crate) fn with_config(r: &Option<Rec>) -> String {
    match r {
        Some(rec) if !rec.config.is_empty() => format!("{} `{}`", ms(r), rec.config),
        _ => ms(r),
    }
}

/// One line per distinct set of vendor records among `rows` with more than one vendor, e.g.
/// `08 gemm: cublaslt 1.5500, cublas 1.6000` (fastest first; the GEMM steps of chapter 08 share
/// their vendor records, so they share the line).
fn vendor_lines(rows: &[&Row]) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for r in rows.iter().filter(|r| r.vendors.len() > 1) {
        let mut v: Vec<&Rec> = r.vendors.iter().collect();
        v.sort_by(|a, b| vendor_order(a, b));
        let mut variants: Vec<&str> = v.iter().map(|x| x.variant.as_str()).collect();
        variants.dedup();
        let times: Vec<String> = v
            .iter()
            .map(|x| format!("{} {}", x.imp, ms(&Some((*x).clone()))))
            .collect();
        let line = format!(
            "{} {}: {}",
            r.chapter,
            variants.join(" / "),
            times.join(", ")
        );
        if !lines.contains(&line) {
            lines.push(line);
        }
    }
    lines
}

impl Table {
    /// The report as markdown.
    pub fn markdown(&self) -> String {
        let mut s = String::from(
            "# Performance: tilelang-rs vs PyTorch, torch.compile, Triton and the vendor libraries\n\n",
        );
        let h = &self.ours_header;
        let field = |k: &str| {
            h.get(k)
                .filter(|v| !v.is_empty())
                .cloned()
                .unwrap_or_else(|| "?".into())
        };
        // The vendor libraries' versions that the header has (older files: cuBLAS only).
        let libs: Vec<String> = [
            ("cuBLAS", "cublas_version"),
            ("cuBLASLt", "cublaslt_version"),
            ("cuDNN", "cudnn_version"),
        ]
        .iter()
        .enumerate()
        .filter_map(|(i, (name, k))| match h.get(*k).filter(|v| !v.is_empty()) {
            Some(v) => Some(format!("{name} {v}")),
            None if i == 0 => Some(format!("{name} ?")),
            None => None,
        })
        .collect();
        let _ = writeln!(
            s,
            "GPU: {} ({}), driver {}, {}; date {}; commit {}.",
            field("gpu"),
            field("arch"),
            field("driver"),
            libs.join(", "),
            field("date"),
            field("commit")
        );
        if !self.peers_header.is_empty() {
            // The short facts only (the peers' header also holds sizes, argv, settings).
            let peers: Vec<String> = [
                "torch",
                "triton",
                "cuda_runtime",
                "cudnn",
                "python",
                "gpu",
                "driver",
                "date",
                "seed",
            ]
            .iter()
            .filter_map(|k| {
                self.peers_header
                    .get(*k)
                    .filter(|v| !v.is_empty())
                    .map(|v| format!("{k} {v}"))
            })
            .collect();
            let _ = writeln!(s, "Peers: {}.", peers.join(", "));
        }
        if !self.compile_modes.is_empty() {
            let modes: Vec<String> = self
                .compile_modes
                .iter()
                .map(|(m, n)| format!("`{m}` ({n} records)"))
                .collect();
            let _ = writeln!(
                s,
                "torch.compile: the PyTorch eager implementation compiled with `fullgraph=True`, \
                 static shapes, once per kernel and shape before timing; mode {}. A row whose \
                 compile fell back from the requested mode is marked ↓.",
                modes.join(", ")
            );
        }
        s.push_str(
            "Made by `cargo xtask gpu-bundle` (on a machine without a GPU), then `bash .gpu/run.sh \
             bench` on the GPU machine (our benches, `peers/bench.py`, then this report from their \
             JSON: `cargo xtask report ours.json peers.json`).\n",
        );
        s.push_str(
            "\nTimes are device-time medians in milliseconds with the L2 flushed before every \
             launch (CUDA events for ours and the vendor libraries, `triton.testing.do_bench` for the peers), \
             measured in one session on one GPU. Throughput is ours at its best (the faster of \
             the default and autotuned configs): minimum bytes moved (each input read once, \
             each output written once) or 2·M·N·K flops, per second. The ceilings are measured \
             in the same run: ",
        );
        let _ =
            writeln!(
            s,
            "device-to-device copy {} and the fastest vendor f16 GEMM {}. The vendor column is \
             the fastest vendor library of the row, named. Speed-up = their time / ours \
             (above 1: ours is faster). ✗ marks a failed correctness check; — is not measured.\n",
            self.ceilings
                .bandwidth
                .map_or("not measured".into(), |b| format!("{:.2} TB/s", b / 1e12)),
            self.ceilings.gemm.map_or("not measured".into(), |f| format!(
                "{:.0} TFLOPS ({})",
                f / 1e12,
                self.gemm_ceiling_impl.as_deref().unwrap_or("?")
            )),
        );
        if self.rows.iter().any(|r| r.chapter == "ex") {
            s.push_str(
                "Rows `ex` are the `examples` crate's kernels (`examples/README.md`); their \
                 tutorial size is their small size.\n\n",
            );
        }
        for size in ["tutorial", "large", "smoke"] {
            let rows: Vec<&Row> = self.rows.iter().filter(|r| r.size_set == size).collect();
            if rows.is_empty() {
                continue;
            }
            let _ = writeln!(s, "## {} sizes\n", capitalise(size));
            s.push_str("| # | variant | shape | PyTorch ms | torch.compile ms | Triton ms | vendor ms | ours default ms | ours tuned ms | ours throughput | % of ceiling | vs PyTorch | vs torch.compile | vs Triton | vs vendor |\n");
            s.push_str(
                "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
            );
            for r in &rows {
                let ours = r.ours();
                let vendor = match r.vendor() {
                    Some(v) => format!("{} ({})", ms(&Some(v.clone())), v.imp),
                    None => "—".into(),
                };
                let compiled = match &r.torch_compile {
                    Some(c) if !c.mode_requested.is_empty() && c.mode != c.mode_requested => {
                        format!("{} ↓", ms(&r.torch_compile))
                    }
                    _ => ms(&r.torch_compile),
                };
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                    r.chapter,
                    r.variant,
                    r.shape,
                    ms(&r.pytorch),
                    compiled,
                    ms(&r.triton),
                    vendor,
                    with_config(&r.default),
                    with_config(&r.tuned),
                    ours.map_or("—".into(), fmt_rate),
                    self.percent_of_ceiling(r)
                        .map_or("—".into(), |p| format!("{p:.0}%")),
                    speedup(r.pytorch.as_ref(), ours),
                    speedup(r.torch_compile.as_ref(), ours),
                    speedup(r.triton.as_ref(), ours),
                    speedup(r.vendor(), ours),
                );
            }
            s.push('\n');
            let several = vendor_lines(&rows);
            if !several.is_empty() {
                s.push_str(
                    "Every vendor baseline where there is more than one (fastest first):\n\n",
                );
                for l in several {
                    let _ = writeln!(s, "- {l}");
                }
                s.push('\n');
            }
        }
        if !self.launches.is_empty() {
            s.push_str(
                "Launch overhead: host time per kernel of a tiny kernel (ours: a 1-element vector \
                 add), many calls and one synchronize: `eager` launches back to back, \
                 `graph_replay` replays a CUDA graph of one launch, `graph_x100` replays a graph \
                 of 100 launches (time per kernel); see `peers/README.md`.\n\n| impl | variant | µs per kernel |\n|---|---|---:|\n",
            );
            let mut launches: Vec<&(String, String, f64)> = self.launches.iter().collect();
            launches.sort_by(|a, b| a.1.cmp(&b.1).then(a.2.total_cmp(&b.2)));
            for (imp, variant, us) in launches {
                let _ = writeln!(s, "| {imp} | {variant} | {us:.2} |");
            }
            s.push('\n');
        }
        let failed: Vec<&Row> = self
            .rows
            .iter()
            .filter(|r| {
                [&r.default, &r.tuned]
                    .iter()
                    .any(|x| x.as_ref().is_some_and(|x| x.passed == Some(false)))
            })
            .collect();
        if !failed.is_empty() {
            let _ = writeln!(
                s,
                "**Failed checks:** {}.\n",
                failed
                    .iter()
                    .map(|r| format!("{} {} ({})", r.chapter, r.variant, r.size_set))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        if !self.peer_failures.is_empty() {
            s.push_str("**Peers that failed a check or could not run** (not in the tables):\n\n");
            for r in &self.peer_failures {
                let error = if r.error.is_empty() {
                    "check failed".to_string()
                } else {
                    let e: String = r.error.chars().take(300).collect();
                    e.replace(['\n', '|'], " ")
                };
                let config = if r.config.is_empty() {
                    String::new()
                } else {
                    format!(" `{}`", r.config)
                };
                let _ = writeln!(
                    s,
                    "- {} {} {}{} ({}): {}",
                    r.chapter, r.variant, r.imp, config, r.size_set, error
                );
            }
            s.push('\n');
        }
        s
    }
}

pub(super) fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map_or(String::new(), |f| f.to_uppercase().chain(c).collect())
}
