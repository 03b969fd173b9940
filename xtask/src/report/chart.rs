//! The bar chart (`perf.svg`).

use super::markdown::capitalise;
use super::table::{rate, Row, Table};
use std::fmt::Write as _;

impl Table {
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

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
