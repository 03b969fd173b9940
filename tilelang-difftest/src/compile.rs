//! A generated source through the compiler: the frontend (`tilelang_codegen::compile`, as the
//! macro runs it) and the GPU lowering of every config for every target, as the build script
//! and the macro's launcher run it; and the device sources printed. Any diagnostic is a
//! rejection.

use quote::ToTokens;
use tilelang_codegen::{ir, launcher, lower, target};

/// Splits a source holding one `#[tile_kernel(..)]` function into the attribute's tokens and
/// the item's (the attribute removed), as the macro receives them.
pub fn split(source: &str) -> Result<(proc_macro2::TokenStream, proc_macro2::TokenStream), String> {
    let mut f: syn::ItemFn = syn::parse_str(source).map_err(|e| format!("not a function: {e}"))?;
    let pos = f
        .attrs
        .iter()
        .position(|a| a.path().is_ident("tile_kernel"))
        .ok_or("no #[tile_kernel] attribute")?;
    let attr = match &f.attrs[pos].meta {
        syn::Meta::List(l) => l.tokens.clone(),
        _ => proc_macro2::TokenStream::new(),
    };
    f.attrs.remove(pos);
    Ok((attr, f.to_token_stream()))
}

/// The IR of a source, or the diagnostics' texts.
pub fn to_ir(source: &str) -> Result<ir::Kernel, String> {
    let (attr, item) = split(source)?;
    tilelang_codegen::compile(attr, item).map_err(|d| texts(&d))
}

/// [`to_ir`], then every (config, target) of `target::TARGETS` lowered.
pub fn check(source: &str) -> Result<ir::Kernel, String> {
    let k = to_ir(source)?;
    launcher::lower(&k, target::TARGETS).map_err(|d| texts(&d))?;
    Ok(k)
}

/// The device sources of every (config, target) of `target::TARGETS` (`lower::emit`, the
/// plan printed as the build script prints it): their total length in bytes.
pub fn emit_all(k: &ir::Kernel) -> Result<usize, String> {
    let mut bytes = 0;
    for t in target::TARGETS {
        for c in 0..k.configs.len() {
            let hip = lower::emit(k, c, t, None).map_err(|d| d.text())?;
            bytes += hip.source.len();
        }
    }
    Ok(bytes)
}

fn texts(d: &[tilelang_codegen::Diagnostic]) -> String {
    d.iter().map(|d| d.text()).collect::<Vec<_>>().join("\n")
}
