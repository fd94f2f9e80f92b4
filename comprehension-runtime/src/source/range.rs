//! Ranges as sources: `a..b` and `a..=b` of every primitive integer type and of `char`.
//!
//! A range with `end <= start` is empty. The length is computed without overflow (for example
//! `i32::MIN..i32::MAX`); a range longer than `usize::MAX` (possible only for 128-bit types, or
//! 64-bit types on 32-bit targets) panics with a clear message rather than wrapping.

use super::Source;
use std::ops::{Range, RangeInclusive};

#[cold]
#[track_caller]
fn too_long(range: &dyn std::fmt::Debug) -> ! {
    panic!("parcomp: the range {range:?} has more elements than usize can count")
}

/// The primitive integer types, which ranges in generators may range over.
///
/// One generic `Source` impl for `Range<T>` (rather than one per type) lets the compiler infer
/// the type of an unsuffixed literal range from how its elements are used, exactly as in a
/// `for` loop.
pub trait Integer: Copy + PartialOrd + std::fmt::Debug + sealed::Sealed {
    /// `end - start` as a `usize` when `end > start` (`None` if it does not fit).
    fn span(start: Self, end: Self) -> Option<usize>;
    /// `self + index`, for an `index` that keeps the result inside the range.
    fn offset(self, index: usize) -> Self;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! integers {
    ($($t:ty),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl Integer for $t {
            #[inline]
            fn span(start: $t, end: $t) -> Option<usize> {
                usize::try_from(end.abs_diff(start)).ok()
            }
            #[inline]
            fn offset(self, index: usize) -> $t {
                // `index` is below the span, which fits the unsigned type; modular addition of
                // the truncated index gives the exact element because it lies inside the range.
                self.wrapping_add(index as $t)
            }
        }
    )*};
}

integers!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize);

impl<T: Integer> Source for Range<T> {
    type Item = T;
    #[inline]
    fn size(&self) -> usize {
        if self.end <= self.start {
            return 0;
        }
        T::span(self.start, self.end).unwrap_or_else(|| too_long(self))
    }
    #[inline]
    fn fetch(&self, index: usize) -> T {
        self.start.offset(index)
    }
}

impl<T: Integer> Source for RangeInclusive<T> {
    type Item = T;
    #[inline]
    fn size(&self) -> usize {
        if self.is_empty() {
            return 0;
        }
        T::span(*self.start(), *self.end())
            .and_then(|n| n.checked_add(1))
            .unwrap_or_else(|| too_long(self))
    }
    #[inline]
    fn fetch(&self, index: usize) -> T {
        self.start().offset(index)
    }
}

/// The `char`s from `start` (included) to `end` (excluded), skipping the surrogate code points
/// `U+D800..=U+DFFF`, which are not `char`s: as `Range<char>`'s iterator.
fn char_span(start: char, end: char) -> usize {
    let (s, e) = (start as u32, end as u32);
    if e <= s {
        return 0;
    }
    let gap = if s < 0xD800 && e > 0xDFFF { 0x800 } else { 0 };
    (e - s - gap) as usize
}

/// The `char` `index` places after `start`, skipping the surrogates.
#[inline]
fn char_offset(start: char, index: usize) -> char {
    let mut code = start as u32 + index as u32;
    if (start as u32) < 0xD800 && code >= 0xD800 {
        code += 0x800;
    }
    // Inside the range by the caller's contract, so `code` is a `char` (not a surrogate, not
    // above U+10FFFF); the fallback is never taken.
    char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER)
}

impl Source for Range<char> {
    type Item = char;
    #[inline]
    fn size(&self) -> usize {
        char_span(self.start, self.end)
    }
    #[inline]
    fn fetch(&self, index: usize) -> char {
        char_offset(self.start, index)
    }
}

impl Source for RangeInclusive<char> {
    type Item = char;
    #[inline]
    fn size(&self) -> usize {
        if self.is_empty() {
            return 0;
        }
        char_span(*self.start(), *self.end()) + 1
    }
    #[inline]
    fn fetch(&self, index: usize) -> char {
        char_offset(*self.start(), index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::reversed_empty_ranges)]
    fn lengths_and_elements() {
        assert_eq!(Source::size(&(3..7)), 4);
        assert_eq!(Source::size(&(7..3)), 0);
        assert_eq!(Source::size(&(5..5)), 0);
        assert_eq!(Source::size(&(3..=7)), 5);
        assert_eq!(Source::size(&(7..=3)), 0);
        assert_eq!(Source::size(&(i32::MIN..i32::MAX)), u32::MAX as usize);
        assert_eq!(Source::size(&(i8::MIN..=i8::MAX)), 256);
        assert_eq!(Source::fetch(&(i8::MIN..=i8::MAX), 255), i8::MAX);
        assert_eq!(Source::fetch(&(-128i8..127), 200), 72);
        assert_eq!(Source::fetch(&(-5i64..5), 0), -5);
        assert_eq!(Source::size(&(0u64..=u64::MAX - 1)), usize::MAX);
    }

    #[test]
    #[allow(clippy::reversed_empty_ranges)]
    fn char_ranges_are_those_of_the_iterators() {
        let ranges =
            [('a', 'f'), ('f', 'a'), ('\u{D7FE}', '\u{E002}'), ('\0', char::MAX), ('x', 'x')];
        for (a, b) in ranges {
            let r = a..b;
            let expected: Vec<char> = r.clone().collect();
            assert_eq!(Source::size(&r), expected.len(), "{r:?}");
            for (i, c) in expected.iter().enumerate().step_by(997) {
                assert_eq!(Source::fetch(&r, i), *c, "{r:?} at {i}");
            }
            let r = a..=b;
            let expected: Vec<char> = r.clone().collect();
            assert_eq!(Source::size(&r), expected.len(), "{r:?}");
            if let Some(last) = expected.last() {
                assert_eq!(Source::fetch(&r, expected.len() - 1), *last, "{r:?}");
            }
            for (i, c) in expected.iter().enumerate().step_by(991) {
                assert_eq!(Source::fetch(&r, i), *c, "{r:?} at {i}");
            }
        }
    }

    #[test]
    #[should_panic(expected = "more elements than usize can count")]
    fn too_long_inclusive_range_panics() {
        Source::size(&(0u64..=u64::MAX));
    }

    #[test]
    #[should_panic(expected = "more elements than usize can count")]
    fn too_long_i128_range_panics() {
        Source::size(&(0i128..i128::MAX));
    }
}
