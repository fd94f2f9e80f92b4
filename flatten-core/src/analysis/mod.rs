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
        let spaced = branch.qualifiers.iter().find_map(|q| match q {
            Qualifier::Filter(expr) => spaced_arrow(expr),
            _ => None,
        });
        if let Some(e) = spaced {
            errors.push(e);
        } else if errors.is_empty() {
            // (After a syntax error, a generator that could not be parsed is the likely cause.)
            errors.push(error(
                branch.bar,
                "a comprehension needs at least one generator",
                "add a generator after `|`: `par![x | x <- xs, x > 0]`",
            ));
        }
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
                Qualifier::Filter(expr) => errors.push(spaced_arrow(&expr).unwrap_or_else(|| {
                    error_spanned(
                        &expr,
                        "a filter must come after a generator",
                        "filters keep or drop the elements of the generators before them; move \
                         it after the generator whose variables it tests, e.g. `x <- xs, x > 0`",
                    )
                })),
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
                let qualifier_text =
                    format!("{} <- {}", text(&generator.pat), text(&generator.expr));
                let uses = scope.uses(&generator.expr, errors);
                let kind = if let Some(e) = unbounded_range(&generator.expr, &qualifier_text) {
                    errors.push(e);
                    StepKind::Filter(generator.expr.clone())
                } else if index == first_generator {
                    match scope.classify(&generator.expr) {
                        Some(form) => StepKind::Root(form),
                        None => {
                            // Nothing is bound yet, so every expression is invariant; kept as
                            // an error rather than a panic of the macro.
                            errors.push(error_spanned(
                                &generator.expr,
                                format!("cannot read the generator `{qualifier_text}` by index"),
                                FLATTENABLE_FORMS,
                            ));
                            StepKind::Filter(generator.expr.clone())
                        }
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
                let qualifier_text =
                    format!("let {} = {}", text(&binding.pat), text(&binding.expr));
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
        let name =
            Ident::new(&format!("__parcomp_collection_{}", self.hoisted), Span::mixed_site());
        self.hoisted += 1;
        prelude.push(Prelude::Hoist { name: name.clone(), expr });
        name
    }
}

/// An error for a generator over a range without an end (`x..`) or a start (`..n`), looking
/// through `.map(f)`, `.step_by(k)` and `.rev()`: it has no size (or no first element).
fn unbounded_range(expr: &Expr, qualifier_text: &str) -> Option<syn::Error> {
    let range = match generator::strip(expr) {
        Expr::MethodCall(call)
            if matches!(
                (call.method.to_string().as_str(), call.args.len()),
                ("map", 1) | ("step_by", 1) | ("rev", 0)
            ) =>
        {
            return unbounded_range(&call.receiver, qualifier_text);
        }
        Expr::Range(range) if range.start.is_none() || range.end.is_none() => range,
        _ => return None,
    };
    let inclusive = matches!(range.limits, syn::RangeLimits::Closed(_));
    let dots = if inclusive { "..=" } else { ".." };
    let (message, help) = match (&range.start, &range.end) {
        (Some(start), None) => (
            format!(
                "the range `{}` has no end, so the generator `{qualifier_text}` would never end",
                text(range)
            ),
            format!("give the range an end: `{}..n` or `{}..=n`", text(start), text(start)),
        ),
        (None, Some(end)) => (
            format!("the range `{}` has no start, so it cannot be a generator", text(range)),
            format!("give the range a start: `0{dots}{}`", text(end)),
        ),
        _ => (
            format!("the range `{}` has no start and no end", text(range)),
            "a generator over a range needs both bounds: `a..b` or `a..=b`".to_string(),
        ),
    };
    Some(error_spanned(range, message, help))
}

/// For a filter `x < -xs` (a comparison with a negation), the error saying that `<-` must be
/// written without a space: most likely a generator was meant.
fn spaced_arrow(expr: &Expr) -> Option<syn::Error> {
    let Expr::Binary(binary) = generator::strip(expr) else { return None };
    let syn::BinOp::Lt(lt) = &binary.op else { return None };
    let Expr::Unary(syn::ExprUnary { op: syn::UnOp::Neg(minus), expr: collection, .. }) =
        &*binary.right
    else {
        return None;
    };
    let pattern = text(&binary.left);
    let collection = text(collection);
    Some(error_spanned(
        quote::quote!(#lt #minus),
        format!("`{pattern} < -{collection}` is a comparison, not a generator"),
        format!("write `<-` without a space between `<` and `-`: `{pattern} <- {collection}`"),
    ))
}

fn quoted(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.len() {
        0 => "no variable".into(),
        1 => quoted[0].clone(),
        n => format!("{} and {}", quoted[..n - 1].join(", "), quoted[n - 1]),
    }
}

#[cfg(test)]
mod tests {
    use crate::{compile, Terminal};
    use proc_macro2::TokenStream;
    use quote::quote;

    fn errors(input: TokenStream) -> Vec<String> {
        match compile(input, Terminal::Collect) {
            Ok(_) => Vec::new(),
            Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn ranges_without_a_bound_are_errors_not_panics() {
        for (input, message, help) in [
            (
                quote!(n | n <- 1..),
                "the range `1..` has no end, so the generator `n <- 1..` would never end",
                "`1..n` or `1..=n`",
            ),
            (quote!((x, y) | x <- 0..9, y <- x..), "the range `x..` has no end", "`x..n`"),
            (quote!(x | x <- (0..).map(|i| i * 2)), "the range `0..` has no end", "`0..n`"),
            (quote!(x | x <- ..n), "the range `..n` has no start", "`0..n`"),
            (quote!(x | x <- ..=n), "the range `..=n` has no start", "`0..=n`"),
        ] {
            let errors = errors(input);
            assert_eq!(errors.len(), 1, "{errors:#?}");
            assert!(errors[0].contains(message), "{errors:#?}");
            assert!(errors[0].contains(help), "{errors:#?}");
        }
    }

    #[test]
    fn a_spaced_arrow_is_explained() {
        for input in [quote!(x | x < -xs), quote!((x, y) | x < - xs, y <- ys)] {
            assert_eq!(
                errors(input),
                ["`x < -xs` is a comparison, not a generator\n= help: write `<-` without a space \
                  between `<` and `-`: `x <- xs`"]
            );
        }
    }

    #[test]
    fn no_generator() {
        let errors = errors(quote!(1 | enabled));
        assert_eq!(errors.len(), 1);
        assert!(errors[0].starts_with("a comprehension needs at least one generator"));
    }

    #[test]
    fn a_generator_that_cannot_be_parsed_is_not_also_reported_missing() {
        assert_eq!(
            errors(quote!(x | x <-)),
            ["expected the collection to draw from after `<-`\n= help: a generator is written \
              `PAT <- EXPR`, e.g. `x <- 0..n` or `v <- &values`"]
        );
    }

    #[test]
    fn several_errors_are_reported_together() {
        let errors = errors(quote!((n, m) | mut n <- ns, m <- nbrs(n), w > 0, w <- 0..m));
        assert_eq!(errors.len(), 3, "{errors:#?}");
        assert!(errors[0].starts_with("`mut` and `ref` are not allowed"));
        assert!(
            errors[1].starts_with("cannot flatten the generator `m <- nbrs(n)`: it depends on `n`")
        );
        assert!(errors[2].starts_with("`w` is used before the qualifier that binds it"));
    }
}
