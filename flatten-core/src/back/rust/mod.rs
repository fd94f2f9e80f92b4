//! Emission for Rust: the plan as a chain of runtime calls, with its device half beside it.
//!
//! ```text
//! // par![(x, y, z) | x <- 1..n, y <- x..n, z <- y..x + y, z < n, x * x + y * y == z * z]
//! {
//!     static __PARCOMP_SITE: rt::Site = rt::Site { text: "...", file: file!(), .. };
//!     rt::source(&__PARCOMP_SITE, (1)..(n))
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
//! are `_`, so nothing unused is bound and nothing is copied needlessly). Uses are by variable,
//! so when a name is bound twice the binding each closure sees is the one the analysis
//! resolved, as in nested loops.
//!
//! The device half (`offload`) is emitted beside the chain: the kernels' static plan, and the
//! observations of the call site (`.collect_on(offload)` instead of `.collect()`).

mod index_view;
mod offload;

pub(crate) use offload::constraint;

use crate::analysis::generator::{Form, IndexSource, PlaceOp, PlaceRoot};
use crate::plan::kernel_ir::VarId;
use crate::plan::{Compiled, Plan, Prelude, Slot, StepKind, Terminal, ZipBranch};
use proc_macro2::{Span, TokenStream};
use quote::{quote, ToTokens};
use syn::{Ident, Pat};

/// Emits a compiled comprehension as Rust code calling the runtime at path `rt`.
pub fn emit(compiled: &Compiled, rt: &TokenStream) -> TokenStream {
    emit_finishing(compiled, rt, Finishing::Plan)
}

/// How an emitted chain ends.
enum Finishing<'a> {
    /// With the plan's terminal, and its device half.
    Plan,
    /// `take count`: see [`emit_take`].
    Take(&'a syn::Expr),
    /// Reduced on the host by `reducer` (a runtime `Reducer` of the elements), for the reason
    /// `why` the trace gives.
    Reduce { reducer: TokenStream, why: &'a str },
    /// `order by KEY [desc], take count` of its `(element, key)` pairs: see [`emit_order_by_take`].
    OrderByTake { site: &'a Ident, descending: bool, count: TokenStream, key: Span },
}

/// Emits the part of a comprehension whose elements are reduced on the host by `reducer` (an
/// expression of a runtime `Reducer` of its elements; `group by`'s per-key reduction), the
/// trace saying `why` it runs on the host.
pub fn emit_reduce(
    compiled: &Compiled,
    rt: &TokenStream,
    reducer: TokenStream,
    why: &str,
) -> TokenStream {
    emit_finishing(compiled, rt, Finishing::Reduce { reducer, why })
}

/// Emits the part of a comprehension that ends in `take count` straight after its generators:
/// collected over growing windows of its first generator, each part of a window stopping once
/// it has `count` elements (see the runtime's `take_first`). It runs on the host: the device
/// would compute every element before the first `count` could be picked.
pub fn emit_take(compiled: &Compiled, rt: &TokenStream, count: &syn::Expr) -> TokenStream {
    emit_finishing(compiled, rt, Finishing::Take(count))
}

/// Emits the part of a comprehension whose `(element, key)` pairs an `order by KEY [desc]`
/// followed by `take count` reads: the runtime's `order_by_take_part`, which keeps each thread's
/// best `count` as they are produced (or, when a device is forced and the key is one number,
/// runs the part with its device half and sorts there). `site` is the `order by`'s; `key` its
/// key's span, where a key that is no `OrderKey` is reported.
pub fn emit_order_by_take(
    compiled: &Compiled,
    rt: &TokenStream,
    site: &Ident,
    descending: bool,
    count: TokenStream,
    key: Span,
) -> TokenStream {
    emit_finishing(compiled, rt, Finishing::OrderByTake { site, descending, count, key })
}

fn emit_finishing(compiled: &Compiled, rt: &TokenStream, finishing: Finishing) -> TokenStream {
    let plan = &compiled.plan;
    let site = Ident::new("__PARCOMP_SITE", Span::mixed_site());
    let text = format!("{}![{}]", plan.terminal.as_macro(), plan.text);
    let prelude = plan.prelude.iter().map(|p| match p {
        Prelude::Let { pat, expr } => {
            let expr = unparenthesized(expr);
            quote! { let #pat = #expr; }
        }
        // A reference (`&rows`) is bound as it is: borrowing it again would tie the elements
        // it lends (`row <- &rows` gives `&Vec<T>`) to a temporary that the enclosing block
        // drops, and a part of a comprehension cut at a transform returns them.
        Prelude::Hoist { name, expr } if is_reference(expr) => quote! { let #name = #expr; },
        Prelude::Hoist { name, expr } => quote! { let #name = &(#expr); },
        Prelude::Macro { name, tokens } => quote! { let #name = #rt::par![#tokens]; },
    });
    let root = Ident::new("__parcomp_root", Span::mixed_site());
    let root_value = match plan.steps.first().map(|s| &s.kind) {
        Some(StepKind::Root(form)) => source_value(form, rt),
        Some(StepKind::Zip(branches)) => {
            let mut sources = branches.iter().map(|branch| match branch {
                ZipBranch::Generator(form) => source_value(form, rt),
                ZipBranch::Computed(name) => quote! { &#name },
            });
            let first = sources.next().expect("a zip has branches");
            sources.fold(first, |a, b| quote! { #rt::zip(#a, #b) })
        }
        _ => quote! { () },
    };
    let mut products = Vec::new();
    // A `take`'s root is a window of the whole source, not the generator's own value.
    let root_copied = !matches!(finishing, Finishing::Take(_));
    let chain = stages(plan, rt, (&site, &root, root_copied), &mut products);
    // Captured collections the closures only index or measure, read through views bound once.
    let (chain, views) = index_view::with_views(chain, rt);
    let product_names: Vec<&Ident> = products.iter().map(|(name, _)| name).collect();
    let product_values: Vec<&TokenStream> = products.iter().map(|(_, value)| value).collect();
    // The nested comprehensions' macros were consumed by this one; mention each, so that the
    // user's `use parcomp::par_sum;` does not look unused.
    let used = plan.nested.iter().map(|n| {
        let path = &n.path;
        quote! { #path![@used]; }
    });
    let run = Ident::new("__parcomp_run", Span::mixed_site());
    let body = match finishing {
        Finishing::Take(count) => {
            let whole = Ident::new("__parcomp_whole", Span::mixed_site());
            let range = Ident::new("__parcomp_range", Span::mixed_site());
            let need = Ident::new("__parcomp_need", Span::mixed_site());
            let span = syn::spanned::Spanned::span(count);
            let count = unparenthesized(count);
            let count = quote::quote_spanned! {span=> { let count: usize = #count; count } };
            let why = "`take` stops once it has its elements: it runs on the host, window by \
                       window";
            quote! {
                (#whole, #(#product_names,)*) => {
                    #rt::take_first(#count, #rt::Source::size(&#whole), |#range, #need| {
                        let #root = #rt::Window::new(&#whole, #range);
                        let #run = #chain;
                        #run.reduce_on(#rt::Take::new(#need), #rt::Offload::host_only(#why))
                    })
                }
            }
        }
        Finishing::Reduce { reducer, why } => quote! {
            (#root, #(#product_names,)*) => {
                let #run = #chain;
                #run.reduce_on(#reducer, #rt::Offload::host_only(#why))
            }
        },
        Finishing::OrderByTake { site, descending, count, key } => {
            let (device_items, offload_value) = offload::emit(compiled, rt, &root, &run);
            let call = quote::quote_spanned! {key=> #rt::order_by_take_part };
            quote! {
                (#root, #(#product_names,)*) => {
                    let #run = #chain;
                    #device_items
                    #call(&#site, #run, #offload_value, #descending, #count)
                }
            }
        }
        Finishing::Plan => plan_body(compiled, rt, &root, &run, chain, &product_names),
    };
    quote! {
        {
            static #site: #rt::Site = #rt::Site {
                text: #text,
                file: ::core::file!(),
                line: ::core::line!(),
                column: ::core::column!(),
            };
            #[allow(unused_imports)]
            use #rt::{
                ElementsByRef as _, ElementsByValue as _, IndexViewItself as _, IndexViewSlice as _,
            };
            #(#used)*
            #(#prelude)*
            #views
            // A `match`, not `let`s: temporaries of the sources (`&(&xs)` in a zip) live until
            // its end, as they did when the chain was the block's value.
            match (#root_value, #(#product_values,)*) {
                #body
            }
        }
    }
}

/// The arm that runs the chain with its device half and its terminal.
fn plan_body(
    compiled: &Compiled,
    rt: &TokenStream,
    root: &Ident,
    run: &Ident,
    chain: TokenStream,
    product_names: &[&Ident],
) -> TokenStream {
    let plan = &compiled.plan;
    let (device_items, offload_value) = offload::emit(compiled, rt, root, run);
    let terminal = match &plan.terminal {
        Terminal::Collect if compiled.device_result => {
            quote! { .collect_device_on(#offload_value) }
        }
        Terminal::Collect => quote! { .collect_on(#offload_value) },
        other => {
            let reducer = reducer(other, rt);
            quote! { .reduce_on(#reducer, #offload_value) }
        }
    };
    quote! {
        (#root, #(#product_names,)*) => {
            let #run = #chain;
            #device_items
            #run #terminal
        }
    }
}

/// The stages of a plan, its nested comprehensions and its head: `source(..).expand(..)
/// ... .map(|ctx| head)`. An inner plan's chain continues the pipeline it is given.
/// The chain of stages of `plan`. The sources of products (evaluated once, borrowed by the
/// pipeline) are bound in `products` first, so they outlive it.
///
/// A root that is an integer or `char` range (`root_copied`) is given to the pipeline as a copy
/// of its own, not borrowed: the loops then read its start from the pipeline's source, which the
/// compiler knows nothing writes, and keep it in a register; through a reference to the
/// binding they loaded it again after every value they stored.
fn stages(
    plan: &Plan,
    rt: &TokenStream,
    (site, root, root_copied): (&Ident, &Ident, bool),
    products: &mut Vec<(Ident, TokenStream)>,
) -> TokenStream {
    let mut chain = TokenStream::new();
    let bind = |value: TokenStream, products: &mut Vec<(Ident, TokenStream)>| {
        let name =
            quote::format_ident!("__parcomp_product_{}", products.len(), span = Span::mixed_site());
        products.push((name.clone(), value));
        name
    };
    for step in &plan.steps {
        let slots = &plan.slots[..step.context];
        let code = match &step.kind {
            StepKind::Root(form)
                if root_copied
                    && form.maps.is_empty()
                    && matches!(form.source, IndexSource::Range { .. }) =>
            {
                quote! { #rt::source(&#site, ::core::clone::Clone::clone(&#root)) }
            }
            StepKind::Root(_) | StepKind::Zip(_) => quote! { #rt::source(&#site, &#root) },
            StepKind::Product(form) if step.map_uses.is_empty() => {
                let source = bind(source_value(form, rt), products);
                quote! { .product(&#source) }
            }
            StepKind::Product(form) => {
                let source = bind(index_source(&form.source, rt), products);
                let map = element_map(form, slots, &step.map_uses, rt);
                quote! { .product_map(&#source, #map) }
            }
            StepKind::Expand(form) => {
                let ctx = by_ref(context_pattern(slots, &step.source_uses));
                let source = index_source(&form.source, rt);
                if form.maps.is_empty() {
                    quote! { .expand(|#ctx| #source) }
                } else {
                    let map = element_map(form, slots, &step.map_uses, rt);
                    quote! { .expand_map(|#ctx| #source, #map) }
                }
            }
            StepKind::Filter(e) => {
                let expr = unparenthesized(&e.expr);
                let ctx = by_ref(context_pattern(slots, &step.uses));
                quote! { .filter(|#ctx| #expr) }
            }
            StepKind::Let(e) => {
                let expr = unparenthesized(&e.expr);
                let ctx = by_ref(context_pattern(slots, &step.uses));
                quote! { .bind(|#ctx| #expr) }
            }
        };
        chain.extend(code);
    }
    let inner = Ident::new("__parcomp_inner", Span::mixed_site());
    for nested in &plan.nested {
        let steps = stages(&nested.plan, rt, (site, root, root_copied), products);
        let reducer = match &nested.plan.terminal {
            Terminal::Collect => quote! { #rt::CollectVec },
            other => reducer(other, rt),
        };
        chain.extend(quote! { .nested(|#inner| #inner #steps, #reducer) });
    }
    let head = unparenthesized(&plan.head.expr);
    let ctx = context_pattern(&plan.slots, &plan.head_uses).unwrap_or_else(|| quote! { _ });
    chain.extend(quote! { .map(|#ctx| #head) });
    chain
}

/// Whether `expr` is a reference expression (`&rows`, `(&rows)`).
fn is_reference(expr: &syn::Expr) -> bool {
    matches!(unparenthesized(expr), syn::Expr::Reference(_))
}

/// `expr` without the parentheses around it. A comprehension's head, filter, `let` or count
/// may need them (`par![(a | b) | ...]`: a top-level `|` separates the head), or a user
/// writes them; emitted as a closure's body or a `let`'s value, rustc would call them
/// unnecessary and suggest removing them, which would break the comprehension.
pub(crate) fn unparenthesized(mut expr: &syn::Expr) -> &syn::Expr {
    while let syn::Expr::Paren(p) = expr {
        if !p.attrs.is_empty() {
            break;
        }
        expr = &p.expr;
    }
    expr
}

/// The runtime reducer of a terminal other than `Collect`.
fn reducer(terminal: &Terminal, rt: &TokenStream) -> TokenStream {
    match terminal {
        Terminal::Collect => quote! { #rt::CollectVec },
        Terminal::Sum => quote! { #rt::SumReducer::new() },
        Terminal::Product => quote! { #rt::ProductReducer::new() },
        Terminal::Min => quote! { #rt::MinReducer::new() },
        Terminal::Max => quote! { #rt::MaxReducer::new() },
        Terminal::Count => quote! { #rt::Count },
        Terminal::Any => quote! { #rt::Any },
        Terminal::All => quote! { #rt::All },
        Terminal::Reduce { op, identity, .. } => quote! { #rt::Fold::new(#identity, #op) },
    }
}

/// `|&ctx, item| f2(f1(item))`: the element map of a generator, which may use the context.
/// Each map is applied through `rt::apply`, which types a closure's parameter by the item.
fn element_map(form: &Form, slots: &[Slot], uses: &[VarId], rt: &TokenStream) -> TokenStream {
    let ctx = by_ref(context_pattern(slots, uses));
    let item = Ident::new("__parcomp_item", Span::mixed_site());
    let mut value = item.to_token_stream();
    for f in &form.maps {
        value = quote! { #rt::apply(#value, &(#f)) };
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
        // A reference expression (`&words`) is passed as it is: borrowing it again would tie
        // borrowed elements to a temporary.
        IndexSource::Collection(expr @ syn::Expr::Reference(_)) => {
            elements(quote! { #expr }, &expr, rt)
        }
        IndexSource::Collection(expr) => elements(quote! { &(#expr) }, &expr, rt),
        IndexSource::Hoisted(name) => elements(name.to_token_stream(), name, rt),
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
                elements(quote! { &#code }, &code, rt)
            } else {
                elements(code.clone(), &code, rt)
            }
        }
    }
}

/// The collection `reference` as a generator reads it: its elements by value when they are
/// `Copy`, borrowed when not (the runtime's `Elements`, answered by autoref dispatch with the
/// traits the emitted block imports). Located at the generator's expression `at` (from its
/// first token to its last), so that a value that is no collection is reported there.
fn elements(reference: TokenStream, at: &impl ToTokens, rt: &TokenStream) -> TokenStream {
    let tokens = at.to_token_stream();
    let first = tokens.clone().into_iter().next().map_or_else(Span::call_site, |t| t.span());
    let last = tokens.into_iter().last().map_or(first, |t| t.span());
    let open = quote::quote_spanned! {first=> (&#rt::Elements(#reference)) };
    let call = quote::quote_spanned! {last=> .elements() };
    quote! { #open #call }
}

/// The context pattern for `slots`, binding only the variables in `uses` (everything else is
/// `_`).
fn context_pattern(slots: &[Slot], uses: &[VarId]) -> Option<TokenStream> {
    let mut bound = false;
    let patterns: Vec<TokenStream> = slots
        .iter()
        .map(|slot| {
            let mut vars = slot.vars.iter();
            rewrite(&slot.pat, uses, &mut vars, &mut bound)
        })
        .collect();
    if !bound {
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

fn rewrite<'v>(
    pat: &Pat,
    uses: &[VarId],
    vars: &mut impl Iterator<Item = &'v VarId>,
    bound: &mut bool,
) -> TokenStream {
    match pat {
        Pat::Ident(p) => {
            let var = vars.next().expect("one variable per name of a slot");
            if uses.contains(var) {
                *bound = true;
                p.ident.to_token_stream()
            } else {
                quote! { _ }
            }
        }
        Pat::Paren(p) => rewrite(&p.pat, uses, vars, bound),
        Pat::Type(t) => rewrite(&t.pat, uses, vars, bound),
        Pat::Tuple(t) => {
            let elems: Vec<TokenStream> =
                t.elems.iter().map(|p| rewrite(p, uses, vars, bound)).collect();
            if elems.iter().all(is_wild) {
                quote! { _ }
            } else if elems.len() == 1 {
                let only = &elems[0];
                quote! { (#only,) }
            } else {
                quote! { (#(#elems),*) }
            }
        }
        // A struct's fields: `Point { x: x, y: _, .. }` (its path kept for rustc to check).
        Pat::Struct(st) => {
            let fields: Vec<TokenStream> = st
                .fields
                .iter()
                .map(|f| {
                    let member = &f.member;
                    let pat = rewrite(&f.pat, uses, vars, bound);
                    // `Point { x }` stays shorthand while `x` is bound (`x: x` would warn).
                    if f.colon_token.is_none() && !is_wild(&pat) {
                        pat
                    } else {
                        quote! { #member: #pat }
                    }
                })
                .collect();
            let path = &st.path;
            quote! { #path { #(#fields,)* .. } }
        }
        Pat::TupleStruct(t) => {
            let elems: Vec<TokenStream> = t
                .elems
                .iter()
                .map(|p| match p {
                    Pat::Rest(_) => quote! { .. },
                    p => rewrite(p, uses, vars, bound),
                })
                .collect();
            let path = &t.path;
            quote! { #path(#(#elems),*) }
        }
        _ => quote! { _ },
    }
}

#[cfg(test)]
mod tests;
