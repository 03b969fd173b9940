//! `#[tile_kernel]`: a thin shim over `tilelang-codegen`. It never runs a compiler and never
//! touches files; all the work is in the codegen crate, shared with the build script.

use proc_macro::TokenStream;

/// Turns a kernel written in the tile language into a typed, safe launcher (a function of the
/// same name), a module of the same name with its configs, and its CPU implementation.
/// See the `tilelang` crate for the language.
#[proc_macro_attribute]
pub fn tile_kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    tilelang_codegen::expand(attr.into(), item.into()).into()
}
