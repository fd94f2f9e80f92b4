//! Which of the comprehension's variables an expression mentions.
//!
//! A variable is mentioned when its name is used as a plain path (`x`, `x.0`, `f(x)`,
//! `S { x }`), inside a macro's tokens (`vec![x; 3]`), or as an inline format argument
//! (`format!("{x}")`) — and is not shadowed at that point by a closure parameter, a `let` in a
//! block, a `match` arm, a `for` loop or an `if let`. Over-approximating is safe (the variable
//! is merely passed along); missing a use is not, so macro tokens count whenever the name
//! appears — but for the comprehensions of the `par!` family, which are read as what they are:
//! their generators and `let`s bind names for the qualifiers after them and the head, the
//! closures of `par_reduce!` and the by-key macros bind their parameters. (Counted as uses,
//! those names would make a nested comprehension seem to read a variable of another zipped
//! branch.)

use proc_macro2::{TokenStream, TokenTree};
use std::collections::HashSet;
use syn::visit::{self, Visit};
use syn::{Expr, Ident, Pat};

/// The occurrences of `names` that `expr` uses freely, in source order.
pub(crate) fn mentions(expr: &Expr, names: &HashSet<String>) -> Vec<Ident> {
    let mut visitor = Mentions { names, shadowed: Vec::new(), found: Vec::new() };
    visitor.visit_expr(expr);
    visitor.found
}

struct Mentions<'a> {
    names: &'a HashSet<String>,
    shadowed: Vec<HashSet<String>>,
    found: Vec<Ident>,
}

impl Mentions<'_> {
    fn is_shadowed(&self, name: &str) -> bool {
        self.shadowed.iter().any(|scope| scope.contains(name))
    }

    fn note(&mut self, ident: &Ident) {
        let name = ident.to_string();
        if self.names.contains(&name) && !self.is_shadowed(&name) {
            self.found.push(ident.clone());
        }
    }

    fn scoped(&mut self, pats: &[&Pat], f: impl FnOnce(&mut Self)) {
        let mut scope = HashSet::new();
        for pat in pats {
            pattern_names(pat, &mut scope);
        }
        self.shadowed.push(scope);
        f(self);
        self.shadowed.pop();
    }

    fn scan_tokens(&mut self, tokens: TokenStream) {
        for token in tokens {
            match token {
                TokenTree::Ident(ident) => self.note(&ident),
                TokenTree::Group(group) => self.scan_tokens(group.stream()),
                TokenTree::Literal(lit) => {
                    // Inline format arguments: "{x}", "{x:?}", "{x:>5}".
                    let text = lit.to_string();
                    if text.starts_with('"') || text.starts_with('r') {
                        for name in format_arguments(&text) {
                            if self.names.contains(&name) && !self.is_shadowed(&name) {
                                self.found.push(Ident::new(&name, lit.span()));
                            }
                        }
                    }
                }
                TokenTree::Punct(_) => {}
            }
        }
    }
}

impl Mentions<'_> {
    /// Visits `m` as a comprehension if it is one of the `par!` family that parses; whether it
    /// was.
    fn comprehension(&mut self, m: &syn::Macro) -> bool {
        use crate::syntax::{self, Qualifier, TransformKind};
        use crate::Macro;
        let Some(mac) = m.path.segments.last().and_then(|s| Macro::from_name(&s.ident.to_string()))
        else {
            return false;
        };
        let tokens = m.tokens.clone();
        let (arguments, rest) = match mac {
            Macro::ParReduce => match syntax::reduce_arguments(tokens) {
                Ok((op, identity, rest)) => (vec![op, identity], rest),
                Err(_) => return false,
            },
            Macro::ParMinByKey | Macro::ParMaxByKey => {
                match syntax::by_key_arguments(mac, tokens) {
                    Ok((key, rest)) => (vec![key], rest),
                    Err(_) => return false,
                }
            }
            _ => (Vec::new(), tokens),
        };
        let mut errors = crate::error::Errors::default();
        let Some(parsed) = syntax::parse(rest, &mut errors) else { return false };
        if errors.finish(()).is_err() {
            return false;
        }
        for argument in &arguments {
            self.visit_expr(argument);
        }
        // Each branch sees its own names; the head sees every branch's.
        let mut every_branch = HashSet::new();
        for branch in &parsed.branches {
            self.shadowed.push(HashSet::new());
            for qualifier in &branch.qualifiers {
                match qualifier {
                    Qualifier::Generator(g) => self.visit_expr(&g.expr),
                    Qualifier::Filter(e) => self.visit_expr(e),
                    Qualifier::Let(l) => self.visit_expr(&l.expr),
                    Qualifier::Transform(t) => {
                        match &t.kind {
                            TransformKind::OrderBy { key, .. }
                            | TransformKind::GroupBy { key, .. } => self.visit_expr(key),
                            TransformKind::Take { count, .. }
                            | TransformKind::Skip { count, .. } => self.visit_expr(count),
                        }
                    }
                }
                if let Some(pat) = qualifier.pattern() {
                    pattern_names(pat, self.shadowed.last_mut().expect("pushed above"));
                }
            }
            every_branch.extend(self.shadowed.pop().expect("pushed above"));
        }
        self.shadowed.push(every_branch);
        self.visit_expr(&parsed.head);
        self.shadowed.pop();
        true
    }
}

/// Identifiers used as inline arguments in a format string literal.
fn format_arguments(literal: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut chars = literal.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '{' {
            continue;
        }
        if chars.peek() == Some(&'{') {
            chars.next();
            continue;
        }
        let name: String = chars
            .by_ref()
            .take_while(|c| *c != '}' && *c != ':')
            .collect::<String>()
            .trim()
            .to_string();
        if name.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_alphanumeric() || c == '_')
        {
            names.push(name);
        }
    }
    names
}

/// Adds the names bound by `pat` to `out`.
pub(crate) fn pattern_names(pat: &Pat, out: &mut HashSet<String>) {
    struct Names<'a>(&'a mut HashSet<String>);
    impl<'ast> Visit<'ast> for Names<'_> {
        fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
            self.0.insert(p.ident.to_string());
            visit::visit_pat_ident(self, p);
        }
    }
    Names(out).visit_pat(pat);
}

impl<'ast> Visit<'ast> for Mentions<'_> {
    fn visit_expr_path(&mut self, e: &'ast syn::ExprPath) {
        if e.qself.is_none() && e.path.leading_colon.is_none() && e.path.segments.len() == 1 {
            let segment = &e.path.segments[0];
            if segment.arguments.is_none() {
                self.note(&segment.ident);
            }
        }
        visit::visit_expr_path(self, e);
    }

    fn visit_expr_closure(&mut self, e: &'ast syn::ExprClosure) {
        let params: Vec<&Pat> = e.inputs.iter().collect();
        self.scoped(&params, |v| v.visit_expr(&e.body));
    }

    fn visit_block(&mut self, block: &'ast syn::Block) {
        self.shadowed.push(HashSet::new());
        for stmt in &block.stmts {
            match stmt {
                syn::Stmt::Local(local) => {
                    if let Some(init) = &local.init {
                        self.visit_expr(&init.expr);
                        if let Some((_, diverge)) = &init.diverge {
                            self.visit_expr(diverge);
                        }
                    }
                    let scope = self.shadowed.last_mut().expect("pushed above");
                    pattern_names(&local.pat, scope);
                }
                // Items inside a block cannot capture the comprehension's variables.
                syn::Stmt::Item(_) => {}
                syn::Stmt::Expr(expr, _) => self.visit_expr(expr),
                syn::Stmt::Macro(m) => self.visit_macro(&m.mac),
            }
        }
        self.shadowed.pop();
    }

    fn visit_arm(&mut self, arm: &'ast syn::Arm) {
        self.scoped(&[&arm.pat], |v| {
            if let Some((_, guard)) = &arm.guard {
                v.visit_expr(guard);
            }
            v.visit_expr(&arm.body);
        });
    }

    fn visit_expr_for_loop(&mut self, e: &'ast syn::ExprForLoop) {
        self.visit_expr(&e.expr);
        self.scoped(&[&e.pat], |v| v.visit_block(&e.body));
    }

    fn visit_expr_if(&mut self, e: &'ast syn::ExprIf) {
        if let Expr::Let(cond) = &*e.cond {
            self.visit_expr(&cond.expr);
            self.scoped(&[&cond.pat], |v| v.visit_block(&e.then_branch));
        } else {
            self.visit_expr(&e.cond);
            self.visit_block(&e.then_branch);
        }
        if let Some((_, else_branch)) = &e.else_branch {
            self.visit_expr(else_branch);
        }
    }

    fn visit_expr_while(&mut self, e: &'ast syn::ExprWhile) {
        if let Expr::Let(cond) = &*e.cond {
            self.visit_expr(&cond.expr);
            self.scoped(&[&cond.pat], |v| v.visit_block(&e.body));
        } else {
            self.visit_expr(&e.cond);
            self.visit_block(&e.body);
        }
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        if !self.comprehension(m) {
            self.scan_tokens(m.tokens.clone());
        }
    }

    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

#[cfg(test)]
mod tests {
    use super::mentions;
    use std::collections::HashSet;
    use syn::parse_quote;

    fn names(expr: syn::Expr) -> Vec<String> {
        let set: HashSet<String> = ["x", "y", "z"].iter().map(|s| s.to_string()).collect();
        mentions(&expr, &set).iter().map(|i| i.to_string()).collect()
    }

    #[test]
    fn finds_free_uses() {
        assert_eq!(names(parse_quote!(x * x + y * y == z * z)), ["x", "x", "y", "y", "z", "z"]);
        assert_eq!(names(parse_quote!(f(x).y + S { z }.w)), ["x", "z"]);
        assert_eq!(names(parse_quote!(vec![x; 3])), ["x"]);
        assert_eq!(names(parse_quote!(format!("{x} {y:?} {{z}}"))), ["x", "y"]);
        assert_eq!(names(parse_quote!(m::x + x::y)), Vec::<String>::new());
    }

    #[test]
    fn respects_shadowing() {
        assert_eq!(names(parse_quote!(xs.iter().map(|x| x + y))), ["y"]);
        assert_eq!(
            names(parse_quote!({
                let x = y;
                x + z
            })),
            ["y", "z"]
        );
        assert_eq!(
            names(parse_quote!(match a {
                Some(x) => x,
                None => y,
            })),
            ["y"]
        );
        assert_eq!(names(parse_quote!(if let Some(y) = x { y } else { y })), ["x", "y"]);
        // A comprehension's generators, `let`s and closures bind names; a zipped branch's are
        // its own.
        assert_eq!(names(parse_quote!(par_sum![x * z | x <- 0..y])), ["y", "z"]);
        assert_eq!(
            names(parse_quote!(par![(a, x) | a <- 0..3 | let x = 2, b <- 0..x])),
            Vec::<String>::new()
        );
        assert_eq!(names(parse_quote!(par![(a, b) | a <- 0..x | b <- 0..a])), ["x"]);
        assert_eq!(
            names(parse_quote!(par_reduce!(|x: u8, y| x ^ y, z; w | w <- 0..y))),
            ["z", "y"]
        );
        assert_eq!(
            names(parse_quote!(parcomp::par_max_by_key!(|x: &(u8, u8)| x.1; (x, y) | y <- 0..z))),
            ["z", "x"]
        );
        assert_eq!(names(parse_quote!(par![x | x <- 0..y, order by z, take x])), ["y", "z"]);
        assert_eq!(
            names(parse_quote!({
                for z in 0..x {
                    g(z)
                }
                z
            })),
            ["x", "z"]
        );
    }
}
