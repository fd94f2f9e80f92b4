//! The numeric and ASCII methods of the device subset, and how each types its result and
//! arguments.
//!
//! A method is written on the receiver's class, `PC_OP(abs, T)(x)`, so one entry serves every
//! type that has it (`abs` of `i32` and of `f64` are different functions of the dialect's
//! `scalar.h`, chosen when the class is known). `i64::max(a, b)` is the method `max` with the
//! receiver `a` of class `i64`.

use crate::plan::kernel_ir::Prim;

/// How a method types its result and its arguments beyond the receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Typing {
    /// Result and every argument have the receiver's class (`min`, `wrapping_add`, `atan2`).
    SelfLike,
    /// The result has the receiver's class; the arguments are these primitives (`pow(u32)`).
    SelfWith(&'static [Prim]),
    /// The result is this primitive, the arguments have the receiver's class (`is_nan`,
    /// `count_ones`).
    Returns(Prim),
    /// The result is the unsigned type of the receiver's width (`abs_diff`).
    Unsigned,
    /// `Option` methods: the receiver is `Option<T>`; the result is `T`, and so are the
    /// arguments (`unwrap_or`, `unwrap`).
    OptionValue,
    /// `Option` methods returning `bool` (`is_some`, `is_none`).
    OptionFlag,
}

/// A method of the subset.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MethodInfo {
    /// The Rust name.
    pub(crate) rust: &'static str,
    /// The dialect's operation name.
    pub(crate) op: &'static str,
    /// Arguments besides the receiver.
    pub(crate) arity: usize,
    /// How it types.
    pub(crate) typing: Typing,
    /// Whether it can fault (it then takes the fault word and a site).
    pub(crate) faults: bool,
}

const fn m(rust: &'static str, op: &'static str, arity: usize, typing: Typing) -> MethodInfo {
    MethodInfo { rust, op, arity, typing, faults: false }
}

const fn faulting(
    rust: &'static str,
    op: &'static str,
    arity: usize,
    typing: Typing,
) -> MethodInfo {
    MethodInfo { rust, op, arity, typing, faults: true }
}

use Typing::*;

/// The methods of the subset.
pub(crate) const METHODS: &[MethodInfo] = &[
    // Every number.
    m("min", "min", 1, SelfLike),
    m("max", "max", 1, SelfLike),
    faulting("clamp", "clamp", 2, SelfLike),
    m("abs", "abs", 0, SelfLike),
    m("signum", "signum", 0, SelfLike),
    m("pow", "pow", 1, SelfWith(&[Prim::U32])),
    faulting("div_euclid", "div_euclid", 1, SelfLike),
    faulting("rem_euclid", "rem_euclid", 1, SelfLike),
    faulting("div_ceil", "div_ceil", 1, SelfLike),
    // Integers.
    m("wrapping_add", "add", 1, SelfLike),
    m("wrapping_sub", "sub", 1, SelfLike),
    m("wrapping_mul", "mul", 1, SelfLike),
    m("wrapping_neg", "neg", 0, SelfLike),
    m("wrapping_pow", "pow", 1, SelfWith(&[Prim::U32])),
    m("wrapping_shl", "shl", 1, SelfWith(&[Prim::U32])),
    m("wrapping_shr", "shr", 1, SelfWith(&[Prim::U32])),
    m("wrapping_abs", "abs", 0, SelfLike),
    m("saturating_add", "saturating_add", 1, SelfLike),
    m("saturating_sub", "saturating_sub", 1, SelfLike),
    m("saturating_mul", "saturating_mul", 1, SelfLike),
    m("abs_diff", "abs_diff", 1, Unsigned),
    m("count_ones", "count_ones", 0, Returns(Prim::U32)),
    m("count_zeros", "count_zeros", 0, Returns(Prim::U32)),
    m("leading_zeros", "leading_zeros", 0, Returns(Prim::U32)),
    m("trailing_zeros", "trailing_zeros", 0, Returns(Prim::U32)),
    m("rotate_left", "rotate_left", 1, SelfWith(&[Prim::U32])),
    m("rotate_right", "rotate_right", 1, SelfWith(&[Prim::U32])),
    m("is_positive", "is_positive", 0, Returns(Prim::Bool)),
    m("is_negative", "is_negative", 0, Returns(Prim::Bool)),
    m("is_power_of_two", "is_power_of_two", 0, Returns(Prim::Bool)),
    // Floats.
    m("sqrt", "sqrt", 0, SelfLike),
    m("cbrt", "cbrt", 0, SelfLike),
    m("exp", "exp", 0, SelfLike),
    m("exp2", "exp2", 0, SelfLike),
    m("exp_m1", "exp_m1", 0, SelfLike),
    m("ln", "ln", 0, SelfLike),
    m("log", "log", 1, SelfLike),
    m("log2", "log2", 0, SelfLike),
    m("log10", "log10", 0, SelfLike),
    m("ln_1p", "ln_1p", 0, SelfLike),
    m("powf", "powf", 1, SelfLike),
    m("powi", "powi", 1, SelfWith(&[Prim::I32])),
    m("sin", "sin", 0, SelfLike),
    m("cos", "cos", 0, SelfLike),
    m("tan", "tan", 0, SelfLike),
    m("asin", "asin", 0, SelfLike),
    m("acos", "acos", 0, SelfLike),
    m("atan", "atan", 0, SelfLike),
    m("atan2", "atan2", 1, SelfLike),
    m("sinh", "sinh", 0, SelfLike),
    m("cosh", "cosh", 0, SelfLike),
    m("tanh", "tanh", 0, SelfLike),
    m("asinh", "asinh", 0, SelfLike),
    m("acosh", "acosh", 0, SelfLike),
    m("atanh", "atanh", 0, SelfLike),
    m("floor", "floor", 0, SelfLike),
    m("ceil", "ceil", 0, SelfLike),
    m("round", "round", 0, SelfLike),
    m("round_ties_even", "round_ties_even", 0, SelfLike),
    m("trunc", "trunc", 0, SelfLike),
    m("fract", "fract", 0, SelfLike),
    m("hypot", "hypot", 1, SelfLike),
    m("mul_add", "mul_add", 2, SelfLike),
    m("copysign", "copysign", 1, SelfLike),
    m("recip", "recip", 0, SelfLike),
    m("to_degrees", "to_degrees", 0, SelfLike),
    m("to_radians", "to_radians", 0, SelfLike),
    m("is_nan", "is_nan", 0, Returns(Prim::Bool)),
    m("is_infinite", "is_infinite", 0, Returns(Prim::Bool)),
    m("is_finite", "is_finite", 0, Returns(Prim::Bool)),
    m("is_sign_positive", "is_sign_positive", 0, Returns(Prim::Bool)),
    m("is_sign_negative", "is_sign_negative", 0, Returns(Prim::Bool)),
    // `u8` and `char` (Rust has these on no other type).
    m("is_ascii", "is_ascii", 0, Returns(Prim::Bool)),
    m("is_ascii_alphabetic", "is_ascii_alphabetic", 0, Returns(Prim::Bool)),
    m("is_ascii_uppercase", "is_ascii_uppercase", 0, Returns(Prim::Bool)),
    m("is_ascii_lowercase", "is_ascii_lowercase", 0, Returns(Prim::Bool)),
    m("is_ascii_alphanumeric", "is_ascii_alphanumeric", 0, Returns(Prim::Bool)),
    m("is_ascii_digit", "is_ascii_digit", 0, Returns(Prim::Bool)),
    m("is_ascii_hexdigit", "is_ascii_hexdigit", 0, Returns(Prim::Bool)),
    m("is_ascii_punctuation", "is_ascii_punctuation", 0, Returns(Prim::Bool)),
    m("is_ascii_graphic", "is_ascii_graphic", 0, Returns(Prim::Bool)),
    m("is_ascii_whitespace", "is_ascii_whitespace", 0, Returns(Prim::Bool)),
    m("is_ascii_control", "is_ascii_control", 0, Returns(Prim::Bool)),
    m("to_ascii_uppercase", "to_ascii_uppercase", 0, SelfLike),
    m("to_ascii_lowercase", "to_ascii_lowercase", 0, SelfLike),
    m("eq_ignore_ascii_case", "eq_ignore_ascii_case", 1, Returns(Prim::Bool)),
    // The results of nested `par_min!` / `par_max!`.
    m("unwrap_or", "unwrap_or", 1, OptionValue),
    faulting("unwrap", "unwrap", 0, OptionValue),
    m("is_some", "is_some", 0, OptionFlag),
    m("is_none", "is_none", 0, OptionFlag),
];

/// The method `name` with `arity` arguments besides the receiver, if the subset has it.
pub(crate) fn method(name: &str, arity: usize) -> Option<&'static MethodInfo> {
    METHODS.iter().find(|m| m.rust == name && m.arity == arity)
}

/// Whether the subset has a method called `name` (with any number of arguments).
pub(crate) fn is_known(name: &str) -> bool {
    METHODS.iter().any(|m| m.rust == name)
}
