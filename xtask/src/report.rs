//! `cargo xtask report <ours.json> <peers.json> [--out docs/perf]`: merges the benches' JSON
//! (ours and the vendor baselines: cuBLAS, cuBLASLt, cuDNN, the copy ceiling) with the peers'
//! (PyTorch eager, `torch.compile` of it, Triton) into the performance table, printed as
//! markdown and written to `perf.md`, with a bar chart `perf.svg`. More than one peers file may
//! be given (the peers run in parts, e.g. `--impls torch_compile` on its own): their records
//! are merged.
//!
//! Rows are our kernels' variants per size set. A peer's record is matched to a row by chapter,
//! size set and variant name: an exact match (ignoring case and punctuation) wins, else a
//! variant whose words are all among the row's (or the other way round), so the peers' "gemm"
//! lines up with every GEMM step of chapter 08 and "softmax" with both softmax variants. Among
//! several records of one peer for the same variant, the fastest counts.
//!
//! A row can have several vendor baselines (cuBLAS and cuBLASLt for the GEMMs, cuDNN, the
//! driver's copy; rocBLAS / MIOpen on AMD): the table's vendor column is the fastest of them
//! (by name), "vs vendor" compares with it, and under each table every vendor time is listed
//! where a row had more than one. The GEMM ceiling is the fastest vendor GEMM.

use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// One measurement, from either file.
#[derive(Debug, Clone, PartialEq)]
pub struct Rec {
    pub chapter: String,
    pub variant: String,
    /// Lowercase: `tilelang`, `pytorch`, `triton`, `cublas`, `cuda`, ...
    pub imp: String,
    pub size_set: String,
    pub shape: String,
    pub config: String,
    /// `default`, `tuned`, `vendor` or empty.
    pub role: String,
    pub median_ms: Option<f64>,
    pub bytes: Option<f64>,
    pub flops: Option<f64>,
    pub passed: Option<bool>,
    pub max_rel_err: Option<f64>,
    pub us_per_launch: Option<f64>,
    /// `torch.compile`'s mode as run, and as asked for (the peers fall back to the default
    /// mode only when the asked one fails); empty for other implementations.
    pub mode: String,
    pub mode_requested: String,
    /// The record's error message, if any.
    pub error: String,
}

/// A parsed file: header fields and records.
#[derive(Debug, Default, Clone)]
pub struct Doc {
    pub header: BTreeMap<String, String>,
    pub recs: Vec<Rec>,
}

impl Doc {
    /// Adds another file's records; its header fills in only the fields this one lacks.
    pub fn extend(&mut self, other: Doc) {
        for (k, v) in other.header {
            self.header.entry(k).or_insert(v);
        }
        self.recs.extend(other.recs);
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        Value::Array(a) => a.iter().map(text).collect::<Vec<_>>().join("x"),
        other => other.to_string(),
    }
}

fn get<'a>(o: &'a Value, keys: &[&str]) -> Option<&'a Value> {
    keys.iter().find_map(|k| o.get(*k)).filter(|v| !v.is_null())
}

fn number(o: &Value, keys: &[&str]) -> Option<f64> {
    get(o, keys).and_then(|v| v.as_f64().or_else(|| v.as_str()?.parse().ok()))
}

/// `"8"`, `8`, `"08 GEMM"` → `"08"`; other names lowercased.
pub fn chapter(v: &Value) -> String {
    let s = text(v);
    let digits: String = s.trim().chars().take_while(char::is_ascii_digit).collect();
    match digits.parse::<u32>() {
        Ok(n) => format!("{n:02}"),
        Err(_) => s.trim().to_ascii_lowercase(),
    }
}

fn normalize_impl(s: &str) -> String {
    let s = s.trim().to_ascii_lowercase();
    match s.as_str() {
        "torch" | "eager" => "pytorch".into(),
        "torch.compile" | "torch-compile" | "torchcompile" | "compile" | "inductor" => {
            "torch_compile".into()
        }
        "ours" | "tilelang-rs" => "tilelang".into(),
        _ => s,
    }
}

fn is_header(o: &Value) -> bool {
    ["record", "type", "kind"]
        .iter()
        .any(|k| o.get(*k).and_then(Value::as_str) == Some("header"))
        || o.get("header") == Some(&Value::Bool(true))
        || (o.get("chapter").is_none() && o.get("median_ms").is_none())
}

fn rec(o: &Value) -> Option<Rec> {
    Some(Rec {
        chapter: chapter(get(o, &["chapter"])?),
        variant: text(get(o, &["variant", "kernel"]).unwrap_or(&Value::Null)),
        imp: normalize_impl(&text(get(o, &["impl", "implementation", "library"])?)),
        size_set: text(get(o, &["size_set", "sizes", "size"]).unwrap_or(&Value::Null))
            .to_ascii_lowercase(),
        shape: text(get(o, &["shape"]).unwrap_or(&Value::Null)),
        config: text(get(o, &["config"]).unwrap_or(&Value::Null)),
        role: text(get(o, &["config_role", "role"]).unwrap_or(&Value::Null)),
        median_ms: number(o, &["median_ms", "ms"]),
        bytes: number(o, &["bytes"]),
        flops: number(o, &["flops"]),
        passed: get(o, &["passed"]).and_then(Value::as_bool),
        max_rel_err: number(o, &["max_rel_err"]),
        us_per_launch: number(o, &["us_per_launch"]),
        mode: text(get(o, &["mode"]).unwrap_or(&Value::Null)),
        mode_requested: text(get(o, &["mode_requested"]).unwrap_or(&Value::Null)),
        error: text(get(o, &["error"]).unwrap_or(&Value::Null)),
    })
}

/// Parses a JSON array of records, an object with `records` / `results` (and maybe `header`),
/// or JSON Lines. Header records (`"record": "header"` and the like) go to [`Doc::header`].
pub fn parse(src: &str) -> Result<Doc, String> {
    let values: Vec<Value> = match serde_json::from_str::<Value>(src) {
        Ok(Value::Array(a)) => a,
        Ok(Value::Object(o)) => {
            let mut v = Vec::new();
            if let Some(h) = o.get("header") {
                let mut h = h.clone();
                h["record"] = Value::String("header".into());
                v.push(h);
            }
            match o.get("records").or_else(|| o.get("results")) {
                Some(Value::Array(a)) => v.extend(a.iter().cloned()),
                _ => v.push(Value::Object(o)),
            }
            v
        }
        Ok(other) => return Err(format!("expected records, found {other}")),
        Err(whole) => src
            .lines()
            .filter(|l| !l.trim().is_empty())
            .enumerate()
            .map(|(i, l)| {
                serde_json::from_str(l)
                    .map_err(|e| format!("not JSON ({whole}) nor JSON Lines (line {}: {e})", i + 1))
            })
            .collect::<Result<_, _>>()?,
    };
    let mut doc = Doc::default();
    for v in &values {
        if is_header(v) {
            if let Value::Object(o) = v {
                for (k, val) in o {
                    if k != "record" {
                        doc.header.insert(k.clone(), text(val));
                    }
                }
            }
        } else if let Some(r) = rec(v) {
            doc.recs.push(r);
        }
    }
    Ok(doc)
}

/// Lowercase words, with the few synonyms the two sides might use.
fn words(s: &str) -> Vec<String> {
    s.to_ascii_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| match w {
            "forward" => "fwd".to_string(),
            "backward" => "bwd".to_string(),
            "attention" => "attn".to_string(),
            "matmul" | "mm" => "gemm".to_string(),
            w => w.to_string(),
        })
        .collect()
}

/// How well a peer's variant name fits ours: exact beats containment (more shared words
/// better); `None` for no match.
fn fit(ours: &str, theirs: &str) -> Option<usize> {
    let (a, b) = (words(ours), words(theirs));
    if a == b {
        return Some(usize::MAX);
    }
    let shared = b.iter().filter(|w| a.contains(w)).count();
    let contained = shared == b.len() || a.iter().all(|w| b.contains(w));
    (contained && shared > 0).then_some(shared)
}

/// The fastest record of `imp` that fits the row best.
fn best_match<'a>(recs: &'a [Rec], ours: &Rec, imp: &str) -> Option<&'a Rec> {
    let (chapter, size_set, variant) = (&ours.chapter, &ours.size_set, &ours.variant);
    let cands: Vec<(&Rec, usize)> = recs
        .iter()
        .filter(|r| {
            r.chapter == *chapter
                && r.size_set == *size_set
                && r.imp == imp
                && r.median_ms.is_some()
        })
        .filter(|r| same_work(r, ours))
        .filter_map(|r| fit(variant, &r.variant).map(|f| (r, f)))
        .collect();
    let top = cands.iter().map(|c| c.1).max()?;
    cands
        .into_iter()
        .filter(|c| c.1 == top)
        .map(|c| c.0)
        .min_by(|a, b| {
            a.median_ms
                .partial_cmp(&b.median_ms)
                .unwrap_or(std::cmp::Ordering::Equal)
        })
}

/// Whether two records count the same work (so describe the same problem size): equal bytes
/// or flops where both have them.
fn same_work(a: &Rec, b: &Rec) -> bool {
    let eq = |x: Option<f64>, y: Option<f64>| match (x, y) {
        (Some(x), Some(y)) => (x - y).abs() <= 1e-9 * x.abs().max(y.abs()),
        _ => true,
    };
    eq(a.bytes, b.bytes) && eq(a.flops, b.flops)
}

/// One line of the table.
#[derive(Debug, Clone)]
pub struct Row {
    pub chapter: String,
    pub variant: String,
    pub size_set: String,
    pub shape: String,
    pub default: Option<Rec>,
    pub tuned: Option<Rec>,
    pub pytorch: Option<Rec>,
    /// `torch.compile` of the PyTorch eager implementation.
    pub torch_compile: Option<Rec>,
    pub triton: Option<Rec>,
    /// Every vendor library's best-fitting record ([`VENDORS`] order).
    pub vendors: Vec<Rec>,
}

/// Orders vendor records for "the fastest": passed (or unchecked) before failed checks, then
/// by median; records without a time last.
fn vendor_order(a: &Rec, b: &Rec) -> std::cmp::Ordering {
    let key = |r: &Rec| (r.passed == Some(false), r.median_ms.is_none());
    key(a).cmp(&key(b)).then(
        a.median_ms
            .partial_cmp(&b.median_ms)
            .unwrap_or(std::cmp::Ordering::Equal),
    )
}

impl Row {
    /// The fastest vendor record with a time (one that passed its check, if any did).
    pub fn vendor(&self) -> Option<&Rec> {
        self.vendors
            .iter()
            .filter(|r| r.median_ms.is_some())
            .min_by(|a, b| vendor_order(a, b))
    }

    /// Ours at its best: the faster of the default and tuned configs.
    pub fn ours(&self) -> Option<&Rec> {
        [self.default.as_ref(), self.tuned.as_ref()]
            .into_iter()
            .flatten()
            .filter(|r| r.median_ms.is_some())
            .min_by(|a, b| {
                a.median_ms
                    .partial_cmp(&b.median_ms)
                    .unwrap_or(std::cmp::Ordering::Equal)
            })
    }
}

/// The measured ceilings: device-to-device copy bandwidth (bytes/s) and cuBLAS GEMM (flop/s).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Ceilings {
    pub bandwidth: Option<f64>,
    pub gemm: Option<f64>,
}

/// Work per second of a record.
pub fn rate(r: &Rec) -> Option<f64> {
    let s = r.median_ms? / 1e3;
    (s > 0.0).then(|| r.bytes.or(r.flops).map(|w| w / s))?
}

/// The merged table.
#[derive(Debug, Clone, Default)]
pub struct Table {
    pub rows: Vec<Row>,
    pub ceilings: Ceilings,
    pub launch_us: Option<f64>,
    /// Every launch-latency record (ours and the peers'): (impl, variant, µs per launch).
    pub launches: Vec<(String, String, f64)>,
    /// The library of the GEMM ceiling (`cublas`, `cublaslt`, ...).
    pub gemm_ceiling_impl: Option<String>,
    pub ours_header: BTreeMap<String, String>,
    pub peers_header: BTreeMap<String, String>,
    /// The peers' records whose check failed or that could not run (a `torch.compile` graph
    /// break, say): listed under the tables, since a row shows only timed records.
    pub peer_failures: Vec<Rec>,
    /// `torch.compile` records per mode that ran.
    pub compile_modes: BTreeMap<String, usize>,
}

/// The implementations that are vendor baselines.
pub const VENDORS: [&str; 9] = [
    "cublas",
    "cublaslt",
    "cudnn",
    "cuda",
    "rocblas",
    "hipblaslt",
    "miopen",
    "hip",
    "rocm",
];

/// Merges our records with the peers'.
pub fn merge(ours: &Doc, peers: &Doc) -> Table {
    let mut t = Table {
        ours_header: ours.header.clone(),
        peers_header: peers.header.clone(),
        ..Table::default()
    };
    let all: Vec<Rec> = ours.recs.iter().chain(&peers.recs).cloned().collect();
    let mut index: BTreeMap<(String, String, String), usize> = BTreeMap::new();
    for r in ours.recs.iter().filter(|r| r.imp == "tilelang") {
        if r.chapter == "launch" {
            // Our eager launch (older records name the variant after the kernel).
            if t.launch_us.is_none() || r.variant == "eager" {
                t.launch_us = r.us_per_launch.or(r.median_ms.map(|m| m * 1e3));
            }
            continue;
        }
        let key = (r.chapter.clone(), r.variant.clone(), r.size_set.clone());
        let i = *index.entry(key).or_insert_with(|| {
            t.rows.push(Row {
                chapter: r.chapter.clone(),
                variant: r.variant.clone(),
                size_set: r.size_set.clone(),
                shape: r.shape.clone(),
                default: None,
                tuned: None,
                pytorch: None,
                torch_compile: None,
                triton: None,
                vendors: Vec::new(),
            });
            t.rows.len() - 1
        });
        let row = &mut t.rows[i];
        match r.role.as_str() {
            "tuned" => row.tuned = Some(r.clone()),
            _ => row.default = Some(r.clone()),
        }
    }
    for row in &mut t.rows {
        let Some(key) = row.default.clone().or_else(|| row.tuned.clone()) else {
            continue;
        };
        let m = |imp: &str| best_match(&all, &key, imp).cloned();
        row.pytorch = m("pytorch");
        row.torch_compile = m("torch_compile");
        row.triton = m("triton");
        row.vendors = VENDORS.iter().filter_map(|v| m(v)).collect();
    }
    t.peer_failures = peers
        .recs
        .iter()
        .filter(|r| r.passed == Some(false))
        .cloned()
        .collect();
    for r in peers.recs.iter().filter(|r| r.imp == "torch_compile") {
        if !r.mode.is_empty() {
            *t.compile_modes.entry(r.mode.clone()).or_default() += 1;
        }
    }
    for r in all.iter().filter(|r| r.chapter == "launch") {
        if let Some(us) = r.us_per_launch.or(r.median_ms.map(|m| m * 1e3)) {
            t.launches.push((r.imp.clone(), r.variant.clone(), us));
        }
    }
    // By size set, then chapter (stable: variants keep the benches' order).
    t.rows.sort_by(|a, b| {
        size_rank(&a.size_set)
            .cmp(&size_rank(&b.size_set))
            .then(a.chapter.cmp(&b.chapter))
    });
    // Ceilings: the 2 GiB copy (else the largest copy baseline); the fastest vendor GEMM at
    // the large size (else the tutorial one). Only baselines whose check passed count.
    let vendor_ok = |r: &&Rec| VENDORS.contains(&r.imp.as_str()) && r.passed != Some(false);
    let copies = all.iter().filter(vendor_ok).filter(|r| r.bytes.is_some());
    let ceiling = copies
        .clone()
        .filter(|r| r.chapter == "ceiling")
        .filter_map(rate)
        .reduce(f64::max);
    t.ceilings.bandwidth = ceiling.or_else(|| {
        copies
            .filter(|r| r.chapter == "01")
            .max_by(|a, b| {
                a.bytes
                    .partial_cmp(&b.bytes)
                    .unwrap_or(std::cmp::Ordering::Equal)
            })
            .and_then(rate)
    });
    let gemm = |size: &str| {
        all.iter()
            .filter(vendor_ok)
            .filter(|r| r.chapter == "08" && r.flops.is_some() && r.size_set == size)
            .filter_map(|r| Some((rate(r)?, r.imp.clone())))
            .max_by(|a, b| a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal))
    };
    if let Some((rate, imp)) = gemm("large").or_else(|| gemm("tutorial")) {
        t.ceilings.gemm = Some(rate);
        t.gemm_ceiling_impl = Some(imp);
    }
    t
}

fn size_rank(s: &str) -> u8 {
    match s {
        "tutorial" => 0,
        "large" => 1,
        _ => 2,
    }
}

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
    /// Percent of the measured ceiling for ours.
    pub fn percent_of_ceiling(&self, row: &Row) -> Option<f64> {
        let ours = row.ours()?;
        let ceiling = if ours.flops.is_some() {
            self.ceilings.gemm
        } else {
            self.ceilings.bandwidth
        }?;
        Some(100.0 * rate(ours)? / ceiling)
    }

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

    /// A grouped horizontal bar chart: per row with at least one other implementation, the
    /// throughput of each implementation relative to the best of the row.
    pub fn svg(&self) -> String {
        const SERIES: [(&str, &str); 6] = [
            ("PyTorch", "#e45756"),
            ("torch.compile", "#f58518"),
            ("Triton", "#4c78a8"),
            ("vendor", "#9d755d"),
            ("ours (default)", "#a0d99b"),
            ("ours (tuned)", "#2ca02c"),
        ];
        let (label_w, bar_w, bar_h, gap) = (330.0, 420.0, 8.0, 10.0);
        let rows: Vec<&Row> = self
            .rows
            .iter()
            .filter(|r| {
                r.pytorch.is_some()
                    || r.torch_compile.is_some()
                    || r.triton.is_some()
                    || !r.vendors.is_empty()
            })
            .collect();
        let mut body = String::new();
        let mut y = 60.0;
        let mut last_size = "";
        for r in &rows {
            if r.size_set != last_size {
                last_size = &r.size_set;
                y += 14.0;
                let _ = writeln!(
                    body,
                    r#"<text x="10" y="{y}" font-weight="bold">{} sizes</text>"#,
                    capitalise(&r.size_set)
                );
                y += 10.0;
            }
            let vendor = r.vendor().cloned();
            let bars = [
                &r.pytorch,
                &r.torch_compile,
                &r.triton,
                &vendor,
                &r.default,
                &r.tuned,
            ];
            let rates: Vec<Option<f64>> = bars.iter().map(|b| b.as_ref().and_then(rate)).collect();
            let best = rates.iter().flatten().copied().fold(0.0, f64::max);
            let group_h = bar_h * SERIES.len() as f64;
            let _ = writeln!(
                body,
                r#"<text x="{}" y="{}" text-anchor="end">{}</text>"#,
                label_w - 8.0,
                y + group_h / 2.0 + 4.0,
                xml(&format!("{} {}", r.chapter, r.variant))
            );
            for (i, (rate, (name, color))) in rates.iter().zip(SERIES).enumerate() {
                let by = y + i as f64 * bar_h;
                match rate {
                    Some(x) if best > 0.0 => {
                        let w = bar_w * x / best;
                        let _ = writeln!(
                            body,
                            r#"<rect x="{label_w}" y="{by}" width="{w:.1}" height="{}" fill="{color}"><title>{}: {:.0}% of the best</title></rect>"#,
                            bar_h - 1.0,
                            xml(name),
                            100.0 * x / best
                        );
                    }
                    _ => {}
                }
            }
            y += group_h + gap;
        }
        let height = y + 20.0;
        let width = label_w + bar_w + 40.0;
        let mut s = format!(
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">"#
        );
        s.push('\n');
        let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
        let _ = writeln!(
            s,
            r#"<text x="10" y="20" font-size="14" font-weight="bold">Throughput relative to the best implementation per kernel (longer is faster)</text>"#
        );
        let mut lx = 10.0;
        for (name, color) in SERIES {
            let _ = writeln!(
                s,
                r#"<rect x="{lx}" y="32" width="10" height="10" fill="{color}"/>"#
            );
            let _ = writeln!(s, r#"<text x="{}" y="41">{}</text>"#, lx + 14.0, xml(name));
            lx += 14.0 + 7.0 * name.len() as f64 + 16.0;
        }
        let _ = writeln!(
            s,
            r##"<line x1="{label_w}" y1="50" x2="{label_w}" y2="{}" stroke="#888"/>"##,
            height - 10.0
        );
        s.push_str(&body);
        s.push_str("</svg>\n");
        s
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map_or(String::new(), |f| f.to_uppercase().chain(c).collect())
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const USAGE: &str =
    "usage: cargo xtask report <ours.json> <peers.json> [more-peers.json ..] [--out docs/perf]";

/// The subcommand: reads the files (ours, then one or more of the peers', merged), prints the
/// markdown, writes `perf.md`, `perf.svg` and copies of the JSON files (the raw data beside the
/// table) into `out`.
pub fn report(args: &[String]) -> Result<(), String> {
    let mut files = Vec::new();
    let mut out = "docs/perf".to_string();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--out" {
            out = it.next().ok_or("--out needs a directory")?.clone();
        } else {
            files.push(a.clone());
        }
    }
    let [ours_path, peers_paths @ ..] = &files[..] else {
        return Err(USAGE.into());
    };
    if peers_paths.is_empty() {
        return Err(USAGE.into());
    }
    let read = |p: &str| -> Result<Doc, String> {
        let src = std::fs::read_to_string(p).map_err(|e| format!("{p}: {e}"))?;
        parse(&src).map_err(|e| format!("{p}: {e}"))
    };
    let ours = read(ours_path)?;
    let mut peers = Doc::default();
    for p in peers_paths.iter().filter(|p| *p != "none") {
        peers.extend(read(p)?);
    }
    let table = merge(&ours, &peers);
    let md = table.markdown();
    print!("{md}");
    let out = Path::new(&out);
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let write = |name: &str, data: &str| {
        std::fs::write(out.join(name), data)
            .map_err(|e| format!("{}: {e}", out.join(name).display()))
    };
    write("perf.md", &md)?;
    write("perf.svg", &table.svg())?;
    let mut copies = vec![(ours_path.clone(), "ours.json".to_string())];
    for (i, p) in peers_paths.iter().enumerate() {
        // The first peers file is `peers.json`; more keep their own names where they can.
        let own = Path::new(p)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned());
        let name = match own {
            _ if i == 0 => "peers.json".to_string(),
            Some(n) if n.ends_with(".json") && n != "ours.json" && n != "peers.json" => n,
            _ => format!("peers-{}.json", i + 1),
        };
        copies.push((p.clone(), name));
    }
    for (src, name) in &copies {
        let dest = out.join(name);
        // Copying a file onto itself would truncate it: compare the resolved paths.
        let same = std::fs::canonicalize(src)
            .ok()
            .is_some_and(|a| std::fs::canonicalize(&dest).is_ok_and(|b| a == b));
        if src != "none" && !same {
            std::fs::copy(src, &dest).map_err(|e| format!("{}: {e}", dest.display()))?;
        }
    }
    eprintln!(
        "wrote {0}/perf.md, {0}/perf.svg and the JSON beside them",
        out.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const OURS: &str = r#"[
{"record":"header","impl":"tilelang","gpu":"NVIDIA H200","arch":"sm_90","driver":"580.1","date":"2026-12-01","commit":"abc"},
{"record":"result","chapter":"01","variant":"copy","impl":"tilelang","size_set":"large","shape":[268435456],"dtype":"f16","config":"b8192","config_role":"default","median_ms":0.30,"min_ms":0.29,"max_ms":0.31,"bytes":1073741824,"max_rel_err":0,"passed":true},
{"record":"result","chapter":"01","variant":"copy","impl":"tilelang","size_set":"large","shape":[268435456],"dtype":"f16","config":"b2048","config_role":"tuned","median_ms":0.25,"min_ms":0.24,"max_ms":0.26,"bytes":1073741824,"max_rel_err":0,"passed":true},
{"record":"result","chapter":"01","variant":"copy","impl":"cuda","size_set":"large","shape":[268435456],"dtype":"f16","config":"cuMemcpyDtoDAsync","config_role":"vendor","median_ms":0.26,"bytes":1073741824,"passed":true},
{"record":"result","chapter":"ceiling","variant":"d2d copy","impl":"cuda","size_set":"large","shape":[1073741824],"config":"cuMemcpyDtoDAsync","median_ms":1.0,"bytes":4.0e12,"passed":true},
{"record":"result","chapter":"08","variant":"gemm pipelined","impl":"tilelang","size_set":"large","shape":[8192,8192,8192],"config":"t128x256x32s2","config_role":"default","median_ms":2.0,"flops":1.1e12,"passed":true},
{"record":"result","chapter":"08","variant":"gemm pipelined","impl":"tilelang","size_set":"large","shape":[8192,8192,8192],"config":"t128x256x32s2","config_role":"tuned","same_as_default":true,"median_ms":2.0,"flops":1.1e12,"passed":true},
{"record":"result","chapter":"08","variant":"gemm naive","impl":"tilelang","size_set":"large","shape":[8192,8192,8192],"config":"n16x16","config_role":"default","median_ms":100.0,"flops":1.1e12,"passed":false,"error":"mismatch"},
{"record":"result","chapter":"08","variant":"gemm","impl":"cublas","size_set":"large","shape":[8192,8192,8192],"config":"cublasGemmEx","config_role":"vendor","median_ms":1.6,"flops":1.1e12,"passed":true},
{"record":"result","chapter":"06","variant":"softmax online","impl":"tilelang","size_set":"tutorial","shape":[4096,16384],"config":"r1x4096","config_role":"default","median_ms":0.1,"bytes":536870912,"passed":true},
{"record":"result","chapter":"04","variant":"fwd","impl":"tilelang","size_set":"tutorial","shape":[8192,4096],"config":"t16x512","config_role":"default","median_ms":0.05,"bytes":134225920,"passed":true},
{"record":"result","chapter":"launch","variant":"vector add N=1","impl":"tilelang","size_set":"tutorial","median_ms":0.0031,"us_per_launch":3.1,"passed":true}
]"#;

    /// The peers' file as JSON Lines with a header object, numeric chapters and other names.
    const PEERS: &str = r#"{"type":"header","torch":"2.9.0","triton":"3.5.0","gpu":"NVIDIA H200"}
{"chapter":1,"variant":"copy","impl":"torch","size_set":"large","shape":[268435456],"median_ms":0.5,"bytes":1073741824,"passed":true}
{"chapter":"01","variant":"copy","impl":"triton","size_set":"large","median_ms":0.4,"bytes":1073741824,"passed":true}
{"chapter":"08","variant":"gemm","impl":"pytorch","size_set":"large","median_ms":1.7,"flops":1.1e12,"passed":true}
{"chapter":"08","variant":"gemm","impl":"triton","size_set":"large","config":"a","median_ms":2.5,"flops":1.1e12,"passed":true}
{"chapter":"08","variant":"gemm","impl":"triton","size_set":"large","config":"b","median_ms":2.2,"flops":1.1e12,"passed":true}
{"chapter":"06","variant":"softmax","impl":"pytorch","size_set":"tutorial","median_ms":0.2,"bytes":536870912,"passed":true}
{"chapter":"06","variant":"softmax 3-pass","impl":"triton","size_set":"tutorial","median_ms":0.15,"bytes":536870912,"passed":true}
{"chapter":"06","variant":"softmax online","impl":"triton","size_set":"tutorial","median_ms":0.12,"bytes":536870912,"passed":true}
{"chapter":"04","variant":"forward","impl":"pytorch","size_set":"tutorial","median_ms":0.1,"bytes":134225920,"passed":true}
{"chapter":"04","variant":"backward","impl":"pytorch","size_set":"tutorial","median_ms":0.2,"bytes":134225920,"passed":true}
{"chapter":"04","variant":"fwd","impl":"pytorch","size_set":"large","median_ms":9.0,"passed":true}"#;

    fn table() -> Table {
        merge(&parse(OURS).unwrap(), &parse(PEERS).unwrap())
    }

    fn row<'a>(t: &'a Table, chapter: &str, variant: &str, size: &str) -> &'a Row {
        t.rows
            .iter()
            .find(|r| r.chapter == chapter && r.variant == variant && r.size_set == size)
            .unwrap_or_else(|| panic!("no row {chapter} {variant} {size}"))
    }

    #[test]
    fn parses_arrays_objects_and_json_lines() {
        let ours = parse(OURS).unwrap();
        assert_eq!(ours.header["gpu"], "NVIDIA H200");
        assert_eq!(ours.recs.len(), 11);
        let peers = parse(PEERS).unwrap();
        assert_eq!(peers.header["torch"], "2.9.0");
        assert_eq!(peers.recs[0].chapter, "01");
        assert_eq!(peers.recs[0].imp, "pytorch");
        let wrapped = parse(r#"{"header":{"gpu":"x"},"records":[{"chapter":"2","variant":"vector add","impl":"triton","size_set":"tutorial","median_ms":1}]}"#).unwrap();
        assert_eq!(wrapped.header["gpu"], "x");
        assert_eq!(wrapped.recs[0].chapter, "02");
        assert!(parse("not json").is_err());
    }

    #[test]
    fn merges_rows_with_peers_vendor_and_ceilings() {
        let t = table();
        // Rows: 01 copy, 04 fwd, 06 softmax online, 08 pipelined, 08 naive (launch is not a row).
        assert_eq!(t.rows.len(), 5);
        assert_eq!(t.launch_us, Some(3.1));
        assert_eq!(t.ceilings.bandwidth, Some(4.0e12 / 1e-3));
        assert!((t.ceilings.gemm.unwrap() - 1.1e12 / 1.6e-3).abs() < 1.0);

        let copy = row(&t, "01", "copy", "large");
        assert_eq!(copy.default.as_ref().unwrap().config, "b8192");
        assert_eq!(copy.tuned.as_ref().unwrap().config, "b2048");
        assert_eq!(copy.ours().unwrap().median_ms, Some(0.25));
        assert_eq!(copy.pytorch.as_ref().unwrap().median_ms, Some(0.5));
        assert_eq!(copy.triton.as_ref().unwrap().median_ms, Some(0.4));
        assert_eq!(copy.vendor().unwrap().imp, "cuda");
        assert_eq!(copy.vendors.len(), 1);

        // The peers' "gemm" serves every GEMM step; Triton's fastest config counts.
        let gemm = row(&t, "08", "gemm pipelined", "large");
        assert_eq!(gemm.triton.as_ref().unwrap().median_ms, Some(2.2));
        assert_eq!(gemm.vendor().unwrap().imp, "cublas");
        assert_eq!(t.gemm_ceiling_impl.as_deref(), Some("cublas"));
        assert!(row(&t, "08", "gemm naive", "large").pytorch.is_some());
        let pct = t.percent_of_ceiling(gemm).unwrap();
        assert!((pct - 80.0).abs() < 1e-9, "{pct}");

        // Exact names beat containment; "softmax" still fits "softmax online".
        let sm = row(&t, "06", "softmax online", "tutorial");
        assert_eq!(sm.triton.as_ref().unwrap().variant, "softmax online");
        assert_eq!(sm.pytorch.as_ref().unwrap().variant, "softmax");
        // A peer's record of another problem size (other bytes) is not compared.
        let mut peers = parse(PEERS).unwrap();
        peers
            .recs
            .iter_mut()
            .filter(|r| r.chapter == "01")
            .for_each(|r| r.bytes = Some(1.0));
        let t2 = merge(&parse(OURS).unwrap(), &peers);
        assert!(row(&t2, "01", "copy", "large").pytorch.is_none());
        // Synonyms, and no match across size sets.
        let fwd = row(&t, "04", "fwd", "tutorial");
        assert_eq!(fwd.pytorch.as_ref().unwrap().median_ms, Some(0.1));
        assert!(fwd.triton.is_none() && fwd.vendors.is_empty() && fwd.vendor().is_none());
    }

    /// OURS with cuBLASLt (faster than cuBLAS), a faster vendor GEMM whose check failed, a
    /// cuDNN softmax and the libraries' versions in the header.
    fn several_vendors() -> Table {
        let ours = OURS
            .replace(
                r#""commit":"abc""#,
                r#""commit":"abc","cublas_version":130001,"cublaslt_version":130100,"cudnn_version":91300"#,
            )
            .replace(
                "\n]",
                r#",
{"record":"result","chapter":"08","variant":"gemm","impl":"cublaslt","size_set":"large","shape":[8192,8192,8192],"config":"cublasLtMatmul f16, f32 compute, heuristic algo id 21","config_role":"vendor","median_ms":1.5,"flops":1.1e12,"passed":true},
{"record":"result","chapter":"08","variant":"gemm","impl":"hipblaslt","size_set":"large","shape":[8192,8192,8192],"config":"x","config_role":"vendor","median_ms":1.0,"flops":1.1e12,"passed":false},
{"record":"result","chapter":"06","variant":"softmax","impl":"cudnn","size_set":"tutorial","shape":[4096,16384],"config":"cudnnSoftmaxForward ACCURATE","config_role":"vendor","median_ms":0.09,"bytes":536870912,"passed":true}
]"#,
            );
        merge(&parse(&ours).unwrap(), &parse(PEERS).unwrap())
    }

    #[test]
    fn the_fastest_passing_vendor_counts() {
        let t = several_vendors();
        let gemm = row(&t, "08", "gemm pipelined", "large");
        let imps: Vec<&str> = gemm.vendors.iter().map(|r| r.imp.as_str()).collect();
        assert_eq!(imps, ["cublas", "cublaslt", "hipblaslt"]);
        // hipBLASLt is faster but failed its check: cuBLASLt is the row's vendor and ceiling.
        assert_eq!(gemm.vendor().unwrap().imp, "cublaslt");
        assert!((t.ceilings.gemm.unwrap() - 1.1e12 / 1.5e-3).abs() < 1.0);
        assert_eq!(t.gemm_ceiling_impl.as_deref(), Some("cublaslt"));
        let sm = row(&t, "06", "softmax online", "tutorial");
        assert_eq!(sm.vendor().unwrap().imp, "cudnn");
        assert_eq!(sm.vendors.len(), 1);
        // A row whose only vendor failed still shows it (with ✗), for lack of another.
        let failed_only = Row {
            vendors: vec![gemm.vendors[2].clone()],
            ..gemm.clone()
        };
        assert_eq!(failed_only.vendor().unwrap().imp, "hipblaslt");

        let md = t.markdown();
        assert!(
            md.contains("cuBLAS 130001, cuBLASLt 130100, cuDNN 91300"),
            "{md}"
        );
        assert!(md.contains("f16 GEMM 733 TFLOPS (cublaslt)"), "{md}");
        let line = md
            .lines()
            .find(|l| l.starts_with("| 08 | gemm pipelined |"))
            .unwrap();
        // Ours 2.0 ms against cuBLASLt's 1.5 ms.
        assert!(
            line.contains("1.500 (cublaslt)") && line.contains("0.75×"),
            "{line}"
        );
        let line = md
            .lines()
            .find(|l| l.starts_with("| 06 | softmax online |"))
            .unwrap();
        assert!(
            line.contains("0.0900 (cudnn)") && line.contains("0.90×"),
            "{line}"
        );
        // Every vendor time, once for the two GEMM rows that share them; none for rows with
        // one vendor.
        let listed: Vec<&str> = md.lines().filter(|l| l.starts_with("- ")).collect();
        assert_eq!(
            listed,
            ["- 08 gemm: cublaslt 1.500, cublas 1.600, hipblaslt 1.000 ✗"],
            "{md}"
        );
        // The chart draws the row's fastest vendor: still one bar per series at most.
        let svg = t.svg();
        assert!(svg.contains("08 gemm pipelined"));
    }

    #[test]
    fn markdown_and_svg() {
        let t = table();
        let md = t.markdown();
        assert!(md.contains("NVIDIA H200"), "{md}");
        assert!(
            md.contains("## Tutorial sizes") && md.contains("## Large sizes"),
            "{md}"
        );
        // 01 copy large: ours 0.25 ms; PyTorch 0.5 → 2.00×, Triton 0.4 → 1.60×, copy 0.26 → 1.04×.
        let line = md.lines().find(|l| l.starts_with("| 01 | copy |")).unwrap();
        assert!(
            line.contains("2.00×") && line.contains("1.60×") && line.contains("1.04×"),
            "{line}"
        );
        assert!(line.contains("4.29 TB/s"), "{line}");
        assert!(line.contains("0.2500 `b2048`"), "{line}");
        // 1 GiB / 0.25 ms = 4.29 TB/s of a 4000 TB/s ceiling.
        assert!(line.contains("| 0% |"), "{line}");
        let naive = md.lines().find(|l| l.contains("gemm naive")).unwrap();
        assert!(naive.contains("✗"), "{naive}");
        assert!(
            md.contains("Failed checks:** 08 gemm naive (large)"),
            "{md}"
        );
        assert!(md.contains("| tilelang | vector add N=1 | 3.10 |"), "{md}");

        let svg = t.svg();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("08 gemm pipelined"));
        assert_eq!(
            svg.matches("<rect").count() - 1 - 6,
            svg.matches("% of the best").count()
        );
        // Every row here has a peer or vendor, so every row is drawn.
        assert_eq!(svg.matches(r#"text-anchor="end""#).count(), 5);
    }

    /// A second peers file (torch.compile run on its own): its records fill the torch.compile
    /// column and its ratio, a fall back from the requested mode is marked, and a compile that
    /// failed (a graph break) is listed under the tables.
    const COMPILED: &str = r#"[
{"record":"header","torch":"2.11.0","impls":["torch_compile"],"seed":"7"},
{"record":"kernel","chapter":"01","variant":"copy","impl":"torch_compile","size_set":"large","median_ms":0.3,"bytes":1073741824,"passed":true,"mode":"max-autotune-no-cudagraphs","mode_requested":"max-autotune-no-cudagraphs"},
{"record":"kernel","chapter":"06","variant":"softmax","impl":"torch_compile","size_set":"tutorial","median_ms":0.125,"bytes":536870912,"passed":true,"mode":"default","mode_requested":"max-autotune-no-cudagraphs","mode_error":"boom"},
{"record":"kernel","chapter":"04","variant":"bwd","impl":"torch_compile","size_set":"tutorial","median_ms":null,"bytes":201338880,"passed":false,"mode":null,"mode_requested":"max-autotune-no-cudagraphs","error":"torch.compile mode=max-autotune-no-cudagraphs: Unsupported: graph break | torch.compile mode=default: Unsupported: graph break"}
]"#;

    #[test]
    fn torch_compile_is_a_column_with_its_ratio() {
        let mut peers = parse(PEERS).unwrap();
        peers.extend(parse(COMPILED).unwrap());
        // The first file's header wins; the second only fills in.
        assert_eq!(peers.header["torch"], "2.9.0");
        assert_eq!(peers.header["seed"], "7");
        let t = merge(&parse(OURS).unwrap(), &peers);
        let copy = row(&t, "01", "copy", "large");
        assert_eq!(copy.torch_compile.as_ref().unwrap().median_ms, Some(0.3));
        assert_eq!(copy.pytorch.as_ref().unwrap().median_ms, Some(0.5));
        let sm = row(&t, "06", "softmax online", "tutorial");
        assert_eq!(sm.torch_compile.as_ref().unwrap().mode, "default");
        assert!(row(&t, "08", "gemm pipelined", "large")
            .torch_compile
            .is_none());
        assert_eq!(t.compile_modes.len(), 2);
        assert_eq!(t.peer_failures.len(), 1);

        let md = t.markdown();
        assert!(
            md.contains("| PyTorch ms | torch.compile ms | Triton ms |")
                && md.contains("| vs PyTorch | vs torch.compile | vs Triton |"),
            "{md}"
        );
        // 01 copy large: ours 0.25 ms, torch.compile 0.3 ms → 1.20×, in its column (after
        // PyTorch's 2.00×, before Triton's 1.60×).
        let line = md.lines().find(|l| l.starts_with("| 01 | copy |")).unwrap();
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        assert_eq!(cells[5], "0.3000", "{line}");
        assert_eq!(&cells[12..15], ["2.00×", "1.20×", "1.60×"], "{line}");
        // 06: compiled in the default mode after the requested one failed: marked.
        let line = md
            .lines()
            .find(|l| l.starts_with("| 06 | softmax online |"))
            .unwrap();
        assert!(
            line.contains("0.1250 ↓") && line.contains("1.25×"),
            "{line}"
        );
        assert!(
            md.contains("`max-autotune-no-cudagraphs` (1 records)")
                && md.contains("`default` (1 records)"),
            "{md}"
        );
        assert!(
            md.contains("- 04 bwd torch_compile (tutorial): torch.compile mode=max-autotune"),
            "{md}"
        );
        // No row lacks a cell: every table line has the header's 15 columns.
        for l in md.lines().filter(|l| l.starts_with("| 0")) {
            assert_eq!(l.matches('|').count(), 16, "{l}");
        }
        let svg = t.svg();
        assert!(svg.contains("torch.compile"));
    }

    /// The examples' records (chapter `ex`) make rows of their own, matched with the peers'
    /// eager and torch.compile records of the same name and bytes.
    #[test]
    fn example_rows_meet_their_peers() {
        let ours = OURS.replace(
            "\n]",
            r#",
{"record":"result","chapter":"ex","title":"examples","variant":"rmsnorm","impl":"tilelang","size_set":"large","shape":[16384,8192],"config":"r1x1024","config_role":"default","median_ms":0.2,"bytes":536887296,"passed":true},
{"record":"result","chapter":"ex","title":"examples","variant":"layernorm","impl":"tilelang","size_set":"large","shape":[16384,8192],"config":"r1x1024","config_role":"default","median_ms":0.25,"bytes":536903680,"passed":true}
]"#,
        );
        let peers = r#"[
{"record":"kernel","chapter":"ex","variant":"rmsnorm","impl":"pytorch","size_set":"large","median_ms":0.4,"bytes":536887296,"passed":true},
{"record":"kernel","chapter":"ex","variant":"rmsnorm","impl":"pytorch","size_set":"large","median_ms":0.9,"bytes":536887296,"passed":true},
{"record":"kernel","chapter":"ex","variant":"rmsnorm","impl":"torch_compile","size_set":"large","median_ms":0.3,"bytes":536887296,"passed":true,"mode":"max-autotune-no-cudagraphs","mode_requested":"max-autotune-no-cudagraphs"},
{"record":"kernel","chapter":"ex","variant":"layernorm","impl":"torch_compile","size_set":"large","median_ms":0.5,"bytes":536903680,"passed":true}
]"#;
        let t = merge(&parse(&ours).unwrap(), &parse(peers).unwrap());
        let rms = row(&t, "ex", "rmsnorm", "large");
        // The fastest of the two eager records; nothing of layernorm's.
        assert_eq!(rms.pytorch.as_ref().unwrap().median_ms, Some(0.4));
        assert_eq!(rms.torch_compile.as_ref().unwrap().median_ms, Some(0.3));
        let ln = row(&t, "ex", "layernorm", "large");
        assert!(ln.pytorch.is_none());
        assert_eq!(ln.torch_compile.as_ref().unwrap().median_ms, Some(0.5));
        let md = t.markdown();
        assert!(
            md.contains("Rows `ex` are the `examples` crate's kernels"),
            "{md}"
        );
        let line = md
            .lines()
            .find(|l| l.starts_with("| ex | rmsnorm |"))
            .unwrap();
        assert!(line.contains("2.00×") && line.contains("1.50×"), "{line}");
        // After the chapters, in the large table.
        let large = md.find("## Large sizes").unwrap();
        assert!(md.find("| ex | rmsnorm |").unwrap() > large);
        assert!(md.find("| ex | rmsnorm |").unwrap() > md.find("| 08 | gemm pipelined |").unwrap());
    }
}
