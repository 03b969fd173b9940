//! Every bench JSON committed under `docs/perf/current/` reads into the record types: the
//! benches' files exactly (rewritten, they are the same bytes), the peers' measurements
//! leniently.

use bench_record::{to_json_lines, Header, Measurement, Shape};
use serde::Deserialize;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn json_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            json_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
}

#[test]
fn committed_results_read_and_ours_rewrite_to_the_same_bytes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/perf/current");
    let mut files = Vec::new();
    json_files(&root, &mut files);
    assert!(files.len() >= 6, "{files:?}");
    let (mut ours, mut peers) = (0, 0);
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let values: Vec<Value> = serde_json::from_str(&text).unwrap();
        let (first, rest) = values.split_first().unwrap();
        assert_eq!(first["record"], "header", "{}", f.display());
        let recs: Vec<Measurement> = rest
            .iter()
            .map(|v| {
                Measurement::deserialize(v).unwrap_or_else(|e| panic!("{}: {e}: {v}", f.display()))
            })
            .collect();
        if first["impl"] == "tilelang" {
            let header: Header = serde_json::from_value(first.clone()).unwrap();
            let again = to_json_lines(&header, &recs);
            for (i, (a, b)) in again.lines().zip(text.lines()).enumerate() {
                assert_eq!(a, b, "{} line {}", f.display(), i + 1);
            }
            assert_eq!(again, text, "{}", f.display());
            ours += 1;
        } else {
            assert!(recs
                .iter()
                .all(|r| r.record == "kernel" || r.record == "launch"));
            peers += 1;
        }
    }
    assert!(ours >= 3 && peers >= 3, "{ours} {peers}");
}

#[test]
fn a_record_round_trips() {
    let m = Measurement {
        record: "result".into(),
        chapter: "08".into(),
        title: "GEMM".into(),
        variant: "gemm pipelined".into(),
        imp: "tilelang".into(),
        size_set: "large".into(),
        shape: Shape::Dims(vec![8192, 8192, 8192]),
        dtype: "f16".into(),
        config: "t128x256x32s2".into(),
        config_role: "tuned".into(),
        median_ms: Some(1.5),
        min_ms: Some(1.25),
        max_ms: None,
        reps: 3,
        flops: Some(1.1e12),
        max_rel_err: Some(0.001),
        passed: Some(false),
        check: "float64 reference".into(),
        error: "mismatch at 3".into(),
        same_as_default: Some(true),
        tuned_from_cache: Some(false),
        tuning_ms: Some([("a".to_string(), 1.5), ("b".to_string(), 2.0)].into()),
        ..Measurement::default()
    };
    let v = serde_json::to_value(&m).unwrap();
    assert_eq!(v["impl"], "tilelang");
    assert_eq!(v["shape"], serde_json::json!([8192, 8192, 8192]));
    assert_eq!(v["max_ms"], Value::Null);
    assert!(v.get("bytes").is_none() && v.get("mode").is_none());
    assert_eq!(serde_json::from_value::<Measurement>(v).unwrap(), m);
}

/// The peers' and older files' spellings read as before: numbers and strings for each other,
/// other names, a shape as text, a field of another type as absent.
#[test]
fn reading_is_lenient() {
    let v = serde_json::json!({"chapter": 8, "kernel": "gemm", "implementation": "torch",
        "size": "large", "shape": "4096x16384", "ms": "1.5", "passed": "yes", "timing": {"x": 1},
        "config": null, "tuning_ms": [1]});
    let m: Measurement = serde_json::from_value(v).unwrap();
    assert_eq!(
        (m.chapter.as_str(), m.variant.as_str(), m.imp.as_str()),
        ("8", "gemm", "torch")
    );
    assert_eq!(m.size_set, "large");
    assert_eq!(m.shape.to_string(), "4096x16384");
    assert_eq!(m.median_ms, Some(1.5));
    assert_eq!((m.passed, m.timing, m.tuning_ms), (None, None, None));
    assert_eq!(m.config, "");
    // A record without a chapter or impl is none.
    assert!(serde_json::from_value::<Measurement>(serde_json::json!({"impl": "x"})).is_err());
    assert!(serde_json::from_value::<Measurement>(
        serde_json::json!({"chapter": "01", "impl": null})
    )
    .is_err());
}
