//! Minimisation of a failing generated kernel (`docs/design/difftest.md` §3): greedy passes
//! over the generator's tree to a fixpoint, each candidate kept only when it still fails the
//! same way (the oracle says so). Never tokens: every candidate prints as a kernel, and the
//! frontend sorts out those that are not valid (a name no longer bound, a type that no longer
//! fits) before the oracle runs.
//!
//! The passes, cheapest first: keep one config, drop `defaults`, `requires` and the occupancy
//! key; delete a statement or keep one arm of an `if`; replace an expression by one of its
//! operands or by a literal; drop parameters nothing uses; halve a config's values.

use crate::gen::ast::{Expr, LitForm, Program, Stmt, Ty};
use std::time::Instant;

/// What kind of failure a finding's text describes: its output (`output y0 differs`) or its
/// stage (`the launch fails`, `rejected by the lowering`, ..). Two failures are "the same"
/// when their kinds are.
pub fn kind(what: &str) -> String {
    if let Some(i) = what.find(": output ") {
        let name = what[i + 9..].split_whitespace().next().unwrap_or("");
        return format!("output {name} differs");
    }
    const STAGES: [&str; 8] = [
        "rejected by the frontend",
        "rejected by the lowering",
        "rejected by the device compiler",
        "the evaluator fails",
        "the launch fails",
        "a write outside",
        "the emulation failed",
        "miscompil",
    ];
    STAGES
        .iter()
        .find(|s| what.contains(*s))
        .map_or_else(|| what.to_string(), |s| s.to_string())
}

/// The result of [`shrink`]: the smallest program that still failed, and how many candidates
/// were tried and kept.
pub struct Shrunk {
    pub program: Program,
    pub tried: usize,
    pub kept: usize,
    /// Whether the passes reached their fixpoint before the deadline.
    pub done: bool,
}

/// Shrinks `p` while `fails` holds of the candidate, until no pass makes progress or
/// `deadline` passes. `fails` is asked only about candidates the frontend accepts, unless
/// `frontend` (the failure is the frontend's own).
pub fn shrink(
    p: &Program,
    frontend: bool,
    deadline: Instant,
    fails: &mut dyn FnMut(&Program) -> bool,
) -> Shrunk {
    let mut s = Shrunk {
        program: p.clone(),
        tried: 0,
        kept: 0,
        done: false,
    };
    let mut try_one = |s: &mut Shrunk, c: Program| -> bool {
        if c == s.program || Instant::now() > deadline {
            return false;
        }
        if !frontend && crate::compile::to_ir(&c.source()).is_err() {
            return false;
        }
        s.tried += 1;
        if fails(&c) {
            s.program = c;
            s.kept += 1;
            true
        } else {
            false
        }
    };
    loop {
        let mut progress = false;
        for pass in [kernel_candidates, stmt_candidates, expr_candidates] {
            // Candidates are made from the current program; after a success the pass starts
            // over from the smaller one.
            let mut i = 0;
            loop {
                let cands = pass(&s.program);
                let Some(c) = cands.into_iter().nth(i) else {
                    break;
                };
                if try_one(&mut s, c) {
                    progress = true;
                } else {
                    i += 1;
                }
                if Instant::now() > deadline {
                    return s;
                }
            }
        }
        if !progress {
            s.done = true;
            return s;
        }
    }
}

/// One config, no `defaults`/`requires`/occupancy, unused parameters dropped, a config value
/// halved.
fn kernel_candidates(p: &Program) -> Vec<Program> {
    let k = &p.kernel;
    let mut out = Vec::new();
    let with = |f: &mut dyn FnMut(&mut Program)| {
        let mut c = p.clone();
        f(&mut c);
        c
    };
    if k.configs.len() > 1 {
        for i in 0..k.configs.len() {
            out.push(with(&mut |c| {
                c.kernel.configs = vec![c.kernel.configs[i].clone()];
                c.kernel.defaults.clear();
            }));
        }
    }
    if !k.defaults.is_empty() {
        out.push(with(&mut |c| c.kernel.defaults.clear()));
    }
    if !k.requires.is_empty() {
        out.push(with(&mut |c| c.kernel.requires.clear()));
    }
    if k.occupancy.is_some() {
        out.push(with(&mut |c| c.kernel.occupancy = None));
    }
    let body = print_body(p);
    for (i, param) in k.params.iter().enumerate() {
        if !mentions(&body, &param.name) {
            out.push(with(&mut |c| {
                c.kernel.params.remove(i);
            }));
        }
    }
    if k.configs.len() == 1 {
        for j in 0..k.configs[0].values.len() {
            if k.configs[0].values[j] > 1 {
                out.push(with(&mut |c| c.kernel.configs[0].values[j] /= 2));
            }
        }
    }
    out
}

/// The kernel's text without its signature line (what the body and the attribute use).
fn print_body(p: &Program) -> String {
    let src = p.source();
    let sig = src.find("pub fn").unwrap_or(0);
    let body = src[sig..].find('{').map_or(0, |i| sig + i);
    format!("{}{}", &src[..sig], &src[body..])
}

/// Whether `text` has `word` as a whole identifier.
fn mentions(text: &str, word: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).any(|(i, _)| {
        !text[..i].chars().next_back().is_some_and(ident)
            && !text[i + word.len()..].chars().next().is_some_and(ident)
    })
}

/// Every statement deleted in turn; every `if` replaced by its `then` or its `else` body.
fn stmt_candidates(p: &Program) -> Vec<Program> {
    let n = count_stmts(&p.kernel.body);
    let mut out = Vec::new();
    for i in 0..n {
        for edit in [StmtEdit::Delete, StmtEdit::Then, StmtEdit::Else] {
            let mut c = p.clone();
            if edit_stmt(&mut c.kernel.body, &mut { i }, edit) {
                out.push(c);
            }
        }
    }
    out
}

#[derive(Clone, Copy, PartialEq)]
enum StmtEdit {
    Delete,
    Then,
    Else,
}

fn children(s: &mut Stmt) -> Vec<&mut Vec<Stmt>> {
    match s {
        Stmt::Parallel { body, .. } | Stmt::Loop { body, .. } => vec![body],
        Stmt::If { then, els, .. } => vec![then, els],
        _ => Vec::new(),
    }
}

fn count_stmts(body: &[Stmt]) -> usize {
    body.iter()
        .map(|s| {
            1 + match s {
                Stmt::Parallel { body, .. } | Stmt::Loop { body, .. } => count_stmts(body),
                Stmt::If { then, els, .. } => count_stmts(then) + count_stmts(els),
                _ => 0,
            }
        })
        .sum()
}

/// Applies `edit` to the statement numbered `n` in pre-order; whether it applied.
fn edit_stmt(body: &mut Vec<Stmt>, n: &mut usize, edit: StmtEdit) -> bool {
    let mut i = 0;
    while i < body.len() {
        if *n == 0 {
            match (edit, &mut body[i]) {
                (StmtEdit::Delete, _) => {
                    body.remove(i);
                }
                (StmtEdit::Then, Stmt::If { then, .. }) => {
                    let t = std::mem::take(then);
                    body.splice(i..=i, t);
                }
                (StmtEdit::Else, Stmt::If { els, .. }) if !els.is_empty() => {
                    let e = std::mem::take(els);
                    body.splice(i..=i, e);
                }
                _ => return false,
            }
            return true;
        }
        *n -= 1;
        for inner in children(&mut body[i]) {
            if *n < count_stmts(inner) {
                return edit_stmt(inner, n, edit);
            }
            *n -= count_stmts(inner);
        }
        i += 1;
    }
    false
}

/// Every expression node replaced in turn by each of its operands and by the literals `1`,
/// `1.0`, `true` and `false` (the frontend keeps those of the right type).
fn expr_candidates(p: &Program) -> Vec<Program> {
    let mut total = 0;
    each_expr(&mut p.clone().kernel.body, &mut |_| {
        total += 1;
        false
    });
    let mut out = Vec::new();
    for n in 0..total {
        let mut node = None;
        let mut i = 0;
        each_expr(&mut p.clone().kernel.body, &mut |e| {
            if i == n {
                node = Some(e.clone());
                return true;
            }
            i += 1;
            false
        });
        let Some(node) = node else { continue };
        let mut replacements = operands(&node);
        if !node.is_literal() {
            replacements.extend([
                Expr::Int(1, Ty::I32, LitForm::Untyped),
                Expr::Float(1.0, Ty::F32, LitForm::Untyped),
                Expr::Bool(true),
                Expr::Bool(false),
            ]);
        }
        for r in replacements {
            let mut c = p.clone();
            let mut i = 0;
            each_expr(&mut c.kernel.body, &mut |e| {
                if i == n {
                    *e = r.clone();
                    return true;
                }
                i += 1;
                false
            });
            out.push(c);
        }
    }
    out
}

fn operands(e: &Expr) -> Vec<Expr> {
    match e {
        Expr::Bin(_, a, b) | Expr::DivCeil(a, b) => vec![(**a).clone(), (**b).clone()],
        Expr::Neg(x) | Expr::Not(x) | Expr::Cast(x, _) => vec![(**x).clone()],
        Expr::Call(_, args) => args.clone(),
        Expr::Select(c, a, b) => vec![(**a).clone(), (**b).clone(), (**c).clone()],
        _ => Vec::new(),
    }
}

/// Calls `f` on every expression of `body` in pre-order (the values and conditions
/// statements hold, not the indices of stores or copies); stops when `f` returns true.
fn each_expr(body: &mut [Stmt], f: &mut dyn FnMut(&mut Expr) -> bool) -> bool {
    for s in body {
        let stop = match s {
            Stmt::Let { value, .. } | Stmt::Assign(_, value) => walk(value, f),
            Stmt::LetTuple(xs) => xs.iter_mut().any(|(_, e)| walk(e, f)),
            Stmt::Store { value, .. } | Stmt::Atomic { value, .. } | Stmt::Fill { value, .. } => {
                walk(value, f)
            }
            Stmt::If { cond, then, els } => {
                walk(cond, f) || each_expr(then, f) || each_expr(els, f)
            }
            Stmt::Parallel { body, .. } | Stmt::Loop { body, .. } => each_expr(body, f),
            _ => false,
        };
        if stop {
            return true;
        }
    }
    false
}

fn walk(e: &mut Expr, f: &mut dyn FnMut(&mut Expr) -> bool) -> bool {
    if f(e) {
        return true;
    }
    match e {
        Expr::Bin(_, a, b) | Expr::DivCeil(a, b) => walk(a, f) || walk(b, f),
        Expr::Neg(x) | Expr::Not(x) | Expr::Cast(x, _) => walk(x, f),
        Expr::Call(_, args) => args.iter_mut().any(|a| walk(a, f)),
        Expr::Select(c, a, b) => walk(c, f) || walk(a, f) || walk(b, f),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen;
    use std::time::Duration;

    #[test]
    fn kinds() {
        assert_eq!(
            kind("sm_90 config f0 sizes [1, 1, 1, 1]: output y1 (shape [1]) differs in 1 of 1"),
            "output y1 differs"
        );
        assert_eq!(
            kind("sm_90 config f0 sizes [1, 1, 1, 1]: the launch fails: an illegal address"),
            "the launch fails"
        );
        assert_eq!(
            kind("rejected by the lowering for gfx942: a message"),
            "rejected by the lowering"
        );
    }

    /// With a stand-in oracle ("the source still calls `sqrt`" on an element-wise kernel
    /// that does), the shrinker keeps a valid kernel that still calls it and takes away most
    /// of the rest.
    #[test]
    fn shrinks_to_what_the_oracle_needs() {
        let p = (0..2000)
            .map(gen::seed_of)
            .map(gen::generate)
            .find(|p| {
                let s = p.source();
                s.contains("sqrt(") && s.matches(';').count() > 8
            })
            .expect("a kernel that calls sqrt");
        let before = p.source();
        let mut fails = |c: &Program| mentions(&c.source(), "sqrt");
        let deadline = Instant::now() + Duration::from_secs(60);
        let s = shrink(&p, false, deadline, &mut fails);
        let after = s.program.source();
        assert!(s.done, "no fixpoint within a minute");
        assert!(mentions(&after, "sqrt"), "{after}");
        assert!(crate::compile::to_ir(&after).is_ok(), "{after}");
        assert!(
            after.matches(';').count() * 3 < before.matches(';').count(),
            "from\n{before}\nonly to\n{after}"
        );
    }
}
