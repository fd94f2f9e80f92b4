//! The device subset: which parts of a comprehension a device can run, lowered into the kernel
//! IR of [`crate::plan::kernel_ir`].
//!
//! - [`lower`]: expressions (arithmetic, comparisons, casts, tuples, `if`, `match`, blocks,
//!   numeric and ASCII methods, indexing captured collections, `#[par_fn]` calls, methods and
//!   associated constants of `#[par_fn] impl` blocks, found at run time: see [`Callee`]), and in
//!   `lower::arrays` fixed-size arrays (literals, checked indexing, `.len()`, loops, element
//!   assignment);
//! - [`methods`]: the numeric and ASCII methods and how they type;
//! - [`generator`]: generators (ranges, `step_by`, `rev`, `map`, captured collections, rows).
//!
//! Anything outside the subset is a [`NotDevice`](crate::plan::kernel_ir::NotDevice) with a span,
//! a reason and a help line: the comprehension then runs on the CPU and says why, or, under
//! `@gpu`, the reasons are compile errors.
//!
//! A subexpression that uses no comprehension variable and is a path, a field of one, or
//! `.len()` of one (`n`, `self.k`, `i32::MAX`, `m.len()`) is *captured*: evaluated once on the
//! host and copied to the device, which keeps the subset small.

pub(crate) mod generator;
pub(crate) mod lower;
pub(crate) mod methods;

use crate::plan::kernel_ir::{
    Capture, CaptureId, CaptureKind, Class, Constraint, FaultSite, NotDevice, ParFnId, Prim,
};
use crate::text::text;
use proc_macro2::Span;
use std::fmt::Display;
use syn::Expr;

/// The device half of the comprehension being analysed: classes, captures and the rest, shared
/// by the comprehension and every comprehension nested in it.
#[derive(Default)]
pub(crate) struct DeviceCtx {
    /// Classes made so far.
    pub(crate) classes: u32,
    /// How they relate.
    pub(crate) constraints: Vec<Constraint>,
    /// Values read from the caller.
    pub(crate) captures: Vec<Capture>,
    /// `#[par_fn]`s called.
    pub(crate) par_fns: Vec<Callee>,
    /// The text of each fault site.
    pub(crate) faults: Vec<String>,
    /// The name and class of each local made so far.
    pub(crate) locals: Vec<(String, crate::plan::kernel_ir::Class)>,
    /// In a `#[par_fn]`: the class of its result (what `return` gives).
    pub(crate) return_class: Option<Class>,
    /// In a generic `#[par_fn]`: the class of each type parameter, by name.
    pub(crate) type_params: Vec<(String, Class)>,
    /// The collections evaluated once before the comprehension: each one's name and what the
    /// user wrote (`rows`), which messages about its capture show instead of the name.
    pub(crate) hoisted: Vec<(String, String)>,
}

/// How far a [`DeviceCtx`] had got, to forget what an analysis added after it.
pub(crate) struct Mark {
    constraints: usize,
    captures: usize,
    par_fns: usize,
    faults: usize,
}

impl DeviceCtx {
    /// Where the context stands now.
    pub(crate) fn mark(&self) -> Mark {
        Mark {
            constraints: self.constraints.len(),
            captures: self.captures.len(),
            par_fns: self.par_fns.len(),
            faults: self.faults.len(),
        }
    }

    /// Forgets the constraints, captures, `#[par_fn]`s and fault sites added since `mark`:
    /// they belonged to a part that does not run in these kernels. (Its classes and locals
    /// stay, unconstrained and unused.)
    pub(crate) fn rollback(&mut self, mark: Mark) {
        self.constraints.truncate(mark.constraints);
        self.captures.truncate(mark.captures);
        self.par_fns.truncate(mark.par_fns);
        self.faults.truncate(mark.faults);
    }

    /// A new class.
    pub(crate) fn class(&mut self) -> Class {
        self.classes += 1;
        Class(self.classes - 1)
    }

    /// A new class that is the primitive `prim`.
    pub(crate) fn prim(&mut self, prim: Prim) -> Class {
        let class = self.class();
        self.constraints.push(Constraint::Prim(class, prim));
        class
    }

    /// Records that `a` and `b` are one type.
    pub(crate) fn same(&mut self, a: Class, b: Class) {
        if a != b {
            self.constraints.push(Constraint::Same(a, b));
        }
    }

    /// Records a constraint.
    pub(crate) fn constrain(&mut self, constraint: Constraint) {
        self.constraints.push(constraint);
    }

    /// A new local called `name`, of class `class`.
    pub(crate) fn local(
        &mut self,
        name: &str,
        class: crate::plan::kernel_ir::Class,
    ) -> crate::plan::kernel_ir::LocalId {
        self.locals.push((name.to_string(), class));
        crate::plan::kernel_ir::LocalId(self.locals.len() as u32 - 1)
    }

    /// The capture of `expr` read as `kind` (one per expression and kind).
    pub(crate) fn capture(&mut self, expr: &Expr, kind: CaptureKind) -> CaptureId {
        let written = text(expr);
        if let Some(k) =
            self.captures.iter().position(|c| text(&c.expr) == written && c.kind == kind)
        {
            return CaptureId(k as u32);
        }
        let text = match self.hoisted.iter().find(|(name, _)| *name == written) {
            Some((_, as_written)) => as_written.clone(),
            None => written,
        };
        self.captures.push(Capture { expr: expr.clone(), text, kind });
        CaptureId(self.captures.len() as u32 - 1)
    }

    /// The `#[par_fn]` at `path` (one per path as written).
    pub(crate) fn par_fn(&mut self, path: &syn::Path) -> ParFnId {
        let wanted = text(path);
        if let Some(k) =
            self.par_fns.iter().position(|p| matches!(p, Callee::Path(p) if text(p) == wanted))
        {
            return ParFnId(k as u32);
        }
        self.par_fns.push(Callee::Path(path.clone()));
        ParFnId(self.par_fns.len() as u32 - 1)
    }

    /// A call of a generic function with its type arguments written (`lerp::<f32>`): an
    /// instance of its own (one per call, as two calls may have other type arguments).
    pub(crate) fn generic_call(&mut self, path: &syn::Path) -> ParFnId {
        self.par_fns.push(Callee::Generic(path.clone()));
        ParFnId(self.par_fns.len() as u32 - 1)
    }

    /// The class of the type parameter `name` of the generic `#[par_fn]` being compiled.
    pub(crate) fn type_param(&self, name: &str) -> Option<Class> {
        self.type_params.iter().find(|(n, _)| n == name).map(|(_, c)| *c)
    }

    /// A call of the method `name` on a receiver of a type the macro cannot see (one per call:
    /// two calls of one name may have receivers of different types).
    pub(crate) fn method(&mut self, name: &str) -> ParFnId {
        self.par_fns.push(Callee::Method(name.to_string()));
        ParFnId(self.par_fns.len() as u32 - 1)
    }

    /// The associated constant `name` of the type `owner` (`Point::ORIGIN`), read in a
    /// `#[par_fn]` (one per constant as written).
    pub(crate) fn constant(&mut self, owner: &syn::Path, name: &str) -> ParFnId {
        let wanted = (text(owner), name.to_string());
        if let Some(k) = self
            .par_fns
            .iter()
            .position(|p| matches!(p, Callee::Const(o, n) if (text(o), n.clone()) == wanted))
        {
            return ParFnId(k as u32);
        }
        self.par_fns.push(Callee::Const(owner.clone(), name.to_string()));
        ParFnId(self.par_fns.len() as u32 - 1)
    }

    /// A new fault site for the check of `what`.
    pub(crate) fn fault(&mut self, what: impl Display) -> FaultSite {
        self.faults.push(what.to_string());
        FaultSite(self.faults.len() as u32 - 1)
    }
}

/// What a call in device code calls: found by the runtime under a name the emitted code
/// computes ([`Callee::name`]).
#[derive(Clone)]
pub enum Callee {
    /// A function by its path as written (a `#[par_fn] fn`, or an associated function of a
    /// `#[par_fn] impl`: `Point::new`): `type_name_of_val` of the item.
    Path(syn::Path),
    /// The method `.name()` of whatever type the receiver (the call's first argument) has,
    /// found once the runtime has solved that type: `contract::method_slot`.
    Method(String),
    /// The associated constant `name` of the type at the path (`Point::ORIGIN`): its
    /// `#[par_fn] impl` compiles it as a function without parameters.
    Const(syn::Path, String),
    /// A generic function called with its type arguments written (`lerp::<f32>(..)`, whose
    /// item has no single name): found by the path its `#[par_fn]` registered, which the
    /// function's twin type gives (`ParFnPath`); a function that is not marked has no twin,
    /// and gives the path as written, under which nothing is found.
    Generic(syn::Path),
}

impl Callee {
    /// The expression giving the name the runtime finds the callee by (`&'static str`).
    pub fn name(&self, rt: &proc_macro2::TokenStream) -> proc_macro2::TokenStream {
        match self {
            Callee::Path(path) => quote::quote! { #rt::par_fn_name(&#path) },
            Callee::Method(name) => {
                let slot = parcomp_contract::method_slot(name);
                quote::quote! { #slot }
            }
            Callee::Const(owner, name) => {
                quote::quote! { #rt::par_fn_item_name::<#owner>(#name) }
            }
            Callee::Generic(path) => {
                // As `@gpu`'s check of a callee: the twin when the import has one, else a
                // stand-in type (see `back::rust::offload::require_par_fn`).
                let mut plain = path.clone();
                for segment in &mut plain.segments {
                    segment.arguments = syn::PathArguments::None;
                }
                let written = crate::text::text(&plain);
                let alias =
                    syn::Ident::new("__parcomp_generic_fn", proc_macro2::Span::mixed_site());
                quote::quote! {{
                    #[allow(unused_imports)]
                    use #rt::NotAParFn as #alias;
                    {
                        #[allow(unused_imports)]
                        use #plain as #alias;
                        #[allow(unused_imports)]
                        use #rt::{ByTwin as _, NoTwin as _};
                        (&#rt::PathProbe::<#alias>::new()).par_fn_path(#written)
                    }
                }}
            }
        }
    }
}

/// A reason the device cannot run something, at `span`.
pub(crate) fn not_device(span: Span, reason: impl Display, help: impl Display) -> NotDevice {
    NotDevice { span, reason: reason.to_string(), help: help.to_string() }
}
