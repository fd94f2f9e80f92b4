//! From syntax to plan: scopes, dependencies, and the classification of every generator.
//!
//! Walking the qualifiers left to right, the analysis knows which variables are bound at each
//! point ([`scope`]). For every qualifier it finds the variables the qualifier mentions
//! ([`free_vars`]), reports uses of a variable before the qualifier that binds it, rejects a
//! filter before the first generator, and classifies each generator ([`generator`]): invariant
//! (a product — the regular case), flattenable (an expand), or an error naming the generator
//! and the forms that work. Parallel branches are zipped at the root ([`zip`]); comprehensions
//! nested in the head become inner plans ([`nested`]).

pub(crate) mod free_vars;
pub mod generator;
mod nested;
mod scope;
mod zip;

use crate::error::{error, error_spanned, Errors};
use crate::plan::{Plan, Prelude, Step, StepKind, Terminal};
use crate::syntax::{Comprehension, Qualifier};
use crate::text::text;
pub(crate) use nested::nested_macro_mentions;
use scope::Scope;
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
    let mut analyzer = Analyzer { errors, hoisted: 0, branches: 0, nesting: None };
    analyzer.top_level(comprehension, terminal, text_of_input)
}

/// The state shared by the analysis of a comprehension and of everything inside it.
pub(crate) struct Analyzer<'e> {
    pub(crate) errors: &'e mut Errors,
    /// Collections hoisted so far (their names must be unique in the emitted block).
    hoisted: usize,
    /// Parallel branches computed so far (likewise).
    branches: usize,
    /// While analysing a nested comprehension: its text, for messages.
    nesting: Option<String>,
}

impl Analyzer<'_> {
    fn top_level(
        &mut self,
        comprehension: Comprehension,
        terminal: Terminal,
        text_of_input: String,
    ) -> Option<Plan> {
        let Comprehension { head, branches } = comprehension;
        let mut plan = Plan::new(terminal, text_of_input, head);
        let mut scope = Scope::default();
        let mut prelude = Vec::new();
        if branches.len() > 1 {
            self.zip(branches, &mut scope, &mut plan, &mut prelude)?;
        } else {
            let branch = branches.into_iter().next()?;
            self.qualifiers(branch.qualifiers, branch.bar, &mut scope, &mut plan, &mut prelude)?;
        }
        self.finish(&mut plan, &mut scope, &mut prelude);
        plan.prelude = prelude;
        Some(plan)
    }

    /// Extracts the nested comprehensions of the head and records what the head uses.
    fn finish(&mut self, plan: &mut Plan, scope: &mut Scope, prelude: &mut Vec<Prelude>) {
        let head = plan.head.clone();
        plan.head = self.nested_in_head(head, scope, plan, prelude);
        for nested in &plan.nested {
            let name = nested.name.clone();
            scope.bind_name(&name);
            plan.slots.push(nested::ident_pattern(&name));
        }
        let head = plan.head.clone();
        plan.head_uses = scope.uses(&head, self.errors);
    }

    /// Analyses the qualifiers of one branch into steps of `plan`. At the top level
    /// (`plan.inherited == 0`) the first generator is the root, `let`s before it are evaluated
    /// once and filters before it are errors; in a nested comprehension they all see the
    /// enclosing context. `None` if there is no generator.
    fn qualifiers(
        &mut self,
        qualifiers: Vec<Qualifier>,
        bar: proc_macro2::Span,
        scope: &mut Scope,
        plan: &mut Plan,
        prelude: &mut Vec<Prelude>,
    ) -> Option<()> {
        let top = plan.inherited == 0 && plan.steps.is_empty();
        let Some(first_generator) =
            qualifiers.iter().position(|q| matches!(q, Qualifier::Generator(_)))
        else {
            let spaced = qualifiers.iter().find_map(|q| match q {
                Qualifier::Filter(expr) => spaced_arrow(expr),
                _ => None,
            });
            if let Some(e) = spaced {
                self.errors.push(e);
            } else if self.errors.is_empty() {
                // (After a syntax error, a generator that could not be parsed is the likely cause.)
                self.errors.push(error(
                    bar,
                    "a comprehension needs at least one generator",
                    "add a generator after `|`: `par![x | x <- xs, x > 0]`",
                ));
            }
            return None;
        };
        for qualifier in &qualifiers[first_generator..] {
            if let Some(pat) = qualifier.pattern() {
                scope.declare(pat);
            }
        }
        for (index, qualifier) in qualifiers.into_iter().enumerate() {
            let context = plan.slots.len();
            if top && index < first_generator {
                match qualifier {
                    Qualifier::Filter(expr) => {
                        self.errors.push(spaced_arrow(&expr).unwrap_or_else(|| {
                            error_spanned(
                                &expr,
                                "a filter must come after a generator",
                                "filters keep or drop the elements of the generators before them; \
                             move it after the generator whose variables it tests, e.g. \
                             `x <- xs, x > 0`",
                            )
                        }))
                    }
                    Qualifier::Let(binding) => {
                        prelude.push(Prelude::Let { pat: binding.pat, expr: binding.expr })
                    }
                    Qualifier::Generator(_) => unreachable!("before the first generator"),
                }
                continue;
            }
            match qualifier {
                Qualifier::Generator(generator) => {
                    let qualifier_text =
                        format!("{} <- {}", text(&generator.pat), text(&generator.expr));
                    let uses = scope.uses(&generator.expr, self.errors);
                    let root = top && index == first_generator;
                    let kind = self.generator(
                        &generator.expr,
                        &qualifier_text,
                        &uses,
                        root,
                        scope,
                        prelude,
                    );
                    plan.steps.push(Step { kind, text: qualifier_text, context, uses });
                    scope.bind(&generator.pat);
                    plan.slots.push(generator.pat);
                }
                Qualifier::Filter(expr) => {
                    let uses = scope.uses(&expr, self.errors);
                    let qualifier_text = text(&expr);
                    plan.steps.push(Step {
                        kind: StepKind::Filter(expr),
                        text: qualifier_text,
                        context,
                        uses,
                    });
                }
                Qualifier::Let(binding) => {
                    let uses = scope.uses(&binding.expr, self.errors);
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
        Some(())
    }

    /// Classifies one generator (see [`generator`]). Errors leave a placeholder step, so that
    /// the analysis goes on and reports what follows.
    fn generator(
        &mut self,
        expr: &Expr,
        qualifier_text: &str,
        uses: &[String],
        root: bool,
        scope: &Scope,
        prelude: &mut Vec<Prelude>,
    ) -> StepKind {
        if let Some(e) = unbounded_range(expr, qualifier_text) {
            self.errors.push(e);
            return StepKind::Filter(expr.clone());
        }
        let Some(mut form) = scope.classify(expr) else {
            let message = if uses.is_empty() {
                format!("cannot read the generator `{qualifier_text}` by index")
            } else {
                let generator = match &self.nesting {
                    Some(nested) => format!(
                        "the nested comprehension `{nested}`: its generator `{qualifier_text}`"
                    ),
                    None => format!("the generator `{qualifier_text}`"),
                };
                let verb = if self.nesting.is_some() { "" } else { ": it" };
                format!(
                    "cannot flatten {generator}{verb} depends on {}, and its size cannot be \
                     computed without building it",
                    quoted(uses)
                )
            };
            self.errors.push(error_spanned(expr, message, FLATTENABLE_FORMS));
            return StepKind::Filter(expr.clone());
        };
        if root {
            return StepKind::Root(form);
        }
        if uses.is_empty() {
            return StepKind::Product(form);
        }
        let size_dependent = form.source.has_place() || {
            let mut dependent = false;
            form.source.size_exprs(&mut |e| dependent |= !scope.deps(e).is_empty());
            dependent
        };
        form.source.hoist(&mut |expr| self.hoist(expr, prelude));
        if size_dependent {
            StepKind::Expand(form)
        } else {
            StepKind::Product(form)
        }
    }

    /// Evaluates `expr` once, before the comprehension: `let name = &(expr);`.
    fn hoist(&mut self, expr: Expr, prelude: &mut Vec<Prelude>) -> Ident {
        let name = Ident::new(
            &format!("__parcomp_collection_{}", self.hoisted),
            proc_macro2::Span::mixed_site(),
        );
        self.hoisted += 1;
        prelude.push(Prelude::Hoist { name: name.clone(), expr });
        name
    }
}

impl Plan {
    /// An empty top-level plan.
    pub(crate) fn new(terminal: Terminal, text: String, head: Expr) -> Plan {
        Plan {
            terminal,
            text,
            prelude: Vec::new(),
            slots: Vec::new(),
            inherited: 0,
            steps: Vec::new(),
            nested: Vec::new(),
            head,
            head_uses: Vec::new(),
        }
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
    use crate::test_support::errors;
    use quote::quote;

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
