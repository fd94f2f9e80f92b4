//! Type conversion: how the kernels name the type of a class, and write a literal of one.
//!
//! A class is a macro, `PC_C3`, that the runtime defines as a type tag (`i32`, `f64`, `tup0`)
//! once it has solved the classes; `PC_T(PC_C3)` is then the C type and `PC_OP(add, PC_C3)`
//! the operation. So the source is written once, before any type is known.

use crate::plan::kernel_ir::{Class, Literal};

/// The macro naming a class.
pub fn class(c: Class) -> String {
    format!("PC_C{}", c.0)
}

/// The C type of a class.
pub fn ty(c: Class) -> String {
    format!("PC_T({})", class(c))
}

/// The load function of a class's columns: `PC_LOAD(PC_C3)(base, cap, index)`.
pub fn load(c: Class) -> String {
    format!("PC_LOAD({})", class(c))
}

/// The store function of a class's columns: `PC_STORE(PC_C3)(base, cap, index, value)`.
pub fn store(c: Class) -> String {
    format!("PC_STORE({})", class(c))
}

/// A literal of class `c`: integers through `PC_ILIT` (an unsigned constant converted to the
/// class's type), floats through `PC_FLIT` (read directly as `f32` or `f64`, never rounded
/// twice), booleans as 0 or 1.
pub fn literal(lit: &Literal, c: Class) -> String {
    match lit {
        Literal::Int(v) => format!("PC_ILIT({}, {v})", class(c)),
        Literal::Float(text) => format!("PC_FLIT({}, {text})", class(c)),
        Literal::Bool(b) => format!("((pc_bool){})", u8::from(*b)),
    }
}
