//! The arguments of `par_reduce!(op, identity; HEAD | QUALIFIERS)`.

use crate::analysis::generator::strip;
use crate::error::{error, error_spanned};
use crate::text::text;
use proc_macro2::{Span, TokenStream, TokenTree};
use syn::punctuated::Punctuated;
use syn::{Expr, Token};

const FORM: &str = "write `par_reduce!(op, identity; HEAD | x <- xs, ...)` with a function of two \
    arguments, e.g. `par_reduce!(|a, b| a.max(b), 0; x * x | x <- xs)` or \
    `par_reduce!(u64::max, 0; ...)`";

/// Splits `op, identity; rest` into the operator, the identity and the comprehension.
pub fn reduce_arguments(input: TokenStream) -> Result<(Expr, Expr, TokenStream), syn::Error> {
    let tokens: Vec<TokenTree> = input.into_iter().collect();
    let Some(semi) =
        tokens.iter().position(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ';'))
    else {
        let span = tokens.first().map_or_else(Span::call_site, TokenTree::span);
        return Err(error(span, "expected `op, identity;` before the comprehension", FORM));
    };
    let prefix: TokenStream = tokens[..semi].iter().cloned().collect();
    let rest: TokenStream = tokens[semi + 1..].iter().cloned().collect();
    let parser = Punctuated::<Expr, Token![,]>::parse_terminated;
    let arguments = syn::parse::Parser::parse2(parser, prefix.clone()).map_err(|e| {
        error(
            e.span(),
            format!("the operator and identity of `par_reduce!` cannot be read: {e}"),
            FORM,
        )
    })?;
    let arguments: Vec<Expr> = arguments.into_iter().collect();
    let [op, identity] = <[Expr; 2]>::try_from(arguments).map_err(|arguments| {
        error_spanned(
            &prefix,
            format!(
                "`par_reduce!` takes an operator and an identity before `;`, found {} argument{}",
                arguments.len(),
                if arguments.len() == 1 { "" } else { "s" }
            ),
            FORM,
        )
    })?;
    check_operator(&op)?;
    Ok((op, identity, rest))
}

/// The operator must be a function of two arguments: a closure `|a, b| ...` or a path, a field
/// or a call that yields one. An operator symbol (`+`) or a value is not.
fn check_operator(op: &Expr) -> Result<(), syn::Error> {
    match strip(op) {
        Expr::Closure(closure) if closure.inputs.len() == 2 => Ok(()),
        Expr::Closure(closure) => Err(error_spanned(
            closure,
            format!(
                "the operator of `par_reduce!` takes two arguments (the result so far and the next \
                 element), but this closure takes {}",
                closure.inputs.len()
            ),
            "write it as `|a, b| ...`, e.g. `|a, b| a + b`",
        )),
        Expr::Path(_)
        | Expr::Field(_)
        | Expr::MethodCall(_)
        | Expr::Call(_)
        | Expr::Reference(_)
        | Expr::Index(_)
        | Expr::Block(_) => Ok(()),
        other => Err(error_spanned(
            other,
            format!(
                "`{}` is not a function, so it cannot be the operator of `par_reduce!`",
                text(other)
            ),
            "pass a function of two arguments: a closure `|a, b| a + b` or a path such as \
             `u64::max` or `std::ops::Add::add`",
        )),
    }
}
