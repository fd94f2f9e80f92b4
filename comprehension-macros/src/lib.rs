//! The procedural macros of [parcomp](https://docs.rs/parcomp). Each entry point is one line:
//! the compiler is the `flatten-core` library, where it can be unit-tested. Use these macros
//! through the `parcomp` crate, which also provides the runtime they call and documents the
//! language.

use flatten_core::{expand, Macro};
use proc_macro::TokenStream;

/// `par![HEAD | QUALIFIERS]`: a data-parallel array comprehension, collected into a `Vec`.
#[proc_macro]
pub fn par(input: TokenStream) -> TokenStream {
    expand(Macro::Par, input.into()).into()
}

/// `par_device![HEAD | QUALIFIERS]`: a `par!` whose elements stay in the device's memory when
/// it runs on a device (a `DeviceVec`), for the next comprehension to read without a copy.
#[proc_macro]
pub fn par_device(input: TokenStream) -> TokenStream {
    expand(Macro::ParDevice, input.into()).into()
}

/// `par_sum![HEAD | QUALIFIERS]`: the sum of the comprehension's elements.
#[proc_macro]
pub fn par_sum(input: TokenStream) -> TokenStream {
    expand(Macro::ParSum, input.into()).into()
}

/// `par_product![HEAD | QUALIFIERS]`: the product of the comprehension's elements.
#[proc_macro]
pub fn par_product(input: TokenStream) -> TokenStream {
    expand(Macro::ParProduct, input.into()).into()
}

/// `par_min![HEAD | QUALIFIERS]`: the least element, `None` if there is none.
#[proc_macro]
pub fn par_min(input: TokenStream) -> TokenStream {
    expand(Macro::ParMin, input.into()).into()
}

/// `par_max![HEAD | QUALIFIERS]`: the greatest element, `None` if there is none.
#[proc_macro]
pub fn par_max(input: TokenStream) -> TokenStream {
    expand(Macro::ParMax, input.into()).into()
}

/// `par_count![HEAD | QUALIFIERS]`: the number of elements.
#[proc_macro]
pub fn par_count(input: TokenStream) -> TokenStream {
    expand(Macro::ParCount, input.into()).into()
}

/// `par_any![BOOL | QUALIFIERS]`: whether some element is `true`.
#[proc_macro]
pub fn par_any(input: TokenStream) -> TokenStream {
    expand(Macro::ParAny, input.into()).into()
}

/// `par_all![BOOL | QUALIFIERS]`: whether every element is `true`.
#[proc_macro]
pub fn par_all(input: TokenStream) -> TokenStream {
    expand(Macro::ParAll, input.into()).into()
}

/// `par_reduce!(op, identity; HEAD | QUALIFIERS)`: the elements combined with an associative
/// `op` whose neutral element is `identity`.
#[proc_macro]
pub fn par_reduce(input: TokenStream) -> TokenStream {
    expand(Macro::ParReduce, input.into()).into()
}

/// The element whose key is least, the first of equal keys (as `Iterator::min_by_key`);
/// `None` when there is no element.
///
/// `par_min_by_key!(KEY; HEAD | QUALIFIERS)`: `KEY` is a function of a reference to the
/// element. Keys compare as `parcomp::OrderKey`s: integers, strings, tuples, floats by
/// `total_cmp`.
#[proc_macro]
pub fn par_min_by_key(input: TokenStream) -> TokenStream {
    expand(Macro::ParMinByKey, input.into()).into()
}

/// The element whose key is greatest, the last of equal keys (as `Iterator::max_by_key`);
/// `None` when there is no element: "which line is longest".
#[proc_macro]
pub fn par_max_by_key(input: TokenStream) -> TokenStream {
    expand(Macro::ParMaxByKey, input.into()).into()
}

/// `par_explain![HEAD | QUALIFIERS]`: the plan `par!` makes of a comprehension, as a
/// `&'static str`; nothing is run.
#[proc_macro]
pub fn par_explain(input: TokenStream) -> TokenStream {
    flatten_core::par_explain(input.into()).into()
}

/// `par_kernel![HEAD | QUALIFIERS]`: the kernel source the device runs for the comprehension,
/// as a `&'static str`; nothing is run.
#[proc_macro]
pub fn par_kernel(input: TokenStream) -> TokenStream {
    flatten_core::par_kernel(input.into()).into()
}

/// `#[par_fn]`: keeps the function as it is and also compiles it for the device, so that
/// comprehensions running on a GPU can call it.
///
/// On an inherent `impl` block of a struct with `#[derive(DeviceValue)]`
/// (`#[par_fn] impl Point { ... }`), it does so for every method (receiver `self`, `mut self` or
/// `&self`), associated function and associated constant of the block: device code then calls
/// `p.dist(q)`, `Point::new(x, y)`, `Self::new(..)` and reads `Point::ORIGIN`. A method call is
/// found when the comprehension runs, by the receiver's type and the method's name; one the
/// device does not have keeps the comprehension on the CPU, with the reason in the trace.
/// Refused with an error: `&mut self` and other receivers, trait impls, generic impls, and
/// `#[par_fn]` on a single method of an impl (it cannot see the type: mark the block).
///
/// A free function may be generic over types (`fn lerp<F: Float>(a: F, b: F, t: F) -> F`, any
/// bounds, kept for Rust): device code calls it with its type arguments written
/// (`lerp::<f32>(..)`, `lerp::<F>(..)` inside another generic `#[par_fn]`, `lerp::<_>(..)` to
/// let the arguments decide), and each call is an instance compiled for its types. Each
/// parameter and the result is a type parameter itself or a type that mentions none. Refused
/// with an error: const and lifetime parameters, `Option<F>`-like types, a type parameter no
/// parameter or result has, generic methods, and `F::zero()`, `F::MAX` and other items of a
/// type parameter in the body.
#[proc_macro_attribute]
pub fn par_fn(attr: TokenStream, item: TokenStream) -> TokenStream {
    flatten_core::par_fn_attribute(attr.into(), item.into()).into()
}

/// `#[derive(DeviceValue)]`: makes a struct whose fields are device values (numbers, `bool`,
/// `char`, tuples, `Option`s, arrays `[T; N]`, other such structs) a device value, stored on the
/// device as one column per leaf field (an array field `[f32; 3]` is three columns; a tuple
/// struct's fields are named `0`, `1`, ... as a tuple's are); a field that cannot be one is a
/// compile error naming it. On a fieldless enum, makes it a device value held as its
/// discriminant (of its `#[repr]`, else `isize`); a variant with fields is a compile error
/// naming it.
#[proc_macro_derive(DeviceValue)]
pub fn derive_device_value(input: TokenStream) -> TokenStream {
    flatten_core::derive_device_value(input.into()).into()
}
