//! `copy` in every form: global to shared or registers and back (chunked, vector, `cp.async`,
//! L2 hints, streaming stores), register to register, and the TMA store of an accumulator.

use super::code::Code;
use super::emitter::*;
use crate::ir::*;
use crate::lower::names::*;
use crate::lower::plan::*;
use crate::lower::util::*;

impl Emitter<'_> {
    /// `__g`, the region of `tensor` at `offsets`, padded to rank 4.
    pub(super) fn region(&self, tensor: ParamId, offsets: &[Expr]) -> String {
        let mut dims = self.tensor_dims(tensor);
        let mut offs: Vec<String> = offsets.iter().map(|o| self.expr(o)).collect();
        while dims.len() < 4 {
            dims.insert(0, "1".into());
            offs.insert(0, "0".into());
        }
        format!(
            "tl::Region __g = {{{{{}}}, {{{}}}}};",
            dims.join(", "),
            offs.join(", ")
        )
    }

    pub(super) fn copy(&mut self, src: &Tile, dst: &Tile, depth: usize) -> String {
        let one = |text: String| Code::one(depth, text);
        let t = self.threads;
        let region = |tensor: ParamId, offsets: &[Expr]| self.region(tensor, offsets);
        let ty = |b: BufId| ctype(self.k.buffers[b].dtype);
        match (src, dst) {
            (Tile::Region { tensor, offsets }, Tile::Buffer(b)) => {
                let st = ctype(self.tensor_dtype(*tensor));
                match self.storage[*b] {
                    Storage::Shared { .. } => one(format!(
                        "{{ {} tl::copy_g2s<{st}, {}, {}, {t}{}>({}, __g, {}); }}",
                        region(*tensor, offsets),
                        ty(*b),
                        self.tile4(*b),
                        match (
                            swizzle_arg(self.swizzled[*b]),
                            self.async_copies,
                            self.read_only(*tensor)
                        ) {
                            (sw, asy, true) => format!(", {sw}, {asy}, true"),
                            (sw, true, false) => format!(", {sw}, true"),
                            (sw, false, false) if sw != "false" => format!(", {sw}"),
                            _ => String::new(),
                        },
                        self.tensor(*tensor),
                        self.buf(*b)
                    )),
                    _ => {
                        let elementwise = |depth: usize, interior: bool| {
                            self.reg_copy(
                                *b,
                                "",
                                |inside, lin| {
                                    let inside = if interior { "true" } else { inside };
                                    format!(
                                        "{} = {inside} ? tl::cast<{}, {st}>({}[{lin}]) : tl::lit<{}>(0.0);",
                                        "{DST}",
                                        ty(*b),
                                        self.tensor(*tensor),
                                        ty(*b)
                                    )
                                },
                                depth,
                                true,
                            )
                        };
                        self.chunked_copy(
                            *b,
                            *tensor,
                            &region(*tensor, offsets),
                            true,
                            depth,
                            &elementwise,
                        )
                    }
                }
            }
            (Tile::Buffer(b), Tile::Region { tensor, offsets }) => {
                let dt = ctype(self.tensor_dtype(*tensor));
                match self.storage[*b] {
                    Storage::Shared { .. } => one(format!(
                        "{{ {} tl::copy_s2g<{}, {dt}, {}, {t}{}>({}, {}, __g); }}",
                        region(*tensor, offsets),
                        ty(*b),
                        self.tile4(*b),
                        self.stream_arg(*tensor),
                        self.buf(*b),
                        self.tensor(*tensor)
                    )),
                    _ => {
                        let elementwise = |depth: usize, interior: bool| {
                            self.reg_copy(
                                *b,
                                "",
                                |inside, lin| {
                                    let inside = if interior { "true" } else { inside };
                                    format!(
                                        "if ({inside}) {}[{lin}] = tl::cast<{dt}, {}>({});",
                                        self.tensor(*tensor),
                                        ty(*b),
                                        "{SRC}"
                                    )
                                },
                                depth,
                                true,
                            )
                        };
                        self.chunked_copy(
                            *b,
                            *tensor,
                            &region(*tensor, offsets),
                            false,
                            depth,
                            &elementwise,
                        )
                    }
                }
            }
            (Tile::Buffer(a), Tile::Buffer(b)) => {
                let n = self.inst.buffer_len(*a);
                let same_shape = self.inst.buffer_shape(*a) == self.inst.buffer_shape(*b);
                match (self.storage[*a], self.storage[*b]) {
                    (Storage::Shared { .. }, Storage::Shared { .. }) => one(format!(
                        "tl::copy_s2s<{}, {}, {n}, {t}>({}, {});",
                        ty(*a),
                        ty(*b),
                        self.buf(*a),
                        self.buf(*b)
                    )),
                    (Storage::Reg { .. }, Storage::Reg { .. }) => {
                        one(format!(
                        "for (int __r = 0; __r < {}; ++__r) {}[__r] = tl::cast<{}, {}>({}[__r]);",
                        self.nreg(*b), self.buf(*b), ty(*b), ty(*a), self.buf(*a)
                    ))
                    }
                    (
                        Storage::Shared { .. },
                        Storage::Reg {
                            layout: Layout::Chunked { unit },
                            nreg,
                        },
                    ) if same_shape => self.shared_chunks(
                        nreg,
                        unit,
                        *b,
                        &format!(
                            "tl::lds_chunk<{unit}, {}, {}>({} + __L, {} + __k * {unit});",
                            ty(*a),
                            ty(*b),
                            self.buf(*a),
                            self.buf(*b)
                        ),
                        depth,
                    ),
                    (
                        Storage::Reg {
                            layout: Layout::Chunked { unit },
                            nreg,
                        },
                        Storage::Shared { .. },
                    ) if same_shape => self.shared_chunks(
                        nreg,
                        unit,
                        *a,
                        &format!(
                            "tl::sts_chunk<{unit}, {}, {}>({} + __k * {unit}, {} + __L);",
                            ty(*a),
                            ty(*b),
                            self.buf(*a),
                            self.buf(*b)
                        ),
                        depth,
                    ),
                    (Storage::Shared { .. }, _) => self.reg_copy(
                        *b,
                        "",
                        |_, _| {
                            format!(
                                "{{DST}} = tl::cast<{}, {}>({}[__e]);",
                                ty(*b),
                                ty(*a),
                                self.buf(*a)
                            )
                        },
                        depth,
                        false,
                    ),
                    (_, Storage::Shared { .. }) => self.reg_copy(
                        *a,
                        "",
                        |_, _| {
                            format!(
                                "{}[__e] = tl::cast<{}, {}>({{SRC}});",
                                self.buf(*b),
                                ty(*b),
                                ty(*a)
                            )
                        },
                        depth,
                        false,
                    ),
                    _ => unreachable!("check::unsupported rejects copies of local buffers"),
                }
            }
            _ => unreachable!("check::unsupported rejects copies between global tensors"),
        }
    }

    /// Buffer `b`'s shape padded to rank 4 with leading 1s (as a region's dims are), for the
    /// tl.h templates: `1, 1, BM, BN`.
    pub(super) fn tile4(&self, b: BufId) -> String {
        let mut s = self.inst.buffer_shape(b);
        while s.len() < 4 {
            s.insert(0, 1);
        }
        s.iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// A copy between a shared tile and the chunked fragment `frag` of its shape, chunk by
    /// chunk of `unit` elements: `stmt` with `__L` the chunk's first element and `__k` its
    /// register chunk.
    pub(super) fn shared_chunks(
        &self,
        nreg: usize,
        unit: usize,
        frag: BufId,
        stmt: &str,
        depth: usize,
    ) -> String {
        let t = self.threads;
        let total = self.inst.buffer_len(frag);
        let guard = if total % (unit * t) == 0 {
            String::new()
        } else {
            format!("if (__L < {total}) ")
        };
        let mut c = Code::at(depth);
        c.line("#pragma unroll");
        c.open(format!(
            "for (int __k = 0; __k < {}; ++__k) {{",
            nreg / unit
        ));
        c.line(format!(
            "const unsigned __L = (__k * {t} + TL_TID) * {unit};"
        ));
        c.line(format!("{guard}{stmt}"));
        c.close("}");
        c.finish()
    }

    pub(super) fn nreg(&self, b: BufId) -> usize {
        match self.storage[b] {
            Storage::Reg { nreg, .. } => nreg,
            _ => self.inst.buffer_len(b),
        }
    }

    /// A tensor the kernel cannot write ([`read_only`]).
    pub(super) fn read_only(&self, p: ParamId) -> bool {
        read_only(self.k, p)
    }

    pub(super) fn tensor_dtype(&self, p: ParamId) -> Dtype {
        tensor_dtype(self.k, p)
    }

    /// A copy between the register fragment `b` and the global region `__g` (declared by
    /// `region`): for a chunked fragment, when the tensor's pointer, row length and offset allow
    /// (a check uniform over the block), each thread moves its chunks as whole vectors — a
    /// chunk then lies entirely inside or entirely outside the tensor — and otherwise, or for
    /// other layouts, element by element: `elementwise(depth, interior)`, for stores with no
    /// bounds test per element when the tile lies wholly inside the tensor (`interior`, tested
    /// once for the block).
    pub(super) fn chunked_copy(
        &self,
        b: BufId,
        tensor: ParamId,
        region: &str,
        to_regs: bool,
        depth: usize,
        elementwise: &dyn Fn(usize, bool) -> String,
    ) -> String {
        let shape = self.inst.buffer_shape(b);
        let mut c = Code::at(depth);
        let inside_test = format!("tl::tile_inside<{}>(__g)", self.tile4(b));
        // The threads the chunks are spread over, and this thread's place among them.
        let (t, tid, nreg, unit) = match self.storage[b] {
            Storage::Reg {
                layout: Layout::Chunked { unit },
                nreg,
            } => (self.threads, "TL_TID".to_string(), nreg, unit),
            Storage::Reg {
                layout: Layout::Cols { unit, width },
                nreg,
            } if unit > 1 => (width, group_tid(width, self.threads), nreg, unit),
            Storage::Reg {
                layout:
                    Layout::Matrix {
                        inst: inst @ (Inst::MmaSync | Inst::Wgmma),
                        m,
                        n,
                        wm,
                        wn,
                    },
                nreg,
            } if !to_regs && !self.inside && shape.len() == 2 => {
                let coord = inst.coord(m, n, wm, wn);
                return self.pair_store(
                    b,
                    tensor,
                    region,
                    &inside_test,
                    &coord,
                    nreg,
                    depth,
                    elementwise,
                );
            }
            _ => {
                // Stores skip the per-element bounds test when the whole tile is inside; loads
                // keep one path (tested with both, loads made ptxas spill in the examples' norms).
                c.open(format!("{{ {region}"));
                if self.inside || to_regs {
                    c.push(&elementwise(c.depth(), self.inside));
                } else {
                    c.open(format!("if ({inside_test}) {{"));
                    c.push(&elementwise(c.depth(), true));
                    c.reopen("} else {");
                    c.push(&elementwise(c.depth(), false));
                    c.close("}");
                }
                c.close("}");
                return c.finish();
            }
        };
        let total: usize = shape.iter().product();
        let (rt, gt) = (
            ctype(self.k.buffers[b].dtype),
            ctype(self.tensor_dtype(tensor)),
        );
        let (name, ptr) = (self.buf(b), self.tensor(tensor));
        let r = shape.len();
        let guard = if total % (unit * t) == 0 {
            "true".to_string()
        } else {
            format!("__L < {total}")
        };
        // This thread's chunks: `body` with `__L` the chunk's first element, `__c0..` its tile
        // coordinates and `__k` its register chunk. `__L` stays signed here, unlike the loops'
        // unsigned index: with unsigned coordinates ptxas computes every chunk's address up
        // front, and in a whole-row softmax (32 values a thread, a division's slow-path call
        // per element) that took 83 registers instead of 64 and halved the blocks per SM
        // (0.648 -> 0.895 ms on the H200, docs/perf/2026-12-03-h200-cols at commit 2425534).
        // `__c0..`, the tile coordinates of the chunk starting at `__L`, a line each.
        let coords = |c: &mut Code| {
            for (d, x) in tile_coords(&shape, "__L").iter().enumerate() {
                c.line(format!("const tl::index __c{d} = {x};"));
            }
        };
        let chunks = |depth: usize, body: &str| {
            let mut c = Code::at(depth);
            c.line("#pragma unroll");
            c.open(format!(
                "for (int __k = 0; __k < {}; ++__k) {{",
                nreg / unit
            ));
            c.line(format!("const int __L = (__k * {t} + {tid}) * {unit};"));
            c.open(format!("if ({guard}) {{"));
            coords(&mut c);
            c.line(body);
            c.close("}");
            c.close("}");
            c.finish()
        };
        let (inside, lin) = region_index(r);
        let at = format!("{ptr} + {lin}");
        let regs = format!("{name} + __k * {unit}");
        let nc = match (self.read_only(tensor), self.hint) {
            (true, Some(h)) => format!(", true, {}", h.policy()),
            (true, None) => ", true".to_string(),
            (false, _) => String::new(),
        };
        let stream = self.stream_arg(tensor);
        // One chunk's move at address `at`, under the test `inside` (empty: none).
        let vector = |inside: &str, at: &str| {
            let test = if inside.is_empty() {
                String::new()
            } else {
                format!("if ({inside}) ")
            };
            if to_regs {
                let zero = if inside.is_empty() {
                    String::new()
                } else {
                    format!("\nelse for (int __v = 0; __v < {unit}; ++__v) {name}[__k * {unit} + __v] = tl::lit<{rt}>(0.0);")
                };
                format!("{test}tl::load_chunk<{unit}, {gt}, {rt}{nc}>({at}, {regs});{zero}")
            } else {
                format!("{test}tl::store_chunk<{unit}, {rt}, {gt}{stream}>({regs}, {at});")
            }
        };
        // The interior path (inside and aligned: no test per chunk). Stores whose chunks lie a
        // fixed distance apart (`Plan::store_strides`) address them from chunk 0's.
        let bumped = if to_regs {
            None
        } else {
            self.p.store_strides[b]
        };
        let interior = |depth: usize| match bumped {
            Some((d, rows)) => {
                let g = d + 4 - r;
                let stride = (g + 1..4)
                    .map(|j| format!(" * __g.dims[{j}]"))
                    .collect::<String>();
                let mut c = Code::at(depth);
                c.open("{");
                c.line(format!("const int __L = {tid} * {unit};"));
                coords(&mut c);
                c.line(format!("{gt}* const __p = {ptr} + ({lin});"));
                c.line(format!("const tl::index __dp = (tl::index){rows}{stride};"));
                c.line("#pragma unroll");
                c.line(format!("for (int __k = 0; __k < {}; ++__k)", nreg / unit));
                c.indent(1);
                c.line(vector("", "__p + __k * __dp"));
                c.indent(-1);
                c.close("}");
                c.finish()
            }
            None => chunks(depth, &vector("", &at)),
        };
        c.open(format!("{{ {region}"));
        if self.inside {
            // An interior iteration of a split loop: inside and aligned ([`super::interior`]).
            c.push(&interior(c.depth()));
            c.close("}");
            return c.finish();
        }
        // Three paths, chosen once for the block: a tile wholly inside the tensor moves whole
        // vectors with no test per chunk; a tile across the tensor's edge tests each chunk
        // (which then lies wholly inside or outside each row); a tensor whose pointer, row
        // length or offset refuse vectors goes element-wise, chunk by chunk.
        c.open(format!(
            "if (tl::chunk_aligned<{unit}>({ptr}, __g) && {inside_test}) {{"
        ));
        c.push(&interior(c.depth()));
        c.reopen(format!(
            "}} else if (tl::chunk_aligned<{unit}>({ptr}, __g)) {{"
        ));
        c.push(&chunks(c.depth(), &vector(&inside, &at)));
        c.reopen("} else {");
        let (row, base) = region_row(r);
        let tail = if to_regs {
            format!("tl::load_chunk_tail<{unit}, {gt}, {rt}>({ptr} + ({base}), __row, __gc, __g.dims[3], {regs});")
        } else {
            format!("tl::store_chunk_tail<{unit}, {rt}, {gt}>({regs}, {ptr} + ({base}), __row, __gc, __g.dims[3]);")
        };
        c.push(&chunks(
            c.depth(),
            &format!(
                "const bool __row = {row};\nconst tl::index __gc = __g.off[3] + __c{};\n{tail}",
                r - 1
            ),
        ));
        c.close("}");
        c.close("}");
        c.finish()
    }

    /// The streaming-store argument of the copies into tensor `p`: `, true` where the kernel
    /// writes it and never reads it ([`Plan::write_once`]: its stores evict first).
    pub(super) fn stream_arg(&self, p: ParamId) -> &'static str {
        if self.p.write_once[p] {
            ", true"
        } else {
            ""
        }
    }

    /// The store of an mma.sync / wgmma accumulator `b` to the global region `__g`: registers
    /// `2i` and `2i + 1` hold columns `c` and `c + 1` of one row (`c` even), so where the
    /// tensor's pointer, row length and offset allow vectors of two (a check uniform over the
    /// block), each pair is one store, with no test when the tile lies wholly inside the
    /// tensor and one test a pair across its edge (an even column inside an even row length
    /// has its neighbour inside); otherwise element by element. 2-byte stores had sent four
    /// times C's sectors to L2 from the GEMM on the H100 (docs/perf/2026-12-05-h100-hopper at 0d10254).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn pair_store(
        &self,
        b: BufId,
        tensor: ParamId,
        region: &str,
        inside_test: &str,
        coord: &str,
        nreg: usize,
        depth: usize,
        elementwise: &dyn Fn(usize, bool) -> String,
    ) -> String {
        let (rt, gt) = (
            ctype(self.k.buffers[b].dtype),
            ctype(self.tensor_dtype(tensor)),
        );
        let (name, ptr) = (self.buf(b), self.tensor(tensor));
        let stream = self.stream_arg(tensor);
        // Each pair's address is the tile's corner plus `row · row length + col`: one 64-bit
        // multiply-add a pair (the whole region's index per pair made ptxas spill the batched
        // GEMM's consumers, 52 bytes).
        let (inside, _) = region_index(2);
        let (_, corner) = region_index(0);
        let pairs = |depth: usize, test: &str| {
            let mut c = Code::at(depth);
            c.line(format!("{gt}* __p = {ptr} + ({corner});"));
            c.line("#pragma unroll");
            c.open(format!("for (int __k = 0; __k < {}; ++__k) {{", nreg / 2));
            c.line("int __row, __col;");
            c.line(format!("{coord}(2 * __k, __row, __col);"));
            c.line("const tl::index __c0 = (tl::index)__row, __c1 = (tl::index)__col;");
            c.line(format!("{test}tl::store_chunk<2, {rt}, {gt}{stream}>({name} + 2 * __k, __p + __c0 * __g.dims[3] + __c1);"));
            c.close("}");
            c.finish()
        };
        let mut c = Code::at(depth);
        c.open(format!("{{ {region}"));
        c.open(format!(
            "if (tl::chunk_aligned<2>({ptr}, __g) && {inside_test}) {{"
        ));
        c.push(&pairs(c.depth(), ""));
        c.reopen(format!("}} else if (tl::chunk_aligned<2>({ptr}, __g)) {{"));
        c.push(&pairs(c.depth(), &format!("if ({inside}) ")));
        c.reopen("} else {");
        c.push(&elementwise(c.depth(), false));
        c.close("}");
        c.close("}");
        c.finish()
    }

    /// A wgmma accumulator's copy out through shared memory and TMA stores
    /// ([`TmaStore`]): `tl::store_acc_tma` at the region's origin.
    pub(super) fn tma_store(&self, st: &TmaStore, src: &Tile, dst: &Tile, depth: usize) -> String {
        let (Tile::Buffer(acc), Tile::Region { tensor, offsets }) = (src, dst) else {
            unreachable!("TMA stores copy an accumulator to a region")
        };
        let n = self.inst.buffer_shape(*acc)[1];
        let text = format!(
            "{{ {} tl::store_acc_tma<{}, {n}, {}>({}, tl_smem + {}, &__tm{}, __o); }}",
            self.origin(offsets),
            ctype(self.tensor_dtype(*tensor)),
            offsets.len(),
            self.buf(*acc),
            st.stage,
            st.map,
        );
        Code::one(depth, text)
    }

    /// A TMA copy's region origin as the array `__o` (outermost first).
    pub(super) fn origin(&self, offsets: &[Expr]) -> String {
        let offs: Vec<String> = offsets.iter().map(|o| self.expr(o)).collect();
        format!(
            "const tl::index __o[{}] = {{{}}};",
            offs.len(),
            offs.join(", ")
        )
    }

    /// A copy between a register fragment `b` and a global region (`global`) or a shared
    /// buffer, iterating over this thread's elements. `body(inside, lin)` renders the per-element
    /// statement with `{DST}` / `{SRC}` standing for the register; `__e` is the element's
    /// row-major index in the tile.
    pub(super) fn reg_copy(
        &self,
        b: BufId,
        prelude: &str,
        body: impl Fn(&str, &str) -> String,
        depth: usize,
        global: bool,
    ) -> String {
        let shape = self.inst.buffer_shape(b);
        let (head, coords) =
            match self.storage[b] {
                Storage::Reg { layout, .. } => self.mapping(layout, &shape),
                _ => return Code::one(
                    depth,
                    "#error \"tilelang: copy of a non-register buffer through the register path\"",
                ),
            };
        let r = shape.len();
        let mut c = Code::at(depth);
        c.open(format!("{{ {prelude}"));
        // The head opens the loop over this thread's elements and its guard.
        c.line(head);
        c.indent(2);
        let mut e_lin = String::from("0");
        for d in 0..r {
            c.line(format!("const tl::index __c{d} = {};", coords[d]));
            e_lin = format!("({e_lin}) * {} + __c{d}", shape[d]);
        }
        c.line(format!("const tl::index __e = {e_lin};"));
        let (inside, lin) = if global {
            let (inside, lin) = region_index(r);
            (format!("({inside})"), lin)
        } else {
            ("true".into(), "__e".into())
        };
        let stmt = body(&inside, &lin);
        // A copy out of a row fragment: one thread per group stores what the group holds.
        let stmt = match self.storage[b] {
            Storage::Reg { layout, .. } if stmt.contains("{SRC}") => match lead(layout) {
                Some(c) => format!("if ({c}) {{ {stmt} }}"),
                None => stmt,
            },
            _ => stmt,
        };
        let stmt = stmt
            .replace("{DST}", &format!("{}[__r]", self.buf(b)))
            .replace("{SRC}", &format!("{}[__r]", self.buf(b)));
        c.line(stmt);
        c.close("}");
        c.close("}");
        c.close("}");
        c.finish()
    }
}
