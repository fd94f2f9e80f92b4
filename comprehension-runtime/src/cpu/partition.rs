//! Dividing one level of the iteration space into ranges that can run independently.
//!
//! The executor splits at one level: either the contexts themselves ([`Leaves`], when no
//! generator is left below them) or the flattened children of the contexts at the next
//! generator ([`Children`]). For the latter, a [`Layout`] maps a flattened child index to its
//! parent: by division in the regular case, by binary search in the prefix sum of the sizes
//! otherwise. A range of children may start and end in the middle of a parent, so one huge row
//! is shared by as many ranges as its size calls for.

use super::tasks::{each_item, each_piece_mut, map_tasks};
use crate::pipeline::{emit_one, feed_each, Body, Folder};
use crate::site::Site;
use crate::source::Source;
use std::ops::{ControlFlow, Range};

/// Contexts per parallel task when sizing a level.
const SIZE_BLOCK: usize = 16 * 1024;

/// Where the children of each parent lie in the flattened index space of the next level.
pub(super) enum Layout {
    /// Every parent has `fanout` children (a product with no filter before it).
    Regular { fanout: usize, total: usize },
    /// `offsets[i]..offsets[i + 1]` are the children of parent `i`; `offsets.len() == n + 1`.
    Offsets(Offsets),
}

/// Parents up to this many keep their offsets inline, without an allocation: a comprehension
/// over a handful of elements should cost little more than the loop it replaces.
const INLINE_PARENTS: usize = 16;

/// The offsets of a [`Layout`]: inline for a few parents, else on the heap.
pub(super) enum Offsets {
    Inline { offsets: [usize; INLINE_PARENTS + 1], len: usize },
    Heap(Vec<usize>),
}

impl std::ops::Deref for Offsets {
    type Target = [usize];
    #[inline]
    fn deref(&self) -> &[usize] {
        match self {
            Offsets::Inline { offsets, len } => &offsets[..*len],
            Offsets::Heap(offsets) => offsets,
        }
    }
}

impl std::ops::DerefMut for Offsets {
    #[inline]
    fn deref_mut(&mut self) -> &mut [usize] {
        match self {
            Offsets::Inline { offsets, len } => &mut offsets[..*len],
            Offsets::Heap(offsets) => offsets,
        }
    }
}

impl Layout {
    /// Sizes the children of every parent; `parallel` sizes and sums in blocks on all threads.
    pub(super) fn new<P, B>(site: &Site, parents: &P, body: &B, parallel: bool) -> Layout
    where
        P: Source + Sync,
        P::Item: Clone + Send + Sync,
        B: Body<P::Item>,
    {
        let n = parents.size();
        if let Some(fanout) = body.regular_fanout() {
            let total = n.checked_mul(fanout).unwrap_or_else(|| site.size_overflow());
            return Layout::Regular { fanout, total };
        }
        let mut offsets = if n <= INLINE_PARENTS {
            Offsets::Inline { offsets: [0; INLINE_PARENTS + 1], len: n + 1 }
        } else {
            let mut offsets = Vec::new();
            if offsets.try_reserve_exact(n + 1).is_err() {
                site.cannot_allocate(n + 1, "segment offsets");
            }
            offsets.resize(n + 1, 0usize);
            Offsets::Heap(offsets)
        };
        let sizes = &mut offsets[..n];
        if parallel {
            each_piece_mut(sizes, SIZE_BLOCK, |first, sizes| {
                for (i, size) in sizes.iter_mut().enumerate() {
                    *size = body.fanout(&parents.fetch(first + i));
                }
            });
        } else {
            for (i, size) in sizes.iter_mut().enumerate() {
                *size = body.fanout(&parents.fetch(i));
            }
        }
        if exclusive_scan(&mut offsets, parallel && n > INLINE_PARENTS).is_none() {
            site.size_overflow();
        }
        Layout::Offsets(offsets)
    }

    /// Number of children of all parents.
    #[inline]
    pub(super) fn total(&self) -> usize {
        match self {
            Layout::Regular { total, .. } => *total,
            Layout::Offsets(offsets) => offsets[offsets.len() - 1],
        }
    }

    /// The parent whose children contain flattened index `pos` (`pos < total`).
    #[inline]
    fn parent_of(&self, pos: usize) -> usize {
        match self {
            Layout::Regular { fanout, .. } => pos / fanout,
            // The last parent starting at or before `pos`; empty parents share their start with
            // the next one and are skipped by taking the last.
            Layout::Offsets(offsets) => offsets.partition_point(|&start| start <= pos) - 1,
        }
    }

    /// The flattened range of parent `i`'s children.
    #[inline]
    fn children_of(&self, i: usize) -> Range<usize> {
        match self {
            Layout::Regular { fanout, .. } => i * fanout..(i + 1) * fanout,
            Layout::Offsets(offsets) => offsets[i]..offsets[i + 1],
        }
    }
}

/// Replaces `values` by its exclusive prefix sum (the last entry becomes the total of all the
/// others, which is expected to be 0 on entry). `None` if a sum overflows.
fn exclusive_scan(values: &mut [usize], parallel: bool) -> Option<()> {
    fn scan_block(block: &mut [usize], mut carry: usize) -> Option<usize> {
        for value in block {
            let next = carry.checked_add(*value)?;
            *value = carry;
            carry = next;
        }
        Some(carry)
    }
    if !parallel {
        return scan_block(values, 0).map(drop);
    }
    // Three phases: block sums in parallel, a scan of the block sums, each block rescanned from
    // its carry in parallel.
    let sums: Vec<Option<usize>> = map_tasks(values.len().div_ceil(SIZE_BLOCK), |k| {
        let block = &values[k * SIZE_BLOCK..values.len().min((k + 1) * SIZE_BLOCK)];
        block.iter().try_fold(0usize, |acc, &v| acc.checked_add(v))
    });
    let mut carries = Vec::with_capacity(sums.len());
    let mut carry = 0usize;
    for sum in sums {
        carries.push(carry);
        carry = carry.checked_add(sum?)?;
    }
    let overflowed = std::sync::atomic::AtomicBool::new(false);
    each_item(values.chunks_mut(SIZE_BLOCK).zip(carries).collect(), |_, (block, carry)| {
        if scan_block(block, carry).is_none() {
            overflowed.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    });
    (!overflowed.into_inner()).then_some(())
}

/// A level of the iteration space divided into independent ranges.
pub(super) trait Partitioned: Sync {
    /// The element type of the result.
    type Out: Send;
    /// Runs the subtrees of the elements in `range` of this level, in order.
    fn run<F: Folder<Self::Out>>(&self, range: Range<usize>, out: &mut F) -> ControlFlow<()>;
    /// Counts the outputs of the elements in `range` (exact when no filter stands below).
    fn count(&self, range: Range<usize>) -> Option<usize>;
}

/// Contexts with no generator left below them: element `i` is `parents[i]`.
pub(super) struct Leaves<'a, P, B> {
    pub(super) parents: &'a P,
    pub(super) body: &'a B,
}

impl<P, B> Partitioned for Leaves<'_, P, B>
where
    P: Source + Sync,
    B: Body<P::Item>,
{
    type Out = B::Out;

    #[inline]
    fn run<F: Folder<B::Out>>(&self, range: Range<usize>, out: &mut F) -> ControlFlow<()> {
        run_leaves(self.parents, self.body, range, out)
    }

    fn count(&self, range: Range<usize>) -> Option<usize> {
        range
            .into_iter()
            .try_fold(0usize, |acc, i| acc.checked_add(self.body.count(self.parents.fetch(i))?))
    }
}

/// [`Leaves::run`]. Not inlined: the callers (the probe, the sequential rest, each way of
/// placing outputs) share one copy of the fused loops per folder type instead of each
/// optimising its own; a call per range costs nothing. The source and the body are arguments
/// of their own, references the compiler knows nothing else writes: what the loop reads of
/// them (a range's start, the captured values) stays in registers while it writes outputs.
#[inline(never)]
fn run_leaves<P, B, F>(parents: &P, body: &B, range: Range<usize>, out: &mut F) -> ControlFlow<()>
where
    P: Source + Sync,
    B: Body<P::Item>,
    F: Folder<B::Out>,
{
    if B::DEPTH == 0 && !B::FILTERS && !F::OWN_LOOP {
        // An output per element: the run's elements as the source's iterator (a slice's,
        // bounds checked once), each one's output handed on in turn.
        return out.push_iter(parents.run(range).map(|element| emit_one(body, element)));
    }
    feed_each(body, range, |i| parents.fetch(i), out)
}

/// The flattened children of `parents` at the next generator: element `j` is child
/// `j - start(p)` of the parent `p` whose children contain `j`.
pub(super) struct Children<'a, P, B> {
    pub(super) parents: &'a P,
    pub(super) body: &'a B,
    pub(super) layout: Layout,
}

impl<P, B> Children<'_, P, B>
where
    P: Source + Sync,
    B: Body<P::Item>,
{
    /// Calls `visit(parent, children)` for each parent overlapping `range`, with the part of its
    /// children that lies in `range`, in order.
    #[inline]
    fn each_parent<R>(
        &self,
        range: Range<usize>,
        mut visit: impl FnMut(P::Item, Range<usize>) -> ControlFlow<R>,
    ) -> ControlFlow<R> {
        if range.is_empty() {
            return ControlFlow::Continue(());
        }
        let mut pos = range.start;
        let mut parent = self.layout.parent_of(pos);
        while pos < range.end {
            let children = self.layout.children_of(parent);
            let end = children.end.min(range.end);
            if end > pos {
                visit(self.parents.fetch(parent), pos - children.start..end - children.start)?;
                pos = end;
            }
            parent += 1;
        }
        ControlFlow::Continue(())
    }
}

impl<P, B> Partitioned for Children<'_, P, B>
where
    P: Source + Sync,
    B: Body<P::Item>,
{
    type Out = B::Out;

    // Not inlined, as `Leaves::run`.
    #[inline(never)]
    fn run<F: Folder<B::Out>>(&self, range: Range<usize>, out: &mut F) -> ControlFlow<()> {
        self.each_parent(range, |parent, children| self.body.feed_children(&parent, children, out))
    }

    fn count(&self, range: Range<usize>) -> Option<usize> {
        let mut total = 0usize;
        let counted = self.each_parent(range, |parent, children| {
            match self.body.count_children(&parent, children).and_then(|n| total.checked_add(n)) {
                Some(sum) => {
                    total = sum;
                    ControlFlow::Continue(())
                }
                None => ControlFlow::Break(()),
            }
        });
        match counted {
            ControlFlow::Continue(()) => Some(total),
            ControlFlow::Break(()) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exclusive_scan_sequential_and_parallel_agree() {
        for n in [0usize, 1, 5, SIZE_BLOCK - 1, SIZE_BLOCK, 3 * SIZE_BLOCK + 7] {
            let sizes: Vec<usize> = (0..n).map(|i| (i * 7919) % 13).collect();
            let mut want = sizes.clone();
            want.push(0);
            let mut got = want.clone();
            exclusive_scan(&mut want, false).unwrap();
            exclusive_scan(&mut got, true).unwrap();
            assert_eq!(want, got);
            assert_eq!(want[n], sizes.iter().sum::<usize>());
        }
    }

    #[test]
    fn exclusive_scan_reports_overflow() {
        let mut values = vec![usize::MAX, 1, 0];
        assert!(exclusive_scan(&mut values, false).is_none());
        let mut values = vec![1; 2 * SIZE_BLOCK];
        values[SIZE_BLOCK + 3] = usize::MAX;
        assert!(exclusive_scan(&mut values, true).is_none());
    }
}
