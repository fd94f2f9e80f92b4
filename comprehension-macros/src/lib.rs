//! The procedural macros of [parcomp](https://docs.rs/parcomp). Each entry point is one line:
//! the compiler is the `flatten-core` library, where it can be unit-tested. Use these macros
//! through the `parcomp` crate, which also provides the runtime they call.

use proc_macro::TokenStream;

/// A data-parallel array comprehension: `par![HEAD | QUALIFIERS]` → `Vec`. See the `parcomp`
/// crate for the language.
#[proc_macro]
pub fn par(input: TokenStream) -> TokenStream {
    flatten_core::par(input.into()).into()
}

/// The plan `par!` makes of a comprehension, as a `&'static str`; nothing is run.
#[proc_macro]
pub fn par_explain(input: TokenStream) -> TokenStream {
    flatten_core::par_explain(input.into()).into()
}
