//! Segmented reductions: one result per segment (flag-delimited) or per row (offsets).
//!
//! Parallel algorithms:
//! - [`segmented_reduce`] cuts the elements into equal blocks. Every block counts its segment
//!   starts (phase 1; a prefix sum of the counts gives where each block's results go), then
//!   reduces in parallel every segment that starts in it — the last one only up to the block's
//!   end — and returns the reduction of its *head*, the elements before its first start, which
//!   continue a segment started in an earlier block (phase 2). Phase 3 appends the heads, in
//!   block order, to the segments they continue: `O(blocks)` sequential work.
//! - [`reduce_rows`] (and [`expand_reduce`](super::expand_reduce) /
//!   [`expand_outer_reduce`](super::expand_outer_reduce)) split the *merge path* of row ends and
//!   elements into equal chunks (Merrill & Garland's CSR SpMV): a row costs one unit plus one per
//!   element, and a binary search finds where each chunk starts. One huge row is cut into many
//!   chunks, and millions of empty rows are spread over all threads too. Every chunk reduces its
//!   pieces of rows in parallel; the pieces of rows cut by chunk boundaries are then combined in
//!   order (`op` need not be commutative), again `O(chunks)` sequential work.

use super::{
    alloc, block_len, blocks, build_in_parts, check_lengths, go_parallel, parallel_blocks,
};
use crate::jagged::Jagged;
use crate::site::Site;
use rayon::prelude::*;
use std::ops::Range;

/// Reduces every segment of `values`: one result per segment, in order.
///
/// A segment starts wherever `flags` is `true`, and at index 0 whatever `flags[0]` is, so
/// segments are never empty and the output has one element per segment start (an empty input
/// gives an empty output). Each result is `identity op v_s op ... op v_e`. `op` must be
/// associative and `identity` its neutral element; it need not be commutative.
///
/// # Panics
///
/// If `flags.len() != values.len()` (the message names both lengths).
///
/// ```
/// use comprehension_runtime::segmented::segmented_reduce;
/// let flags = [true, false, false, true, false, true];
/// assert_eq!(segmented_reduce(&flags, &[1, 2, 3, 4, 5, 6], 0, |a, b| a + b), vec![6, 9, 6]);
/// ```
#[track_caller]
pub fn segmented_reduce<T, F>(flags: &[bool], values: &[T], identity: T, op: F) -> Vec<T>
where
    T: Copy + Send + Sync,
    F: Fn(T, T) -> T + Sync,
{
    static SITE: Site = Site::api("parcomp::segmented::segmented_reduce");
    check_lengths("segmented_reduce", flags.len(), values.len());
    let n = values.len();
    if !go_parallel(n) {
        let mut out = Vec::new();
        let mut acc = identity;
        for (i, (&flag, &v)) in flags.iter().zip(values).enumerate() {
            if flag && i > 0 {
                out.push(acc);
                acc = identity;
            }
            acc = op(acc, v);
        }
        if n > 0 {
            out.push(acc);
        }
        return out;
    }
    let len = block_len(n);
    let ranges = blocks(n, len);
    // Phase 1: segment starts per block (index 0 always starts one).
    let counts: Vec<usize> = ranges
        .par_iter()
        .map(|r| {
            flags[r.clone()].iter().filter(|&&f| f).count() + usize::from(r.start == 0 && !flags[0])
        })
        .collect();
    // Phase 2: every segment that starts in a block, reduced up to the block's end, and the
    // block's head (the elements before its first start).
    let (mut out, heads) = build_in_parts(&SITE, &counts, |k, w| {
        let r = ranges[k].clone();
        let mut head = None;
        let mut open = false;
        let mut acc = identity;
        for i in r.clone() {
            if flags[i] || i == 0 {
                if open {
                    w.push(acc);
                } else if i > r.start {
                    head = Some(acc);
                }
                open = true;
                acc = identity;
            }
            acc = op(acc, values[i]);
        }
        if open {
            w.push(acc);
        } else {
            head = Some(acc);
        }
        head
    });
    // Phase 3: append every head to the segment it continues, in block order.
    let mut seen = 0;
    for (k, head) in heads.into_iter().enumerate() {
        if let Some(head) = head {
            // Block 0 always starts with a segment, so `seen >= 1` here.
            out[seen - 1] = op(out[seen - 1], head);
        }
        seen += counts[k];
    }
    out
}

/// Reduces every row of a [`Jagged`] array: one result per row, `identity` for an empty row
/// (CUB's `DeviceSegmentedReduce`).
///
/// `op` must be associative and `identity` its neutral element; it need not be commutative.
///
/// ```
/// use comprehension_runtime::segmented::reduce_rows;
/// use comprehension_runtime::Jagged;
/// let m = Jagged::from(vec![vec![8, 6, 7], vec![], vec![5, 3, 0, 9]]);
/// assert_eq!(reduce_rows(&m, 0, |a, b| a + b), vec![21, 0, 17]);
/// assert_eq!(reduce_rows(&m, i32::MAX, i32::min), vec![6, i32::MAX, 0]);
/// ```
pub fn reduce_rows<T, F>(rows: &Jagged<T>, identity: T, op: F) -> Vec<T>
where
    T: Copy + Send + Sync,
    F: Fn(T, T) -> T + Sync,
{
    static SITE: Site = Site::api("parcomp::segmented::reduce_rows");
    let values = rows.values();
    let work = rows.len() + values.len();
    reduce_by_offsets(&SITE, rows.offsets(), &|| identity, &op, parallel_blocks(work), &|_, r| {
        values[r].iter().fold(identity, |a, &v| op(a, v))
    })
}

/// One result per row of the rows described by `offsets` (`len + 1` non-decreasing offsets
/// from 0): `piece(row, range)` reduces the elements `range` (a non-empty sub-range of
/// `offsets[row]..offsets[row + 1]`, in flattened indices) starting from `identity()`; an empty
/// row gives `identity()`. With `Some(block)`, the merge path of row ends and elements is split
/// into chunks of `block` steps run in parallel (see the module documentation); pieces of a
/// row cut by chunk boundaries are combined with `op`, left to right.
///
/// The accumulator need not be `Copy`: nested comprehensions reduce into `Vec`s with it.
pub(crate) fn reduce_by_offsets<T, I, F, P>(
    site: &Site,
    offsets: &[usize],
    identity: &I,
    op: &F,
    block: Option<usize>,
    piece: &P,
) -> Vec<T>
where
    T: Send,
    I: Fn() -> T + Sync,
    F: Fn(T, T) -> T + Sync,
    P: Fn(usize, Range<usize>) -> T + Sync,
{
    let rows = offsets.len() - 1;
    let Some(len) = block else {
        let mut out = alloc(site, rows);
        for (row, w) in offsets.windows(2).enumerate() {
            out.push(if w[0] < w[1] { piece(row, w[0]..w[1]) } else { identity() });
        }
        return out;
    };
    let elements = offsets[rows];
    let work = rows.checked_add(elements).unwrap_or_else(|| site.size_overflow());
    let len = len.max(1);
    let chunks = work.div_ceil(len);
    // Where every chunk starts on the merge path: (rows ended before it, elements before it).
    let bounds: Vec<(usize, usize)> =
        (0..=chunks).map(|k| merge_path_split(offsets, k.saturating_mul(len).min(work))).collect();
    let parts: Vec<usize> = bounds.windows(2).map(|b| b[1].0 - b[0].0).collect();
    // Every chunk writes the rows that end in it and returns whether the piece of its first row
    // was empty, and the reduction of the piece of the row it leaves open (if any).
    let (mut out, ends) = build_in_parts(site, &parts, |k, w| {
        let ((first_row, mut e), (end_row, end_e)) = (bounds[k], bounds[k + 1]);
        let mut first_empty = true;
        for row in first_row..end_row {
            let end = offsets[row + 1];
            if e < end {
                first_empty &= row != first_row;
                w.push(piece(row, e..end));
            } else {
                w.push(identity());
            }
            e = end;
        }
        let open = (e < end_e).then(|| piece(end_row, e..end_e));
        (first_empty, open)
    });
    // Prepend the pieces that earlier chunks hold of each chunk's first row, in order.
    let mut pending: Option<T> = None;
    for (k, (first_empty, open)) in ends.into_iter().enumerate() {
        let first_row = bounds[k].0;
        if bounds[k + 1].0 > first_row {
            if let Some(p) = pending.take() {
                let own = std::mem::replace(&mut out[first_row], identity());
                out[first_row] = if first_empty { p } else { op(p, own) };
            }
            pending = open;
        } else if let Some(open) = open {
            pending = Some(match pending {
                Some(p) => op(p, open),
                None => open,
            });
        }
    }
    debug_assert!(pending.is_none(), "parcomp internal error: a row was left open");
    out
}

/// The point where diagonal `d` crosses the merge path of row ends (`offsets[1..]`) and
/// element indices: `(r, d - r)` with `r` row ends and `d - r` elements before it. A row end
/// comes before element `e` when `offsets[row + 1] <= e`, so an empty row ends right after the
/// previous one.
fn merge_path_split(offsets: &[usize], d: usize) -> (usize, usize) {
    let rows = offsets.len() - 1;
    let elements = offsets[rows];
    // The largest r in lo..=hi such that r == lo or row r - 1 ends before element d - r.
    let (mut lo, mut hi) = (d.saturating_sub(elements), d.min(rows));
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if offsets[mid] <= d - mid {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    (lo, d - lo)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{with_backend, Backend};

    #[test]
    fn merge_path_splits() {
        let offsets = [0, 3, 3, 7];
        let path: Vec<_> = (0..=10).map(|d| merge_path_split(&offsets, d)).collect();
        assert_eq!(
            path,
            vec![
                (0, 0),
                (0, 1),
                (0, 2),
                (0, 3),
                (1, 3),
                (2, 3),
                (2, 4),
                (2, 5),
                (2, 6),
                (2, 7),
                (3, 7)
            ]
        );
        assert_eq!(merge_path_split(&[0], 0), (0, 0));
        assert_eq!(merge_path_split(&[0, 0, 0], 2), (2, 0));
    }

    #[test]
    fn chunked_reduction_matches_rows() {
        static SITE: Site = Site::api("test");
        // Affine maps x -> a*x + b mod p under composition: associative, not commutative.
        let sizes: Vec<usize> = (0..3000).map(|i| if i == 7 { 50_000 } else { i % 3 }).collect();
        let mut offsets = vec![0];
        for s in &sizes {
            offsets.push(offsets.last().unwrap() + s);
        }
        let op =
            |a: (u64, u64), b: (u64, u64)| (a.0 * b.0 % 1_000_003, (a.1 * b.0 + b.1) % 1_000_003);
        let elem = |e: usize| (e as u64 % 7 + 2, e as u64 % 11);
        let piece = |_: usize, r: Range<usize>| r.fold((1, 0), |a, e| op(a, elem(e)));
        let want = reduce_by_offsets(&SITE, &offsets, &|| (1, 0), &op, None, &piece);
        let got = with_backend(Backend::Rayon, || {
            reduce_by_offsets(
                &SITE,
                &offsets,
                &|| (1, 0),
                &op,
                Some(block_len(offsets.len() + offsets[offsets.len() - 1])),
                &piece,
            )
        });
        assert_eq!(got, want);
    }
}
