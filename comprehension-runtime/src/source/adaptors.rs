//! `map`, `step_by` and `rev` over a source: still sized and indexable, so still flattenable.
//!
//! These are what `(a..b).map(f)`, `(a..b).step_by(k)` and `(a..b).rev()` in a generator become.

use super::Source;

/// `source.map(f)`: element `i` is `f(source[i])`.
#[derive(Clone, Copy, Debug)]
pub struct Map<S, F> {
    source: S,
    f: F,
}

/// Maps `f` over `source` (the generator form `R.map(f)`).
pub fn map<S: Source, T, F: Fn(S::Item) -> T>(source: S, f: F) -> Map<S, F> {
    Map { source, f }
}

impl<S: Source, T, F: Fn(S::Item) -> T> Source for Map<S, F> {
    type Item = T;
    #[inline]
    fn size(&self) -> usize {
        self.source.size()
    }
    #[inline]
    fn fetch(&self, index: usize) -> T {
        (self.f)(self.source.fetch(index))
    }
}

/// `f(value)`, for the element map of a generator that depends on the comprehension's
/// variables (`c <- (0..x).map(|h| h.max(3))`): the emitted code calls it as
/// `apply(item, &(|h| h.max(3)))`, so that `value`'s type, checked first, gives the closure's
/// parameter its type. Called in place, `(|h| h.max(3))(item)` leaves `h` without one, and the
/// method call on it fails to compile.
#[doc(hidden)]
#[inline(always)]
pub fn apply<A, R, F: Fn(A) -> R>(value: A, f: &F) -> R {
    f(value)
}

/// `source.step_by(step)`: elements `0, step, 2*step, ...` of `source`.
#[derive(Clone, Copy, Debug)]
pub struct StepBy<S> {
    source: S,
    step: usize,
}

/// Every `step`-th element of `source`, starting with the first (the generator form
/// `R.step_by(k)`).
///
/// # Panics
/// If `step` is zero, like [`Iterator::step_by`].
#[track_caller]
pub fn step_by<S: Source>(source: S, step: usize) -> StepBy<S> {
    assert!(step != 0, "parcomp: step_by(0) in a generator: the step must be positive");
    StepBy { source, step }
}

impl<S: Source> Source for StepBy<S> {
    type Item = S::Item;
    #[inline]
    fn size(&self) -> usize {
        match self.source.size() {
            0 => 0,
            n => (n - 1) / self.step + 1,
        }
    }
    #[inline]
    fn fetch(&self, index: usize) -> S::Item {
        // index < len, so index * step <= n - 1: no overflow.
        self.source.fetch(index * self.step)
    }
}

/// `source.rev()`: the elements of `source` last to first.
#[derive(Clone, Copy, Debug)]
pub struct Rev<S> {
    source: S,
}

/// The elements of `source` in reverse order (the generator form `R.rev()`).
pub fn rev<S: Source>(source: S) -> Rev<S> {
    Rev { source }
}

impl<S: Source> Source for Rev<S> {
    type Item = S::Item;
    #[inline]
    fn size(&self) -> usize {
        self.source.size()
    }
    #[inline]
    fn fetch(&self, index: usize) -> S::Item {
        self.source.fetch(self.source.size() - 1 - index)
    }
}

/// Two sources side by side: element `i` is `(a[i], b[i])`, as long as the shorter.
#[derive(Clone, Copy, Debug)]
pub struct Zip<A, B> {
    a: A,
    b: B,
}

/// Zips `a` and `b`, truncating to the shorter (parallel branches `x <- xs | y <- ys`).
pub fn zip<A: Source, B: Source>(a: A, b: B) -> Zip<A, B> {
    Zip { a, b }
}

impl<A: Source, B: Source> Source for Zip<A, B> {
    type Item = (A::Item, B::Item);
    #[inline]
    fn size(&self) -> usize {
        self.a.size().min(self.b.size())
    }
    #[inline]
    fn fetch(&self, index: usize) -> (A::Item, B::Item) {
        (self.a.fetch(index), self.b.fetch(index))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all<S: Source>(s: &S) -> Vec<S::Item> {
        (0..s.size()).map(|i| s.fetch(i)).collect()
    }

    #[test]
    fn adaptors_agree_with_iterators() {
        for (a, b) in [(0i32, 10), (3, 4), (5, 5), (7, 2), (-4, 9)] {
            for k in 1..5usize {
                let want: Vec<i32> = (a..b).step_by(k).collect();
                assert_eq!(all(&step_by(a..b, k)), want);
                let want: Vec<i32> = (a..b).rev().step_by(k).collect();
                assert_eq!(all(&step_by(rev(a..b), k)), want);
                let mut want: Vec<i32> = (a..=b).step_by(k).collect();
                want.reverse();
                assert_eq!(all(&rev(step_by(a..=b, k))), want);
            }
            let want: Vec<i64> = (a..b).map(|x| x as i64 * 3).collect();
            assert_eq!(all(&map(a..b, |x| x as i64 * 3)), want);
        }
        let v = vec![1u8, 2, 3];
        assert_eq!(all(&rev(&v)), vec![3, 2, 1]);
        assert_eq!(all(&zip(&v, 10..12)), vec![(1, 10), (2, 11)]);
        assert_eq!(all(&zip(0..0, &v)), vec![]);
    }

    #[test]
    #[should_panic(expected = "step_by(0)")]
    fn zero_step_panics() {
        step_by(0..3, 0);
    }
}
