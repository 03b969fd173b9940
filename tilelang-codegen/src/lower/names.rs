//! The C++ names the lowering gives what it prints: entry symbols, identifiers, element types.
//! A leaf of `lower`.

use crate::ir::*;
use std::fmt::Write;

/// The symbol of a (kernel, config).
pub fn entry_name(k: &Kernel, config: usize) -> String {
    format!(
        "tl_{}__{}",
        c_name(&k.name),
        c_name(&k.configs[config].name)
    )
}

/// A Rust identifier as a C++ identifier: raw identifiers lose their `r#` (every name the
/// emitter prints has a prefix or suffix, so `r#type` cannot become the keyword `type`), and
/// characters outside ASCII (Rust allows Unicode identifiers) are written `_u<hex>_`, which
/// every C++ compiler accepts. ASCII names print unchanged.
pub fn c_name(i: &syn::Ident) -> String {
    use syn::ext::IdentExt;
    let mut out = String::new();
    for ch in i.unraw().to_string().chars() {
        if ch.is_ascii_alphanumeric() || ch == '_' {
            out.push(ch);
        } else {
            let _ = write!(out, "_u{:x}_", ch as u32);
        }
    }
    out
}

/// The C++ type of a dtype.
pub fn ctype(d: Dtype) -> &'static str {
    match d {
        Dtype::F16 => "tl::half",
        Dtype::Bf16 => "tl::bfloat",
        Dtype::F32 => "float",
        Dtype::F64 => "double",
        Dtype::I32 => "int",
        Dtype::U32 => "unsigned int",
        Dtype::U8 => "unsigned char",
        Dtype::Bool => "bool",
        Dtype::Index => "tl::index",
    }
}
