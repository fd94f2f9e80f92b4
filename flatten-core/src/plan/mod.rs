//! The plan: what a comprehension became, between analysis and emission.
//!
//! A plan is the translation of the paper (binding → `expand`, filter → `filter`, head → `map`)
//! with each generator classified: the first one is the *root* (read by index, evaluated once),
//! a generator whose source does not depend on the context is a *product* (the regular case),
//! any other is an *expand*. Parallel branches are zipped at the root; comprehensions nested in
//! the head become inner plans, each reduced once per context inside the enclosing run. A plan
//! prints as a readable table ([`Compiled::explain`]), which is what `par_explain!` returns.

mod explain;
pub mod kernel_ir;

use crate::analysis::generator::Form;
use crate::Macro;
use kernel_ir::{Capture, Class, Constraint, DGenerator, NotDevice, PlanExpr, VarId};
use proc_macro2::Span;
use syn::{Expr, Ident, Pat};

/// A compiled comprehension: its plan, the variables the plan refers to, and what its device
/// half needs. Every writer (`back/rust`, `back/kernel`) reads this, and only this.
pub struct Compiled {
    /// The top-level plan.
    pub plan: Plan,
    /// Every variable of the comprehension and of those nested in it, by [`VarId`].
    pub vars: Vec<Var>,
    /// The device half.
    pub device: DeviceUnit,
    /// A `par_device!`: the elements stay on the device (a `DeviceVec`) when it runs there.
    pub device_result: bool,
}

/// What the device half of a comprehension needs beyond its plan.
#[derive(Default)]
pub struct DeviceUnit {
    /// How the comprehension asked to be placed (`@gpu`, `@cpu`).
    pub marker: Marker,
    /// Why the device cannot run it, every reason (empty: it can).
    pub not_device: Vec<NotDevice>,
    /// The values the kernels read from the caller.
    pub captures: Vec<Capture>,
    /// The `#[par_fn]`s called: by their path as written, or methods and constants found by
    /// the runtime.
    pub par_fns: Vec<crate::analysis::device::Callee>,
    /// Number of type classes.
    pub classes: u32,
    /// How the classes relate.
    pub constraints: Vec<Constraint>,
    /// The text of each fault site (a division, an index), for panic messages.
    pub faults: Vec<String>,
    /// The name and class of each local of the device expressions.
    pub locals: Vec<(String, Class)>,
    /// When the first generator's variable holds rows of an array of rows of the caller: that
    /// array (its rows are the first generator's elements on the device).
    pub root_rows: Option<kernel_ir::CaptureId>,
}

/// How a comprehension asked to be placed.
#[derive(Clone, Copy, Debug, Default)]
pub enum Marker {
    /// Wherever the backend in effect puts it.
    #[default]
    None,
    /// `@gpu`: device execution is a requirement, checked at compile time.
    Gpu(Span),
    /// `@cpu`: always on the CPU.
    Cpu(Span),
}

/// A variable of a comprehension.
#[derive(Clone, Debug)]
pub struct Var {
    /// Its name.
    pub name: Ident,
    /// The class of its values.
    pub class: Class,
}

/// A part of the context: what one generator, `let` or nested comprehension binds.
#[derive(Clone)]
pub struct Slot {
    /// The pattern, as written (its identifiers are the variables).
    pub pat: Pat,
    /// The variables the pattern binds, in the order of its identifiers.
    pub vars: Vec<VarId>,
}

/// A compiled comprehension.
pub struct Plan {
    /// Which macro wrote it (`par!`, `par_sum!`, ...): what it ends in.
    pub terminal: Terminal,
    /// The comprehension as written, for messages.
    pub text: String,
    /// Evaluated once, before the comprehension runs.
    pub prelude: Vec<Prelude>,
    /// The parts of the context, in the order they are bound. For a nested comprehension the
    /// first [`Plan::inherited`] are the enclosing comprehension's.
    pub slots: Vec<Slot>,
    /// How many slots come from the enclosing comprehension (0 at the top level).
    pub inherited: usize,
    /// The stages; at the top level the first is the root.
    pub steps: Vec<Step>,
    /// The comprehensions nested in the head, each extending the context with its result.
    pub nested: Vec<Nested>,
    /// The head, with each nested comprehension replaced by the name of its result.
    pub head: PlanExpr,
    /// The comprehension variables the head uses.
    pub head_uses: Vec<VarId>,
    /// The head is exactly its one nested `par!`: the result is that comprehension's values,
    /// one row per element (a jagged result, which the device delivers without a head).
    pub rows: bool,
    /// The class of the head's values.
    pub head_class: Class,
    /// The class of what the comprehension produces for an enclosing one, and of its
    /// reduction's accumulator: the head's class for sums, products and `par_reduce!`,
    /// `Option` of it for `par_min!`/`par_max!`, `u64` for counts, `bool` for `par_any!`/`par_all!`.
    pub acc_class: Class,
}

/// A comprehension in the head of another.
pub struct Nested {
    /// The name its result is bound to in the head.
    pub name: Ident,
    /// The variable of its result.
    pub var: VarId,
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
        /// The operator on the device: a function of two values of the elements' class.
        device: Option<Box<Result<ReduceOp, NotDevice>>>,
    },
}

/// The operator of a `par_reduce!` on the device: `|a, b| body` as two locals and a body, or a
/// `#[par_fn]` of two arguments.
#[derive(Clone, Debug)]
pub struct ReduceOp {
    /// The first and second arguments.
    pub params: (kernel_ir::DPat, kernel_ir::DPat),
    /// The result.
    pub body: kernel_ir::DExpr,
    /// The identity.
    pub identity: kernel_ir::DExpr,
}

impl Terminal {
    /// The macro that produces it (`par_min_by_key!` is compiled as `par_min!`).
    pub fn as_macro(&self) -> Macro {
        match self {
            Terminal::Collect => Macro::Par,
            Terminal::Sum => Macro::ParSum,
            Terminal::Product => Macro::ParProduct,
            Terminal::Min => Macro::ParMin,
            Terminal::Max => Macro::ParMax,
            Terminal::Count => Macro::ParCount,
            Terminal::Any => Macro::ParAny,
            Terminal::All => Macro::ParAll,
            Terminal::Reduce { .. } => Macro::ParReduce,
        }
    }

    /// The terminal of a macro without arguments (`par_reduce!` has some; `par_device!` and the
    /// by-key macros are compiled as others).
    pub fn of(source: Macro) -> Option<Terminal> {
        Some(match source {
            Macro::Par => Terminal::Collect,
            Macro::ParSum => Terminal::Sum,
            Macro::ParProduct => Terminal::Product,
            Macro::ParMin => Terminal::Min,
            Macro::ParMax => Terminal::Max,
            Macro::ParCount => Terminal::Count,
            Macro::ParAny => Terminal::Any,
            Macro::ParAll => Terminal::All,
            Macro::ParDevice | Macro::ParReduce | Macro::ParMinByKey | Macro::ParMaxByKey => {
                return None
            }
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
            Terminal::Reduce { op, identity, .. } => {
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
    /// A parallel branch with several qualifiers, computed before the branches are zipped as a
    /// comprehension of its own (with its own device half): `let name = par![tokens];`.
    Macro {
        /// The name the zip reads.
        name: Ident,
        /// `(bound variables) | qualifiers`.
        tokens: proc_macro2::TokenStream,
    },
}

/// One stage of the plan.
pub struct Step {
    /// What the stage does.
    pub kind: StepKind,
    /// The qualifier as written.
    pub text: String,
    /// Where it is written.
    pub span: Span,
    /// How many context slots are bound when this stage runs.
    pub context: usize,
    /// The comprehension variables this stage uses (for a generator: its size and elements).
    pub uses: Vec<VarId>,
    /// For a generator: the variables its element maps use (`.map(|j| j + x)` uses `x`).
    pub map_uses: Vec<VarId>,
    /// For a generator: the variables its source (size and index reads) uses.
    pub source_uses: Vec<VarId>,
    /// For a generator: its device form, or why it has none.
    pub device: Option<Result<DGenerator, NotDevice>>,
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
    Filter(PlanExpr),
    /// A `let`: extends the context.
    Let(PlanExpr),
}

impl StepKind {
    /// Whether this stage is a generator (binds a slot that a loop runs over).
    pub fn is_generator(&self) -> bool {
        matches!(
            self,
            StepKind::Root(_) | StepKind::Zip(_) | StepKind::Product(_) | StepKind::Expand(_)
        )
    }

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
    /// A branch with several qualifiers, computed first (see [`Prelude::Macro`]).
    Computed(Ident),
}
