//! `Size` and `Fetch`: which generator expressions can be flattened, and how.
//!
//! A generator that mentions no variable of the comprehension is *invariant*: it is evaluated
//! once and read through the runtime's `Source` trait. A generator that does mention them must
//! have a form whose size and elements can be computed without building it (Fig. 3 of the
//! translation paper, extended):
//!
//! - `a..b`, `a..=b` — size `b - a`, element `a + i`;
//! - `R.map(f)` — size of `R`, element `f(R[i])`;
//! - `R.step_by(k)`, `R.rev()` — re-indexings of `R`;
//! - a row: `rows[x]`, `&rows[x]`, `m.row(i)` (any chain of indexing and `.row(..)` whose base
//!   does not depend on the comprehension), or a variable bound earlier whose value is itself a
//!   source (a row bound by `row <- &m`, possibly through fields `p.0` and indexing).
//!
//! Element maps commute with re-indexing (`R.map(f).rev()` has the elements of
//! `R.rev().map(f)`), so a form is kept as an index source plus the maps applied, in order, to
//! each element read — the split the runtime's `expand_map`/`product_map` take.

use syn::{Expr, Ident, Member};

/// A generator expression in a flattenable form.
pub struct Form {
    /// Where the elements are read from.
    pub source: IndexSource,
    /// Functions applied to each element read, innermost first.
    pub maps: Vec<Expr>,
}

/// The part of a generator that gives its size and is read by index.
pub enum IndexSource {
    /// `start..end` or `start..=end`.
    Range {
        /// The first element.
        start: Expr,
        /// The bound.
        end: Expr,
        /// `..=`.
        inclusive: bool,
    },
    /// `inner.step_by(step)`.
    StepBy {
        /// The source stepped through.
        inner: Box<IndexSource>,
        /// The step.
        step: Expr,
    },
    /// `inner.rev()`.
    Rev {
        /// The source reversed.
        inner: Box<IndexSource>,
    },
    /// A row selected by the comprehension's variables, read in place.
    Place(Place),
    /// An expression that does not depend on the comprehension, read through `Source`.
    Collection(Expr),
    /// A collection evaluated once before the comprehension runs (see `Prelude::Hoist`).
    Hoisted(Ident),
}

/// `base[i].row(j).field...`: a row read in place.
pub struct Place {
    /// What the chain starts from.
    pub root: PlaceRoot,
    /// Indexing, `.row(..)` and field accesses, outermost last.
    pub ops: Vec<PlaceOp>,
}

/// The start of a [`Place`].
pub enum PlaceRoot {
    /// A collection that does not depend on the comprehension.
    Invariant(Expr),
    /// The same, once hoisted.
    Hoisted(Ident),
    /// A variable bound earlier in the comprehension.
    Bound(Ident),
}

/// One step of a [`Place`].
pub enum PlaceOp {
    /// `[index]`.
    Index(Expr),
    /// `.row(index)`.
    Row(Expr),
    /// `.field`.
    Field(Member),
}

/// Removes parentheses and the invisible groups that `macro_rules!` wraps `$e:expr` in.
pub(crate) fn strip(expr: &Expr) -> &Expr {
    match expr {
        Expr::Paren(p) => strip(&p.expr),
        Expr::Group(g) => strip(&g.expr),
        _ => expr,
    }
}

/// Context for classifying one generator.
pub(crate) struct Classifier<'a> {
    /// The variables of the comprehension an expression mentions.
    pub(crate) deps: &'a dyn Fn(&Expr) -> Vec<Ident>,
    /// Whether `ident` is a variable bound earlier in the comprehension.
    pub(crate) is_bound: &'a dyn Fn(&Ident) -> bool,
}

impl Classifier<'_> {
    fn invariant(&self, expr: &Expr) -> bool {
        (self.deps)(expr).is_empty()
    }

    /// The form of `expr`, or `None` if it depends on the comprehension's variables in a way
    /// that cannot be sized without building it.
    pub(crate) fn form(&self, expr: &Expr) -> Option<Form> {
        let expr = strip(expr);
        match expr {
            Expr::Range(r) => match (&r.start, &r.end) {
                (Some(start), Some(end)) => Some(Form {
                    source: IndexSource::Range {
                        start: (**start).clone(),
                        end: (**end).clone(),
                        inclusive: matches!(r.limits, syn::RangeLimits::Closed(_)),
                    },
                    maps: Vec::new(),
                }),
                _ => None,
            },
            Expr::MethodCall(call) if call.turbofish.is_none() => {
                let method = call.method.to_string();
                match (method.as_str(), call.args.len()) {
                    ("map", 1) => {
                        let mut form = self.form(&call.receiver)?;
                        form.maps.push(call.args[0].clone());
                        Some(form)
                    }
                    ("step_by", 1) => {
                        let form = self.form(&call.receiver)?;
                        Some(Form {
                            source: IndexSource::StepBy {
                                inner: Box::new(form.source),
                                step: call.args[0].clone(),
                            },
                            maps: form.maps,
                        })
                    }
                    ("rev", 0) => {
                        let form = self.form(&call.receiver)?;
                        Some(Form {
                            source: IndexSource::Rev { inner: Box::new(form.source) },
                            maps: form.maps,
                        })
                    }
                    _ => self.place_or_collection(expr),
                }
            }
            _ => self.place_or_collection(expr),
        }
    }

    fn place_or_collection(&self, expr: &Expr) -> Option<Form> {
        if self.invariant(expr) {
            return Some(Form { source: IndexSource::Collection(expr.clone()), maps: Vec::new() });
        }
        let place = self.place(expr)?;
        Some(Form { source: IndexSource::Place(place), maps: Vec::new() })
    }

    fn place(&self, expr: &Expr) -> Option<Place> {
        let mut current = match strip(expr) {
            Expr::Reference(r) if r.mutability.is_none() => strip(&r.expr),
            other => other,
        };
        let mut ops = Vec::new();
        let root = loop {
            if self.invariant(current) {
                break PlaceRoot::Invariant(current.clone());
            }
            match current {
                Expr::Index(index) => {
                    ops.push(PlaceOp::Index((*index.index).clone()));
                    current = strip(&index.expr);
                }
                Expr::MethodCall(call)
                    if call.method == "row" && call.args.len() == 1 && call.turbofish.is_none() =>
                {
                    ops.push(PlaceOp::Row(call.args[0].clone()));
                    current = strip(&call.receiver);
                }
                Expr::Field(field) => {
                    ops.push(PlaceOp::Field(field.member.clone()));
                    current = strip(&field.base);
                }
                Expr::Path(path)
                    if path.qself.is_none()
                        && path.path.leading_colon.is_none()
                        && path.path.segments.len() == 1
                        && path.path.segments[0].arguments.is_none()
                        && (self.is_bound)(&path.path.segments[0].ident) =>
                {
                    break PlaceRoot::Bound(path.path.segments[0].ident.clone());
                }
                _ => return None,
            }
        };
        ops.reverse();
        Some(Place { root, ops })
    }
}

impl IndexSource {
    /// Calls `f` on every expression that the size of this source depends on.
    pub(crate) fn size_exprs<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        match self {
            IndexSource::Range { start, end, .. } => {
                f(start);
                f(end);
            }
            IndexSource::StepBy { inner, step } => {
                inner.size_exprs(f);
                f(step);
            }
            IndexSource::Rev { inner } => inner.size_exprs(f),
            IndexSource::Place(place) => {
                if let PlaceRoot::Invariant(e) = &place.root {
                    f(e);
                }
                for op in &place.ops {
                    if let PlaceOp::Index(e) | PlaceOp::Row(e) = op {
                        f(e);
                    }
                }
            }
            IndexSource::Collection(e) => f(e),
            IndexSource::Hoisted(_) => {}
        }
    }

    /// Whether this source reads a row selected by the comprehension's variables (its size
    /// then depends on them).
    pub(crate) fn has_place(&self) -> bool {
        match self {
            IndexSource::StepBy { inner, .. } | IndexSource::Rev { inner } => inner.has_place(),
            IndexSource::Place(_) => true,
            _ => false,
        }
    }

    /// Replaces every invariant collection inside this source by a hoisted name, calling
    /// `hoist` to obtain the name for each.
    pub(crate) fn hoist(&mut self, hoist: &mut dyn FnMut(Expr) -> Ident) {
        match self {
            IndexSource::StepBy { inner, .. } | IndexSource::Rev { inner } => inner.hoist(hoist),
            IndexSource::Place(place) => {
                if let PlaceRoot::Invariant(e) = &place.root {
                    place.root = PlaceRoot::Hoisted(hoist(e.clone()));
                }
            }
            IndexSource::Collection(e) => *self = IndexSource::Hoisted(hoist(e.clone())),
            IndexSource::Range { .. } | IndexSource::Hoisted(_) => {}
        }
    }
}
