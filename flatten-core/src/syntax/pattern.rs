//! Patterns of generators and `let`s: identifiers, `_` and (nested) tuples.

use crate::error::{error_spanned, Errors};
use quote::quote;
use syn::{Ident, Pat};

/// Reports patterns other than identifiers, `_` and tuples, and names bound twice.
pub(crate) fn check_pattern(pat: &Pat, errors: &mut Errors) {
    let mut names: Vec<Ident> = Vec::new();
    check(pat, errors, &mut names);
}

fn check(pat: &Pat, errors: &mut Errors, names: &mut Vec<Ident>) {
    match pat {
        Pat::Ident(p) if p.by_ref.is_none() && p.mutability.is_none() && p.subpat.is_none() => {
            if let Some(first) = names.iter().find(|n| **n == p.ident) {
                // One error spanning both bindings (a second error "first bound here" would
                // read as a second problem).
                let second = &p.ident;
                errors.push(error_spanned(
                    quote!(#first #second),
                    format!("`{}` is bound more than once in this pattern", p.ident),
                    "give each element of the tuple its own name, or `_` to ignore it",
                ));
            } else {
                names.push(p.ident.clone());
            }
        }
        Pat::Ident(p) if p.mutability.is_some() || p.by_ref.is_some() => {
            errors.push(error_spanned(
                pat,
                "`mut` and `ref` are not allowed in comprehension patterns",
                "each variable is an immutable copy of its element; compute a new value with \
             `let y = ...`",
            ))
        }
        Pat::Wild(_) => {}
        Pat::Paren(p) => check(&p.pat, errors, names),
        Pat::Tuple(t) => {
            for p in &t.elems {
                check(p, errors, names);
            }
        }
        _ => errors.push(error_spanned(
            pat,
            "unsupported pattern in a comprehension",
            "patterns are identifiers, `_` and (nested) tuples: `x`, `(i, v)`, `((a, b), _)`; \
             destructure other values with a `let` or in the head",
        )),
    }
}

/// The identifiers a (checked) pattern binds, in order.
pub fn bound_names(pat: &Pat) -> Vec<Ident> {
    let mut names = Vec::new();
    collect(pat, &mut names);
    names
}

fn collect(pat: &Pat, names: &mut Vec<Ident>) {
    match pat {
        Pat::Ident(p) => names.push(p.ident.clone()),
        Pat::Paren(p) => collect(&p.pat, names),
        Pat::Tuple(t) => t.elems.iter().for_each(|p| collect(p, names)),
        Pat::Type(t) => collect(&t.pat, names),
        _ => {}
    }
}
