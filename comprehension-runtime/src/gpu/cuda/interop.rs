//! The CUDA device's side of the conversions between a `DeviceVec` and cudarc's `CudaSlice`
//! (`interop/cuda.rs`): the context parcomp's device runs in, which the user's streams are made
//! from, and one copy on the GPU each way between a slice and a device buffer, none through
//! the host.

use super::{api, memory_of, opened, CudaDevice};
use crate::gpu::device::{Buffer, Device, DeviceError, DeviceErrorKind};
use cudarc::driver::{
    result, sys, CudaContext, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr,
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

/// The device, when `stream` belongs to its context.
fn device_of(stream: &CudaStream) -> Result<&'static CudaDevice, DeviceError> {
    let device = device()?;
    if stream.context().cu_ctx() == device.context.cu_ctx() {
        Ok(device)
    } else {
        Err(DeviceError::new(
            DeviceErrorKind::Unavailable,
            "the CudaSlice's stream belongs to another CUDA context than parcomp's device: make \
             its stream from `parcomp::cuda::context()`",
        ))
    }
}

/// Copies `bytes` bytes from `src` to `dst` on the GPU, after the work queued on `stream` (the
/// slice's), and waits for the copy (the context's synchronization) before returning.
///
/// # Safety
///
/// `src` and `dst` must be distinct allocations of the device's context, each with at least
/// `bytes` bytes, neither freed nor written by anything else until this returns.
unsafe fn copy_on_gpu(
    device: &CudaDevice,
    stream: &CudaStream,
    dst: sys::CUdeviceptr,
    src: sys::CUdeviceptr,
    bytes: usize,
) -> Result<(), DeviceError> {
    stream.synchronize().map_err(|e| api(DeviceErrorKind::Transfer, "cuStreamSynchronize", e))?;
    device.bind()?;
    // SAFETY: the ranges are valid, distinct and untouched by others (the caller's contract);
    // the work queued before on `stream` has ended (synchronized above), and the context's
    // synchronization below waits for the copy, which no host-side wait of cuMemcpyDtoD does.
    unsafe { result::memcpy_dtod_sync(dst, src, bytes) }
        .map_err(|e| api(DeviceErrorKind::Transfer, "cuMemcpyDtoD", e))?;
    device.finish()
}

/// A new buffer of the device holding the first `bytes` bytes of `slice`, copied on the GPU
/// after the work queued on the slice's stream; the copy has ended when this returns.
pub(crate) fn buffer_from_slice<T: DeviceRepr>(
    slice: &CudaSlice<T>,
    bytes: usize,
) -> Result<Buffer, DeviceError> {
    assert!(bytes <= slice.len() * std::mem::size_of::<T>(), "a copy past the slice's end");
    let stream = slice.stream();
    let device = device_of(stream)?;
    let buffer = device.alloc(bytes)?;
    let dst = memory_of(&buffer)?.ptr;
    let (src, _read) = slice.device_ptr(stream);
    // SAFETY: both ranges are `bytes` long (the slice's, checked above; the buffer was just
    // allocated with them), distinct, and untouched by others: the buffer is ours alone, and
    // the slice is borrowed until this returns.
    unsafe { copy_on_gpu(device, stream, dst, src, bytes) }?;
    Ok(buffer)
}

/// A new slice of `len` values of `T` on `stream`, holding the first `bytes` bytes of
/// `buffer` (one of the device's), copied on the GPU; the copy has ended when this returns.
pub(crate) fn slice_from_buffer<T: DeviceRepr + ValidAsZeroBits>(
    buffer: &Buffer,
    len: usize,
    bytes: usize,
    stream: &Arc<CudaStream>,
) -> Result<CudaSlice<T>, DeviceError> {
    assert!(bytes <= len * std::mem::size_of::<T>(), "a copy past the slice's end");
    let device = device_of(stream)?;
    buffer.check_range(0, bytes)?;
    let src = memory_of(buffer)?.ptr;
    let mut out =
        stream.alloc_zeros::<T>(len).map_err(|e| api(DeviceErrorKind::Alloc, "a CudaSlice", e))?;
    {
        let (dst, _written) = out.device_ptr_mut(stream);
        // SAFETY: both ranges are `bytes` long (the buffer's checked above, the slice's by the
        // assertion), distinct, and untouched by others: the slice is new and not handed out
        // yet (its zeroing, queued on `stream`, ends before the copy), and a DeviceVec's buffer
        // is written by no one once made.
        unsafe { copy_on_gpu(device, stream, dst, src, bytes) }?;
    }
    Ok(out)
}

/// A slice of no values on `stream` (which must be in parcomp's context).
pub(crate) fn empty_slice<T: DeviceRepr>(
    stream: &Arc<CudaStream>,
) -> Result<CudaSlice<T>, DeviceError> {
    device_of(stream)?;
    stream.null::<T>().map_err(|e| api(DeviceErrorKind::Alloc, "a CudaSlice", e))
}
