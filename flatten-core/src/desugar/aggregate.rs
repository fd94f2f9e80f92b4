//! `group by` whose groups are only reduced: each group's reductions computed directly, per
//! key, without gathering its values into slices first.
//!
//! After `group by city`, every other variable is its group's values as a slice. When all that
//! the rest of the comprehension does with those slices is reduce them —
//!
//! ```text
//! par![(city, par_sum![a | a <- amount], amount.len()) | .., group by city, order by amount.len()]
//! ```
//!
//! — the reductions can be folded per key while the elements are produced: the part before
//! `group by` computes, for each element, the key and one item per reduction (here the amount,
//! and nothing for the count), and the runtime's `GroupReduce` folds the items into a table of
//! accumulators per key (per thread, merged left to right, keys in ascending order). Each use
//! is replaced by a variable holding its result, so the rest reads
//!
//! ```text
//! par![(city, __s0, __s1) | ((city), (__s0, __s1)) <- Owned(&reduced), order by __s1]
//! ```
//!
//! A use counts when it is `v.len()`, or `par_sum!`, `par_product!`, `par_min!`, `par_max!`,
//! `par_count!`, `par_any!`, `par_all!` over `PAT <- v` followed only by filters and `let`s,
//! whose expressions name nothing the comprehension binds but the key's variables and their
//! own. Anything else (a slice indexed, passed on, or read by a format string) keeps the
//! slices. Equal uses share one reduction.

use crate::syntax::{self, bound_names, Qualifier};
use crate::text::text;
use crate::Macro;
use proc_macro2::{Delimiter, Group, Span, TokenStream, TokenTree};
use quote::{format_ident, quote};
use syn::{Expr, Ident, Pat};

/// One reduction of a group's values, computed per key.
pub(super) struct Aggregate {
    /// The variable its result is bound to after `group by`.
    pub name: Ident,
    /// The item folded in for one element: an expression over the variables bound before
    /// `group by` (`Option<_>` when the reduction filters).
    pub item: TokenStream,
    /// The runtime reducer (a `Reducer` of the item).
    pub reducer: TokenStream,
    /// The use as written, for `par_explain!`.
    pub text: String,
    /// The macro of the use, by the path it was written with (`par_sum`, `parcomp::par_sum`),
    /// which the emitted code mentions so that its import is used.
    pub mac: Option<TokenStream>,
}

/// The uses of the grouped variables after a `group by`, rewritten.
pub(super) struct Aggregation {
    /// The head, each use replaced by its variable.
    pub head: TokenStream,
    /// The qualifiers after `group by`, likewise.
    pub after: Vec<TokenStream>,
    /// The reductions, in the order their variables are bound.
    pub aggregates: Vec<Aggregate>,
}

/// What the rewriting needs to know about the names of the comprehension.
struct Names<'a> {
    /// The grouped variables: bound before `group by`, not its key.
    grouped: &'a [Ident],
    /// Every other variable the comprehension binds (the key's, and those bound after), which
    /// a reduction's own expressions may not name, apart from the key's.
    bound: &'a [Ident],
    /// The key's variables.
    key: &'a [Ident],
    rt: &'a TokenStream,
}

/// The aggregation of a `group by` whose key binds `key` (`grouped` the other variables bound
/// before it, `bound_after` those bound by `after`), if every use of a grouped variable in
/// `head` and `after` is a reduction; `None` keeps the slices.
pub(super) fn aggregation(
    head: &TokenStream,
    after: &[TokenStream],
    grouped: &[Ident],
    key: &[Ident],
    bound_after: &[Ident],
    rt: &TokenStream,
) -> Option<Aggregation> {
    // A variable bound again after `group by` would make a later use name something else.
    if bound_after.iter().any(|n| grouped.contains(n) || key.contains(n)) {
        return None;
    }
    let bound: Vec<Ident> = key.iter().chain(bound_after).cloned().collect();
    let names = Names { grouped, bound: &bound, key, rt };
    let mut aggregates = Vec::new();
    let head = rewrite(head.clone(), &names, &mut aggregates)?;
    let after = after
        .iter()
        .map(|q| rewrite(q.clone(), &names, &mut aggregates))
        .collect::<Option<Vec<_>>>()?;
    let fits = (1..=MAX_REDUCTIONS).contains(&aggregates.len());
    fits.then_some(Aggregation { head, after, aggregates })
}

/// The most reductions of the groups one comprehension may fold per key: the runtime's
/// `Aggregates` is implemented for tuples of up to 12 reducers. More keep the slices.
const MAX_REDUCTIONS: usize = 12;

/// `tokens` with each reduction of a grouped variable replaced by its aggregate's variable;
/// `None` if a grouped variable is used otherwise.
fn rewrite(tokens: TokenStream, names: &Names, found: &mut Vec<Aggregate>) -> Option<TokenStream> {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out = Vec::with_capacity(trees.len());
    let mut i = 0;
    while i < trees.len() {
        let after_dot = i > 0 && matches!(&trees[i - 1], TokenTree::Punct(p) if p.as_char() == '.');
        match &trees[i] {
            TokenTree::Ident(ident) if !after_dot => {
                let reduction = macro_call(&trees[i..]).and_then(|(m, body)| {
                    let (item, reducer) = reduction(m, body, names)?;
                    Some((item, reducer, format!("{m}![{}]", text(&body.stream()))))
                });
                if let Some((item, reducer, text)) = reduction {
                    // `parcomp::par_sum![..]`: the path goes with the macro it names.
                    let prefix = take_path_prefix(&mut out);
                    let mac = Some(quote! { #prefix #ident });
                    out.push(TokenTree::Ident(use_of(found, item, reducer, text, mac)));
                    i += 3;
                    continue;
                }
                if names.grouped.contains(ident) {
                    if !is_len_call(&trees[i + 1..]) {
                        return None;
                    }
                    let (item, rt) = (quote! { () }, names.rt);
                    let reducer = quote! { #rt::Count };
                    let text = format!("{ident}.len()");
                    out.push(TokenTree::Ident(use_of(found, item, reducer, text, None)));
                    i += 4;
                    continue;
                }
                out.push(trees[i].clone());
            }
            // A field or method of the same name (`row.amount`): not the variable, but kept
            // out of the way rather than told apart.
            TokenTree::Ident(ident) if names.grouped.contains(ident) => return None,
            TokenTree::Group(group) => {
                let inner = rewrite(group.stream(), names, found)?;
                let mut rebuilt = Group::new(group.delimiter(), inner);
                rebuilt.set_span(group.span());
                out.push(TokenTree::Group(rebuilt));
            }
            TokenTree::Literal(literal) if literal.to_string().contains('{') => {
                // A format string may name a grouped variable that no identifier shows.
                return None;
            }
            other => out.push(other.clone()),
        }
        i += 1;
    }
    Some(out.into_iter().collect())
}

/// Takes the path written before a macro's name (`parcomp::`, `::parcomp::`) off the end of
/// `out`.
fn take_path_prefix(out: &mut Vec<TokenTree>) -> TokenStream {
    let colon =
        |t: Option<&TokenTree>| matches!(t, Some(TokenTree::Punct(p)) if p.as_char() == ':');
    let mut start = out.len();
    while start >= 2 && colon(out.get(start - 1)) && colon(out.get(start - 2)) {
        start -= 2;
        if start >= 1 && matches!(out.get(start - 1), Some(TokenTree::Ident(_))) {
            start -= 1;
        }
    }
    out.split_off(start).into_iter().collect()
}

/// The variable of the use `text`: the one of an equal use found before, or a new one.
fn use_of(
    found: &mut Vec<Aggregate>,
    item: TokenStream,
    reducer: TokenStream,
    text: String,
    mac: Option<TokenStream>,
) -> Ident {
    if let Some(same) = found.iter().find(|a| a.text == text) {
        return same.name.clone();
    }
    let name = format_ident!("__parcomp_grouped_{}", found.len(), span = Span::mixed_site());
    found.push(Aggregate { name: name.clone(), item, reducer, text, mac });
    name
}

/// `name ! (...)` at the start of `trees`: the macro of the family and its input.
fn macro_call(trees: &[TokenTree]) -> Option<(Macro, &Group)> {
    match trees {
        [TokenTree::Ident(name), TokenTree::Punct(bang), TokenTree::Group(body), ..]
            if bang.as_char() == '!' =>
        {
            Some((Macro::from_name(&name.to_string())?, body))
        }
        _ => None,
    }
}

/// `.len()` at the start of `trees`.
fn is_len_call(trees: &[TokenTree]) -> bool {
    matches!(trees, [TokenTree::Punct(dot), TokenTree::Ident(len), TokenTree::Group(args), ..]
        if dot.as_char() == '.' && len == "len"
            && args.delimiter() == Delimiter::Parenthesis && args.stream().is_empty())
}

/// The item and reducer of `m![body]` when it reduces a grouped variable.
fn reduction(m: Macro, body: &Group, names: &Names) -> Option<(TokenStream, TokenStream)> {
    let reducer = match m {
        Macro::ParSum => quote! { SumReducer::new() },
        Macro::ParProduct => quote! { ProductReducer::new() },
        Macro::ParMin => quote! { MinReducer::new() },
        Macro::ParMax => quote! { MaxReducer::new() },
        Macro::ParCount => quote! { Count },
        Macro::ParAny => quote! { Any },
        Macro::ParAll => quote! { All },
        _ => return None,
    };
    let mut errors = crate::error::Errors::default();
    let comprehension = syntax::parse(body.stream(), &mut errors)?;
    errors.finish(()).ok()?;
    if !matches!(comprehension.marker, crate::plan::Marker::None) {
        return None;
    }
    let [branch] = &comprehension.branches[..] else {
        return None;
    };
    let (first, rest) = branch.qualifiers.split_first()?;
    let Qualifier::Generator(generator) = first else {
        return None;
    };
    let source = match &generator.expr {
        Expr::Path(p) if p.qself.is_none() => p.path.get_ident()?.clone(),
        _ => return None,
    };
    if !names.grouped.contains(&source) || !irrefutable(&generator.pat) {
        return None;
    }
    // The names the reduction binds itself, and the expressions that must name nothing else
    // the comprehension binds (apart from the key).
    let mut own = bound_names(&generator.pat);
    let mut expressions: Vec<TokenStream> = Vec::new();
    for qualifier in rest {
        match qualifier {
            Qualifier::Filter(condition) => expressions.push(quote! { #condition }),
            Qualifier::Let(binding) if irrefutable(&binding.pat) => {
                let value = &binding.expr;
                expressions.push(quote! { #value });
                own.extend(bound_names(&binding.pat));
            }
            _ => return None,
        }
    }
    let head = &comprehension.head;
    expressions.push(quote! { #head });
    if !expressions.iter().all(|e| names_only_allowed(e, names, &own)) {
        return None;
    }
    let filters = rest.iter().any(|q| matches!(q, Qualifier::Filter(_)));
    let rt = names.rt;
    let reducer = quote! { #rt::#reducer };
    if matches!(m, Macro::ParCount) && !filters {
        // Every element counts, whatever it is.
        return Some((quote! { () }, reducer));
    }
    // The innermost value: what the reduction folds (a count folds nothing).
    let value = if matches!(m, Macro::ParCount) {
        quote! { () }
    } else {
        quote! { #head }
    };
    let mut item = if filters {
        quote! { ::core::option::Option::Some(#value) }
    } else {
        value
    };
    for qualifier in rest.iter().rev() {
        item = match qualifier {
            Qualifier::Filter(condition) => quote! {
                if #condition { #item } else { ::core::option::Option::None }
            },
            Qualifier::Let(binding) => {
                let (pat, value) = (&binding.pat, &binding.expr);
                quote! { { #[allow(unused_variables)] let #pat = #value; #item } }
            }
            _ => unreachable!("only filters and lets pass the check above"),
        };
    }
    let pat = &generator.pat;
    // The element as the reduction over the slice would read it: by value when `Copy`, else
    // by reference (to this element's value, which the item must not outlive).
    // (The emitted code imports `GroupedByRef` and `GroupedByValue` around the part.)
    let item = quote! {
        {
            #[allow(unused_variables)]
            let #pat = (&#rt::Grouped(&#source)).value();
            #item
        }
    };
    let reducer = if filters {
        quote! { #rt::Filtered(#reducer) }
    } else {
        reducer
    };
    Some((item, reducer))
}

/// Whether `pat` binds names without testing anything (a name, `_`, or a tuple of those).
fn irrefutable(pat: &Pat) -> bool {
    match pat {
        Pat::Ident(p) => p.subpat.is_none() && p.by_ref.is_none() && p.ident != "None",
        Pat::Wild(_) => true,
        Pat::Paren(p) => irrefutable(&p.pat),
        Pat::Tuple(t) => t.elems.iter().all(irrefutable),
        _ => false,
    }
}

/// Whether `tokens` name no variable of the comprehension but the key's and `own`, and call
/// no macro (a comprehension nested in a reduction keeps the slices).
fn names_only_allowed(tokens: &TokenStream, names: &Names, own: &[Ident]) -> bool {
    let trees: Vec<TokenTree> = tokens.clone().into_iter().collect();
    trees.iter().enumerate().all(|(i, tree)| match tree {
        TokenTree::Ident(ident) => {
            let variable = names.grouped.contains(ident) || names.bound.contains(ident);
            let allowed = own.contains(ident) || names.key.contains(ident);
            let is_macro =
                matches!(trees.get(i + 1), Some(TokenTree::Punct(p)) if p.as_char() == '!')
                    && matches!(trees.get(i + 2), Some(TokenTree::Group(_)));
            (!variable || allowed) && !is_macro
        }
        TokenTree::Group(group) => names_only_allowed(&group.stream(), names, own),
        TokenTree::Literal(literal) => !literal.to_string().contains('{'),
        TokenTree::Punct(_) => true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idents(names: &[&str]) -> Vec<Ident> {
        names.iter().map(|n| Ident::new(n, Span::call_site())).collect()
    }

    fn aggregate(head: TokenStream, after: &[TokenStream]) -> Option<Aggregation> {
        aggregation(
            &head,
            after,
            &idents(&["amount", "i"]),
            &idents(&["city"]),
            &idents(&["z"]),
            &quote! { rt },
        )
    }

    #[test]
    fn reductions_and_lengths_become_variables_equal_uses_shared() {
        let a = aggregate(
            quote! { (city, par_sum![a | a <- amount], amount.len(), par_max![a * 2.0 | a <- amount, a > 1.0]) },
            &[quote! { order by par_sum![a | a <- amount] desc }],
        )
        .expect("every use is a reduction");
        assert_eq!(a.aggregates.len(), 3);
        let texts: Vec<&str> = a.aggregates.iter().map(|g| g.text.as_str()).collect();
        assert_eq!(texts[1], "amount.len()");
        assert!(a.aggregates[2].reducer.to_string().contains("Filtered"));
        let head = a.head.to_string();
        assert!(!head.contains("amount"), "{head}");
        assert!(a.after[0].to_string().contains("__parcomp_grouped_0"));
    }

    #[test]
    fn reductions_named_by_their_paths_take_the_path_with_them() {
        let a = aggregate(
            quote! { (city, parcomp::par_sum![a | a <- amount], ::parcomp::par_count![a | a <- amount]) },
            &[],
        )
        .expect("every use is a reduction");
        let head = a.head.to_string();
        assert_eq!(head, "(city , __parcomp_grouped_0 , __parcomp_grouped_1)");
        assert_eq!(a.aggregates.len(), 2);
    }

    #[test]
    fn any_other_use_keeps_the_slices() {
        for head in [
            quote! { (city, amount[0]) },
            quote! { (city, amount.iter().sum::<f64>()) },
            quote! { (city, par_sum![a + i.len() as f64 | a <- amount]) },
            quote! { (city, par_sum![a + z | a <- amount]) },
            quote! { (city, par_sum![a * b | a <- amount, b <- 0..3]) },
            quote! { (city, par![a | a <- amount]) },
            quote! { (city, par_sum![par_sum![b | b <- 0..a] | a <- amount]) },
            quote! { (city, format!("{amount:?}")) },
            quote! { (city, row.amount) },
            quote! { (city, par_sum![a | Some(a) <- amount]) },
            quote! { city },
        ] {
            assert!(aggregate(head.clone(), &[]).is_none(), "{head}");
        }
        // Thirteen reductions are more than the runtime folds per key.
        let many: Vec<TokenStream> =
            (0..13).map(|k| quote! { par_sum![a * #k | a <- amount] }).collect();
        assert!(aggregate(quote! { (#(#many),*) }, &[]).is_none());
        let twelve = &many[..12];
        assert!(aggregate(quote! { (#(#twelve),*) }, &[]).is_some());
        // The key and names the comprehension does not bind are fine inside a reduction.
        assert!(
            aggregate(quote! { par_sum![a * scale + city as f64 | a <- amount] }, &[]).is_some()
        );
    }
}
