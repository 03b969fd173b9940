//! Statements: block-level statements (tile operations, loops, barriers) and the statements
//! of one thread inside a `parallel` loop, and where an element access reads or writes.

use super::code::Code;
use super::emitter::*;
use crate::ir::visit::*;
use crate::ir::*;
use crate::lower::names::*;
use crate::lower::plan::*;

impl Emitter<'_> {
    /// A block barrier: tl.h's, or with the async-proxy fence first where wgmma reads shared
    /// memory ([`Plan::async_proxy`]); among the consumers only in their code of a
    /// warp-specialised entry.
    pub(super) fn barrier(&self) -> String {
        match (self.consumers, self.p.async_proxy) {
            (Some(n), true) => format!("tl::consumer_sync_async_proxy<{n}>()"),
            (Some(n), false) => format!("tl::consumer_sync<{n}>()"),
            (None, true) => "tl::sync_async_proxy()".into(),
            (None, false) => "tl::sync()".into(),
        }
    }

    /// A block-level statement sequence, with the barriers [`super::sync`] placed.
    pub(super) fn block(&mut self, stmts: &[Stmt], depth: usize) -> String {
        let mut out = Code::at(depth);
        for s in stmts {
            if self.p.barriers.contains(&self.p.inst.ids.stmt(s)) {
                out.line(format!("{};", self.barrier()));
            }
            out.push(&self.line(s));
            let carried = self.p.deferred.get(&self.p.inst.ids.stmt(s));
            if let Some(d) = carried {
                out.push(&self.carry_open(s, d, depth));
            }
            if let StmtKind::For {
                kind: LoopKind::Pipelined { extent, .. },
                vars,
                body,
            } = &s.kind
            {
                if let Some(&Staging {
                    loads: nloads,
                    stages,
                }) = self.p.staged.get(&self.p.inst.ids.stmt(s))
                {
                    let text = match self.p.tma.loops.get(&self.p.inst.ids.stmt(s)) {
                        Some(t) if self.tma => {
                            self.tma_loop(vars[0], extent, stages, body, nloads, t, depth)
                        }
                        _ => self.pipelined_loop(vars[0], extent, stages, body, nloads, depth),
                    };
                    out.push(&text);
                    if let Some(d) = carried {
                        out.push(&self.carry_close(s, d, depth));
                    }
                    continue;
                }
            }
            match &s.kind {
                StmtKind::For {
                    kind: LoopKind::Serial { .. } | LoopKind::Pipelined { .. },
                    vars,
                    body,
                } => {
                    let (start, end) = match &s.kind {
                        StmtKind::For {
                            kind: LoopKind::Serial { start, end },
                            ..
                        } => (self.expr(start), self.expr(end)),
                        StmtKind::For {
                            kind: LoopKind::Pipelined { extent, .. },
                            ..
                        } => ("((tl::index)0)".to_string(), self.expr(extent)),
                        _ => unreachable!(),
                    };
                    let v = self.var(vars[0]);
                    match self.p.splits.get(&self.p.inst.ids.stmt(s)) {
                        Some(split) => {
                            out.push(&self.split_loop(split, &v, &start, &end, body, depth))
                        }
                        None => {
                            out.open(format!(
                                "for (tl::index {v} = {start}; {v} < {end}; ++{v}) {{"
                            ));
                            out.push(&self.block(body, depth + 1));
                            out.close("}");
                        }
                    }
                }
                StmtKind::If { cond, then, els } => {
                    out.open(format!("if ({}) {{", self.expr(cond)));
                    out.push(&self.block(then, depth + 1));
                    if !els.is_empty() {
                        out.reopen("} else {");
                        out.push(&self.block(els, depth + 1));
                    }
                    out.close("}");
                }
                _ => out.push(&self.block_stmt(s, depth)),
            }
            if let Some(d) = carried {
                out.push(&self.carry_close(s, d, depth));
            }
        }
        out.finish()
    }

    /// A block-level statement other than serial loops and `if`.
    pub(super) fn block_stmt(&mut self, s: &Stmt, depth: usize) -> String {
        let one = |text: String| Code::one(depth, text);
        let t = self.threads;
        if !self.finishing && self.p.is_deferred_combine(s) {
            // A deferred reduction's combine runs once, after its loop (`carry_close`).
            return String::new();
        }
        match &s.kind {
            StmtKind::Let { .. } | StmtKind::Assign { .. } => self.thread_stmt(s, depth),
            StmtKind::Store { .. } | StmtKind::AtomicAdd { .. } => {
                // One thread performs a block-level store.
                let mut c = Code::at(depth);
                c.open("if (TL_TID == 0) {");
                c.push(&self.thread_stmt(s, depth + 1));
                c.close("}");
                c.finish()
            }
            StmtKind::Alloc(b) => {
                let buf = &self.k.buffers[*b];
                let (ty, name) = (ctype(buf.dtype), self.buf(*b));
                match self.storage[*b] {
                    Storage::Shared { offset } => {
                        one(format!("{ty}* {name} = ({ty}*)(tl_smem + {offset});"))
                    }
                    Storage::Reg { nreg, .. } => one(format!("{ty} {name}[{nreg}];")),
                    Storage::Local => one(format!("{ty} {name}[{}];", self.inst.buffer_len(*b))),
                }
            }
            StmtKind::For {
                kind: LoopKind::Parallel { extents },
                vars,
                body,
            } => {
                let ext = self.inst.extents(extents);
                let plan = &self.p.loops[&self.p.inst.ids.stmt(s)];
                self.bcast = plan.row_read.map(|r| (ext.len(), r));
                if let Some(v) = &plan.vector {
                    let out = self.vector_loop(v, vars, body, &ext, depth);
                    self.bcast = None;
                    return out;
                }
                self.lead = lead(plan.layout);
                let (head, coords) = self.mapping(plan.layout, &ext);
                let mut c = Code::at(depth);
                // The head opens the loop over this thread's elements and its guard.
                c.line(head);
                c.indent(2);
                for (d, v) in vars.iter().enumerate() {
                    c.line(format!("const tl::index {} = {};", self.var(*v), coords[d]));
                }
                c.push(&self.thread_stmts(body, depth + 2));
                (self.lead, self.bcast) = (None, None);
                c.close("}");
                c.close("}");
                c.finish()
            }
            StmtKind::Copy { src, dst } => {
                let p = self.p;
                if let Some(store) = p.tma.stores.get(&p.inst.ids.stmt(s)).filter(|_| self.tma) {
                    return self.tma_store(store, src, dst, depth);
                }
                self.hint = p.reuse.get(&p.inst.ids.stmt(s)).copied();
                self.inside = self.interior.contains(&p.inst.ids.stmt(s));
                let out = self.copy(src, dst, depth);
                self.inside = false;
                self.hint = None;
                out
            }
            StmtKind::Fill { buf, value } => {
                let v = self.expr(value);
                let (ty, name) = (ctype(self.k.buffers[*buf].dtype), self.buf(*buf));
                match self.storage[*buf] {
                    Storage::Shared { .. } => one(format!(
                        "tl::fill_shared<{ty}, {}, {t}>({name}, {v});",
                        self.inst.buffer_len(*buf)
                    )),
                    Storage::Reg { nreg, .. } => one(format!(
                        "for (int __r = 0; __r < {nreg}; ++__r) {name}[__r] = {v};"
                    )),
                    Storage::Local => one(format!(
                        "for (int __r = 0; __r < {}; ++__r) {name}[__r] = {v};",
                        self.inst.buffer_len(*buf)
                    )),
                }
            }
            StmtKind::Gemm { a, b, c, ta, tb } => {
                let (m, n, kk) = self.inst.gemm_mnk([*a, *b, *c], [*ta, *tb]);
                let tt = trans_args([*ta, *tb]);
                let (ty, tc) = (
                    ctype(self.k.buffers[*a].dtype),
                    ctype(self.k.buffers[*c].dtype),
                );
                let (na, nb, nc) = (self.buf(*a), self.buf(*b), self.buf(*c));
                if let (
                    Storage::Reg { .. },
                    Storage::Reg {
                        layout: Layout::Matrix { inst, wm, wn, .. },
                        ..
                    },
                ) = (self.storage[*a], self.storage[*c])
                {
                    // A from registers, laid out as an mma.sync or wgmma accumulator (`served`).
                    let tb = if *tb { ", true" } else { "" };
                    return one(if inst == Inst::Wgmma {
                        format!(
                            "tl::gemm_wgmma_rs<{ty}, {m}, {n}, {kk}, {}{tb}>({na}, {nb}, {nc});",
                            wm * wn / 4
                        )
                    } else {
                        format!(
                            "tl::gemm_mma_rs<{ty}, {m}, {n}, {kk}, {wm}, {wn}, {}{tb}>({na}, {nb}, {nc});",
                            self.swizzled[*b] != 0
                        )
                    });
                }
                match self.storage[*c] {
                    Storage::Reg {
                        layout:
                            Layout::Matrix {
                                inst: Inst::MmaSync,
                                wm,
                                wn,
                                ..
                            },
                        ..
                    } if self.swizzled[*a] != 0 || self.swizzled[*b] != 0 => one(format!(
                        "tl::gemm_mma<{ty}, {m}, {n}, {kk}, {wm}, {wn}, {}, {}{tt}>({na}, {nb}, {nc});",
                        self.swizzled[*a] != 0,
                        self.swizzled[*b] != 0
                    )),
                    Storage::Reg {
                        layout: Layout::Matrix { inst, wm, wn, .. },
                        ..
                    } => {
                        // Issued only, in the warp-specialised loop that keeps it in flight.
                        let issue_only = self.tma
                            && self.p.tma.specialized.as_ref().and_then(|w| w.in_flight)
                                == Some(self.p.inst.ids.stmt(s));
                        one(format!(
                            "{}({na}, {nb}, {nc});",
                            inst.gemm(ty, m, n, kk, wm, wn, [*ta, *tb], issue_only)
                        ))
                    }
                    Storage::Reg { nreg, .. } => one(format!(
                        "tl::gemm_fma<{ty}, {tc}, {m}, {n}, {kk}, {t}, {nreg}{tt}>({na}, {nb}, {nc});"
                    )),
                    _ => one(format!(
                        "tl::gemm_fma_shared<{ty}, {tc}, {m}, {n}, {kk}, {t}{tt}>({na}, {nb}, {nc});"
                    )),
                }
            }
            StmtKind::Reduce { op, src, dst, .. }
                if self.p.reduces.contains_key(&self.p.inst.ids.stmt(s)) =>
            {
                self.reduce_rows_call(*op, *src, *dst, self.p.inst.ids.stmt(s), false, depth)
            }
            StmtKind::Reduce { op, src, dst, dim } => {
                let shape = self.inst.buffer_shape(*src);
                let outer: usize = shape[..*dim].iter().product();
                let len = shape[*dim];
                let inner: usize = shape[dim + 1..].iter().product();
                let outs = outer * inner;
                // Lanes per output: a power of two within one full wave that divides the block.
                let wave = self.target.wave as usize;
                let mut g = 1;
                while t % wave == 0
                    && g * 2 <= wave
                    && g * 2 * outs <= t
                    && g < len
                    && t % (g * 2) == 0
                {
                    g *= 2;
                }
                let opn = reduce_op(*op);
                let ty = ctype(self.k.buffers[*src].dtype);
                one(format!(
                    "tl::reduce<{opn}, {ty}, {outer}, {len}, {inner}, {t}, {g}>({}, {});",
                    self.buf(*src),
                    self.buf(*dst)
                ))
            }
            StmtKind::For { .. } | StmtKind::If { .. } => unreachable!("handled by block()"),
        }
    }

    /// `tl::reduce_rows` of a reduction planned in registers: of its source, or with `carried`
    /// of the thread's running values of a deferred reduction (one per row).
    pub(super) fn reduce_rows_call(
        &self,
        op: ReduceOp,
        src: BufId,
        dst: BufId,
        key: StmtId,
        carried: bool,
        depth: usize,
    ) -> String {
        let r = self.p.reduces[&key];
        let ty = ctype(self.k.buffers[src].dtype);
        let scratch = match r.scratch {
            Some(off) => format!("({ty}*)(tl_smem + {off})"),
            None => "nullptr".into(),
        };
        let (opn, t, wave) = (reduce_op(op), self.threads, self.target.wave);
        let (dname, carry, w) = (self.buf(dst), self.carry(dst), r.width);
        if let Some(Layout::Matrix { inst, m, n, wm, wn }) = r.acc {
            // The rows of a matrix-unit accumulator (tl_acc_rows.h).
            let rows = inst.rows(m, wm, wn);
            let src = self.buf(src);
            let call = match (carried, self.p.deferral_of_reduce(key)) {
                (true, _) => {
                    format!(
                        "tl::finish_acc_rows<{opn}, {ty}, {rows}>({carry}, {dname}, {scratch});"
                    )
                }
                (false, Some(_)) => {
                    format!("tl::fold_acc_rows<{opn}, {ty}, {rows}, {n}>({src}, {carry});")
                }
                (false, None) => format!(
                    "tl::reduce_acc_rows<{opn}, {ty}, {rows}, {n}>({src}, {dname}, {scratch});"
                ),
            };
            return Code::one(depth, call);
        }
        if carried {
            let n = r.nreg;
            return Code::one(depth, format!("tl::reduce_rows<{opn}, {ty}, {n}, 1, {w}, {wave}, {t}>({carry}, {dname}, {scratch});"));
        }
        let call = |src: &str| {
            match self.p.deferral_of_reduce(key) {
            Some(_) => format!(
                "tl::fold_rows<{opn}, {ty}, {}, {}>({src}, {carry});",
                r.nreg, r.per
            ),
            None => format!(
                "tl::reduce_rows<{opn}, {ty}, {}, {}, {w}, {wave}, {t}>({src}, {dname}, {scratch});",
                r.nreg, r.per
            ),
        }
        };
        match r.gather {
            None => Code::one(depth, call(&self.buf(src))),
            Some(l) => {
                // This thread's elements of the shared tile, in the order the rows need.
                let (head, _) = self.mapping(l, &self.inst.buffer_shape(src));
                let mut c = Code::at(depth);
                c.open("{");
                c.line(format!("{ty} __red[{}];", r.nreg * r.per));
                c.line(head);
                c.indent(2);
                c.line(format!("__red[__r] = {}[__L];", self.buf(src)));
                c.close("}");
                c.close("}");
                c.line(call("__red"));
                c.close("}");
                c.finish()
            }
        }
    }

    /// Per-thread statements, each after its `#line` directive.
    pub(super) fn thread_stmts(&mut self, stmts: &[Stmt], depth: usize) -> String {
        stmts
            .iter()
            .map(|s| self.line(s) + &self.thread_stmt(s, depth))
            .collect()
    }

    /// A per-thread statement (inside a parallel loop, or block-level scalar code).
    pub(super) fn thread_stmt(&mut self, s: &Stmt, depth: usize) -> String {
        match &s.kind {
            StmtKind::Let { var, init } => Code::one(
                depth,
                format!(
                    "{} {} = {};",
                    ctype(self.k.vars[*var].ty),
                    self.var(*var),
                    self.expr(init)
                ),
            ),
            StmtKind::Assign { var, value } => {
                Code::one(depth, format!("{} = {};", self.var(*var), self.expr(value)))
            }
            StmtKind::Store { access, value } => self.by_lead(
                access,
                format!("{} = {};", self.place(access), self.expr(value)),
                depth,
            ),
            StmtKind::AtomicAdd { access, value } => self.by_lead(
                access,
                format!(
                    "tl::atomic_add(&{}, {});",
                    self.place(access),
                    self.expr(value)
                ),
                depth,
            ),
            StmtKind::Alloc(_) => self.block_stmt(s, depth),
            StmtKind::If { cond, then, els } => {
                let mut c = Code::at(depth);
                c.open(format!("if ({}) {{", self.expr(cond)));
                c.push(&self.thread_stmts(then, depth + 1));
                if !els.is_empty() {
                    c.reopen("} else {");
                    c.push(&self.thread_stmts(els, depth + 1));
                }
                c.close("}");
                c.finish()
            }
            StmtKind::For {
                kind: LoopKind::Serial { start, end },
                vars,
                body,
            } => {
                let (v, a, b) = (self.var(vars[0]), self.expr(start), self.expr(end));
                let mut c = Code::at(depth);
                c.open(format!("for (tl::index {v} = {a}; {v} < {b}; ++{v}) {{"));
                c.push(&self.thread_stmts(body, depth + 1));
                c.close("}");
                c.finish()
            }
            // Validation keeps tile operations, parallel and pipelined loops out of parallel bodies.
            _ => unreachable!("check::unsupported rejects tile operations in parallel loops"),
        }
    }

    /// A store, by one thread per group inside a loop over row fragments when it leaves the
    /// registers.
    pub(super) fn by_lead(&self, a: &Access, stmt: String, depth: usize) -> String {
        let in_regs = matches!(a.target, Target::Buffer(b) if !matches!(self.storage[b], Storage::Shared { .. }));
        match &self.lead {
            Some(c) if !in_regs => Code::one(depth, format!("if ({c}) {stmt}")),
            _ => Code::one(depth, stmt),
        }
    }

    pub(super) fn place(&self, a: &Access) -> String {
        match a.target {
            Target::Tensor(p) => {
                let dims = self.tensor_dims(p);
                format!(
                    "{}[{}]",
                    self.tensor(p),
                    linear(
                        &a.index.iter().map(|i| self.expr(i)).collect::<Vec<_>>(),
                        &dims
                    )
                )
            }
            Target::Buffer(b) => match self.storage[b] {
                Storage::Reg {
                    layout: Layout::Rows { .. } | Layout::AccRows { .. },
                    ..
                } if self.bcast.is_some_and(|(rank, _)| a.index.len() < rank) => {
                    match self.bcast.expect("checked").1 {
                        RowRead::Div(div) => format!("{}[__r / {div}]", self.buf(b)),
                        RowRead::Acc { inst, m, n, wm, wn } => {
                            format!("{}[{}::of<{n}>(__r)]", self.buf(b), inst.rows(m, wm, wn))
                        }
                    }
                }
                // Only read as a column broadcast (`cols`): tile register `__r`'s column.
                Storage::Reg {
                    layout: Layout::Cols { .. },
                    nreg,
                } => format!("{}[__r % {nreg}]", self.buf(b)),
                Storage::Reg { .. } => format!("{}[__r]", self.buf(b)),
                Storage::Shared { .. } if self.swizzled[b] != 0 => {
                    let shape = self.inst.buffer_shape(b);
                    let (rows, cols) = (shape[0], shape[1]);
                    let sw = match self.swizzled[b] {
                        ATOMS => format!("tl::ATOMS, {cols}, {rows}"),
                        div => format!("{div}, {cols}"),
                    };
                    format!(
                        "{}[tl::sidx<{sw}>((int)({}), (int)({}))]",
                        self.buf(b),
                        self.expr(&a.index[0]),
                        self.expr(&a.index[1])
                    )
                }
                _ => {
                    let dims: Vec<String> = self
                        .inst
                        .buffer_shape(b)
                        .iter()
                        .map(|d| d.to_string())
                        .collect();
                    format!(
                        "{}[{}]",
                        self.buf(b),
                        linear(
                            &a.index.iter().map(|i| self.expr(i)).collect::<Vec<_>>(),
                            &dims
                        )
                    )
                }
            },
        }
    }

    pub(super) fn tensor_dims(&self, p: ParamId) -> Vec<String> {
        match &self.k.params[p].kind {
            ParamKind::Tensor { dims, .. } => dims
                .iter()
                .map(|d| match d {
                    DimRef::Sym(i) => self.sym(*i),
                    DimRef::Const(c) => format!("((tl::index){})", self.inst.vals[*c]),
                })
                .collect(),
            ParamKind::Scalar { .. } => Vec::new(),
        }
    }
}
