//! `DeviceVec`s from and into cudarc's `CudaSlice`s, for code that already holds its data on
//! the GPU (its own cudarc kernels, or a library built on cudarc): one copy on the GPU each way,
//! none through the host. Both sides must be in the context parcomp's CUDA device runs in,
//! [`context`], which the user's streams are made from.

use super::{api, memory_of, opened, CudaDevice};
use crate::gpu::device::{Device, DeviceError, DeviceErrorKind};
use crate::gpu::resident::Resident;
use crate::gpu::types::{ColumnLayout, DeviceType, TypeDesc};
use crate::{Backend, DeviceVec};
use cudarc::driver::{
    result, CudaContext, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr,
    ValidAsZeroBits,
};
use std::sync::Arc;

/// The CUDA context parcomp's device runs in (the primary context of `PARCOMP_CUDA_DEVICE`,
/// opening the device on first use): make the streams whose slices go into and out of
/// `DeviceVec`s with it (`context()?.default_stream()`, `new_stream()`).
pub fn context() -> Result<Arc<CudaContext>, DeviceError> {
    Ok(device()?.context.clone())
}

fn device() -> Result<&'static CudaDevice, DeviceError> {
    opened().as_ref().map_err(Clone::clone)
}

/// An error of a conversion between a `DeviceVec` and a `CudaSlice`.
fn refused(message: String) -> DeviceError {
    DeviceError::new(DeviceErrorKind::Unavailable, message)
}

/// Checks that `stream` belongs to parcomp's context.
fn same_context(device: &CudaDevice, stream: &CudaStream) -> Result<(), DeviceError> {
    if stream.context().cu_ctx() == device.context.cu_ctx() {
        Ok(())
    } else {
        Err(refused(
            "the CudaSlice's stream belongs to another CUDA context than parcomp's device: make \
             its stream from `parcomp::cuda::context()`"
                .into(),
        ))
    }
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
    /// The values of `slice`, copied on the GPU into a `DeviceVec` on the CUDA device (waiting
    /// for the work queued on the slice's stream first, and for the copy). An error when the
    /// slice's stream is not in parcomp's [`context`], when `T` is not a number, or when there
    /// is no CUDA device.
    pub fn from_cuda_slice(slice: &CudaSlice<T>) -> Result<DeviceVec<T>, DeviceError> {
        let device = device()?;
        let stream = slice.stream();
        same_context(device, stream)?;
        let bytes = raw_bytes::<T>(slice.len())?;
        if slice.is_empty() {
            return Ok(DeviceVec::on_host(Vec::new()));
        }
        let layout = ColumnLayout::new(&T::desc(), slice.len()).ok_or_else(|| {
            refused(format!("{} values overflow the device's sizes", slice.len()))
        })?;
        stream
            .synchronize()
            .map_err(|e| api(DeviceErrorKind::Transfer, "cuStreamSynchronize", e))?;
        let buffer = device.alloc(bytes)?;
        let dst = memory_of(&buffer)?.ptr;
        let (src, _read) = slice.device_ptr(stream);
        device.bind()?;
        // SAFETY: both ranges are `bytes` long: the slice holds `len` values of `T`, and the
        // buffer was just allocated with `bytes`; they are distinct allocations. The slice's
        // stream has finished its work (synchronized above); the context's synchronization
        // below waits for the copy before the slice can be written or freed again (it is
        // borrowed until this returns) and before any run reads the buffer.
        unsafe { result::memcpy_dtod_sync(dst, src, bytes) }
            .map_err(|e| api(DeviceErrorKind::Transfer, "cuMemcpyDtoD", e))?;
        device.finish()?;
        Ok(DeviceVec::on_device(Resident::new(Backend::Cuda, buffer, layout, slice.len())))
    }

    /// The values, copied on the GPU into a new `CudaSlice` of `stream` (uploaded to the CUDA
    /// device first when they are not there; waiting for the copy). An error when `stream` is
    /// not in parcomp's [`context`], when `T` is not a number, or when there is no CUDA device.
    pub fn to_cuda_slice(&self, stream: &Arc<CudaStream>) -> Result<CudaSlice<T>, DeviceError>
    where
        T: ValidAsZeroBits,
    {
        let device = device()?;
        same_context(device, stream)?;
        let bytes = raw_bytes::<T>(self.len())?;
        let alloc = |e| api(DeviceErrorKind::Alloc, "a CudaSlice", e);
        if self.is_empty() {
            return stream.null::<T>().map_err(alloc);
        }
        let resident = self.resident(Backend::Cuda).ok_or_else(|| {
            refused("the DeviceVec could not be copied to the CUDA device".into())
        })?;
        let src = memory_of(&resident.buffer)?.ptr;
        let mut out = stream.alloc_zeros::<T>(self.len()).map_err(alloc)?;
        stream
            .synchronize()
            .map_err(|e| api(DeviceErrorKind::Transfer, "cuStreamSynchronize", e))?;
        {
            let (dst, _written) = out.device_ptr_mut(stream);
            device.bind()?;
            // SAFETY: both ranges are `bytes` long (`len` values of `T` each side, `T` stored
            // as it is in memory: `raw_bytes`); distinct allocations; the new slice's zeroing
            // has finished (synchronized above), and the context's synchronization below waits
            // for the copy before the slice is handed out.
            unsafe { result::memcpy_dtod_sync(dst, src, bytes) }
                .map_err(|e| api(DeviceErrorKind::Transfer, "cuMemcpyDtoD", e))?;
            device.finish()?;
        }
        Ok(out)
    }
}
