//! Prefix sums (scans) under an associative operator, and the offsets of rows given by sizes.
//!
//! Parallel algorithm (blocked three-phase scan): cut the input into a few blocks per thread;
//! reduce every block in parallel; scan the block totals sequentially (there are only a few
//! dozen) to get each block's carry-in; rescan every block in parallel starting from its carry,
//! writing straight into the result. Work is `2n` applications of `op`, span `O(n / p + p)`.

use super::{alloc, block_len, blocks, build_in_parts, go_parallel, SEQUENTIAL_CUTOFF};
use crate::site::Site;
use rayon::prelude::*;

/// Inclusive scan: `out[i] = values[0] op values[1] op ... op values[i]`.
///
/// `op` must be associative and `identity` its neutral element (see the
/// [module documentation](crate::segmented)). The output has the length of the input.
///
/// ```
/// use comprehension_runtime::segmented::scan_inclusive;
/// assert_eq!(scan_inclusive(&[1, 2, 3, 4], 0, |a, b| a + b), vec![1, 3, 6, 10]);
/// ```
pub fn scan_inclusive<T, F>(values: &[T], identity: T, op: F) -> Vec<T>
where
    T: Copy + Send + Sync,
    F: Fn(T, T) -> T + Sync,
{
    static SITE: Site = Site::api("parcomp::segmented::scan_inclusive");
    scan(&SITE, values, identity, &op, true)
}

/// Exclusive scan: `out[0] = identity`, `out[i] = values[0] op ... op values[i - 1]`.
///
/// The output has the length of the input (the total of all values is not part of it).
/// `op` must be associative and `identity` its neutral element.
///
/// ```
/// use comprehension_runtime::segmented::scan_exclusive;
/// assert_eq!(scan_exclusive(&[1, 2, 3, 4], 0, |a, b| a + b), vec![0, 1, 3, 6]);
/// ```
pub fn scan_exclusive<T, F>(values: &[T], identity: T, op: F) -> Vec<T>
where
    T: Copy + Send + Sync,
    F: Fn(T, T) -> T + Sync,
{
    static SITE: Site = Site::api("parcomp::segmented::scan_exclusive");
    scan(&SITE, values, identity, &op, false)
}

/// Scans `block` starting from `carry`, handing every output to `emit`.
#[inline]
fn scan_block<T: Copy, F: Fn(T, T) -> T>(
    block: &[T],
    carry: T,
    op: &F,
    inclusive: bool,
    mut emit: impl FnMut(T),
) {
    let mut acc = carry;
    for &v in block {
        if inclusive {
            acc = op(acc, v);
            emit(acc);
        } else {
            emit(acc);
            acc = op(acc, v);
        }
    }
}

fn scan<T, F>(site: &Site, values: &[T], identity: T, op: &F, inclusive: bool) -> Vec<T>
where
    T: Copy + Send + Sync,
    F: Fn(T, T) -> T + Sync,
{
    let n = values.len();
    if !go_parallel(n) {
        let mut out = alloc(site, n);
        scan_block(values, identity, op, inclusive, |v| out.push(v));
        return out;
    }
    let len = block_len(n);
    // Phase 1: the total of every block.
    let totals: Vec<T> =
        values.par_chunks(len).map(|block| block.iter().fold(identity, |a, &v| op(a, v))).collect();
    // Phase 2: every block's carry-in.
    let mut carries = Vec::with_capacity(totals.len());
    let mut acc = identity;
    for &total in &totals {
        carries.push(acc);
        acc = op(acc, total);
    }
    // Phase 3: rescan every block from its carry, in place in the result.
    let parts: Vec<usize> = blocks(n, len).iter().map(|r| r.len()).collect();
    let (out, _) = build_in_parts(site, &parts, |k, w| {
        let start = k * len;
        scan_block(&values[start..start + parts[k]], carries[k], op, inclusive, |v| w.push(v));
    });
    out
}

/// The offsets of `n` rows of sizes `size(0)`, ..., `size(n - 1)`: `n + 1` values from 0 to
/// the total. Panics naming `site` when the total overflows `usize`, and when `size` does not
/// give the same answers twice (the parallel path calls it twice per row).
pub(super) fn offsets_from_sizes<S>(site: &Site, n: usize, size: S) -> Vec<usize>
where
    S: Fn(usize) -> usize + Sync,
{
    let add =
        |acc: usize, i: usize| acc.checked_add(size(i)).unwrap_or_else(|| site.size_overflow());
    if n < SEQUENTIAL_CUTOFF || !super::rayon_backend() {
        let mut out = alloc(site, n + 1);
        out.push(0);
        let mut acc = 0usize;
        for i in 0..n {
            acc = add(acc, i);
            out.push(acc);
        }
        return out;
    }
    let len = block_len(n);
    let ranges = blocks(n, len);
    // Phase 1: the total size of every block.
    let totals: Vec<usize> = ranges.par_iter().map(|r| r.clone().fold(0, add)).collect();
    // Phase 2: every block's first offset.
    let mut carries = Vec::with_capacity(totals.len() + 1);
    let mut acc = 0usize;
    for &total in &totals {
        carries.push(acc);
        acc = acc.checked_add(total).unwrap_or_else(|| site.size_overflow());
    }
    carries.push(acc);
    // Phase 3: the offsets of every block; part 0 also holds the leading 0.
    let parts: Vec<usize> =
        ranges.iter().enumerate().map(|(k, r)| r.len() + usize::from(k == 0)).collect();
    let (out, _) = build_in_parts(site, &parts, |k, w| {
        if k == 0 {
            w.push(0);
        }
        let mut acc = carries[k];
        for i in ranges[k].clone() {
            acc = add(acc, i);
            w.push(acc);
        }
        if acc != carries[k + 1] {
            site.size_changed(carries[k + 1] - carries[k], acc - carries[k]);
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{with_backend, Backend};

    #[test]
    fn offsets_on_both_backends() {
        static SITE: Site = Site::api("test");
        let sizes: Vec<usize> = (0..20_000).map(|i| (i * 7919) % 13).collect();
        let mut want = vec![0];
        for &s in &sizes {
            want.push(want.last().unwrap() + s);
        }
        for &b in Backend::ALL {
            assert_eq!(
                with_backend(b, || offsets_from_sizes(&SITE, sizes.len(), |i| sizes[i])),
                want
            );
        }
        assert_eq!(offsets_from_sizes(&SITE, 0, |_| 1), vec![0]);
    }

    #[test]
    #[should_panic(expected = "more elements than usize can count")]
    fn offsets_overflow_in_parallel() {
        static SITE: Site = Site::api("test");
        with_backend(Backend::Rayon, || {
            offsets_from_sizes(&SITE, 10_000, |i| if i == 9_000 { usize::MAX } else { 1 })
        });
    }
}
