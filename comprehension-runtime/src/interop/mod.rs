//! The data users already have, read where it lies: each crate's arrays behind a cargo feature
//! of its name, as generators (`Source`) and as captures a device reads (`DynSlice`,
//! `DynJagged`).

#[cfg(feature = "arrow")]
pub mod arrow;
#[cfg(feature = "ndarray")]
mod ndarray;
