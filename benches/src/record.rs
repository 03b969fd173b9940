//! What the benches measure and how it becomes a record of the JSON (the record types are the
//! `bench-record` crate's, shared with `cargo xtask report`). See the crate's README for the
//! fields.

use bench_record::{Measurement, Shape};
use kernels::check::Comparison;

/// Which problem sizes a record belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeSet {
    /// The sizes of the original tutorials.
    Tutorial,
    /// Working sets far beyond the 50 MB L2 of an H200 (the README's table).
    Large,
    /// Tiny sizes, for running the whole suite on the CPU backend in tests.
    Smoke,
}

impl SizeSet {
    pub fn name(self) -> &'static str {
        match self {
            SizeSet::Tutorial => "tutorial",
            SizeSet::Large => "large",
            SizeSet::Smoke => "smoke",
        }
    }

    pub fn parse(s: &str) -> Option<SizeSet> {
        match s.trim() {
            "tutorial" => Some(SizeSet::Tutorial),
            "large" => Some(SizeSet::Large),
            "smoke" => Some(SizeSet::Smoke),
            _ => None,
        }
    }
}

/// What a throughput figure counts (bytes each input read once + each output written once, or
/// 2·M·N·K floating-point operations).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Work {
    Bytes(f64),
    Flops(f64),
}

/// The outcome of a correctness check.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub passed: bool,
    /// See [`Comparison::max_rel`]; the worst over every comparison made.
    pub max_rel_err: f64,
    /// How the output was checked ("float64 reference", ...).
    pub method: String,
    /// Empty when passed; else the first mismatch.
    pub detail: String,
}

impl Verdict {
    pub fn from_comparison(c: &Comparison, method: &str) -> Verdict {
        Verdict {
            passed: c.passed(),
            max_rel_err: c.max_rel,
            method: method.to_string(),
            detail: if c.passed() {
                String::new()
            } else {
                c.to_string()
            },
        }
    }

    /// Both checks: passed if both passed, the larger error.
    pub fn and(self, other: Verdict) -> Verdict {
        let detail = [self.detail, other.detail]
            .into_iter()
            .filter(|d| !d.is_empty())
            .collect::<Vec<_>>()
            .join("; ");
        Verdict {
            passed: self.passed && other.passed,
            max_rel_err: self.max_rel_err.max(other.max_rel_err),
            method: format!("{} + {}", self.method, other.method),
            detail,
        }
    }

    pub fn error(method: &str, detail: String) -> Verdict {
        Verdict {
            passed: false,
            max_rel_err: f64::INFINITY,
            method: method.to_string(),
            detail,
        }
    }
}

/// Median, min and max of per-launch times in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    pub median_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    pub reps: usize,
}

impl Stats {
    /// `None` for no samples. The median of an even count is the upper middle element (as in
    /// the tutorials' timing), so it is always a measured value.
    pub fn of(samples: &[f64]) -> Option<Stats> {
        if samples.is_empty() {
            return None;
        }
        let mut s = samples.to_vec();
        s.sort_by(|a, b| a.total_cmp(b));
        Some(Stats {
            median_ms: s[s.len() / 2],
            min_ms: s[0],
            max_ms: s[s.len() - 1],
            reps: s.len(),
        })
    }
}

/// What one record describes; the measurement and check are added by [`result`].
#[derive(Debug, Clone)]
pub struct Spec {
    /// `"01"` .. `"10"`, or `"ceiling"`, `"launch"`.
    pub chapter: &'static str,
    /// The chapter's title, for criterion's group names.
    pub title: &'static str,
    /// The README's variant names, shared with the peers' script.
    pub variant: String,
    pub size_set: SizeSet,
    pub shape: Vec<usize>,
    pub dtype: &'static str,
    pub work: Work,
}

/// JSON numbers cannot be NaN or infinite: those become `None` (`null`).
fn num(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// One result record.
pub fn result(
    spec: &Spec,
    imp: &str,
    config: &str,
    role: &str,
    stats: &Stats,
    verdict: &Verdict,
) -> Measurement {
    let (bytes, flops) = match spec.work {
        Work::Bytes(b) => (Some(b), None),
        Work::Flops(f) => (None, Some(f)),
    };
    Measurement {
        record: "result".into(),
        chapter: spec.chapter.into(),
        title: spec.title.into(),
        variant: spec.variant.clone(),
        imp: imp.into(),
        size_set: spec.size_set.name().into(),
        shape: Shape::Dims(spec.shape.clone()),
        dtype: spec.dtype.into(),
        config: config.into(),
        config_role: role.into(),
        median_ms: num(stats.median_ms),
        min_ms: num(stats.min_ms),
        max_ms: num(stats.max_ms),
        reps: stats.reps,
        // Finite by construction; written as they are (a non-finite one as `null`).
        bytes,
        flops,
        max_rel_err: num(verdict.max_rel_err),
        passed: Some(verdict.passed),
        check: verdict.method.clone(),
        error: verdict.detail.clone(),
        ..Measurement::default()
    }
}

/// Today's date (UTC) as `YYYY-MM-DD`, from the system clock.
pub fn utc_date() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    civil_date(secs / 86_400)
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's
/// days-to-civil algorithm, written from its description).
pub fn civil_date(days: u64) -> String {
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    #[test]
    fn dates() {
        assert_eq!(civil_date(0), "1970-01-01");
        assert_eq!(civil_date(11_016), "2000-02-29");
        assert_eq!(civil_date(20_788), "2026-12-01");
        assert!(utc_date().starts_with("20"));
    }

    #[test]
    fn stats_take_a_measured_median() {
        assert_eq!(Stats::of(&[]), None);
        let s = Stats::of(&[3.0, 1.0, 2.0, 10.0]).unwrap();
        assert_eq!(
            (s.median_ms, s.min_ms, s.max_ms, s.reps),
            (3.0, 1.0, 10.0, 4)
        );
    }

    #[test]
    fn records_follow_the_schema() {
        let spec = Spec {
            chapter: "08",
            title: "GEMM",
            variant: "gemm pipelined".into(),
            size_set: SizeSet::Large,
            shape: vec![8192, 8192, 8192],
            dtype: "f16",
            work: Work::Flops(2.0 * 8192f64.powi(3)),
        };
        let stats = Stats::of(&[1.5, 1.6, 1.7]).unwrap();
        let v = Verdict {
            passed: true,
            max_rel_err: f64::NAN,
            method: "x".into(),
            detail: String::new(),
        };
        let m = result(&spec, "tilelang", "t128", "default", &stats, &v);
        let r = serde_json::to_value(&m).unwrap();
        for k in [
            "chapter",
            "variant",
            "impl",
            "size_set",
            "shape",
            "dtype",
            "config",
            "median_ms",
            "min_ms",
            "max_ms",
            "flops",
            "max_rel_err",
            "passed",
        ] {
            assert!(r.get(k).is_some(), "{k}");
        }
        assert_eq!(r["max_rel_err"], Value::Null);
        assert_eq!(r["median_ms"], json!(1.6));
        assert!(r.get("bytes").is_none() && r.get("error").is_none());
        let back: Measurement = serde_json::from_value(r).unwrap();
        assert_eq!(back, m);
    }
}
