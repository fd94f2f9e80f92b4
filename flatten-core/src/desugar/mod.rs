//! Cutting a comprehension at its transforms: `order by`, `group by`, `take`, `skip`.
//!
//! A transform acts on all the elements produced so far (*comprehensive comprehensions*), so
//! the comprehension is cut there into parts, each an ordinary comprehension compiled and
//! emitted as any other (flattened, and on the device where it can be):
//!
//! ```text
//! par![HEAD | Q1, Q2, order by K desc, Q3, group by g, Q4]
//!
//! let part_0 = par![((vars), (K)) | Q1, Q2];          the variables bound so far, and the key
//! let part_1 = order_by(part_0, descending);           a stable sort
//! let part_2 = par![((g), (others)) | (vars) <- Owned(&part_1), Q3];
//! let part_3 = group_by(part_2);                       keys, and one column per variable
//! par![HEAD | ((g), (others)) <- &part_3, Q4]          each other variable: its group's slice
//! ```
//!
//! `take N` straight after generators and filters ends its part lazily (see
//! [`back::rust::emit_take`](crate::back::rust::emit_take)); after an `order by` it cuts the
//! gathered `Vec`. A `group by` whose groups are only reduced afterwards reduces them per key
//! in the part before it, without slices (see [`aggregate`]).

mod aggregate;

use crate::error::{error, error_spanned, Errors};
use crate::plan::Terminal;
use crate::syntax::{self, Qualifier, TransformKind};
use crate::text::text;
use crate::Macro;
use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{format_ident, quote};
use syn::{Expr, Ident};

/// Whether the comprehension `input` (after `par_reduce!`'s arguments) has a transform at its
/// top level.
pub(crate) fn has_transforms(input: &TokenStream) -> bool {
    let buffer = syn::buffer::TokenBuffer::new2(input.clone());
    let mut cursor = buffer.begin();
    let mut at_start = false;
    while let Some((token, next)) = cursor.token_tree() {
        if at_start && syntax::starts_transform(cursor) {
            return true;
        }
        at_start =
            matches!(&token, TokenTree::Punct(p) if p.as_char() == ',' || p.as_char() == '|');
        cursor = next;
    }
    false
}

/// A step of a cut comprehension.
enum Step {
    /// `let name = <part>;`: collected, lazily its first `take` elements, or reduced per key.
    Part { name: Ident, tokens: TokenStream, finish: Finish },
    /// `let name = <runtime call on input>;`.
    Call { name: Ident, input: Ident, what: String, call: Call },
}

/// How a part ends.
enum Finish {
    /// Its elements, collected.
    Collect,
    /// Its first elements, lazily.
    Take(Expr),
    /// Its elements are `(key, items)`, the items folded per key by these reducers (a `group
    /// by` whose groups are only reduced, see [`aggregate`]); the uses as written.
    GroupReduce {
        /// The `group by` as written.
        group_by: String,
        reducers: Vec<TokenStream>,
        /// Each reduction's variable and its use as written.
        uses: Vec<(String, String)>,
        macros: Vec<TokenStream>,
    },
}

/// The runtime call of a step between parts.
enum Call {
    /// With the key's span, where a key that is no `OrderKey` is reported.
    OrderBy {
        descending: bool,
        key: Span,
    },
    GroupBy {
        key: Span,
    },
    Take(Expr),
    Skip(Expr),
}

/// What the steps so far left for the next part to read.
enum Gathered {
    /// Nothing yet: the comprehension's own generators come first.
    Nothing,
    /// A `Vec` of the variables bound so far, as a tuple.
    Elements(Ident),
    /// Groups: the key's pattern and the other variables, each now a slice.
    Groups { name: Ident, key: TokenStream, others: Vec<Ident> },
    /// Groups reduced per key: the key's pattern and the variables of the reductions.
    Reduced { name: Ident, key: TokenStream, results: Vec<Ident> },
}

/// A comprehension cut into parts: the steps, then the last part (with the macro's own
/// terminal), which computes the result.
struct Cut {
    steps: Vec<Step>,
    last: TokenStream,
}

/// A tuple of `names` (with a trailing comma, so that one name is a 1-tuple).
fn tuple(names: &[Ident]) -> TokenStream {
    quote! { (#(#names,)*) }
}

/// Cuts the comprehension `input` of the macro `name` (as the user wrote it: `par_min_by_key!`,
/// not the `par_min!` it is compiled as); `rt` is the runtime's path.
fn cut(name: Macro, input: TokenStream, rt: &TokenStream) -> Result<Cut, syn::Error> {
    let mut errors = Errors::default();
    let Some(comprehension) = syntax::parse(input, &mut errors) else {
        return Err(errors.finish(()).expect_err("a failed parse reports an error"));
    };
    errors.finish(())?;
    let mut errors = Errors::default();
    let marker = match comprehension.marker {
        crate::plan::Marker::Gpu(span) => {
            return Err(error(
                span,
                "`@gpu` cannot be combined with `order by`, `group by`, `take` or `skip`",
                "drop `@gpu`: each part of the comprehension runs on the device when it can, and \
                 `PARCOMP_TRACE=1` prints where each part ran and why",
            ));
        }
        crate::plan::Marker::Cpu(_) => quote! { @cpu },
        crate::plan::Marker::None => TokenStream::new(),
    };
    let (comprehension, mut aggregated) = match reduce_groups(comprehension, &marker, rt) {
        Reduced::Yes { comprehension, group_by, aggregates } => {
            (comprehension, Some((group_by, aggregates)))
        }
        Reduced::No(comprehension) => (comprehension, None),
    };
    let reduced_uses: Vec<(String, String)> = match &aggregated {
        Some((_, aggregates)) => {
            aggregates.iter().map(|a| (a.name.to_string(), a.text.clone())).collect()
        }
        None => Vec::new(),
    };
    let head = comprehension.head;
    let branch =
        comprehension.branches.into_iter().next().expect("a parsed comprehension has a branch");
    // Not for `par_min_by_key!` and `par_max_by_key!`: of equal keys they give the first or
    // the last element, which the order decides.
    let order_matters = !matches!(
        name,
        Macro::ParSum
            | Macro::ParProduct
            | Macro::ParMin
            | Macro::ParMax
            | Macro::ParCount
            | Macro::ParAny
            | Macro::ParAll
    );
    let qualifiers: Vec<(Qualifier, TokenStream)> =
        branch.qualifiers.into_iter().zip(branch.tokens).collect();
    let is_cut = |q: &Qualifier| {
        matches!(q, Qualifier::Transform(t)
            if matches!(t.kind, TransformKind::Take { .. } | TransformKind::Skip { .. }))
    };
    let cut_after: Vec<bool> =
        (0..qualifiers.len()).map(|i| qualifiers[i + 1..].iter().any(|(q, _)| is_cut(q))).collect();
    // The names each qualifier's successors and the head mention: a variable none of them
    // mentions is dead after the qualifier and is not carried past a cut there.
    let mut read_after: Vec<Option<Vec<String>>> = vec![None; qualifiers.len()];
    {
        let mut names = Vec::new();
        let mut formats = mentions(&quote! { #head }, &mut names);
        for i in (0..qualifiers.len()).rev() {
            read_after[i] = (!formats).then(|| names.clone());
            formats |= mentions(&qualifiers[i].1, &mut names);
            // A `group by` reduced per key reads its reductions' items (`a` of
            // `par_max![k | k <- a]`) in the part that ends at it.
            if let Some((_, aggregates)) = aggregated.as_ref().filter(|(at, _)| *at == i) {
                for aggregate in aggregates {
                    formats |= mentions(&aggregate.item, &mut names);
                }
            }
        }
    }
    let next_is_take: Vec<bool> = (0..qualifiers.len())
        .map(|i| {
            matches!(qualifiers.get(i + 1), Some((Qualifier::Transform(t), _))
                if matches!(t.kind, TransformKind::Take { .. }))
        })
        .collect();

    let mut steps = Vec::new();
    let mut scope: Vec<Ident> = Vec::new();
    let mut pending: Vec<TokenStream> = Vec::new();
    let mut gathered = Gathered::Nothing;
    let mut generators = 0;
    let mut deferred_skip: Option<Expr> = None;
    let fresh = |steps: &Vec<Step>| {
        format_ident!("__parcomp_part_{}", steps.len(), span = Span::mixed_site())
    };
    for (index, (qualifier, tokens)) in qualifiers.into_iter().enumerate() {
        let transform = match qualifier {
            Qualifier::Transform(t) => t,
            other => {
                if let Qualifier::Generator(_) = other {
                    generators += 1;
                }
                if let Some(pat) = other.pattern() {
                    for name in syntax::user_names(pat) {
                        scope.retain(|n| *n != name);
                        scope.push(name);
                    }
                }
                // A qualifier a refutable generator was desugared into has no tokens: the
                // generator's, compiled again in the part, make it again.
                if !tokens.is_empty() {
                    pending.push(tokens);
                }
                continue;
            }
        };
        let (keyword, span) = transform.kind.keyword();
        if generators == 0 {
            errors.push(error(
                span,
                format!("`{keyword}` must come after a generator"),
                format!(
                    "`{keyword}` acts on the elements produced so far; put it after a generator, \
                     e.g. `x <- xs, {keyword} ...`"
                ),
            ));
            continue;
        }
        // As written: a reduction of the groups shown as such, not as its variable.
        let what = shown(text(&transform.tokens), &reduced_uses);
        let own_qualifiers = pending.len() > usize::from(!matches!(gathered, Gathered::Nothing));
        let needs_part = own_qualifiers || !matches!(gathered, Gathered::Elements(_));
        // Ends the pending qualifiers in a part with `head`, which becomes what is gathered.
        let part = |steps: &mut Vec<Step>,
                    pending: &mut Vec<TokenStream>,
                    head: TokenStream,
                    finish: Finish| {
            let name = fresh(steps);
            let qualifiers = std::mem::take(pending);
            let tokens = quote! { #marker #head | #(#qualifiers),* };
            steps.push(Step::Part { name: name.clone(), tokens, finish });
            name
        };
        let call = |steps: &mut Vec<Step>, input: Ident, call: Call| {
            let name = fresh(steps);
            steps.push(Step::Call { name: name.clone(), input, what: what.clone(), call });
            name
        };
        // The variables a part cut here carries: those read later (all of them if a format
        // string might name one, or if none is read, to keep the tuple non-empty).
        let live: Vec<Ident> = match &read_after[index] {
            Some(read) => scope.iter().filter(|v| read.contains(&v.to_string())).cloned().collect(),
            None => scope.clone(),
        };
        let live = if live.is_empty() { scope.clone() } else { live };
        let cuts_part = needs_part
            || matches!(
                transform.kind,
                TransformKind::OrderBy { .. } | TransformKind::GroupBy { .. }
            );
        if cuts_part && !matches!(transform.kind, TransformKind::GroupBy { .. }) {
            scope = live.clone();
        }
        let vars = tuple(&scope);
        match transform.kind {
            TransformKind::Take { count, .. } => {
                let skip = deferred_skip.take();
                let name = if needs_part {
                    let count = match &skip {
                        Some(skip) => syn::parse_quote! { (#skip) + (#count) },
                        None => count,
                    };
                    part(&mut steps, &mut pending, vars, Finish::Take(count))
                } else {
                    let input = gathered_elements(&gathered);
                    call(&mut steps, input, Call::Take(count))
                };
                let name = match skip {
                    Some(skip) => call(&mut steps, name, Call::Skip(skip)),
                    None => name,
                };
                gathered = Gathered::Elements(name);
            }
            TransformKind::Skip { count, .. } => {
                if needs_part && next_is_take[index] {
                    // `skip a, take b` straight after generators: the first a + b, lazily.
                    deferred_skip = Some(count);
                    continue;
                }
                let input = if needs_part {
                    part(&mut steps, &mut pending, vars, Finish::Collect)
                } else {
                    gathered_elements(&gathered)
                };
                gathered = Gathered::Elements(call(&mut steps, input, Call::Skip(count)));
            }
            TransformKind::OrderBy { key, descending, .. } => {
                if !order_matters && !cut_after[index] {
                    errors.push(error(
                        span,
                        format!("`order by` cannot change the result of `{name}!`"),
                        format!(
                            "the result of `{name}!` does not depend on the order of the \
                             elements: remove `order by`, or follow it with `take N` to keep \
                             the first N"
                        ),
                    ));
                    continue;
                }
                let input =
                    part(&mut steps, &mut pending, quote! { (#vars, (#key)) }, Finish::Collect);
                let key_span = syn::spanned::Spanned::span(&key);
                let order = Call::OrderBy { descending, key: key_span };
                gathered = Gathered::Elements(call(&mut steps, input, order));
            }
            TransformKind::GroupBy { key, .. } => {
                let key_names = match group_key(&key, &scope) {
                    Ok(names) => names,
                    Err(e) => {
                        errors.push(e);
                        continue;
                    }
                };
                if let Some((_, aggregates)) = aggregated.take_if(|(at, _)| *at == index) {
                    // Reduced per key in this part: the key and one item per reduction.
                    let items = aggregates.iter().map(|a| &a.item);
                    let head = quote! { ((#key), (#(#items,)*)) };
                    let finish = Finish::GroupReduce {
                        reducers: aggregates.iter().map(|a| a.reducer.clone()).collect(),
                        group_by: what.clone(),
                        uses: reduced_uses.clone(),
                        macros: aggregates.iter().filter_map(|a| a.mac.clone()).collect(),
                    };
                    let name = part(&mut steps, &mut pending, head, finish);
                    let results: Vec<Ident> = aggregates.into_iter().map(|a| a.name).collect();
                    scope.retain(|n| key_names.contains(n));
                    scope.extend(results.iter().cloned());
                    gathered = Gathered::Reduced { name, key: quote! { #key }, results };
                    pending = vec![source_generator(&gathered, &scope, rt)];
                    continue;
                }
                let others: Vec<Ident> = scope
                    .iter()
                    .filter(|n| !key_names.contains(n) && live.contains(n))
                    .cloned()
                    .collect();
                scope.retain(|n| key_names.contains(n) || others.contains(n));
                let others_tuple = tuple(&others);
                let head = quote! { ((#key), #others_tuple) };
                let input = part(&mut steps, &mut pending, head, Finish::Collect);
                let key_span = syn::spanned::Spanned::span(&key);
                let name = call(&mut steps, input, Call::GroupBy { key: key_span });
                gathered = Gathered::Groups { name, key: quote! { #key }, others };
            }
        }
        // What the next part reads replaces what this one read (already consumed).
        pending = vec![source_generator(&gathered, &scope, rt)];
    }
    errors.finish(())?;
    let last = quote! { #marker #head | #(#pending),* };
    Ok(Cut { steps, last })
}

/// Adds the identifiers in `tokens` to `names`; whether a string literal in them holds a `{`
/// (a format string, which may name a variable that no identifier shows).
fn mentions(tokens: &TokenStream, names: &mut Vec<String>) -> bool {
    let mut formats = false;
    for token in tokens.clone() {
        match token {
            TokenTree::Group(group) => formats |= mentions(&group.stream(), names),
            TokenTree::Ident(ident) => {
                let name = ident.to_string();
                if !names.contains(&name) {
                    names.push(name);
                }
            }
            TokenTree::Literal(literal) => formats |= literal.to_string().contains('{'),
            TokenTree::Punct(_) => {}
        }
    }
    formats
}

/// The `Vec` gathered so far (only called when there is one).
fn gathered_elements(gathered: &Gathered) -> Ident {
    match gathered {
        Gathered::Elements(name) => name.clone(),
        _ => unreachable!("a part is cut when nothing is gathered as a Vec"),
    }
}

/// The generator the next part reads what was gathered with.
fn source_generator(gathered: &Gathered, scope: &[Ident], rt: &TokenStream) -> TokenStream {
    match gathered {
        Gathered::Nothing => unreachable!("set by every transform"),
        Gathered::Elements(name) => {
            let vars = tuple(scope);
            quote! { #vars <- #rt::Owned(&#name) }
        }
        Gathered::Groups { name, key, others } => {
            let others = tuple(others);
            quote! { ((#key), #others) <- &#name }
        }
        Gathered::Reduced { name, key, results } => {
            let results = tuple(results);
            quote! { ((#key), #results) <- #rt::Owned(&#name) }
        }
    }
}

/// `text` with each reduction's variable (`uses`: variable, use) written as the use.
fn shown(mut text: String, uses: &[(String, String)]) -> String {
    // The last first: `__parcomp_grouped_1` is a prefix of `__parcomp_grouped_10`.
    for (name, use_) in uses.iter().rev() {
        text = text.replace(name, use_);
    }
    text
}

/// A comprehension whose only `group by` reduces its groups directly, or not.
enum Reduced {
    Yes {
        /// Parsed again with each use of a grouped variable replaced by its reduction's.
        comprehension: syntax::Comprehension,
        /// The index of the `group by` among the qualifiers.
        group_by: usize,
        aggregates: Vec<aggregate::Aggregate>,
    },
    No(syntax::Comprehension),
}

/// `comprehension` (one branch, `marker` its marker's tokens) rewritten when it has one
/// `group by` and everything after it only reduces the grouped variables (see [`aggregate`]).
fn reduce_groups(
    comprehension: syntax::Comprehension,
    marker: &TokenStream,
    rt: &TokenStream,
) -> Reduced {
    let branch = &comprehension.branches[0];
    let group_bys: Vec<usize> = (branch.qualifiers.iter().enumerate())
        .filter(|(_, q)| {
            matches!(q, Qualifier::Transform(t) if matches!(t.kind, TransformKind::GroupBy { .. }))
        })
        .map(|(i, _)| i)
        .collect();
    let [g] = group_bys[..] else {
        return Reduced::No(comprehension);
    };
    let Qualifier::Transform(syntax::Transform {
        kind: TransformKind::GroupBy { key, .. }, ..
    }) = &branch.qualifiers[g]
    else {
        unreachable!("found above")
    };
    let names_of = |qualifiers: &[Qualifier]| -> Vec<Ident> {
        let mut names: Vec<Ident> = Vec::new();
        for name in qualifiers.iter().filter_map(Qualifier::pattern).flat_map(syntax::user_names) {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names
    };
    let before = names_of(&branch.qualifiers[..g]);
    let Ok(key_names) = group_key(key, &before) else {
        // Reported where the `group by` is cut.
        return Reduced::No(comprehension);
    };
    let grouped: Vec<Ident> = before.into_iter().filter(|n| !key_names.contains(n)).collect();
    let bound_after = names_of(&branch.qualifiers[g + 1..]);
    let head = &comprehension.head;
    let Some(aggregation) = aggregate::aggregation(
        &quote! { #head },
        &branch.written(g + 1),
        &grouped,
        &key_names,
        &bound_after,
        rt,
    ) else {
        return Reduced::No(comprehension);
    };
    let (new_head, before) = (aggregation.head, syntax::written(&branch.tokens[..=g]));
    let after = aggregation.after;
    let input = quote! { #marker #new_head | #(#before,)* #(#after),* };
    let mut errors = crate::error::Errors::default();
    match syntax::parse(input, &mut errors) {
        Some(parsed) if errors.finish(()).is_ok() => {
            Reduced::Yes { comprehension: parsed, group_by: g, aggregates: aggregation.aggregates }
        }
        // The rewriting only replaces uses with variables; should it fail to parse, the
        // slices stay.
        _ => Reduced::No(comprehension),
    }
}

/// The variables of a `group by` key: a variable bound before it, or a tuple of them.
fn group_key(key: &Expr, scope: &[Ident]) -> Result<Vec<Ident>, syn::Error> {
    fn names(e: &Expr, out: &mut Vec<Ident>) -> bool {
        match e {
            Expr::Path(p) if p.qself.is_none() && p.path.get_ident().is_some() => {
                out.push(p.path.get_ident().cloned().expect("checked"));
                true
            }
            Expr::Paren(p) => names(&p.expr, out),
            Expr::Tuple(t) => t.elems.iter().all(|e| names(e, out)),
            _ => false,
        }
    }
    let help = "group by a variable bound before it, or a tuple of them: `group by dept`, \
                `group by (year, city)`; for a computed key, bind it first: `let k = x % 3, \
                group by k`";
    let mut found = Vec::new();
    if !names(key, &mut found) {
        return Err(error_spanned(
            key,
            format!("the key of `group by` is an expression, `{}`", text(key)),
            help,
        ));
    }
    for name in &found {
        if !scope.contains(name) {
            return Err(error_spanned(
                name,
                format!("`{name}` is not a variable bound before this `group by`"),
                help,
            ));
        }
    }
    Ok(found)
}

/// The comprehension `input` of the macro `name` (whose arguments before `;`, for
/// `par_reduce!`, are `prefix`), cut at its transforms and emitted. `written` is the macro as
/// the user wrote it, which `name` compiles (`par_max_by_key!` as `par_max!`).
pub(crate) fn expand(
    name: Macro,
    written: Macro,
    prefix: TokenStream,
    input: TokenStream,
    rt: &TokenStream,
) -> Result<TokenStream, syn::Error> {
    let cut = cut(written, input, rt)?;
    let mut errors = Errors::default();
    let mut statements = Vec::new();
    // The steps already emitted with the part before them: an `order by` and its `take`.
    let mut fused = 0;
    for (k, step) in cut.steps.iter().enumerate() {
        if fused > 0 {
            fused -= 1;
            continue;
        }
        if let Some(top) = order_by_take_after(&cut.steps, k) {
            // `part, order by KEY, take N`: the part's best N kept as they are produced.
            fused = 2;
            match crate::compile(top.tokens.clone(), Terminal::Collect) {
                Ok(compiled) => {
                    let site = format_ident!("__PARCOMP_STEP_{}", k + 1, span = Span::mixed_site());
                    let (what, take_name) = (top.what, top.take_name);
                    let value = crate::back::rust::emit_order_by_take(
                        &compiled,
                        rt,
                        &site,
                        top.descending,
                        count_value(top.count),
                        top.key,
                    );
                    let site = step_site(&site, what, rt);
                    statements.push(quote! { #site let #take_name = #value; });
                }
                Err(e) => errors.push(e),
            }
            continue;
        }
        match step {
            Step::Part { name, tokens, finish } => {
                match crate::compile(tokens.clone(), Terminal::Collect) {
                    Ok(compiled) => {
                        let value = match finish {
                            Finish::Take(count) => {
                                crate::back::rust::emit_take(&compiled, rt, count)
                            }
                            Finish::Collect => crate::back::rust::emit(&compiled, rt),
                            Finish::GroupReduce { reducers, macros, .. } => {
                                // The reductions' macros were consumed here: each mentioned,
                                // so that their imports are used.
                                statements.extend(macros.iter().map(|m| quote! { #m![@used]; }));
                                // The items read each grouped value as its slice would give it.
                                statements.push(quote! {
                                    #[allow(unused_imports)]
                                    use #rt::{GroupedByRef as _, GroupedByValue as _};
                                });
                                let reducer = quote! { #rt::GroupReduce::new((#(#reducers,)*)) };
                                let why = "`group by` reduces each group as its elements are \
                                           produced, in a table of keys per thread: on the host";
                                crate::back::rust::emit_reduce(&compiled, rt, reducer, why)
                            }
                        };
                        statements.push(quote! { let #name = #value; });
                    }
                    Err(e) => errors.push(e),
                }
            }
            Step::Call { name, input, what, call } => {
                let site = format_ident!("__PARCOMP_STEP_{}", k, span = Span::mixed_site());
                let value = match call {
                    // Located at the key, where a key that is no `OrderKey` is reported. (An
                    // `order by` with a `take` after it was emitted with its part.)
                    Call::OrderBy { descending, key } => {
                        let input = Ident::new(&input.to_string(), input.span().located_at(*key));
                        quote::quote_spanned! {*key=> #rt::order_by(&#site, #input, #descending) }
                    }
                    Call::GroupBy { key } => {
                        let input = Ident::new(&input.to_string(), input.span().located_at(*key));
                        quote::quote_spanned! {*key=> #rt::group_by(&#site, #input) }
                    }
                    Call::Take(count) => {
                        let count = count_value(count);
                        quote! { #rt::take_vec(#input, #count) }
                    }
                    Call::Skip(count) => {
                        let count = count_value(count);
                        quote! { #rt::skip_vec(#input, #count) }
                    }
                };
                let site = step_site(&site, what, rt);
                statements.push(quote! { #site let #name = #value; });
            }
        }
    }
    let last_tokens = &cut.last;
    let last = crate::plan_of(name, quote! { #prefix #last_tokens })
        .map(|compiled| crate::back::rust::emit(&compiled, rt));
    let last = match last {
        Ok(value) => Some(value),
        Err(e) => {
            errors.push(e);
            None
        }
    };
    errors.finish(())?;
    Ok(quote! { { #(#statements)* #last } })
}

/// When the step after `steps[k]` (an `order by`) is a `take N` of its result: that step's
/// name and `N`.
fn take_after(steps: &[Step], k: usize) -> Option<(&Ident, &Expr)> {
    let Step::Call { name: sorted, call: Call::OrderBy { .. }, .. } = &steps[k] else {
        return None;
    };
    match steps.get(k + 1) {
        Some(Step::Call { name, input, call: Call::Take(count), .. }) if input == sorted => {
            Some((name, count))
        }
        _ => None,
    }
}

/// The `static` `name` of a step's runtime `Site` in the trace: `what` as written, here.
fn step_site(name: &Ident, what: &str, rt: &TokenStream) -> TokenStream {
    quote! {
        static #name: #rt::Site = #rt::Site {
            text: #what,
            file: ::core::file!(),
            line: ::core::line!(),
            column: ::core::column!(),
        };
    }
}

/// A part, the `order by` of its elements and the `take` of theirs: emitted as one.
struct OrderByTake<'a> {
    tokens: &'a TokenStream,
    what: &'a str,
    descending: bool,
    key: Span,
    take_name: &'a Ident,
    count: &'a Expr,
}

/// When `steps[k]` is a part whose elements an `order by` sorts and a `take N` cuts: the three.
fn order_by_take_after(steps: &[Step], k: usize) -> Option<OrderByTake<'_>> {
    let Step::Part { name, tokens, finish: Finish::Collect } = &steps[k] else {
        return None;
    };
    let Some(Step::Call { input, what, call: Call::OrderBy { descending, key }, .. }) =
        steps.get(k + 1)
    else {
        return None;
    };
    let (take_name, count) = take_after(steps, k + 1).filter(|_| input == name)?;
    Some(OrderByTake { tokens, what, descending: *descending, key: *key, take_name, count })
}

/// `take N`'s count as a `usize`, a type error located at `N` otherwise.
fn count_value(count: &Expr) -> TokenStream {
    let span = syn::spanned::Spanned::span(count);
    let count = crate::back::rust::unparenthesized(count);
    quote::quote_spanned! {span=> { let count: usize = #count; count } }
}

/// `par_explain!` of a comprehension with transforms: each part's plan, and the steps between.
pub(crate) fn explain(input: TokenStream, rt: &TokenStream) -> Result<String, syn::Error> {
    let cut = cut(Macro::Par, input, rt)?;
    let mut out = String::new();
    let mut errors = Errors::default();
    let parts = cut.steps.iter().filter(|s| matches!(s, Step::Part { .. })).count() + 1;
    let mut k = 0;
    let mut part = |tokens: &TokenStream, note: &str, out: &mut String, errors: &mut Errors| {
        k += 1;
        match crate::compile(tokens.clone(), Terminal::Collect) {
            Ok(compiled) => {
                out.push_str(&format!("part {k} of {parts}{note}:\n"));
                out.push_str(&compiled.explain());
            }
            Err(e) => errors.push(e),
        }
    };
    for (k, step) in cut.steps.iter().enumerate() {
        match step {
            Step::Part { tokens, finish, .. } => {
                let note = match finish {
                    Finish::Take(count) => format!(
                        ", its first {} elements, lazily (on the host, window by window)",
                        text(count)
                    ),
                    Finish::Collect => match order_by_take_after(&cut.steps, k) {
                        Some(top) => format!(
                            ", its best {} by the `{}` after it kept as they are produced, never \
                             gathered (on the host, the best of each thread merged; gathered and \
                             sorted on a device forced for every run when the key is one number)",
                            text(top.count),
                            top.what
                        ),
                        None => String::new(),
                    },
                    Finish::GroupReduce { group_by, .. } => format!(
                        ", reduced per key for the `{group_by}` after it: the groups are not \
                         formed, every use of them is a reduction (a table of keys per thread, \
                         merged; keys in ascending order)"
                    ),
                };
                let before = out.len();
                part(tokens, &note, &mut out, &mut errors);
                if let Finish::GroupReduce { uses, .. } = finish {
                    let texts: Vec<&str> = uses.iter().map(|(_, u)| u.as_str()).collect();
                    // The part's plan ends in its elements, which are reduced per key instead,
                    // on the host whatever the plan could do.
                    let explained = out.split_off(before);
                    for line in explained.lines() {
                        let line = if line.starts_with("  collect ") {
                            format!("  reduce   per key: {}", texts.join(", "))
                        } else if line.starts_with("  device ") {
                            "  device   no: `group by`'s per-key reduction runs on the host"
                                .to_string()
                        } else {
                            line.to_string()
                        };
                        out.push_str(&line);
                        out.push('\n');
                    }
                    for (name, use_) in uses {
                        out.push_str(&format!("  where    {name} = {use_}\n"));
                    }
                }
            }
            Step::Call { what, call, .. } => {
                let how = match call {
                    Call::OrderBy { .. } if take_after(&cut.steps, k).is_some() => {
                        "the first elements by the key, as a stable sort orders them, without \
                         sorting all: a bounded selection per thread as the part runs, merged"
                    }
                    Call::OrderBy { .. } => {
                        "stable sort by the key (a radix sort for one number or a pair of \
                         numbers, on the device for one number when it runs there; other tuples \
                         lexicographically; floats by total_cmp)"
                    }
                    Call::GroupBy { .. } => {
                        "stable sort by the key (for one number or a pair of numbers: a counting \
                         sort, the keys hashed or indexed, only the distinct keys sorted), one \
                         group per key in ascending order; the other variables become the \
                         group's slices"
                    }
                    Call::Take(_) if k > 0 && take_after(&cut.steps, k - 1).is_some() => {
                        "the first elements (chosen with the order by above)"
                    }
                    Call::Take(_) => "the first elements",
                    Call::Skip(_) => "all but the first elements",
                };
                out.push_str(&format!("then {what}: {how}\n"));
            }
        }
    }
    part(&cut.last, ", the result", &mut out, &mut errors);
    errors.finish(out)
}
