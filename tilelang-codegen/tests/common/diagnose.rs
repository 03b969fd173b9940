//! The error catalogue's assertions (`diagnostics_declaration.rs`, `diagnostics_body.rs`): a
//! kernel in a string split with the string's spans, its diagnostics, and checks of their
//! messages, hints and spans.

use proc_macro2::TokenStream;
use quote::ToTokens;
use tilelang_codegen::Diagnostic;

/// Splits `#[tile_kernel(..)] fn ..` source into the attribute's tokens and the item's tokens,
/// keeping the spans of `src` (line 1 is the first line of `src`).
pub fn split(src: &str) -> (TokenStream, TokenStream) {
    let file =
        syn::parse_file(src).unwrap_or_else(|e| panic!("test source does not parse: {e}\n{src}"));
    let mut found = None;
    for item in file.items {
        if let syn::Item::Fn(mut f) = item {
            let pos = f
                .attrs
                .iter()
                .position(|a| a.path().is_ident("tile_kernel"))
                .expect("a #[tile_kernel] attribute");
            let attr = match &f.attrs[pos].meta {
                syn::Meta::List(l) => l.tokens.clone(),
                _ => TokenStream::new(),
            };
            f.attrs.remove(pos);
            assert!(found.is_none(), "one kernel per test source");
            found = Some((attr, f.to_token_stream()));
        }
    }
    found.expect("a kernel")
}

/// The diagnostics of a kernel that must be rejected.
pub fn diagnostics(src: &str) -> Vec<Diagnostic> {
    let (attr, item) = split(src);
    match tilelang_codegen::compile(attr, item) {
        Ok(_) => panic!("expected diagnostics, but the kernel compiled:\n{src}"),
        Err(d) => d,
    }
}

/// `Ok` when the kernel compiles, else its diagnostics rendered (or that the frontend panicked).
pub fn compiles(src: &str) -> Result<(), String> {
    let (attr, item) = split(src);
    match std::panic::catch_unwind(|| tilelang_codegen::compile(attr, item)) {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(d)) => Err(render(&d)),
        Err(_) => Err("the frontend panicked".into()),
    }
}

pub fn render(d: &[Diagnostic]) -> String {
    d.iter()
        .map(|d| {
            let s = d.span.start.start();
            format!(
                "  {}:{}: {}",
                s.line,
                s.column,
                d.text().replace('\n', "\n    ")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Asserts the diagnostics, in order: each `(message, hint)` pair is a pair of substrings.
#[track_caller]
pub fn expect(src: &str, want: &[(&str, &str)]) -> Vec<Diagnostic> {
    let got = diagnostics(src);
    let ok = got.len() == want.len()
        && got.iter().zip(want).all(|(d, (m, h))| {
            d.message.contains(m) && d.hint.as_deref().is_some_and(|hint| hint.contains(h))
        });
    assert!(
        ok,
        "expected {} diagnostic(s):\n{}\ngot {}:\n{}\nfor:\n{src}",
        want.len(),
        want.iter()
            .map(|(m, h)| format!("  {m}  [help: {h}]"))
            .collect::<Vec<_>>()
            .join("\n"),
        got.len(),
        render(&got)
    );
    got
}

/// Asserts that `d`'s span starts at the `nth` (0-based) occurrence of `needle` in `src`.
#[track_caller]
pub fn expect_span(src: &str, d: &Diagnostic, needle: &str, nth: usize) {
    let offset = src
        .match_indices(needle)
        .nth(nth)
        .unwrap_or_else(|| panic!("`{needle}` occurs fewer than {} times", nth + 1))
        .0;
    let before = &src[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap().chars().count();
    let got = d.span.start.start();
    assert_eq!(
        (got.line, got.column),
        (line, column),
        "the span of `{}` should start at `{needle}` (occurrence {nth}), line {line} column {column}\n{src}",
        d.message
    );
}

/// Asserts that `d`'s range covers exactly the `nth` occurrence of `needle` in `src` (needle on
/// one line): it starts at its first character and ends after its last.
#[track_caller]
pub fn expect_range(src: &str, d: &Diagnostic, needle: &str, nth: usize) {
    expect_span(src, d, needle, nth);
    let offset = src.match_indices(needle).nth(nth).unwrap().0 + needle.len();
    let before = &src[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap().chars().count();
    let got = d.span.end.end();
    assert_eq!(
        (got.line, got.column),
        (line, column),
        "the range of `{}` should end after `{needle}`, line {line} column {column}\n{src}",
        d.message
    );
}
