//! The plan: what a comprehension became, between analysis and emission.
//!
//! A plan is the translation of the paper (binding → `expand`, filter → `filter`, head → `map`)
//! with each generator classified: the first one is the *root* (read by index, evaluated once),
//! a generator whose source does not depend on the context is a *product* (the regular case),
//! any other is an *expand*. It prints as a readable table ([`Plan::explain`]), which is what
//! `par_explain!` returns.

mod explain;

use crate::analysis::generator::Form;
use syn::{Expr, Ident, Pat};

/// A compiled comprehension.
pub struct Plan {
    /// Which macro wrote it (`par!`, ...) and what it ends in.
    pub terminal: Terminal,
    /// The comprehension as written, for messages.
    pub text: String,
    /// Evaluated once, before the comprehension runs.
    pub prelude: Vec<Prelude>,
    /// The patterns that make up the context, in the order they are bound.
    pub slots: Vec<Pat>,
    /// The stages; the first is the root generator.
    pub steps: Vec<Step>,
    /// The head.
    pub head: Expr,
    /// The comprehension variables the head uses.
    pub head_uses: Vec<String>,
}

/// What the comprehension produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Terminal {
    /// `par!`: a `Vec` in nested-loop order.
    Collect,
}

impl Terminal {
    /// The macro's name.
    pub fn macro_name(self) -> &'static str {
        match self {
            Terminal::Collect => "par",
        }
    }
}

/// A binding evaluated once before the comprehension runs.
pub enum Prelude {
    /// A `let` qualifier before the first generator.
    Let {
        /// The pattern.
        pat: Pat,
        /// The value.
        expr: Expr,
    },
    /// A collection that a generator reads by index, evaluated once: `let name = &(expr);`.
    Hoist {
        /// The name the generator uses.
        name: Ident,
        /// The collection.
        expr: Expr,
    },
}

/// One stage of the plan.
pub struct Step {
    /// What the stage does.
    pub kind: StepKind,
    /// The qualifier as written.
    pub text: String,
    /// How many context slots are bound when this stage runs.
    pub context: usize,
    /// The comprehension variables this stage uses.
    pub uses: Vec<String>,
}

/// What a stage does.
pub enum StepKind {
    /// The first generator: evaluated once, read by index.
    Root(Form),
    /// A generator whose source does not depend on the context: evaluated once, and every
    /// context has the same number of children (its element maps may still use the context).
    Product(Form),
    /// A generator whose source depends on the context.
    Expand(Form),
    /// A filter.
    Filter(Expr),
    /// A `let`: extends the context.
    Let(Expr),
}

impl StepKind {
    /// The name of the runtime stage.
    pub fn name(&self) -> &'static str {
        match self {
            StepKind::Root(_) => "source",
            StepKind::Product(_) => "product",
            StepKind::Expand(_) => "expand",
            StepKind::Filter(_) => "filter",
            StepKind::Let(_) => "let",
        }
    }
}
