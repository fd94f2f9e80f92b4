//! Splitting a comprehension at its top-level `|`.
//!
//! Token trees already group everything inside `(..)`, `[..]` and `{..}`, so "top level" is
//! simply the outermost token stream. What remains is to leave `||` (logical or) and `|=`
//! alone.

use proc_macro2::{Spacing, Span, TokenStream, TokenTree};

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

#[cfg(test)]
mod tests {
    use super::split_bars;
    use quote::quote;

    fn parts(tokens: proc_macro2::TokenStream) -> Vec<String> {
        split_bars(tokens).into_iter().map(|s| crate::text::text(&s.tokens)).collect()
    }

    #[test]
    fn splits_only_at_top_level_bars() {
        assert_eq!(parts(quote!(x | x <- xs)), ["x", "x <- xs"]);
        assert_eq!(parts(quote!(x | x <- xs, a || b | y <- ys)), ["x", "x <- xs, a || b", "y <- ys"]);
        assert_eq!(parts(quote!(f(|a| a) | x <- xs.map(|i| i))), ["f(|a| a)", "x <- xs.map(|i| i)"]);
        assert_eq!(parts(quote!(x | x <- xs, { a |= 1; a })), ["x", "x <- xs, { a |= 1; a }"]);
        assert_eq!(parts(quote!(x)), ["x"]);
    }
}
