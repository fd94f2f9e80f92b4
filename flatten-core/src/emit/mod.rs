//! Emission for the CPU: the plan as a chain of runtime calls.
//!
//! ```text
//! // par![(x, y, z) | x <- 1..n, y <- x..n, z <- y..x + y, z < n, x * x + y * y == z * z]
//! {
//!     static __PARCOMP_SITE: rt::Site = rt::Site { text: "...", file: file!(), .. };
//!     rt::source(&__PARCOMP_SITE, &((1)..(n)))
//!         .expand(|&x| (x)..(n))
//!         .expand(|&(x, y)| (y)..(x + y))
//!         .filter(|&(_, z)| z < n)
//!         .filter(|&((x, y), z)| x * x + y * y == z * z)
//!         .map(|((x, y), z)| (x, y, z))
//!         .collect()
//! }
//! ```
//!
//! The context is the values bound so far as nested pairs, `((x, y), z)`; each closure
//! destructures it with the user's own patterns, binding only the variables it uses (the rest
//! are `_`, so nothing unused is bound and nothing is copied needlessly). When a name is bound
//! twice, the later binding shadows the earlier, as in nested loops.

use crate::analysis::free_vars::mentions;
use crate::analysis::generator::{Form, IndexSource, PlaceOp, PlaceRoot};
use crate::plan::{Plan, Prelude, StepKind, Terminal, ZipBranch};
use proc_macro2::{Span, TokenStream};
use quote::{quote, ToTokens};
use std::collections::HashSet;
use syn::{Expr, Ident, Pat};

/// Emits the plan as Rust code calling the runtime at path `rt`.
pub fn emit(plan: &Plan, rt: &TokenStream) -> TokenStream {
    let site = Ident::new("__PARCOMP_SITE", Span::mixed_site());
    let text = format!("{}![{}]", plan.terminal.macro_name(), plan.text);
    let prelude = plan.prelude.iter().map(|p| match p {
        Prelude::Let { pat, expr } => quote! { let #pat = #expr; },
        Prelude::Hoist { name, expr } => quote! { let #name = &(#expr); },
        Prelude::Branch { name, plan } => {
            let branch = emit(plan, rt);
            quote! { let #name = #branch; }
        }
    });
    let chain = stages(plan, rt, &site);
    // The nested comprehensions' macros were consumed by this one; mention each, so that the
    // user's `use parcomp::par_sum;` does not look unused.
    let used = plan.nested.iter().map(|n| {
        let path = &n.path;
        quote! { #path![@used]; }
    });
    let terminal = match &plan.terminal {
        Terminal::Collect => quote! { .collect() },
        other => {
            let reducer = reducer(other, rt);
            quote! { .reduce_with(#reducer) }
        }
    };
    quote! {
        {
            static #site: #rt::Site = #rt::Site {
                text: #text,
                file: ::core::file!(),
                line: ::core::line!(),
                column: ::core::column!(),
            };
            #(#used)*
            #(#prelude)*
            #chain
                #terminal
        }
    }
}

/// The stages of a plan, its nested comprehensions and its head: `source(..).expand(..)
/// ... .map(|ctx| head)`. An inner plan's chain continues the pipeline it is given.
fn stages(plan: &Plan, rt: &TokenStream, site: &Ident) -> TokenStream {
    let mut chain = TokenStream::new();
    for step in &plan.steps {
        let slots = &plan.slots[..step.context];
        let visible: HashSet<String> =
            slots.iter().flat_map(crate::syntax::bound_names).map(|i| i.to_string()).collect();
        let code = match &step.kind {
            StepKind::Root(form) => {
                let source = source_value(form, rt);
                quote! { #rt::source(&#site, &(#source)) }
            }
            StepKind::Zip(branches) => {
                let mut sources = branches.iter().map(|branch| match branch {
                    ZipBranch::Generator(form) => source_value(form, rt),
                    ZipBranch::Computed(name) => quote! { &#name },
                });
                let first = sources.next().expect("a zip has branches");
                let zipped = sources.fold(first, |a, b| quote! { #rt::zip(#a, #b) });
                quote! { #rt::source(&#site, &(#zipped)) }
            }
            StepKind::Product(form) if form.maps.is_empty() || !maps_use(form, &visible) => {
                let source = source_value(form, rt);
                quote! { .product(&(#source)) }
            }
            StepKind::Product(form) => {
                let source = index_source(&form.source, rt);
                let map = element_map(form, slots, &visible);
                quote! { .product_map(&(#source), #map) }
            }
            StepKind::Expand(form) => {
                let uses = source_uses(&form.source, &visible);
                let ctx = by_ref(context_pattern(slots, &uses));
                let source = index_source(&form.source, rt);
                if form.maps.is_empty() {
                    quote! { .expand(|#ctx| #source) }
                } else {
                    let map = element_map(form, slots, &visible);
                    quote! { .expand_map(|#ctx| #source, #map) }
                }
            }
            StepKind::Filter(expr) => {
                let ctx = by_ref(context_pattern(slots, &uses_in(expr, &visible)));
                quote! { .filter(|#ctx| #expr) }
            }
            StepKind::Let(expr) => {
                let ctx = by_ref(context_pattern(slots, &uses_in(expr, &visible)));
                quote! { .bind(|#ctx| #expr) }
            }
        };
        chain.extend(code);
    }
    let inner = Ident::new("__parcomp_inner", Span::mixed_site());
    for nested in &plan.nested {
        let steps = stages(&nested.plan, rt, site);
        let reducer = match &nested.plan.terminal {
            Terminal::Collect => quote! { #rt::CollectVec },
            other => reducer(other, rt),
        };
        chain.extend(quote! { .nested(|#inner| #inner #steps, #reducer) });
    }
    let head = &plan.head;
    let all: HashSet<String> =
        plan.slots.iter().flat_map(crate::syntax::bound_names).map(|i| i.to_string()).collect();
    let ctx = context_pattern(&plan.slots, &uses_in(head, &all)).unwrap_or_else(|| quote! { _ });
    chain.extend(quote! { .map(|#ctx| #head) });
    chain
}

/// The runtime reducer of a terminal other than `Collect`.
fn reducer(terminal: &Terminal, rt: &TokenStream) -> TokenStream {
    match terminal {
        Terminal::Collect => quote! { #rt::CollectVec },
        Terminal::Sum => quote! { #rt::Sum::new() },
        Terminal::Product => quote! { #rt::Product::new() },
        Terminal::Min => quote! { #rt::Min::new() },
        Terminal::Max => quote! { #rt::Max::new() },
        Terminal::Count => quote! { #rt::Count },
        Terminal::Any => quote! { #rt::Any },
        Terminal::All => quote! { #rt::All },
        Terminal::Reduce { op, identity } => quote! { #rt::Fold::new(#identity, #op) },
    }
}

/// The comprehension variables among `visible` that `expr` mentions.
fn uses_in(expr: &Expr, visible: &HashSet<String>) -> HashSet<String> {
    mentions(expr, visible).into_iter().map(|i| i.to_string()).collect()
}

/// The variables the size and elements of an index source read.
fn source_uses(source: &IndexSource, visible: &HashSet<String>) -> HashSet<String> {
    let mut uses = HashSet::new();
    source.size_exprs(&mut |e| uses.extend(uses_in(e, visible)));
    let mut current = source;
    loop {
        match current {
            IndexSource::StepBy { inner, .. } | IndexSource::Rev { inner } => current = inner,
            IndexSource::Place(place) => {
                if let PlaceRoot::Bound(ident) = &place.root {
                    uses.insert(ident.to_string());
                }
                break;
            }
            _ => break,
        }
    }
    uses
}

fn maps_use(form: &Form, visible: &HashSet<String>) -> bool {
    form.maps.iter().any(|f| !uses_in(f, visible).is_empty())
}

/// `|&ctx, item| f2(f1(item))`: the element map of a generator, which may use the context.
fn element_map(form: &Form, slots: &[Pat], visible: &HashSet<String>) -> TokenStream {
    let mut uses = HashSet::new();
    for f in &form.maps {
        uses.extend(uses_in(f, visible));
    }
    let ctx = by_ref(context_pattern(slots, &uses));
    let item = Ident::new("__parcomp_item", Span::mixed_site());
    let mut value = item.to_token_stream();
    for f in &form.maps {
        value = quote! { (#f)(#value) };
    }
    quote! { |#ctx, #item| #value }
}

/// The value of a source that does not depend on the context, maps included.
fn source_value(form: &Form, rt: &TokenStream) -> TokenStream {
    let mut value = index_source(&form.source, rt);
    for f in &form.maps {
        value = quote! { #rt::map(#value, #f) };
    }
    value
}

/// The runtime `Source` for the index part of a generator.
fn index_source(source: &IndexSource, rt: &TokenStream) -> TokenStream {
    match source {
        IndexSource::Range { start, end, inclusive: false } => quote! { (#start)..(#end) },
        IndexSource::Range { start, end, inclusive: true } => quote! { (#start)..=(#end) },
        IndexSource::StepBy { inner, step } => {
            let inner = index_source(inner, rt);
            quote! { #rt::step_by(#inner, #step) }
        }
        IndexSource::Rev { inner } => {
            let inner = index_source(inner, rt);
            quote! { #rt::rev(#inner) }
        }
        IndexSource::Collection(expr) => quote! { &(#expr) },
        IndexSource::Hoisted(name) => name.to_token_stream(),
        IndexSource::Place(place) => {
            let mut code = match &place.root {
                PlaceRoot::Invariant(expr) => quote! { (#expr) },
                PlaceRoot::Hoisted(name) => name.to_token_stream(),
                PlaceRoot::Bound(ident) => ident.to_token_stream(),
            };
            for op in &place.ops {
                code = match op {
                    PlaceOp::Index(index) => quote! { #code[#index] },
                    PlaceOp::Row(index) => quote! { #code.row(#index) },
                    PlaceOp::Field(member) => quote! { #code.#member },
                };
            }
            // An indexed row is a place: borrow it. `.row(..)`, fields and variables are
            // already values that the runtime reads (slices, ranges).
            if matches!(place.ops.last(), Some(PlaceOp::Index(_))) {
                quote! { &#code }
            } else {
                code
            }
        }
    }
}

/// The context pattern for `slots`, binding only the names in `uses` (the last binding of a
/// name wins; everything else is `_`).
fn context_pattern(slots: &[Pat], uses: &HashSet<String>) -> Option<TokenStream> {
    let mut claimed = HashSet::new();
    let mut patterns: Vec<TokenStream> =
        slots.iter().rev().map(|slot| rewrite(slot, uses, &mut claimed)).collect();
    patterns.reverse();
    if claimed.is_empty() {
        return None;
    }
    let mut patterns = patterns.into_iter();
    let first = patterns.next()?;
    Some(patterns.fold(first, pair))
}

/// `&pattern`, or `_` when nothing is bound.
fn by_ref(pattern: Option<TokenStream>) -> TokenStream {
    match pattern {
        Some(p) => quote! { &#p },
        None => quote! { _ },
    }
}

/// `(a, b)`, or `_` when neither binds anything.
fn pair(a: TokenStream, b: TokenStream) -> TokenStream {
    if is_wild(&a) && is_wild(&b) {
        quote! { _ }
    } else {
        quote! { (#a, #b) }
    }
}

fn is_wild(pattern: &TokenStream) -> bool {
    pattern.to_string() == "_"
}

fn rewrite(pat: &Pat, uses: &HashSet<String>, claimed: &mut HashSet<String>) -> TokenStream {
    match pat {
        Pat::Ident(p) => {
            let name = p.ident.to_string();
            if uses.contains(&name) && claimed.insert(name) {
                p.ident.to_token_stream()
            } else {
                quote! { _ }
            }
        }
        Pat::Paren(p) => rewrite(&p.pat, uses, claimed),
        Pat::Tuple(t) => {
            // Right to left, so the last of duplicate names (impossible within one checked
            // pattern, but cheap to respect) would win.
            let mut elems: Vec<TokenStream> =
                t.elems.iter().rev().map(|p| rewrite(p, uses, claimed)).collect();
            elems.reverse();
            if elems.iter().all(is_wild) {
                quote! { _ }
            } else if elems.len() == 1 {
                let only = &elems[0];
                quote! { (#only,) }
            } else {
                quote! { (#(#elems),*) }
            }
        }
        _ => quote! { _ },
    }
}

#[cfg(test)]
mod tests;
