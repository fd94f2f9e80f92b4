//! Captured collections the pipeline's closures only index or measure, read through a view
//! bound once before the pipeline (see the runtime's `source::index_view`: a `Vec`'s elements as
//! a slice, whose address and length the compiler keeps in registers across the loop).
//!
//! Which names qualify is read from the emitted chain's tokens, conservatively: a name every one
//! of whose uses there is `name[..]`, `name.len()` or `name.is_empty()`. Any other use — a
//! pattern that binds it (a closure's parameter, a `let`, the comprehension's own variables,
//! which the chain's closures bind), a call, a field, a path — leaves the name as it is, so a
//! view never stands where another binding of the name was meant. Macro calls' tokens are not
//! rewritten (their uses keep the collection itself, which is still in scope).

use proc_macro2::{Delimiter, Group, Ident, Span, TokenStream, TokenTree};
use quote::{format_ident, quote};
use std::collections::BTreeMap;

/// The chain with its qualifying names read through views, and the `let`s binding the views
/// (to be emitted before the chain, where the names mean what they mean in it).
pub(super) fn with_views(chain: TokenStream, rt: &TokenStream) -> (TokenStream, TokenStream) {
    let mut uses: BTreeMap<String, (Ident, bool)> = BTreeMap::new();
    scan(chain.clone(), &mut uses);
    let mut views: BTreeMap<String, Ident> = BTreeMap::new();
    let mut lets = TokenStream::new();
    for (name, (first, viewable)) in uses {
        if !viewable {
            continue;
        }
        let view = format_ident!(
            "__parcomp_view_{}",
            views.len(),
            span = Span::mixed_site().located_at(first.span())
        );
        lets.extend(quote! { let #view = (&#rt::IndexView(&#first)).index_view(); });
        views.insert(name, view);
    }
    if views.is_empty() {
        return (chain, lets);
    }
    (rewrite(chain, &views), lets)
}

/// How an identifier at `at` in `tokens` is used: `Some(true)` indexed or measured, `Some(false)`
/// otherwise, `None` when it names no variable (after `.` or `::` or `'`, or a keyword).
fn use_at(tokens: &[TokenTree], at: usize) -> Option<bool> {
    let TokenTree::Ident(ident) = &tokens[at] else { return None };
    let name = ident.to_string();
    if KEYWORDS.contains(&name.as_str())
        || name.starts_with('_')
        || name.starts_with(|c: char| c.is_uppercase())
    {
        return None;
    }
    if let Some(TokenTree::Punct(p)) = at.checked_sub(1).map(|b| &tokens[b]) {
        if matches!(p.as_char(), '.' | ':' | '\'') {
            return None;
        }
    }
    Some(match tokens.get(at + 1) {
        Some(TokenTree::Group(g)) => g.delimiter() == Delimiter::Bracket,
        Some(TokenTree::Punct(p)) if p.as_char() == '.' => {
            let method = matches!(
                tokens.get(at + 2),
                Some(TokenTree::Ident(m)) if m == "len" || m == "is_empty"
            );
            let called = matches!(
                tokens.get(at + 3),
                Some(TokenTree::Group(g))
                    if g.delimiter() == Delimiter::Parenthesis && g.stream().is_empty()
            );
            method && called
        }
        _ => false,
    })
}

/// Whether the group at `at` is a macro call's tokens (`name!(..)`, `name![..]`, `name!{..}`).
fn macro_tokens(tokens: &[TokenTree], at: usize) -> bool {
    matches!(at.checked_sub(1).map(|b| &tokens[b]), Some(TokenTree::Punct(p)) if p.as_char() == '!')
}

fn scan(stream: TokenStream, uses: &mut BTreeMap<String, (Ident, bool)>) {
    let tokens: Vec<TokenTree> = stream.into_iter().collect();
    for at in 0..tokens.len() {
        match &tokens[at] {
            TokenTree::Group(g) if !macro_tokens(&tokens, at) => scan(g.stream(), uses),
            TokenTree::Ident(ident) => {
                if let Some(viewable) = use_at(&tokens, at) {
                    let entry = uses.entry(ident.to_string()).or_insert((ident.clone(), true));
                    entry.1 &= viewable;
                }
            }
            _ => {}
        }
    }
}

fn rewrite(stream: TokenStream, views: &BTreeMap<String, Ident>) -> TokenStream {
    let tokens: Vec<TokenTree> = stream.into_iter().collect();
    let mut out = TokenStream::new();
    for at in 0..tokens.len() {
        let token = match &tokens[at] {
            TokenTree::Group(g) if !macro_tokens(&tokens, at) => {
                let mut group = Group::new(g.delimiter(), rewrite(g.stream(), views));
                group.set_span(g.span());
                TokenTree::Group(group)
            }
            TokenTree::Ident(ident) if use_at(&tokens, at) == Some(true) => {
                match views.get(&ident.to_string()) {
                    Some(view) => {
                        let mut view = view.clone();
                        view.set_span(Span::mixed_site().located_at(ident.span()));
                        TokenTree::Ident(view)
                    }
                    None => tokens[at].clone(),
                }
            }
            other => other.clone(),
        };
        out.extend([token]);
    }
    out
}

/// Words that are never a variable's name.
const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub",
    "ref", "return", "self", "static", "struct", "super", "trait", "true", "type", "union",
    "unsafe", "use", "where", "while", "yield",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn views(chain: TokenStream) -> (String, String) {
        let (chain, lets) = with_views(chain, &quote! { rt });
        (chain.to_string(), lets.to_string())
    }

    #[test]
    fn a_name_only_indexed_or_measured_is_viewed() {
        let (chain, lets) = views(quote! {
            rt::source(&s, &r).map(|i| (city_of[i], amount_of[i] * 2.0, city_of.len()))
        });
        assert!(lets.contains("IndexView (& city_of)"), "{lets}");
        assert!(lets.contains("IndexView (& amount_of)"), "{lets}");
        assert!(!chain.contains("city_of") && !chain.contains("amount_of"), "{chain}");
        assert!(chain.contains("__parcomp_view_0 [i]"), "{chain}");
    }

    #[test]
    fn any_other_use_leaves_the_name_alone() {
        let (chain, lets) = views(quote! {
            rt::source(&s, &r)
                .bind(|&i| v[i])
                .map(|(i, x)| (x, w[i], f(&w), t.v[i], a::b[i], xs[0], |xs| xs[1]))
                .filter(|&(y, _)| y < n.len() && n.capacity() > 0 && m.is_empty() && k.len)
                .map(|v| v[0] + format!("{}", q[0]).len() + q.len())
        });
        // `v` is bound by a closure; `w` is passed; `t.v`, `a::b` are no variables; `xs` is a
        // closure's parameter too; `n` has another method called; `k.len` is a field.
        for kept in ["v", "w", "xs", "n", "k"] {
            assert!(!lets.contains(&format!("(& {kept})")), "{kept}: {lets}");
        }
        assert!(chain.contains("t . v [i]") && chain.contains("a :: b [i]"), "{chain}");
        // `m` is only measured; `q` indexed in a macro's tokens (left as it is) and measured.
        assert!(lets.contains("(& m)") && lets.contains("(& q)"), "{lets}");
        assert!(chain.contains("format ! (\"{}\" , q [0])"), "{chain}");
    }

    #[test]
    fn keywords_constants_and_generated_names_are_not_variables() {
        let (chain, lets) =
            views(quote! { x.map(|i| TABLE[i] + __parcomp_root[i] + Self::C[i] + return [i]) });
        assert!(lets.is_empty(), "{lets}");
        assert!(chain.contains("TABLE [i]"), "{chain}");
    }
}
