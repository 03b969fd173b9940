//! What the codegen tests share: a `#[tile_kernel]` function in a string, compiled to the IR.

use tilelang_codegen::ir::Kernel;

/// The IR of the first item of `src`, a function with a `#[tile_kernel(..)]` attribute; panics
/// with the diagnostics when it does not compile.
pub fn kernel(src: &str) -> Kernel {
    let file = syn::parse_file(src).expect("test source parses");
    let syn::Item::Fn(mut f) = file.items.into_iter().next().unwrap() else {
        panic!("a function")
    };
    let i = f
        .attrs
        .iter()
        .position(|a| a.path().is_ident("tile_kernel"))
        .unwrap();
    let attr = f.attrs.remove(i);
    let syn::Meta::List(list) = attr.meta else {
        panic!("attribute list")
    };
    tilelang_codegen::compile(list.tokens, quote::ToTokens::into_token_stream(f))
        .unwrap_or_else(|d| panic!("{:?}", d.iter().map(|d| d.text()).collect::<Vec<_>>()))
}
