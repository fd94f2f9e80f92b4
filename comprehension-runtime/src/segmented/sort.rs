//! Sorting: [`sort_permutation`], the stable order of `u64` keys as a permutation of their
//! indices (to gather values by, or to group equal keys into segments).
//!
//! Parallel algorithms: on the host, a stable LSD radix sort of the keys carrying their indices
//! (a pass per byte that varies: histograms per block, their running sums, a scatter per
//! block, the blocks in parallel). On a device, a stable LSD radix sort
//! of the keys carrying their indices: one pass per 4-bit digit that is not the same in every
//! key, each a per-tile histogram, its exclusive scan and a stable scatter.

use super::{alloc, go_parallel, Places};
use crate::gpu::sort as device;
use crate::gpu::PrimitivePrograms;
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
        PrimitivePrograms::Runtime,
        || keys.len() as u64,
        |b| device::sort_permutation(b, site, keys),
        || sort_permutation_host(site, keys),
    )
}

fn sort_permutation_host(site: &Site, keys: &[u64]) -> Vec<usize> {
    radix_permutation(site, keys)
}

/// The stable ascending permutation of `keys` on the host: an LSD radix sort of the keys
/// carrying their indices, one pass per byte that is not the same in every key (a key of 12
/// varying bits takes two passes), each pass a histogram of its byte per block, their running
/// sums in (byte value, block) order, and each block scattering its elements from its own
/// counters — the blocks in parallel, each in order, so equal keys keep their input order.
/// `K` is a `u64` (a number's `OrderKey::radix`) or a `u128` (a pair's `OrderKey::packed`).
pub(crate) fn radix_permutation<K>(site: &Site, keys: &[K]) -> Vec<usize>
where
    K: Copy + Send + Sync + Into<u128>,
{
    let n = keys.len();
    let parallel = go_parallel(n);
    // The bits that differ between keys: set in some, not in all.
    let both = |(any, all): (u128, u128), (a, b): (u128, u128)| (any | a, all & b);
    let one = |acc: (u128, u128), &k: &K| both(acc, (k.into(), k.into()));
    let none = (0u128, !0u128);
    let (any, all) = if parallel {
        keys.par_iter().fold(|| none, one).reduce(|| none, both)
    } else {
        keys.iter().fold(none, one)
    };
    let varying = any ^ all;
    let bytes: Vec<u32> =
        (0..size_of::<K>() as u32).filter(|b| (varying >> (8 * b)) & 0xFF != 0).collect();
    let mut order: Vec<usize> = alloc(site, n);
    order.extend(0..n);
    if bytes.is_empty() {
        return order;
    }
    let mut sorted: Vec<K> = alloc(site, n);
    sorted.extend_from_slice(keys);
    let (mut next_order, mut next_sorted): (Vec<usize>, Vec<K>) = (alloc(site, n), alloc(site, n));
    let blocks = if parallel { 4 * rayon::current_num_threads().max(1) } else { 1 };
    let len = n.div_ceil(blocks).max(1);
    for b in bytes {
        let byte = |k: K| ((k.into() >> (8 * b)) & 0xFF) as usize;
        let histogram = |chunk: &[K]| {
            let mut h = [0usize; 256];
            for &k in chunk {
                h[byte(k)] += 1;
            }
            h
        };
        let mut firsts: Vec<[usize; 256]> = if parallel {
            sorted.par_chunks(len).map(histogram).collect()
        } else {
            sorted.chunks(len).map(histogram).collect()
        };
        let mut at = 0;
        for value in 0..256 {
            for h in firsts.iter_mut() {
                let count = h[value];
                h[value] = at;
                at += count;
            }
        }
        debug_assert_eq!(at, n, "every element has a place");
        let (keys_out, order_out) =
            (Places::new(next_sorted.as_mut_ptr()), Places::new(next_order.as_mut_ptr()));
        let scatter = |((chunk, indices), next): ((&[K], &[usize]), &mut [usize; 256])| {
            for (&k, &i) in chunk.iter().zip(indices) {
                let at = &mut next[byte(k)];
                assert!(*at < n, "a place within the elements");
                // SAFETY: `*at < n`, the capacity of both outputs; the (byte value, block)
                // ranges of the running sums partition `0..n` and each block advances only
                // its own counters, so no place is written twice in this pass.
                unsafe {
                    keys_out.write(*at, k);
                    order_out.write(*at, i);
                }
                *at += 1;
            }
        };
        if parallel {
            sorted
                .par_chunks(len)
                .zip(order.par_chunks(len))
                .zip(firsts.par_iter_mut())
                .for_each(scatter);
        } else {
            sorted.chunks(len).zip(order.chunks(len)).zip(firsts.iter_mut()).for_each(scatter);
        }
        // SAFETY: the pass wrote every place `0..n` of both (the histograms count every element
        // once and their running sums give `n` places); the values are `Copy`, and a panic above
        // leaves the lengths as they were, so nothing is read uninitialised or dropped twice.
        unsafe {
            next_sorted.set_len(n);
            next_order.set_len(n);
        }
        std::mem::swap(&mut sorted, &mut next_sorted);
        std::mem::swap(&mut order, &mut next_order);
        // SAFETY: shortening to 0 only forgets `Copy` values; the next pass writes them anew.
        unsafe {
            next_sorted.set_len(0);
            next_order.set_len(0);
        }
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    static SITE: Site = Site::api("radix_permutation test");

    /// The stable sort's permutation, for comparison.
    fn stable<K: Ord>(keys: &[K]) -> Vec<usize> {
        let mut perm: Vec<usize> = (0..keys.len()).collect();
        perm.sort_by(|&a, &b| keys[a].cmp(&keys[b]));
        perm
    }

    #[test]
    fn radix_permutations_are_the_stable_sorts() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for n in [0, 1, 2, 255, 256, 257, 10_000, 300_000] {
            // Every byte varying, a few low bits (one pass, many ties), high bits only.
            let wide: Vec<u64> = (0..n).map(|_| next()).collect();
            let ties: Vec<u64> = (0..n).map(|_| next() % 5).collect();
            let high: Vec<u64> = (0..n).map(|_| (next() % 3) << 60).collect();
            for keys in [&wide, &ties, &high] {
                assert_eq!(radix_permutation(&SITE, keys), stable(keys), "n = {n}");
            }
            // Pairs packed into a u128: the high half decides first.
            let pairs: Vec<u128> =
                (0..n).map(|_| (u128::from(next() % 4) << 64) | u128::from(next() % 7)).collect();
            assert_eq!(radix_permutation(&SITE, &pairs), stable(&pairs), "n = {n}");
        }
        assert_eq!(radix_permutation(&SITE, &[7u64; 5]), [0, 1, 2, 3, 4]);
        assert_eq!(radix_permutation(&SITE, &[u64::MAX, 0, u64::MAX, 1]), [1, 3, 0, 2]);
    }
}
