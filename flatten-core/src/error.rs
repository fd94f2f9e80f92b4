//! Errors with a span and a help line, collected so the user sees all of them at once.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use std::fmt::Display;

/// Builds an error at `span` whose message ends with a `help:` line.
pub fn error(span: Span, message: impl Display, help: impl Display) -> syn::Error {
    syn::Error::new(span, format!("{message}\n= help: {help}"))
}

/// Builds an error covering `tokens` whose message ends with a `help:` line.
pub fn error_spanned(
    tokens: impl ToTokens,
    message: impl Display,
    help: impl Display,
) -> syn::Error {
    syn::Error::new_spanned(tokens, format!("{message}\n= help: {help}"))
}

/// The errors found so far (serde's `Ctxt` idea): every stage adds what it finds and keeps
/// going where it can, and the macro reports them all together.
#[derive(Default)]
pub struct Errors {
    errors: Option<syn::Error>,
}

impl Errors {
    /// Adds an error to those found so far.
    pub fn push(&mut self, error: syn::Error) {
        match &mut self.errors {
            Some(all) => all.combine(error),
            None => self.errors = Some(error),
        }
    }

    /// Whether nothing was found so far.
    pub fn is_empty(&self) -> bool {
        self.errors.is_none()
    }

    /// `Ok(value)` if nothing went wrong, else every error combined.
    pub fn finish<T>(self, value: T) -> Result<T, syn::Error> {
        match self.errors {
            Some(errors) => Err(errors),
            None => Ok(value),
        }
    }
}

/// Renders an error as `compile_error!` invocations at the user's spans, wrapped in one block.
///
/// The macros are used as expressions, and an expression-position macro must expand to a
/// single expression: side by side, `compile_error!{..} compile_error!{..}` would show only the
/// first error, followed by rustc's own parse errors about the rest. In a block every error is
/// reported, and the block (ending in an error) takes any type, so no type error follows.
pub fn to_compile_errors(error: syn::Error) -> TokenStream {
    let errors = error.into_iter().map(|e| e.to_compile_error());
    quote::quote! { { #(#errors)* } }
}

#[cfg(test)]
mod tests {
    use super::{error, to_compile_errors, Errors};
    use proc_macro2::Span;

    #[test]
    fn every_error_is_rendered_inside_one_block() {
        let mut errors = Errors::default();
        errors.push(error(Span::call_site(), "first", "fix one"));
        errors.push(error(Span::call_site(), "second", "fix two"));
        let all = errors.finish(()).unwrap_err();
        let code = crate::text(&to_compile_errors(all));
        assert!(code.starts_with("{ ") && code.ends_with(" }"), "{code}");
        assert_eq!(code.matches("compile_error!").count(), 2, "{code}");
        assert!(code.contains("first\\n= help: fix one"), "{code}");
        assert!(code.contains("second\\n= help: fix two"), "{code}");
    }
}
