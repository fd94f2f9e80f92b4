//! Comprehensions nested in the head of another: found, checked, and analysed as inner plans.
//!
//! In `par![par_sum![v * x[c] | (c, v) <- m.row(i)] | i <- 0..m.len()]` the inner
//! comprehension is replaced in the head by the name of its result, and analysed with the
//! outer variables in scope: its generators extend the outer context. The runtime then reduces
//! the inner comprehensions inside the enclosing comprehension's run. The inner comprehension's
//! head may hold comprehensions in turn, to any depth. Only comprehensions evaluated exactly
//! once per outer element can be flattened this way: not one inside a closure or a loop of the
//! head, and not one that uses a variable bound inside the head.

use super::scope::Scope;
use super::Analyzer;
use crate::error::error_spanned;
use crate::plan::{Nested, Plan, Prelude, Slot, Terminal};
use crate::syntax::{self, reduce_arguments};
use crate::text::text;
use crate::Macro;
use proc_macro2::{Span, TokenStream, TokenTree};
use std::collections::HashSet;
use syn::visit::Visit;
use syn::visit_mut::{self, VisitMut};
use syn::{Expr, Ident};

impl Analyzer<'_> {
    /// Replaces the comprehensions nested in `head` by the names of their results, adding their
    /// plans to `plan.nested`.
    pub(super) fn nested_in_head(
        &mut self,
        mut head: Expr,
        scope: &Scope,
        plan: &mut Plan,
        prelude: &mut Vec<Prelude>,
    ) -> Expr {
        let locals = head_locals(&head);
        let mut finder = Finder { found: Vec::new(), loops: 0 };
        finder.visit_expr_mut(&mut head);
        for found in finder.found {
            let macro_text = format!("{}![{}]", found.name, text(&found.mac.tokens));
            if found.in_loop {
                self.errors.push(error_spanned(
                    &found.mac,
                    format!(
                        "cannot flatten `{macro_text}`: it stands inside a closure or a loop of \
                         the head, so it may run any number of times per element"
                    ),
                    "move it out of the closure or loop, so that it is computed once per \
                     element; nested comprehensions are flattened only where they run once",
                ));
                continue;
            }
            if let Some(local) = mentions(&found.mac.tokens, &locals) {
                self.errors.push(error_spanned(
                    &found.mac,
                    format!(
                        "cannot flatten `{macro_text}`: it uses `{local}`, which is bound inside \
                         the head"
                    ),
                    "a nested comprehension is computed for every element before the head runs, \
                     so it can use the comprehension's variables but not the head's own; use a \
                     `let` qualifier for the value instead",
                ));
                continue;
            }
            // The inner comprehension sees the context as it reaches it: the enclosing
            // comprehension's slots and the results of the nested comprehensions before it.
            let mut context = plan.slots.clone();
            context.extend(
                plan.nested.iter().map(|n| Slot { pat: ident_pattern(&n.name), vars: vec![n.var] }),
            );
            if let Some(inner) = self.inner(&found, scope, context, prelude) {
                let path = found.mac.path.clone();
                let var = self.new_var(&found.ident, inner.acc_class);
                plan.nested.push(Nested { name: found.ident, var, path, plan: inner });
            }
        }
        head
    }

    /// Analyses a nested comprehension with the enclosing context in scope.
    fn inner(
        &mut self,
        found: &Found,
        scope: &Scope,
        context: Vec<Slot>,
        prelude: &mut Vec<Prelude>,
    ) -> Option<Plan> {
        let (terminal, tokens) = if found.name == Macro::ParReduce {
            match reduce_arguments(found.mac.tokens.clone()) {
                Ok((op, identity, rest)) => (
                    Terminal::Reduce {
                        op: Box::new(op),
                        identity: Box::new(identity),
                        device: None,
                    },
                    rest,
                ),
                Err(e) => {
                    self.errors.push(e);
                    return None;
                }
            }
        } else {
            (Terminal::of(found.name)?, found.mac.tokens.clone())
        };
        let inner_text = text(&tokens);
        let comprehension = syntax::parse(tokens, self.errors)?;
        if let crate::plan::Marker::Gpu(span) | crate::plan::Marker::Cpu(span) =
            comprehension.marker
        {
            self.errors.push(crate::error::error(
                span,
                "a nested comprehension cannot be marked: it runs where the comprehension around \
                 it runs",
                "put `@gpu` or `@cpu` on the outermost comprehension",
            ));
        }
        if comprehension.branches.len() > 1 {
            self.errors.push(error_spanned(
                &found.mac,
                "parallel branches (`| ... | ...`) are not supported in a nested comprehension",
                "zip the collections in the outer comprehension, or compute the zipped branches \
                 before it",
            ));
            return None;
        }
        let branch = comprehension.branches.into_iter().next()?;
        let macro_text = format!("{}![{}]", found.name, text(&found.mac.tokens));
        let head_class = self.device.class();
        let mut inner = Plan::new(terminal, inner_text, comprehension.head, head_class);
        inner.inherited = context.len();
        inner.slots = context;
        let mut inner_scope = scope.clone();
        let enclosing = self.nesting.replace(macro_text);
        let analysed =
            self.qualifiers(branch.qualifiers, branch.bar, &mut inner_scope, &mut inner, prelude);
        if analysed.is_some() {
            self.finish(&mut inner, &mut inner_scope, prelude);
        }
        self.nesting = enclosing;
        analysed.map(|()| inner)
    }
}

/// The pattern binding `name`.
pub(super) fn ident_pattern(name: &Ident) -> syn::Pat {
    syn::Pat::Ident(syn::PatIdent {
        attrs: Vec::new(),
        by_ref: None,
        mutability: None,
        ident: name.clone(),
        subpat: None,
    })
}

/// A nested comprehension found in a head.
struct Found {
    /// The name its result gets.
    ident: Ident,
    /// The macro (`par_sum!`, ...).
    name: Macro,
    /// The invocation.
    mac: syn::Macro,
    /// Whether it stands inside a closure or a loop of the head.
    in_loop: bool,
}

/// Finds the comprehensions in a head and replaces them by the names of their results.
struct Finder {
    found: Vec<Found>,
    loops: usize,
}

impl Finder {
    fn within(&mut self, f: impl FnOnce(&mut Self)) {
        self.loops += 1;
        f(self);
        self.loops -= 1;
    }
}

impl VisitMut for Finder {
    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        if let Expr::Macro(m) = expr {
            if let Some(name) = family_name(&m.mac.path) {
                let ident = Ident::new(
                    &format!("__parcomp_nested_{}", self.found.len()),
                    Span::mixed_site(),
                );
                self.found.push(Found {
                    ident: ident.clone(),
                    name,
                    mac: m.mac.clone(),
                    in_loop: self.loops > 0,
                });
                *expr = syn::parse_quote!(#ident);
                return;
            }
        }
        visit_mut::visit_expr_mut(self, expr);
    }

    fn visit_expr_closure_mut(&mut self, e: &mut syn::ExprClosure) {
        self.within(|v| visit_mut::visit_expr_closure_mut(v, e));
    }

    fn visit_expr_for_loop_mut(&mut self, e: &mut syn::ExprForLoop) {
        // The iterated expression runs once; the body any number of times.
        self.visit_expr_mut(&mut e.expr);
        self.within(|v| v.visit_block_mut(&mut e.body));
    }

    fn visit_expr_while_mut(&mut self, e: &mut syn::ExprWhile) {
        self.within(|v| visit_mut::visit_expr_while_mut(v, e));
    }

    fn visit_expr_loop_mut(&mut self, e: &mut syn::ExprLoop) {
        self.within(|v| visit_mut::visit_expr_loop_mut(v, e));
    }

    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// Adds to `names` the bare variables that generators of comprehensions nested in `head` (at
/// any depth) read as their collections (`par_sum![v | v <- row]` reads `row`).
pub(crate) fn collections_read(head: &Expr, names: &mut HashSet<String>) {
    struct Macros<'n>(&'n mut HashSet<String>);
    impl<'ast> Visit<'ast> for Macros<'_> {
        fn visit_macro(&mut self, m: &'ast syn::Macro) {
            let Some(name) = family_name(&m.path) else { return };
            let tokens = if name == Macro::ParReduce {
                match reduce_arguments(m.tokens.clone()) {
                    Ok((_, _, rest)) => rest,
                    Err(_) => return,
                }
            } else {
                m.tokens.clone()
            };
            let mut ignored = crate::error::Errors::default();
            let Some(comprehension) = syntax::parse(tokens, &mut ignored) else { return };
            for branch in &comprehension.branches {
                for qualifier in &branch.qualifiers {
                    if let syntax::Qualifier::Generator(g) = qualifier {
                        if let Some(name) = super::collection_name(&g.expr) {
                            self.0.insert(name);
                        }
                    }
                }
            }
            collections_read(&comprehension.head, self.0);
        }
    }
    Macros(names).visit_expr(head);
}

/// The macro `path` names if it is one of the `par!` family that nests (`par_sum`,
/// `parcomp::par_sum`).
/// Moves the `let`s that end a branch into the head when one of them computes a nested
/// comprehension: `par![f(p, s) | p <- ps, let s = par_sum![g(p, q) | q <- ps]]` is analysed
/// as `par![{ let s = par_sum![..]; f(p, s) } | p <- ps]`, whose nested comprehension the
/// head's analysis flattens (a `let` qualifier's cannot be). The same values in the same order:
/// those `let`s come after every generator and filter, once per element, as the head does.
/// Not done when a nested comprehension in them reads a name an earlier one of them binds
/// (inside the head, that name would be the head's own, which nesting refuses), nor before a
/// first generator (evaluated once), nor around transforms.
pub(crate) fn lets_into_head(head: Expr, qualifiers: &mut Vec<syntax::Qualifier>) -> Expr {
    use syntax::Qualifier;
    if qualifiers.iter().any(|q| matches!(q, Qualifier::Transform(_))) {
        return head;
    }
    let Some(last_generator) =
        qualifiers.iter().rposition(|q| matches!(q, Qualifier::Generator(_)))
    else {
        return head;
    };
    let start = qualifiers[last_generator + 1..]
        .iter()
        .rposition(|q| !matches!(q, Qualifier::Let(_)))
        .map_or(last_generator + 1, |k| last_generator + 2 + k);
    let lets = &qualifiers[start..];
    let nested_in = |e: &Expr| {
        let mut finder = Finder { found: Vec::new(), loops: 0 };
        finder.visit_expr_mut(&mut e.clone());
        finder.found
    };
    let nests = |e: &Expr| !nested_in(e).is_empty();
    if !lets.iter().any(|q| matches!(q, Qualifier::Let(l) if nests(&l.expr))) {
        return head;
    }
    let mut bound = HashSet::new();
    for q in lets {
        let Qualifier::Let(l) = q else { unreachable!("only lets") };
        if nests(&l.expr) && mentions(&quote::ToTokens::to_token_stream(&l.expr), &bound).is_some()
        {
            return head;
        }
        bound.extend(syntax::bound_names(&l.pat).iter().map(|n| n.to_string()));
    }
    // Nor when a comprehension nested in the head reads one of them: it would be the head's
    // own name there, which nesting refuses, where as a qualifier it is the comprehension's.
    if nested_in(&head).iter().any(|f| mentions(&f.mac.tokens, &bound).is_some()) {
        return head;
    }
    let lets: Vec<TokenStream> = qualifiers
        .drain(start..)
        .map(|q| match q {
            Qualifier::Let(l) => {
                let pat = l.pat;
                // Parentheses around the value (`let y = (a | b)`: the comprehension needs
                // them) are unnecessary to rustc in a `let` statement.
                let expr = crate::back::rust::unparenthesized(&l.expr);
                // A name the head does not read is not the user's mistake to be warned of:
                // as a qualifier, it would have been dropped.
                quote::quote! { #[allow(unused_variables)] let #pat = #expr; }
            }
            _ => unreachable!("only lets"),
        })
        .collect();
    // Likewise around the head, now a block's value.
    let head = crate::back::rust::unparenthesized(&head);
    syn::parse_quote! {{ #(#lets)* #head }}
}

fn family_name(path: &syn::Path) -> Option<Macro> {
    let prefix_ok = match path.segments.len() {
        1 => true,
        2 => path.segments[0].ident == "parcomp",
        _ => false,
    };
    if !prefix_ok {
        return None;
    }
    nesting_macro(&path.segments.last()?.ident)
}

/// The macro `ident` names if it is one of the `par!` family that nests.
fn nesting_macro(ident: &Ident) -> Option<Macro> {
    Macro::from_name(&ident.to_string()).filter(|m| m.nests())
}

/// The names bound inside a head: closure parameters, `let`s, `match` arms, loop variables.
fn head_locals(head: &Expr) -> HashSet<String> {
    struct Locals(HashSet<String>);
    impl<'ast> Visit<'ast> for Locals {
        fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
            self.0.insert(p.ident.to_string());
            syn::visit::visit_pat_ident(self, p);
        }
        fn visit_macro(&mut self, _: &'ast syn::Macro) {}
    }
    let mut locals = Locals(HashSet::new());
    locals.visit_expr(head);
    locals.0
}

/// The first of `names` that appears in `tokens`, if any.
fn mentions(tokens: &TokenStream, names: &HashSet<String>) -> Option<String> {
    tokens.clone().into_iter().find_map(|token| match token {
        TokenTree::Ident(ident) if names.contains(&ident.to_string()) => Some(ident.to_string()),
        TokenTree::Group(group) => mentions(&group.stream(), names),
        _ => None,
    })
}

/// `name![@used];` for every macro of the family named by a single identifier anywhere in
/// `tokens` (see `lib.rs`: mentioned even when the comprehension has errors).
pub(crate) fn nested_macro_mentions(tokens: &TokenStream) -> TokenStream {
    let mut out = TokenStream::new();
    let tokens: Vec<TokenTree> = tokens.clone().into_iter().collect();
    for (i, token) in tokens.iter().enumerate() {
        match token {
            TokenTree::Ident(ident) if nesting_macro(ident).is_some() => {
                let bang =
                    matches!(tokens.get(i + 1), Some(TokenTree::Punct(p)) if p.as_char() == '!');
                let path_before = matches!(tokens.get(i.wrapping_sub(1)), Some(TokenTree::Punct(p)) if p.as_char() == ':');
                if bang && !path_before {
                    out.extend(quote::quote! { #ident![@used]; });
                }
            }
            TokenTree::Group(group) => out.extend(nested_macro_mentions(&group.stream())),
            _ => {}
        }
    }
    out
}
