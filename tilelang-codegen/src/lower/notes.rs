//! What runs slower than it could, and why (issue 39, deliverable 7), for the build's
//! warnings: each fragment the layout pass keeps in shared memory, with the first use no
//! register layout served (`plan.demotions`), and each `gemm` on a slower path than the
//! target's first matrix instruction (the layout pass falls back silently, in
//! `layout::matrix_layout`), with the path it took and the first condition it failed; on the
//! user's line where a statement caused it.

use super::layout::atoms_ok;
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
        let StmtKind::Gemm { a, b, c } = &s.kind else {
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
                        ("FMA loops", fits(p, *a, *b, last))
                    }
                };
                notes.push(note(s, k, *a, *b, *c, path, fastest, &why));
                return;
            }
        };
        if fastest == Inst::Wgmma && took != Inst::Wgmma {
            let why = fits(p, *a, *b, Inst::Wgmma);
            notes.push(note(s, k, *a, *b, *c, name(took), fastest, &why));
        }
    });
    notes
}

#[allow(clippy::too_many_arguments)]
fn note(
    s: &Stmt,
    k: &Kernel,
    a: BufId,
    b: BufId,
    c: BufId,
    path: &str,
    fastest: Inst,
    why: &str,
) -> String {
    let n = |x: BufId| k.buffers[x].name.to_string();
    format!(
        "line {}: `gemm(&{}, &{}, &mut {})` runs on {path}, not {}: {why}",
        s.span.start.start().line,
        n(a),
        n(b),
        n(c),
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

/// The first condition of `inst` that `a·b` fails (`layout::matrix_layout`, `wgmma_fits`).
fn fits(p: &Plan, a: BufId, b: BufId, inst: Inst) -> String {
    let k = p.inst.k;
    let (da, db) = (k.buffers[a].dtype, k.buffers[b].dtype);
    if !matches!(da, Dtype::F16 | Dtype::Bf16) || db != da {
        return format!(
            "the matrix units take f16 or bf16 operands and an f32 accumulator, these are {da} and {db}"
        );
    }
    let (sa, sb) = (p.inst.buffer_shape(a), p.inst.buffer_shape(b));
    let (m, kk, n) = (sa[0], sa[1], sb[1]);
    let threads = p.threads;
    if inst == Inst::Wgmma {
        let wg = threads / 128;
        return if threads % 128 != 0 {
            format!("its {threads} threads are not whole warpgroups of 128")
        } else if m != 64 * wg {
            format!(
                "M is {m}; wgmma takes 64 rows a warpgroup, {} with {threads} threads",
                64 * wg
            )
        } else if !matches!(n, 64 | 128 | 256) {
            format!("N is {n}; wgmma takes 64, 128 or 256")
        } else if !(kk == 32 || kk % 64 == 0) {
            format!("K is {kk}; wgmma takes 32 or a multiple of 64")
        } else if a == b {
            "A and B are the same tile".into()
        } else if let Some(x) = [a, b].into_iter().find(|&x| !atoms_ok(k, x)) {
            format!(
                "`{}` has a use wgmma's operand layout cannot serve (only copies into it from \
                 global memory, `gemm` and element accesses with a row and a column can)",
                k.buffers[x].name
            )
        } else {
            "its accumulator is shared with a gemm of another shape".into()
        };
    }
    let (im, in_, ik) = inst.shape();
    if threads % inst.wave() != 0 {
        format!(
            "its {threads} threads are not whole waves of {}",
            inst.wave()
        )
    } else if kk % ik != 0 {
        format!("K is {kk}, not a multiple of {ik}")
    } else {
        format!(
            "the {m} × {n} tile does not split over {} waves into {im} × {in_} instruction tiles",
            threads / inst.wave()
        )
    }
}
