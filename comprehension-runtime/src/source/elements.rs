//! How a generator reads a collection: its elements by value when they are `Copy`, borrowed
//! (`&T`) when they are not — as `for x in &v` borrows.
//!
//! The choice is made where the macro expands, where the collection's type is known, by autoref
//! dispatch: the emitted code calls `(&Elements(&(xs))).elements()`. Method resolution tries the
//! receiver `&Elements<X>` first, which [`ElementsByValue`] answers when `X` is a [`Source`]
//! (slices of `Copy` elements, ranges, `Jagged` rows ... — exactly what generators read before,
//! with the same element type); otherwise it takes a reference, which [`ElementsByRef`] answers
//! for any [`Collection`]: a [`Borrowed`] source whose elements are `&T`.

use super::Source;

/// A collection a generator reads; see the module documentation.
pub struct Elements<X>(pub X);

/// The collection itself when it is a [`Source`] (elements by value).
pub trait ElementsByValue {
    /// The source.
    type Source;
    /// The collection as the generator reads it.
    fn elements(self) -> Self::Source;
}

impl<X: Source + Copy> ElementsByValue for &Elements<X> {
    type Source = X;
    #[inline]
    fn elements(self) -> X {
        self.0
    }
}

/// A borrowed [`Collection`] whose elements are not `Copy`: they are yielded as `&T`.
pub trait ElementsByRef<'a, C: ?Sized> {
    /// The collection as the generator reads it.
    fn elements(self) -> Borrowed<'a, <C as Collection>::Element>
    where
        C: Collection;
}

impl<'a, C: ?Sized> ElementsByRef<'a, C> for &&Elements<&'a C> {
    #[inline]
    fn elements(self) -> Borrowed<'a, <C as Collection>::Element>
    where
        C: Collection,
    {
        Borrowed(self.0.as_elements())
    }
}

/// A collection whose elements lie in one slice: what a generator can borrow elements from.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be read by index, so it cannot be a generator of a comprehension",
    label = "not a parcomp `Source`",
    note = "generators are ranges (`a..b`, `a..=b` of an integer type or `char`), slices, `Vec`s, \
            arrays, `Jagged` arrays (rows) and `.map(f)`, `.step_by(k)`, `.rev()` of those",
    note = "to use an iterator, collect it into a `Vec` before the comprehension"
)]
pub trait Collection {
    /// The type of one element.
    type Element;
    /// The elements.
    fn as_elements(&self) -> &[Self::Element];
}

impl<T> Collection for [T] {
    type Element = T;
    fn as_elements(&self) -> &[T] {
        self
    }
}

impl<T> Collection for Vec<T> {
    type Element = T;
    fn as_elements(&self) -> &[T] {
        self
    }
}

impl<T, const N: usize> Collection for [T; N] {
    type Element = T;
    fn as_elements(&self) -> &[T] {
        self
    }
}

impl<C: Collection + ?Sized> Collection for &C {
    type Element = C::Element;
    fn as_elements(&self) -> &[C::Element] {
        (**self).as_elements()
    }
}

/// The elements of a slice, borrowed: `&T` (for elements that are not `Copy`).
pub struct Borrowed<'a, T>(pub &'a [T]);

impl<T> Clone for Borrowed<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Borrowed<'_, T> {}

impl<'a, T> Source for Borrowed<'a, T> {
    type Item = &'a T;
    #[inline]
    fn size(&self) -> usize {
        self.0.len()
    }
    #[inline]
    fn fetch(&self, index: usize) -> &'a T {
        &self.0[index]
    }
    #[inline]
    fn run(&self, range: std::ops::Range<usize>) -> impl Iterator<Item = &'a T> {
        self.0[range].iter()
    }
}

/// The elements of a slice, cloned: what the part of a comprehension after an `order by`,
/// `take` or `skip` reads, so that its variables keep their types.
pub struct Owned<'a, T>(pub &'a [T]);

impl<T> Clone for Owned<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Owned<'_, T> {}

impl<T: Clone> Source for Owned<'_, T> {
    type Item = T;
    #[inline]
    fn size(&self) -> usize {
        self.0.len()
    }
    #[inline]
    fn fetch(&self, index: usize) -> T {
        self.0[index].clone()
    }
    #[inline]
    fn run(&self, range: std::ops::Range<usize>) -> impl Iterator<Item = T> {
        self.0[range].iter().cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_elements_by_value_others_borrowed() {
        let numbers = vec![1, 2, 3];
        let source = (&Elements(&numbers)).elements();
        assert_eq!(source.fetch(1), 2);
        let words = vec![String::from("a"), String::from("bc")];
        let source = (&Elements(&words)).elements();
        let second: &String = source.fetch(1);
        assert_eq!(second, "bc");
        assert_eq!(source.size(), 2);
        let slice: &[String] = &words;
        assert_eq!((&Elements(&slice)).elements().fetch(0), "a");
    }
}
