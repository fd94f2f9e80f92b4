//! The segmented primitives of flattening by expansion, as a public API on slices.
//!
//! These are the building blocks a flattened comprehension is made of (Elsman, Henriksen and
//! Serup, *Data-parallel flattening by expansion*; the Futhark `segmented` library; Thrust's
//! `expand`; CUB's `DeviceSegmentedReduce`). Nested data is a flat array plus a *segment
//! descriptor*: either a flag per element (`true` where a segment starts) or a size per row.
//!
//! | primitive | what it computes |
//! |---|---|
//! | [`scan_inclusive`], [`scan_exclusive`] | prefix sums under any associative operator |
//! | [`segmented_scan`] | an inclusive scan that restarts at every segment start |
//! | [`segmented_reduce`] | one reduction per (flag-delimited) segment |
//! | [`reduce_rows`] | one reduction per row of a [`Jagged`](crate::Jagged), identity if empty |
//! | [`replicated_iota`] | `[2, 3, 1]` → `[0, 0, 1, 1, 1, 2]`: the row of every element |
//! | [`segmented_iota`] | the index of every element within its segment |
//! | [`expand`] | `get(a, i)` for every `a` of the input and every `i < size(a)`, flattened |
//! | [`expand_reduce`] | the reduction of every non-empty expanded row |
//! | [`expand_outer_reduce`] | the reduction of every expanded row, identity if empty |
//! | [`sort_permutation`] | the stable order of `u64` keys, as a permutation of their indices |
//!
//! rayon has no parallel scan at all, so [`scan_inclusive`] and [`scan_exclusive`] alone are
//! worth having.
//!
//! # On a device: monoids
//!
//! The operators above are Rust closures, host code. The scans and reductions are also the
//! methods of a [`Monoid`] — [`Sum`], [`Product`], [`Min`], [`Max`], [`BitAnd`], [`BitOr`],
//! [`BitXor`] on the primitive numbers — whose operation the kernels know: with a GPU feature
//! on, they run on the device as a comprehension does (when the device is forced, or present
//! and the input is at least [`device_threshold`](crate::device_threshold) values), and on the
//! host otherwise, with the same results. [`replicated_iota`], [`segmented_iota`] and
//! [`sort_permutation`] take no operator and run on the device the same way. `PARCOMP_TRACE=1` says where each call ran.
//!
//! ```
//! use comprehension_runtime::segmented::{Monoid, Sum};
//! assert_eq!(Sum.scan_inclusive(&[1, 2, 3, 4]), vec![1, 3, 6, 10]);
//! ```
//!
//! # Segments
//!
//! Segment semantics follow Futhark: a segment starts at every `true` flag, and the first
//! element always starts a segment, even when `flags[0]` is `false`. Flag-delimited segments
//! are never empty; rows given by sizes or offsets may be.
//!
//! # Operators
//!
//! `op` must be associative and `identity` its neutral element (`op(identity, x) == x ==
//! op(x, identity)`). It need not be commutative: every primitive combines elements in their
//! left-to-right order. The parallel algorithms combine them with a different bracketing than
//! the sequential loops, so a non-associative operator (say, floating-point addition) may give
//! slightly different results on different backends — never undefined behaviour.
//!
//! # Backends
//!
//! Every primitive runs on the [`Backend`](crate::Backend) in effect on the calling thread (a
//! device backend runs the monoids' methods, the iotas and the sort, and the host the rest):
//! [`Backend::Sequential`](crate::Backend::Sequential) runs plain loops on the calling thread (the reference semantics);
//! [`Backend::Rayon`](crate::Backend::Rayon) runs in parallel on the current rayon pool, with work-efficient, balanced
//! algorithms (blocked three-phase scans, per-block partial results stitched at block
//! boundaries, and a merge-path split of rows and elements so that one huge row or millions of
//! empty rows are spread evenly). Inputs of fewer than a few thousand elements are processed on
//! the calling thread on every backend. Both backends give the same results.
//!
//! # Errors
//!
//! Sizes whose sum overflows `usize` ([`expand`], [`expand_reduce`], [`expand_outer_reduce`],
//! [`replicated_iota`]), outputs that cannot be allocated, and mismatched `flags`/`values`
//! lengths panic with a message naming the primitive; nothing wraps around silently.

mod expand;
mod iota;
mod monoid;
mod places;
mod scan;
pub(crate) mod segmented_reduce;
mod segmented_scan;
mod sort;

pub use expand::{expand, expand_outer_reduce, expand_reduce};
pub use iota::{replicated_iota, segmented_iota};
pub use monoid::{BitAnd, BitOr, BitXor, Max, Min, Monoid, Product, Sum};
pub(crate) use places::Places;
pub use scan::{scan_exclusive, scan_inclusive};
pub use segmented_reduce::{reduce_rows, segmented_reduce};
pub use segmented_scan::segmented_scan;
pub use sort::sort_permutation;
pub(crate) use sort::{radix_permutation, sort_permutation_at};

use crate::site::Site;
use rayon::prelude::*;
use std::mem::MaybeUninit;
use std::ops::Range;

/// Inputs with less work than this run on the calling thread on every backend: a round trip
/// through the thread pool costs more than the loop.
const SEQUENTIAL_CUTOFF: usize = 4096;
/// The smallest block a parallel algorithm hands to one task.
const MIN_BLOCK: usize = 1024;
/// Blocks per thread: several, so that blocks of unequal cost even out by work stealing.
const BLOCKS_PER_THREAD: usize = 4;

/// Whether the current backend is rayon (read once, on the calling thread).
fn rayon_backend() -> bool {
    crate::backend::host_parallel()
}

/// Whether `work` units should be processed in parallel on the current backend.
pub(crate) fn go_parallel(work: usize) -> bool {
    work >= SEQUENTIAL_CUTOFF && rayon_backend()
}

/// `Some(block length)` when `work` units should be processed in parallel, else `None`.
fn parallel_blocks(work: usize) -> Option<usize> {
    go_parallel(work).then(|| block_len(work))
}

/// The length of the blocks `work` units are cut into for the current rayon pool.
fn block_len(work: usize) -> usize {
    let blocks = rayon::current_num_threads().max(1).saturating_mul(BLOCKS_PER_THREAD);
    work.div_ceil(blocks).max(MIN_BLOCK)
}

/// `0..n` cut into consecutive ranges of `len` elements (the last may be shorter).
fn blocks(n: usize, len: usize) -> Vec<Range<usize>> {
    (0..n.div_ceil(len)).map(|k| k * len..n.min((k + 1) * len)).collect()
}

/// An empty `Vec` with room for exactly `n` elements, or a clear panic naming `site`.
fn alloc<T>(site: &Site, n: usize) -> Vec<T> {
    let mut out = Vec::new();
    if out.try_reserve_exact(n).is_err() {
        site.cannot_allocate(n, "output elements");
    }
    out
}

/// Panics unless `flags` and `values` have the same length.
#[track_caller]
fn check_lengths(function: &str, flags: usize, values: usize) {
    if flags != values {
        panic!(
            "parcomp::segmented::{function}: flags and values must have the same length, but \
             flags has {flags} elements and values has {values}"
        );
    }
}

/// Fills one part of an output being built in parallel, front to back.
struct Writer<'a, T> {
    slots: &'a mut [MaybeUninit<T>],
    filled: usize,
}

impl<T> Writer<'_, T> {
    /// Appends `value` (panics if the part is already full).
    #[inline]
    fn push(&mut self, value: T) {
        self.slots[self.filled].write(value);
        self.filled += 1;
    }
}

/// Builds a `Vec` of `parts.iter().sum()` elements in parallel: part `k` (the next `parts[k]`
/// elements) is written by `fill(k, writer)`, which must push exactly `parts[k]` values. Also
/// returns what each `fill` returned, in order.
fn build_in_parts<T, R, P>(site: &Site, parts: &[usize], fill: P) -> (Vec<T>, Vec<R>)
where
    T: Send,
    R: Send,
    P: Fn(usize, &mut Writer<'_, T>) -> R + Sync,
{
    let total = parts
        .iter()
        .try_fold(0usize, |sum, &len| sum.checked_add(len))
        .unwrap_or_else(|| site.size_overflow());
    let mut out = alloc::<T>(site, total);
    let mut rest = &mut out.spare_capacity_mut()[..total];
    let mut slices = Vec::with_capacity(parts.len());
    for &len in parts {
        let (slice, tail) = std::mem::take(&mut rest).split_at_mut(len);
        slices.push(slice);
        rest = tail;
    }
    assert!(rest.is_empty(), "parcomp internal error: output parts do not cover the output");
    let results = slices
        .into_par_iter()
        .enumerate()
        .map(|(k, slots)| {
            let mut writer = Writer { slots, filled: 0 };
            let result = fill(k, &mut writer);
            assert!(
                writer.filled == writer.slots.len(),
                "parcomp internal error: output part {k} has {} of {} elements",
                writer.filled,
                writer.slots.len()
            );
            result
        })
        .collect();
    // SAFETY: the slices handed out above are disjoint and together cover exactly
    // `out.spare_capacity_mut()[..total]` (checked by the `assert!` on `rest`), and every one was
    // completely initialised: each `Writer` writes its slots front to back and we asserted that
    // it filled all of them. If any `fill` panicked, rayon re-raises the panic from `collect`
    // above, so this line is never reached and `out` is dropped with length 0 (the written
    // elements are leaked, never read or dropped twice). `total <= capacity` by `alloc`.
    unsafe { out.set_len(total) };
    (out, results)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_cover_the_range() {
        assert_eq!(blocks(0, 4), Vec::<Range<usize>>::new());
        assert_eq!(blocks(10, 4), vec![0..4, 4..8, 8..10]);
        assert_eq!(blocks(8, 4), vec![0..4, 4..8]);
        assert!(block_len(1) >= MIN_BLOCK);
    }

    #[test]
    fn build_in_parts_fills_every_part() {
        let (v, r): (Vec<usize>, Vec<usize>) =
            build_in_parts(&Site::api("test"), &[2, 0, 3], |k, w| {
                let n = w.slots.len();
                for i in 0..n {
                    w.push(k * 10 + i);
                }
                n
            });
        assert_eq!(v, vec![0, 1, 20, 21, 22]);
        assert_eq!(r, vec![2, 0, 3]);
    }

    #[test]
    #[should_panic(expected = "output part 0 has 1 of 2 elements")]
    fn build_in_parts_checks_parts_are_full() {
        let _: (Vec<u8>, Vec<()>) = build_in_parts(&Site::api("test"), &[2], |_, w| w.push(1));
    }
}
