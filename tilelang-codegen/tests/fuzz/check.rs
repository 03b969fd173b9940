//! Running the frontend with panics caught, and the properties checked on each input.

use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe};

thread_local! {
    static CATCHING: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs (once) a panic hook that, on a thread that is catching, records the panic message
/// with its location instead of printing it; other threads get the default hook.
fn install_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let handled = CATCHING.with(|c| {
                let mut c = c.borrow_mut();
                match c.as_mut() {
                    Some(slot) => {
                        *slot = info.to_string();
                        true
                    }
                    None => false,
                }
            });
            if !handled {
                default(info);
            }
        }));
    });
}

pub fn catching<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    install_hook();
    CATCHING.with(|c| *c.borrow_mut() = Some(String::new()));
    let r = panic::catch_unwind(AssertUnwindSafe(f));
    let msg = CATCHING.with(|c| c.borrow_mut().take()).unwrap_or_default();
    r.map_err(|_| msg)
}

#[derive(Default)]
pub struct Tally {
    pub ok: usize,
    pub err: usize,
    /// Mutants whose item is not even a Rust item: left to rustc's parser.
    pub syntax: usize,
    /// (config, target) pairs lowered to HIP C++ for accepted kernels.
    pub lowered: usize,
    /// Distinct failures (by panic location / property), each with the first seed that showed it.
    pub failures: Vec<(String, u64, String)>,
    /// Expansions of Ok kernels already re-parsed, by hash (a long run would otherwise hold
    /// every distinct expansion's text).
    pub parsed: std::collections::HashSet<u64>,
    /// With `FUZZ_DUMP_OK=<file>`: the source of each distinct Ok mutant, to type-check the
    /// generated code with rustc offline (a kernel that compiles here but whose expansion
    /// rustc rejects is a missing diagnostic).
    pub dump: Vec<(u64, String)>,
}

impl Tally {
    /// Adds `other`'s counts, failures (the first seed of each kept) and parsed set.
    pub fn merge(&mut self, other: Tally) {
        self.ok += other.ok;
        self.err += other.err;
        self.syntax += other.syntax;
        self.lowered += other.lowered;
        self.parsed.extend(other.parsed);
        self.dump.extend(other.dump);
        for (k, s, d) in other.failures {
            self.fail(k, s, d);
        }
    }

    pub fn fail(&mut self, key: String, seed: u64, detail: String) {
        if !self.failures.iter().any(|(k, _, _)| *k == key) {
            self.failures.push((key, seed, detail));
        }
    }
}

/// Runs one input through `expand` (and `compile`) and checks the properties.
///
/// `expand` runs the whole of `compile` and then the emitters, so it runs on every input.
/// `compile` runs on every input whose expansion has no `compile_error!` (to confirm it is
/// `Ok`), on every input where `expand` panicked, and on a deterministic eighth of the others
/// (to confirm `Err`): this nearly halves the cost per mutant, and `compile` being pure (see
/// `determinism.rs`) the other seven eighths would repeat work already done inside `expand`.
/// The error-path expansion is re-parsed on the same eighth.
pub fn check_one(
    t: &mut Tally,
    seed: u64,
    attr: TokenStream,
    item: TokenStream,
    what: &str,
    full: bool,
) {
    let text = || format!("{what}\n  attr: {attr}\n  item: {item}");
    let targets = tilelang_codegen::target::TARGETS;
    let expanded =
        match catching(|| tilelang_codegen::expand_for(attr.clone(), item.clone(), targets)) {
            Ok(e) => Some(e),
            Err(msg) => {
                t.fail(
                    first_line_key(&msg),
                    seed,
                    format!("expand panicked: {msg}\n{}", text()),
                );
                None
            }
        };
    let has_compile_error = expanded.as_ref().map(emits_compile_error);
    let run_compile = full || has_compile_error != Some(true);
    let compiled = if run_compile {
        // The frontend, then the GPU lowering of every config for every target.
        let lowered = || {
            let k = tilelang_codegen::compile(attr.clone(), item.clone())?;
            tilelang_codegen::launcher::lower(&k, targets).map(|l| l.len())
        };
        match catching(lowered) {
            Ok(Ok(n)) => {
                t.lowered += n;
                Some(Ok(()))
            }
            Ok(Err(d)) => Some(Err(d)),
            Err(msg) => {
                t.fail(
                    first_line_key(&msg),
                    seed,
                    format!("compile panicked: {msg}\n{}", text()),
                );
                None
            }
        }
    } else {
        None
    };
    let Some(expanded) = expanded else { return };
    let has_compile_error = has_compile_error.unwrap();
    // Tokens that are not an item at all: rustc reports the syntax error itself, so the
    // frontend adds no diagnostic and expands to nothing (a documented choice in `lib.rs`).
    if !has_compile_error && matches!(&compiled, Some(Err(d)) if d.is_empty()) {
        if syn::parse2::<syn::Item>(item.clone()).is_ok() {
            t.fail(
                "silent-err-on-an-item".into(),
                seed,
                format!(
                    "compile() is Err with no diagnostic for tokens that are an item\n{}",
                    text()
                ),
            );
        } else if !expanded.is_empty() {
            t.fail(
                "syntax-error-with-output".into(),
                seed,
                format!(
                    "tokens that are not an item expanded to `{expanded}`\n{}",
                    text()
                ),
            );
        }
        t.syntax += 1;
        return;
    }
    if has_compile_error {
        t.err += 1;
    } else {
        t.ok += 1;
    }
    match &compiled {
        Some(Ok(())) if has_compile_error => t.fail(
            "ok-but-compile_error".into(),
            seed,
            format!(
                "compile() is Ok but expand() emitted compile_error!\n{}",
                text()
            ),
        ),
        Some(Err(diags)) if !has_compile_error => t.fail(
            "err-without-compile_error".into(),
            seed,
            format!(
                "compile() is Err ({diags:?}) but expand() emitted no compile_error!\n{}",
                text()
            ),
        ),
        Some(Err(diags)) => {
            if diags.is_empty() {
                t.fail(
                    "err-without-diagnostics".into(),
                    seed,
                    format!("compile() is Err with no diagnostic\n{}", text()),
                );
            }
            if let Some(d) = diags.iter().find(|d| d.message.trim().is_empty()) {
                t.fail(
                    "empty-message".into(),
                    seed,
                    format!("a diagnostic has an empty message ({d:?})\n{}", text()),
                );
            }
        }
        _ => {}
    }
    if !has_compile_error {
        // compile() was Ok: the expansion must be valid Rust. (An expansion already parsed, by
        // another mutant that differs only where it does not matter, is not parsed again.)
        let hash = {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            expanded.to_string().hash(&mut h);
            h.finish()
        };
        if !t.parsed.insert(hash) {
            return;
        }
        if std::env::var_os("FUZZ_DUMP_OK").is_some() {
            // Without the function's own attributes (docs): rustc checks those itself.
            let mut f: syn::ItemFn = syn::parse2(item.clone()).unwrap();
            f.attrs.clear();
            t.dump.push((
                seed,
                format!("#[tile_kernel({attr})]\n{}", f.to_token_stream()),
            ));
        }
        if let Err(e) = syn::parse2::<syn::File>(expanded.clone()) {
            t.fail(
                format!("ok-expansion-does-not-parse: {e}"),
                seed,
                format!("expansion of an Ok kernel is not a valid Rust file: {e}\n{}\n  expansion: {expanded}", text()),
            );
        }
    } else if full {
        // The error path (compile_error! + fallback launcher) must also be valid Rust, so the
        // user sees the diagnostics rather than a syntax error in generated code.
        if let Err(e) = syn::parse2::<syn::File>(expanded.clone()) {
            t.fail(
                format!("err-expansion-does-not-parse: {e}"),
                seed,
                format!(
                    "error expansion is not a valid Rust file: {e}\n{}\n  expansion: {expanded}",
                    text()
                ),
            );
        }
    }
}

/// Whether an expansion reports errors: a `::core::compile_error! { .. }` at its top level.
fn emits_compile_error(ts: &TokenStream) -> bool {
    ts.clone()
        .into_iter()
        .any(|t| matches!(t, TokenTree::Ident(i) if i == "compile_error"))
}

/// A panic message's location line, so that one bug found by many mutants is reported once.
fn first_line_key(msg: &str) -> String {
    // "panicked at src/x.rs:10:5:\nmessage"
    let loc = msg.lines().next().unwrap_or("").to_string();
    let what = msg.lines().nth(1).unwrap_or("").to_string();
    format!("panic {loc} {what}")
}
