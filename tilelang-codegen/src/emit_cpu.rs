//! Pass 3 (CPU backend), lower: [`crate::ir`] → Rust. The kernel body becomes a Rust function generic
//! over the kernel's const generics that runs the grid's blocks one after another, with the
//! primitives of `tilelang_rt::cpu`. Every access is bounds-checked and every integer division
//! checked, so a buggy kernel returns an error instead of misbehaving.

use crate::ir::*;
use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

/// The Rust type of a dtype on the CPU backend.
pub fn ty(d: Dtype) -> TokenStream {
    match d {
        Dtype::F16 => quote!(::tilelang::__private::half::f16),
        Dtype::Bf16 => quote!(::tilelang::__private::half::bf16),
        Dtype::F32 => quote!(f32),
        Dtype::F64 => quote!(f64),
        Dtype::I32 => quote!(i32),
        Dtype::U32 => quote!(u32),
        Dtype::U8 => quote!(u8),
        Dtype::Bool => quote!(bool),
        Dtype::Index => quote!(i64),
    }
}

pub fn var_ident(id: VarId) -> syn::Ident {
    format_ident!("__v{}", id)
}
pub fn buf_ident(id: BufId) -> syn::Ident {
    format_ident!("__b{}", id)
}
pub fn tensor_ident(k: &Kernel, p: ParamId) -> syn::Ident {
    format_ident!("__t_{}", k.params[p].name)
}
pub fn scalar_ident(k: &Kernel, p: ParamId) -> syn::Ident {
    format_ident!("__s_{}", k.params[p].name)
}
pub fn sym_ident(k: &Kernel, i: usize) -> syn::Ident {
    format_ident!("__sym_{}", k.symbols[i])
}

/// Emits expressions; also used by the launcher for `grid` and `requires`.
pub struct ExprEmitter<'a> {
    pub k: &'a Kernel,
}

impl ExprEmitter<'_> {
    pub fn expr(&self, e: &Expr) -> TokenStream {
        let k = self.k;
        match &e.kind {
            ExprKind::Int(v) => int_lit(*v, e.ty),
            ExprKind::Float(v) => float_lit(*v, e.ty),
            ExprKind::Bool(b) => quote!(#b),
            ExprKind::Const(i) => {
                let c = &k.consts[*i];
                quote!((#c as i64))
            }
            ExprKind::Sym(i) => {
                let s = sym_ident(k, *i);
                quote!(#s)
            }
            ExprKind::Scalar(p) => {
                let s = scalar_ident(k, *p);
                quote!(#s)
            }
            ExprKind::Var(v) => {
                let v = var_ident(*v);
                quote!(#v)
            }
            ExprKind::BlockIdx(d) => {
                [quote!(__bx), quote!(__by), quote!(__bz)][*d as usize].clone()
            }
            ExprKind::Load(a) => {
                let (t, idx) = self.access(a);
                quote!(#t.get([#(#idx),*])?)
            }
            ExprKind::Binary(op, l, r) => {
                let (l, r) = (self.expr(l), self.expr(r));
                let rt = quote!(::tilelang::__private::cpu);
                match op {
                    BinOp::Add => quote!(#rt::add(#l, #r)),
                    BinOp::Sub => quote!(#rt::sub(#l, #r)),
                    BinOp::Mul => quote!(#rt::mul(#l, #r)),
                    BinOp::Div => quote!(#rt::div(#l, #r, __KERNEL)?),
                    BinOp::Rem => quote!(#rt::rem(#l, #r, __KERNEL)?),
                    BinOp::Shl => quote!(#rt::shl(#l, #r)),
                    BinOp::Shr => quote!(#rt::shr(#l, #r)),
                    BinOp::BitAnd => quote!((#l & #r)),
                    BinOp::BitOr => quote!((#l | #r)),
                    BinOp::BitXor => quote!((#l ^ #r)),
                    BinOp::Eq => quote!((#l == #r)),
                    BinOp::Ne => quote!((#l != #r)),
                    BinOp::Lt => quote!((#l < #r)),
                    BinOp::Le => quote!((#l <= #r)),
                    BinOp::Gt => quote!((#l > #r)),
                    BinOp::Ge => quote!((#l >= #r)),
                    BinOp::And => quote!((#l && #r)),
                    BinOp::Or => quote!((#l || #r)),
                }
            }
            ExprKind::Unary(UnOp::Neg, x) => {
                let x = self.expr(x);
                quote!(::tilelang::__private::cpu::neg(#x))
            }
            ExprKind::Unary(UnOp::Not, x) => {
                let x = self.expr(x);
                quote!((!#x))
            }
            ExprKind::Cast(x) => {
                let (from, to) = (ty(x.ty), ty(e.ty));
                let x = self.expr(x);
                quote!(::tilelang::__private::cpu::cast::<#from, #to>(#x))
            }
            ExprKind::Math(f, args) => {
                let f = format_ident!("{}", f.name());
                let args = args.iter().map(|a| self.expr(a));
                quote!(::tilelang::__private::cpu::#f(#(#args),*))
            }
            ExprKind::Select(c, a, b) => {
                let (c, a, b) = (self.expr(c), self.expr(a), self.expr(b));
                quote!((if #c { #a } else { #b }))
            }
            ExprKind::DivCeil(a, b) => {
                let (a, b) = (self.expr(a), self.expr(b));
                quote!(::tilelang::__private::cpu::div_ceil(#a, #b, __KERNEL)?)
            }
        }
    }

    fn access(&self, a: &Access) -> (syn::Ident, Vec<TokenStream>) {
        let t = match a.target {
            Target::Tensor(p) => tensor_ident(self.k, p),
            Target::Buffer(b) => buf_ident(b),
        };
        (t, a.index.iter().map(|i| self.expr(i)).collect())
    }
}

fn int_lit(v: i128, t: Dtype) -> TokenStream {
    match t {
        Dtype::Index => {
            let l = Literal::i64_suffixed(v as i64);
            quote!(#l)
        }
        Dtype::I32 => {
            let l = Literal::i32_suffixed(v as i32);
            quote!(#l)
        }
        Dtype::U32 => {
            let l = Literal::u32_suffixed(v as u32);
            quote!(#l)
        }
        Dtype::U8 => {
            let l = Literal::u8_suffixed(v as u8);
            quote!(#l)
        }
        other => float_lit(v as f64, other),
    }
}

fn float_lit(v: f64, t: Dtype) -> TokenStream {
    let lit = if v.is_finite() {
        let l = Literal::f64_suffixed(v);
        quote!(#l)
    } else if v.is_nan() {
        quote!(f64::NAN)
    } else if v > 0.0 {
        quote!(f64::INFINITY)
    } else {
        quote!(f64::NEG_INFINITY)
    };
    // Half-precision literals are rounded at compile time (in a const item), not per use.
    let (eb, mb) = match t {
        Dtype::F16 => (5u32, 10u32),
        Dtype::Bf16 => (8, 7),
        _ => {
            let t = ty(t);
            return quote!(::tilelang::__private::cpu::lit::<#t>(#lit));
        }
    };
    let t = ty(t);
    quote!({
        const __LIT: #t = #t::from_bits(::tilelang::__private::cpu::round_f64(#lit, #eb, #mb) as u16);
        __LIT
    })
}

/// The CPU implementation: `fn __cpu<consts>(tensors, scalars, symbols, grid) -> Result<()>`.
pub fn cpu_fn(k: &Kernel) -> TokenStream {
    let consts = &k.consts;
    let mut params = Vec::new();
    for (i, p) in k.params.iter().enumerate() {
        match &p.kind {
            ParamKind::Tensor {
                dtype,
                dims,
                mutable,
            } => {
                let (id, t, r) = (tensor_ident(k, i), ty(*dtype), dims.len());
                if *mutable {
                    params.push(quote!(mut #id: ::tilelang::__private::cpu::Out<'_, #t, #r>));
                } else {
                    params.push(quote!(#id: ::tilelang::__private::cpu::In<'_, #t, #r>));
                }
            }
            ParamKind::Scalar { dtype } => {
                let (id, t) = (scalar_ident(k, i), ty(*dtype));
                params.push(quote!(#id: #t));
            }
        }
    }
    let nsym = k.symbols.len();
    let syms = (0..nsym).map(|i| {
        let s = sym_ident(k, i);
        quote!(let #s: i64 = __syms[#i];)
    });
    let body = Body {
        e: ExprEmitter { k },
    }
    .stmts(&k.body);
    quote! {
        #[allow(unused_mut, unused_variables, unused_parens, unused_braces, non_snake_case, clippy::all)]
        fn __cpu<#(const #consts: usize),*>(#(#params,)* __syms: [i64; #nsym], __grid: [i64; 3]) -> ::core::result::Result<(), ::tilelang::Error> {
            #(#syms)*
            for __bz in 0..__grid[2] {
                for __by in 0..__grid[1] {
                    for __bx in 0..__grid[0] {
                        #body
                    }
                }
            }
            ::core::result::Result::Ok(())
        }
    }
}

struct Body<'a> {
    e: ExprEmitter<'a>,
}

impl Body<'_> {
    fn stmts(&self, s: &[Stmt]) -> TokenStream {
        s.iter().map(|s| self.stmt(s)).collect()
    }

    fn tile_region(&self, tensor: ParamId, offsets: &[Expr]) -> (syn::Ident, TokenStream) {
        let offs = offsets.iter().map(|o| self.e.expr(o));
        (tensor_ident(self.e.k, tensor), quote!([#(#offs),*]))
    }

    fn stmt(&self, s: &Stmt) -> TokenStream {
        let k = self.e.k;
        let rt = quote!(::tilelang::__private::cpu);
        match &s.kind {
            StmtKind::Let { var, init } => {
                let (v, t, e) = (var_ident(*var), ty(k.vars[*var].ty), self.e.expr(init));
                quote!(let mut #v: #t = #e;)
            }
            StmtKind::Assign { var, value } => {
                let (v, e) = (var_ident(*var), self.e.expr(value));
                quote!(#v = #e;)
            }
            StmtKind::Store { access, value } => {
                let (t, idx) = self.e.access(access);
                let v = self.e.expr(value);
                quote!({ let __val = #v; #t.set([#(#idx),*], __val)?; })
            }
            StmtKind::AtomicAdd { access, value } => {
                let (t, idx) = self.e.access(access);
                let v = self.e.expr(value);
                quote!({ let __val = #v; #t.atomic_add([#(#idx),*], __val)?; })
            }
            StmtKind::Alloc(b) => {
                let buf = &k.buffers[*b];
                let (id, t, r, name) = (
                    buf_ident(*b),
                    ty(buf.dtype),
                    buf.shape.len(),
                    buf.name.to_string(),
                );
                let dims = buf.shape.iter().map(|d| self.e.expr(d));
                quote!(let mut #id = #rt::Buf::<#t, #r>::new(__KERNEL, #name, [#(#dims),*]);)
            }
            StmtKind::For { kind, vars, body } => {
                let body = self.stmts(body);
                match kind {
                    LoopKind::Parallel { extents } => {
                        let mut out = body;
                        for (v, e) in vars.iter().zip(extents).rev() {
                            let (v, e) = (var_ident(*v), self.e.expr(e));
                            out = quote!(for #v in 0..#e { #out });
                        }
                        out
                    }
                    LoopKind::Serial { start, end } => {
                        let (v, s, e) = (var_ident(vars[0]), self.e.expr(start), self.e.expr(end));
                        quote!(for #v in #s..#e { #body })
                    }
                    LoopKind::Pipelined { extent, .. } => {
                        let (v, e) = (var_ident(vars[0]), self.e.expr(extent));
                        quote!(for #v in 0..#e { #body })
                    }
                }
            }
            StmtKind::If { cond, then, els } => {
                let (c, t) = (self.e.expr(cond), self.stmts(then));
                if els.is_empty() {
                    quote!(if #c { #t })
                } else {
                    let e = self.stmts(els);
                    quote!(if #c { #t } else { #e })
                }
            }
            StmtKind::Copy { src, dst } => match (src, dst) {
                (Tile::Region { tensor, offsets }, Tile::Buffer(b)) => {
                    let (t, offs) = self.tile_region(*tensor, offsets);
                    let b = buf_ident(*b);
                    quote!(#rt::copy_from_global(&#t, #offs, &mut #b)?;)
                }
                (Tile::Buffer(b), Tile::Region { tensor, offsets }) => {
                    let (t, offs) = self.tile_region(*tensor, offsets);
                    let b = buf_ident(*b);
                    quote!(#rt::copy_to_global(&#b, &mut #t, #offs)?;)
                }
                (Tile::Buffer(a), Tile::Buffer(b)) => {
                    let (a, b) = (buf_ident(*a), buf_ident(*b));
                    quote!(#rt::copy_buf(&#a, &mut #b)?;)
                }
                // Rejected by validation.
                (Tile::Region { .. }, Tile::Region { .. }) => quote!(),
            },
            StmtKind::Fill { buf, value } => {
                let (b, v) = (buf_ident(*buf), self.e.expr(value));
                quote!({ let __val = #v; #b.fill(__val); })
            }
            StmtKind::Gemm { a, b, c, ta, tb } => {
                let (a, b, c) = (buf_ident(*a), buf_ident(*b), buf_ident(*c));
                if *ta || *tb {
                    quote!(#rt::gemm_t::<#ta, #tb, _, _>(&#a, &#b, &mut #c)?;)
                } else {
                    quote!(#rt::gemm(&#a, &#b, &mut #c)?;)
                }
            }
            StmtKind::Reduce { op, src, dst, dim } => {
                let (s, d) = (buf_ident(*src), buf_ident(*dst));
                let f = match op {
                    ReduceOp::Sum => quote!(reduce_sum),
                    ReduceOp::Max => quote!(reduce_max),
                };
                quote!(#rt::#f(&#s, &mut #d, #dim)?;)
            }
        }
    }
}
