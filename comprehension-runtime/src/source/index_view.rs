//! How a comprehension's closures read a captured collection they only index (`v[i]`) or
//! measure (`v.len()`, `v.is_empty()`): as a slice, where the collection is one.
//!
//! A closure that indexes a captured `Vec` holds a reference to the `Vec`, and finds the
//! elements' address and number behind it on every use: the compiler cannot keep them in
//! registers across the loop, because the accumulators the loop writes might, for all it knows,
//! be that `Vec`'s header. A slice's address and length are the reference itself, held in the
//! closure, which nothing writes: they stay in registers. (Measured on `query_bench`'s "per
//! category count, sum, max": parcomp's CPU time against the hand-written loop's 1.26–1.29 →
//! 1.14–1.15.) The macro binds such a variable's view once, before the pipeline, and the
//! closures read the view.
//!
//! The view is chosen where the macro expands, by autoref dispatch as [`Elements`](super::Elements)
//! is: `(&IndexView(&(v))).index_view()` is a slice when `v` is a `Vec`, an array or a slice (or
//! a reference to one of those: a generator's [`Collection`]) or a boxed slice — whose indexing
//! and length are the slice's own — and `&v` itself otherwise (a `HashMap`, a `String`, a `Jagged`, a type of the user's),
//! which indexes and measures exactly as `v` does.

use super::Collection;

/// A captured collection, to be viewed; see the module documentation.
pub struct IndexView<'a, X: ?Sized>(pub &'a X);

/// A collection whose indexing and length are those of the slice of its elements: a generator's
/// [`Collection`] (a slice, a `Vec`, an array, references to them) or a boxed slice.
pub trait Sliced {
    /// The type of one element.
    type Element;
    /// The elements.
    fn sliced(&self) -> &[Self::Element];
}

impl<C: Collection + ?Sized> Sliced for C {
    type Element = C::Element;
    #[inline]
    fn sliced(&self) -> &[C::Element] {
        self.as_elements()
    }
}

impl<T> Sliced for Box<[T]> {
    type Element = T;
    #[inline]
    fn sliced(&self) -> &[T] {
        self
    }
}

/// The view of a [`Sliced`] collection: its slice.
pub trait IndexViewSlice<'a> {
    /// The type of one element.
    type Element: 'a;
    /// The slice.
    fn index_view(self) -> &'a [Self::Element];
}

impl<'a, X: Sliced + ?Sized> IndexViewSlice<'a> for &IndexView<'a, X> {
    type Element = X::Element;
    #[inline]
    fn index_view(self) -> &'a [X::Element] {
        self.0.sliced()
    }
}

/// The view of any other collection: the collection itself.
pub trait IndexViewItself<'a, X: ?Sized> {
    /// The collection.
    fn index_view(self) -> &'a X;
}

impl<'a, X: ?Sized> IndexViewItself<'a, X> for &&IndexView<'a, X> {
    #[inline]
    fn index_view(self) -> &'a X {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn slices_where_the_collection_is_one_and_the_collection_itself_elsewhere() {
        let v = vec![1u8, 2, 3];
        let view: &[u8] = (&IndexView(&v)).index_view();
        assert_eq!((view[1], view.len()), (2, 3));
        let r = &v;
        let view: &[u8] = (&IndexView(&r)).index_view();
        assert_eq!(view[2], 3);
        let a = [1.5f64, 2.5];
        let view: &[f64] = (&IndexView(&a)).index_view();
        assert_eq!(view[..].len(), 2);
        let b: Box<[u16]> = vec![7, 8].into_boxed_slice();
        let view: &[u16] = (&IndexView(&b)).index_view();
        assert!(!view.is_empty());
        let m: HashMap<&str, i32> = [("a", 1)].into_iter().collect();
        let view: &HashMap<&str, i32> = (&IndexView(&m)).index_view();
        assert_eq!(view["a"], 1);
        let s = String::from("héllo");
        let view: &String = (&IndexView(&s)).index_view();
        assert_eq!(&view[0..1], "h");
    }
}
