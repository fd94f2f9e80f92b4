//! Parsing the qualifiers of one branch: generators, filters and `let`s, separated by `,`.

use super::pattern::{bound_names, check_pattern, Refutability};
use super::{Generator, LetBinding, Qualifier};
use crate::error::{error, error_spanned, Errors};
use crate::text::text;
use proc_macro2::{Spacing, Span, TokenStream, TokenTree};
use quote::quote;
use syn::buffer::Cursor;
use syn::parse::{ParseStream, Parser};
use syn::{Expr, Pat, Token};

/// Parses the qualifiers of one branch. A qualifier that cannot be parsed is reported and
/// skipped up to the next top-level `,`, so later problems are reported too.
/// The qualifiers of a branch, each with its tokens as written.
pub(crate) fn parse_branch(
    tokens: TokenStream,
    errors: &mut Errors,
) -> Vec<(Qualifier, TokenStream)> {
    let parser = |input: ParseStream| {
        let mut qualifiers = Vec::new();
        while !input.is_empty() {
            let qualifier = qualifier_tokens(input.cursor());
            match parse_qualifier(input, &qualifier, errors) {
                Ok(Qualifier::Generator(g)) => {
                    let index = qualifiers.len();
                    qualifiers.extend(desugar_refutable(g, qualifier, index));
                }
                Ok(q) => qualifiers.push((q, qualifier)),
                Err(e) => {
                    errors.push(with_help(e, &qualifier, QUALIFIERS));
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
            let next = qualifier_tokens(input.cursor());
            if starts_qualifiers(&next) {
                // `x <- xs y <- ys`: a missing `,`. Read on from the next qualifier.
                errors.push(error(
                    found.span(),
                    format!("expected `,` before the qualifier `{}`", text(&next)),
                    "qualifiers are separated by `,`: `x <- xs, y <- ys`",
                ));
                continue;
            }
            errors.push(error(
                found.span(),
                format!("expected `,` or the end of the comprehension, found `{found}`"),
                QUALIFIERS,
            ));
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

/// The help for a qualifier that cannot be parsed.
const QUALIFIERS: &str = "qualifiers are generators `x <- xs`, filters (a `bool` expression such \
    as `x > 0`) and `let y = x * 2`, separated by `,`";

fn parse_qualifier(
    input: ParseStream,
    qualifier: &TokenStream,
    errors: &mut Errors,
) -> syn::Result<Qualifier> {
    if input.peek(Token![let]) {
        let let_token: Token![let] = input.parse()?;
        let pat = Pat::parse_single(input)?;
        if input.peek(Token![:]) {
            let colon: Token![:] = input.parse()?;
            let ty: syn::Type = input.parse()?;
            errors.push(error_spanned(
                quote!(#colon #ty),
                "a `let` qualifier cannot have a type annotation",
                format_args!(
                    "give the value its type instead, e.g. `let {pat} = {ty}::from(...)` or \
                     `let {pat} = ... as {ty}`",
                    pat = text(&pat),
                    ty = text(&ty)
                ),
            ));
        }
        input.parse::<Token![=]>().map_err(|e| {
            error(
                span_of(input, &e, qualifier),
                "expected `=` in a `let` qualifier",
                "a `let` qualifier binds a value for each element: `let y = x * 2`",
            )
        })?;
        let expr: Expr = input.parse()?;
        let mut pat = pat;
        if check_pattern(&pat, errors) == Refutability::Refutable {
            errors.push(error_spanned(
                &pat,
                "the pattern of a `let` qualifier must always match",
                "`let` binds identifiers, `_` and tuples; to keep only the elements that match \
                 a pattern, write it in a generator: `Some(v) <- &opts`",
            ));
            // Read on with the variables it meant to bind, so that their uses are not
            // reported as well.
            let names = bound_names(&pat);
            pat = Pat::parse_single
                .parse2(quote! { (#(#names,)*) })
                .expect("a tuple of identifiers parses as a pattern");
        }
        return Ok(Qualifier::Let(LetBinding { let_span: let_token.span, pat, expr }));
    }
    if super::transform::starts_transform(input.cursor()) {
        return super::transform::parse(input, qualifier).map(Qualifier::Transform);
    }
    let for_token: Option<Token![for]> = input.parse()?;
    if let Some(pattern_len) = in_position(input.cursor()) {
        // `x in xs` or `for x in xs`: a generator written as a `for` loop. Reported, then read
        // as the generator it means, so that the rest of the comprehension is checked too.
        let pattern_tokens = take_tokens(input, pattern_len)?;
        let in_token: Token![in] = input.parse()?;
        let expr_tokens = qualifier_tokens(input.cursor());
        if expr_tokens.is_empty() {
            return Err(error(
                in_token.span,
                "expected `<-` and a collection, found `in`",
                "a generator is written `PAT <- EXPR`, e.g. `x <- 0..n` or `v <- &values`",
            ));
        }
        let suggestion = format!("{} <- {}", text(&pattern_tokens), text(&expr_tokens));
        match for_token {
            Some(for_token) => errors.push(error_spanned(
                quote!(#for_token #in_token),
                "a generator is written `PAT <- EXPR`, not as a `for` loop",
                format_args!("write `{suggestion}`"),
            )),
            None => errors.push(error(
                in_token.span,
                "expected `<-`, found `in`: a generator is written `PAT <- EXPR`",
                format_args!("write `{suggestion}`"),
            )),
        }
        let pat = parse_pattern(pattern_tokens, errors)?;
        let expr: Expr = input.parse()?;
        return Ok(Qualifier::Generator(Generator { pat, arrow: in_token.span, expr }));
    }
    if let Some(for_token) = for_token {
        let arrow = arrow_position(input.cursor()).is_some();
        let e = error(
            for_token.span,
            "a generator is written `PAT <- EXPR`, without `for`",
            if arrow {
                format!("write `{}`", text(qualifier).trim_start_matches("for "))
            } else {
                "generators are written `PAT <- EXPR`, e.g. `x <- xs` or `(i, v) <- pairs`".into()
            },
        );
        if !arrow {
            return Err(e);
        }
        errors.push(e);
    }
    if let Some(pattern_len) = arrow_position(input.cursor()) {
        let pattern_tokens = take_tokens(input, pattern_len)?;
        let arrow = input.parse::<Token![<]>()?.span;
        input.parse::<Token![-]>()?;
        if input.is_empty() || input.peek(Token![,]) {
            return Err(missing_collection(arrow));
        }
        let pat = parse_pattern(pattern_tokens, errors)?;
        let expr: Expr = input.parse()?;
        return Ok(Qualifier::Generator(Generator { pat, arrow, expr }));
    }
    if qualifier.is_empty() {
        return Err(error(
            input.span(),
            "expected a qualifier before this `,`",
            "remove the extra `,`; qualifiers are generators `x <- xs`, filters `x > 0` and \
             `let y = x * 2`, separated by one `,`",
        ));
    }
    let expr: Expr = input.parse().map_err(|e| {
        let message = e.to_string();
        let message = match message.strip_prefix("unexpected end of input, ") {
            Some(reason) => format!("`{}` is incomplete: {reason}", text(qualifier)),
            None => format!("the qualifier `{}` cannot be parsed: {message}", text(qualifier)),
        };
        error(span_of(input, &e, qualifier), message, QUALIFIERS)
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

fn missing_collection(arrow: Span) -> syn::Error {
    error(
        arrow,
        "expected the collection to draw from after `<-`",
        "a generator is written `PAT <- EXPR`, e.g. `x <- 0..n` or `v <- &values`",
    )
}

/// Parses and checks the pattern of a generator. A type annotation (`x: u32`) is reported and
/// dropped.
fn parse_pattern(tokens: TokenStream, errors: &mut Errors) -> syn::Result<Pat> {
    let parser = |input: ParseStream| {
        let pat = Pat::parse_single(input)?;
        let annotation = if input.peek(Token![:]) && !input.peek(Token![::]) {
            let colon: Token![:] = input.parse()?;
            let ty: syn::Type = input.parse()?;
            Some((colon, ty))
        } else {
            None
        };
        Ok((pat, annotation))
    };
    let (pat, annotation) = parser.parse2(tokens.clone()).map_err(|_| {
        error_spanned(
            &tokens,
            "expected a pattern before `<-`",
            "generator patterns are identifiers, `_`, (nested) tuples and patterns that filter: \
             `x`, `(i, v)`, `Some(v)`",
        )
    })?;
    if let Some((colon, ty)) = annotation {
        errors.push(error_spanned(
            quote!(#colon #ty),
            "a generator pattern cannot have a type annotation",
            "the type of the elements comes from the collection; give it a type there instead, \
             e.g. `x <- 0..10u32` or `v <- &values` with `values: Vec<f32>`",
        ));
    }
    check_pattern(&pat, errors);
    Ok(pat)
}

/// A generator whose pattern may not match, `PAT <- EXPR`, as the qualifiers it means:
/// `__parcomp_elem_k <- EXPR, match __parcomp_elem_k { PAT => true, _ => false }, let (a, b) =
/// match ... { PAT => (a, b), _ => unreachable }` — the elements that do not match are filtered out, the others
/// bind the pattern's variables. Irrefutable generators are returned as they are.
///
/// The generator keeps `tokens`, the qualifier as written; the filter and the `let` get none
/// (see [`Branch::tokens`](super::Branch::tokens)): their `__parcomp_elem_k` is a name of this
/// expansion, which a part compiled on its own (a zipped branch, the part before a transform)
/// could not see, and which the written generator makes again there.
fn desugar_refutable(
    generator: Generator,
    tokens: TokenStream,
    index: usize,
) -> Vec<(Qualifier, TokenStream)> {
    let mut quiet = Errors::default();
    if check_pattern(&generator.pat, &mut quiet) == Refutability::Irrefutable {
        return vec![(Qualifier::Generator(generator), tokens)];
    }
    let Generator { pat, arrow, expr } = generator;
    // `(0 | 2) <- xs` needs its parentheses in a comprehension (a top-level `|` separates
    // branches) but not in a `match` arm, where rustc would warn about them.
    let pat = match pat {
        Pat::Paren(p) => *p.pat,
        other => other,
    };
    let elem = syn::Ident::new(&format!("__parcomp_elem_{index}"), Span::mixed_site());
    let names = bound_names(&pat);
    let elem_pat: Pat = syn::parse_quote!(#elem);
    let test = without_bindings(pat.clone());
    let filter: Expr =
        syn::parse2(quote! { match #elem { #[allow(unused_parens)] #test => true, _ => false } })
            .expect("a match parses");
    let mut out = vec![
        (Qualifier::Generator(Generator { pat: elem_pat, arrow, expr }), tokens),
        (Qualifier::Filter(filter), TokenStream::new()),
    ];
    if !names.is_empty() {
        // The pattern the `let` binds is also the value the `match` arm gives it.
        let bind = if names.len() == 1 {
            let name = &names[0];
            quote! { #name }
        } else {
            quote! { (#(#names),*) }
        };
        // Parentheses the comprehension needs (`y @ (1 | 3) <- ys`) look unneeded to rustc's
        // lint in a match arm.
        let matched = quote! {
            match #elem { #[allow(unused_parens)] #pat => #bind, _ => ::core::unreachable!(#UNMATCHED) }
        };
        let value_expr: Expr = syn::parse2(matched).expect("a match parses");
        let let_pat: Pat = Pat::parse_single
            .parse2(bind)
            .expect("identifiers and a tuple of them parse as a pattern");
        out.push((
            Qualifier::Let(LetBinding { let_span: arrow, pat: let_pat, expr: value_expr }),
            TokenStream::new(),
        ));
    }
    out
}

/// The message of the arm a refutable generator's `let` never takes (the filter before it keeps
/// only the elements its pattern matches): the device lowers that arm to no code at all.
pub(crate) const UNMATCHED: &str = "parcomp: the filter before keeps only matching elements";

/// The tokens of the qualifier at `cursor`: up to the next top-level `,`.
fn qualifier_tokens(mut cursor: Cursor) -> TokenStream {
    let mut tokens = TokenStream::new();
    while let Some((token, next)) = cursor.token_tree() {
        if matches!(&token, TokenTree::Punct(p) if p.as_char() == ',') {
            break;
        }
        tokens.extend([token]);
        cursor = next;
    }
    tokens
}

/// Whether syn reported `e` at the end of the input. syn puts such errors at the call site (the
/// whole macro call); they belong at the end of the qualifier.
fn at_end_of_input(e: &syn::Error) -> bool {
    e.to_string().starts_with("unexpected end of input")
}

/// Where to report `e`, found while parsing `qualifier` at `input`: syn reports errors at the
/// end of its input at the call site, which is the whole macro call; they belong at the end of
/// the qualifier.
fn span_of(input: ParseStream, e: &syn::Error, qualifier: &TokenStream) -> Span {
    let at_end = input.is_empty() || input.peek(Token![,]) || at_end_of_input(e);
    match qualifier.clone().into_iter().last() {
        Some(last) if at_end => last.span(),
        _ => e.span(),
    }
}

/// An error of syn's, found while parsing `tokens`, at the right span and with a `help:` line
/// (errors of our own already have one).
pub(crate) fn with_help(e: syn::Error, tokens: &TokenStream, help: &str) -> syn::Error {
    let mut all: Option<syn::Error> = None;
    for e in e {
        let message = e.to_string();
        let e = if message.contains("\n= help: ") {
            e
        } else if at_end_of_input(&e) && !tokens.is_empty() {
            let reason = message.trim_start_matches("unexpected end of input, ");
            error_spanned(tokens, format!("`{}` is incomplete: {reason}", text(tokens)), help)
        } else {
            error(e.span(), message, help)
        };
        match &mut all {
            Some(all) => all.combine(e),
            None => all = Some(e),
        }
    }
    all.expect("a syn::Error holds at least one message")
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

/// If the qualifier at `cursor` is a generator mistakenly written with `in` (`x in xs`), the
/// number of token trees before the `in`.
fn in_position(mut cursor: Cursor) -> Option<usize> {
    let mut count = 0;
    while let Some((token, next)) = cursor.token_tree() {
        match &token {
            TokenTree::Punct(p) if p.as_char() == ',' => return None,
            TokenTree::Ident(i) if i == "in" => return (count > 0).then_some(count),
            _ => {}
        }
        count += 1;
        cursor = next;
    }
    None
}

/// Whether the first qualifier of `tokens` (a part of the comprehension after a top-level `|`)
/// can start a branch: a generator (also one mistakenly written `x in xs` or `for x in xs`) or
/// a `let`. If not, the `|` before it belongs to an expression.
pub(crate) fn starts_qualifiers(tokens: &TokenStream) -> bool {
    let first: Vec<TokenTree> = tokens
        .clone()
        .into_iter()
        .take_while(|t| !matches!(t, TokenTree::Punct(p) if p.as_char() == ','))
        .collect();
    let keyword = matches!(first.first(), Some(TokenTree::Ident(i)) if i == "let" || i == "for");
    keyword
        || first.iter().any(|t| matches!(t, TokenTree::Ident(i) if i == "in"))
        || contains_arrow(&first.into_iter().collect())
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

/// `pat` with its bindings replaced by `_` (`n @ 1..=9` by `1..=9`): the filter of a
/// refutable generator tests the pattern without binding anything.
fn without_bindings(mut pat: Pat) -> Pat {
    struct Unbind;
    impl syn::visit_mut::VisitMut for Unbind {
        fn visit_pat_mut(&mut self, pat: &mut Pat) {
            if let Pat::Ident(p) = pat {
                if p.ident != "None" || p.subpat.is_some() {
                    *pat = match p.subpat.take() {
                        Some((_, sub)) => *sub,
                        None => Pat::Wild(syn::PatWild {
                            attrs: Vec::new(),
                            underscore_token: Default::default(),
                        }),
                    };
                }
            }
            syn::visit_mut::visit_pat_mut(self, pat);
        }
        fn visit_field_pat_mut(&mut self, field: &mut syn::FieldPat) {
            // `Circle { r }` becomes `Circle { r: _ }`.
            field.colon_token.get_or_insert_with(Default::default);
            syn::visit_mut::visit_field_pat_mut(self, field);
        }
    }
    syn::visit_mut::VisitMut::visit_pat_mut(&mut Unbind, &mut pat);
    pat
}
