//! Mutants: a small deterministic PRNG, token trees that can be edited in place, and the
//! token-level mutations of a corpus kernel.

use crate::corpus::Kernel;
use proc_macro2::{Delimiter, Group, Literal, Punct, Spacing, Span, TokenStream, TokenTree};
use std::str::FromStr;

// ---------------------------------------------------------------------------------------------
// A small deterministic PRNG (splitmix64).

pub struct Rng(pub u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }
    fn below(&mut self, n: usize) -> usize {
        assert!(n > 0);
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
    fn chance(&mut self, num: u64, den: u64) -> bool {
        self.next() % den < num
    }
}

pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

// ---------------------------------------------------------------------------------------------
// Token trees that can be edited in place.

#[derive(Clone)]
enum Tok {
    Leaf(TokenTree),
    Group(Delimiter, Span, Vec<Tok>),
}

fn to_toks(ts: TokenStream) -> Vec<Tok> {
    ts.into_iter()
        .map(|t| match t {
            TokenTree::Group(g) => Tok::Group(g.delimiter(), g.span(), to_toks(g.stream())),
            other => Tok::Leaf(other),
        })
        .collect()
}

fn from_toks(v: &[Tok]) -> TokenStream {
    v.iter()
        .map(|t| match t {
            Tok::Leaf(l) => l.clone(),
            Tok::Group(d, s, inner) => {
                let mut g = Group::new(*d, from_toks(inner));
                g.set_span(*s);
                TokenTree::Group(g)
            }
        })
        .collect()
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Ident,
    Literal,
    Punct,
    Group,
}

fn kind(t: &Tok) -> Kind {
    match t {
        Tok::Leaf(TokenTree::Ident(_)) => Kind::Ident,
        Tok::Leaf(TokenTree::Literal(_)) => Kind::Literal,
        Tok::Leaf(TokenTree::Punct(_)) => Kind::Punct,
        _ => Kind::Group,
    }
}

/// Paths (indices from the root down) of every node, with its kind.
fn nodes(v: &[Tok], prefix: &mut Vec<usize>, out: &mut Vec<(Vec<usize>, Kind)>) {
    for (i, t) in v.iter().enumerate() {
        prefix.push(i);
        out.push((prefix.clone(), kind(t)));
        if let Tok::Group(_, _, inner) = t {
            nodes(inner, prefix, out);
        }
        prefix.pop();
    }
}

/// The sequence that holds the node at `path`, and the node's index in it.
fn parent_mut<'a>(root: &'a mut Vec<Tok>, path: &[usize]) -> (&'a mut Vec<Tok>, usize) {
    let (last, init) = path.split_last().unwrap();
    let mut seq = root;
    for &i in init {
        seq = match &mut seq[i] {
            Tok::Group(_, _, inner) => inner,
            Tok::Leaf(_) => unreachable!(),
        };
    }
    (seq, *last)
}

fn parent_ref<'a>(root: &'a [Tok], path: &[usize]) -> (&'a [Tok], usize) {
    let (last, init) = path.split_last().unwrap();
    let mut seq = root;
    for &i in init {
        seq = match &seq[i] {
            Tok::Group(_, _, inner) => inner,
            Tok::Leaf(_) => unreachable!(),
        };
    }
    (seq, *last)
}

const KEYWORDS: &[&str] = &[
    "let",
    "mut",
    "for",
    "in",
    "if",
    "else",
    "fn",
    "pub",
    "const",
    "usize",
    "f16",
    "bf16",
    "f32",
    "f64",
    "i32",
    "u32",
    "u8",
    "bool",
    "i8",
    "i64",
    "u64",
    "String",
    "Tensor",
    "self",
    "Self",
    "super",
    "crate",
    "return",
    "break",
    "continue",
    "while",
    "loop",
    "match",
    "async",
    "unsafe",
    "impl",
    "struct",
    "as",
    "where",
    "move",
    "ref",
    "true",
    "false",
    "parallel",
    "serial",
    "pipelined",
    "copy",
    "fill",
    "clear",
    "gemm",
    "reduce_sum",
    "reduce_max",
    "atomic_add",
    "alloc_shared",
    "alloc_fragment",
    "alloc_local",
    "block_idx",
    "if_then_else",
    "exp",
    "exp2",
    "log",
    "sqrt",
    "rsqrt",
    "abs",
    "max",
    "min",
    "tanh",
    "erf",
    "sigmoid",
    "pow",
    "sin",
    "cos",
    "floor",
    "ceil",
    "fma",
    "div_ceil",
    "at",
    "at_mut",
    "grid",
    "threads",
    "configs",
    "defaults",
    "requires",
    "min_blocks",
    "max_registers",
    "cpu",
    "sm_90",
    "gfx1100",
    "default",
    "r#type",
    "r#match",
    "_",
    "__KERNEL",
    "__dev",
    "config",
    "__launch",
    "__cpu",
    "__grid",
    "index",
    "N",
    "M",
    "K",
];

const LITERALS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "4",
    "7",
    "8",
    "15",
    "16",
    "31",
    "64",
    "127",
    "128",
    "255",
    "256",
    "1024",
    "1025",
    "65536",
    "16777216",
    "16777217",
    "2147483647",
    "2147483648",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "340282366920938463463374607431768211455",
    "0.0",
    "0.5",
    "1.0",
    "1.5",
    "-1",
    "-1.0",
    "1e30",
    "1e400",
    "1e-400",
    "f32::INFINITY",
    "f16::NEG_INFINITY",
    "bf16::NAN",
    "f32::MAX",
    "i32::NAN",
    "f32::NAN::NAN",
    "3.4e38f32",
    "1e10f16",
    "1.0f16",
    "2.0bf16",
    "1f32",
    "1f64",
    "2u8",
    "300u8",
    "256u8",
    "7i32",
    "-7i32",
    "3usize",
    "5u32",
    "1i64",
    "1u64",
    "1isize",
    "1_000",
    "0x10",
    "0xFF_u8",
    "0b1010",
    "0o17",
    "1e3",
    "1.",
    "'c'",
    "b'x'",
    "\"s\"",
    "b\"bytes\"",
    "r\"raw\"",
    "c\"cstr\"",
];

const PUNCTS: &[&str] = &[
    "+", "-", "*", "/", "%", "&", "|", "^", "!", "<", ">", "=", ".", ",", ";", ":", "#", "?", "@",
    "$", "~", "<<", ">>", "&&", "||", "==", "!=", "<=", ">=", "+=", "-=", "*=", "/=", "%=", "&=",
    "|=", "^=", "<<=", ">>=", "..", "..=", "::", "->", "=>", "&mut", "'a", "..",
];

fn tokens(s: &str) -> Vec<Tok> {
    match TokenStream::from_str(s) {
        Ok(ts) => to_toks(ts),
        // Some literals (e.g. `-1`) are not one token: build them directly.
        Err(_) => vec![Tok::Leaf(TokenTree::Literal(Literal::string(s)))],
    }
}

fn literal(s: &str) -> Vec<Tok> {
    if let Some(rest) = s.strip_prefix('-') {
        // A negative literal token, as a proc macro can produce one (`Literal::i64_unsuffixed(-1)`).
        if let Ok(v) = rest.parse::<i64>() {
            return vec![Tok::Leaf(TokenTree::Literal(Literal::i64_unsuffixed(-v)))];
        }
        if let Ok(v) = rest.parse::<f64>() {
            return vec![Tok::Leaf(TokenTree::Literal(Literal::f64_unsuffixed(-v)))];
        }
    }
    tokens(s)
}

/// Identifiers of the corpus, for replacements.
pub fn corpus_idents(ks: &[Kernel]) -> Vec<String> {
    fn walk(ts: TokenStream, out: &mut Vec<String>) {
        for t in ts {
            match t {
                TokenTree::Ident(i) => out.push(i.to_string()),
                TokenTree::Group(g) => walk(g.stream(), out),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    for k in ks {
        walk(k.attr.clone(), &mut out);
        walk(k.item.clone(), &mut out);
    }
    out.sort();
    out.dedup();
    out
}

/// Expression fragments that probe edge cases (overflow, division by zero, odd shapes and
/// types); they replace an identifier or a literal.
const EXPR_SNIPPETS: &[&str] = &[
    "(1 << 127)",
    "-(1 << 127)",
    "(1 << 126).div_ceil(1 << 126)",
    "(1 << 127).div_ceil(0 - 1)",
    "(0 - 1)",
    "N.div_ceil(0)",
    "(1 / 0)",
    "(5 % 0)",
    "(1 << 64)",
    "(1 << 200)",
    "(1 << 63)",
    "((1 << 62) * 4)",
    "(x as bool)",
    "(a, b)",
    "&mut c[(0, 0)]",
    "c.at((0,))",
    "c.at_mut(())",
    "if_then_else(true, 1, 2)",
    "block_idx(3)",
    "block_idx(18446744073709551615)",
    "max(1, 2)",
    "min(1.0, 2)",
    "exp(1)",
    "(!1.0)",
    "(-(1u8))",
    "(1u8 << 9)",
    "(255u8 + 1)",
    "a[(0, 0, 0, 0, 0)]",
    "a[()]",
    "alloc_shared::<f16, (4,)>()",
    "alloc_local::<f32>((0,))",
    "alloc_fragment::<f32>(())",
    "alloc_shared::<f32>((1, 2, 3, 4, 5))",
    "parallel(0)",
    "serial(1, 2, 3)",
    "pipelined(4, 9)",
    "r#type",
    "self",
    "(1..2)",
    "[1, 2]",
    "{ 1 }",
    "|x| x",
    "println!()",
    "x.0",
    "(*x)",
    "(1e400 as f16)",
    "(-1e400)",
    "(2.5 as usize)",
    "0xFFFFFFFFFFFFFFFF",
    "((1 << 127) + (1 << 127))",
    "(-(-(1 << 127)))",
    "(true as f32)",
    "(1 as bool)",
    "exp2(-1e400)",
    "abs(-(1 << 63))",
    "(0u8 - 1)",
    "rsqrt(0.0)",
    "pow(-8.0, 1.0 / 3.0)",
    "fma(1, 2, 3)",
    "sin(1e300)",
    "(1.5).mul_add(2.0, 3.0)",
    "a.at",
];

/// Statements that probe edge cases; inserted into a brace group.
const STMT_SNIPPETS: &[&str] = &[
    "for i in parallel(-(1 << 127)) {}",
    "for i in parallel((1 << 126).div_ceil(1 << 126)) {}",
    "for i in parallel(1 << 127) {}",
    "let mut s = alloc_shared::<f32>((-(1 << 127),));",
    "let mut s = alloc_shared::<f32>(((1 << 127).div_ceil(0 - 1),));",
    "let mut s = alloc_shared::<f32>((0,));",
    "for k in pipelined(4, -(1 << 127)) {}",
    "for k in pipelined(4, 0) {}",
    "copy(&s, &mut s);",
    "return;",
    "loop {}",
    "let _ = 1;",
    "let x;",
    "let (a, b) = (1, 2, 3);",
    "let (a, b) = 1;",
    "gemm(&a_s, &a_s, &mut a_s);",
    "reduce_sum(&s, &mut s, 5);",
    "reduce_max(&s, &mut t, 18446744073709551615);",
    "fn inner() {}",
    "for (i, j, k, l) in parallel(1, 2, 3, 4) {}",
    "for () in serial(1) {}",
    "for i in serial() {}",
    "atomic_add(&mut x, 1);",
    "fill(&mut acc, -(1 << 127));",
    "let r#type = 1;",
    "let v = block_idx(0) as u8 as i32 as f16 as bf16 as f64 as u32 as usize;",
];

/// The mutations, weighted by repetition: those that usually keep the function syntactically
/// valid (measured: literal 100%, stmt-snippet 97%, drop-group 90%, ident 65%, expr-snippet
/// 53%) come more often than those that usually break it (swap 8%, splice 15%, delete 30%).
const OPS: &[&str] = &[
    "literal",
    "literal",
    "literal",
    "stmt-snippet",
    "stmt-snippet",
    "stmt-snippet",
    "ident",
    "ident",
    "ident",
    "expr-snippet",
    "expr-snippet",
    "expr-snippet",
    "drop-group",
    "drop-group",
    "punct",
    "punct",
    "delete",
    "duplicate",
    "swap",
    "double-group",
    "delimiter",
    "splice",
];

/// Binary operators, to replace one another (this keeps the syntax valid more often than an
/// arbitrary punctuation does).
const BINOPS: &[&str] = &[
    "+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "==", "!=", "<", ">", "<=", ">=", "&&",
    "||",
];

/// Applies one mutation to `target`; `donor` is another kernel's tokens for splicing.
/// Returns a short description.
fn mutate(rng: &mut Rng, target: &mut Vec<Tok>, donor: &[Tok], idents: &[String]) -> String {
    let mut all = Vec::new();
    nodes(target, &mut Vec::new(), &mut all);
    let of_kind = |k: Kind| -> Vec<Vec<usize>> {
        all.iter()
            .filter(|(_, kk)| *kk == k)
            .map(|(p, _)| p.clone())
            .collect()
    };
    let op = *rng.pick(OPS);
    if all.is_empty() {
        // Nothing to edit: insert something.
        target.extend(tokens(rng.pick::<&str>(KEYWORDS)));
        return "insert into empty".into();
    }
    let any = rng.pick(&all).0.clone();
    match op {
        "delete" => {
            let (seq, i) = parent_mut(target, &any);
            seq.remove(i);
        }
        "duplicate" => {
            let (seq, i) = parent_mut(target, &any);
            let t = seq[i].clone();
            seq.insert(i, t);
        }
        "swap" => {
            let (seq, i) = parent_mut(target, &any);
            if i + 1 < seq.len() {
                seq.swap(i, i + 1);
            } else if i > 0 {
                seq.swap(i - 1, i);
            }
        }
        "ident" => {
            let ids = of_kind(Kind::Ident);
            let path = if ids.is_empty() {
                any
            } else {
                rng.pick(&ids).clone()
            };
            let new = if rng.chance(1, 2) {
                rng.pick(idents).clone()
            } else {
                rng.pick(KEYWORDS).to_string()
            };
            let (seq, i) = parent_mut(target, &path);
            seq.splice(i..=i, tokens(&new));
        }
        "literal" => {
            let lits = of_kind(Kind::Literal);
            let path = if lits.is_empty() {
                any
            } else {
                rng.pick(&lits).clone()
            };
            let (seq, i) = parent_mut(target, &path);
            seq.splice(i..=i, literal(rng.pick::<&str>(LITERALS)));
        }
        "punct" => {
            let ps = of_kind(Kind::Punct);
            let path = if ps.is_empty() {
                any
            } else {
                rng.pick(&ps).clone()
            };
            let binop = rng.chance(1, 2);
            let (seq, i) = parent_mut(target, &path);
            let is_op = matches!(&seq[i], Tok::Leaf(TokenTree::Punct(p))
                if "+-*/%^".contains(p.as_char()) && p.spacing() == Spacing::Alone);
            let new = if binop && is_op {
                *rng.pick(BINOPS)
            } else {
                *rng.pick(PUNCTS)
            };
            seq.splice(i..=i, tokens(new));
        }
        "drop-group" | "double-group" | "delimiter" => {
            let gs = of_kind(Kind::Group);
            if gs.is_empty() {
                let (seq, i) = parent_mut(target, &any);
                seq.remove(i);
                return format!("{op} (no group: delete)");
            }
            let path = rng.pick(&gs).clone();
            let delims = [
                Delimiter::Parenthesis,
                Delimiter::Bracket,
                Delimiter::Brace,
                Delimiter::None,
            ];
            let new_delim = *rng.pick(&delims);
            let (seq, i) = parent_mut(target, &path);
            if let Tok::Group(d, _, inner) = &mut seq[i] {
                match op {
                    "drop-group" => inner.clear(),
                    "double-group" => {
                        let copy = inner.clone();
                        if rng.chance(1, 2) {
                            inner
                                .push(Tok::Leaf(TokenTree::Punct(Punct::new(',', Spacing::Alone))));
                        }
                        inner.extend(copy);
                    }
                    _ => *d = new_delim,
                }
            }
        }
        "expr-snippet" => {
            let leaves: Vec<Vec<usize>> = all
                .iter()
                .filter(|(_, k)| matches!(k, Kind::Ident | Kind::Literal))
                .map(|(p, _)| p.clone())
                .collect();
            let path = if leaves.is_empty() {
                any
            } else {
                rng.pick(&leaves).clone()
            };
            let (seq, i) = parent_mut(target, &path);
            seq.splice(i..=i, tokens(rng.pick::<&str>(EXPR_SNIPPETS)));
        }
        "stmt-snippet" => {
            let braces: Vec<Vec<usize>> = all
                .iter()
                .filter(|(p, k)| {
                    *k == Kind::Group && {
                        let (seq, i) = parent_ref(target, p);
                        matches!(&seq[i], Tok::Group(Delimiter::Brace, _, _))
                    }
                })
                .map(|(p, _)| p.clone())
                .collect();
            let snippet = tokens(rng.pick::<&str>(STMT_SNIPPETS));
            if braces.is_empty() {
                target.extend(snippet);
                return "stmt-snippet (appended)".into();
            }
            let path = rng.pick(&braces).clone();
            let (seq, i) = parent_mut(target, &path);
            if let Tok::Group(_, _, inner) = &mut seq[i] {
                // At the start, or after a `;` or a `}` of the group.
                let mut spots = vec![0];
                for (j, t) in inner.iter().enumerate() {
                    match t {
                        Tok::Leaf(TokenTree::Punct(p)) if p.as_char() == ';' => spots.push(j + 1),
                        Tok::Group(Delimiter::Brace, _, _) => spots.push(j + 1),
                        _ => {}
                    }
                }
                let at = *rng.pick(&spots);
                inner.splice(at..at, snippet);
            }
        }
        "splice" => {
            let mut dn = Vec::new();
            nodes(donor, &mut Vec::new(), &mut dn);
            if dn.is_empty() {
                return "splice (empty donor)".into();
            }
            // A run of 1..=8 consecutive siblings from the donor.
            let from = rng.pick(&dn).0.clone();
            let mut seq: &[Tok] = donor;
            for &j in &from[..from.len() - 1] {
                seq = match &seq[j] {
                    Tok::Group(_, _, inner) => inner,
                    Tok::Leaf(_) => unreachable!(),
                };
            }
            let start = *from.last().unwrap();
            let len = 1 + rng.below(8);
            let run: Vec<Tok> = seq[start..(start + len).min(seq.len())].to_vec();
            let replace = rng.chance(1, 2);
            let (tseq, i) = parent_mut(target, &any);
            if replace {
                tseq.splice(i..=i, run);
            } else {
                tseq.splice(i..i, run);
            }
        }
        _ => unreachable!(),
    }
    op.to_string()
}

/// A mutant. Many token edits break the function's syntax, and tokens that are not an item
/// never reach the kernel compiler (rustc reports them; see `check_one`): so for 7 mutants in 8,
/// one whose function no longer parses is replaced once by a fresh one (deterministically).
pub fn mutant(
    rng: &mut Rng,
    corpus: &[Kernel],
    idents: &[String],
) -> (usize, TokenStream, TokenStream, Vec<String>) {
    let want_fn = !rng.chance(1, 8);
    let mut attempt = 0;
    loop {
        let m = mutant_once(rng, corpus, idents);
        attempt += 1;
        if !want_fn || attempt == 2 || syn::parse2::<syn::ItemFn>(m.2.clone()).is_ok() {
            return m;
        }
    }
}

fn mutant_once(
    rng: &mut Rng,
    corpus: &[Kernel],
    idents: &[String],
) -> (usize, TokenStream, TokenStream, Vec<String>) {
    let ki = rng.below(corpus.len());
    let k = &corpus[ki];
    let donor = &corpus[rng.below(corpus.len())];
    let mut attr = to_toks(k.attr.clone());
    let mut item = to_toks(k.item.clone());
    let donor_toks = if rng.chance(1, 4) {
        to_toks(donor.attr.clone())
    } else {
        to_toks(donor.item.clone())
    };
    // 1 mutation half of the time, 2 or 3 otherwise.
    let n = [1, 1, 1, 1, 1, 2, 2, 2, 3, 3][rng.below(10)];
    let mut ops = Vec::new();
    for _ in 0..n {
        // Mutate the attribute or the function, roughly in proportion to their sizes (the
        // attribute is small but dense with meaning: give it at least a quarter of the edits).
        let in_attr = rng.chance(1, 4);
        let desc = if in_attr {
            mutate(rng, &mut attr, &donor_toks, idents)
        } else {
            mutate(rng, &mut item, &donor_toks, idents)
        };
        ops.push(format!("{}:{desc}", if in_attr { "attr" } else { "item" }));
    }
    (ki, from_toks(&attr), from_toks(&item), ops)
}
