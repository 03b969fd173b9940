//! A [`Program`] as Rust source: one `#[tile_kernel(..)]` function, formatted like rustfmt
//! would (four-space indents), every operator parenthesised so no precedence rule matters.

use super::ast::{Expr, Kernel, LitForm, ParamKind, Program, Scope, Stmt, Threads, Tile, Ty};
use std::fmt::Write;

impl Program {
    /// The kernel as a `#[tile_kernel]` Rust function.
    pub fn source(&self) -> String {
        kernel(&self.kernel)
    }
}

fn kernel(k: &Kernel) -> String {
    let mut s = String::new();
    let grid: Vec<String> = k.grid.iter().map(top).collect();
    let threads = match &k.threads {
        Threads::Literal(v) => v.to_string(),
        Threads::Const(c) => c.clone(),
    };
    let _ = write!(
        s,
        "#[tile_kernel(grid = [{}], threads = {threads}",
        grid.join(", ")
    );
    if !k.consts.is_empty() {
        let configs: Vec<String> = k
            .configs
            .iter()
            .map(|c| {
                let vals: Vec<String> = k
                    .consts
                    .iter()
                    .zip(&c.values)
                    .map(|(n, v)| format!("{n} = {v}"))
                    .collect();
                format!("{}({})", c.name, vals.join(", "))
            })
            .collect();
        let _ = write!(s, ", configs = [{}]", configs.join(", "));
    }
    if !k.defaults.is_empty() {
        let d: Vec<String> = k
            .defaults
            .iter()
            .map(|(a, c)| format!("{a} = {c}"))
            .collect();
        let _ = write!(s, ", defaults = [{}]", d.join(", "));
    }
    if !k.requires.is_empty() {
        let r: Vec<String> = k.requires.iter().map(top).collect();
        let _ = write!(s, ", requires = [{}]", r.join(", "));
    }
    if let Some((key, v)) = k.occupancy {
        let _ = write!(s, ", {key} = {v}");
    }
    s.push_str(")]\n");
    let generics: Vec<String> = k
        .consts
        .iter()
        .map(|c| format!("const {c}: usize"))
        .collect();
    let generics = if generics.is_empty() {
        String::new()
    } else {
        format!("<{}>", generics.join(", "))
    };
    let params: Vec<String> = k
        .params
        .iter()
        .map(|p| match &p.kind {
            ParamKind::Tensor {
                dtype,
                dims,
                mutable,
                ..
            } => format!(
                "{}: &{}Tensor<{}, {}>",
                p.name,
                if *mutable { "mut " } else { "" },
                dtype.name(),
                tuple(dims)
            ),
            ParamKind::Scalar(t) => format!("{}: {}", p.name, t.name()),
        })
        .collect();
    let _ = writeln!(s, "pub fn {}{generics}({}) {{", k.name, params.join(", "));
    stmts(&mut s, &k.body, 1);
    s.push_str("}\n");
    s
}

/// `(A,)` or `(A, B)`.
fn tuple(xs: &[String]) -> String {
    if xs.len() == 1 {
        format!("({},)", xs[0])
    } else {
        format!("({})", xs.join(", "))
    }
}

fn stmts(s: &mut String, body: &[Stmt], depth: usize) {
    for st in body {
        stmt(s, st, depth);
    }
}

fn stmt(s: &mut String, st: &Stmt, depth: usize) {
    let pad = "    ".repeat(depth);
    match st {
        Stmt::Let {
            name,
            mutable,
            ty,
            value,
        } => {
            let m = if *mutable { "mut " } else { "" };
            let ty = ty.map(|t| format!(": {}", t.name())).unwrap_or_default();
            let _ = writeln!(s, "{pad}let {m}{name}{ty} = {};", top(value));
        }
        Stmt::LetTuple(parts) => {
            let names: Vec<String> = parts.iter().map(|(n, _)| n.clone()).collect();
            let vals: Vec<String> = parts.iter().map(|(_, v)| top(v)).collect();
            let _ = writeln!(s, "{pad}let {} = {};", tuple(&names), tuple(&vals));
        }
        Stmt::Assign(name, value) => {
            let _ = writeln!(s, "{pad}{name} = {};", top(value));
        }
        Stmt::Store {
            target,
            index,
            op,
            value,
        } => {
            let op = op.map(|o| o.symbol()).unwrap_or("");
            let _ = writeln!(s, "{pad}{} {op}= {};", load(target, index), top(value));
        }
        Stmt::Alloc {
            name,
            scope,
            dtype,
            shape,
            arg_form,
        } => {
            let f = match scope {
                Scope::Shared => "alloc_shared",
                Scope::Fragment => "alloc_fragment",
                Scope::Local => "alloc_local",
            };
            let shape = tuple(shape);
            let call = if *arg_form {
                format!("{f}::<{}>({shape})", dtype.name())
            } else {
                format!("{f}::<{}, {shape}>()", dtype.name())
            };
            let _ = writeln!(s, "{pad}let mut {name} = {call};");
        }
        Stmt::Parallel {
            vars,
            extents,
            body,
        } => {
            let vars = if vars.len() == 1 {
                vars[0].clone()
            } else {
                format!("({})", vars.join(", "))
            };
            let _ = writeln!(s, "{pad}for {vars} in parallel({}) {{", extents.join(", "));
            stmts(s, body, depth + 1);
            let _ = writeln!(s, "{pad}}}");
        }
        Stmt::If { cond, then, els } => {
            let _ = writeln!(s, "{pad}if {} {{", top(cond));
            stmts(s, then, depth + 1);
            if els.is_empty() {
                let _ = writeln!(s, "{pad}}}");
            } else {
                let _ = writeln!(s, "{pad}}} else {{");
                stmts(s, els, depth + 1);
                let _ = writeln!(s, "{pad}}}");
            }
        }
        Stmt::Copy { src, dst } => {
            let _ = writeln!(s, "{pad}copy({}, {});", tile(src, false), tile(dst, true));
        }
        Stmt::Fill { buf, value } => {
            let _ = writeln!(s, "{pad}fill(&mut {buf}, {});", top(value));
        }
        Stmt::Clear(buf) => {
            let _ = writeln!(s, "{pad}clear(&mut {buf});");
        }
        Stmt::Gemm { a, b, c, ta, tb } => {
            let t = |on: &bool| if *on { ".t()" } else { "" };
            let _ = writeln!(s, "{pad}gemm(&{a}{}, &{b}{}, &mut {c});", t(ta), t(tb));
        }
        Stmt::Atomic {
            target,
            index,
            value,
        } => {
            let _ = writeln!(
                s,
                "{pad}atomic_add(&mut {}, {});",
                load(target, index),
                top(value)
            );
        }
        Stmt::Reduce { op, src, dst, dim } => {
            let _ = writeln!(s, "{pad}reduce_{op}(&{src}, &mut {dst}, {dim});");
        }
        Stmt::Loop {
            var,
            start,
            end,
            stages,
            body,
        } => {
            let range = match stages {
                Some(st) => format!("pipelined({}, {st})", top(end)),
                None => format!("serial({}, {})", top(start), top(end)),
            };
            let _ = writeln!(s, "{pad}for {var} in {range} {{");
            stmts(s, body, depth + 1);
            let _ = writeln!(s, "{pad}}}");
        }
    }
}

fn tile(t: &Tile, dst: bool) -> String {
    match t {
        Tile::Buf(b) if dst => format!("&mut {b}"),
        Tile::Buf(b) => format!("&{b}"),
        Tile::Region { tensor, offsets } => {
            let offs: Vec<String> = offsets.iter().map(top).collect();
            let at = if dst { "at_mut" } else { "at" };
            format!("{tensor}.{at}({})", tuple(&offs))
        }
    }
}

fn load(t: &str, index: &[Expr]) -> String {
    if index.len() == 1 {
        format!("{t}[{}]", top(&index[0]))
    } else {
        let ix: Vec<String> = index.iter().map(top).collect();
        format!("{t}[({})]", ix.join(", "))
    }
}

/// An expression in a position that needs no parentheses around it.
fn top(e: &Expr) -> String {
    match e {
        Expr::Bin(op, a, b) => format!("{} {} {}", expr(a), op.symbol(), expr(b)),
        _ => expr(e),
    }
}

/// An expression as an operand: parenthesised unless it is atomic.
fn expr(e: &Expr) -> String {
    match e {
        Expr::Int(v, ty, form) => {
            let body = match form {
                LitForm::Untyped => v.to_string(),
                LitForm::Typed => format!("{v}{}", ty.name()),
            };
            if *v < 0 {
                format!("({body})")
            } else {
                body
            }
        }
        Expr::Float(v, ty, form) => {
            let body = format!("{v:?}");
            match (form, ty) {
                (LitForm::Untyped, _) if *v < 0.0 => format!("({body})"),
                (LitForm::Untyped, _) => body,
                (LitForm::Typed, Ty::F16 | Ty::Bf16) => format!("({body} as {})", ty.name()),
                (LitForm::Typed, _) if *v < 0.0 => format!("({body}{})", ty.name()),
                (LitForm::Typed, _) => format!("{body}{}", ty.name()),
            }
        }
        Expr::Bool(b) => b.to_string(),
        Expr::Name(n) => n.clone(),
        Expr::BlockIdx(d) => format!("block_idx({d})"),
        Expr::Load(t, index) => load(t, index),
        Expr::Bin(..) => format!("({})", top(e)),
        Expr::Neg(x) => format!("(-{})", expr(x)),
        Expr::Not(x) => format!("(!{})", expr(x)),
        Expr::Cast(x, ty) => format!("({} as {})", expr(x), ty.name()),
        Expr::Call(f, args) => {
            let a: Vec<String> = args.iter().map(top).collect();
            format!("{}({})", f.name(), a.join(", "))
        }
        Expr::Select(c, a, b) => format!("if_then_else({}, {}, {})", top(c), top(a), top(b)),
        Expr::DivCeil(a, b) => format!("{}.div_ceil({})", expr(a), top(b)),
    }
}
