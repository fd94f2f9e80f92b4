//! The writers of the plan: `rust` (the chain of runtime calls, with the device half beside it)
//! and `kernel` (the comprehension's kernels, in parcomp's C dialect).

pub mod kernel;
pub mod rust;
