//! Finds the `#[tile_kernel]` functions in a crate's sources, the way the macro will see them.
//!
//! Every `.rs` file under `src` is read (the module tree is not followed: a file rustc compiles
//! is never missed). Kernels that `#[cfg(..)]` compiles out are left out ([`crate::cfg`]): a
//! `#[cfg]` on the function, on an enclosing inline `mod`, as an inner `#![cfg]` of its file, or
//! on the `mod name;` declaration that names its file (`name.rs`, `name/mod.rs` and everything
//! under `name/`, next to the declaring file; or the file of a `#[path]` attribute), unless a
//! compiled-in declaration names the file as specifically (`compiled_out_files`). Predicates a
//! build script cannot know keep the kernel. Files nothing declares (`src/bin/*.rs`, or modules
//! of inline modules that are compiled out) are kept: when in doubt, compile.

use crate::cfg;
use std::path::{Path, PathBuf};
use syn::visit::Visit;
use tilelang_codegen::ir::Kernel;

/// A kernel found in the sources and accepted by the frontend.
pub struct Found {
    pub file: PathBuf,
    pub ir: Kernel,
}

/// Reads an environment variable, as `cfg` evaluation needs.
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Every kernel under `src` (recursively) that the crate will compile. Kernels the frontend
/// rejects are skipped: the macro reports their errors, at the right spans, when rustc compiles
/// the crate.
///
/// In a build script (cargo sets `CARGO_CFG_TARGET_ARCH`) `#[cfg]` is evaluated against cargo's
/// variables; anywhere else nothing is known about features and target, and no kernel is left
/// out.
pub fn kernels(src: &Path) -> Result<Vec<Found>, String> {
    let env = |k: &str| std::env::var(k).ok();
    let in_build_script = std::env::var_os("CARGO_CFG_TARGET_ARCH").is_some();
    kernels_with(src, in_build_script.then_some(&env as Env<'_>))
}

/// [`kernels`] with `#[cfg]` evaluated against `env`, or not at all (`None`).
pub fn kernels_with(src: &Path, env: Option<Env<'_>>) -> Result<Vec<Found>, String> {
    let mut paths = Vec::new();
    collect(src, &mut paths);
    paths.sort();
    let mut files = Vec::new();
    for path in paths {
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("error: cannot read {}: {e}", path.display()))?;
        // A file that does not parse has no kernels we could compile; rustc reports it.
        if let Ok(ast) = syn::parse_file(&text) {
            files.push((path, ast));
        }
    }
    let skipped = match env {
        Some(env) => compiled_out_files(src, &files, env),
        None => Vec::new(),
    };
    let mut out: Vec<Found> = Vec::new();
    for (file, ast) in &files {
        if skipped.contains(file) {
            continue;
        }
        let mut v = Visitor {
            found: Vec::new(),
            env,
        };
        v.visit_file(ast);
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

/// The files whose module `#[cfg]` compiles out.
///
/// Each `mod` declaration says something about paths: a compiled-out `mod x;` about `x.rs`,
/// `x/mod.rs` and the directory `x/` beside it (or about its `#[path]` file), a compiled-in one
/// the same in the other direction, and a file's `#![cfg]` about the file (and its children's
/// directory). For each file the most specific statement wins, and on a tie the file is kept:
/// two declarations of one name under opposite `#[cfg]`s, a `#[path]` into a compiled-out
/// directory. Only declarations in files that are kept count, found by iterating to a fixed
/// point (a compiled-out file's own `mod` lines say nothing).
fn compiled_out_files(src: &Path, files: &[(PathBuf, syn::File)], env: Env<'_>) -> Vec<PathBuf> {
    // Files loaded through `#[path]` resolve their own `mod x;` beside themselves, like mod.rs.
    let mut path_targets = Vec::new();
    for (path, ast) in files {
        let dir = path.parent().unwrap_or(src);
        for item in &ast.items {
            if let syn::Item::Mod(m) = item {
                if let (None, Some(p)) = (&m.content, path_attr(&m.attrs)) {
                    path_targets.push(dir.join(p));
                }
            }
        }
    }
    // Compiled-out statements count from every file (a file's `#![cfg]` is about itself);
    // compiled-in ones only from files that are kept. The latter shrink as more files are
    // compiled out, so the set only grows, and the loop ends.
    let rules_of = |path: &PathBuf, ast: &syn::File| {
        let mut r = Rules::default();
        r.add_file(src, path, ast, path_targets.contains(path), env);
        r.0
    };
    let all: Vec<(&PathBuf, Vec<_>)> = files.iter().map(|(p, ast)| (p, rules_of(p, ast))).collect();
    let mut skipped: Vec<PathBuf> = Vec::new();
    loop {
        let mut rules = Rules::default();
        for (path, of_file) in &all {
            let kept = !skipped.contains(path);
            rules
                .0
                .extend(of_file.iter().filter(|(_, _, on)| kept || !on).cloned());
        }
        let now: Vec<PathBuf> = files
            .iter()
            .map(|(p, _)| p.clone())
            .filter(|p| rules.compiled_out(p))
            .collect();
        if now == skipped {
            return skipped;
        }
        skipped = now;
    }
}

fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|a| match &a.meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}

/// What module declarations say about paths: (path, is a directory, compiled in).
#[derive(Default)]
struct Rules(Vec<(PathBuf, bool, bool)>);

impl Rules {
    fn compiled_out(&self, file: &Path) -> bool {
        // Specificity: a file rule beats a directory rule, a deeper directory a shallower one.
        let best = self
            .0
            .iter()
            .filter(|(p, dir, _)| if *dir { file.starts_with(p) } else { file == p })
            .map(|(p, dir, on)| ((p.components().count(), !dir), *on))
            .fold(
                None,
                |acc: Option<((usize, bool), bool)>, (rank, on)| match acc {
                    Some((r, _)) if r > rank => acc,
                    // On a tie, compiled in wins.
                    Some((r, prev)) if r == rank => Some((r, prev || on)),
                    _ => Some((rank, on)),
                },
            );
        best.is_some_and(|(_, on)| !on)
    }

    /// The rules of the module declarations in `path` (parsed as `ast`); `by_path`: the file is
    /// the target of a `#[path]` attribute.
    fn add_file(&mut self, src: &Path, path: &Path, ast: &syn::File, by_path: bool, env: Env<'_>) {
        let dir = path.parent().unwrap_or(src);
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        // Cargo's crate roots: `src/lib.rs`, `src/main.rs`, `src/bin/*.rs`, `src/bin/*/main.rs`.
        let bin = src.join("bin");
        let crate_root = (dir == src && matches!(name, "lib.rs" | "main.rs"))
            || dir == bin
            || (dir.parent() == Some(bin.as_path()) && name == "main.rs");
        // Where `mod x;` in this file looks for `x`: beside a crate root, a `mod.rs` or a
        // `#[path]` file, else in the directory named after the file (`a.rs` declares `a/x.rs`).
        let children = if crate_root || by_path || name == "mod.rs" {
            dir.to_path_buf()
        } else {
            dir.join(path.file_stem().unwrap_or_default())
        };
        if cfg::disabled(&ast.attrs, env) {
            // `#![cfg(..)]`: the whole module. A crate root's directory holds other crates'
            // files (`src/bin`), so only the file itself.
            self.0.push((path.to_path_buf(), false, false));
            if !crate_root {
                self.0.push((children.clone(), true, false));
            }
        }
        self.add_items(&ast.items, dir, &children, true, env);
    }

    /// `file_dir`: the directory of the file; `children`: where this module's `mod x;` files
    /// live; `top`: whether the items are at the top of the file (not in an inline module).
    fn add_items(
        &mut self,
        items: &[syn::Item],
        file_dir: &Path,
        children: &Path,
        top: bool,
        env: Env<'_>,
    ) {
        for item in items {
            let syn::Item::Mod(m) = item else { continue };
            let name = m.ident.to_string();
            let on = !cfg::disabled(&m.attrs, env);
            match (&m.content, path_attr(&m.attrs)) {
                // An inline module's kernels are the visitor's; its `mod x;` files are looked
                // at only when it is compiled in (a compiled-out one says nothing about paths:
                // a file module of the same name may be the compiled-in alternative).
                (Some((_, inner)), _) => {
                    if on {
                        self.add_items(inner, file_dir, &children.join(&name), false, env);
                    }
                }
                // `#[path]` is relative to the file's directory at the top of a file; inside
                // inline modules the rules differ, and such a module says nothing.
                (None, Some(p)) if top => {
                    let target = file_dir.join(p);
                    if on {
                        // Its `mod x;` files sit beside it.
                        let beside = target.parent().unwrap_or(file_dir).to_path_buf();
                        self.0.push((beside, true, true));
                    }
                    self.0.push((target, false, on));
                }
                (None, Some(_)) => {}
                (None, None) => {
                    self.0
                        .push((children.join(format!("{name}.rs")), false, on));
                    self.0
                        .push((children.join(&name).join("mod.rs"), false, on));
                    self.0.push((children.join(&name), true, on));
                }
            }
        }
    }
}

struct Visitor<'e> {
    found: Vec<(proc_macro2::TokenStream, proc_macro2::TokenStream)>,
    env: Option<Env<'e>>,
}

impl Visitor<'_> {
    fn compiled_out(&self, attrs: &[syn::Attribute]) -> bool {
        self.env.is_some_and(|env| cfg::disabled(attrs, env))
    }
}

impl<'ast> Visit<'ast> for Visitor<'_> {
    fn visit_file(&mut self, f: &'ast syn::File) {
        if !self.compiled_out(&f.attrs) {
            syn::visit::visit_file(self, f);
        }
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !self.compiled_out(&m.attrs) {
            syn::visit::visit_item_mod(self, m);
        }
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if self.compiled_out(&f.attrs) {
            return;
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel named `name`, behind the attributes `attrs`.
    fn kernel(attrs: &str, name: &str) -> String {
        format!(
            "{attrs}\n#[tile_kernel(grid = [1], threads = 32)]\npub fn {name}(a: &mut Tensor<f32, (N,)>) {{\n    for i in parallel(32) {{\n        if i < N {{\n            a[i] = 1.0;\n        }}\n    }}\n}}\n"
        )
    }

    fn crate_with(files: &[(&str, String)]) -> PathBuf {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let d = std::env::temp_dir().join(format!(
            "tilelang-find-test-{}-{}",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        for (path, text) in files {
            let p = d.join("src").join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        d
    }

    fn names(src: &Path, env: Option<Env<'_>>) -> Vec<String> {
        let mut n: Vec<String> = kernels_with(src, env)
            .unwrap()
            .iter()
            .map(|f| f.ir.name.to_string())
            .collect();
        n.sort();
        n
    }

    /// A Linux build script's environment with feature `on` enabled.
    fn env(k: &str) -> Option<String> {
        match k {
            "CARGO_FEATURE_ON" => Some("1".into()),
            "CARGO_CFG_TARGET_OS" => Some("linux".into()),
            "CARGO_CFG_UNIX" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn cfg_disabled_kernels_are_left_out() {
        let lib = [
            kernel("", "plain"),
            kernel("#[cfg(feature = \"on\")]", "feature_on"),
            kernel("#[cfg(feature = \"off\")]", "feature_off"),
            kernel("#[cfg(not(unix))]", "not_unix"),
            kernel("#[cfg(test)]", "unknown_test"),
            kernel("#[cfg(all(test, windows))]", "test_and_windows"),
            format!(
                "#[cfg(feature = \"off\")]\nmod inline_off {{\n{}\n    mod nested;\n}}\n",
                kernel("", "in_inline_off")
            ),
            format!(
                "#[cfg(feature = \"on\")]\nmod inline_on {{\n{}}}\n",
                kernel("", "in_inline_on")
            ),
            format!(
                "mod outer {{\n    #[cfg(target_os = \"windows\")]\n    mod inner {{\n{}    }}\n}}\n",
                kernel("", "in_windows_only")
            ),
            "#[cfg(feature = \"off\")]\nmod file_off;\n#[cfg(feature = \"off\")]\nmod dir_off;\n#[cfg(my_cfg)]\nmod file_unknown;\nmod file_on;\n#[cfg(feature = \"off\")]\n#[path = \"elsewhere/renamed.rs\"]\nmod renamed;\n".to_string(),
            // Alternatives: a file module when `on`, an inline stub otherwise.
            "#[cfg(feature = \"on\")]\nmod backend;\n#[cfg(not(feature = \"on\"))]\nmod backend {}\n".to_string(),
            // A `#[path]` file inside the directory of a compiled-out `mod sys;`.
            "#[cfg(windows)]\nmod sys;\n#[cfg(unix)]\n#[path = \"sys/unix.rs\"]\nmod sys;\n".to_string(),
        ]
        .concat();
        let src = crate_with(&[
            ("lib.rs", lib),
            // Its `mod child;` says nothing: the file itself is compiled out.
            (
                "file_off.rs",
                format!("mod child;\n{}", kernel("", "in_file_off")),
            ),
            (
                "backend.rs",
                format!("mod gpu;\n{}", kernel("", "in_backend")),
            ),
            ("backend/gpu.rs", kernel("", "in_backend_gpu")),
            ("sys.rs", kernel("", "in_sys_windows")),
            (
                "sys/unix.rs",
                format!("mod helper;\n{}", kernel("", "in_sys_unix")),
            ),
            ("sys/helper.rs", kernel("", "in_sys_unix_helper")),
            ("file_off/child.rs", kernel("", "in_file_off_child")),
            ("dir_off/mod.rs", kernel("", "in_dir_off")),
            ("inline_off/nested.rs", kernel("", "in_inline_off_nested")),
            ("file_unknown.rs", kernel("", "in_file_unknown")),
            (
                "file_on.rs",
                format!(
                    "#[cfg(feature = \"off\")]\nmod sub;\n{}",
                    kernel("", "in_file_on")
                ),
            ),
            ("file_on/sub.rs", kernel("", "in_file_on_sub")),
            ("elsewhere/renamed.rs", kernel("", "in_renamed")),
            (
                "inner_off.rs",
                format!("#![cfg(feature = \"off\")]\n{}", kernel("", "in_inner_off")),
            ),
            ("bin/tool.rs", kernel("", "in_bin")),
        ]);
        let src = src.join("src");
        assert_eq!(
            names(&src, Some(&env)),
            [
                "feature_on",
                "in_backend",
                "in_backend_gpu",
                "in_bin",
                "in_file_on",
                "in_file_unknown",
                "in_inline_off_nested",
                "in_inline_on",
                "in_sys_unix",
                "in_sys_unix_helper",
                "plain",
                "unknown_test",
            ]
        );
        // Outside a build script nothing is known: every kernel is kept.
        assert_eq!(names(&src, None).len(), 24);
        std::fs::remove_dir_all(src.parent().unwrap()).unwrap();
    }
}
