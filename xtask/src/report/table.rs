//! Merging our records with the peers' and the vendors' into the rows of the table, and the
//! measured ceilings.

use super::parse::{Doc, Rec};
use std::collections::BTreeMap;

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
pub(super) fn vendor_order(a: &Rec, b: &Rec) -> std::cmp::Ordering {
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

/// The implementations that are vendor baselines: the libraries our benches call, and the
/// library kernels the peers reach through PyTorch under names of their own (attention's
/// SDPA on its FlashAttention-2 and cuDNN backends, `peers/examples.py`).
pub const VENDORS: [&str; 11] = [
    "cublas",
    "cublaslt",
    "cudnn",
    "cuda",
    "rocblas",
    "hipblaslt",
    "miopen",
    "hip",
    "rocm",
    "sdpa_flash",
    "sdpa_cudnn",
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
}
