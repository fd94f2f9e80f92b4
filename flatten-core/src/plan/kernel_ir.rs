//! The device form of a comprehension's expressions: the kernel IR every kernel writer reads.
//!
//! An expression of the device subset is lowered (by `analysis::device`) into a [`DExpr`]:
//! names resolved to comprehension variables, locals, captures and `#[par_fn]`s; every node
//! carrying a type *class*. Types are not known when the macro runs — only Rust knows them —
//! so each node gets a class, related to the others by [`Constraint`]s (`a + b` has the class
//! of `a`, which is the class of `b`; `x as f32` is `f32`; an integer literal is some integer
//! type). The runtime solves the classes from what the emitted code observes (the types of the
//! captured values, of the first generator's elements and of the head), so one kernel source
//! serves every instantiation.

use std::fmt;

/// A type class: every expression of one class has the same type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Class(pub u32);

/// A comprehension variable: one binding of a name by a generator, a `let` qualifier or a
/// nested comprehension (shadowing makes a new variable).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VarId(pub u32);

/// A local of a device expression: a `let` in a block, a closure parameter, a match binding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LocalId(pub u32);

/// A value the kernels read from the caller (see [`Capture`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CaptureId(pub u32);

/// A `#[par_fn]` called by the comprehension, in the order of first call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ParFnId(pub u32);

/// The primitive types of the device (the contract's, shared with the runtime).
pub use parcomp_contract::Prim;

/// What relates the classes; the runtime solves them (see the module documentation): the
/// contract's constraints over the macro's ids.
pub type Constraint = parcomp_contract::Constraint<MacroIds>;

/// The ids of the macro's constraints: its newtypes, and a tuple's classes in a `Vec`. The
/// emitted code holds them as the contract's [`parcomp_contract::Static`] form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MacroIds;

impl parcomp_contract::ConstraintIds for MacroIds {
    type Class = Class;
    type Classes = Vec<Class>;
    type Capture = CaptureId;
    type ParFn = ParFnId;
    type Name = String;
}

/// A value read from the caller: evaluated once on the host and copied to the device.
#[derive(Clone, Debug)]
pub struct Capture {
    /// The Rust expression the emitted code evaluates (a path, a field, `xs.len()`).
    pub expr: syn::Expr,
    /// It as written, for messages.
    pub text: String,
    /// How the kernels read it.
    pub kind: CaptureKind,
}

/// How the kernels read a captured value (the contract's, shared with the runtime).
pub use parcomp_contract::CaptureKind;

/// A literal.
#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    /// An integer, by magnitude (negation is an operator).
    Int(u128),
    /// A float, as decimal text a C compiler reads (`0.5`, `1e10`, `3.0`).
    Float(String),
    /// `true` or `false`.
    Bool(bool),
}

/// A unary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    /// `-x` (wrapping).
    Neg,
    /// `!x`: logical for `bool`, bitwise for integers.
    Not,
}

/// A binary operator (the short-circuit `&&` and `||` are [`DKind::And`] and [`DKind::Or`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `+` (wrapping, as a release build).
    Add,
    /// `-` (wrapping).
    Sub,
    /// `*` (wrapping).
    Mul,
    /// Faults on a zero divisor and on `MIN / -1`.
    Div,
    /// Faults like [`BinOp::Div`].
    Rem,
    /// `&`.
    BitAnd,
    /// `|`.
    BitOr,
    /// `^`.
    BitXor,
    /// `<<` (the shift masked to the width, as a release build).
    Shl,
    /// `>>` (masked likewise; arithmetic for signed types).
    Shr,
    /// `==`.
    Eq,
    /// `!=`.
    Ne,
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
}

impl BinOp {
    /// The operation's name in the kernel dialect (`PC_OP(add, T)`).
    pub fn op_name(self) -> &'static str {
        match self {
            BinOp::Add => "add",
            BinOp::Sub => "sub",
            BinOp::Mul => "mul",
            BinOp::Div => "div",
            BinOp::Rem => "rem",
            BinOp::BitAnd => "and",
            BinOp::BitOr => "or",
            BinOp::BitXor => "xor",
            BinOp::Shl => "shl",
            BinOp::Shr => "shr",
            BinOp::Eq => "eq",
            BinOp::Ne => "ne",
            BinOp::Lt => "lt",
            BinOp::Le => "le",
            BinOp::Gt => "gt",
            BinOp::Ge => "ge",
        }
    }

    /// Whether the result is a `bool` comparing two values of one class.
    pub fn is_comparison(self) -> bool {
        matches!(self, BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge)
    }

    /// Whether the operation can fault (and so carries a fault site).
    pub fn faults(self) -> bool {
        matches!(self, BinOp::Div | BinOp::Rem)
    }
}

/// A device expression: what it computes, and its class.
#[derive(Clone, Debug)]
pub struct DExpr {
    /// The computation.
    pub kind: DKind,
    /// The class of its value.
    pub class: Class,
}

/// A fault site: the number of a check in the generated source, whose text names the
/// expression in the panic message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FaultSite(pub u32);

/// What a device expression computes.
#[derive(Clone, Debug)]
pub enum DKind {
    /// A literal of the node's class.
    Lit(Literal),
    /// A comprehension variable.
    Var(VarId),
    /// A local.
    Local(LocalId),
    /// A captured scalar.
    Capture(CaptureId),
    /// A unary operation.
    Unary(UnOp, Box<DExpr>),
    /// A binary operation; `Div` and `Rem` carry their fault site.
    Binary(BinOp, Box<DExpr>, Box<DExpr>, Option<FaultSite>),
    /// `a && b` (b only evaluated when a holds).
    And(Box<DExpr>, Box<DExpr>),
    /// `a || b`.
    Or(Box<DExpr>, Box<DExpr>),
    /// `x as T`: to the node's class (a primitive).
    Cast(Box<DExpr>),
    /// `(a, b, ...)`.
    Tuple(Vec<DExpr>),
    /// `x.0`.
    Field(Box<DExpr>, u32),
    /// `p.x`: a field of a struct with `#[derive(DeviceValue)]`, by name.
    Member(Box<DExpr>, String),
    /// `Point { x: a, y: b }` or `Point { x: a, ..base }`: the fields given, by name, and the
    /// value the others come from (without one, every field is given: Rust checks it).
    Struct(Vec<(String, DExpr)>, Option<Box<DExpr>>),
    /// `if c { a } else { b }`.
    If(Box<DExpr>, Box<DExpr>, Box<DExpr>),
    /// `{ let ...; value }`.
    Block(Vec<DStmt>, Box<DExpr>),
    /// `match x { arms }`: integers, `bool`s and `char`s, ranges, `|`, `_`, bindings and guards.
    Match(Box<DExpr>, Vec<DArm>),
    /// A numeric method, `x.abs()`, `a.min(b)`, also written `i64::max(a, b)`: receiver first.
    Method(Method, Vec<DExpr>, Option<FaultSite>),
    /// `x.abs()` whose receiver may be a struct with `#[derive(DeviceValue)]`: the struct's
    /// `#[par_fn]` method (the call `ParFnId`, a method slot) when it is one, else the numeric
    /// method (chosen when the program is built: `PC_FN_k` is defined only for a method).
    MethodOrCall(Method, ParFnId, Vec<DExpr>, Option<FaultSite>),
    /// `x.len()` (`x.is_empty()` when the flag is set) of a value that is an array or a
    /// struct: the struct's `#[par_fn]` method (the slot) when the runtime finds one, else the
    /// array's length.
    LenOrCall(ParFnId, Box<DExpr>, bool),
    /// `xs[i]` of a captured collection.
    Index(CaptureId, Box<DExpr>, FaultSite),
    /// `xs.len()` of a captured collection.
    Len(CaptureId),
    /// `m.row_len(i)` (or `m.row(i).len()`) of a captured array of rows.
    RowLen(CaptureId, Box<DExpr>, FaultSite),
    /// `row[i]` of a row variable (a row of a captured array of rows): capture, row, index.
    RowIndex(CaptureId, Box<DExpr>, Box<DExpr>, FaultSite),
    /// `a[i]` of an array value `[T; N]` (not a captured slice): checked against `N` at
    /// `site`, or unchecked (`None`) where the index is below `N` by construction (a `for`
    /// loop over the array).
    ArrayIndex(Box<DExpr>, Box<DExpr>, Option<FaultSite>),
    /// `a.len()` of an array value: its `N`, from the type the runtime solves.
    ArrayLen(Box<DExpr>),
    /// `[a, b, c]`.
    Array(Vec<DExpr>),
    /// `[v; N]`: `N` copies of `v` (`N` from the node's solved type).
    Repeat(Box<DExpr>),
    /// `a[i] = v` (`m[i][j] = v`, `p.pos[k] = v`) to an element of an array inside the local
    /// `a`, in place: the steps from the local to the element, then the value. Of class `()`.
    ArrayStore {
        /// The local.
        local: LocalId,
        /// The steps, outermost first.
        path: Vec<PlaceStep>,
        /// The element's new value.
        value: Box<DExpr>,
    },
    /// A call of a `#[par_fn]`.
    Call(ParFnId, Vec<DExpr>),
    /// `()`.
    Unit,
    /// The zero of the node's class: `None` (an `Option` whose flag and value are zeros).
    Zero,
    /// `Color::Red` in a `#[par_fn]`: the discriminant of the variant of this name of the
    /// node's class, a fieldless enum with `#[derive(DeviceValue)]`.
    Variant(String),
    /// `while cond { body }` (`loop` is `while true`).
    While(Box<DExpr>, Box<DExpr>),
    /// `for local in start..end { body }` (`..=` when `inclusive`).
    For {
        /// The loop variable.
        local: LocalId,
        /// The range's start.
        start: Box<DExpr>,
        /// The range's end.
        end: Box<DExpr>,
        /// `..=` rather than `..`.
        inclusive: bool,
        /// The loop's body.
        body: Box<DExpr>,
    },
    /// `break` (out of the innermost loop).
    Break,
    /// `continue`.
    Continue,
    /// `return value` (in a `#[par_fn]`).
    Return(Box<DExpr>),
    /// The value of a block that never finishes (it ends in `return`, `break` or `continue`):
    /// never read.
    Never,
}

/// A statement of a block.
#[derive(Clone, Debug)]
pub enum DStmt {
    /// `let PAT = value;`.
    Let(DPat, DExpr),
    /// `value;` (evaluated for its faults and effects; the value is dropped).
    Expr(DExpr),
    /// `local = value;` (`x += v` is `x = x + v`).
    Assign(LocalId, DExpr),
}

/// One step from a local to the element an assignment stores (see `DKind::ArrayStore`).
#[derive(Clone, Debug)]
pub enum PlaceStep {
    /// `[i]`: the index (a local holding it), the class of the array it indexes, and where an
    /// index out of bounds faults (checked again, in order: the statements before the store
    /// already checked every index but the last).
    Index(DExpr, Class, FaultSite),
    /// `.name`: a field of a struct with `#[derive(DeviceValue)]`.
    Member(String),
    /// `.n`: a tuple's field.
    Field(u32),
}

/// A pattern binding locals.
#[derive(Clone, Debug)]
pub enum DPat {
    /// A name.
    Bind(LocalId),
    /// `_`.
    Wild,
    /// `(a, b, ...)`.
    Tuple(Vec<DPat>),
    /// `Point { x, y: b, .. }`: the fields named, by name (a struct with
    /// `#[derive(DeviceValue)]`).
    Struct(Vec<(String, DPat)>),
    /// `[a, b, c]`: an array's elements, in order (as many as it has).
    Array(Vec<DPat>),
}

/// One arm of a `match`.
#[derive(Clone, Debug)]
pub struct DArm {
    /// The alternatives (`a | b`); empty means `_` or a binding.
    pub alternatives: Vec<ArmPattern>,
    /// A binding of the whole scrutinee (`n => ...`, `n @ 1..=9 => ...`).
    pub bind: Option<LocalId>,
    /// The names bound inside a tuple or `Some` pattern (`(j, -1)`, `Some(v)`): each local, its
    /// class, and the fields from the scrutinee to its value (a tuple's field `k` is `fk`, an
    /// `Option`'s value `f1`).
    pub fields: Vec<(LocalId, Class, Vec<u32>)>,
    /// `if guard`.
    pub guard: Option<DExpr>,
    /// The value.
    pub body: DExpr,
}

/// One alternative of a match arm.
#[derive(Clone, Debug)]
pub enum ArmPattern {
    /// A literal (negative integers keep their sign here).
    Value(DExpr),
    /// `lo..=hi` or `lo..hi` (either bound may be absent).
    Range(Option<DExpr>, Option<DExpr>, bool),
    /// `None`: the scrutinee is an `Option` without a value.
    None,
    /// `Some(p)`: an `Option` with a value (of the class given) that matches one of `p`'s
    /// alternatives (none: any value).
    Some(Class, Vec<ArmPattern>),
    /// `(p, q, ..)`: a tuple whose every field (of its class) matches one of its alternatives
    /// (none: any value).
    Tuple(Vec<(Class, Vec<ArmPattern>)>),
}

/// The numeric methods of the device subset (see `analysis::device::methods`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Method {
    /// The Rust name (`abs`, `wrapping_add`, `powi`).
    pub rust: &'static str,
    /// The dialect's operation (`PC_OP(abs, T)`), named after the receiver's class; `None`
    /// for methods written inline by the writer (`unwrap_or`, `is_some`).
    pub op: &'static str,
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.rust)
    }
}

/// The device form of a generator: where its elements come from and how each is mapped.
#[derive(Clone, Debug)]
pub struct DGenerator {
    /// Size and elements.
    pub source: DSource,
    /// Functions applied to each element, innermost first.
    pub maps: Vec<DMap>,
    /// The class of the element bound to the pattern.
    pub class: Class,
}

/// Where a generator's elements come from on the device.
#[derive(Clone, Debug)]
pub enum DSource {
    /// `start..end` or `start..=end` (the class is the element's).
    Range {
        /// The first element.
        start: DExpr,
        /// The end.
        end: DExpr,
        /// `..=` rather than `..`.
        inclusive: bool,
        /// The elements' class.
        class: Class,
        /// Where a range too long to count faults.
        fault: FaultSite,
    },
    /// `inner.step_by(step)`.
    StepBy {
        /// The source stepped over.
        inner: Box<DSource>,
        /// The step.
        step: DExpr,
        /// Where a zero step faults.
        fault: FaultSite,
    },
    /// `inner.rev()`.
    Rev {
        /// The source reversed.
        inner: Box<DSource>,
    },
    /// A captured collection, read by index.
    Slice {
        /// Which capture.
        capture: CaptureId,
        /// The elements' class.
        class: Class,
    },
    /// A row of a captured array of rows.
    Row {
        /// Which capture.
        capture: CaptureId,
        /// The row's index.
        row: DExpr,
        /// The elements' class.
        class: Class,
        /// Where a row index out of bounds faults.
        fault: FaultSite,
    },
    /// The rows of a captured array of rows, as row indices (`row <- &m` when a later generator
    /// reads `row`).
    RowIndices {
        /// Which capture.
        capture: CaptureId,
        /// The indices' class.
        class: Class,
    },
    /// The first generator's elements or range, from the host.
    Root {
        /// The elements' class.
        class: Class,
    },
}

/// A function applied to the elements of a generator.
#[derive(Clone, Debug)]
pub enum DMap {
    /// `|pat| body`.
    Closure(DPat, DExpr),
    /// A `#[par_fn]` of one argument.
    ParFn(ParFnId, Class),
}

/// Why an expression or a construct cannot run on the device: the reason and where.
#[derive(Clone, Debug)]
pub struct NotDevice {
    /// Where (for `@gpu` errors).
    pub span: proc_macro2::Span,
    /// What the device cannot do, e.g. "calls `format!`".
    pub reason: String,
    /// How to write it so that it can.
    pub help: String,
}

/// An expression of the plan, with its device form or the reason it has none.
#[derive(Clone, Debug)]
pub struct PlanExpr {
    /// The expression as written (what the CPU code runs).
    pub expr: syn::Expr,
    /// Its device form.
    pub device: Result<DExpr, NotDevice>,
}
