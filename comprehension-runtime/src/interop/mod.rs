//! The data users already have, read where it lies: each crate's arrays behind a cargo feature
//! of its name, as generators (`Source`) and as captures a device reads (`DynSlice`,
//! `DynJagged`); and, with CUDA, `DeviceVec`s from and into cudarc's `CudaSlice`s.

#[cfg(feature = "arrow")]
pub mod arrow;
#[cfg(feature = "cuda-api")]
mod cuda;
#[cfg(feature = "ndarray")]
mod ndarray;
