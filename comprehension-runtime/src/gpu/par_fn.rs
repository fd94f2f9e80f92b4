//! The registry of `#[par_fn]`s: what the device needs to call a Rust function.
//!
//! `#[par_fn]` registers a [`ParFnEntry`] for the function it marks, keyed by the function's
//! path (`module_path!()` and its name). A comprehension that calls a function passes the
//! function's path as `type_name_of_val` gives it, and the runtime looks it up here: a function
//! that is not marked is not found, and the comprehension runs on the CPU, saying so.
//!
//! `#[par_fn]` on an inherent `impl` block registers a [`ParFnItem`] for each method,
//! associated function and associated constant of the block (a constant as a function without
//! parameters), found three ways:
//! - a method call `p.dist(q)`, whose receiver's type only the runtime knows, is listed as the
//!   slot `.dist` (`parcomp_contract::method_slot`); once the receiver's type is solved to a
//!   struct with `#[derive(DeviceValue)]` (named `type_name::<T>()`), the method is the item
//!   `T::dist` (`item_key`);
//! - an associated function called by its path (`Point::new(x, y)`, `Point::dist(p, q)`) is
//!   found by `type_name_of_val` of the function, as a free function is;
//! - an associated constant (`Point::ORIGIN` in a `#[par_fn]`) by [`par_fn_item_name`].

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
    /// A generic function's parameters and result (in that order) that are one of its type
    /// parameters (its `signature` gives `()` there); empty for a function that is not
    /// generic. Each use of the function is an instance of it, whose type arguments the
    /// caller's types decide (see [`SigSlot`]).
    pub generic: &'static [SigSlot],
}

inventory::collect!(ParFnEntry);

/// What a parameter or the result of a generic `#[par_fn]` is: a type of its own (the entry's
/// `signature` gives it), or the `j`-th type parameter of the function (`F` in
/// `fn lerp<F: Float>(a: F, b: F, t: F) -> F`), which each instance's type arguments fill in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SigSlot {
    /// The type the signature gives.
    Concrete,
    /// The type parameter of this index.
    TypeParam(u32),
}

impl ParFnEntry {
    /// The number of type parameters of the function (0 when it is not generic).
    pub(crate) fn type_params(&self) -> usize {
        self.generic
            .iter()
            .filter_map(|s| match s {
                SigSlot::TypeParam(j) => Some(*j as usize + 1),
                SigSlot::Concrete => None,
            })
            .max()
            .unwrap_or(0)
    }

    /// The signature of the instance with type arguments `args` (one per type parameter).
    pub(crate) fn instance(&self, args: &[TypeDesc]) -> (Vec<TypeDesc>, TypeDesc) {
        let (mut params, mut ret) = (self.signature)();
        for (k, slot) in self.generic.iter().enumerate() {
            if let SigSlot::TypeParam(j) = slot {
                let ty = args[*j as usize].clone();
                match params.get_mut(k) {
                    Some(p) => *p = ty,
                    None => ret = ty,
                }
            }
        }
        (params, ret)
    }
}

/// Implemented by `#[par_fn]` for the type-namespace twin of the function it marks: the
/// function's registered path, which a call naming the function with type arguments
/// (`lerp::<f32>(..)`, whose item has no single name) finds it by ([`PathProbe`]).
pub trait ParFnPath {
    /// `module_path!()::name` of the function.
    const PATH: &'static str;
}

/// Finds the registered path of a generic `#[par_fn]` through its twin type `T` (a function
/// that is not marked has a stand-in type instead, and the path as written is returned:
/// nothing is registered under it, so the comprehension runs on the CPU, saying why).
pub struct PathProbe<T>(std::marker::PhantomData<T>);

impl<T> PathProbe<T> {
    /// The probe of `T`.
    pub fn new() -> Self {
        PathProbe(std::marker::PhantomData)
    }
}

impl<T> Default for PathProbe<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// The type a call's name stands for when the function it names has no twin (is not a
/// `#[par_fn]`): [`PathProbe`] of it gives the path as written.
pub struct NotAParFn;

/// [`PathProbe`]'s answer for a `#[par_fn]`'s twin (chosen first, by autoref).
pub trait ByTwin {
    /// The registered path.
    fn par_fn_path(&self, written: &'static str) -> &'static str;
}

impl<T: ParFnPath> ByTwin for PathProbe<T> {
    fn par_fn_path(&self, _: &'static str) -> &'static str {
        T::PATH
    }
}

/// [`PathProbe`]'s answer for any other type: the path as written.
pub trait NoTwin {
    /// The path as written.
    fn par_fn_path(&self, written: &'static str) -> &'static str;
}

impl<T> NoTwin for &PathProbe<T> {
    fn par_fn_path(&self, written: &'static str) -> &'static str {
        written
    }
}

/// A method, associated function or associated constant of a `#[par_fn] impl` block.
pub struct ParFnItem {
    /// `type_name::<Self>()` of the block's type: the name of the struct in its `TypeDesc`.
    pub owner: fn() -> &'static str,
    /// The item's name (`dist`, `ORIGIN`).
    pub name: &'static str,
    /// For a function: `type_name_of_val` of it, how a call by its path names it.
    pub path: Option<fn() -> &'static str>,
    /// The item compiled for the device (a constant: a function of no parameters returning
    /// it; a method: its receiver is parameter 0).
    pub function: ParFnEntry,
}

inventory::collect!(ParFnItem);

/// The key of the item `name` of the type named `owner` (`geo::Point::dist`).
pub(crate) fn item_key(owner: &str, name: &str) -> String {
    format!("{owner}::{name}")
}

/// The name under which the item `name` of `T`'s `#[par_fn] impl` is found (what a
/// `#[par_fn]` reading the associated constant `T::NAME` lists as its callee).
pub fn par_fn_item_name<T: ?Sized>(name: &str) -> &'static str {
    intern(item_key(std::any::type_name::<T>(), name))
}

/// `text` as a `&'static str`, made once per distinct text (the names of items and methods,
/// a few per program).
pub(crate) fn intern(text: String) -> &'static str {
    use std::collections::HashSet;
    use std::sync::Mutex;
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut names = NAMES.get_or_init(Mutex::default).lock().unwrap_or_else(|p| p.into_inner());
    if let Some(&found) = names.get(text.as_str()) {
        return found;
    }
    let leaked: &'static str = Box::leak(text.into_boxed_str());
    names.insert(leaked);
    leaked
}

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

/// The `#[par_fn]` at `path`: a free function's path, an associated function's
/// `type_name_of_val`, or an item's [`item_key`].
pub(crate) fn find(path: &str) -> Option<&'static ParFnEntry> {
    static TABLE: OnceLock<HashMap<String, &'static ParFnEntry>> = OnceLock::new();
    TABLE
        .get_or_init(|| {
            let mut table: HashMap<String, &'static ParFnEntry> = inventory::iter::<ParFnEntry>
                .into_iter()
                .map(|e| (e.path.to_string(), e))
                .collect();
            for item in inventory::iter::<ParFnItem> {
                table.insert(item_key((item.owner)(), item.name), &item.function);
                if let Some(path) = item.path {
                    table.insert(path().to_string(), &item.function);
                }
            }
            table
        })
        .get(path)
        .copied()
}
