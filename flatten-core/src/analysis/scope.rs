//! What is bound at each point of the walk over the qualifiers.

use super::free_vars;
use super::generator::{Classifier, Form};
use crate::error::{error, Errors};
use crate::syntax::bound_names;
use std::collections::HashSet;
use syn::{Expr, Ident, Pat};

/// The variables of a comprehension: those bound so far and those bound anywhere.
#[derive(Clone, Default)]
pub(crate) struct Scope {
    /// Every variable bound in this comprehension (and its enclosing ones), for finding uses.
    all_names: HashSet<String>,
    /// The variables bound so far, in order.
    visible: Vec<String>,
    /// Variables bound in the other parallel branches, which this branch cannot see.
    foreign: HashSet<String>,
}

impl Scope {
    /// Records that `pat` binds its names somewhere in the comprehension.
    pub(crate) fn declare(&mut self, pat: &Pat) {
        self.all_names.extend(bound_names(pat).iter().map(Ident::to_string));
    }

    /// Makes the names of `pat` visible from here on.
    pub(crate) fn bind(&mut self, pat: &Pat) {
        for name in bound_names(pat) {
            self.bind_name(&name);
        }
    }

    /// Makes `name` visible from here on.
    pub(crate) fn bind_name(&mut self, name: &Ident) {
        self.all_names.insert(name.to_string());
        self.visible.push(name.to_string());
    }

    /// A scope for one parallel branch: nothing visible yet, the other branches' names foreign.
    pub(crate) fn branch(foreign: HashSet<String>) -> Scope {
        Scope { all_names: foreign.clone(), visible: Vec::new(), foreign }
    }

    /// The visible comprehension variables `expr` mentions.
    pub(crate) fn deps(&self, expr: &Expr) -> Vec<Ident> {
        free_vars::mentions(expr, &self.all_names)
            .into_iter()
            .filter(|ident| self.visible.contains(&ident.to_string()))
            .collect()
    }

    /// The visible variables `expr` uses (each once, in order of first use); reports uses of a
    /// variable that is bound only later, or only in another parallel branch.
    pub(crate) fn uses(&self, expr: &Expr, errors: &mut Errors) -> Vec<String> {
        let mut uses: Vec<String> = Vec::new();
        let mut reported: Vec<String> = Vec::new();
        for ident in free_vars::mentions(expr, &self.all_names) {
            let name = ident.to_string();
            if self.visible.contains(&name) {
                if !uses.contains(&name) {
                    uses.push(name);
                }
            } else if !reported.contains(&name) {
                errors.push(if self.foreign.contains(&name) {
                    error(
                        ident.span(),
                        format!("`{name}` is bound in another parallel branch"),
                        format!(
                            "parallel branches (`| ... | ...`) are zipped element by element and \
                             cannot see each other's variables; use `{name}` in the head, or \
                             nest the generators (`x <- xs, y <- 0..x`) instead of zipping them"
                        ),
                    )
                } else {
                    error(
                        ident.span(),
                        format!("`{name}` is used before the qualifier that binds it"),
                        format!(
                            "a qualifier can use only the variables bound to its left; move the \
                             qualifier that binds `{name}` before this one (or rename it, if you \
                             mean a variable from outside the comprehension)"
                        ),
                    )
                });
                reported.push(name);
            }
        }
        uses
    }

    /// The form of a generator's expression, given what is bound here.
    pub(crate) fn classify(&self, expr: &Expr) -> Option<Form> {
        let deps = |e: &Expr| self.deps(e);
        let is_bound = |ident: &Ident| self.visible.contains(&ident.to_string());
        Classifier { deps: &deps, is_bound: &is_bound }.form(expr)
    }
}
