//! Reading the benches' and the peers' JSON into records.

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
