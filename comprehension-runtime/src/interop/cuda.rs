//! `DeviceVec`s from and into cudarc's `CudaSlice`s (the `cuda` feature), for code that already
//! holds its data on the GPU (its own cudarc kernels, or a library built on cudarc): one copy on
//! the GPU each way, none through the host (`gpu/cuda/interop.rs` makes the copies). The
//! slices' streams must be in parcomp's CUDA context (`parcomp::cuda::context()`).

use crate::gpu::cuda::interop::{buffer_from_slice, context, empty_slice, slice_from_buffer};
use crate::gpu::device::{DeviceError, DeviceErrorKind};
use crate::gpu::resident::Resident;
use crate::gpu::types::{ColumnLayout, DeviceType, TypeDesc};
use crate::{Backend, DeviceVec};
use cudarc::driver::{CudaSlice, CudaStream, DeviceRepr, ValidAsZeroBits};
use std::sync::Arc;

fn refused(message: String) -> DeviceError {
    DeviceError::new(DeviceErrorKind::Unavailable, message)
}

/// The bytes of `len` values of `T`, when `T` is stored on the device as it is in memory (a
/// primitive number): the only values a `CudaSlice<T>` and a `DeviceVec<T>` both hold alike.
fn raw_bytes<T: DeviceType>(len: usize) -> Result<usize, DeviceError> {
    match (T::desc(), T::RAW_SIZE) {
        (TypeDesc::Prim(_), Some(size)) if size == std::mem::size_of::<T>() => len
            .checked_mul(size)
            .ok_or_else(|| refused(format!("{len} values of {size} bytes overflow a usize"))),
        (desc, _) => Err(refused(format!(
            "a DeviceVec<{desc}> is not stored as a CudaSlice is: only numbers convert"
        ))),
    }
}

impl<T: DeviceType + DeviceRepr> DeviceVec<T> {
    /// The values of `slice`, copied on the GPU into a `DeviceVec` on the CUDA device (after
    /// the work queued on the slice's stream; waiting for the copy). An error when the slice's
    /// stream is not in parcomp's context (`parcomp::cuda::context()`), when `T` is not a
    /// number, or when there is no CUDA device.
    pub fn from_cuda_slice(slice: &CudaSlice<T>) -> Result<DeviceVec<T>, DeviceError> {
        let bytes = raw_bytes::<T>(slice.len())?;
        if slice.is_empty() {
            // Still an error without a device, as for any slice.
            context()?;
            return Ok(DeviceVec::on_host(Vec::new()));
        }
        let layout = ColumnLayout::new(&T::desc(), slice.len()).ok_or_else(|| {
            refused(format!("{} values overflow the device's sizes", slice.len()))
        })?;
        let buffer = buffer_from_slice(slice, bytes)?;
        Ok(DeviceVec::on_device(Resident::new(Backend::Cuda, buffer, layout, slice.len())))
    }

    /// The values, copied on the GPU into a new `CudaSlice` of `stream` (uploaded to the CUDA
    /// device first when they are not there; waiting for the copy). An error when `stream` is
    /// not in parcomp's context (`parcomp::cuda::context()`), when `T` is not a number, or when
    /// there is no CUDA device.
    pub fn to_cuda_slice(&self, stream: &Arc<CudaStream>) -> Result<CudaSlice<T>, DeviceError>
    where
        T: ValidAsZeroBits,
    {
        let bytes = raw_bytes::<T>(self.len())?;
        if self.is_empty() {
            return empty_slice(stream);
        }
        let resident = self.resident(Backend::Cuda).ok_or_else(|| {
            refused("the DeviceVec could not be copied to the CUDA device".into())
        })?;
        slice_from_buffer(&resident.buffer, self.len(), bytes, stream)
    }
}
