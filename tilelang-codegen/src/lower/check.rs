//! Constructs the lowering cannot express. Validation rejects them all; this is the backstop
//! that turns a validation gap into a diagnostic instead of a panic in the printer.

use super::plan::*;
use crate::ctxt::Range;
use crate::ir::visit::*;
use crate::ir::*;

/// The first construct the printer could not express, with its statement's span.
pub(super) fn unsupported(k: &Kernel, storage: &[Storage]) -> Option<(Range, String)> {
    let mut out = None;
    walk_parallel(&k.body, &mut |_| (), &mut |s, ploop| {
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
            out = Some((s.span, what.into()));
        } else if ploop.is_some() && tile_op {
            out = Some((
                s.span,
                "a tile operation or loop inside a parallel loop".into(),
            ));
        }
    });
    out
}
