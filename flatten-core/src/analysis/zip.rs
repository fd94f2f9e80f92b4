//! Parallel branches: `par![e | x <- xs | y <- ys]` zips the branches element by element,
//! truncating to the shortest (as `Iterator::zip`).
//!
//! This is the paper's `[[p | q]]`: each branch is translated on its own and the results are
//! zipped. A branch that is a single generator is read in place; a branch with several
//! qualifiers (`x <- xs, x > 0, let y = x * x`) is computed first, as a comprehension of its
//! own yielding its variables, and its result is read by index. Branches cannot see each
//! other's variables; the head sees them all.

use super::scope::Scope;
use super::Analyzer;
use crate::error::error;
use crate::plan::{Plan, Prelude, Step, StepKind, Terminal, ZipBranch};
use crate::syntax::{user_names, Branch, Qualifier};
use crate::text::text;
use proc_macro2::Span;
use std::collections::HashSet;
use syn::{parse_quote, Ident, Pat};

impl Analyzer<'_> {
    /// Analyses parallel branches into the root step of `plan`.
    pub(super) fn zip(
        &mut self,
        branches: Vec<Branch>,
        scope: &mut Scope,
        plan: &mut Plan,
        prelude: &mut Vec<Prelude>,
    ) -> Option<()> {
        let names: Vec<HashSet<String>> = branches
            .iter()
            .map(|b| {
                b.qualifiers
                    .iter()
                    .filter_map(Qualifier::pattern)
                    .flat_map(user_names)
                    .map(|i| i.to_string())
                    .collect()
            })
            .collect();
        for (k, branch) in branches.iter().enumerate() {
            let mut twice: Vec<&String> =
                names[..k].iter().flat_map(|earlier| earlier.intersection(&names[k])).collect();
            twice.sort();
            twice.dedup();
            for name in twice {
                self.errors.push(error(
                    branch.bar,
                    format!("`{name}` is bound in two parallel branches"),
                    "the branches are zipped into one element, so each variable can be bound in \
                     only one of them; rename one",
                ));
            }
        }
        let first_bar = branches.first().map_or_else(Span::call_site, |b| b.bar);
        let mut parts = Vec::new();
        let mut patterns: Vec<Pat> = Vec::new();
        let mut texts = Vec::new();
        let mut ok = true;
        for (k, branch) in branches.into_iter().enumerate() {
            let foreign: HashSet<String> = names
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != k)
                .flat_map(|(_, n)| n.iter().cloned())
                .collect();
            let mut branch_scope = Scope::branch(foreign);
            let single = branch.qualifiers.len() == 1
                && matches!(branch.qualifiers[0], Qualifier::Generator(_));
            if single {
                let Some(Qualifier::Generator(generator)) = branch.qualifiers.into_iter().next()
                else {
                    unreachable!("checked to be one generator");
                };
                let qualifier_text =
                    format!("{} <- {}", text(&generator.pat), text(&generator.expr));
                let uses = branch_scope.uses(&generator.expr, self.errors);
                match self.generator(
                    &generator.expr,
                    &qualifier_text,
                    &uses,
                    true,
                    &branch_scope,
                    prelude,
                ) {
                    StepKind::Root(form) => parts.push(ZipBranch::Generator(Box::new(form))),
                    _ => ok = false,
                }
                texts.push(qualifier_text);
                patterns.push(generator.pat);
                continue;
            }
            // The branch's `let`s before its first generator, and its hoisted collections, go
            // to the enclosing prelude: evaluated once, and visible to the head.
            let head_class = self.device.class();
            let mut computed =
                Plan::new(Terminal::Collect, String::new(), parse_quote!(()), head_class);
            let prelude_before = prelude.len();
            let not_device_before = self.not_device.len();
            // The branch runs before the zip, on the host or as a comprehension of its own:
            // what its analysis adds to the device half is not the zip's.
            let device_before = self.device.mark();
            let root_rows_before = self.root_rows;
            // The qualifiers from the first generator on: the leading `let`s go to the prelude.
            let first_generator = branch
                .qualifiers
                .iter()
                .position(|q| matches!(q, Qualifier::Generator(_)))
                .unwrap_or(0);
            let branch_tokens = branch.written(first_generator);
            if self
                .qualifiers(
                    branch.qualifiers,
                    branch.bar,
                    &mut branch_scope,
                    &mut computed,
                    prelude,
                )
                .is_none()
            {
                ok = false;
                continue;
            }
            self.device.rollback(device_before);
            self.root_rows = root_rows_before;
            // The branch yields its variables (the last binding of each name): those the user
            // wrote, which its comprehension, compiled again, binds again.
            let mut yielded: Vec<Ident> = Vec::new();
            for name in computed.slots.iter().flat_map(|slot| user_names(&slot.pat)) {
                yielded.retain(|n| *n != name);
                yielded.push(name);
            }
            let texts_of_steps: Vec<&str> =
                computed.steps.iter().map(|s| s.text.as_str()).collect();
            computed.text = format!("({}) | {}", join(&yielded), texts_of_steps.join(", "));
            texts.push(texts_of_steps.join(", "));
            let head: syn::Expr = parse_quote!((#(#yielded,)*));
            computed.head_uses =
                yielded.iter().filter_map(|n| branch_scope.lookup(&n.to_string())).collect();
            // A computed branch runs on the host, before the zip: its elements are the zip's.
            computed.head = crate::plan::kernel_ir::PlanExpr {
                device: Err(super::device::not_device(
                    branch.bar,
                    "is a branch computed before the zip",
                    "",
                )),
                expr: head,
            };
            patterns.push(parse_quote!((#(#yielded,)*)));
            let name =
                Ident::new(&format!("__parcomp_branch_{}", self.branches), Span::mixed_site());
            self.branches += 1;
            // The branch is a comprehension of its own, evaluated first. Its leading `let`s stay
            // in the prelude (the head sees them); the collections its analysis hoisted go, as
            // the comprehension hoists them itself.
            let mut k = prelude_before;
            while k < prelude.len() {
                if matches!(prelude[k], Prelude::Hoist { .. }) {
                    prelude.remove(k);
                } else {
                    k += 1;
                }
            }
            let tokens = quote::quote! { (#(#yielded,)*) | #(#branch_tokens),* };
            // What its device half can run is its own business.
            self.not_device.truncate(not_device_before);
            prelude.push(Prelude::Macro { name: name.clone(), tokens });
            parts.push(ZipBranch::Computed(name));
        }
        if !ok {
            return None;
        }
        let mut patterns = patterns.into_iter();
        let first = patterns.next()?;
        let pattern: Pat = patterns.fold(first, |zipped, next| parse_quote!((#zipped, #next)));
        let kind = StepKind::Zip(parts);
        let device = self.generator_device(&kind, true, false, scope, &parse_quote!(()));
        let class = match &device {
            Some(Ok(g)) => g.class,
            _ => self.device.class(),
        };
        plan.steps.push(Step {
            kind,
            text: texts.join(" | "),
            span: first_bar,
            context: 0,
            uses: Vec::new(),
            map_uses: Vec::new(),
            source_uses: Vec::new(),
            device,
        });
        scope.declare(&pattern);
        let slot = self.bind_slot(scope, pattern, class);
        plan.slots.push(slot);
        Some(())
    }
}

fn join(names: &[Ident]) -> String {
    names.iter().map(Ident::to_string).collect::<Vec<_>>().join(", ")
}
