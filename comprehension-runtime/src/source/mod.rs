//! `Source`: a collection whose size and elements can be read without iterating it.
//!
//! A generator `x <- e` can be flattened when the runtime can ask `e` for its length and its
//! `i`-th element in O(1) — the `Size` and `Fetch` of the translation. Ranges, slices, `Vec`s,
//! arrays and the rows of a [`Jagged`](crate::Jagged) are sources; `map`, `step_by` and `rev`
//! over a source are sources again (`adaptors`).

mod adaptors;
mod elements;
mod index_view;
mod range;

pub use adaptors::{apply, map, rev, step_by, zip, Map, Rev, StepBy, Zip};
pub use elements::{Borrowed, Collection, Elements, ElementsByRef, ElementsByValue, Owned};
pub use index_view::{IndexView, IndexViewItself, IndexViewSlice, Sliced};
pub use range::Integer;
use std::ops::Range;

/// A collection that knows its size and yields its `i`-th element by value.
///
/// Elements of slices, `Vec`s and arrays are copied out (`T: Copy`). A generator over a
/// collection of elements that are not `Copy` borrows them instead ([`Borrowed`], chosen where
/// the macro expands: see [`Elements`]).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be read by index, so it cannot be a generator of a comprehension",
    label = "not a parcomp `Source`",
    note = "generators are ranges (`a..b`, `a..=b` of an integer type or `char`), slices, `Vec`s, arrays, \
            `Jagged` arrays (rows) and `.map(f)`, `.step_by(k)`, `.rev()` of those",
    note = "to use an iterator, collect it into a `Vec` before the comprehension"
)]
pub trait Source {
    /// What one element is.
    type Item;

    /// Number of elements (the translation's `Size`).
    fn size(&self) -> usize;

    /// The element at `index` (the translation's `Fetch`); callers guarantee
    /// `index < self.size()`, implementations may panic otherwise.
    fn fetch(&self, index: usize) -> Self::Item;

    /// Elements `range` in order, as [`Source::fetch`] gives them; `range` lies within
    /// `0..self.size()`. Elements stored in a slice override it with the slice's iterator,
    /// bounds checked once for the run rather than once per element, so that a loop over a run
    /// compiles as a loop over a slice (unrolled and vectorised where rayon's would be).
    #[inline]
    fn run(&self, range: Range<usize>) -> impl Iterator<Item = Self::Item> {
        range.map(move |i| self.fetch(i))
    }

    /// The elements as one slice in memory, when they are stored so (slices, `Vec`s, arrays):
    /// a device then copies them in one piece instead of fetching them one by one.
    fn as_slice(&self) -> Option<&[Self::Item]> {
        None
    }

    /// The elements already in `backend`'s device memory (a [`DeviceVec`](crate::DeviceVec)):
    /// a device run reads them there, copying nothing. Opaque here (the device's own type, which
    /// the device downcasts), so that this layer names none above it.
    #[doc(hidden)]
    fn resident(&self, backend: crate::Backend) -> Option<&dyn std::any::Any> {
        let _ = backend;
        None
    }

    /// Whether the elements are kept in a device's memory, or go there on their first device
    /// run (a [`DeviceVec`](crate::DeviceVec)): a device reads them as its own columns, never
    /// as the host's records. Asked without uploading anything.
    #[doc(hidden)]
    fn kept_on_device(&self) -> bool {
        false
    }
}

impl<S: Source + ?Sized> Source for &S {
    type Item = S::Item;
    #[inline]
    fn size(&self) -> usize {
        (**self).size()
    }
    #[inline]
    fn fetch(&self, index: usize) -> S::Item {
        (**self).fetch(index)
    }
    #[inline]
    fn run(&self, range: Range<usize>) -> impl Iterator<Item = S::Item> {
        (**self).run(range)
    }
    fn as_slice(&self) -> Option<&[S::Item]> {
        (**self).as_slice()
    }
    fn resident(&self, backend: crate::Backend) -> Option<&dyn std::any::Any> {
        (**self).resident(backend)
    }
    fn kept_on_device(&self) -> bool {
        (**self).kept_on_device()
    }
}

impl<T: Copy> Source for [T] {
    type Item = T;
    #[inline]
    fn size(&self) -> usize {
        <[T]>::len(self)
    }
    #[inline]
    fn fetch(&self, index: usize) -> T {
        self[index]
    }
    #[inline]
    fn run(&self, range: Range<usize>) -> impl Iterator<Item = T> {
        self[range].iter().copied()
    }
    fn as_slice(&self) -> Option<&[T]> {
        Some(self)
    }
}

impl<T: Copy> Source for Vec<T> {
    type Item = T;
    #[inline]
    fn size(&self) -> usize {
        Vec::len(self)
    }
    #[inline]
    fn fetch(&self, index: usize) -> T {
        self[index]
    }
    #[inline]
    fn run(&self, range: Range<usize>) -> impl Iterator<Item = T> {
        self[range].iter().copied()
    }
    fn as_slice(&self) -> Option<&[T]> {
        Some(&self[..])
    }
}

impl<T: Copy, const N: usize> Source for [T; N] {
    type Item = T;
    #[inline]
    fn size(&self) -> usize {
        N
    }
    #[inline]
    fn fetch(&self, index: usize) -> T {
        self[index]
    }
    #[inline]
    fn run(&self, range: Range<usize>) -> impl Iterator<Item = T> {
        self[range].iter().copied()
    }
    fn as_slice(&self) -> Option<&[T]> {
        Some(&self[..])
    }
}

/// Contexts materialised by the runtime (a small level of the iteration space that is split
/// further, or the outer elements of a nested comprehension): yields clones.
pub(crate) struct Cloned<'a, C>(pub(crate) &'a [C]);

impl<C: Clone> Source for Cloned<'_, C> {
    type Item = C;
    #[inline]
    fn size(&self) -> usize {
        self.0.len()
    }
    #[inline]
    fn fetch(&self, index: usize) -> C {
        self.0[index].clone()
    }
}
