//! Operator conversion: Rust's operators and methods as the dialect's operations.
//!
//! Every operation is named after the class of its operands, `PC_OP(add, PC_C3)(a, b)`, and
//! defined by `scalar.h` for the primitives (with Rust's semantics: wrapping arithmetic,
//! truncating division that faults on zero, masked shifts, saturating float-to-int casts) and by
//! the runtime's type prelude for tuples (`eq`, `lt`, ... in lexicographic order). Operations
//! that can fault take the fault word and the number of the check first.

use super::types::class;
use crate::plan::kernel_ir::{BinOp, Class, UnOp};

/// `PC_OP(op, C)`.
pub fn op(name: &str, c: Class) -> String {
    format!("PC_OP({name}, {})", class(c))
}

/// A binary operation on operands of class `operands`.
pub fn binary(operator: BinOp, operands: Class, site: Option<String>, a: &str, b: &str) -> String {
    let f = op(operator.op_name(), operands);
    match site {
        Some(site) => format!("{f}(pc_fault, {site}, {a}, {b})"),
        None => format!("{f}({a}, {b})"),
    }
}

/// A unary operation.
pub fn unary(operator: UnOp, operand: Class, a: &str) -> String {
    let name = match operator {
        UnOp::Neg => "neg",
        UnOp::Not => "not",
    };
    format!("{}({a})", op(name, operand))
}

/// `x as T`.
pub fn cast(from: Class, to: Class, a: &str) -> String {
    format!("PC_CAST({}, {})({a})", class(from), class(to))
}

/// A shift amount (any integer type in Rust) as the `pc_u32` the dialect's shifts take.
pub fn shift_amount(from: Class, a: &str) -> String {
    format!("PC_CAST({}, u32)({a})", class(from))
}
