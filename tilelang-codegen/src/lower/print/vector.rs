//! The printer for chunk-wise `parallel` loops ([`crate::lower::vectorize`]): per chunk, the lanes'
//! uniformity check, the body over lane arrays with grouped accesses as single vectors, and
//! the lane-by-lane fallback.

use super::emitter::*;
use crate::ir::*;
use crate::lower::names::*;
use crate::lower::plan::*;
use std::collections::BTreeMap;
use std::fmt::Write;

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

    /// `text` once per lane, with `__r` the lane's register (chunked fragments).
    fn lanes(&self, ind: &str, text: &str) -> String {
        Self::lanes_n(self.nlanes(), ind, text)
    }

    fn lanes_n(n: usize, ind: &str, text: &str) -> String {
        format!(
            "{ind}#pragma unroll\n{ind}for (int __l = 0; __l < {n}; ++__l) {{\n{ind}  const int __r = __k * {n} + __l; (void)__r;\n{text}{ind}}}\n"
        )
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
    fn prefetch(&mut self, s: &Stmt, ind: &str) -> String {
        let plan = self.lane.as_ref().expect("in a chunk").plan;
        let loads: Vec<&Access> = statement_loads(s)
            .into_iter()
            .filter(|a| plan.grouped.contains(&self.p.inst.ids.access(a)))
            .collect();
        let mut out = String::new();
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
            let _ = writeln!(out, "{ind}{ty} {name}[{n}];");
            let sh = matches!(a.target, Target::Buffer(_));
            let nc = matches!(a.target, Target::Tensor(t) if self.read_only(t));
            if plan.aligned.contains(&key) {
                let _ = writeln!(out, "{ind}tl::vload<{sh}, {n}, {nc}>(&{p0}, {name});");
            } else {
                let _ = writeln!(
                    out,
                    "{ind}if (tl::vec_aligned<{n}>(&{p0})) tl::vload<{sh}, {n}, {nc}>(&{p0}, {name});\n{ind}else {{"
                );
                out.push_str(&self.lanes(
                    &format!("{ind}  "),
                    &format!("{ind}    {name}[__l] = {pl};\n"),
                ));
                let _ = writeln!(out, "{ind}}}");
            }
            if let Some(l) = &mut self.lane {
                l.loads.insert(key, name);
            }
        }
        out
    }

    /// A statement of the vector body.
    fn vstmt(&mut self, s: &Stmt, depth: usize) -> String {
        let ind = "  ".repeat(depth);
        let in_lane = format!("{ind}  ");
        let mut out = self.line(s);
        match &s.kind {
            StmtKind::Let { var, init } => {
                out.push_str(&self.prefetch(s, &ind));
                let (ty, name) = (ctype(self.k.vars[*var].ty), self.var(*var));
                let e = self.at(init, "__l");
                let _ = writeln!(out, "{ind}{ty} {name}[{}];", self.nlanes());
                out.push_str(&self.lanes(&ind, &format!("{in_lane}  {name}[__l] = {e};\n")));
            }
            StmtKind::Assign { var, value } => {
                out.push_str(&self.prefetch(s, &ind));
                let name = self.var(*var);
                let e = self.at(value, "__l");
                out.push_str(&self.lanes(&ind, &format!("{in_lane}  {name}[__l] = {e};\n")));
            }
            StmtKind::Store { access, value } => {
                out.push_str(&self.prefetch(s, &ind));
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
                            let _ = writeln!(out, "{ind}{ty} {name}[{}];", a * n);
                            if let Some(nb) = &group.nibbles {
                                // The whole pair at its first store (they are adjacent).
                                let bytes = format!("__v{}", self.temps);
                                self.temps += 1;
                                let x = self.at(self.p.inst.ids.expr_at(nb.byte), "__l");
                                let _ = writeln!(out, "{ind}unsigned char {bytes}[{n}];");
                                out.push_str(
                                    &self.lanes(&ind, &format!("{in_lane}  {bytes}[__l] = {x};\n")),
                                );
                                let _ = writeln!(
                                    out,
                                    "{ind}tl::nibbles_to_half<{}, {}, {n}>({bytes}, {name});",
                                    nb.off, nb.high_first
                                );
                            }
                            (name, None)
                        }
                    };
                    let base = if c == 0 { Some(p0) } else { base };
                    if group.nibbles.is_none() {
                        out.push_str(&self.lanes(
                            &ind,
                            &format!("{in_lane}  {name}[{a} * __l + {c}] = {e};\n"),
                        ));
                    }
                    if self.p.inst.ids.stmt(s) == group.last {
                        let p0 = base
                            .as_deref()
                            .expect("every residue is stored by the last");
                        let _ = writeln!(
                            out,
                            "{ind}tl::vstore<false, true, {}>(&{p0}, {name});",
                            a * n
                        );
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
                    let _ = writeln!(out, "{ind}{ty} {name}[{n}];");
                    out.push_str(&self.lanes(&ind, &format!("{in_lane}  {name}[__l] = {e};\n")));
                    let sh = matches!(access.target, Target::Buffer(_));
                    if plan.aligned.contains(&self.p.inst.ids.access(access)) {
                        let _ =
                            writeln!(out, "{ind}tl::vstore<{stream}, {sh}, {n}>(&{p0}, {name});");
                    } else {
                        let _ = writeln!(
                            out,
                            "{ind}if (tl::vec_aligned<{n}>(&{p0})) tl::vstore<{stream}, {sh}, {n}>(&{p0}, {name});\n{ind}else {{"
                        );
                        out.push_str(
                            &self.lanes(&in_lane, &format!("{in_lane}    {pl} = {name}[__l];\n")),
                        );
                        let _ = writeln!(out, "{ind}}}");
                    }
                } else {
                    out.push_str(&self.lanes(&ind, &format!("{in_lane}  {pl} = {e};\n")));
                }
            }
            StmtKind::AtomicAdd { access, value } => {
                out.push_str(&self.prefetch(s, &ind));
                let e = self.at(value, "__l");
                let pl = self.place_at(access, "__l");
                out.push_str(
                    &self.lanes(&ind, &format!("{in_lane}  tl::atomic_add(&{pl}, {e});\n")),
                );
            }
            StmtKind::If { cond, then, els } => {
                // The chunk's lanes agree on it (checked, or lane-invariant by the plan).
                let c = self.at(cond, "0");
                let saved = self.lane.clone();
                let t = self.vblock(then, depth + 1);
                self.lane = saved.clone();
                let e = self.vblock(els, depth + 1);
                self.lane = saved;
                if els.is_empty() {
                    let _ = writeln!(out, "{ind}if ({c}) {{\n{t}{ind}}}");
                } else {
                    let _ = writeln!(out, "{ind}if ({c}) {{\n{t}{ind}}} else {{\n{e}{ind}}}");
                }
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
                let _ = writeln!(
                    out,
                    "{ind}for (tl::index {v} = {a}; {v} < {b}; ++{v}) {{\n{text}{ind}}}"
                );
            }
            _ => unreachable!("vectorize::vector_plan admits no other statement"),
        }
        out
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
        let ind = "  ".repeat(depth);
        let t = self.threads;
        let total: usize = ext.iter().product();
        let n = plan.lanes;
        let guard = if total % (n * t) == 0 {
            "true".to_string()
        } else {
            format!("__L < {total}")
        };
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{ind}#pragma unroll\n{ind}for (int __k = 0; __k < {}; ++__k) {{\n{ind}  const unsigned __L = (__k * {t} + TL_TID) * {n};\n{ind}  if ({guard}) {{",
            total.div_ceil(n * t)
        );
        let ind2 = format!("{ind}    ");
        let first = format!("(TL_TID * {n}u)");
        for (v, c) in vars.iter().zip(chunk_coords(ext, "__L", n * t, &first)) {
            if *v == plan.inner {
                let _ = writeln!(out, "{ind2}const tl::index {BASE} = {c};");
            } else {
                let _ = writeln!(out, "{ind2}const tl::index {} = {c};", self.var(*v));
            }
        }
        // The lane-by-lane body, for chunks whose lanes disagree on a condition.
        let fallback = |e: &mut Emitter<'a>| -> String {
            let mut text = format!(
                "{ind2}  const tl::index {} = {BASE} + __l;\n",
                e.var(plan.inner)
            );
            for st in body {
                text.push_str(&e.line(st));
                text.push_str(&e.thread_stmt(st, depth + 3));
            }
            Self::lanes_n(n, &ind2, &text)
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
            out.push_str(&vector);
        } else {
            if plan.endpoints {
                let _ = writeln!(out, "{ind2}const bool __u = {};", checks.join(" && "));
            } else {
                let _ = writeln!(
                    out,
                    "{ind2}bool __u = true;\n{ind2}#pragma unroll\n{ind2}for (int __l = 1; __l < {n}; ++__l) __u = __u && {};",
                    checks.join(" && ")
                );
            }
            let _ = writeln!(out, "{ind2}if (__u) {{");
            out.push_str(&vector);
            let _ = writeln!(out, "{ind2}}} else {{");
            out.push_str(&fallback(self));
            let _ = writeln!(out, "{ind2}}}");
        }
        let _ = writeln!(out, "{ind}  }}\n{ind}}}");
        out
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
