//! Sequential loops: staged `pipelined` loops (`cp.async` and TMA), loops split into interior
//! and edge iterations, reductions carried across a loop, and the thread mapping of `parallel`
//! loops.

use super::code::Code;
use super::emitter::*;
use crate::ir::*;
use crate::lower::names::*;
use crate::lower::plan::*;
use crate::lower::util::*;
use std::collections::BTreeSet;

impl Emitter<'_> {
    /// A `pipelined` loop whose body starts with `nloads` copies from global memory into
    /// shared buffers of `stages` copies each (`plan_pipelines`): the copies of iteration
    /// `i + stages - 1` are issued asynchronously (`cp.async`, one commit group per iteration)
    /// while iteration `i` computes on its stage. A prologue issues the first `stages - 1`
    /// iterations' copies; each iteration waits for its own group, then one barrier makes
    /// every thread's copies visible and frees the stage the previous iteration read, which
    /// the new copies then overwrite.
    pub(super) fn pipelined_loop(
        &mut self,
        var: VarId,
        extent: &Expr,
        stages: usize,
        body: &[Stmt],
        nloads: usize,
        depth: usize,
    ) -> String {
        let (loads, compute) = body.split_at(nloads);
        let v = self.var(var);
        let n = format!("__n{depth}");
        let bufs: Vec<BufId> = loads.iter().map(load_buf).collect();
        let mut c = Code::at(depth);
        c.open("{");
        c.line(format!("const tl::index {n} = {};", self.expr(extent)));
        c.open(format!(
            "for (tl::index __s{depth} = 0; __s{depth} < {}; ++__s{depth}) {{",
            stages - 1
        ));
        c.open(format!("if (__s{depth} < {n}) {{"));
        c.line(format!("const tl::index {v} = __s{depth};"));
        c.push(&self.stage_ptrs(&bufs, &format!("__s{depth}"), c.depth()));
        self.async_copies = true;
        c.push(&self.block(loads, c.depth()));
        self.async_copies = false;
        c.close("}");
        c.line("tl::cp_async_commit();");
        c.close("}");
        c.open(format!("for (tl::index {v} = 0; {v} < {n}; ++{v}) {{"));
        c.line(format!("tl::cp_async_wait<{}>();", stages - 2));
        c.line(format!("{};", self.barrier()));
        c.open("{");
        c.line(format!(
            "const tl::index __i{depth} = {v} + {};",
            stages - 1
        ));
        c.open(format!("if (__i{depth} < {n}) {{"));
        c.line(format!("const tl::index {v} = __i{depth};"));
        c.push(&self.stage_ptrs(&bufs, &format!("__i{depth} % {stages}"), c.depth()));
        self.async_copies = true;
        c.push(&self.block(loads, c.depth()));
        self.async_copies = false;
        c.close("}");
        c.line("tl::cp_async_commit();");
        c.close("}");
        c.open("{");
        c.push(&self.stage_ptrs(&bufs, &format!("{v} % {stages}"), c.depth()));
        c.push(&self.block(compute, c.depth()));
        c.close("}");
        c.close("}");
        c.line("tl::cp_async_wait<0>();");
        c.close("}");
        c.finish()
    }

    /// A pipelined loop whose loads run on TMA ([`super::tma`]): thread 0 initialises one
    /// mbarrier per stage and issues each iteration's tiles as bulk tensor copies that complete
    /// on its stage's mbarrier (announcing the stage's bytes); every thread waits for the
    /// stage's phase (parity = how many times the stage was filled before, mod 2) before
    /// computing on it. As with `cp.async`, the first `stages - 1` iterations' loads are issued
    /// ahead, and each iteration's barrier frees the stage the previous one read before the
    /// loads of iteration `i + stages - 1` overwrite it.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn tma_loop(
        &mut self,
        var: VarId,
        extent: &Expr,
        stages: usize,
        body: &[Stmt],
        nloads: usize,
        t: &TmaLoop,
        depth: usize,
    ) -> String {
        let (loads, compute) = body.split_at(nloads);
        let v = self.var(var);
        let n = format!("__n{depth}");
        let bar = format!("__full{depth}");
        let bufs: Vec<BufId> = loads.iter().map(load_buf).collect();
        let issue = |e: &Emitter, slot: &str, d: usize| {
            e.stage_ptrs(&bufs, slot, d) + &e.tma_issue(loads, t, &format!("{bar}[{slot}]"), d)
        };
        let mut c = Code::at(depth);
        c.open("{");
        c.line(format!("const tl::index {n} = {};", self.expr(extent)));
        c.line(format!(
            "uint64_t* {bar} = (uint64_t*)(tl_smem + {});",
            t.barriers
        ));
        c.open("if (TL_TID == 0) {");
        c.line(format!(
            "for (int __b = 0; __b < {stages}; ++__b) tl::mbar_init(&{bar}[__b], 1);"
        ));
        c.line("tl::mbar_fence_init();");
        c.close("}");
        c.line(format!("{};", self.barrier()));
        c.open(format!(
            "for (tl::index __s{depth} = 0; __s{depth} < {}; ++__s{depth}) {{",
            stages - 1
        ));
        c.open(format!("if (__s{depth} < {n} && TL_TID == 0) {{"));
        c.line(format!("const tl::index {v} = __s{depth};"));
        c.push(&issue(self, &format!("__s{depth}"), c.depth()));
        c.close("}");
        c.close("}");
        c.open(format!("for (tl::index {v} = 0; {v} < {n}; ++{v}) {{"));
        c.line(format!("{};", self.barrier()));
        c.open("{");
        c.line(format!(
            "const tl::index __i{depth} = {v} + {};",
            stages - 1
        ));
        c.open(format!("if (__i{depth} < {n} && TL_TID == 0) {{"));
        c.line(format!("const tl::index {v} = __i{depth};"));
        c.push(&issue(self, &format!("__i{depth} % {stages}"), c.depth()));
        c.close("}");
        c.close("}");
        c.line(format!(
            "tl::mbar_wait(&{bar}[{v} % {stages}], (int)(({v} / {stages}) & 1));"
        ));
        c.open("{");
        c.push(&self.stage_ptrs(&bufs, &format!("{v} % {stages}"), c.depth()));
        c.push(&self.block(compute, c.depth()));
        c.close("}");
        c.close("}");
        c.close("}");
        c.finish()
    }

    /// Pointers to the current stage (`stage`, an expression) of each pipelined buffer.
    pub(super) fn stage_ptrs(&self, bufs: &[BufId], stage: &str, depth: usize) -> String {
        let mut c = Code::at(depth);
        for &b in bufs {
            let Storage::Shared { offset } = self.storage[b] else {
                unreachable!("pipelined loads write shared buffers")
            };
            let ty = ctype(self.k.buffers[b].dtype);
            c.line(format!(
                "{ty}* {} = ({ty}*)(tl_smem + {offset} + ({stage}) * {});",
                self.buf(b),
                self.inst.stage_bytes(b)
            ));
        }
        c.finish()
    }

    /// A TMA loop's loads as bulk tensor copies completing on mbarrier `bar` (an lvalue), which
    /// first expects the stage's bytes; one thread runs it (the caller's condition).
    pub(super) fn tma_issue(&self, loads: &[Stmt], t: &TmaLoop, bar: &str, depth: usize) -> String {
        let mut c = Code::at(depth);
        c.line(format!("tl::mbar_expect_tx(&{bar}, {});", t.bytes));
        for (s, &map) in loads.iter().zip(&t.maps) {
            let StmtKind::Copy {
                src: Tile::Region { offsets, .. },
                dst: Tile::Buffer(b),
            } = &s.kind
            else {
                unreachable!("TMA loads are copies into buffers")
            };
            let shape = self.inst.buffer_shape(*b);
            let rank = offsets.len();
            // An atom tile takes a box per atom; a plain one, one box.
            let call = if self.swizzled[*b] == ATOMS {
                format!("tma_tile<{rank}, {}, {}>", shape[0], shape[1])
            } else {
                format!("tma_box<{rank}>")
            };
            c.line(format!(
                "{{ {} tl::{call}({}, &__tm{map}, &{bar}, __o); }}",
                self.origin(offsets),
                self.buf(*b)
            ));
        }
        c.finish()
    }

    /// A loop split into its interior iterations and the rest ([`super::interior`]): before
    /// it, each of the split's copies evaluates its region at the first iteration and bounds
    /// how many iterations keep its tile inside (and, for chunked copies, aligned).
    pub(super) fn split_loop(
        &mut self,
        split: &Split,
        v: &str,
        start: &str,
        end: &str,
        body: &[Stmt],
        depth: usize,
    ) -> String {
        let mid = format!("__mid{depth}");
        // A scope for `mid`, its lines at the loops' depth (whose names the depth numbers).
        let mut c = Code::at(depth);
        c.line("{");
        c.line(format!("tl::index {mid};"));
        c.open("{");
        c.line(format!("const tl::index {v} = {start};"));
        c.line(format!("tl::index __n = {end} - {v};"));
        for cp in &split.copies {
            let copy = body.iter().find(|s| self.p.inst.ids.stmt(s) == cp.copy);
            let Some(StmtKind::Copy { src, dst }) = copy.map(|s| &s.kind) else {
                unreachable!("a split's copies are copies")
            };
            let ((Tile::Region { tensor, offsets }, Tile::Buffer(b))
            | (Tile::Buffer(b), Tile::Region { tensor, offsets })) = (src, dst)
            else {
                unreachable!("a split's copies move between a buffer and a region")
            };
            let step = cp.step.map(|s| s.to_string()).join(", ");
            let n = format!(
                "tl::iterations_inside<{}, {step}>(__g, __n)",
                self.tile4(*b)
            );
            let n = match cp.chunk {
                Some(unit) => format!(
                    "tl::chunk_aligned<{unit}>({}, __g) ? {n} : 0",
                    self.tensor(*tensor)
                ),
                None => n,
            };
            c.line(format!(
                "{{ {} __n = {n}; }}",
                self.region(*tensor, offsets)
            ));
        }
        c.line(format!("{mid} = {v} + (__n > 0 ? __n : 0);"));
        c.close("}");
        let keys: BTreeSet<StmtId> = split.copies.iter().map(|c| c.copy).collect();
        c.open(format!(
            "for (tl::index {v} = {start}; {v} < {mid}; ++{v}) {{"
        ));
        let saved = std::mem::replace(&mut self.interior, keys);
        c.push(&self.block(body, c.depth()));
        self.interior = saved;
        c.close("}");
        c.open(format!(
            "for (tl::index {v} = {mid}; {v} < {end}; ++{v}) {{"
        ));
        c.push(&self.block(body, c.depth()));
        c.close("}");
        c.line("}");
        c.finish()
    }

    /// Before a loop that carries reductions ([`super::defer`]): a scope and, per reduction,
    /// this thread's running value of each of its rows, at the operation's identity.
    pub(super) fn carry_open(&self, s: &Stmt, carried: &[Deferred], depth: usize) -> String {
        let StmtKind::For { body, .. } = &s.kind else {
            unreachable!("only loops carry reductions")
        };
        // The scope closes in `carry_close`.
        let mut c = Code::at(depth);
        c.line("{");
        for d in carried {
            let StmtKind::Reduce { op, src, dst, .. } = &body[d.at].kind else {
                unreachable!("a deferral starts at a reduction")
            };
            let r = self.p.reduces[&d.reduce];
            let ty = ctype(self.k.buffers[*src].dtype);
            let acc = self.carry(*dst);
            c.line(format!("{ty} {acc}[{n}];", n = r.nreg));
            c.line(format!(
                "for (int __r = 0; __r < {n}; ++__r) {acc}[__r] = {}::unit<{ty}>();",
                reduce_op(*op),
                n = r.nreg
            ));
        }
        c.finish()
    }

    /// After a loop that carries reductions: when it ran at least once, each reduction is
    /// finished across threads and its combine statement runs; then the scope closes.
    pub(super) fn carry_close(&mut self, s: &Stmt, carried: &[Deferred], depth: usize) -> String {
        let (cond, body) = match &s.kind {
            StmtKind::For {
                kind: LoopKind::Serial { start, end },
                body,
                ..
            } => (format!("{} < {}", self.expr(start), self.expr(end)), body),
            StmtKind::For {
                kind: LoopKind::Pipelined { extent, .. },
                body,
                ..
            } => (format!("((tl::index)0) < {}", self.expr(extent)), body),
            _ => unreachable!("only serial and pipelined loops carry reductions"),
        };
        let mut c = Code::at(depth);
        c.open(format!("if ({cond}) {{"));
        for d in carried {
            let StmtKind::Reduce { op, src, dst, .. } = &body[d.at].kind else {
                unreachable!("a deferral starts at a reduction")
            };
            c.push(&self.reduce_rows_call(*op, *src, *dst, d.reduce, true, c.depth()));
            self.finishing = true;
            c.push(&self.block_stmt(&body[d.at + 1], c.depth()));
            self.finishing = false;
        }
        c.close("}");
        // The scope `carry_open` opened.
        c.line("}");
        c.finish()
    }

    /// The running values of a deferred reduction into `part`, one per row of the thread.
    pub(super) fn carry(&self, part: BufId) -> String {
        format!("{}_carry", self.buf(part))
    }

    /// The loop header over this thread's elements and the coordinate expressions.
    pub(super) fn mapping(&self, layout: Layout, ext: &[usize]) -> (String, Vec<String>) {
        let t = self.threads;
        // Strided and chunked: element `__L` of the row-major tile, per register `__r`. Where a
        // thread's `unit` consecutive registers lie in one row (`unit` divides the innermost
        // extent), the coordinates come from the chunk's first element `__L0` plus the
        // register's place in it: per register a constant, so the compiler folds the offsets
        // into the accesses' immediates instead of redoing the index math per element.
        let linear = |unit: usize, t: usize, tid: &str| {
            let total: usize = ext.iter().product();
            let nreg = total.div_ceil(unit * t) * unit;
            let guard = |lin: &str| {
                if total % (unit * t) == 0 {
                    "true".to_string()
                } else {
                    format!("{lin} < {total}")
                }
            };
            let last = *ext.last().unwrap_or(&1);
            if unit > 1 && last % unit == 0 {
                let guard = guard("__L0");
                let head = format!("#pragma unroll\nfor (int __r = 0; __r < {nreg}; ++__r) {{\n  const unsigned __L0 = ((__r / {unit}) * {t} + {tid}) * {unit}, __L = __L0 + __r % {unit};\n  if ({guard}) {{");
                let mut coords = tile_coords(ext, "__L0");
                if let Some(c) = coords.last_mut() {
                    *c = format!("(tl::index)((__L0 % {last}) + __r % {unit})");
                }
                (head, coords)
            } else {
                let l = if unit == 1 {
                    format!("__r * {t} + {tid}")
                } else {
                    format!("((__r / {unit}) * {t} + {tid}) * {unit} + __r % {unit}")
                };
                let guard = guard("__L");
                let head = format!("#pragma unroll\nfor (int __r = 0; __r < {nreg}; ++__r) {{\n  const unsigned __L = {l};\n  if ({guard}) {{");
                (head, tile_coords(ext, "__L"))
            }
        };
        match layout {
            Layout::Strided => linear(1, t, "TL_TID"),
            Layout::Chunked { unit } => linear(unit, t, "TL_TID"),
            // Each group of `width` threads holds the whole row, as a block of `width` would.
            Layout::Cols { unit, width } => linear(unit, width, &group_tid(width, t)),
            Layout::Rows { groups, width } => {
                // Every thread of a group runs its group's rows.
                let total: usize = ext.iter().product();
                let l = if groups == 1 {
                    "__r".to_string()
                } else {
                    format!("__r * {groups} + TL_TID / {width}")
                };
                let guard = if total % groups == 0 {
                    "true".to_string()
                } else {
                    format!("__L < {total}")
                };
                let head = format!("#pragma unroll\nfor (int __r = 0; __r < {}; ++__r) {{\n  const unsigned __L = {l};\n  if ({guard}) {{", total.div_ceil(groups));
                (head, tile_coords(ext, "__L"))
            }
            Layout::AccRows { inst, m, wm, wn } => {
                // Every holder of a row runs it (the lanes and waves that share it).
                let rows = inst.rows(m, wm, wn);
                let head = format!("#pragma unroll\nfor (int __r = 0; __r < {rows}::NREG; ++__r) {{\n  const int __row = {rows}::row(TL_TID, __r);\n  {{");
                (head, vec!["(tl::index)__row".into()])
            }
            Layout::Matrix { inst, m, n, wm, wn } => {
                // Each thread holds m·n / t elements, each held by exactly one (thread, register).
                let nreg = m * n / t;
                let head = format!("#pragma unroll\nfor (int __r = 0; __r < {nreg}; ++__r) {{\n  int __row, __col;\n  {}(__r, __row, __col);\n  {{", inst.coord(m, n, wm, wn));
                (
                    head,
                    vec!["(tl::index)__row".into(), "(tl::index)__col".into()],
                )
            }
        }
    }
}
