//! Names a Rust variable may legally have that the generated kernels must not use as names:
//! the keywords and reserved identifiers of C, OpenCL C and CUDA C++, the built-in functions
//! and macros a kernel calls, and the prefixes of parcomp's own names. A variable with such a
//! name is renamed in the kernel source (`int` becomes `int_1`).

/// Reserved in C99/C11, OpenCL C, or C++ (CUDA), and not a Rust keyword (those cannot be
/// variable names anyway).
pub const RESERVED: &[&str] = &[
    // C
    "auto",
    "case",
    "char",
    "const",
    "default",
    "do",
    "double",
    "float",
    "goto",
    "inline",
    "int",
    "long",
    "register",
    "restrict",
    "short",
    "signed",
    "sizeof",
    "switch",
    "typedef",
    "union",
    "unsigned",
    "void",
    "volatile",
    "_Alignas",
    "_Alignof",
    "_Atomic",
    "_Bool",
    "_Complex",
    "_Generic",
    "_Imaginary",
    "_Noreturn",
    "_Static_assert",
    "_Thread_local",
    "bool",
    "true",
    "false",
    "NULL",
    // OpenCL C
    "kernel",
    "__kernel",
    "global",
    "__global",
    "local",
    "__local",
    "constant",
    "__constant",
    "private",
    "__private",
    "generic",
    "__generic",
    "read_only",
    "__read_only",
    "write_only",
    "__write_only",
    "read_write",
    "__read_write",
    "uniform",
    "pipe",
    "half",
    "uchar",
    "ushort",
    "uint",
    "ulong",
    "size_t",
    "ptrdiff_t",
    "intptr_t",
    "uintptr_t",
    "image1d_t",
    "image2d_t",
    "image3d_t",
    "sampler_t",
    "event_t",
    "char2",
    "char4",
    "int2",
    "int4",
    "float2",
    "float4",
    "double2",
    "double4",
    "vec_type_hint",
    "reqd_work_group_size",
    "work_group_size_hint",
    "get_global_id",
    "get_local_id",
    "get_group_id",
    "get_local_size",
    "get_global_size",
    "get_num_groups",
    "barrier",
    "mem_fence",
    "atomic_cmpxchg",
    "atomic_add",
    "printf",
    "CLK_LOCAL_MEM_FENCE",
    "CLK_GLOBAL_MEM_FENCE",
    // C++ and CUDA
    "alignas",
    "alignof",
    "and",
    "and_eq",
    "asm",
    "bitand",
    "bitor",
    "catch",
    "char8_t",
    "char16_t",
    "char32_t",
    "class",
    "compl",
    "concept",
    "const_cast",
    "consteval",
    "constexpr",
    "constinit",
    "co_await",
    "co_return",
    "co_yield",
    "decltype",
    "delete",
    "dynamic_cast",
    "explicit",
    "export",
    "friend",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "not",
    "not_eq",
    "nullptr",
    "operator",
    "or",
    "or_eq",
    "protected",
    "public",
    "reinterpret_cast",
    "requires",
    "static_assert",
    "static_cast",
    "template",
    "this",
    "thread_local",
    "throw",
    "try",
    "typeid",
    "typename",
    "using",
    "virtual",
    "wchar_t",
    "xor",
    "xor_eq",
    "__global__",
    "__device__",
    "__host__",
    "__shared__",
    "__constant__",
    "__restrict__",
    "__syncthreads",
    "threadIdx",
    "blockIdx",
    "blockDim",
    "gridDim",
    "warpSize",
    "atomicCAS",
    "atomicAdd",
    // The C library's math functions, which the dialect calls by name.
    "abs",
    "fabs",
    "sqrt",
    "cbrt",
    "exp",
    "exp2",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "pow",
    "pown",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "atan2",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "acosh",
    "atanh",
    "floor",
    "ceil",
    "round",
    "rint",
    "trunc",
    "fmod",
    "fmin",
    "fmax",
    "fma",
    "hypot",
    "copysign",
    "isnan",
    "isinf",
    "isfinite",
    "signbit",
    "min",
    "max",
    "clamp",
    "select",
    "popcount",
    "clz",
    "rotate",
    "mad",
    "nan",
    "INFINITY",
    "NAN",
];

/// Whether `name` may not be a name in a kernel as it is.
pub fn is_reserved(name: &str) -> bool {
    RESERVED.contains(&name)
        // parcomp's own names: pc_*, PC_*, pcf_*.
        || name.get(..2).is_some_and(|p| p.eq_ignore_ascii_case("pc"))
        // Reserved to the C implementation: `_` followed by an upper-case letter or `_`.
        || name.starts_with("__")
        || (name.starts_with('_') && name[1..].starts_with(|c: char| c.is_ascii_uppercase()))
        // C identifiers are ASCII.
        || !name.is_ascii()
}

/// `name` made into a C identifier: non-ASCII characters spelled out as `_uXXXX`.
pub fn ascii(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            out.push(c);
        } else {
            out.push_str(&format!("_u{:04x}", c as u32));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_names() {
        for name in [
            "int", "float", "half", "global", "local", "kernel", "auto", "register", "signed",
            "unsigned", "char", "restrict", "pc_fault", "PC_C3", "__x", "_X",
        ] {
            assert!(is_reserved(name), "{name}");
        }
        for name in ["x", "y2", "count", "_x", "i"] {
            assert!(!is_reserved(name), "{name}");
        }
        assert_eq!(ascii("größe"), "gr_u00f6_u00dfe");
    }
}
