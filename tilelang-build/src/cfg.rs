//! `#[cfg(...)]` as a build script can evaluate it, so that kernels rustc will not compile are
//! not compiled for the GPU either.
//!
//! Cargo tells a build script the enabled features of its package (`CARGO_FEATURE_<NAME>`) and
//! the target's configuration (`CARGO_CFG_<NAME>`, multiple values joined with `,`). That
//! decides `feature = ".."`, the `target_*` keys but `target_feature`, `unix`, `windows`, and
//! `all`, `any`, `not` and `true` / `false` over them.
//!
//! Everything else is *unknown* here: `test`, `doc`, `debug_assertions` (the build script's own
//! profile may differ from the crate's), `panic` (a profile's `panic = "abort"` is not in
//! `CARGO_CFG_PANIC`, and tests always unwind), `target_feature` (flags given to the crate
//! alone, `cargo rustc -- -C target-feature=..`, are not in `CARGO_CFG_TARGET_FEATURE`), names
//! set with `cargo:rustc-cfg` by a build script
//! (possibly this one, before or after `tilelang_build::build()`), `--cfg` flags, `version(..)`,
//! paths. A kernel behind an unknown predicate is kept and compiled: an extra object costs a
//! compile, a missing one fails the crate's build at `include_bytes!`.

use proc_macro2::TokenStream;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;

/// A parsed configuration predicate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pred {
    All(Vec<Pred>),
    Any(Vec<Pred>),
    Not(Box<Pred>),
    /// `true` / `false`.
    Bool(bool),
    /// A bare name: `unix`, `test`.
    Name(String),
    /// `key = "value"`: `feature = "f16"`, `target_os = "linux"`.
    KeyValue(String, String),
    /// Anything else (`version("1.80")`, `a::b`, a malformed predicate): unknown.
    Other,
}

impl Parse for Pred {
    fn parse(input: ParseStream<'_>) -> syn::Result<Pred> {
        if input.peek(syn::LitBool) {
            return Ok(Pred::Bool(input.parse::<syn::LitBool>()?.value));
        }
        let path: syn::Path = input.call(syn::Path::parse_mod_style)?;
        let name = path.get_ident().map(|i| i.to_string());
        if input.peek(syn::Token![=]) {
            input.parse::<syn::Token![=]>()?;
            let lit: syn::Lit = input.parse()?;
            return Ok(match (name, lit) {
                (Some(k), syn::Lit::Str(v)) => Pred::KeyValue(k, v.value()),
                _ => Pred::Other,
            });
        }
        if input.peek(syn::token::Paren) {
            let content;
            syn::parenthesized!(content in input);
            let args: Vec<Pred> = Punctuated::<Pred, syn::Token![,]>::parse_terminated(&content)
                .map(|p| p.into_iter().collect())
                .unwrap_or_else(|_| vec![Pred::Other]);
            return Ok(match name.as_deref() {
                Some("all") => Pred::All(args),
                Some("any") => Pred::Any(args),
                Some("not") if args.len() == 1 => Pred::Not(Box::new(args[0].clone())),
                _ => Pred::Other,
            });
        }
        Ok(name.map_or(Pred::Other, Pred::Name))
    }
}

/// Parses the tokens inside `#[cfg(...)]`; an unparsable predicate is [`Pred::Other`].
pub fn parse(tokens: TokenStream) -> Pred {
    syn::parse2(tokens).unwrap_or(Pred::Other)
}

/// Keys whose every value cargo passes as `CARGO_CFG_<KEY>` (absent: no value is set).
const TARGET_KEYS: &[&str] = &[
    "target_arch",
    "target_os",
    "target_family",
    "target_env",
    "target_vendor",
    "target_abi",
    "target_endian",
    "target_pointer_width",
    "target_has_atomic",
];
/// Bare names cargo sets as `CARGO_CFG_<NAME>` exactly when rustc sets them.
const TARGET_NAMES: &[&str] = &["unix", "windows"];

/// What a predicate is known to be: `Some(true)`, `Some(false)`, or `None` when the build
/// script cannot know. `env` reads environment variables (cargo's, in a build script).
/// `all` is false if any part is false, `any` true if any part is true; otherwise an unknown
/// part makes the whole unknown.
pub fn eval(p: &Pred, env: &dyn Fn(&str) -> Option<String>) -> Option<bool> {
    let var = |k: &str| k.to_ascii_uppercase().replace('-', "_");
    match p {
        Pred::Bool(b) => Some(*b),
        Pred::All(ps) => {
            let vs: Vec<Option<bool>> = ps.iter().map(|p| eval(p, env)).collect();
            if vs.contains(&Some(false)) {
                Some(false)
            } else if vs.iter().all(|v| *v == Some(true)) {
                Some(true)
            } else {
                None
            }
        }
        Pred::Any(ps) => {
            let vs: Vec<Option<bool>> = ps.iter().map(|p| eval(p, env)).collect();
            if vs.contains(&Some(true)) {
                Some(true)
            } else if vs.iter().all(|v| *v == Some(false)) {
                Some(false)
            } else {
                None
            }
        }
        Pred::Not(p) => eval(p, env).map(|b| !b),
        Pred::KeyValue(k, v) if k == "feature" => {
            Some(env(&format!("CARGO_FEATURE_{}", var(v))).is_some())
        }
        Pred::KeyValue(k, v) if TARGET_KEYS.contains(&k.as_str()) => Some(
            env(&format!("CARGO_CFG_{}", var(k)))
                .is_some_and(|vals| vals.split(',').any(|x| x == v)),
        ),
        Pred::Name(n) if TARGET_NAMES.contains(&n.as_str()) => {
            Some(env(&format!("CARGO_CFG_{}", var(n))).is_some())
        }
        Pred::KeyValue(..) | Pred::Name(_) | Pred::Other => None,
    }
}

/// Whether an item with these attributes is compiled out: some `#[cfg(..)]` among them is known
/// to be false. Unknown predicates keep the item.
pub fn disabled(attrs: &[syn::Attribute], env: &dyn Fn(&str) -> Option<String>) -> bool {
    attrs.iter().any(|a| match &a.meta {
        syn::Meta::List(l) if l.path.is_ident("cfg") => {
            eval(&parse(l.tokens.clone()), env) == Some(false)
        }
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    /// The environment of a build script for x86_64 Linux with features `f16` and `fast-math`.
    fn linux(k: &str) -> Option<String> {
        let v = match k {
            "CARGO_FEATURE_F16" | "CARGO_FEATURE_FAST_MATH" => "1",
            "CARGO_CFG_TARGET_OS" => "linux",
            "CARGO_CFG_TARGET_ARCH" => "x86_64",
            "CARGO_CFG_TARGET_FAMILY" => "unix",
            "CARGO_CFG_UNIX" => "",
            "CARGO_CFG_TARGET_ENV" => "gnu",
            "CARGO_CFG_TARGET_POINTER_WIDTH" => "64",
            "CARGO_CFG_TARGET_FEATURE" => "fxsr,sse,sse2",
            _ => return None,
        };
        Some(v.to_string())
    }

    fn ev(tokens: TokenStream) -> Option<bool> {
        eval(&parse(tokens), &linux)
    }

    #[test]
    fn parses_predicates() {
        assert_eq!(
            parse(quote!(all(feature = "a", not(unix), any(test, false)))),
            Pred::All(vec![
                Pred::KeyValue("feature".into(), "a".into()),
                Pred::Not(Box::new(Pred::Name("unix".into()))),
                Pred::Any(vec![Pred::Name("test".into()), Pred::Bool(false)]),
            ])
        );
        assert_eq!(parse(quote!(all())), Pred::All(vec![]));
        assert_eq!(parse(quote!(version("1.80"))), Pred::Other);
        assert_eq!(parse(quote!(not(a, b))), Pred::Other);
        assert_eq!(parse(quote!(a::b)), Pred::Other);
        assert_eq!(parse(quote!(feature = 3)), Pred::Other);
        assert_eq!(parse(quote!(= "x")), Pred::Other);
    }

    #[test]
    fn features_and_target_keys_are_known() {
        assert_eq!(ev(quote!(feature = "f16")), Some(true));
        assert_eq!(ev(quote!(feature = "bf16")), Some(false));
        // Dashes become underscores in CARGO_FEATURE_ names.
        assert_eq!(ev(quote!(feature = "fast-math")), Some(true));
        assert_eq!(ev(quote!(target_os = "linux")), Some(true));
        assert_eq!(ev(quote!(target_os = "windows")), Some(false));
        assert_eq!(ev(quote!(target_arch = "x86_64")), Some(true));
        assert_eq!(ev(quote!(target_pointer_width = "64")), Some(true));
        // Absent keys have no value.
        assert_eq!(ev(quote!(target_vendor = "apple")), Some(false));
        assert_eq!(ev(quote!(unix)), Some(true));
        assert_eq!(ev(quote!(windows)), Some(false));
        assert_eq!(ev(quote!(true)), Some(true));
        assert_eq!(ev(quote!(false)), Some(false));
    }

    #[test]
    fn unknowable_predicates_are_unknown() {
        for p in [
            quote!(test),
            quote!(doc),
            quote!(debug_assertions),
            quote!(my_cfg),
            quote!(my_key = "v"),
            quote!(version("1.80")),
            quote!(feature),
            quote!(panic = "abort"),
            quote!(target_feature = "sse2"),
            quote!(target_feature = "avx2"),
        ] {
            assert_eq!(ev(p.clone()), None, "{p}");
        }
    }

    #[test]
    fn all_any_not_with_unknowns() {
        assert_eq!(ev(quote!(all(unix, feature = "f16"))), Some(true));
        assert_eq!(ev(quote!(all(unix, feature = "bf16"))), Some(false));
        assert_eq!(ev(quote!(all())), Some(true));
        assert_eq!(ev(quote!(any())), Some(false));
        assert_eq!(ev(quote!(any(windows, feature = "f16"))), Some(true));
        assert_eq!(ev(quote!(not(feature = "f16"))), Some(false));
        assert_eq!(ev(quote!(not(not(unix)))), Some(true));
        // A known false decides `all`, a known true decides `any`, whatever the unknowns.
        assert_eq!(ev(quote!(all(test, feature = "bf16"))), Some(false));
        assert_eq!(ev(quote!(any(test, feature = "f16"))), Some(true));
        // Otherwise the unknown part leaves the whole unknown.
        assert_eq!(ev(quote!(all(test, feature = "f16"))), None);
        assert_eq!(ev(quote!(any(test, feature = "bf16"))), None);
        assert_eq!(ev(quote!(not(test))), None);
    }

    #[test]
    fn only_known_false_cfgs_disable() {
        let f: syn::ItemFn = syn::parse_quote! {
            #[inline]
            #[cfg(unix)]
            #[cfg(feature = "bf16")]
            fn k() {}
        };
        assert!(disabled(&f.attrs, &linux));
        let f: syn::ItemFn = syn::parse_quote! {
            #[cfg(all(unix, test))]
            #[cfg_attr(feature = "bf16", cfg(false))]
            fn k() {}
        };
        assert!(!disabled(&f.attrs, &linux));
    }
}
