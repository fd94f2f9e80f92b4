//! Expansion: every input element `a` becomes a row of `size(a)` elements `get(a, i)`.
//!
//! Parallel algorithms: [`expand`] is exactly what the comprehension engine
//! ([`crate::pipeline`]) does, so it runs there (the sizes are prefix-summed and the flattened
//! output is cut into equal ranges; one huge row is split, empty rows cost only their size).
//! [`expand_reduce`] and [`expand_outer_reduce`] never materialise the expanded array: the sizes
//! are prefix-summed in parallel into row offsets (checked for overflow), the merge path of row
//! ends and elements is cut into equal chunks, every chunk reduces its pieces of rows, and the
//! pieces of rows cut by chunk boundaries are combined in order afterwards (see
//! [`reduce_rows`](super::reduce_rows)).

use super::scan::offsets_from_sizes;
use super::segmented_reduce::reduce_by_offsets;
use super::{alloc, parallel_blocks, rayon_backend, SEQUENTIAL_CUTOFF};
use crate::pipeline::source;
use crate::site::Site;
use rayon::prelude::*;

/// Expands every element `a` of `input` into `size(a)` elements `get(a, 0)`, ...,
/// `get(a, size(a) - 1)`, and concatenates the rows in order (Futhark's `expand`, Thrust's
/// expand).
///
/// The output has the sum of the sizes as its length; rows of size 0 contribute nothing.
/// `size` and `get` must be pure: they may be called more than once per element, from any
/// thread.
///
/// # Panics
///
/// If the sum of the sizes overflows `usize` (a clear message, never a wrapped size), if the
/// output cannot be allocated, or if `size` or `get` panics (the panic reaches the caller).
///
/// ```
/// use comprehension_runtime::segmented::expand;
/// // Thrust's expand: every value repeated `count` times.
/// let input = [(2, 'A'), (0, 'B'), (3, 'C')];
/// assert_eq!(
///     expand(&input, |&(count, _)| count, |&(_, value), _| value),
///     vec!['A', 'A', 'C', 'C', 'C']
/// );
/// ```
pub fn expand<A, B, S, G>(input: &[A], size: S, get: G) -> Vec<B>
where
    A: Copy + Send + Sync,
    B: Send,
    S: Fn(&A) -> usize + Sync,
    G: Fn(&A, usize) -> B + Sync,
{
    static SITE: Site = Site::api("parcomp::segmented::expand");
    source(&SITE, input).expand(|a| 0..size(a)).map(|(a, i)| get(&a, i)).collect()
}

/// Reduces every expanded row that is not empty: for every `a` of `input` with `size(a) > 0`,
/// `get(a, 0) op get(a, 1) op ... op get(a, size(a) - 1)`, in order (Futhark's
/// `expand_reduce`). Rows of size 0 give no result; use [`expand_outer_reduce`] to get the
/// identity for them instead.
///
/// The expanded array is never built. `op` must be associative and `identity` its neutral
/// element; it need not be commutative. `size` and `get` must be pure.
///
/// # Panics
///
/// If the sum of the sizes overflows `usize` (a clear message, never a wrapped size), or if a
/// user closure panics.
///
/// ```
/// use comprehension_runtime::segmented::expand_reduce;
/// // Row x is 0, x, 2x, ..., x * (x - 1).
/// let sums = expand_reduce(&[2, 0, 3, 1], |&x| x, |&x, i| x * i, 0, |a, b| a + b);
/// assert_eq!(sums, vec![2, 9, 0]);
/// ```
pub fn expand_reduce<A, B, S, G, F>(input: &[A], size: S, get: G, identity: B, op: F) -> Vec<B>
where
    A: Copy + Send + Sync,
    B: Copy + Send + Sync,
    S: Fn(&A) -> usize + Sync,
    G: Fn(&A, usize) -> B + Sync,
    F: Fn(B, B) -> B + Sync,
{
    static SITE: Site = Site::api("parcomp::segmented::expand_reduce");
    reduce_expanded(&SITE, input, &size, &get, identity, &op, false)
}

/// Reduces every expanded row: for every `a` of `input`, `identity op get(a, 0) op ... op
/// get(a, size(a) - 1)`, in order; a row of size 0 gives `identity` (Futhark's
/// `expand_outer_reduce`). The output has the length of the input.
///
/// The expanded array is never built. `op` must be associative and `identity` its neutral
/// element; it need not be commutative. `size` and `get` must be pure.
///
/// # Panics
///
/// If the sum of the sizes overflows `usize` (a clear message, never a wrapped size), or if a
/// user closure panics.
///
/// ```
/// use comprehension_runtime::segmented::expand_outer_reduce;
/// let sums = expand_outer_reduce(&[2, 0, 3, 1], |&x| x, |&x, i| x * i, 0, |a, b| a + b);
/// assert_eq!(sums, vec![2, 0, 9, 0]);
/// ```
pub fn expand_outer_reduce<A, B, S, G, F>(
    input: &[A],
    size: S,
    get: G,
    identity: B,
    op: F,
) -> Vec<B>
where
    A: Copy + Send + Sync,
    B: Copy + Send + Sync,
    S: Fn(&A) -> usize + Sync,
    G: Fn(&A, usize) -> B + Sync,
    F: Fn(B, B) -> B + Sync,
{
    static SITE: Site = Site::api("parcomp::segmented::expand_outer_reduce");
    reduce_expanded(&SITE, input, &size, &get, identity, &op, true)
}

/// The reduction of every expanded row; with `keep_empty`, `identity` for empty rows, else
/// nothing for them.
fn reduce_expanded<A, B, S, G, F>(
    site: &Site,
    input: &[A],
    size: &S,
    get: &G,
    identity: B,
    op: &F,
    keep_empty: bool,
) -> Vec<B>
where
    A: Copy + Send + Sync,
    B: Copy + Send + Sync,
    S: Fn(&A) -> usize + Sync,
    G: Fn(&A, usize) -> B + Sync,
    F: Fn(B, B) -> B + Sync,
{
    let n = input.len();
    let row =
        |a: &A, range: std::ops::Range<usize>| range.fold(identity, |acc, i| op(acc, get(a, i)));
    if !rayon_backend() {
        // The reference: check the sizes first (a size sum that overflows is an error on every
        // backend, and must not first run for ages), then one plain loop per row.
        input.iter().fold(0usize, |total, a| {
            total.checked_add(size(a)).unwrap_or_else(|| site.size_overflow())
        });
        let mut out = alloc(site, n);
        for a in input {
            let len = size(a);
            if len > 0 || keep_empty {
                out.push(row(a, 0..len));
            }
        }
        return out;
    }
    let offsets = offsets_from_sizes(site, n, |i| size(&input[i]));
    let work = n.checked_add(offsets[n]).unwrap_or_else(|| site.size_overflow());
    let all =
        reduce_by_offsets(site, &offsets, &|| identity, op, parallel_blocks(work), &|r, range| {
            let start = offsets[r];
            row(&input[r], range.start - start..range.end - start)
        });
    if keep_empty {
        return all;
    }
    let non_empty = |&r: &usize| offsets[r] < offsets[r + 1];
    if n < SEQUENTIAL_CUTOFF {
        (0..n).filter(non_empty).map(|r| all[r]).collect()
    } else {
        (0..n).into_par_iter().filter(non_empty).map(|r| all[r]).collect()
    }
}
