//! Parsing the qualifiers of one branch: generators, filters and `let`s, separated by `,`.

use super::pattern::check_pattern;
use super::{Generator, LetBinding, Qualifier};
use crate::error::{error, error_spanned, Errors};
use proc_macro2::{Spacing, TokenStream, TokenTree};
use syn::buffer::Cursor;
use syn::parse::{ParseStream, Parser};
use syn::{Expr, Pat, Token};

/// Parses the qualifiers of one branch. A qualifier that cannot be parsed is reported and
/// skipped up to the next top-level `,`, so later problems are reported too.
pub(crate) fn parse_branch(tokens: TokenStream, errors: &mut Errors) -> Vec<Qualifier> {
    let parser = |input: ParseStream| {
        let mut qualifiers = Vec::new();
        while !input.is_empty() {
            match parse_qualifier(input, errors) {
                Ok(q) => qualifiers.push(q),
                Err(e) => {
                    errors.push(e);
                    skip_to_comma(input)?;
                }
            }
            if input.is_empty() {
                break;
            }
            if input.peek(Token![,]) {
                input.parse::<Token![,]>()?;
                continue;
            }
            let found: TokenTree = input.fork().parse()?;
            if matches!(&found, TokenTree::Ident(i) if i == "in" || i == "for") {
                errors.push(error(
                    found.span(),
                    format!("expected `<-` or `,`, found `{found}`"),
                    "generators are written `PAT <- EXPR`, e.g. `x <- xs` or `(i, v) <- pairs`",
                ));
            } else {
                errors.push(error(
                    found.span(),
                    format!("expected `,` or the end of the comprehension, found `{found}`"),
                    "qualifiers are generators `x <- xs`, filters `x > 0` and `let y = x * 2`, \
                     separated by `,`",
                ));
            }
            skip_to_comma(input)?;
            if input.peek(Token![,]) {
                input.parse::<Token![,]>()?;
            }
        }
        Ok(qualifiers)
    };
    match parser.parse2(tokens) {
        Ok(qualifiers) => qualifiers,
        Err(e) => {
            errors.push(e);
            Vec::new()
        }
    }
}

fn parse_qualifier(input: ParseStream, errors: &mut Errors) -> syn::Result<Qualifier> {
    if input.peek(Token![let]) {
        let let_token: Token![let] = input.parse()?;
        let pat = Pat::parse_single(input)?;
        input.parse::<Token![=]>().map_err(|e| {
            error(
                e.span(),
                "expected `=` in a `let` qualifier",
                "a `let` qualifier binds a value for each element: `let y = x * 2`",
            )
        })?;
        let expr: Expr = input.parse()?;
        check_pattern(&pat, errors);
        return Ok(Qualifier::Let(LetBinding { let_span: let_token.span, pat, expr }));
    }
    if let Some(pattern_len) = arrow_position(input.cursor()) {
        let pattern_tokens = take_tokens(input, pattern_len)?;
        let arrow = input.parse::<Token![<]>()?.span;
        input.parse::<Token![-]>()?;
        if input.is_empty() || input.peek(Token![,]) {
            return Err(error(
                arrow,
                "expected the collection to draw from after `<-`",
                "a generator is written `PAT <- EXPR`, e.g. `x <- 0..n` or `v <- &values`",
            ));
        }
        let pat = Pat::parse_single.parse2(pattern_tokens.clone()).map_err(|_| {
            error_spanned(
                &pattern_tokens,
                "expected a pattern before `<-`",
                "generator patterns are identifiers, `_` and (nested) tuples: `x`, `(i, v)`, \
                 `((a, b), _)`",
            )
        })?;
        check_pattern(&pat, errors);
        let expr: Expr = input.parse()?;
        return Ok(Qualifier::Generator(Generator { pat, arrow, expr }));
    }
    let expr: Expr = input.parse().map_err(|e| {
        error(
            e.span(),
            format!("this qualifier is neither a generator, a filter nor a `let`: {e}"),
            "qualifiers are generators `x <- xs`, filters (a `bool` expression such as `x > 0`) \
             and `let y = x * 2`",
        )
    })?;
    if let Expr::Assign(assign) = &expr {
        return Err(error_spanned(
            assign,
            "this qualifier is an assignment, which is neither a generator, a filter nor a `let`",
            "to compare, write `==`; to bind a new variable for each element, write `let x = ...`",
        ));
    }
    Ok(Qualifier::Filter(expr))
}

/// If the qualifier at `cursor` is a generator, the number of token trees before its `<-`.
///
/// A generator is recognised by a `<` joined to a following `-` (no space between them) at the
/// top level of the qualifier, before the next top-level `,`: `x <- xs` is a generator,
/// `x < -xs` is a comparison.
fn arrow_position(mut cursor: Cursor) -> Option<usize> {
    let mut count = 0;
    while let Some((token, next)) = cursor.token_tree() {
        if let TokenTree::Punct(p) = &token {
            if p.as_char() == ',' {
                return None;
            }
            if p.as_char() == '<' && p.spacing() == Spacing::Joint {
                if let Some((minus, _)) = next.punct() {
                    if minus.as_char() == '-' {
                        return (count > 0).then_some(count);
                    }
                }
            }
        }
        count += 1;
        cursor = next;
    }
    None
}

/// Whether `tokens` contains a top-level `<-` (used to tailor the "missing `|`" error).
pub(crate) fn contains_arrow(tokens: &TokenStream) -> bool {
    let tokens: Vec<TokenTree> = tokens.clone().into_iter().collect();
    tokens.windows(2).any(|w| match (&w[0], &w[1]) {
        (TokenTree::Punct(a), TokenTree::Punct(b)) => {
            a.as_char() == '<' && a.spacing() == Spacing::Joint && b.as_char() == '-'
        }
        _ => false,
    })
}

fn take_tokens(input: ParseStream, n: usize) -> syn::Result<TokenStream> {
    input.step(|cursor| {
        let mut rest = *cursor;
        let mut taken = TokenStream::new();
        for _ in 0..n {
            let (token, next) = rest.token_tree().expect("counted by arrow_position");
            taken.extend([token]);
            rest = next;
        }
        Ok((taken, rest))
    })
}

fn skip_to_comma(input: ParseStream) -> syn::Result<()> {
    input.step(|cursor| {
        let mut rest = *cursor;
        while let Some((token, next)) = rest.token_tree() {
            if matches!(&token, TokenTree::Punct(p) if p.as_char() == ',') {
                break;
            }
            rest = next;
        }
        Ok(((), rest))
    })
}
