//! Segmented (inclusive) scan: a scan that restarts at every segment start.
//!
//! Parallel algorithm: a blocked three-phase scan of the `(flag, value)` operator without
//! materialising the pairs. Phase 1 computes, for every block in parallel, whether a segment
//! starts in it and the total of its last (possibly partial) segment; phase 2 turns those into
//! every block's carry-in sequentially (a block with a start resets the carry); phase 3 rescans
//! every block in parallel from its carry, writing straight into the result. Work `O(n)`, and a
//! segment spanning many blocks (one huge segment) is split like any other data.

use super::{alloc, block_len, blocks, build_in_parts, check_lengths, go_parallel};
use crate::site::Site;
use rayon::prelude::*;

/// Inclusive scan of `values` that restarts at every segment start: `out[i]` is the reduction of
/// `values[s..=i]`, where `s` is the start of the segment holding `i`.
///
/// A segment starts wherever `flags` is `true`, and at index 0 whatever `flags[0]` is. `op` must
/// be associative and `identity` its neutral element; it need not be commutative.
///
/// # Panics
///
/// If `flags.len() != values.len()` (the message names both lengths).
///
/// ```
/// use comprehension_runtime::segmented::segmented_scan;
/// let flags = [true, false, false, true, false, true];
/// assert_eq!(
///     segmented_scan(&flags, &[1, 2, 3, 4, 5, 6], 0, |a, b| a + b),
///     vec![1, 3, 6, 4, 9, 6]
/// );
/// ```
#[track_caller]
pub fn segmented_scan<T, F>(flags: &[bool], values: &[T], identity: T, op: F) -> Vec<T>
where
    T: Copy + Send + Sync,
    F: Fn(T, T) -> T + Sync,
{
    static SITE: Site = Site::api("parcomp::segmented::segmented_scan");
    check_lengths("segmented_scan", flags.len(), values.len());
    let n = values.len();
    if !go_parallel(n) {
        let mut out = alloc(&SITE, n);
        scan_block(flags, values, 0, identity, identity, &op, |v| out.push(v));
        return out;
    }
    let len = block_len(n);
    let ranges = blocks(n, len);
    // Phase 1: per block, whether a segment starts in it, and the total of its last segment
    // (of the whole block when none starts in it).
    let summaries: Vec<(bool, T)> = ranges
        .par_iter()
        .map(|r| {
            let mut started = false;
            let mut acc = identity;
            for i in r.clone() {
                if flags[i] || i == 0 {
                    started = true;
                    acc = identity;
                }
                acc = op(acc, values[i]);
            }
            (started, acc)
        })
        .collect();
    // Phase 2: every block's carry-in.
    let mut carries = Vec::with_capacity(summaries.len());
    let mut carry = identity;
    for &(started, total) in &summaries {
        carries.push(carry);
        carry = if started { total } else { op(carry, total) };
    }
    // Phase 3: rescan every block from its carry.
    let parts: Vec<usize> = ranges.iter().map(|r| r.len()).collect();
    let (out, _) = build_in_parts(&SITE, &parts, |k, w| {
        let r = ranges[k].clone();
        scan_block(
            &flags[r.clone()],
            &values[r.clone()],
            r.start,
            carries[k],
            identity,
            &op,
            |v| w.push(v),
        );
    });
    out
}

/// Scans one block whose first element is `values[first]` of the whole input, starting from
/// `carry` and restarting from `identity` at every segment start.
#[inline]
fn scan_block<T: Copy, F: Fn(T, T) -> T>(
    flags: &[bool],
    values: &[T],
    first: usize,
    carry: T,
    identity: T,
    op: &F,
    mut emit: impl FnMut(T),
) {
    let mut acc = carry;
    for (i, (&flag, &v)) in flags.iter().zip(values).enumerate() {
        if flag || first + i == 0 {
            acc = identity;
        }
        acc = op(acc, v);
        emit(acc);
    }
}
