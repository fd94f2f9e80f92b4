//! Values kept in a device's memory between runs: the storage of a [`DeviceVec`] on a device.
//!
//! [`DeviceVec`]: crate::DeviceVec

use super::device::{Buffer, DeviceError};
use super::types::ColumnLayout;
use crate::backend::Backend;
use std::cell::Cell;

/// The columns of `len` values in one device buffer, laid out as `layout` (capacity `len`),
/// owned by the value that keeps them (freed with it).
pub struct Resident {
    pub(crate) backend: Backend,
    pub(crate) buffer: std::mem::ManuallyDrop<Buffer>,
    pub(crate) layout: ColumnLayout,
    pub(crate) len: usize,
}

impl Drop for Resident {
    /// The buffer goes to the device's arena, for the next run (an iteration that replaces one
    /// `DeviceVec` by the next allocates nothing). No queue uses it: runs finish their queues
    /// before they return, and the values are dropped only when nothing borrows them.
    fn drop(&mut self) {
        // SAFETY: taken once, here; `self` is not used after.
        let buffer = unsafe { std::mem::ManuallyDrop::take(&mut self.buffer) };
        match super::device(self.backend) {
            Ok(device) => super::arena::Arena::of(device).recycle(buffer),
            Err(_) => drop(buffer),
        }
    }
}

impl Resident {
    /// Values a run left in `buffer`.
    pub(crate) fn new(backend: Backend, buffer: Buffer, layout: ColumnLayout, len: usize) -> Self {
        Resident { backend, buffer: std::mem::ManuallyDrop::new(buffer), layout, len }
    }
}

impl std::fmt::Debug for Resident {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Resident({} values on {})", self.len, self.backend)
    }
}

thread_local! {
    /// Bytes copied to a device by uploads of resident values on this thread (counted by the
    /// run that caused them).
    static UPLOADED: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

/// Copies and bytes uploaded to resident storage on this thread so far.
pub(crate) fn uploaded() -> (u64, u64) {
    UPLOADED.with(Cell::get)
}

impl Resident {
    /// Copies `bytes` (the columns of `len` values laid out as `layout`) into a new buffer of
    /// `backend`'s device, and waits for the copy.
    pub(crate) fn upload(
        backend: Backend,
        bytes: &[u8],
        layout: ColumnLayout,
        len: usize,
    ) -> Result<Resident, DeviceError> {
        let device = super::device(backend)?;
        let buffer = device.alloc(layout.bytes.max(8))?;
        device.write(&buffer, 0, bytes)?;
        UPLOADED.with(|u| {
            let (copies, total) = u.get();
            u.set((copies + 1, total + bytes.len() as u64));
        });
        Ok(Resident::new(backend, buffer, layout, len))
    }

    /// The columns' bytes, read back from the device (one copy, waiting for it).
    pub(crate) fn download(&self) -> Result<Vec<u8>, DeviceError> {
        let device = super::device(self.backend)?;
        let mut bytes = vec![0u8; self.layout.bytes];
        device.read(&self.buffer, 0, &mut bytes)?;
        Ok(bytes)
    }

    /// The backend whose device holds the values.
    pub fn backend(&self) -> Backend {
        self.backend
    }
}
