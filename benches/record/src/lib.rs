//! The bench JSON: a header record, then one record per measurement, written by the benches
//! (`benches/benches/tutorials.rs`) and read by `cargo xtask report`, which merges them with the
//! peers' records (`peers/bench.py`: the same measurement fields, `"record": "kernel"` or
//! `"launch"`, and more of their own). The fields are described in `benches/README.md`.
//!
//! Writing is exact: the file is one record per line with the keys sorted, as
//! [`to_json_lines`] writes it. Reading is lenient, since the peers' script and older benches
//! write the same fields in other types: a measurement's field of another type reads as absent
//! (or as its text, for the text fields the report matches on) rather than rejecting the
//! record; only a missing or `null` `chapter` or `impl` does.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;

mod loose;

pub use loose::text;

/// The first record of the benches' file: the machine, the method, the libraries' versions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// `"header"`.
    pub record: String,
    /// `"tilelang"`.
    #[serde(rename = "impl")]
    pub imp: String,
    pub gpu: String,
    pub arch: String,
    /// The device's backend, as `Debug` prints it (`Cuda`, `Hip`, `Cpu`).
    pub backend: String,
    pub driver: Option<String>,
    /// The vendor libraries' versions; `null` for one that is missing.
    pub cublas_version: Option<i32>,
    pub cublaslt_version: Option<usize>,
    pub cudnn_version: Option<usize>,
    pub rocblas_version: Option<String>,
    pub miopen_version: Option<String>,
    /// `YYYY-MM-DD` (UTC).
    pub date: String,
    pub commit: Option<String>,
    pub seed: u64,
    pub size_sets: Vec<String>,
    pub flush_bytes: usize,
    /// Older files lack it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sustain_ms: Option<f64>,
    pub timing: String,
    pub harness: String,
}

/// One measurement: the benches' `"record": "result"`, the peers' `"kernel"` and `"launch"`.
/// Times, errors and rates that are not finite are `None` (JSON `null`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
// Each optional field says `default` itself rather than the struct: a container-level
// `#[serde(default)]` writes the same bytes but would also fill a missing `chapter` or `impl`,
// and a record without them must fail to read (the report drops it). A `deserialize_with`
// field needs its `default` (serde calls no reader for a missing field), and the
// `skip_serializing_if`s keep the keys the benches have always written (the committed files).
pub struct Measurement {
    /// `"result"` (ours), `"kernel"` or `"launch"` (the peers').
    #[serde(default, deserialize_with = "loose::text_or_empty")]
    pub record: String,
    /// `"01"` .. `"10"`, `"ex"`, `"ceiling"`, `"launch"`.
    #[serde(deserialize_with = "loose::text_required")]
    pub chapter: String,
    #[serde(default, deserialize_with = "loose::or_default")]
    pub title: String,
    #[serde(default, alias = "kernel", deserialize_with = "loose::text_or_empty")]
    pub variant: String,
    /// `tilelang`, `cublas`, `pytorch`, ...
    #[serde(
        rename = "impl",
        alias = "implementation",
        alias = "library",
        deserialize_with = "loose::text_required"
    )]
    pub imp: String,
    #[serde(
        default,
        alias = "sizes",
        alias = "size",
        deserialize_with = "loose::text_or_empty"
    )]
    pub size_set: String,
    #[serde(default, deserialize_with = "Shape::lenient")]
    pub shape: Shape,
    #[serde(default, deserialize_with = "loose::or_default")]
    pub dtype: String,
    #[serde(default, deserialize_with = "loose::text_or_empty")]
    pub config: String,
    /// `default`, `tuned` or `vendor`.
    #[serde(default, alias = "role", deserialize_with = "loose::text_or_empty")]
    pub config_role: String,
    #[serde(default, alias = "ms", deserialize_with = "loose::number")]
    pub median_ms: Option<f64>,
    #[serde(default, deserialize_with = "loose::number")]
    pub min_ms: Option<f64>,
    #[serde(default, deserialize_with = "loose::number")]
    pub max_ms: Option<f64>,
    #[serde(default, deserialize_with = "loose::or_default")]
    pub reps: usize,
    /// The work a throughput counts: bytes (memory-bound rows) or flops (GEMMs), one of them.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "loose::number"
    )]
    pub bytes: Option<f64>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "loose::number"
    )]
    pub flops: Option<f64>,
    #[serde(default, deserialize_with = "loose::number")]
    pub max_rel_err: Option<f64>,
    /// Whether the check passed; `None` where a peer did not say.
    #[serde(default, deserialize_with = "loose::or_default")]
    pub passed: Option<bool>,
    /// How the output was checked ("float64 reference", ...).
    #[serde(default, deserialize_with = "loose::or_default")]
    pub check: String,
    /// The first mismatch or the failure; absent when there is none.
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "loose::text_or_empty"
    )]
    pub error: String,
    /// A tuned record whose winner is the default config (its numbers repeat the default's).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "loose::or_default"
    )]
    pub same_as_default: Option<bool>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "loose::or_default"
    )]
    pub tuned_from_cache: Option<bool>,
    /// Every config's time while tuning, by name.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "loose::or_default"
    )]
    pub tuning_ms: Option<BTreeMap<String, f64>>,
    /// The launch-latency records: host time per kernel, and how it was counted.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "loose::number"
    )]
    pub us_per_launch: Option<f64>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "loose::or_default"
    )]
    pub launches_per_round: Option<usize>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "loose::or_default"
    )]
    pub kernels_per_call: Option<usize>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "loose::or_default"
    )]
    pub timing: Option<String>,
    /// The peers' `torch.compile` mode as run, and as asked for (they fall back to the default
    /// mode only when the asked one fails).
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "loose::text_or_empty"
    )]
    pub mode: String,
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "loose::text_or_empty"
    )]
    pub mode_requested: String,
}

/// A problem's dimensions: ours write a list of sizes, the peers a text (`"4096x16384"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Shape {
    Dims(Vec<usize>),
    Text(String),
}

impl Shape {
    /// A list of sizes, else the text of whatever was written.
    fn lenient<'de, D: Deserializer<'de>>(d: D) -> Result<Shape, D::Error> {
        let v = Value::deserialize(d)?;
        Ok(match Vec::<usize>::deserialize(&v) {
            Ok(dims) => Shape::Dims(dims),
            Err(_) => Shape::Text(text(&v)),
        })
    }
}

impl Default for Shape {
    fn default() -> Shape {
        Shape::Dims(Vec::new())
    }
}

/// `8192x8192x8192`, or the text as written.
impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shape::Dims(d) => {
                let d: Vec<String> = d.iter().map(usize::to_string).collect();
                f.write_str(&d.join("x"))
            }
            Shape::Text(t) => f.write_str(t),
        }
    }
}

/// The header and the records as a JSON array, one record per line (greppable,
/// diff-friendly), each with its keys sorted.
pub fn to_json_lines(header: &Header, records: &[Measurement]) -> String {
    // Through `Value`, whose objects keep their keys sorted.
    let lines: Vec<String> = std::iter::once(serde_json::to_value(header))
        .chain(records.iter().map(serde_json::to_value))
        .map(|v| v.expect("plain data with text keys serialises").to_string())
        .collect();
    format!("[\n{}\n]\n", lines.join(",\n"))
}
