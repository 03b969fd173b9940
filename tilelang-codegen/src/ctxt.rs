//! Error collection: every pass pushes spanned errors here instead of stopping at the first,
//! so a user sees all the problems of a kernel at once (the serde_derive `Ctxt` idea).

use proc_macro2::{Span, TokenStream};
use std::fmt::Display;

/// One diagnostic: a message with a span on the user's tokens and a hint that names the fix.
#[derive(Debug, Clone)]
pub struct Diagnostic {
    pub span: Span,
    pub message: String,
    pub hint: Option<String>,
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
        syn::Error::new(self.span, self.text())
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

    pub fn error(&mut self, span: Span, message: impl Display) {
        self.errors.push(Diagnostic {
            span,
            message: message.to_string(),
            hint: None,
        });
    }

    pub fn error_hint(&mut self, span: Span, message: impl Display, hint: impl Display) {
        self.errors.push(Diagnostic {
            span,
            message: message.to_string(),
            hint: Some(hint.to_string()),
        });
    }

    pub fn syn_error(&mut self, e: syn::Error) {
        for e in e {
            self.errors.push(Diagnostic {
                span: e.span(),
                message: e.to_string(),
                hint: None,
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
