//! Constructs the lowering cannot express. Validation rejects them all; this is the backstop
//! that turns a validation gap into a diagnostic instead of a panic in the printer.

use super::plan::*;
use crate::ctxt::Range;
use crate::ir::*;

/// The first construct the printer could not express, with its statement's span.
pub(super) fn unsupported(k: &Kernel, storage: &[Storage]) -> Option<(Range, String)> {
    fn visit(
        stmts: &[Stmt],
        in_parallel: bool,
        storage: &[Storage],
        out: &mut Option<(Range, String)>,
    ) {
        for s in stmts {
            if out.is_some() {
                return;
            }
            let what = match &s.kind {
                StmtKind::Copy {
                    src: Tile::Region { .. },
                    dst: Tile::Region { .. },
                } => Some("a copy between two global tensors"),
                StmtKind::Copy {
                    src: Tile::Buffer(a),
                    dst: Tile::Buffer(b),
                } => match (storage[*a], storage[*b]) {
                    (Storage::Shared { .. }, _)
                    | (_, Storage::Shared { .. })
                    | (Storage::Reg { .. }, Storage::Reg { .. }) => None,
                    _ => Some("a copy between local buffers"),
                },
                _ => None,
            };
            let tile_op = matches!(
                s.kind,
                StmtKind::Copy { .. }
                    | StmtKind::Fill { .. }
                    | StmtKind::Gemm { .. }
                    | StmtKind::Reduce { .. }
                    | StmtKind::For {
                        kind: LoopKind::Parallel { .. } | LoopKind::Pipelined { .. },
                        ..
                    }
            );
            if let Some(what) = what {
                *out = Some((s.span, what.into()));
            } else if in_parallel && tile_op {
                *out = Some((
                    s.span,
                    "a tile operation or loop inside a parallel loop".into(),
                ));
            }
            match &s.kind {
                StmtKind::For { kind, body, .. } => visit(
                    body,
                    in_parallel || matches!(kind, LoopKind::Parallel { .. }),
                    storage,
                    out,
                ),
                StmtKind::If { then, els, .. } => {
                    visit(then, in_parallel, storage, out);
                    visit(els, in_parallel, storage, out);
                }
                _ => {}
            }
        }
    }
    let mut out = None;
    visit(&k.body, false, storage, &mut out);
    out
}
