//! The qualifiers of comprehensive comprehensions: `order by KEY [desc]`, `group by KEY`,
//! `take N`, `skip N`. They are recognised by their leading words: `order by` and `group by`
//! are not expressions, and `take`/`skip` followed by a value cannot be one either.

use super::{Transform, TransformKind};
use crate::error::{error, error_spanned};
use proc_macro2::{Delimiter, TokenStream, TokenTree};
use syn::buffer::Cursor;
use syn::parse::ParseStream;
use syn::{Expr, Lit};

/// Whether the qualifier at `cursor` is a transform.
pub(crate) fn starts_transform(cursor: Cursor) -> bool {
    let Some((first, rest)) = cursor.ident() else { return false };
    let second = rest.token_tree().map(|(t, _)| t);
    match first.to_string().as_str() {
        "order" | "group" => matches!(&second, Some(TokenTree::Ident(by)) if by == "by"),
        "take" | "skip" => match &second {
            Some(TokenTree::Ident(_) | TokenTree::Literal(_)) => true,
            Some(TokenTree::Group(g)) => {
                matches!(g.delimiter(), Delimiter::Parenthesis | Delimiter::Brace)
            }
            _ => false,
        },
        _ => false,
    }
}

/// Parses the transform at `input` (where [`starts_transform`] holds); `qualifier` is its
/// tokens as written.
pub(crate) fn parse(input: ParseStream, qualifier: &TokenStream) -> syn::Result<Transform> {
    let word: syn::Ident = input.parse()?;
    let name = word.to_string();
    let span = word.span();
    let kind = match name.as_str() {
        "order" | "group" => {
            let by: syn::Ident = input.parse()?;
            let keyword = span.join(by.span()).unwrap_or(span);
            let mut key_tokens: Vec<TokenTree> = Vec::new();
            while !input.is_empty() && !input.peek(syn::Token![,]) {
                key_tokens.push(input.parse()?);
            }
            let descending = match key_tokens.last() {
                Some(TokenTree::Ident(d)) if name == "order" && (d == "desc" || d == "asc") => {
                    let descending = d == "desc";
                    key_tokens.pop();
                    descending
                }
                _ => false,
            };
            if key_tokens.is_empty() {
                return Err(error(
                    keyword,
                    format!("expected a key after `{name} by`"),
                    if name == "order" {
                        "write `order by KEY` or `order by KEY desc`, e.g. `order by (year, name)`"
                    } else {
                        "write `group by KEY` with a variable or a tuple of variables, e.g. \
                         `group by dept` or `group by (year, city)`"
                    },
                ));
            }
            let key_tokens: TokenStream = key_tokens.into_iter().collect();
            let key: Expr = syn::parse2(key_tokens.clone()).map_err(|e| {
                super::qualifier::with_help(
                    e,
                    &key_tokens,
                    "the key is an expression of the variables bound so far",
                )
            })?;
            if name == "order" {
                TransformKind::OrderBy { key, descending, keyword }
            } else {
                TransformKind::GroupBy { key, keyword }
            }
        }
        _ => {
            let count: Expr = input.parse()?;
            if let Expr::Lit(lit) = &count {
                if !matches!(lit.lit, Lit::Int(_)) {
                    return Err(error_spanned(
                        &count,
                        format!("`{name}` takes a number of elements, an integer"),
                        format!("write `{name} 5`, or `{name} n` with `n: usize`"),
                    ));
                }
            }
            if name == "take" {
                TransformKind::Take { count, keyword: span }
            } else {
                TransformKind::Skip { count, keyword: span }
            }
        }
    };
    Ok(Transform { kind, tokens: qualifier.clone() })
}
