//! Pass 4, loop plans: how each `parallel` loop's iterations map onto the block's threads.

use super::*;
use crate::validate::walk;
use std::collections::BTreeMap;

/// The decision for one `parallel` loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LoopPlan {
    /// The order in which threads take the iterations: that of a register fragment the loop
    /// touches, so each thread reaches exactly the elements it holds.
    pub layout: Layout,
}

/// A plan for every `parallel` loop of the kernel, by [`stmt_key`].
pub(super) fn plan_loops(p: &Plan) -> BTreeMap<usize, LoopPlan> {
    let mut out = BTreeMap::new();
    walk(&p.k.body, &mut |s| {
        if let StmtKind::For {
            kind: LoopKind::Parallel { extents },
            body,
            ..
        } = &s.kind
        {
            let ext: Vec<usize> = extents
                .iter()
                .map(|e| eval_const(e, p.vals).unwrap_or(1) as usize)
                .collect();
            let layout = loop_layout(p, body, &ext);
            out.insert(stmt_key(s), LoopPlan { layout });
        }
    });
    out
}

/// The layout a parallel loop iterates in: that of a matrix-unit or chunked fragment of the
/// loop's shape it touches (the layout pass made them all agree), else strided.
fn loop_layout(p: &Plan, body: &[Stmt], ext: &[usize]) -> Layout {
    let mut layout = Layout::Strided;
    walk(body, &mut |s| {
        for_each_access(s, &mut |a| {
            if let Target::Buffer(b) = a.target {
                if let Storage::Reg {
                    layout: l @ (Layout::Matrix { .. } | Layout::Chunked),
                    ..
                } = p.storage[b]
                {
                    if buf_shape(p.k, b, p.vals) == ext {
                        layout = l;
                    }
                }
            }
        })
    });
    layout
}
