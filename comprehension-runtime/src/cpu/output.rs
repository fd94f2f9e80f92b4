//! Writing outputs straight into their final place.
//!
//! When the number of outputs of each chunk of the iteration space is known, the result `Vec`
//! is allocated once and every chunk fills its own disjoint slice of the spare capacity, in
//! parallel, with no intermediate buffer. When it is not known (filters), each chunk fills its
//! own buffer and the buffers are moved into the result in one parallel pass.

use crate::pipeline::Folder;
use crate::site::Site;
use std::mem::MaybeUninit;
use std::ops::ControlFlow;

/// Reserves room for exactly `additional` more elements, or panics naming the comprehension.
pub(crate) fn reserve<T>(out: &mut Vec<T>, additional: usize, site: &Site) {
    if out.try_reserve_exact(additional).is_err() {
        site.cannot_allocate(additional, "output elements");
    }
}

/// Cuts `slots` into consecutive pieces of the given lengths (which must sum to at most
/// `slots.len()`).
pub(crate) fn split_slots<T>(
    mut slots: &mut [MaybeUninit<T>],
    lengths: impl IntoIterator<Item = usize>,
) -> Vec<&mut [MaybeUninit<T>]> {
    let mut pieces = Vec::new();
    for len in lengths {
        let (piece, rest) = std::mem::take(&mut slots).split_at_mut(len);
        pieces.push(piece);
        slots = rest;
    }
    pieces
}

/// A [`Folder`] that fills a slice of uninitialised slots, front to back.
pub(crate) struct SliceWriter<'a, T> {
    slots: &'a mut [MaybeUninit<T>],
    filled: usize,
    extra: usize,
    site: &'static Site,
}

impl<'a, T> SliceWriter<'a, T> {
    pub(crate) fn new(slots: &'a mut [MaybeUninit<T>], site: &'static Site) -> Self {
        SliceWriter { slots, filled: 0, extra: 0, site }
    }

    /// Checks that the slice was filled exactly: the size computed before the run and the
    /// number of outputs must agree, else the result cannot be trusted.
    pub(crate) fn finish(self) {
        if self.filled + self.extra != self.slots.len() {
            self.site.size_changed(self.slots.len(), self.filled + self.extra);
        }
    }
}

impl<T> Folder<T> for SliceWriter<'_, T> {
    #[inline(always)]
    fn push(&mut self, item: T) -> ControlFlow<()> {
        match self.slots.get_mut(self.filled) {
            Some(slot) => {
                slot.write(item);
                self.filled += 1;
            }
            None => self.extra += 1,
        }
        ControlFlow::Continue(())
    }

    #[inline(always)]
    fn push_iter(&mut self, items: impl Iterator<Item = T>) -> ControlFlow<()> {
        let mut items = items;
        // A loop over the free slots and the items together: no check per item.
        let free = &mut self.slots[self.filled..];
        let mut written = 0;
        for (slot, item) in free.iter_mut().zip(&mut items) {
            slot.write(item);
            written += 1;
        }
        self.filled += written;
        // More outputs than the size computed before the run: counted, reported by `finish`.
        self.extra += items.count();
        ControlFlow::Continue(())
    }
}
