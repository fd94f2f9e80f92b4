//! Source-like text of token streams, for `par_explain!` and for naming a comprehension in
//! runtime messages (`x * x + y * y == z * z`, `1..n`, `m.row(i)`).

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};
use quote::ToTokens;

/// The text of `tokens`, spaced the way people write Rust.
pub fn text(tokens: &impl ToTokens) -> String {
    let mut out = String::new();
    write_stream(&mut out, tokens.to_token_stream());
    out
}

/// A struct field's name as Rust writes it without `r#` (`x`, and a tuple struct's `0`): how
/// the derive describes the field and the kernels and the runtime find it.
pub fn member_text(member: &syn::Member) -> String {
    match member {
        syn::Member::Named(ident) => syn::ext::IdentExt::unraw(ident).to_string(),
        syn::Member::Unnamed(index) => index.index.to_string(),
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Last {
    /// Nothing yet, or just after an opening delimiter.
    Start,
    /// An identifier, literal or closing delimiter.
    Word,
    /// A token after which no space goes (`.`, `::`, `..`, a prefix `-`/`&`/`!`/`*`, an
    /// opening closure `|`).
    Tight,
    /// A binary operator or separator: a space goes after it.
    Spaced,
    /// The first character of a multi-character operator (`=` of `==`, `<` of `<-`).
    Joined,
}

fn write_stream(out: &mut String, tokens: TokenStream) {
    let mut last = Last::Start;
    let mut in_closure_params = false;
    let mut tokens = tokens.into_iter().peekable();
    while let Some(token) = tokens.next() {
        match &token {
            TokenTree::Ident(_) | TokenTree::Literal(_) => {
                space_before_word(out, last);
                out.push_str(&token.to_string());
                last = Last::Word;
            }
            TokenTree::Group(group) => {
                let (open, close) = match group.delimiter() {
                    Delimiter::Parenthesis => ("(", ")"),
                    Delimiter::Bracket => ("[", "]"),
                    Delimiter::Brace => ("{ ", " }"),
                    Delimiter::None => ("", ""),
                };
                // `f(x)`, `xs[i]`, `vec![..]` attach; `a + (b)` and `{` after a word do not.
                let attach = last == Last::Word && group.delimiter() != Delimiter::Brace
                    || last == Last::Tight;
                if !attach {
                    space_before_word(out, last);
                }
                if group.stream().is_empty() && group.delimiter() == Delimiter::Brace {
                    out.push_str("{}");
                } else {
                    out.push_str(open);
                    write_stream(out, group.stream());
                    out.push_str(close);
                }
                last = Last::Word;
            }
            TokenTree::Punct(punct) => {
                let c = punct.as_char();
                let joint = punct.spacing() == Spacing::Joint;
                let next_is_group = matches!(tokens.peek(), Some(TokenTree::Group(_)));
                let next_is_pipe =
                    matches!(tokens.peek(), Some(TokenTree::Punct(p)) if p.as_char() == '|');
                let (space, next) = match c {
                    // Separators hug what precedes them.
                    ',' | ';' => (false, Last::Spaced),
                    // Field access, method calls, `..` and `..=`.
                    '.' => (false, if joint { Last::Joined } else { Last::Tight }),
                    '=' if out.ends_with("..") => (false, Last::Tight),
                    '?' => (false, Last::Word),
                    // Paths: `a::b`.
                    ':' if joint => (last == Last::Spaced, Last::Joined),
                    ':' if last == Last::Joined && out.ends_with(':') => (false, Last::Tight),
                    ':' => (false, Last::Spaced),
                    // A macro call: `vec![..]`.
                    '!' if last == Last::Word && next_is_group => (false, Last::Tight),
                    // Prefix operators.
                    '-' | '&' | '!' | '*'
                        if matches!(last, Last::Start | Last::Spaced | Last::Tight) =>
                    {
                        (last == Last::Spaced, if joint { Last::Joined } else { Last::Tight })
                    }
                    // Closure parameters: `|x| ..`, `|(a, b)| ..`.
                    '|' if !in_closure_params
                        && matches!(last, Last::Start | Last::Spaced | Last::Tight)
                        && !(joint && next_is_pipe) =>
                    {
                        in_closure_params = true;
                        (last == Last::Spaced, Last::Tight)
                    }
                    '|' if in_closure_params => {
                        in_closure_params = false;
                        (false, Last::Spaced)
                    }
                    _ => (
                        !matches!(last, Last::Start | Last::Joined | Last::Tight),
                        if joint { Last::Joined } else { Last::Spaced },
                    ),
                };
                if space {
                    out.push(' ');
                }
                out.push(c);
                last = next;
            }
        }
    }
}

fn space_before_word(out: &mut String, last: Last) {
    if matches!(last, Last::Word | Last::Spaced) {
        out.push(' ');
    }
}

#[cfg(test)]
mod tests {
    use super::text;
    use quote::quote;

    #[test]
    fn reads_like_rust() {
        assert_eq!(text(&quote!(x * x + y * y == z * z)), "x * x + y * y == z * z");
        assert_eq!(text(&quote!(1..n)), "1..n");
        assert_eq!(text(&quote!(y..x + y)), "y..x + y");
        assert_eq!(text(&quote!(0..=n)), "0..=n");
        assert_eq!(text(&quote!(m.row(i))), "m.row(i)");
        assert_eq!(text(&quote!((x, y, z))), "(x, y, z)");
        assert_eq!(text(&quote!(&rows[x])), "&rows[x]");
        assert_eq!(text(&quote!(a < -b)), "a < -b");
        assert_eq!(text(&quote!(!done && f(x, -1))), "!done && f(x, -1)");
        assert_eq!(text(&quote!((0..n).map(|i| i * 2))), "(0..n).map(|i| i * 2)");
        assert_eq!(text(&quote!(std::cmp::max(a, b))), "std::cmp::max(a, b)");
        assert_eq!(text(&quote!(vec![x; 3])), "vec![x; 3]");
        assert_eq!(text(&quote!(x <- xs)), "x <- xs");
        assert_eq!(text(&quote!(x < -xs)), "x < -xs");
        assert_eq!(text(&quote!(f(x)?.y)), "f(x)?.y");
        assert_eq!(text(&quote!(|&(a, b)| a + b)), "|&(a, b)| a + b");
        assert_eq!(text(&quote!(if a { b } else { c })), "if a { b } else { c }");
        assert_eq!(text(&quote!(x as f32 / 2.0)), "x as f32 / 2.0");
        assert_eq!(text(&quote!(S { a: ::core::file!(), b: 1 })), "S { a: ::core::file!(), b: 1 }");
    }
}
