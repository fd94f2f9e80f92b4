//! `take N` and `skip N`.
//!
//! After an `order by` or a `group by` the elements are already gathered, and `take`/`skip`
//! cut the `Vec` ([`take_vec`], [`skip_vec`]). Straight after generators, `take N` must not
//! compute the rest — `par![x * 2 | x <- 0..4_000_000_000i64, take 5]` returns at once — so
//! that part runs over growing windows of its first generator ([`take_first`]), each reduced by
//! [`Take`], which stops every parallel part once it holds the elements it may contribute.

use crate::pipeline::Reducer;
use crate::source::Source;
use std::ops::{ControlFlow, Range};

/// The first `n` elements, in nested-loop order. A part of the iteration space stops as soon
/// as it has `n` (no later element can be among the first `n`).
pub struct Take {
    n: usize,
}

impl Take {
    /// The first `n` elements.
    pub fn new(n: usize) -> Self {
        Take { n }
    }
}

impl<T: Send> Reducer<T> for Take {
    type Acc = Vec<T>;
    type Result = Vec<T>;
    fn identity(&self) -> Vec<T> {
        Vec::new()
    }
    #[inline]
    fn push(&self, acc: &mut Vec<T>, item: T) -> ControlFlow<()> {
        if acc.len() < self.n {
            acc.push(item);
        }
        if acc.len() >= self.n {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    }
    fn combine(&self, mut left: Vec<T>, mut right: Vec<T>) -> Vec<T> {
        if left.len() < self.n {
            right.truncate(self.n - left.len());
            left.append(&mut right);
        }
        left
    }
    fn finish(&self, acc: Vec<T>) -> Vec<T> {
        acc
    }
}

/// The elements `range` of a source: one window of the first generator of a `take`.
pub struct Window<'a, S: ?Sized> {
    source: &'a S,
    start: usize,
    len: usize,
}

impl<'a, S: Source + ?Sized> Window<'a, S> {
    /// The elements `range` of `source` (`range` within its size).
    pub fn new(source: &'a S, range: Range<usize>) -> Self {
        Window { source, start: range.start, len: range.len() }
    }
}

impl<S: ?Sized> Clone for Window<'_, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S: ?Sized> Copy for Window<'_, S> {}

impl<S: Source + ?Sized> Source for Window<'_, S> {
    type Item = S::Item;
    #[inline]
    fn size(&self) -> usize {
        self.len
    }
    #[inline]
    fn fetch(&self, index: usize) -> S::Item {
        self.source.fetch(self.start + index)
    }
}

/// The first window of [`take_first`]: enough elements of the first generator for a few
/// parallel parts, few enough that a `take 5` of billions returns at once.
const FIRST_WINDOW: usize = 1 << 12;

/// `take n` straight after generators: runs `part(window, still_needed)` over consecutive
/// windows `0..a`, `a..b`, ... of the first generator's `size` elements, each four times the
/// last, until `n` elements are found or the generator is exhausted. Nothing is computed for
/// `take 0`.
pub fn take_first<T>(
    n: usize,
    size: usize,
    mut part: impl FnMut(Range<usize>, usize) -> Vec<T>,
) -> Vec<T> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut window = FIRST_WINDOW.max(n);
    while out.len() < n && start < size {
        let end = start.saturating_add(window).min(size);
        let mut found = part(start..end, n - out.len());
        found.truncate(n - out.len());
        out.append(&mut found);
        start = end;
        window = window.saturating_mul(4);
    }
    out
}

/// `take n` of gathered elements: the first `n`.
pub fn take_vec<T>(mut items: Vec<T>, n: usize) -> Vec<T> {
    items.truncate(n);
    items
}

/// `skip n` of gathered elements: all but the first `n`.
pub fn skip_vec<T>(mut items: Vec<T>, n: usize) -> Vec<T> {
    items.drain(..n.min(items.len()));
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn take_first_reads_windows_until_it_has_enough() {
        let mut windows = Vec::new();
        let first = take_first(5, 1 << 40, |range, need| {
            windows.push(range.clone());
            range.take(need).collect::<Vec<_>>()
        });
        assert_eq!(first, [0, 1, 2, 3, 4]);
        assert_eq!(windows, vec![Range { start: 0, end: FIRST_WINDOW }]);
        // Sparse elements: several windows, each four times larger.
        let mut windows = Vec::new();
        let sparse = take_first(3, 100_000, |range, _| {
            windows.push(range.clone());
            range.filter(|x| x % 10_000 == 9_999).collect::<Vec<_>>()
        });
        assert_eq!(sparse, [9_999, 19_999, 29_999]);
        assert_eq!(windows, [0..4096, 4096..20480, 20480..86016]);
        assert!(take_first(0, 10, |_, _| -> Vec<u8> { unreachable!("take 0 computes nothing") })
            .is_empty());
        assert_eq!(take_first(10, 3, |r, _| r.collect::<Vec<_>>()), [0, 1, 2]);
    }

    #[test]
    fn take_combines_parts_in_order() {
        let t = Take::new(3);
        let mut left = Vec::new();
        assert!(t.push(&mut left, 1).is_continue());
        let right = vec![2, 3, 4];
        assert_eq!(t.combine(left, right), [1, 2, 3]);
        assert_eq!(t.combine(vec![1, 2, 3], vec![4]), [1, 2, 3]);
        assert_eq!(skip_vec(vec![1, 2, 3], 5), Vec::<i32>::new());
        assert_eq!(skip_vec(vec![1, 2, 3], 1), [2, 3]);
    }
}
