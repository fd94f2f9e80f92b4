//! Token-level views of a comprehension used before it is parsed whole: the arguments of the
//! by-key macros, the head and the qualifiers apart, how many branches there are, and the
//! variables `par_explain!` mentions.

use super::{qualifier, split};
use crate::error::error;
use crate::Macro;
use proc_macro2::{Span, TokenStream, TokenTree};
use quote::quote;
use std::collections::HashSet;
use syn::visit::Visit;
use syn::{Expr, Ident};

/// The number of top-level `|`-separated segments (the head, then one per branch).
pub(crate) fn split_top_level(input: TokenStream) -> usize {
    let (segments, _) =
        split::rejoin_stray_bars(split::split_bars(input), qualifier::starts_qualifiers);
    segments.len()
}

/// The head (with its `@gpu`/`@cpu` marker) and the qualifiers after the first top-level `|`.
pub(crate) fn split_head(input: TokenStream) -> (TokenStream, TokenStream) {
    let (segments, _) =
        split::rejoin_stray_bars(split::split_bars(input.clone()), qualifier::starts_qualifiers);
    let mut segments = segments.into_iter();
    let head = segments.next().map(|s| s.tokens).unwrap_or_default();
    let rest: Vec<split::Segment> = segments.collect();
    if head.is_empty() || rest.is_empty() {
        // Let the comprehension's own parser report it.
        return (head, input);
    }
    let mut qualifiers = TokenStream::new();
    for (k, segment) in rest.into_iter().enumerate() {
        if k > 0 {
            qualifiers.extend(quote! { | });
        }
        qualifiers.extend(segment.tokens);
    }
    (head, qualifiers)
}

const BY_KEY: &str = "write `par_max_by_key!(KEY; HEAD | x <- xs, ...)` with a function of a \
    reference to the element, e.g. `par_max_by_key!(|l| l.len(); l | l <- &lines)`";

/// Splits `KEY; rest` of `par_min_by_key!`/`par_max_by_key!`.
pub fn by_key_arguments(
    name: Macro,
    input: TokenStream,
) -> Result<(Expr, TokenStream), syn::Error> {
    let tokens: Vec<TokenTree> = input.into_iter().collect();
    let Some(semi) =
        tokens.iter().position(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ';'))
    else {
        let span = tokens.first().map_or_else(Span::call_site, TokenTree::span);
        return Err(error(
            span,
            format!("expected `KEY;` before the comprehension of `{name}!`"),
            BY_KEY,
        ));
    };
    let key: TokenStream = tokens[..semi].iter().cloned().collect();
    let rest: TokenStream = tokens[semi + 1..].iter().cloned().collect();
    let key: Expr = syn::parse2(key.clone()).map_err(|e| {
        let span = key.clone().into_iter().next().map_or(e.span(), |t| t.span());
        error(span, format!("the key of `{name}!` cannot be read: {e}"), BY_KEY)
    })?;
    Ok((key, rest))
}

/// The variables a comprehension mentions without binding them (lower-case names used as
/// values), for `par_explain!` to borrow.
pub fn mentioned_variables(input: &TokenStream) -> Vec<Ident> {
    let mut errors = crate::error::Errors::default();
    let Some(comprehension) = super::parse(input.clone(), &mut errors) else {
        return Vec::new();
    };
    let mut bound = HashSet::new();
    let mut exprs: Vec<&Expr> = vec![&comprehension.head];
    for branch in &comprehension.branches {
        for q in &branch.qualifiers {
            if let Some(pat) = q.pattern() {
                bound.extend(super::bound_names(pat).into_iter().map(|n| n.to_string()));
            }
            match q {
                super::Qualifier::Generator(g) => exprs.push(&g.expr),
                super::Qualifier::Filter(e) => exprs.push(e),
                super::Qualifier::Let(l) => exprs.push(&l.expr),
                super::Qualifier::Transform(_) => {}
            }
        }
    }
    let mut visitor = Values { found: Vec::new() };
    for e in exprs {
        visitor.visit_expr(e);
    }
    let mut seen = HashSet::new();
    visitor
        .found
        .into_iter()
        .filter(|i| {
            let name = i.to_string();
            !bound.contains(&name)
                && !name.starts_with("__parcomp")
                && name.chars().next().is_some_and(|c| c.is_lowercase() || c == '_')
                && name != "_"
                && seen.insert(name)
        })
        .collect()
}

/// Single-identifier paths used as values, not as the function of a call.
struct Values {
    found: Vec<Ident>,
}

impl<'ast> Visit<'ast> for Values {
    fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
        if p.qself.is_none() {
            if let Some(ident) = p.path.get_ident() {
                self.found.push(ident.clone());
            }
        }
    }
    fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
        if !matches!(&*call.func, Expr::Path(_)) {
            self.visit_expr(&call.func);
        }
        for arg in &call.args {
            self.visit_expr(arg);
        }
    }
    // Closures, blocks and macros bind or hide names of their own: not looked into.
    fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    fn visit_expr_block(&mut self, _: &'ast syn::ExprBlock) {}
    fn visit_expr_macro(&mut self, _: &'ast syn::ExprMacro) {}
    fn visit_expr_match(&mut self, m: &'ast syn::ExprMatch) {
        self.visit_expr(&m.expr);
    }
}
