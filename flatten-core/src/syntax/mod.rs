//! The surface syntax of a comprehension: `HEAD | QUALIFIER, QUALIFIER, ... | BRANCH ...`.
//!
//! syn cannot parse a comprehension on its own: it would read `e | x < -xs` as one expression.
//! So the token stream is first split at the `|` that stand at its top level ([`split`]), and
//! each part is then parsed qualifier by qualifier ([`qualifier`]), telling a generator
//! `x <- xs` from a comparison `x < -xs` by the spacing of `<` and `-`.

mod pattern;
mod qualifier;
mod split;

pub use pattern::bound_names;

use crate::error::{error, Errors};
use proc_macro2::{Span, TokenStream};
use syn::{Expr, Pat};

/// A parsed comprehension.
pub struct Comprehension {
    /// The expression computed for each element.
    pub head: Expr,
    /// The `|`-separated branches of qualifiers (more than one: parallel branches, zipped).
    pub branches: Vec<Branch>,
}

/// One branch: qualifiers separated by `,`.
pub struct Branch {
    /// The `|` that opens the branch.
    pub bar: Span,
    /// The qualifiers, in order.
    pub qualifiers: Vec<Qualifier>,
}

/// A qualifier.
pub enum Qualifier {
    /// `PAT <- EXPR`.
    Generator(Generator),
    /// A `bool` expression.
    Filter(Expr),
    /// `let PAT = EXPR`.
    Let(LetBinding),
}

/// `PAT <- EXPR`.
pub struct Generator {
    /// What each element is bound to.
    pub pat: Pat,
    /// The `<-`, for spans.
    pub arrow: Span,
    /// The collection.
    pub expr: Expr,
}

/// `let PAT = EXPR`.
pub struct LetBinding {
    /// The `let` keyword, for spans.
    pub let_span: Span,
    /// What the value is bound to.
    pub pat: Pat,
    /// The value.
    pub expr: Expr,
}

impl Qualifier {
    /// The pattern this qualifier binds, if any.
    pub fn pattern(&self) -> Option<&Pat> {
        match self {
            Qualifier::Generator(g) => Some(&g.pat),
            Qualifier::Let(l) => Some(&l.pat),
            Qualifier::Filter(_) => None,
        }
    }
}

/// Parses `HEAD | QUALIFIERS (| QUALIFIERS)*`, adding every problem found to `errors`.
pub fn parse(input: TokenStream, errors: &mut Errors) -> Option<Comprehension> {
    if input.is_empty() {
        errors.push(error(
            Span::call_site(),
            "empty comprehension",
            "write `par![HEAD | x <- xs, ...]`, e.g. `par![x * x | x <- 0..10]`",
        ));
        return None;
    }
    let mut segments = split::split_bars(input).into_iter();
    let head = segments.next().expect("split_bars returns at least one segment");
    let rest: Vec<split::Segment> = segments.collect();
    if rest.is_empty() {
        let generator_like = qualifier::contains_arrow(&head.tokens);
        errors.push(error(
            first_span(&head.tokens),
            "expected `|` between the head and the qualifiers of the comprehension",
            if generator_like {
                "a comprehension starts with the expression to compute: `par![x | x <- xs]`, not \
                 `par![x <- xs]`"
            } else {
                "write `par![HEAD | x <- xs, ...]`, e.g. `par![x * x | x <- 0..10]`"
            },
        ));
        return None;
    }
    let head_expr = if head.tokens.is_empty() {
        errors.push(error(
            rest[0].bar,
            "expected the head of the comprehension before `|`",
            "write the expression to compute first: `par![x * x | x <- xs]`; a closure in the \
             head must be parenthesised: `(|a| a + x)`",
        ));
        None
    } else {
        match syn::parse2::<Expr>(head.tokens.clone()) {
            Ok(expr) => Some(expr),
            Err(e) => {
                errors.push(e);
                None
            }
        }
    };
    let several = rest.len() > 1;
    let mut branches = Vec::new();
    for segment in rest {
        if segment.tokens.is_empty() {
            errors.push(error(
                segment.bar,
                "expected qualifiers after `|`",
                "write at least one generator after `|`: `par![x | x <- xs]`",
            ));
            continue;
        }
        let qualifiers = qualifier::parse_branch(segment.tokens.clone(), errors);
        let has_generator = qualifiers.iter().any(|q| matches!(q, Qualifier::Generator(_)));
        if several && !has_generator && !qualifiers.is_empty() {
            errors.push(error(
                segment.bar,
                "this `|` is read as the start of a parallel branch, but no generator follows it",
                "at the top level of a comprehension `|` separates the head, the qualifiers and \
                 parallel branches; inside an expression (bitwise or, a closure) parenthesise it: \
                 `(a | b)`, `(|v| v + 1)`",
            ));
            continue;
        }
        branches.push(Branch { bar: segment.bar, qualifiers });
    }
    Some(Comprehension { head: head_expr?, branches })
}

/// The span of the first token, or the call site for an empty stream.
pub(crate) fn first_span(tokens: &TokenStream) -> Span {
    tokens.clone().into_iter().next().map_or_else(Span::call_site, |t| t.span())
}
