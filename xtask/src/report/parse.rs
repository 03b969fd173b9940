//! Reading the benches' and the peers' JSON into records.

use bench_record::{text, Measurement};
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;

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

/// `"8"`, `8`, `"08 GEMM"` → `"08"`; other names lowercased (a number reads as its text).
pub fn chapter(s: &str) -> String {
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

/// The record's measurement in the benches' record type (which reads the peers' spellings
/// too), normalised for matching; `None` for a record without a chapter or an implementation.
fn rec(o: &Value) -> Option<Rec> {
    let m = Measurement::deserialize(o).ok()?;
    Some(Rec {
        chapter: chapter(&m.chapter),
        variant: m.variant,
        imp: normalize_impl(&m.imp),
        size_set: m.size_set.to_ascii_lowercase(),
        shape: m.shape.to_string(),
        config: m.config,
        role: m.config_role,
        median_ms: m.median_ms,
        bytes: m.bytes,
        flops: m.flops,
        passed: m.passed,
        max_rel_err: m.max_rel_err,
        us_per_launch: m.us_per_launch,
        mode: m.mode,
        mode_requested: m.mode_requested,
        error: m.error,
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
