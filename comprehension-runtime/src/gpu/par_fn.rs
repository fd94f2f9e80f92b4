//! The registry of `#[par_fn]`s: what the device needs to call a Rust function.
//!
//! `#[par_fn]` registers a [`ParFnEntry`] for the function it marks, keyed by the function's
//! path (`module_path!()` and its name). A comprehension that calls a function passes the
//! function's path as `type_name_of_val` gives it, and the runtime looks it up here: a function
//! that is not marked is not found, and the comprehension runs on the CPU, saying so.

use super::plan::Constraint;
use super::types::TypeDesc;
use std::collections::HashMap;
use std::sync::OnceLock;

/// A function compiled for the device by `#[par_fn]`.
pub struct ParFnEntry {
    /// `module_path!()::name`.
    pub path: &'static str,
    /// The C function (named `PCF_SELF`, calling its callees as `PC_FN_k`).
    pub source: &'static str,
    /// Number of type classes of the function.
    pub classes: u32,
    /// How they relate; `Capture(c, k)` is the type of parameter `k`, and of the result for
    /// `k` = the number of parameters.
    pub constraints: &'static [Constraint],
    /// The text of each of its fault sites.
    pub faults: &'static [&'static str],
    /// The parameters' and the result's types.
    pub signature: fn() -> (Vec<TypeDesc>, TypeDesc),
    /// The paths of the functions it calls, in the order of its `PC_FN_k`.
    pub callees: fn() -> Vec<&'static str>,
}

inventory::collect!(ParFnEntry);

/// Implemented by `#[par_fn]` for the type-namespace twin of the function it marks: what
/// `@gpu` comprehensions require of the functions they call.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not marked `#[par_fn]`, so `@gpu` device code cannot call it",
    label = "called here",
    note = "add `#[parcomp::par_fn]` to `fn {Self}` (its body must be in the device \
            subset), or drop `@gpu` to let this comprehension run on the CPU"
)]
pub trait ParFn {
    /// What `@gpu` comprehensions call, as `<f as ParFn>::required()`: a path that is not a
    /// type (a function not marked `#[par_fn]`, a closure) is an error at the call.
    fn required() {}
}

/// The `#[par_fn]` at `path`.
pub(crate) fn find(path: &str) -> Option<&'static ParFnEntry> {
    static TABLE: OnceLock<HashMap<&'static str, &'static ParFnEntry>> = OnceLock::new();
    TABLE
        .get_or_init(|| inventory::iter::<ParFnEntry>.into_iter().map(|e| (e.path, e)).collect())
        .get(path)
        .copied()
}
