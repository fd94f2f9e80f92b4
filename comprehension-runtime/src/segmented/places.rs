//! [`Places`]: a buffer that several threads fill at places each of them owns — a radix pass's
//! scatter, `group by`'s placement of rows into their groups' columns.

/// A buffer's elements, written at distinct places by several threads, never read through it.
/// Its users show that no place is written twice and that every place is written before the
/// buffer's length covers it.
pub(crate) struct Places<T>(*mut T);

impl<T> Clone for Places<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Places<T> {}

// SAFETY: a `Places` only writes values of a `Send` type, each at a place no other thread
// writes (its users' promise, see `write`), and never reads them.
unsafe impl<T: Send> Send for Places<T> {}
// SAFETY: as for `Send`: shared between threads that each write places no other one writes.
unsafe impl<T: Send> Sync for Places<T> {}

impl<T> Places<T> {
    /// The places of the buffer starting at `start` (a `Vec`'s `as_mut_ptr`).
    pub(crate) fn new(start: *mut T) -> Self {
        Places(start)
    }

    /// Writes `value` at `place`.
    ///
    /// # Safety
    ///
    /// `place` is within the buffer's capacity and no other write or read of it happens.
    #[inline]
    pub(crate) unsafe fn write(self, place: usize, value: T) {
        // SAFETY: the caller's promise.
        unsafe { self.0.add(place).write(value) }
    }
}
