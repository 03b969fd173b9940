//! Finds the `#[tile_kernel]` functions in a crate's sources, the way the macro will see them.

use std::path::{Path, PathBuf};
use syn::visit::Visit;
use tilelang_codegen::ir::Kernel;

/// A kernel found in the sources and accepted by the frontend.
pub struct Found {
    pub file: PathBuf,
    pub ir: Kernel,
}

/// Every kernel under `src` (recursively). Kernels the frontend rejects are skipped: the macro
/// reports their errors, at the right spans, when rustc compiles the crate.
pub fn kernels(src: &Path) -> Result<Vec<Found>, String> {
    let mut files = Vec::new();
    collect(src, &mut files);
    files.sort();
    let mut out: Vec<Found> = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file)
            .map_err(|e| format!("error: cannot read {}: {e}", file.display()))?;
        let Ok(ast) = syn::parse_file(&text) else {
            continue;
        };
        let mut v = Visitor { found: Vec::new() };
        v.visit_file(&ast);
        for (attr, item) in v.found {
            if let Ok(ir) = tilelang_codegen::compile(attr, item) {
                if let Some(prev) = out.iter().find(|f| f.ir.name == ir.name) {
                    return Err(format!(
                        "error: two kernels are named `{}` ({} and {}); kernel names must be unique within a crate",
                        ir.name,
                        prev.file.display(),
                        file.display()
                    ));
                }
                out.push(Found {
                    file: file.clone(),
                    ir,
                });
            }
        }
    }
    Ok(out)
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

struct Visitor {
    found: Vec<(proc_macro2::TokenStream, proc_macro2::TokenStream)>,
}

impl<'ast> Visit<'ast> for Visitor {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        let is_kernel = |a: &syn::Attribute| {
            a.path()
                .segments
                .last()
                .is_some_and(|s| s.ident == "tile_kernel")
        };
        if let Some(attr) = f.attrs.iter().find(|a| is_kernel(a)) {
            let tokens = match &attr.meta {
                syn::Meta::List(l) => l.tokens.clone(),
                _ => proc_macro2::TokenStream::new(),
            };
            // The macro receives the item without its own attribute.
            let mut item = f.clone();
            item.attrs.retain(|a| !is_kernel(a));
            self.found
                .push((tokens, quote::ToTokens::into_token_stream(item)));
        }
    }
}
