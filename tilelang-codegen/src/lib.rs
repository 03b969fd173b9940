//! The tilelang compiler. Pure and deterministic: token streams in, token streams (and, later,
//! HIP C++ sources) out; no I/O. Both the `#[tile_kernel]` macro and the build script call it.
//!
//! The passes, each in its own module:
//!
//! 1. [`parse`] and [`attr`]: `syn` syntax → [`ast`]; unsupported Rust is rejected here.
//! 2. [`validate`]: [`ast`] → typed [`ir`]; names, dtypes, the tile model's rules, per-config checks.
//! 3. [`emit_cpu`] + [`launcher`]: [`ir`] → the Rust CPU implementation and the safe launcher.
//!
//! Errors are collected in a [`ctxt::Ctxt`] by every pass and reported together.

pub mod ast;
pub mod attr;
pub mod ctxt;
pub mod emit_cpu;
pub mod ir;
pub mod launcher;
pub mod lower;
pub mod names;
pub mod parse;
pub mod target;
pub mod validate;

pub use ctxt::Diagnostic;
use proc_macro2::TokenStream;

/// Parses and checks one kernel: the attribute's tokens and the function item's tokens.
pub fn compile(attr: TokenStream, item: TokenStream) -> Result<ir::Kernel, Vec<Diagnostic>> {
    compile_inner(attr, item).0
}

fn compile_inner(
    attr: TokenStream,
    item: TokenStream,
) -> (Result<ir::Kernel, Vec<Diagnostic>>, Option<syn::ItemFn>) {
    let mut cx = ctxt::Ctxt::new();
    let item: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(e) => {
            // Tokens that are not an item at all carry a syntax error rustc reports itself;
            // another error here would only repeat it.
            if syn::parse2::<syn::Item>(item).is_ok() {
                cx.error_hint(
                    e.span(),
                    "#[tile_kernel] applies to a function",
                    "write `#[tile_kernel(..)] pub fn name(..) { .. }`",
                );
            }
            return (Err(cx.into_diagnostics()), None);
        }
    };
    let attr = attr::parse(&mut cx, attr);
    let def = parse::kernel(&mut cx, &item);
    let kernel = def.and_then(|def| validate::kernel(&mut cx, &def, &attr));
    match kernel {
        Some(k) if !cx.has_errors() => (Ok(k), Some(item)),
        _ => (Err(cx.into_diagnostics()), Some(item)),
    }
}

/// The targets the crate's build script compiled, as it told the macro through
/// [`names::BUILT_ENV`]. Only trusted for the package that is being compiled, so a stray
/// variable in the environment cannot point at missing objects.
fn built_targets() -> Vec<target::Target> {
    let (Ok(built), Ok(pkg)) = (
        std::env::var(names::BUILT_ENV),
        std::env::var("CARGO_PKG_NAME"),
    ) else {
        return Vec::new();
    };
    names::built_archs(&built, &pkg)
        .unwrap_or_default()
        .into_iter()
        .filter_map(target::Target::by_arch)
        .collect()
}

/// What `#[tile_kernel]` expands to: the launcher and CPU implementation, or on error the
/// diagnostics plus a fallback launcher so the rest of the crate still type-checks.
pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand_for(attr, item, &built_targets())
}

/// [`expand`] as if the build script had compiled `targets`: every (config, target) is lowered
/// and a target limit a config exceeds is a compile error on the config's name.
pub fn expand_for(attr: TokenStream, item: TokenStream, targets: &[target::Target]) -> TokenStream {
    let (result, item) = compile_inner(attr, item);
    let lowered = result.and_then(|k| launcher::lower(&k, targets).map(|l| (k, l)));
    match lowered {
        Ok((k, lowered)) => launcher::emit(&k, &lowered),
        Err(diags) => {
            let mut out = ctxt::to_compile_errors(&diags);
            if let Some(item) = item {
                let mut cx = ctxt::Ctxt::new();
                let params = parse::kernel(&mut cx, &item)
                    .filter(|def| def.params.len() == item.sig.inputs.len())
                    .map(|def| launcher::fallback_params(&def));
                out.extend(launcher::fallback(&item.sig.ident, &item.vis, params));
            }
            out
        }
    }
}
