//! Patterns of generators and `let`s.
//!
//! Identifiers, `_`, (nested) tuples and structs always match. A generator may also have a
//! refutable pattern — `Some(v)`, `Ok(x)`, `(0, y)`, `1..=9`, `Shape::Circle { r }` — which
//! keeps only the elements that match, as in Haskell. `None` alone is the variant; other names
//! are new variables (match a constant with a path or a literal: `i32::MAX`, `0`).
//!
//! The macro cannot see which names are structs and which are enum variants, so it goes by
//! Rust's naming conventions: `Point { x, y }`, `Meters(d, _)`, `geo::Point { .. }` and
//! `Self { .. }` name structs; `Shape::Circle { r }` (a path through a type's name) and
//! `Some(v)`, `Ok(v)`, `Err(e)` name variants. (A variant imported by name, `Circle { r }`
//! after `use Shape::*`, would be taken for a struct, and rustc would say the pattern does not
//! cover every case: name it through its enum.)

use crate::error::{error_spanned, Errors};
use quote::quote;
use syn::{Ident, Pat};

/// Whether a pattern always matches.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Refutability {
    /// Identifiers, `_` and tuples of those.
    Irrefutable,
    /// Anything else that Rust accepts as a pattern: a filter.
    Refutable,
}

/// Reports `mut`/`ref` bindings, names bound twice and patterns a comprehension cannot have,
/// and tells whether the pattern always matches.
pub(crate) fn check_pattern(pat: &Pat, errors: &mut Errors) -> Refutability {
    let mut names: Vec<Ident> = Vec::new();
    let mut refutable = false;
    check(pat, errors, &mut names, &mut refutable);
    if refutable {
        Refutability::Refutable
    } else {
        Refutability::Irrefutable
    }
}

/// Whether `ident`, alone in a pattern, is the prelude's `None` rather than a new variable.
/// Other names are variables, whatever their case (`NAN`, `N`), as a macro cannot see which
/// constants are in scope; inside a pattern that filters, Rust's own `match` then resolves a
/// constant of that name as the constant.
fn is_constant(ident: &Ident) -> bool {
    ident == "None"
}

fn check(pat: &Pat, errors: &mut Errors, names: &mut Vec<Ident>, refutable: &mut bool) {
    match pat {
        Pat::Ident(p) if p.mutability.is_some() || p.by_ref.is_some() => {
            errors.push(error_spanned(
                pat,
                "`mut` and `ref` are not allowed in comprehension patterns",
                "each variable is an immutable copy of its element; compute a new value with \
                 `let y = ...`",
            ))
        }
        Pat::Ident(p) if p.subpat.is_none() && is_constant(&p.ident) => *refutable = true,
        Pat::Ident(p) => {
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
            if let Some((_, sub)) = &p.subpat {
                *refutable = true;
                check(sub, errors, names, refutable);
            }
        }
        Pat::Wild(_) => {}
        Pat::Paren(p) => check(&p.pat, errors, names, refutable),
        Pat::Tuple(t) => {
            for p in &t.elems {
                check(p, errors, names, refutable);
            }
        }
        Pat::TupleStruct(t) => {
            let last = t.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
            if t.qself.is_some()
                || matches!(last.as_str(), "Some" | "Ok" | "Err")
                || names_variant(&t.path)
            {
                *refutable = true;
            }
            // A last `..` matches whatever fields are left (elsewhere it is taken as a filter,
            // which always matches too: the slots bind fields by position from the start).
            let elems = t.elems.iter();
            let n = t.elems.len();
            for (k, p) in elems.enumerate() {
                if k + 1 == n && matches!(p, Pat::Rest(_)) {
                    continue;
                }
                check(p, errors, names, refutable);
            }
        }
        Pat::Struct(s) => {
            if s.qself.is_some() || names_variant(&s.path) {
                *refutable = true;
            }
            for field in &s.fields {
                check(&field.pat, errors, names, refutable);
            }
        }
        Pat::Slice(s) => {
            *refutable = true;
            for p in &s.elems {
                check(p, errors, names, refutable);
            }
        }
        Pat::Reference(r) => {
            *refutable = true;
            check(&r.pat, errors, names, refutable);
        }
        Pat::Or(or) => {
            *refutable = true;
            // Every alternative binds the same names (rustc checks): count the first one's.
            if let Some(first) = or.cases.first() {
                check(first, errors, names, refutable);
            }
        }
        Pat::Lit(_) | Pat::Range(_) | Pat::Path(_) | Pat::Rest(_) => *refutable = true,
        _ => errors.push(error_spanned(
            pat,
            "unsupported pattern in a comprehension",
            "patterns are identifiers, `_`, (nested) tuples, and in generators any pattern \
             that may not match (`Some(v) <- &opts`), which skips the elements it does not \
             match",
        )),
    }
}

/// Whether a struct pattern's path names an enum's variant: it goes through a type's name
/// (`Shape::Circle`, `geo::Shape::Circle`), not a module's (`geo::Point`) or `Self`.
fn names_variant(path: &syn::Path) -> bool {
    let n = path.segments.len();
    n >= 2 && {
        let parent = path.segments[n - 2].ident.to_string();
        parent != "Self" && parent.starts_with(char::is_uppercase)
    }
}

/// Whether `name` is one the expansion made (`__parcomp_elem_0`, the element a refutable
/// generator tests), not one the user wrote: it is never shown in a diagnostic nor carried
/// from one part of a comprehension to another.
pub fn is_internal(name: &Ident) -> bool {
    name.to_string().starts_with("__parcomp")
}

/// The identifiers a (checked) pattern binds that the user wrote, in order.
pub fn user_names(pat: &Pat) -> Vec<Ident> {
    bound_names(pat).into_iter().filter(|n| !is_internal(n)).collect()
}

/// The identifiers a (checked) pattern binds, in order.
pub fn bound_names(pat: &Pat) -> Vec<Ident> {
    let mut names = Vec::new();
    collect(pat, &mut names);
    names
}

fn collect(pat: &Pat, names: &mut Vec<Ident>) {
    match pat {
        Pat::Ident(p) if p.subpat.is_none() && is_constant(&p.ident) => {}
        Pat::Ident(p) => {
            names.push(p.ident.clone());
            if let Some((_, sub)) = &p.subpat {
                collect(sub, names);
            }
        }
        Pat::Paren(p) => collect(&p.pat, names),
        Pat::Tuple(t) => t.elems.iter().for_each(|p| collect(p, names)),
        Pat::TupleStruct(t) => t.elems.iter().for_each(|p| collect(p, names)),
        Pat::Struct(s) => s.fields.iter().for_each(|f| collect(&f.pat, names)),
        Pat::Slice(s) => s.elems.iter().for_each(|p| collect(p, names)),
        Pat::Reference(r) => collect(&r.pat, names),
        Pat::Or(or) => {
            if let Some(first) = or.cases.first() {
                collect(first, names);
            }
        }
        Pat::Type(t) => collect(&t.pat, names),
        _ => {}
    }
}
