//! The contract between parcomp's macro (`flatten-core`) and its runtime
//! (`comprehension-runtime`): what the emitted code and the generated kernels say to the runtime,
//! defined once so that the two sides cannot drift apart.
//!
//! - [`Prim`]: the device's primitive types, by their Rust names and their kernel tags.
//! - [`Constraint`]: how the macro relates the type classes of a kernel's expressions, which
//!   the runtime solves; over the macro's ids ([`ConstraintIds`]) or as emitted ([`Static`]).
//! - [`CaptureKind`], [`RootKind`], [`ReduceKind`]: how the kernels read captured values and
//!   the first generator, and what a reduction's partial results are.
//! - [`FaultCode`]: the codes a kernel records when a check fails, with their C names; the
//!   kernels' `#define`s are generated from the same table ([`fault_defines`]).
//!
//! The way `wasm-bindgen-shared` serves `wasm-bindgen`'s macro and runtime. Use parcomp through
//! the `parcomp` crate; this one has no API of its own for users.

#![forbid(unsafe_code)]

use std::fmt::Debug;
use std::hash::Hash;

/// The primitive types of the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Prim {
    /// `bool`.
    Bool,
    /// `i8`.
    I8,
    /// `i16`.
    I16,
    /// `i32`.
    I32,
    /// `i64` (and `isize`: the device path runs on 64-bit hosts).
    I64,
    /// `u8`.
    U8,
    /// `u16`.
    U16,
    /// `u32`.
    U32,
    /// `u64` (and `usize`).
    U64,
    /// `f32`.
    F32,
    /// `f64`.
    F64,
    /// `char`: a Unicode scalar value, stored as its code point in 32 bits. Not an integer
    /// type: it converts to integers, and from `u8` only, by `as` and `From`, as in Rust.
    Char,
}

impl Prim {
    /// Every primitive.
    pub const ALL: [Prim; 12] = [
        Prim::Bool,
        Prim::I8,
        Prim::I16,
        Prim::I32,
        Prim::I64,
        Prim::U8,
        Prim::U16,
        Prim::U32,
        Prim::U64,
        Prim::F32,
        Prim::F64,
        Prim::Char,
    ];

    /// The primitive a Rust type name denotes (`usize`/`isize` are 64-bit on the device).
    pub fn from_rust(name: &str) -> Option<Prim> {
        Some(match name {
            "bool" => Prim::Bool,
            "i8" => Prim::I8,
            "i16" => Prim::I16,
            "i32" => Prim::I32,
            "i64" | "isize" => Prim::I64,
            "u8" => Prim::U8,
            "u16" => Prim::U16,
            "u32" => Prim::U32,
            "u64" | "usize" => Prim::U64,
            "f32" => Prim::F32,
            "f64" => Prim::F64,
            "char" => Prim::Char,
            _ => return None,
        })
    }

    /// The variant's name (`"U64"`), for code that names it (`rt::gpu::Prim::U64`).
    pub fn variant(self) -> &'static str {
        match self {
            Prim::Bool => "Bool",
            Prim::I8 => "I8",
            Prim::I16 => "I16",
            Prim::I32 => "I32",
            Prim::I64 => "I64",
            Prim::U8 => "U8",
            Prim::U16 => "U16",
            Prim::U32 => "U32",
            Prim::U64 => "U64",
            Prim::F32 => "F32",
            Prim::F64 => "F64",
            Prim::Char => "Char",
        }
    }

    /// The kernel dialect's tag (`u64`: `pc_u64`, `PC_OP(add, u64)`).
    pub fn tag(self) -> &'static str {
        match self {
            Prim::Bool => "bool",
            Prim::I8 => "i8",
            Prim::I16 => "i16",
            Prim::I32 => "i32",
            Prim::I64 => "i64",
            Prim::U8 => "u8",
            Prim::U16 => "u16",
            Prim::U32 => "u32",
            Prim::U64 => "u64",
            Prim::F32 => "f32",
            Prim::F64 => "f64",
            Prim::Char => "char",
        }
    }

    /// Bytes per value on the device.
    pub fn size(self) -> usize {
        match self {
            Prim::Bool | Prim::I8 | Prim::U8 => 1,
            Prim::I16 | Prim::U16 => 2,
            Prim::I32 | Prim::U32 | Prim::F32 | Prim::Char => 4,
            Prim::I64 | Prim::U64 | Prim::F64 => 8,
        }
    }

    /// An integer type.
    pub fn is_integer(self) -> bool {
        !matches!(self, Prim::Bool | Prim::F32 | Prim::F64 | Prim::Char)
    }

    /// A float type.
    pub fn is_float(self) -> bool {
        matches!(self, Prim::F32 | Prim::F64)
    }

    /// A signed integer type.
    pub fn is_signed(self) -> bool {
        matches!(self, Prim::I8 | Prim::I16 | Prim::I32 | Prim::I64)
    }
}

/// The ids a [`Constraint`] is written over: the macro's own newtypes while it compiles a
/// comprehension, plain numbers in the static data it emits and the runtime solves ([`Static`]).
///
/// Implemented by marker types, which derive what [`Constraint`] derives (its derived impls ask
/// the same of their type parameter).
pub trait ConstraintIds {
    /// A type class: every expression of one class has the same type.
    type Class: Copy + Debug + Eq + Hash;
    /// The classes of a tuple's fields, in order.
    type Classes: Clone + Debug + Eq + Hash;
    /// A value the kernels read from the caller, by its number.
    type Capture: Copy + Debug + Eq + Hash;
    /// A `#[par_fn]` called by the comprehension, by its number (in the order of first call).
    type ParFn: Copy + Debug + Eq + Hash;
    /// The name of a struct's field, as written in Rust (without `r#`).
    type Name: Clone + Debug + Eq + Hash;
}

/// The ids of the emitted constraints: numbers, and a static slice of a tuple's classes. What
/// the runtime solves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Static;

impl ConstraintIds for Static {
    type Class = u32;
    type Classes = &'static [u32];
    type Capture = u32;
    type ParFn = u32;
    type Name = &'static str;
}

/// What relates the type classes of a kernel's expressions.
///
/// Types are not known when the macro runs — only Rust knows them — so each expression of the
/// device code gets a class, related to the others by constraints (`a + b` has the class of
/// `a`, which is the class of `b`; `x as f32` is `f32`; an integer literal is some integer
/// type). The runtime solves the classes from what the emitted code observes (the types of the
/// captured values, of the first generator's elements and of the head), so one kernel source
/// serves every instantiation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Constraint<Ids: ConstraintIds = Static> {
    /// Both classes are one type.
    Same(Ids::Class, Ids::Class),
    /// The class is this primitive.
    Prim(Ids::Class, Prim),
    /// The class is an integer type (an unsuffixed integer literal: `i32` if nothing else
    /// decides, as in Rust).
    Integer(Ids::Class),
    /// The class is a float type (an unsuffixed float literal: `f64` if nothing else decides).
    Float(Ids::Class),
    /// The class is the tuple of these classes.
    Tuple(Ids::Class, Ids::Classes),
    /// The second class is field `.n` of the first (a tuple whose length the macro does not
    /// know).
    Field(Ids::Class, u32, Ids::Class),
    /// The second class is the field of this name of the first, a struct with
    /// `#[derive(DeviceValue)]` (which the macro cannot see: the field is found by name in the
    /// struct's observed layout).
    Member(Ids::Class, Ids::Name, Ids::Class),
    /// The class is a fieldless enum with `#[derive(DeviceValue)]` that has a variant of this
    /// name (`Color::Red` in a `#[par_fn]`: its value is the variant's discriminant, which the
    /// runtime finds in the enum's observed description).
    Variant(Ids::Class, Ids::Name),
    /// The class is a struct built as `Name { .. }` or `Name(..)`: a hint, used only when
    /// nothing else gives the class its type (a struct literal taken apart again in a
    /// `#[par_fn]`), naming a struct the runtime observes elsewhere (a parameter, an element).
    Named(Ids::Class, Ids::Name),
    /// The first class is `Option` of the second.
    Option(Ids::Class, Ids::Class),
    /// The first class is an array `[T; n]` of the second: `n` when the macro sees it (an
    /// array literal, `[v; 3]`), `None` when only the observed types tell it (`a[i]`,
    /// `a.len()` of an array whose type the macro does not see).
    Array(Ids::Class, Ids::Class, Option<u32>),
    /// The class is the type of a captured value.
    Capture(Ids::Class, Ids::Capture),
    /// The class is the element type of a captured collection.
    Element(Ids::Class, Ids::Capture),
    /// The class is the element type of the first generator.
    Root(Ids::Class),
    /// The class is the type of the comprehension's elements.
    Output(Ids::Class),
    /// The first class is the unsigned type of the second's width (`abs_diff`).
    Unsigned(Ids::Class, Ids::Class),
    /// The class is the type of parameter `n` of a `#[par_fn]`.
    Param(Ids::Class, Ids::ParFn, u32),
    /// The class is the return type of a `#[par_fn]`.
    Return(Ids::Class, Ids::ParFn),
    /// The two classes are one type if the method call `f` (`x.abs()`, listed as a
    /// [`method_slot`]) is the device's own method of that name: when its receiver is not a
    /// struct with `#[derive(DeviceValue)]`. For such a struct the call is the struct's
    /// `#[par_fn]` method, typed by its `Param`s and `Return`, and these do not hold. (The
    /// built-in method's typing is written over classes of its own, which these join to the
    /// call's.)
    Builtin(Ids::ParFn, Ids::Class, Ids::Class),
    /// The class is type argument `j` of the call `f` of a generic `#[par_fn]` (written, as
    /// in `lerp::<f32>(..)`; each call is an instance of the function, whose type arguments
    /// are otherwise decided by its arguments' and result's types).
    TypeArg(Ids::Class, Ids::ParFn, u32),
}

/// The C name of a struct's field `name` in the kernels (`x` is `m_x`): a member of the C
/// struct the runtime declares for the struct, and what the macro's kernels read. The prefix
/// keeps a field named like a C, OpenCL or CUDA keyword (`half`, `int`) or a macro of the
/// kernels from clashing; `_` is written `__` and a character C does not allow in a name as
/// its code (`_u` hex `_`), so that two names never meet.
///
/// A tuple struct's fields are named by their positions (`0`, `1`): they are `f0`, `f1`, the
/// members of a tuple, so that `w.0` reads the same member whether `w` turns out to be a tuple
/// or a tuple struct (the macro cannot tell). A named field never starts with a digit, so it
/// never meets them.
pub fn member_name(name: &str) -> String {
    if !name.is_empty() && name.bytes().all(|b| b.is_ascii_digit()) {
        return format!("f{name}");
    }
    let mut out = String::from("m_");
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if c == '_' {
            out.push_str("__");
        } else {
            out.push_str(&format!("_u{:x}_", c as u32));
        }
    }
    out
}

/// The name under which a comprehension (or a `#[par_fn]`) lists a call of the method `name`
/// whose receiver's type the macro cannot see (`p.dist(q)`): `".dist"`. The runtime finds the
/// `#[par_fn]` method once the receiver's type is solved (a struct with
/// `#[derive(DeviceValue)]`, named `T`: the method registered as `T::dist`). A function's path
/// never begins with `.`, so the two kinds of callee cannot be confused.
pub fn method_slot(name: &str) -> String {
    format!(".{name}")
}

/// The method a callee name of [`method_slot`] calls (`".dist"`: `dist`), or `None` for the
/// path of a function.
pub fn slot_method(callee: &str) -> Option<&str> {
    callee.strip_prefix('.')
}

/// How the kernels read a captured value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaptureKind {
    /// One value.
    Scalar,
    /// A collection read by index (`xs[i]`, `xs.len()`, `x <- &xs`).
    Slice,
    /// An array of rows (`m.row(i)`, `rows[x]` as a generator).
    Jagged,
}

/// Where the first generator's elements come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RootKind {
    /// An integer range: the device computes `start + i`.
    Range,
    /// Elements read on the host and copied.
    Elements,
}

/// The kind of a reduction, for reading its partial results on the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceKind {
    /// Sum, product, `par_reduce!`: a value of the elements' type.
    Value,
    /// Least or greatest element: an `Option`.
    Optional,
    /// A count (`u64`).
    Count,
    /// `par_any!` or `par_all!`: a `bool`; `stop` is the value that decides the result.
    Flag {
        /// `true` for `par_any!`, `false` for `par_all!`.
        stop: bool,
    },
}

/// What a kernel records in the fault word when a check fails: the code, the number of the
/// failed check in the generated source, and two arguments (see the runtime's `gpu/fault.rs`,
/// which raises the panic Rust would raise). 0 means no fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum FaultCode {
    /// Integer division by zero.
    DivZero = 1,
    /// Integer remainder by zero.
    RemZero = 2,
    /// `MIN / -1`.
    DivOverflow = 3,
    /// `MIN % -1`.
    RemOverflow = 4,
    /// An index out of bounds: `a0` the index, `a1` the length.
    Index = 5,
    /// The sizes of a level sum to more than `usize` can count.
    SizeOverflow = 6,
    /// A range has more elements than `usize` can count.
    RangeTooLong = 7,
    /// `step_by(0)`.
    StepZero = 8,
    /// `Option::unwrap()` on `None`.
    UnwrapNone = 9,
    /// `clamp` with `min > max`: `a0`, `a1` the bounds' bits.
    Clamp = 10,
    /// Internal: a level produced other sizes than it counted (`a0` of `a1`).
    SizeChanged = 11,
}

impl FaultCode {
    /// Every fault code.
    pub const ALL: [FaultCode; 11] = [
        FaultCode::DivZero,
        FaultCode::RemZero,
        FaultCode::DivOverflow,
        FaultCode::RemOverflow,
        FaultCode::Index,
        FaultCode::SizeOverflow,
        FaultCode::RangeTooLong,
        FaultCode::StepZero,
        FaultCode::UnwrapNone,
        FaultCode::Clamp,
        FaultCode::SizeChanged,
    ];

    /// The code in the fault word.
    pub fn code(self) -> u32 {
        self as u32
    }

    /// The fault a code of the fault word stands for.
    pub fn from_code(code: u32) -> Option<FaultCode> {
        FaultCode::ALL.into_iter().find(|f| f.code() == code)
    }

    /// The name the kernels use (`PC_FAULT_DIV_ZERO`).
    pub fn c_name(self) -> &'static str {
        match self {
            FaultCode::DivZero => "PC_FAULT_DIV_ZERO",
            FaultCode::RemZero => "PC_FAULT_REM_ZERO",
            FaultCode::DivOverflow => "PC_FAULT_DIV_OVERFLOW",
            FaultCode::RemOverflow => "PC_FAULT_REM_OVERFLOW",
            FaultCode::Index => "PC_FAULT_INDEX",
            FaultCode::SizeOverflow => "PC_FAULT_SIZE_OVERFLOW",
            FaultCode::RangeTooLong => "PC_FAULT_RANGE_TOO_LONG",
            FaultCode::StepZero => "PC_FAULT_STEP_ZERO",
            FaultCode::UnwrapNone => "PC_FAULT_UNWRAP_NONE",
            FaultCode::Clamp => "PC_FAULT_CLAMP",
            FaultCode::SizeChanged => "PC_FAULT_SIZE_CHANGED",
        }
    }
}

/// The kernels' `#define`s of the fault codes (`PC_FAULT_NONE` and one per [`FaultCode`]), put
/// before the kernels' prelude when a program is built.
pub fn fault_defines() -> String {
    let mut out = String::from("#define PC_FAULT_NONE 0u\n");
    for fault in FaultCode::ALL {
        out.push_str(&format!("#define {} {}u\n", fault.c_name(), fault.code()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prims_round_trip_through_their_names() {
        for prim in Prim::ALL {
            assert_eq!(Prim::from_rust(prim.tag()), Some(prim));
            assert_eq!(prim.variant().to_ascii_lowercase(), prim.tag());
        }
        assert_eq!(Prim::from_rust("usize"), Some(Prim::U64));
        assert_eq!(Prim::from_rust("char"), Some(Prim::Char));
        assert!(!Prim::Char.is_integer() && !Prim::Char.is_signed() && !Prim::Char.is_float());
        assert_eq!(Prim::from_rust("str"), None);
    }

    #[test]
    fn static_constraints_copy_and_print_as_written() {
        // The runtime's messages print the static form.
        let tuple = Constraint::<Static>::Tuple(0, &[1, 2]);
        let copy = tuple;
        assert_eq!(copy, tuple);
        assert_eq!(format!("{tuple:?}"), "Tuple(0, [1, 2])");
        assert_eq!(format!("{:?}", Constraint::<Static>::Param(3, 1, 0)), "Param(3, 1, 0)");
    }

    #[test]
    fn method_slots_are_not_paths() {
        assert_eq!(method_slot("dist"), ".dist");
        assert_eq!(slot_method(&method_slot("len")), Some("len"));
        assert_eq!(slot_method("geo::Point::dist"), None);
    }

    #[test]
    fn member_names_are_c_names() {
        assert_eq!(member_name("x"), "m_x");
        assert_eq!(member_name("half"), "m_half");
        assert_eq!(member_name("strike_price"), "m_strike__price");
        assert_eq!(member_name("é"), "m__ue9_");
        assert_ne!(member_name("é"), member_name("_ue9_"));
        // A tuple struct's fields are a tuple's members.
        assert_eq!(member_name("0"), "f0");
        assert_eq!(member_name("12"), "f12");
        assert_ne!(member_name("f0"), member_name("0"));
    }

    #[test]
    fn fault_codes_are_distinct_and_round_trip() {
        for (k, fault) in FaultCode::ALL.into_iter().enumerate() {
            assert_eq!(fault.code(), k as u32 + 1);
            assert_eq!(FaultCode::from_code(fault.code()), Some(fault));
        }
        assert_eq!(FaultCode::from_code(0), None);
        assert_eq!(FaultCode::from_code(12), None);
        let defines = fault_defines();
        assert!(defines.contains("#define PC_FAULT_INDEX 5u\n"));
        assert_eq!(defines.lines().count(), FaultCode::ALL.len() + 1);
    }
}
