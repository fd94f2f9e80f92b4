//! What is bound at each point of the walk over the qualifiers.

use super::free_vars;
use super::generator::{Classifier, Form};
use crate::error::{error, Errors};
use crate::plan::kernel_ir::VarId;
use crate::syntax::bound_names;
use std::collections::HashSet;
use syn::{Expr, Ident, Pat};

/// The variables of a comprehension: those bound so far and those bound anywhere.
#[derive(Clone, Default)]
pub(crate) struct Scope {
    /// Every variable bound in this comprehension (and its enclosing ones), for finding uses.
    all_names: HashSet<String>,
    /// The variables bound so far, in order, with the binding each name has (a later binding
    /// of a name shadows the earlier one).
    visible: Vec<(String, VarId)>,
    /// Variables bound in the other parallel branches, which this branch cannot see.
    foreign: HashSet<String>,
}

impl Scope {
    /// Records that `pat` binds its names somewhere in the comprehension.
    pub(crate) fn declare(&mut self, pat: &Pat) {
        self.all_names.extend(bound_names(pat).iter().map(Ident::to_string));
    }

    /// Makes the names of `pat` visible from here on, as the variables `vars` (one per name, in
    /// the order of [`bound_names`]).
    pub(crate) fn bind(&mut self, pat: &Pat, vars: &[VarId]) {
        for (name, &var) in bound_names(pat).iter().zip(vars) {
            self.bind_name(name, var);
        }
    }

    /// Makes `name` visible from here on, as `var`.
    pub(crate) fn bind_name(&mut self, name: &Ident, var: VarId) {
        self.all_names.insert(name.to_string());
        self.visible.push((name.to_string(), var));
    }

    /// The variable `name` refers to here, if it is a visible comprehension variable.
    pub(crate) fn lookup(&self, name: &str) -> Option<VarId> {
        self.visible.iter().rev().find(|(n, _)| n == name).map(|&(_, v)| v)
    }

    /// A scope for one parallel branch: nothing visible yet, the other branches' names foreign.
    pub(crate) fn branch(foreign: HashSet<String>) -> Scope {
        Scope { all_names: foreign.clone(), visible: Vec::new(), foreign }
    }

    /// The visible comprehension variables `expr` mentions.
    pub(crate) fn deps(&self, expr: &Expr) -> Vec<Ident> {
        free_vars::mentions(expr, &self.all_names)
            .into_iter()
            .filter(|ident| self.lookup(&ident.to_string()).is_some())
            .collect()
    }

    /// The visible variables `expr` mentions, without reporting anything.
    pub(crate) fn vars_in(&self, expr: &Expr) -> Vec<VarId> {
        let mut uses = Vec::new();
        for ident in free_vars::mentions(expr, &self.all_names) {
            if let Some(var) = self.lookup(&ident.to_string()) {
                if !uses.contains(&var) {
                    uses.push(var);
                }
            }
        }
        uses
    }

    /// The visible variables `expr` uses (each once, in order of first use); reports uses of a
    /// variable that is bound only later, or only in another parallel branch.
    pub(crate) fn uses(&self, expr: &Expr, errors: &mut Errors) -> Vec<VarId> {
        let mut uses: Vec<VarId> = Vec::new();
        let mut reported: Vec<String> = Vec::new();
        for ident in free_vars::mentions(expr, &self.all_names) {
            let name = ident.to_string();
            if let Some(var) = self.lookup(&name) {
                if !uses.contains(&var) {
                    uses.push(var);
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
        let is_bound = |ident: &Ident| self.lookup(&ident.to_string()).is_some();
        Classifier { deps: &deps, is_bound: &is_bound }.form(expr)
    }
}
