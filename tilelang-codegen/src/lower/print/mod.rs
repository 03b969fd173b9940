//! The printer: a [`Plan`](crate::lower::plan::Plan) as HIP C++ against `include/tl.h`. It
//! decides nothing: storage, layouts, stages, swizzles, loop mappings and barriers are the
//! passes' (see [`crate::lower`]). One file per construct, each extending the [`emitter`]'s
//! state: the entry functions, statements, loops, copies, expressions and chunk-wise loops,
//! each writing its lines through [`code`], the indenting writer.

mod code;
mod copy;
mod emitter;
mod entry;
mod expr;
mod loops;
mod stmt;
mod vector;

pub(crate) use entry::kernel;
