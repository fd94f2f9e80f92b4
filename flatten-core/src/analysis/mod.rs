//! From syntax to plan: scopes, dependencies, and the classification of every generator.
//!
//! Walking the qualifiers left to right, the analysis knows which variables are bound at each
//! point. For every qualifier it finds the variables the qualifier mentions ([`free_vars`]),
//! reports uses of a variable before the qualifier that binds it, rejects a filter before the
//! first generator, and classifies each generator ([`generator`]): invariant (a product — the
//! regular case), flattenable (an expand), or an error naming the generator and the forms that
//! work.

pub(crate) mod free_vars;
pub mod generator;

use crate::error::{error, error_spanned, Errors};
use crate::plan::{Plan, Prelude, Step, StepKind, Terminal};
use crate::syntax::{bound_names, Comprehension, Qualifier};
use crate::text::text;
use generator::{Classifier, Form};
use proc_macro2::Span;
use std::collections::HashSet;
use syn::{Expr, Ident};

/// The forms a generator that depends on earlier variables may take, for error messages.
const FLATTENABLE_FORMS: &str = "a generator that uses earlier variables must have a size \
    parcomp can compute without building it: a range `a..b` or `a..=b`, `R.map(f)`, \
    `R.step_by(k)` or `R.rev()` of such an `R`, a row `rows[x]` / `&rows[x]` / `m.row(x)` of a \
    collection that does not depend on the comprehension, or a variable bound earlier that holds \
    a slice; anything else can be computed before the comprehension (e.g. into a `Jagged`)";

/// Analyses a parsed comprehension, adding every problem found to `errors`.
pub fn analyze(
    comprehension: Comprehension,
    terminal: Terminal,
    text_of_input: String,
    errors: &mut Errors,
) -> Option<Plan> {
    let Comprehension { head, branches } = comprehension;
    if branches.len() > 1 {
        errors.push(error(
            branches[1].bar,
            "parallel branches (`| ... | ...`) are not supported yet",
            "nest the generators instead, or zip the collections before the comprehension",
        ));
        return None;
    }
    let branch = branches.into_iter().next()?;
    let first_generator =
        branch.qualifiers.iter().position(|q| matches!(q, Qualifier::Generator(_)));
    let Some(first_generator) = first_generator else {
        errors.push(error(
            branch.bar,
            "a comprehension needs at least one generator",
            "add a generator after `|`: `par![x | x <- xs, x > 0]`",
        ));
        return None;
    };

    // Every variable the comprehension binds (after its first generator), for finding uses.
    let mut all_names: HashSet<String> = HashSet::new();
    for q in &branch.qualifiers[first_generator..] {
        if let Some(pat) = q.pattern() {
            all_names.extend(bound_names(pat).iter().map(Ident::to_string));
        }
    }

    let mut scope = Scope { all_names, visible: Vec::new(), hoisted: 0 };
    let mut plan = Plan {
        terminal,
        text: text_of_input,
        prelude: Vec::new(),
        slots: Vec::new(),
        steps: Vec::new(),
        head,
        head_uses: Vec::new(),
    };

    for (index, qualifier) in branch.qualifiers.into_iter().enumerate() {
        if index < first_generator {
            match qualifier {
                Qualifier::Filter(expr) => errors.push(error_spanned(
                    &expr,
                    "a filter must come after a generator",
                    "filters keep or drop the elements of the generators before them; move it \
                     after the generator whose variables it tests, e.g. `x <- xs, x > 0`",
                )),
                Qualifier::Let(binding) => {
                    plan.prelude.push(Prelude::Let { pat: binding.pat, expr: binding.expr })
                }
                Qualifier::Generator(_) => unreachable!("before the first generator"),
            }
            continue;
        }
        let context = plan.slots.len();
        match qualifier {
            Qualifier::Generator(generator) => {
                let qualifier_text = format!("{} <- {}", text(&generator.pat), text(&generator.expr));
                let uses = scope.uses(&generator.expr, errors);
                let kind = if index == first_generator {
                    match scope.classify(&generator.expr) {
                        Some(form) => StepKind::Root(form),
                        None => unreachable!("nothing is bound before the first generator"),
                    }
                } else {
                    match scope.classify(&generator.expr) {
                        None => {
                            errors.push(error_spanned(
                                &generator.expr,
                                format!(
                                    "cannot flatten the generator `{qualifier_text}`: it depends \
                                     on {}, and its size cannot be computed without building it",
                                    quoted(&uses)
                                ),
                                FLATTENABLE_FORMS,
                            ));
                            StepKind::Filter(generator.expr.clone())
                        }
                        Some(form) if uses.is_empty() => StepKind::Product(form),
                        Some(mut form) => {
                            let size_dependent = form.source.has_place() || {
                                let mut dependent = false;
                                form.source.size_exprs(&mut |e| {
                                    dependent |= !scope.deps(e).is_empty();
                                });
                                dependent
                            };
                            form.source.hoist(&mut |expr| scope.hoist(expr, &mut plan.prelude));
                            if size_dependent {
                                StepKind::Expand(form)
                            } else {
                                StepKind::Product(form)
                            }
                        }
                    }
                };
                plan.steps.push(Step { kind, text: qualifier_text, context, uses });
                scope.bind(&generator.pat);
                plan.slots.push(generator.pat);
            }
            Qualifier::Filter(expr) => {
                let uses = scope.uses(&expr, errors);
                let qualifier_text = text(&expr);
                plan.steps.push(Step {
                    kind: StepKind::Filter(expr),
                    text: qualifier_text,
                    context,
                    uses,
                });
            }
            Qualifier::Let(binding) => {
                let uses = scope.uses(&binding.expr, errors);
                let qualifier_text = format!("let {} = {}", text(&binding.pat), text(&binding.expr));
                plan.steps.push(Step {
                    kind: StepKind::Let(binding.expr),
                    text: qualifier_text,
                    context,
                    uses,
                });
                scope.bind(&binding.pat);
                plan.slots.push(binding.pat);
            }
        }
    }
    plan.head_uses = scope.uses(&plan.head, errors);
    Some(plan)
}

/// What is bound at the current point of the walk.
struct Scope {
    all_names: HashSet<String>,
    visible: Vec<String>,
    hoisted: usize,
}

impl Scope {
    /// The visible comprehension variables `expr` mentions.
    fn deps(&self, expr: &Expr) -> Vec<Ident> {
        free_vars::mentions(expr, &self.all_names)
            .into_iter()
            .filter(|ident| self.visible.contains(&ident.to_string()))
            .collect()
    }

    /// The visible variables `expr` uses (each once, in order of first use); reports uses of a
    /// variable that is bound only later.
    fn uses(&self, expr: &Expr, errors: &mut Errors) -> Vec<String> {
        let mut uses: Vec<String> = Vec::new();
        let mut reported: Vec<String> = Vec::new();
        for ident in free_vars::mentions(expr, &self.all_names) {
            let name = ident.to_string();
            if self.visible.contains(&name) {
                if !uses.contains(&name) {
                    uses.push(name);
                }
            } else if !reported.contains(&name) {
                errors.push(error(
                    ident.span(),
                    format!("`{name}` is used before the qualifier that binds it"),
                    format!(
                        "a qualifier can use only the variables bound to its left; move the \
                         qualifier that binds `{name}` before this one (or rename it, if you \
                         mean a variable from outside the comprehension)"
                    ),
                ));
                reported.push(name);
            }
        }
        uses
    }

    fn classify(&self, expr: &Expr) -> Option<Form> {
        let deps = |e: &Expr| self.deps(e);
        let is_bound = |ident: &Ident| self.visible.contains(&ident.to_string());
        Classifier { deps: &deps, is_bound: &is_bound }.form(expr)
    }

    fn bind(&mut self, pat: &syn::Pat) {
        self.visible.extend(bound_names(pat).iter().map(Ident::to_string));
    }

    fn hoist(&mut self, expr: Expr, prelude: &mut Vec<Prelude>) -> Ident {
        let name = Ident::new(&format!("__parcomp_collection_{}", self.hoisted), Span::mixed_site());
        self.hoisted += 1;
        prelude.push(Prelude::Hoist { name: name.clone(), expr });
        name
    }
}

fn quoted(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.len() {
        0 => "no variable".into(),
        1 => quoted[0].clone(),
        n => format!("{} and {}", quoted[..n - 1].join(", "), quoted[n - 1]),
    }
}
