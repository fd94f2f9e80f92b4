//! Integer ranges as sources: `a..b` and `a..=b` of every primitive integer type.
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

macro_rules! integer_ranges {
    ($($t:ty),* $(,)?) => {$(
        impl Source for Range<$t> {
            type Item = $t;
            #[inline]
            fn size(&self) -> usize {
                if self.end <= self.start {
                    return 0;
                }
                let span = self.end.abs_diff(self.start);
                match usize::try_from(span) {
                    Ok(n) => n,
                    Err(_) => too_long(self),
                }
            }
            #[inline]
            fn fetch(&self, index: usize) -> $t {
                // `index < len` fits the unsigned span, and modular addition of the truncated
                // index gives the exact element because the result lies inside the range.
                self.start.wrapping_add(index as $t)
            }
        }

        impl Source for RangeInclusive<$t> {
            type Item = $t;
            #[inline]
            fn size(&self) -> usize {
                if self.is_empty() {
                    return 0;
                }
                let span = self.end().abs_diff(*self.start());
                match usize::try_from(span).ok().and_then(|n| n.checked_add(1)) {
                    Some(n) => n,
                    None => too_long(self),
                }
            }
            #[inline]
            fn fetch(&self, index: usize) -> $t {
                self.start().wrapping_add(index as $t)
            }
        }
    )*};
}

integer_ranges!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize);

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
