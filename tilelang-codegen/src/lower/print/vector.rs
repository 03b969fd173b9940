//! The printer for chunk-wise `parallel` loops ([`crate::lower::vectorize`]): per chunk, the lanes'
//! uniformity check, the body over lane arrays with grouped accesses as single vectors, and
//! the lane-by-lane fallback.

use super::code::Code;
use super::emitter::*;
use crate::ir::*;
use crate::lower::names::*;
use crate::lower::plan::*;
use std::collections::BTreeMap;

/// The innermost variable's value in lane 0 of the chunk.
const BASE: &str = "__b";

impl<'a> Emitter<'a> {
    /// `v` as the current lane sees it, when that differs from its plain name.
    pub(super) fn lane_var(&self, v: VarId) -> Option<String> {
        let l = self.lane.as_ref()?;
        if v == l.plan.inner {
            return Some(format!("({BASE} + {})", l.idx));
        }
        if l.inline {
            let init = l.plan.pure_lets.get(&v)?;
            return Some(format!("({})", self.expr(self.p.inst.ids.expr_at(*init))));
        }
        l.plan
            .lane_vars
            .contains(&v)
            .then(|| format!("{}[{}]", self.var(v), l.idx))
    }

    /// A grouped load already in a lane array.
    pub(super) fn lane_load(&self, a: &Access) -> Option<String> {
        let l = self.lane.as_ref()?;
        let name = l.loads.get(&self.p.inst.ids.access(a))?;
        Some(format!("{name}[{}]", l.idx))
    }

    fn set_idx(&mut self, idx: &'static str) {
        if let Some(l) = &mut self.lane {
            l.idx = idx;
        }
    }

    /// The statement `stmt` once per lane, with `__r` the lane's register (chunked fragments).
    fn lanes(&self, depth: usize, stmt: &str) -> String {
        Self::lanes_n(self.nlanes(), depth, &Code::one(depth + 1, stmt))
    }

    /// `text`, written for `depth + 1`, once per lane of `n`.
    fn lanes_n(n: usize, depth: usize, text: &str) -> String {
        let mut c = Code::at(depth);
        c.line("#pragma unroll");
        c.open(format!("for (int __l = 0; __l < {n}; ++__l) {{"));
        c.line(format!("const int __r = __k * {n} + __l; (void)__r;"));
        c.push(text);
        c.close("}");
        c.finish()
    }

    fn nlanes(&self) -> usize {
        self.lane.as_ref().map_or(CHUNK, |l| l.plan.lanes)
    }

    fn elem_type(&self, a: &Access) -> &'static str {
        ctype(match a.target {
            Target::Tensor(t) => self.tensor_dtype(t),
            Target::Buffer(b) => self.k.buffers[b].dtype,
        })
    }

    /// An expression in every lane (`__l`) or in lane 0.
    fn at(&mut self, e: &Expr, idx: &'static str) -> String {
        self.set_idx(idx);
        self.expr(e)
    }

    /// An access's place in every lane (`__l`) or in lane 0.
    fn place_at(&mut self, a: &Access, idx: &'static str) -> String {
        self.set_idx(idx);
        self.place(a)
    }

    /// Loads the grouped loads `s` makes (other than a store's own target) into lane arrays,
    /// one vector each where aligned.
    fn prefetch(&mut self, s: &Stmt, depth: usize) -> String {
        let plan = self.lane.as_ref().expect("in a chunk").plan;
        let loads: Vec<&Access> = statement_loads(s)
            .into_iter()
            .filter(|a| plan.grouped.contains(&self.p.inst.ids.access(a)))
            .collect();
        let mut out = Code::at(depth);
        // Nested loads (in another's index) first: `statement_loads` lists outermost first.
        for a in loads.into_iter().rev() {
            let key = self.p.inst.ids.access(a);
            if self
                .lane
                .as_ref()
                .is_some_and(|l| l.loads.contains_key(&key))
            {
                continue;
            }
            let name = format!("__v{}", self.temps);
            self.temps += 1;
            let ty = self.elem_type(a);
            let p0 = self.place_at(a, "0");
            let pl = self.place_at(a, "__l");
            let n = self.nlanes();
            out.line(format!("{ty} {name}[{n}];"));
            let sh = matches!(a.target, Target::Buffer(_));
            let nc = matches!(a.target, Target::Tensor(t) if self.read_only(t));
            if plan.aligned.contains(&key) {
                out.line(format!("tl::vload<{sh}, {n}, {nc}>(&{p0}, {name});"));
            } else {
                out.line(format!(
                    "if (tl::vec_aligned<{n}>(&{p0})) tl::vload<{sh}, {n}, {nc}>(&{p0}, {name});"
                ));
                out.open("else {");
                out.push(&self.lanes(out.depth(), &format!("{name}[__l] = {pl};")));
                out.close("}");
            }
            if let Some(l) = &mut self.lane {
                l.loads.insert(key, name);
            }
        }
        out.finish()
    }

    /// A statement of the vector body.
    fn vstmt(&mut self, s: &Stmt, depth: usize) -> String {
        let mut out = Code::at(depth);
        out.push(&self.line(s));
        match &s.kind {
            StmtKind::Let { var, init } => {
                out.push(&self.prefetch(s, depth));
                let (ty, name) = (ctype(self.k.vars[*var].ty), self.var(*var));
                let e = self.at(init, "__l");
                out.line(format!("{ty} {name}[{}];", self.nlanes()));
                out.push(&self.lanes(depth, &format!("{name}[__l] = {e};")));
            }
            StmtKind::Assign { var, value } => {
                out.push(&self.prefetch(s, depth));
                let name = self.var(*var);
                let e = self.at(value, "__l");
                out.push(&self.lanes(depth, &format!("{name}[__l] = {e};")));
            }
            StmtKind::Store { access, value } => {
                out.push(&self.prefetch(s, depth));
                let plan = self.lane.as_ref().expect("in a chunk").plan;
                let e = self.at(value, "__l");
                let pl = self.place_at(access, "__l");
                if let Some(&(g, c)) = plan.interleaved.get(&self.p.inst.ids.access(access)) {
                    // Gathered into the chunk's vector, stored whole after the group's last.
                    let group = &plan.groups[g];
                    let (a, n) = (group.factor, self.nlanes());
                    let ty = self.elem_type(access);
                    let p0 = self.place_at(access, "0");
                    let l = self.lane.as_mut().expect("in a chunk");
                    let (name, base) = match l.gathers.get(&g) {
                        Some(x) => x.clone(),
                        None => {
                            let name = format!("__v{}", self.temps);
                            self.temps += 1;
                            out.line(format!("{ty} {name}[{}];", a * n));
                            if let Some(nb) = &group.nibbles {
                                // The whole pair at its first store (they are adjacent).
                                let bytes = format!("__v{}", self.temps);
                                self.temps += 1;
                                let x = self.at(self.p.inst.ids.expr_at(nb.byte), "__l");
                                out.line(format!("unsigned char {bytes}[{n}];"));
                                out.push(&self.lanes(depth, &format!("{bytes}[__l] = {x};")));
                                out.line(format!(
                                    "tl::nibbles_to_half<{}, {}, {n}>({bytes}, {name});",
                                    nb.off, nb.high_first
                                ));
                            }
                            (name, None)
                        }
                    };
                    let base = if c == 0 { Some(p0) } else { base };
                    if group.nibbles.is_none() {
                        out.push(&self.lanes(depth, &format!("{name}[{a} * __l + {c}] = {e};")));
                    }
                    if self.p.inst.ids.stmt(s) == group.last {
                        let p0 = base
                            .as_deref()
                            .expect("every residue is stored by the last");
                        out.line(format!(
                            "tl::vstore<false, true, {}>(&{p0}, {name});",
                            a * n
                        ));
                    }
                    if let Some(l) = &mut self.lane {
                        l.gathers.insert(g, (name, base));
                    }
                } else if plan.grouped.contains(&self.p.inst.ids.access(access)) {
                    let stream = plan.streaming.contains(&self.p.inst.ids.access(access));
                    let name = format!("__v{}", self.temps);
                    self.temps += 1;
                    let ty = self.elem_type(access);
                    let p0 = self.place_at(access, "0");
                    let n = self.nlanes();
                    out.line(format!("{ty} {name}[{n}];"));
                    out.push(&self.lanes(depth, &format!("{name}[__l] = {e};")));
                    let sh = matches!(access.target, Target::Buffer(_));
                    if plan.aligned.contains(&self.p.inst.ids.access(access)) {
                        out.line(format!("tl::vstore<{stream}, {sh}, {n}>(&{p0}, {name});"));
                    } else {
                        out.line(format!(
                            "if (tl::vec_aligned<{n}>(&{p0})) tl::vstore<{stream}, {sh}, {n}>(&{p0}, {name});"
                        ));
                        out.open("else {");
                        out.push(&self.lanes(depth + 1, &format!("{pl} = {name}[__l];")));
                        out.close("}");
                    }
                } else {
                    out.push(&self.lanes(depth, &format!("{pl} = {e};")));
                }
            }
            StmtKind::AtomicAdd { access, value } => {
                out.push(&self.prefetch(s, depth));
                let e = self.at(value, "__l");
                let pl = self.place_at(access, "__l");
                out.push(&self.lanes(depth, &format!("tl::atomic_add(&{pl}, {e});")));
            }
            StmtKind::If { cond, then, els } => {
                // The chunk's lanes agree on it (checked, or lane-invariant by the plan).
                let c = self.at(cond, "0");
                let saved = self.lane.clone();
                let t = self.vblock(then, depth + 1);
                self.lane = saved.clone();
                let e = self.vblock(els, depth + 1);
                self.lane = saved;
                out.open(format!("if ({c}) {{"));
                out.push(&t);
                if !els.is_empty() {
                    out.reopen("} else {");
                    out.push(&e);
                }
                out.close("}");
            }
            StmtKind::For {
                kind: LoopKind::Serial { start, end },
                vars,
                body,
            } => {
                let (a, b) = (self.at(start, "0"), self.at(end, "0"));
                let v = self.var(vars[0]);
                let saved = self.lane.clone();
                let text = self.vblock(body, depth + 1);
                self.lane = saved;
                out.open(format!("for (tl::index {v} = {a}; {v} < {b}; ++{v}) {{"));
                out.push(&text);
                out.close("}");
            }
            _ => unreachable!("vectorize::vector_plan admits no other statement"),
        }
        out.finish()
    }

    fn vblock(&mut self, stmts: &[Stmt], depth: usize) -> String {
        stmts.iter().map(|s| self.vstmt(s, depth)).collect()
    }

    /// A chunk-wise `parallel` loop over `ext` (see [`super::vectorize`]).
    pub(super) fn vector_loop(
        &mut self,
        plan: &'a VectorPlan,
        vars: &[VarId],
        body: &[Stmt],
        ext: &[usize],
        depth: usize,
    ) -> String {
        let t = self.threads;
        let total: usize = ext.iter().product();
        let n = plan.lanes;
        let guard = if total % (n * t) == 0 {
            "true".to_string()
        } else {
            format!("__L < {total}")
        };
        let mut out = Code::at(depth);
        out.line("#pragma unroll");
        out.open(format!(
            "for (int __k = 0; __k < {}; ++__k) {{",
            total.div_ceil(n * t)
        ));
        out.line(format!("const unsigned __L = (__k * {t} + TL_TID) * {n};"));
        out.open(format!("if ({guard}) {{"));
        let first = format!("(TL_TID * {n}u)");
        for (v, c) in vars.iter().zip(chunk_coords(ext, "__L", n * t, &first)) {
            if *v == plan.inner {
                out.line(format!("const tl::index {BASE} = {c};"));
            } else {
                out.line(format!("const tl::index {} = {c};", self.var(*v)));
            }
        }
        // The lane-by-lane body, for chunks whose lanes disagree on a condition.
        let fallback = |e: &mut Emitter<'a>| -> String {
            let mut text = Code::at(depth + 3);
            text.line(format!(
                "const tl::index {} = {BASE} + __l;",
                e.var(plan.inner)
            ));
            text.push(&e.thread_stmts(body, depth + 3));
            Self::lanes_n(n, depth + 2, &text.finish())
        };
        self.lane = Some(Lanes {
            plan,
            idx: "__l",
            inline: true,
            loads: BTreeMap::new(),
            gathers: BTreeMap::new(),
        });
        // Conditions monotone over the lanes agree everywhere when the first and last lanes
        // agree; others are compared lane by lane.
        const LAST: [&str; 16] = [
            "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15",
        ];
        let other = if plan.endpoints { LAST[n - 1] } else { "__l" };
        let checks: Vec<String> = plan
            .conditions
            .iter()
            .map(|&c| {
                let c = self.p.inst.ids.expr_at(c);
                let (cl, c0) = (self.at(c, other), self.at(c, "0"));
                format!("({cl}) == ({c0})")
            })
            .collect();
        if let Some(l) = &mut self.lane {
            l.inline = false;
        }
        let vector = self.vblock(body, depth + 2 + usize::from(!checks.is_empty()));
        self.lane = None;
        if checks.is_empty() {
            out.push(&vector);
        } else {
            if plan.endpoints {
                out.line(format!("const bool __u = {};", checks.join(" && ")));
            } else {
                out.line("bool __u = true;");
                out.line("#pragma unroll");
                out.line(format!(
                    "for (int __l = 1; __l < {n}; ++__l) __u = __u && {};",
                    checks.join(" && ")
                ));
            }
            out.open("if (__u) {");
            out.push(&vector);
            out.reopen("} else {");
            out.push(&fallback(self));
            out.close("}");
        }
        out.close("}");
        out.close("}");
        out.finish()
    }
}

/// The loads of a lane statement's expressions (a store's target is not a load), outermost
/// first.
fn statement_loads(s: &Stmt) -> Vec<&Access> {
    fn expr<'s>(e: &'s Expr, out: &mut Vec<&'s Access>) {
        match &e.kind {
            ExprKind::Load(a) => {
                out.push(a);
                a.index.iter().for_each(|i| expr(i, out));
            }
            ExprKind::Binary(_, a, b) | ExprKind::DivCeil(a, b) => {
                expr(a, out);
                expr(b, out);
            }
            ExprKind::Unary(_, a) | ExprKind::Cast(a) => expr(a, out),
            ExprKind::Math(_, args) => args.iter().for_each(|a| expr(a, out)),
            ExprKind::Select(c, a, b) => {
                expr(c, out);
                expr(a, out);
                expr(b, out);
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    match &s.kind {
        StmtKind::Let { init: e, .. } | StmtKind::Assign { value: e, .. } => expr(e, &mut out),
        StmtKind::Store { access, value } | StmtKind::AtomicAdd { access, value } => {
            access.index.iter().for_each(|i| expr(i, &mut out));
            expr(value, &mut out);
        }
        _ => {}
    }
    out
}
