//! Splitting a comprehension at its top-level `|`.
//!
//! Token trees already group everything inside `(..)`, `[..]` and `{..}`, so "top level" is
//! simply the outermost token stream. What remains is to leave `||` (logical or) and `|=`
//! alone.

use proc_macro2::{Punct, Spacing, Span, TokenStream, TokenTree};
use std::ops::Range;

/// A part of the comprehension between two top-level `|`.
pub(crate) struct Segment {
    /// The `|` before this part (the call site for the head).
    pub(crate) bar: Span,
    /// The tokens of this part.
    pub(crate) tokens: TokenStream,
}

/// Splits `input` at every top-level `|` that is not part of `||` or `|=`.
pub(crate) fn split_bars(input: TokenStream) -> Vec<Segment> {
    let tokens: Vec<TokenTree> = input.into_iter().collect();
    let mut segments = vec![Segment { bar: Span::call_site(), tokens: TokenStream::new() }];
    let mut i = 0;
    while i < tokens.len() {
        let token = &tokens[i];
        if let TokenTree::Punct(p) = token {
            if p.as_char() == '|' {
                let next_char = match tokens.get(i + 1) {
                    Some(TokenTree::Punct(next)) if p.spacing() == Spacing::Joint => {
                        Some(next.as_char())
                    }
                    _ => None,
                };
                if matches!(next_char, Some('|') | Some('=')) {
                    // `||` or `|=`: an operator; keep both characters.
                    let segment = segments.last_mut().expect("at least one segment");
                    segment.tokens.extend([token.clone(), tokens[i + 1].clone()]);
                    i += 2;
                    continue;
                }
                segments.push(Segment { bar: p.span(), tokens: TokenStream::new() });
                i += 1;
                continue;
            }
        }
        segments.last_mut().expect("at least one segment").tokens.extend([token.clone()]);
        i += 1;
    }
    segments
}

/// A `|` that belongs to an expression (bitwise or, a closure) rather than separating the parts
/// of the comprehension.
pub(crate) struct StrayBar {
    /// The first such `|` of the expression.
    pub(crate) bar: Span,
    /// The expression, parenthesised, as the user should write it.
    pub(crate) suggestion: String,
}

/// Rejoins to the part before it every part that cannot start a branch of qualifiers
/// (`starts_qualifiers` is false: its first qualifier is neither a generator nor a `let`). The
/// `|` before such a part belongs to an expression, as in `par![a | b | x <- xs]` or
/// `par![x | x <- xs, x | 1 == 3]`. Returns the parts as the user meant them, and the stray
/// `|`, one for each expression that holds some, so the error can show the expression
/// parenthesised.
///
/// At least one part of qualifiers is kept: in `par![x | x > 0]` the lone part after the head
/// is the qualifiers, whatever they are.
pub(crate) fn rejoin_stray_bars(
    segments: Vec<Segment>,
    starts_qualifiers: impl Fn(&TokenStream) -> bool,
) -> (Vec<Segment>, Vec<StrayBar>) {
    // A part whose first qualifier is a filter of a name a later generator of the part binds
    // (`| b > 0, b <- ys`) is a branch written in the wrong order, which its analysis reports;
    // `| b, y <- ys` after `a` is the expression `a | b`.
    let later_generator = |tokens: &TokenStream| {
        let tokens: Vec<TokenTree> = tokens.clone().into_iter().collect();
        let pieces = pieces(&tokens);
        let mut bound = Vec::new();
        for piece in pieces.iter().skip(1) {
            let piece = &tokens[piece.clone()];
            let arrow = piece.windows(2).position(|w| match (&w[0], &w[1]) {
                (TokenTree::Punct(a), TokenTree::Punct(b)) => {
                    a.as_char() == '<' && a.spacing() == Spacing::Joint && b.as_char() == '-'
                }
                _ => false,
            });
            if let Some(arrow) = arrow {
                idents(&piece[..arrow].iter().cloned().collect(), &mut bound);
            }
        }
        let mut first = Vec::new();
        if let Some(piece) = pieces.first() {
            idents(&tokens[piece.clone()].iter().cloned().collect(), &mut first);
        }
        first.iter().any(|name| bound.contains(name))
    };
    let mut stray: Vec<bool> = segments
        .iter()
        .enumerate()
        .map(|(i, s)| {
            i > 0
                && !s.tokens.is_empty()
                && !starts_qualifiers(&s.tokens)
                && !later_generator(&s.tokens)
        })
        .collect();
    if stray.len() > 1 && stray[1..].iter().all(|s| *s) {
        stray[1] = false;
    }
    // Each part: its `|`, its tokens, and the positions of the stray `|` rejoined into it.
    let mut parts: Vec<(Span, Vec<TokenTree>, Vec<usize>)> = Vec::new();
    for (segment, stray) in segments.into_iter().zip(stray) {
        match parts.last_mut() {
            Some((_, tokens, bars)) if stray => {
                bars.push(tokens.len());
                let mut bar = Punct::new('|', Spacing::Alone);
                bar.set_span(segment.bar);
                tokens.push(TokenTree::Punct(bar));
                tokens.extend(segment.tokens);
            }
            _ => parts.push((segment.bar, segment.tokens.into_iter().collect(), Vec::new())),
        }
    }
    let mut stray_bars = Vec::new();
    for (index, (_, tokens, bars)) in parts.iter().enumerate() {
        if bars.is_empty() {
            continue;
        }
        // The head is one expression; qualifiers are separated by top-level `,`.
        let pieces: Vec<Range<usize>> =
            if index == 0 { std::iter::once(0..tokens.len()).collect() } else { pieces(tokens) };
        for piece in pieces {
            let Some(&first) = bars.iter().find(|b| piece.contains(b)) else { continue };
            let start = piece.start + expression_start(&tokens[piece.clone()]);
            let start = if start <= first { start } else { piece.start };
            let expression: TokenStream = tokens[start..piece.end].iter().cloned().collect();
            stray_bars.push(StrayBar {
                bar: tokens[first].span(),
                suggestion: format!("({})", crate::text::text(&expression)),
            });
        }
    }
    let segments = parts
        .into_iter()
        .map(|(bar, tokens, _)| Segment { bar, tokens: tokens.into_iter().collect() })
        .collect();
    (segments, stray_bars)
}

/// Adds the identifiers in `tokens` (and in its groups) to `out`.
fn idents(tokens: &TokenStream, out: &mut Vec<String>) {
    for token in tokens.clone() {
        match token {
            TokenTree::Ident(ident) => out.push(ident.to_string()),
            TokenTree::Group(group) => idents(&group.stream(), out),
            _ => {}
        }
    }
}

/// The ranges of the `,`-separated pieces of `tokens`.
fn pieces(tokens: &[TokenTree]) -> Vec<Range<usize>> {
    let mut pieces = Vec::new();
    let mut start = 0;
    for (i, token) in tokens.iter().enumerate() {
        if matches!(token, TokenTree::Punct(p) if p.as_char() == ',') {
            pieces.push(start..i);
            start = i + 1;
        }
    }
    pieces.push(start..tokens.len());
    pieces
}

/// Where the expression of a qualifier starts: after the `<-` of a generator, after the `=` of
/// a `let`, else at its start (a filter).
fn expression_start(qualifier: &[TokenTree]) -> usize {
    let is_let = matches!(qualifier.first(), Some(TokenTree::Ident(i)) if i == "let");
    for (i, token) in qualifier.iter().enumerate() {
        let TokenTree::Punct(p) = token else { continue };
        let next = qualifier.get(i + 1);
        if p.as_char() == '<'
            && p.spacing() == Spacing::Joint
            && matches!(next, Some(TokenTree::Punct(m)) if m.as_char() == '-')
        {
            return i + 2;
        }
        let after_joint = i > 0
            && matches!(&qualifier[i - 1], TokenTree::Punct(q) if q.spacing() == Spacing::Joint);
        if is_let && p.as_char() == '=' && p.spacing() == Spacing::Alone && !after_joint {
            return i + 1;
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::{rejoin_stray_bars, split_bars};
    use crate::syntax::qualifier::starts_qualifiers;
    use quote::quote;

    /// The parts after rejoining stray `|`, and the suggested parenthesised expressions.
    fn rejoined(tokens: proc_macro2::TokenStream) -> (Vec<String>, Vec<String>) {
        let (segments, stray) = rejoin_stray_bars(split_bars(tokens), starts_qualifiers);
        let parts = segments.into_iter().map(|s| crate::text::text(&s.tokens)).collect();
        (parts, stray.into_iter().map(|s| s.suggestion).collect())
    }

    #[test]
    fn stray_bars_are_rejoined_to_their_expression() {
        assert_eq!(
            rejoined(quote!(flag | mask | flag <- flags)),
            (vec!["flag | mask".into(), "flag <- flags".into()], vec!["(flag | mask)".into()])
        );
        assert_eq!(
            rejoined(quote!(x | x <- xs, x | 1 == 3)),
            (vec!["x".into(), "x <- xs, x | 1 == 3".into()], vec!["(x | 1 == 3)".into()])
        );
        assert_eq!(
            rejoined(quote!(x | x <- xs, a | b | c, x > 0)),
            (vec!["x".into(), "x <- xs, a | b | c, x > 0".into()], vec!["(a | b | c)".into()])
        );
        assert_eq!(rejoined(quote!(b | b <- low | high)).1, ["(low | high)"]);
        assert_eq!(rejoined(quote!(f(x) | x <- xs, let f = |v| v * k)).1, ["(|v| v * k)"]);
        assert_eq!(rejoined(quote!(|a: i32| a + x | x <- xs)).1, ["(|a: i32| a + x)"]);
    }

    #[test]
    fn real_separators_are_kept() {
        let none: Vec<String> = Vec::new();
        assert_eq!(
            rejoined(quote!(x | x <- xs, x > 0)),
            (vec!["x".into(), "x <- xs, x > 0".into()], none.clone())
        );
        // Parallel branches, a `let` or a mistaken `in` / `for` after `|`, a lone branch without
        // a generator, and an empty branch are all real separators.
        assert_eq!(rejoined(quote!(x | x <- xs | y <- ys)).0.len(), 3);
        assert_eq!(rejoined(quote!(x | x <- xs | let y = 1)).0.len(), 3);
        assert_eq!(rejoined(quote!(x | x <- xs | y in ys)).0.len(), 3);
        assert_eq!(rejoined(quote!(x | x <- xs | for y in ys)).0.len(), 3);
        assert_eq!(
            rejoined(quote!(1 | enabled)),
            (vec!["1".into(), "enabled".into()], none.clone())
        );
        assert_eq!(rejoined(quote!(x | x <- xs |)).0.len(), 3);
        assert_eq!(rejoined(quote!(x | a > 0 | 1)).1, ["(a > 0 | 1)"]);
        // A branch that starts with a filter of its own generator's variable: a branch (its
        // analysis says the filter must come after the generator), not an expression; a name
        // bound elsewhere makes it an expression again.
        assert_eq!(rejoined(quote!(x | x <- xs | b > 0, b <- ys)).0.len(), 3);
        assert_eq!(rejoined(quote!(x | x <- xs, a | b, y <- ys)).1, ["(a | b)"]);
    }

    fn parts(tokens: proc_macro2::TokenStream) -> Vec<String> {
        split_bars(tokens).into_iter().map(|s| crate::text::text(&s.tokens)).collect()
    }

    #[test]
    fn splits_only_at_top_level_bars() {
        assert_eq!(parts(quote!(x | x <- xs)), ["x", "x <- xs"]);
        assert_eq!(
            parts(quote!(x | x <- xs, a || b | y <- ys)),
            ["x", "x <- xs, a || b", "y <- ys"]
        );
        assert_eq!(
            parts(quote!(f(|a| a) | x <- xs.map(|i| i))),
            ["f(|a| a)", "x <- xs.map(|i| i)"]
        );
        assert_eq!(parts(quote!(x | x <- xs, { a |= 1; a })), ["x", "x <- xs, { a |= 1; a }"]);
        assert_eq!(parts(quote!(x)), ["x"]);
    }
}
