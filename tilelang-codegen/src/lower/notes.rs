//! What runs slower than it could, and why (issue 39, deliverable 7), for the build's
//! warnings: each fragment the layout pass keeps in shared memory, with the first use no
//! register layout served (`plan.demotions`), and each `gemm` on a slower path than the
//! target's first matrix instruction (the layout pass falls back silently, in
//! `layout::matrix_layout`), with the path it took and the first condition it failed; on the
//! user's line where a statement caused it.

use super::layout::matrix_miss;
use super::plan::*;
use crate::ir::visit::walk;
use crate::ir::*;
use crate::target::Target as Gpu;

/// One note a fragment kept in shared memory, then one a slow `gemm`.
pub(super) fn notes(p: &Plan, target: &Gpu) -> Vec<String> {
    let k = p.inst.k;
    let mut out: Vec<String> = (0..k.buffers.len())
        .filter(|&b| {
            k.buffers[b].scope == Scope::Fragment && matches!(p.storage[b], Storage::Shared { .. })
        })
        .map(|b| {
            let (why, at) = p.demotions.why(b).unwrap_or((Why::Unserved, None));
            let line = at.map_or(String::new(), |r| {
                format!("line {}: ", r.start.start().line)
            });
            format!(
                "{line}fragment `{}` is kept in shared memory: {}",
                k.buffers[b].name,
                why.text()
            )
        })
        .collect();
    out.extend(gemm_notes(p, target));
    out
}

/// One note a slow `gemm`: `line N: ...`.
fn gemm_notes(p: &Plan, target: &Gpu) -> Vec<String> {
    let Some(&fastest) = Inst::of(target.matrix).first() else {
        return Vec::new();
    };
    let k = p.inst.k;
    let mut notes = Vec::new();
    walk(&k.body, &mut |s| {
        let StmtKind::Gemm { a, b, c, ta, tb } = &s.kind else {
            return;
        };
        let took = match p.storage[*c] {
            Storage::Reg {
                layout: Layout::Matrix { inst, .. },
                ..
            } => inst,
            _ => {
                let (path, why) = match p.storage[*c] {
                    Storage::Shared { .. } => (
                        "FMA loops over shared memory",
                        format!(
                            "its accumulator `{}` is kept in shared memory (see the fragment warning)",
                            k.buffers[*c].name
                        ),
                    ),
                    // The last instruction the layout pass tried.
                    _ => {
                        let last = *Inst::of(target.matrix).last().unwrap_or(&fastest);
                        ("FMA loops", fits(p, [*a, *b, *c], [*ta, *tb], last, target))
                    }
                };
                notes.push(note(s, k, [*a, *b, *c], [*ta, *tb], path, fastest, &why));
                return;
            }
        };
        if fastest == Inst::Wgmma && took != Inst::Wgmma {
            let why = fits(p, [*a, *b, *c], [*ta, *tb], Inst::Wgmma, target);
            notes.push(note(
                s,
                k,
                [*a, *b, *c],
                [*ta, *tb],
                name(took),
                fastest,
                &why,
            ));
        }
    });
    notes
}

/// The path each `gemm` takes, in program order, for `manifest.tsv`'s `gemms` column:
/// `wgmma`, `mma.sync`, `WMMA`, `MFMA`, `FMA` (registers) or `FMA-shared` (an accumulator in
/// shared memory), with `.tA` / `.tB` where an operand is read transposed and `.rA` where A
/// comes from registers.
pub(super) fn gemm_paths(p: &Plan) -> Vec<String> {
    let mut out = Vec::new();
    walk(&p.inst.k.body, &mut |s| {
        let StmtKind::Gemm { a, c, ta, tb, .. } = &s.kind else {
            return;
        };
        let path = match p.storage[*c] {
            Storage::Reg {
                layout: Layout::Matrix { inst, .. },
                ..
            } => name(inst),
            Storage::Reg { .. } => "FMA",
            _ => "FMA-shared",
        };
        let t = |on: &bool, m: &str| if *on { m.to_string() } else { String::new() };
        let ra = matches!(p.storage[*a], Storage::Reg { .. });
        out.push(format!(
            "{path}{}{}{}",
            t(ta, ".tA"),
            t(tb, ".tB"),
            t(&ra, ".rA")
        ));
    });
    out
}

fn note(
    s: &Stmt,
    k: &Kernel,
    [a, b, c]: [BufId; 3],
    [ta, tb]: [bool; 2],
    path: &str,
    fastest: Inst,
    why: &str,
) -> String {
    let n = |x: BufId, t: bool| format!("{}{}", k.buffers[x].name, if t { ".t()" } else { "" });
    format!(
        "line {}: `gemm(&{}, &{}, &mut {})` runs on {path}, not {}: {why}",
        s.span.start.start().line,
        n(a, ta),
        n(b, tb),
        n(c, false),
        name(fastest)
    )
}

fn name(i: Inst) -> &'static str {
    match i {
        Inst::MmaSync => "mma.sync",
        Inst::Wgmma => "wgmma",
        Inst::Wmma | Inst::Wmma12 => "WMMA",
        Inst::Mfma32 | Inst::Mfma16 => "MFMA",
    }
}

/// Why `a·b` (into `c`) does not run on `inst` ([`matrix_miss`], what the layout pass decided
/// by); when nothing in it fails, the accumulator's gemms disagree on a layout.
fn fits(p: &Plan, abc: [BufId; 3], t: [bool; 2], inst: Inst, target: &Gpu) -> String {
    let a_regs = matches!(p.storage[abc[0]], Storage::Reg { .. });
    matrix_miss(
        &p.inst,
        abc,
        t,
        inst,
        p.threads,
        target.wave as usize,
        a_regs,
    )
    .unwrap_or_else(|| "its accumulator is shared with a gemm of another shape".into())
}
