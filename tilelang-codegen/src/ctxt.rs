//! Error collection: every pass pushes spanned errors here instead of stopping at the first,
//! so a user sees all the problems of a kernel at once (the serde_derive `Ctxt` idea).

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::ToTokens;
use std::fmt::Display;

/// A source range: the first and last token of a construct. On stable Rust a `Span` cannot be
/// joined, so diagnostics carry both ends and rustc underlines everything between them.
#[derive(Debug, Clone, Copy)]
pub struct Range {
    pub start: Span,
    pub end: Span,
}

impl From<Span> for Range {
    fn from(s: Span) -> Range {
        Range { start: s, end: s }
    }
}

impl Range {
    pub fn call_site() -> Range {
        Span::call_site().into()
    }
    /// From the start of `self` to the end of `other`.
    pub fn to(self, other: Range) -> Range {
        Range {
            start: self.start,
            end: other.end,
        }
    }
}

/// The range covered by a syntax node's tokens.
/// `n` and the noun, singular for one: `count(1, "dimension")` is "1 dimension".
pub fn count(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

pub fn range(t: &impl ToTokens) -> Range {
    let mut it = t.to_token_stream().into_iter();
    let first = match it.next() {
        Some(t) => t.span(),
        None => return Range::call_site(),
    };
    let last = it.last().map_or(first, |t: TokenTree| t.span());
    Range {
        start: first,
        end: last,
    }
}

/// One diagnostic: a message with a span on the user's tokens and a hint that names the fix.
#[derive(Debug, Clone)]
pub struct Diagnostic {
    pub span: Range,
    pub message: String,
    pub hint: Option<String>,
    /// A config over one target's limits (shared memory, registers, an occupancy request):
    /// the kernel may still have a config that fits there, and then this one is only left out
    /// for that target (`launcher::lower`).
    pub over_limits: bool,
}

impl Diagnostic {
    /// The text rustc shows: the message, then the hint on its own line.
    pub fn text(&self) -> String {
        match &self.hint {
            Some(h) => format!("{}\n  = help: {}", self.message, h),
            None => self.message.clone(),
        }
    }

    pub fn to_syn(&self) -> syn::Error {
        // `new_spanned` takes its range from the first and last token it is given.
        let mut ends = TokenStream::new();
        ends.extend([
            TokenTree::Ident(proc_macro2::Ident::new("a", self.span.start)),
            TokenTree::Ident(proc_macro2::Ident::new("b", self.span.end)),
        ]);
        syn::Error::new_spanned(ends, self.text())
    }
}

/// Collects diagnostics; `into_result` turns them into one `syn::Error` carrying all of them.
#[derive(Default)]
pub struct Ctxt {
    errors: Vec<Diagnostic>,
}

impl Ctxt {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn error(&mut self, span: impl Into<Range>, message: impl Display) {
        self.errors.push(Diagnostic {
            span: span.into(),
            message: message.to_string(),
            hint: None,
            over_limits: false,
        });
    }

    pub fn error_hint(
        &mut self,
        span: impl Into<Range>,
        message: impl Display,
        hint: impl Display,
    ) {
        self.errors.push(Diagnostic {
            span: span.into(),
            message: message.to_string(),
            hint: Some(hint.to_string()),
            over_limits: false,
        });
    }

    pub fn syn_error(&mut self, e: syn::Error) {
        for e in e {
            self.errors.push(Diagnostic {
                span: e.span().into(),
                message: e.to_string(),
                hint: None,
                over_limits: false,
            });
        }
    }

    pub fn has_errors(&self) -> bool {
        !self.errors.is_empty()
    }

    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.errors
    }

    pub fn into_diagnostics(self) -> Vec<Diagnostic> {
        self.errors
    }
}

/// Renders diagnostics as `compile_error!` invocations, one per diagnostic, each on its span.
pub fn to_compile_errors(diags: &[Diagnostic]) -> TokenStream {
    diags
        .iter()
        .map(|d| d.to_syn().to_compile_error())
        .collect()
}
