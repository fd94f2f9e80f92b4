//! Sorting: [`sort_permutation`], the stable order of `u64` keys as a permutation of their
//! indices (to gather values by, or to group equal keys into segments).
//!
//! Parallel algorithms: on the host, a stable sort of the indices by key (rayon's parallel merge
//! sort, or the standard library's on the calling thread). On a device, a stable LSD radix sort
//! of the keys carrying their indices: one pass per 4-bit digit that is not the same in every
//! key, each a per-tile histogram, its exclusive scan and a stable scatter.

use super::{alloc, go_parallel};
use crate::gpu::sort as device;
use crate::site::Site;
use rayon::prelude::*;

/// The stable ascending permutation of `keys`: `perm[i]` is the index of the `i`-th smallest
/// key, and equal keys keep their input order. The output has the length of the input.
///
/// `perm` is what `(0..keys.len()).collect::<Vec<_>>().sort_by_key(|&i| keys[i])` gives:
/// `perm.iter().map(|&i| keys[i])` is `keys` sorted, and `perm.iter().map(|&i| values[i])` the
/// values of `keys` in that order.
///
/// # Panics
///
/// If the output cannot be allocated.
///
/// ```
/// use comprehension_runtime::segmented::sort_permutation;
/// let keys = [30, 10, 20, 10];
/// let perm = sort_permutation(&keys);
/// assert_eq!(perm, vec![1, 3, 2, 0]);
/// assert_eq!(perm.iter().map(|&i| keys[i]).collect::<Vec<u64>>(), [10, 10, 20, 30]);
/// ```
pub fn sort_permutation(keys: &[u64]) -> Vec<usize> {
    static SITE: Site = Site::api("parcomp::segmented::sort_permutation");
    sort_permutation_at(&SITE, keys)
}

/// [`sort_permutation`] for a step of a comprehension written at `site` (`order by`, `group
/// by`), which the trace names.
pub(crate) fn sort_permutation_at(site: &'static Site, keys: &[u64]) -> Vec<usize> {
    crate::dispatch::primitive(
        site,
        || keys.len() as u64,
        |b| device::sort_permutation(b, site, keys),
        || sort_permutation_host(site, keys),
    )
}

fn sort_permutation_host(site: &Site, keys: &[u64]) -> Vec<usize> {
    let n = keys.len();
    let mut perm = alloc(site, n);
    perm.extend(0..n);
    // Both sorts are stable: equal keys keep their indices' (input) order.
    if go_parallel(n) {
        perm.par_sort_by_key(|&i| keys[i]);
    } else {
        perm.sort_by_key(|&i| keys[i]);
    }
    perm
}
