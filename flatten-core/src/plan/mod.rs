//! The plan: what a comprehension became, between analysis and emission.
//!
//! A plan is the translation of the paper (binding → `expand`, filter → `filter`, head → `map`)
//! with each generator classified: the first one is the *root* (read by index, evaluated once),
//! a generator whose source does not depend on the context is a *product* (the regular case),
//! any other is an *expand*. Parallel branches are zipped at the root; comprehensions nested in
//! the head become inner plans, each reduced once per context inside the enclosing run. A plan
//! prints as a readable table ([`Plan::explain`]), which is what `par_explain!` returns.

mod explain;

use crate::analysis::generator::Form;
use syn::{Expr, Ident, Pat};

/// A compiled comprehension.
pub struct Plan {
    /// Which macro wrote it (`par!`, `par_sum!`, ...): what it ends in.
    pub terminal: Terminal,
    /// The comprehension as written, for messages.
    pub text: String,
    /// Evaluated once, before the comprehension runs.
    pub prelude: Vec<Prelude>,
    /// The patterns that make up the context, in the order they are bound. For a nested
    /// comprehension the first [`Plan::inherited`] are the enclosing comprehension's.
    pub slots: Vec<Pat>,
    /// How many slots come from the enclosing comprehension (0 at the top level).
    pub inherited: usize,
    /// The stages; at the top level the first is the root.
    pub steps: Vec<Step>,
    /// The comprehensions nested in the head, each extending the context with its result.
    pub nested: Vec<Nested>,
    /// The head, with each nested comprehension replaced by the name of its result.
    pub head: Expr,
    /// The comprehension variables the head uses.
    pub head_uses: Vec<String>,
}

/// A comprehension in the head of another.
pub struct Nested {
    /// The name its result is bound to in the head.
    pub name: Ident,
    /// The macro's path as written (`par_sum`, `parcomp::par_sum`), so that the emitted code can
    /// mention it and its `use` does not look unused.
    pub path: syn::Path,
    /// The inner comprehension.
    pub plan: Plan,
}

/// What a comprehension produces: which macro wrote it.
#[derive(Clone)]
pub enum Terminal {
    /// `par!`: a `Vec` in nested-loop order.
    Collect,
    /// `par_sum!`.
    Sum,
    /// `par_product!`.
    Product,
    /// `par_min!`: `Option`.
    Min,
    /// `par_max!`: `Option`.
    Max,
    /// `par_count!`.
    Count,
    /// `par_any!`.
    Any,
    /// `par_all!`.
    All,
    /// `par_reduce!(op, identity; ...)`.
    Reduce {
        /// The associative operator.
        op: Box<Expr>,
        /// Its neutral element.
        identity: Box<Expr>,
    },
}

impl Terminal {
    /// The macro's name.
    pub fn macro_name(&self) -> &'static str {
        match self {
            Terminal::Collect => "par",
            Terminal::Sum => "par_sum",
            Terminal::Product => "par_product",
            Terminal::Min => "par_min",
            Terminal::Max => "par_max",
            Terminal::Count => "par_count",
            Terminal::Any => "par_any",
            Terminal::All => "par_all",
            Terminal::Reduce { .. } => "par_reduce",
        }
    }

    /// The terminal of a macro named `name`, without its arguments (`par_reduce` has some).
    pub fn named(name: &str) -> Option<Terminal> {
        Some(match name {
            "par" => Terminal::Collect,
            "par_sum" => Terminal::Sum,
            "par_product" => Terminal::Product,
            "par_min" => Terminal::Min,
            "par_max" => Terminal::Max,
            "par_count" => Terminal::Count,
            "par_any" => Terminal::Any,
            "par_all" => Terminal::All,
            _ => return None,
        })
    }

    /// What the result is, for `par_explain!`.
    pub fn describe(&self) -> String {
        match self {
            Terminal::Collect => "Vec in nested-loop order".into(),
            Terminal::Sum => "sum".into(),
            Terminal::Product => "product".into(),
            Terminal::Min => "least element (Option)".into(),
            Terminal::Max => "greatest element (Option)".into(),
            Terminal::Count => "number of elements".into(),
            Terminal::Any => "whether any element is true".into(),
            Terminal::All => "whether every element is true".into(),
            Terminal::Reduce { op, identity } => {
                format!(
                    "reduce with {} from {}",
                    crate::text::text(op),
                    crate::text::text(identity)
                )
            }
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
    /// A parallel branch with several qualifiers, computed before the branches are zipped:
    /// `let name = par![(bound variables) | qualifiers];`.
    Branch {
        /// The name the zip reads.
        name: Ident,
        /// The branch as a comprehension of its own.
        plan: Box<Plan>,
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
    /// Parallel branches, zipped element by element (truncating to the shortest).
    Zip(Vec<ZipBranch>),
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
            StepKind::Zip(_) => "zip",
            StepKind::Product(_) => "product",
            StepKind::Expand(_) => "expand",
            StepKind::Filter(_) => "filter",
            StepKind::Let(_) => "let",
        }
    }
}

/// One branch of a zip.
pub enum ZipBranch {
    /// A single generator, read by index in place.
    Generator(Box<Form>),
    /// A branch with several qualifiers, computed first (see [`Prelude::Branch`]).
    Computed(Ident),
}
