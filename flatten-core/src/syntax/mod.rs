//! The surface syntax of a comprehension: `HEAD | QUALIFIER, QUALIFIER, ... | BRANCH ...`.
//!
//! syn cannot parse a comprehension on its own: it would read `e | x < -xs` as one expression.
//! So the token stream is first split at the `|` that stand at its top level (`split`), and
//! each part is then parsed qualifier by qualifier (`qualifier`), telling a generator
//! `x <- xs` from a comparison `x < -xs` by the spacing of `<` and `-`.

mod pattern;
mod peek;
mod qualifier;
mod reduce_args;
mod split;
mod transform;

pub use pattern::{bound_names, is_internal, user_names};
pub use peek::{by_key_arguments, mentioned_variables};
pub(crate) use peek::{split_head, split_top_level};
pub(crate) use qualifier::UNMATCHED;
pub use reduce_args::reduce_arguments;
pub(crate) use transform::starts_transform;

use crate::error::{error, error_spanned, Errors};
use proc_macro2::{Span, TokenStream};
use syn::{Expr, Pat};

/// A parsed comprehension.
pub struct Comprehension {
    /// `@gpu` or `@cpu` before the head.
    pub marker: crate::plan::Marker,
    /// The expression computed for each element.
    pub head: Expr,
    /// The `|`-separated branches of qualifiers (more than one: parallel branches, zipped).
    pub branches: Vec<Branch>,
}

/// One branch: qualifiers separated by `,`.
pub struct Branch {
    /// The `|` that opens the branch.
    pub bar: Span,
    /// Each qualifier as written. A refutable generator is desugared into a generator, a
    /// filter and a `let` (see `qualifier::desugar_refutable`): the generator holds the tokens
    /// as written, the other two none, since parsing the written tokens again (a part of the
    /// comprehension compiled on its own) makes them again, with names of that expansion.
    pub tokens: Vec<TokenStream>,
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
    /// `order by`, `group by`, `take`, `skip`: acts on all the elements so far.
    Transform(Transform),
}

/// A qualifier that acts on all the elements produced so far.
pub struct Transform {
    /// Which one, with its operand.
    pub kind: TransformKind,
    /// The qualifier as written.
    pub tokens: TokenStream,
}

/// The transforms.
pub enum TransformKind {
    /// `order by KEY [desc]`.
    OrderBy {
        /// The key.
        key: Expr,
        /// `desc`.
        descending: bool,
        /// `order by`, for spans.
        keyword: Span,
    },
    /// `group by KEY`.
    GroupBy {
        /// The key: a variable or a tuple of variables.
        key: Expr,
        /// `group by`, for spans.
        keyword: Span,
    },
    /// `take N`.
    Take {
        /// How many.
        count: Expr,
        /// `take`, for spans.
        keyword: Span,
    },
    /// `skip N`.
    Skip {
        /// How many.
        count: Expr,
        /// `skip`, for spans.
        keyword: Span,
    },
}

impl TransformKind {
    /// The keyword(s): `order by`, `group by`, `take`, `skip`.
    pub fn keyword(&self) -> (&'static str, Span) {
        match self {
            TransformKind::OrderBy { keyword, .. } => ("order by", *keyword),
            TransformKind::GroupBy { keyword, .. } => ("group by", *keyword),
            TransformKind::Take { keyword, .. } => ("take", *keyword),
            TransformKind::Skip { keyword, .. } => ("skip", *keyword),
        }
    }
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

impl Branch {
    /// The qualifiers from the `from`-th on, as written: what a part of the comprehension
    /// compiled on its own is given.
    pub fn written(&self, from: usize) -> Vec<TokenStream> {
        written(&self.tokens[from..])
    }
}

/// The qualifiers of `tokens` (a branch's, see [`Branch::tokens`]) as written: without the
/// empty entries of the qualifiers a refutable generator was desugared into.
pub fn written(tokens: &[TokenStream]) -> Vec<TokenStream> {
    tokens.iter().filter(|t| !t.is_empty()).cloned().collect()
}

impl Qualifier {
    /// The pattern this qualifier binds, if any.
    pub fn pattern(&self) -> Option<&Pat> {
        match self {
            Qualifier::Generator(g) => Some(&g.pat),
            Qualifier::Let(l) => Some(&l.pat),
            Qualifier::Filter(_) | Qualifier::Transform(_) => None,
        }
    }
}

/// Parses `[@gpu | @cpu] HEAD | QUALIFIERS (| QUALIFIERS)*`, adding every problem found to
/// `errors`.
pub fn parse(input: TokenStream, errors: &mut Errors) -> Option<Comprehension> {
    let (marker, input) = marker(input, errors);
    if input.is_empty() {
        errors.push(error(
            Span::call_site(),
            "empty comprehension",
            "write `par![HEAD | x <- xs, ...]`, e.g. `par![x * x | x <- 0..10]`",
        ));
        return None;
    }
    let (segments, stray_bars) =
        split::rejoin_stray_bars(split::split_bars(input), qualifier::starts_qualifiers);
    for stray in stray_bars {
        errors.push(error(
            stray.bar,
            "this `|` must be parenthesised: at the top level of a comprehension, `|` separates \
             the head from the qualifiers",
            format_args!(
                "write `{}`; a `|` of an expression (bitwise or, a closure) must be inside \
                 parentheses",
                stray.suggestion
            ),
        ));
    }
    let mut segments = segments.into_iter();
    let head = segments.next().expect("split_bars returns at least one segment");
    let rest: Vec<split::Segment> = segments.collect();
    if rest.is_empty() {
        let generator_like = qualifier::contains_arrow(&head.tokens);
        errors.push(error_spanned(
            &head.tokens,
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
                errors.push(qualifier::with_help(
                    e,
                    &head.tokens,
                    "the head is one expression, computed for each element: \
                     `par![(x, y) | x <- xs, y <- ys]`",
                ));
                None
            }
        }
    };
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
        let (qualifiers, tokens) =
            qualifier::parse_branch(segment.tokens.clone(), errors).into_iter().unzip();
        branches.push(Branch { bar: segment.bar, tokens, qualifiers });
    }
    Some(Comprehension { marker, head: head_expr?, branches })
}

/// Splits off a leading `@gpu` or `@cpu`.
fn marker(input: TokenStream, errors: &mut Errors) -> (crate::plan::Marker, TokenStream) {
    use proc_macro2::TokenTree;
    let tokens: Vec<TokenTree> = input.clone().into_iter().collect();
    match tokens.as_slice() {
        [TokenTree::Punct(at), TokenTree::Ident(name), rest @ ..] if at.as_char() == '@' => {
            let span = at.span().join(name.span()).unwrap_or_else(|| name.span());
            let marker = match name.to_string().as_str() {
                "gpu" => crate::plan::Marker::Gpu(span),
                "cpu" => crate::plan::Marker::Cpu(span),
                other => {
                    errors.push(error(
                        name.span(),
                        format!("unknown marker `@{other}`"),
                        "write `@gpu` to require the device or `@cpu` to keep the comprehension \
                         on the CPU, before the head: `par![@gpu x * x | x <- xs]`",
                    ));
                    crate::plan::Marker::None
                }
            };
            (marker, rest.iter().cloned().collect())
        }
        _ => (crate::plan::Marker::None, input),
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::errors;
    use proc_macro2::TokenStream;
    use quote::quote;

    fn assert_one(input: TokenStream, message: &str, help: &str) {
        let errors = errors(input);
        assert_eq!(errors.len(), 1, "{errors:#?}");
        let (m, h) = errors[0].split_once("\n= help: ").expect("a help line");
        assert!(m.contains(message), "{m:?} lacks {message:?}");
        assert!(h.contains(help), "{h:?} lacks {help:?}");
    }

    #[test]
    fn every_error_has_a_help_line() {
        let inputs = [
            quote!(),
            quote!(x <- xs),
            quote!(x + | x <- xs),
            quote!(x y | x <- xs),
            quote!(x | x <- xs, x +),
            quote!(y | x <- xs, let y =),
            quote!(x | x <- xs +),
            quote!(x | x <- xs, for),
        ];
        for input in inputs {
            let errors = errors(input.clone());
            assert!(!errors.is_empty(), "{input}");
            for e in errors {
                assert!(e.contains("\n= help: "), "{input}: {e}");
            }
        }
    }

    #[test]
    fn a_stray_bar_is_one_error_that_shows_the_parentheses() {
        assert_one(
            quote!(flag | mask | flag <- flags),
            "this `|` must be parenthesised",
            "`(flag | mask)`",
        );
        assert_one(
            quote!(x | x <- xs, x | 1 == 3),
            "this `|` must be parenthesised",
            "`(x | 1 == 3)`",
        );
        assert_one(
            quote!(f(x) | x <- xs, let f = |v| v + 1),
            "must be parenthesised",
            "`(|v| v + 1)`",
        );
    }

    #[test]
    fn generators_written_as_for_loops_are_explained_and_read_on() {
        assert_one(quote!(p * 2 | p in prices), "expected `<-`, found `in`", "`p <- prices`");
        assert_one(quote!(w | for w in words), "not as a `for` loop", "`w <- words`");
        assert_one(quote!(i | for i <- 0..n), "without `for`", "`i <- 0..n`");
        assert_one(quote!(x | x in), "expected `<-` and a collection, found `in`", "PAT <- EXPR");
        // Read on as the generator meant: the later mistake is reported too.
        let errors = errors(quote!(x + y | x in xs, y <- f(x)));
        assert_eq!(errors.len(), 2, "{errors:#?}");
        assert!(errors[1].starts_with("cannot flatten the generator `y <- f(x)`"), "{errors:#?}");
    }

    #[test]
    fn qualifier_syntax_errors() {
        assert_one(
            quote!((r, c) | r <- rows c <- cols),
            "expected `,` before the qualifier `c <- cols`",
            "separated by `,`",
        );
        assert_one(
            quote!(x | x <- xs,, x > 0),
            "expected a qualifier before this `,`",
            "remove the extra `,`",
        );
        assert_one(
            quote!(x | x <- xs, x % 2 ==),
            "`x % 2 ==` is incomplete: expected an expression",
            "qualifiers are",
        );
        assert_one(
            quote!(h | x <- xs, let h),
            "expected `=` in a `let` qualifier",
            "let y = x * 2",
        );
        assert_one(quote!(x | x <- xs, x = 3), "an assignment", "write `==`");
    }

    #[test]
    fn pattern_errors() {
        assert_one(
            quote!(a | (a, a) <- pairs),
            "`a` is bound more than once in this pattern",
            "its own name",
        );
        assert_one(
            quote!(y | x <- xs, let Some(y) = x),
            "the pattern of a `let` qualifier must always match",
            "Some(v) <- &opts",
        );
        assert!(errors(quote!(x | Some(x) <- xs)).is_empty());
        assert!(errors(quote!((a, b) | (0, a) <- xs, Ok(b) <- ys, None <- zs)).is_empty());
        assert_one(quote!(x | mut x <- xs), "`mut` and `ref` are not allowed", "let y =");
        assert_one(
            quote!(x | x: u32 <- xs),
            "a generator pattern cannot have a type annotation",
            "`x <- 0..10u32`",
        );
        assert_one(
            quote!(y | x <- xs, let y: u64 = x),
            "a `let` qualifier cannot have a type annotation",
            "`let y = u64::from(...)`",
        );
    }

    #[test]
    fn incomplete_code_is_named() {
        assert_one(
            quote!(x + | x <- xs),
            "`x +` is incomplete: expected an expression",
            "the head",
        );
        assert_one(
            quote!(y | x <- xs, let y =),
            "`let y =` is incomplete: expected an expression",
            "qualifiers are",
        );
        assert_one(
            quote!(x | x <- xs +),
            "`x <- xs +` is incomplete: expected an expression",
            "qualifiers are",
        );
    }

    #[test]
    fn head_errors() {
        assert_one(
            quote!(x <- xs),
            "expected `|` between the head and the qualifiers",
            "not `par![x <- xs]`",
        );
        assert_one(
            quote!(x * 2),
            "expected `|` between the head and the qualifiers",
            "par![HEAD |",
        );
        assert_one(
            quote!(| x <- xs),
            "expected the head of the comprehension",
            "write the expression",
        );
        assert_one(quote!(x | ), "expected qualifiers after `|`", "at least one generator");
        assert_one(quote!(), "empty comprehension", "par![x * x | x <- 0..10]");
    }
}
