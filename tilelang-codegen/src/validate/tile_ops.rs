//! The tile primitives as statements: `copy`, `fill`, `clear`, `gemm`, `reduce_sum`,
//! `reduce_max` and `atomic_add`, with their operands (buffers by reference, tensor regions).

use super::builtins::{self, Op, Primitive};
use super::scope::{Binding, Checker};
use crate::ast::{self, Dtype};
use crate::ctxt::{count, Range};
use crate::ir::*;
use syn::Ident;

impl Checker<'_> {
    /// A `gemm` whose dimensions agree by name only with an operand read the other way round:
    /// `gemm(&q_s, &k_s, &mut s)` with `q_s (BM, D)`, `k_s (BN, D)`, `s (BM, BN)` means Q·Kᵀ,
    /// but `gemm` reads B as (K, N), and where `BN == D` the values agree and it would silently
    /// compute Q·K. An error on the operand, whatever the configs' values: `&k_s.t()` reads it
    /// as stored, (N, K). `ta`, `tb`: the operands' `.t()` marks.
    fn gemm_orientation(&mut self, span: Range, [a, b, c]: [BufId; 3], [ta, tb]: [bool; 2]) {
        use crate::ir::visit::same;
        let (ba, bb, bc) = (&self.buffers[a], &self.buffers[b], &self.buffers[c]);
        if ba.shape.len() != 2 || bb.shape.len() != 2 || bc.shape.len() != 2 {
            return;
        }
        let (am, an, ak, bk) = gemm_mnkk(&ba.shape, &bb.shape, ta, tb);
        let bk = &bk;
        let (c0, c1) = (&bc.shape[0], &bc.shape[1]);
        if same(&ak, bk) {
            return;
        }
        let (b_t, a_t) = (
            same(&ak, &an) && same(c1, bk),
            same(&am, bk) && same(c0, &ak),
        );
        let dims = |x: &Buffer| {
            let d: Vec<String> = x.shape.iter().map(|e| self.dim_name(e)).collect();
            format!("({})", d.join(", "))
        };
        // The operand stored the other way round: its role, buffer, mark, how `gemm` reads it,
        // its K as read; then the other operand, its mark and its K.
        let (role, x, tx, read, kx, other, y, ty, ky) = if b_t {
            let read = if tb { "(N, K)" } else { "(K, N)" };
            ("B", bb, tb, read, bk.clone(), "A", ba, ta, ak)
        } else if a_t {
            let read = if ta { "(K, M)" } else { "(M, K)" };
            ("A", ba, ta, read, ak, "B", bb, tb, bk.clone())
        } else {
            return;
        };
        let t = |on: bool| if on { ".t()" } else { "" };
        let (nx, ny) = (x.name.to_string(), y.name.to_string());
        let msg = format!(
            "`gemm` reads {role} `{nx}{}` {} as {read}, so K = {}, but {other} `{ny}{}` {} has \
             K = {}: `{nx}` holds {role} the other way round",
            t(tx),
            dims(x),
            self.dim_name(&kx),
            t(ty),
            dims(y),
            self.dim_name(&ky)
        );
        let hint = format!(
            "`gemm(&a, &b, &mut c)` computes A·B for A (M, K), B (K, N) and C (M, N) (`{}` {}); \
             write `&{nx}{}` to read `{nx}` as stored",
            bc.name,
            dims(bc),
            t(!tx)
        );
        self.cx.error_hint(span, msg, hint);
    }

    /// A buffer dimension as written: a literal or a const generic's name.
    fn dim_name(&self, e: &Expr) -> String {
        match &e.kind {
            ExprKind::Int(v) => v.to_string(),
            ExprKind::Const(i) => self
                .scopes
                .first()
                .and_then(|g| {
                    g.iter()
                        .find(|(_, b)| matches!(b, Binding::Const(j) if j == i))
                        .map(|(n, _)| n.clone())
                })
                .unwrap_or_else(|| "?".into()),
            _ => "?".into(),
        }
    }

    /// A buffer operand `&x` / `&mut x`.
    fn buffer_arg(
        &mut self,
        e: &ast::Expr,
        write: bool,
        func: &Ident,
        what: &str,
    ) -> Option<BufId> {
        let (name, is_mut) = match &e.kind {
            ast::ExprKind::Ref(n, m) => (n, *m),
            ast::ExprKind::Transposed(n) => {
                self.cx.error_hint(
                    e.span,
                    format!("`.t()` marks an operand of `gemm`, not {what} of `{func}`"),
                    format!("write `&{n}`"),
                );
                return None;
            }
            ast::ExprKind::Var(n) => {
                self.cx.error_hint(
                    e.span,
                    format!("`{func}` takes {what} by reference"),
                    format!("write `{}{n}`", if write { "&mut " } else { "&" }),
                );
                return None;
            }
            _ => {
                self.cx.error_hint(
                    e.span,
                    format!("`{func}` expects {what} here"),
                    format!(
                        "pass a tile buffer: `{}tile`",
                        if write { "&mut " } else { "&" }
                    ),
                );
                return None;
            }
        };
        let b = match self.lookup(name) {
            Some(Binding::Buffer(b)) => b,
            Some(Binding::Tensor(_)) => {
                self.cx.error_hint(
                    e.span,
                    format!("`{func}` expects a tile buffer, but `{name}` is a global tensor"),
                    format!("copy a tile of it first: `copy({name}.at((..)), &mut tile)`"),
                );
                return None;
            }
            Some(_) => {
                self.cx.error_hint(
                    e.span,
                    format!("`{func}` expects a tile buffer, but `{name}` is a scalar"),
                    "allocate a buffer with `alloc_shared` or `alloc_fragment`",
                );
                return None;
            }
            None => {
                self.unknown_name(name);
                return None;
            }
        };
        if write && !is_mut {
            self.cx.error_hint(
                e.span,
                format!("`{func}` writes {what}"),
                format!("pass it as `&mut {name}`"),
            );
        }
        if write && !self.buf_mutable[b] {
            self.cx.error_hint(
                name.span(),
                format!("cannot write to buffer `{name}`: it is not declared `mut`"),
                format!("declare it `let mut {name} = ...`"),
            );
        }
        Some(b)
    }

    /// An operand of `copy` (`func`): a tensor's region or a buffer.
    fn tile_arg(&mut self, e: &ast::Expr, write: bool, func: &Ident) -> Option<Tile> {
        match &e.kind {
            ast::ExprKind::Region {
                tensor,
                offsets,
                mutable,
            } => {
                let p = match self.lookup(tensor) {
                    Some(Binding::Tensor(p)) => p,
                    Some(Binding::Buffer(_)) => {
                        self.cx.error_hint(
                            e.span,
                            format!(
                                "`.at()` applies to global tensors; `{tensor}` is a tile buffer"
                            ),
                            format!("pass the buffer itself: `&{tensor}`"),
                        );
                        return None;
                    }
                    Some(_) => {
                        self.cx.error_hint(
                            e.span,
                            format!("`{tensor}` is not a tensor"),
                            "`.at((..))` takes a tile of a tensor parameter",
                        );
                        return None;
                    }
                    None => {
                        self.unknown_name(tensor);
                        return None;
                    }
                };
                if write && !mutable {
                    self.cx.error_hint(
                        e.span,
                        "the destination of `copy` must be writable",
                        format!("write `{tensor}.at_mut((..))`"),
                    );
                }
                if !write && *mutable {
                    self.cx.error_hint(
                        e.span,
                        "the source of `copy` is read, not written",
                        format!("write `{tensor}.at((..))`"),
                    );
                }
                if write {
                    if let ParamKind::Tensor { mutable: false, .. } = self.params[p].kind {
                        self.cx.error_hint(
                            tensor.span(),
                            format!("cannot write to `{tensor}`: it is a read-only tensor"),
                            format!("declare the parameter as `{tensor}: &mut Tensor<..>`"),
                        );
                    }
                }
                let rank = self.target_rank(Target::Tensor(p));
                if offsets.len() != rank {
                    self.cx.error_hint(
                        e.span,
                        format!(
                            "`{tensor}` has {rank} dimension{}, but {} offset{} given",
                            if rank == 1 { "" } else { "s" },
                            offsets.len(),
                            if offsets.len() == 1 { " is" } else { "s are" }
                        ),
                        format!(
                            "give one offset per dimension: `{tensor}.at(({}))`",
                            vec!["0"; rank].join(", ")
                        ),
                    );
                    return None;
                }
                let offs: Vec<Expr> = offsets
                    .iter()
                    .filter_map(|o| self.expr_as(o, Dtype::Index, "a tile offset"))
                    .collect();
                (offs.len() == offsets.len()).then_some(Tile::Region {
                    tensor: p,
                    offsets: offs,
                })
            }
            ast::ExprKind::Var(name) if matches!(self.lookup(name), Some(Binding::Tensor(_))) => {
                self.cx.error_hint(
                    e.span,
                    format!("`copy` moves tiles; pass a tile of `{name}`"),
                    format!(
                        "write `{name}.{}((row, col))` for the tile at that element offset",
                        if write { "at_mut" } else { "at" }
                    ),
                );
                None
            }
            _ => self
                .buffer_arg(
                    e,
                    write,
                    func,
                    if write { "a destination" } else { "a source" },
                )
                .map(Tile::Buffer),
        }
    }

    pub(super) fn call_stmt(
        &mut self,
        func: &Ident,
        args: &[ast::Expr],
        span: Range,
    ) -> Option<Stmt> {
        let name = func.to_string();
        let (builtin, p) = match builtins::lookup(&name).map(|b| (b, b.op)) {
            Some((b, Op::Primitive(p))) => (b, p),
            Some((_, Op::Function(_))) => {
                self.cx.error_hint(
                    span,
                    format!("the value of `{name}(..)` is unused"),
                    format!("bind it: `let x = {name}(..);`"),
                );
                return None;
            }
            Some((_, Op::Iterator)) | None => {
                if !self.poisoned(func) {
                    self.cx.error_hint(
                        func.span(),
                        format!("unknown primitive `{name}`"),
                        format!(
                            "the primitives are {}; the functions are {}",
                            builtins::primitives(),
                            builtins::functions()
                        ),
                    );
                }
                return None;
            }
        };
        // `atomic_add` is the one primitive on a single element, which each thread of a
        // `parallel` loop may call.
        if self.parallel_depth > 0 && p != Primitive::AtomicAdd {
            self.cx.error_hint(
                func.span(),
                format!("`{name}` works on whole tiles with all the block's threads and cannot be used inside a `parallel` loop"),
                "call it outside the loop; inside a `parallel` loop, read and write single elements",
            );
            return None;
        }
        if !self.arity(func, args, builtin, span) {
            return None;
        }
        let kind = match p {
            Primitive::Copy => {
                let src = self.tile_arg(&args[0], false, func);
                let dst = self.tile_arg(&args[1], true, func);
                let (src, dst) = (src?, dst?);
                if let (Tile::Buffer(a), Tile::Buffer(b)) = (&src, &dst) {
                    if a == b {
                        self.cx.error_hint(
                            span,
                            format!("`copy` from `{}` into itself", self.buffers[*a].name),
                            "copy into a different buffer",
                        );
                        return None;
                    }
                }
                if matches!((&src, &dst), (Tile::Region { .. }, Tile::Region { .. })) {
                    self.cx.error_hint(
                        span,
                        "`copy` between two global tensors is not supported",
                        "stage the tile through a shared or fragment buffer",
                    );
                    return None;
                }
                let rank = |t: &Tile| match t {
                    Tile::Buffer(b) => self.target_rank(Target::Buffer(*b)),
                    Tile::Region { tensor, .. } => self.target_rank(Target::Tensor(*tensor)),
                };
                let (rs, rd) = (rank(&src), rank(&dst));
                // A tile may drop leading dimensions of the tensor it is a region of (they are
                // the region's extent-1 dimensions: a `(BM, BK)` tile of a `(B, M, K)` tensor);
                // buffers copied into each other have one shape.
                let (tile, tensor) = match (&src, &dst) {
                    (Tile::Region { .. }, _) => (rd, rs),
                    (_, Tile::Region { .. }) => (rs, rd),
                    _ => (rs, rd),
                };
                let region =
                    matches!(src, Tile::Region { .. }) || matches!(dst, Tile::Region { .. });
                if (region && tile > tensor) || (!region && rs != rd) {
                    let hint = if region {
                        "a tile may drop the tensor's leading dimensions (a `(BM, BK)` tile of a `(B, M, K)` tensor), not add dimensions"
                    } else {
                        "give both buffers the same shape"
                    };
                    self.cx.error_hint(
                        span,
                        format!(
                            "`copy` between tiles of different ranks: the source has {}, the destination {}",
                            count(rs, "dimension"),
                            count(rd, "dimension")
                        ),
                        hint,
                    );
                    return None;
                }
                StmtKind::Copy { src, dst }
            }
            Primitive::Fill => {
                let buf = self.buffer_arg(&args[0], true, func, "a buffer")?;
                let value = self.expr_as(&args[1], self.buffers[buf].dtype, "the fill value")?;
                StmtKind::Fill { buf, value }
            }
            Primitive::Clear => {
                let buf = self.buffer_arg(&args[0], true, func, "a buffer")?;
                let ty = self.buffers[buf].dtype;
                let zero = if ty.is_float() {
                    ExprKind::Float(0.0)
                } else {
                    ExprKind::Int(0)
                };
                StmtKind::Fill {
                    buf,
                    value: Expr {
                        kind: zero,
                        ty,
                        span,
                    },
                }
            }
            Primitive::Gemm => {
                // `&x.t()`: the operand read transposed.
                let operand = |e: &ast::Expr| match &e.kind {
                    ast::ExprKind::Transposed(n) => (
                        ast::Expr {
                            kind: ast::ExprKind::Ref(n.clone(), false),
                            span: e.span,
                        },
                        true,
                    ),
                    _ => (e.clone(), false),
                };
                let ((ea, ta), (eb, tb)) = (operand(&args[0]), operand(&args[1]));
                let a = self.buffer_arg(&ea, false, func, "the A tile");
                let b = self.buffer_arg(&eb, false, func, "the B tile");
                let c = self.buffer_arg(&args[2], true, func, "the accumulator");
                let (a, b, c) = (a?, b?, c?);
                if c == a || c == b {
                    self.cx.error_hint(
                        args[2].span,
                        format!(
                            "the accumulator `{}` is also an operand of `gemm`",
                            self.buffers[c].name
                        ),
                        "accumulate into a separate fragment",
                    );
                    return None;
                }
                let (ba, bb, bc) = (&self.buffers[a], &self.buffers[b], &self.buffers[c]);
                if bc.scope != Scope::Fragment {
                    self.cx.error_hint(
                        args[2].span,
                        format!(
                            "`gemm` accumulates into a fragment, but `{}` is a {} buffer",
                            bc.name,
                            bc.scope.name()
                        ),
                        format!(
                            "allocate `{}` with `alloc_fragment::<f32, (BM, BN)>()`",
                            bc.name
                        ),
                    );
                }
                for (buf, arg) in [(ba, &args[0]), (bb, &args[1])] {
                    if buf.scope == Scope::Local {
                        self.cx.error_hint(
                            arg.span,
                            format!(
                                "`gemm` operands are block tiles, but `{}` is a local buffer",
                                buf.name
                            ),
                            "use a shared or fragment buffer",
                        );
                    }
                }
                if ba.dtype != bb.dtype {
                    self.cx.error_hint(
                        span,
                        format!(
                            "`gemm` operands have different dtypes: {} and {}",
                            ba.dtype, bb.dtype
                        ),
                        "convert one operand into a buffer of the other's dtype first",
                    );
                }
                if !builtin.dtypes.allows(ba.dtype) || !builtin.dtypes.allows(bc.dtype) {
                    self.cx.error_hint(
                        span,
                        "`gemm` works on floating-point tiles",
                        "dequantize integer tiles into f16 buffers first",
                    );
                }
                for (buf, arg) in [(ba, &args[0]), (bb, &args[1]), (bc, &args[2])] {
                    if buf.shape.len() != 2 {
                        self.cx.error_hint(
                            arg.span,
                            format!(
                                "`gemm` operands are 2-D tiles, but `{}` has {}",
                                buf.name,
                                count(buf.shape.len(), "dimension")
                            ),
                            "allocate it with a shape `(ROWS, COLS)`",
                        );
                    }
                }
                self.gemm_orientation(span, [a, b, c], [ta, tb]);
                StmtKind::Gemm { a, b, c, ta, tb }
            }
            Primitive::Reduce(op) => {
                let src = self.buffer_arg(&args[0], false, func, "the source tile");
                let dst = self.buffer_arg(&args[1], true, func, "the destination");
                let dim = match &args[2].kind {
                    ast::ExprKind::Int(v, _) => Some(*v as usize),
                    _ => {
                        self.cx.error_hint(
                            args[2].span,
                            "the reduced dimension must be an integer literal",
                            format!("write `{name}(&src, &mut dst, 1)` to reduce along columns"),
                        );
                        None
                    }
                };
                let (src, dst, dim) = (src?, dst?, dim?);
                if src == dst {
                    self.cx.error_hint(
                        args[1].span,
                        format!(
                            "`{name}` reads and writes the same buffer `{}`",
                            self.buffers[src].name
                        ),
                        "reduce into a separate buffer",
                    );
                    return None;
                }
                let (bs, bd) = (&self.buffers[src], &self.buffers[dst]);
                if dim >= bs.shape.len() {
                    self.cx.error_hint(
                        args[2].span,
                        format!(
                            "`{}` has {} dimension{}; there is no dimension {dim}",
                            bs.name,
                            bs.shape.len(),
                            if bs.shape.len() == 1 { "" } else { "s" }
                        ),
                        format!("reduce along 0..{}", bs.shape.len()),
                    );
                    return None;
                }
                let want = bs.shape.len().saturating_sub(1).max(1);
                if bd.shape.len() != want {
                    self.cx.error_hint(
                        args[1].span,
                        format!(
                            "reducing a {}-D tile gives a {want}-D result, but `{}` has {}",
                            bs.shape.len(),
                            bd.name,
                            count(bd.shape.len(), "dimension")
                        ),
                        "drop the reduced dimension from the destination's shape",
                    );
                    return None;
                }
                if bs.dtype != bd.dtype {
                    self.cx.error_hint(
                        span,
                        format!(
                            "`{name}` source is {} but destination is {}",
                            bs.dtype, bd.dtype
                        ),
                        "reduce into a buffer of the same dtype",
                    );
                }
                if bd.scope == Scope::Local || bs.scope == Scope::Local {
                    self.cx.error_hint(
                        span,
                        format!("`{name}` works on block tiles, not local buffers"),
                        "use shared or fragment buffers",
                    );
                }
                StmtKind::Reduce { op, src, dst, dim }
            }
            Primitive::AtomicAdd => {
                let (base, index) = match &args[0].kind {
                    ast::ExprKind::ElemRef(b, i) => (b, i),
                    _ => {
                        self.cx.error_hint(
                            args[0].span,
                            "`atomic_add` takes a mutable reference to an element",
                            "write `atomic_add(&mut c[(i, j)], value)`",
                        );
                        return None;
                    }
                };
                let access = self.access(base, index, true, args[0].span)?;
                if let Target::Buffer(b) = access.target {
                    if self.buffers[b].scope != Scope::Shared {
                        self.cx.error_hint(
                            args[0].span,
                            "`atomic_add` applies to global tensors and shared buffers",
                            "atomics on registers make no sense; add directly",
                        );
                    }
                }
                let ty = self.target_dtype(access.target);
                if ty == Dtype::U8 {
                    // Found by generated kernels (issue 38): accepted here, nvcc then failed
                    // on tl.h ("no instance of overloaded function tl::atomic_add").
                    self.cx.error_hint(
                        args[0].span,
                        "`atomic_add` on a u8 element: NVIDIA GPUs have no 8-bit atomic add",
                        "accumulate into a u32 (or i32) tensor or buffer",
                    );
                    return None;
                }
                let value = self.expr_as(&args[1], ty, "the added value")?;
                StmtKind::AtomicAdd { access, value }
            }
        };
        Some(Stmt { kind, span })
    }
}
