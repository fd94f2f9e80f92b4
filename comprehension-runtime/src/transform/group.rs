//! `group by KEY`: the elements so far, grouped by key in ascending key order (GHC's
//! `groupWith`), each group's values kept in their order, one column per variable.

use super::order::{permutation_of, OrderKey};
use crate::segmented::{go_parallel, Places};
use crate::site::Site;
use crate::source::Source;
use rayon::prelude::*;
use std::cmp::Ordering;
use std::ops::Range;

/// The values of the variables that are not the key, as a tuple: stored as one `Vec` per
/// variable, so that after `group by` each variable is its group's values as a slice.
pub trait Columns: Sized {
    /// One `Vec` per variable.
    type Vecs: Send + Sync;
    /// One slice per variable.
    type Slices<'a>: Clone + Send + Sync
    where
        Self: 'a;
    /// The values, one column per variable.
    fn unzip(values: Vec<Self>) -> Self::Vecs;
    /// The rows `range` of every column.
    fn slices(vecs: &Self::Vecs, range: Range<usize>) -> Self::Slices<'_>;
    /// The values of `rows`, one column per variable, row `i`'s at `dest[i]`, in parallel;
    /// with the keys of the rows placed where `first` is set, and their places.
    ///
    /// # Safety
    ///
    /// `dest` must be a permutation of `0..rows.len()`: each place is written exactly once.
    #[allow(clippy::type_complexity)]
    unsafe fn unzip_to<Key: Send>(
        rows: Vec<(Key, Self)>,
        dest: &[u32],
        first: &[bool],
    ) -> (Vec<(u32, Key)>, Self::Vecs);
}

macro_rules! tuple_columns {
    ($(($($name:ident $index:tt),*))*) => {$(
        impl<$($name: Send + Sync),*> Columns for ($($name,)*) {
            type Vecs = ($(Vec<$name>,)*);
            type Slices<'a> = ($(&'a [$name],)*) where Self: 'a;
            #[allow(unused_variables, clippy::unused_unit)]
            fn unzip(values: Vec<Self>) -> Self::Vecs {
                let n = values.len();
                #[allow(unused_mut)]
                let mut vecs: Self::Vecs = ($(Vec::<$name>::with_capacity(n),)*);
                for value in values {
                    $( vecs.$index.push(value.$index); )*
                }
                vecs
            }
            #[allow(unused_variables, unused_mut, unused_unsafe, clippy::unused_unit)]
            unsafe fn unzip_to<Key: Send>(
                rows: Vec<(Key, Self)>,
                dest: &[u32],
                first: &[bool],
            ) -> (Vec<(u32, Key)>, Self::Vecs) {
                let n = rows.len();
                assert!(dest.len() == n && first.len() == n, "a place for each row");
                let mut vecs: Self::Vecs = ($(Vec::<$name>::with_capacity(n),)*);
                let columns = ($(Places::new(vecs.$index.as_mut_ptr()),)*);
                let place = |((key, value), &d): ((Key, Self), &u32)| {
                    let d = d as usize;
                    assert!(d < n, "a place within the rows");
                    // SAFETY: `d < n`, the capacity of every column, and the caller promises
                    // that no other row is placed at `d`.
                    unsafe { $( columns.$index.write(d, value.$index); )* }
                    first[d].then_some((d as u32, key))
                };
                let keys = if go_parallel(n) {
                    rows.into_par_iter().zip(dest.par_iter()).filter_map(place).collect()
                } else {
                    rows.into_iter().zip(dest).filter_map(place).collect()
                };
                // SAFETY: every place `0..n` of every column was written once above (`dest` is
                // a permutation of `0..n`, checked in length and range). A panic above leaves
                // the lengths 0: the values written are leaked, never read or dropped twice.
                unsafe { $( vecs.$index.set_len(n); )* }
                (keys, vecs)
            }
            #[allow(unused_variables, clippy::unused_unit)]
            fn slices(vecs: &Self::Vecs, range: Range<usize>) -> Self::Slices<'_> {
                ($(&vecs.$index[range.clone()],)*)
            }
        }
    )*};
}

tuple_columns! {
    ()
    (A 0)
    (A 0, B 1)
    (A 0, B 1, C 2)
    (A 0, B 1, C 2, D 3)
    (A 0, B 1, C 2, D 3, E 4)
    (A 0, B 1, C 2, D 3, E 4, F 5)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11)
}

/// The groups of a `group by`: group `g` has key `keys[g]` and the values
/// `starts[g]..starts[g + 1]` of every column. A source: its elements are `(key, slices)`.
pub struct Groups<K, V: Columns> {
    keys: Vec<K>,
    starts: Vec<usize>,
    columns: V::Vecs,
}

impl<K, V: Columns> Groups<K, V> {
    /// The number of groups.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether there is no group (no element was grouped).
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

/// `group by`: the `(key, values)` pairs gathered so far, stably ordered by key and cut where
/// the key changes.
///
/// Keys that pack into a `u128` in their order ([`OrderKey::PACKED`]: one integer or float, a
/// pair of them, or a tuple of them whose components after the first fit in 64 bits) are not
/// sorted: each element's group is found by indexing (keys in a range
/// no wider than the elements) or by a hash table of the distinct keys, only the distinct keys
/// are sorted, and a counting sort places the elements, each block of them in parallel. Other
/// keys (strings, tuples of wide numbers, keys of your own) are stably sorted, as are number keys when
/// a device backend is forced (its radix sort, see [`order_by`](super::order_by)).
pub fn group_by<K, V>(site: &'static Site, items: Vec<(K, V)>) -> Groups<K, V>
where
    K: OrderKey + Send + Sync,
    V: Columns + Send + Sync,
{
    let n = items.len();
    let key = key_of::<K, V>;
    let device_forced = matches!(crate::backend::selection(), Some(b) if b.is_device());
    let (dest, starts) = if K::PACKED && !(K::RADIX && device_forced) && n < u32::MAX as usize {
        crate::dispatch::ran_on_host(site, || {
            let how = "grouped on the host by hashing or indexing the keys";
            if K::RADIX {
                how.to_string()
            } else {
                format!(
                    "the key `{}` is not one integer or float: {how}",
                    std::any::type_name::<K>()
                )
            }
        });
        counting_places(&items, key)
    } else {
        // The stable sort: the group of the element in place `j` starts where its key differs
        // from the one before.
        let perm = permutation_of(site, &items, key, false);
        let new_group =
            |j: usize| j == 0 || items[perm[j]].0.cmp_key(&items[perm[j - 1]].0) != Ordering::Equal;
        let starts: Vec<usize> = if go_parallel(n) {
            (0..n).into_par_iter().filter(|&j| new_group(j)).collect()
        } else {
            (0..n).filter(|&j| new_group(j)).collect()
        };
        assert!(n < u32::MAX as usize, "group by more than 2^32 - 1 elements");
        assert_eq!(perm.len(), n, "the sort orders every element");
        // Checked to be a permutation (the sort may have run on a device): n distinct places.
        let mut dest = vec![u32::MAX; n];
        for (j, &i) in perm.iter().enumerate() {
            assert_eq!(dest[i], u32::MAX, "the sort names each element once");
            dest[i] = j as u32;
        }
        (dest, starts)
    };
    let mut first = vec![false; n];
    for &start in &starts {
        first[start] = true;
    }
    let mut starts = starts;
    starts.push(n);
    // SAFETY: `dest` gives each element a place of its own in `0..n`: the counting sort's
    // running counts, or the inverse of the sort's permutation.
    let (mut firsts, columns) = unsafe { V::unzip_to(items, &dest, &first) };
    // A group's key is the key of its first element.
    firsts.sort_unstable_by_key(|(d, _)| *d);
    let keys = firsts.into_iter().map(|(_, k)| k).collect();
    Groups { keys, starts, columns }
}

/// The key of a row.
fn key_of<K, V>(row: &(K, V)) -> &K {
    &row.0
}

/// Keys whose packed values span (for pairs: whose halves span a grid of) at most this many
/// values per element (or [`DENSE_SPAN`]) are counted in an array indexed by the value, not
/// hashed.
const DENSE_PER_ELEMENT: u128 = 1;
/// See [`DENSE_PER_ELEMENT`].
const DENSE_SPAN: u128 = 1 << 12;

/// A hasher for packed keys (MurmurHash3's finaliser over each half), seeded per process so
/// that keys chosen to collide in one run do not in another.
#[derive(Clone, Copy)]
pub(super) struct PackedHasher(u64);

impl std::hash::Hasher for PackedHasher {
    fn finish(&self) -> u64 {
        mix(self.0)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = mix(self.0 ^ u64::from(b));
        }
    }
    fn write_u128(&mut self, v: u128) {
        // The low half mixed with the seed before the high half joins: keys built to share a
        // hash must know the seed.
        self.0 = mix(self.0 ^ v as u64) ^ (v >> 64) as u64;
    }
}

/// MurmurHash3's 64-bit finaliser: a bijection that spreads every bit over the word.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    z = (z ^ (z >> 33)).wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    z ^ (z >> 33)
}

/// Builds [`PackedHasher`]s with this process's seed.
#[derive(Clone, Copy)]
pub(super) struct PackedState(u64);

impl PackedState {
    pub(super) fn new() -> Self {
        use std::hash::{BuildHasher, Hasher};
        static SEED: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
        PackedState(*SEED.get_or_init(|| {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u8(0);
            h.finish()
        }))
    }
}

impl std::hash::BuildHasher for PackedState {
    type Hasher = PackedHasher;
    fn build_hasher(&self) -> PackedHasher {
        PackedHasher(self.0)
    }
}

/// The stable counting sort of the packed keys `key(row)` of `rows`: where each row goes
/// (`dest`, equal keys in their order, groups in ascending key order) and where each group
/// starts.
///
/// Each element gets a bucket, ascending with its key: its place in the grid of the values its
/// keys' halves span, when that grid is small, else the rank of its key among the distinct keys (found by a hash
/// set per block, merged, and sorted). Then a histogram of buckets per block, their running
/// sums in (bucket, block) order, and each block places its elements from its own counters.
fn counting_places<T: Sync, K: OrderKey>(
    keys: &[T],
    key: impl Fn(&T) -> &K + Sync,
) -> (Vec<u32>, Vec<usize>) {
    let n = keys.len();
    let parallel = go_parallel(n);
    let threads = if parallel { rayon::current_num_threads().max(1) } else { 1 };
    let map_blocks =
        |len: usize, f: &(dyn Fn(usize, std::ops::Range<usize>) -> Vec<u32> + Sync)| {
            let ranges: Vec<_> =
                (0..n.div_ceil(len.max(1))).map(|b| b * len..n.min((b + 1) * len)).collect();
            if parallel {
                ranges.into_par_iter().enumerate().map(|(b, r)| f(b, r)).collect::<Vec<_>>()
            } else {
                ranges.into_iter().enumerate().map(|(b, r)| f(b, r)).collect::<Vec<_>>()
            }
        };
    // The least and greatest high and low halves: a pair of numbers spans a grid of
    // (high span) × (low span) values, one number a line (its high half is 0).
    type Bounds = [u64; 4];
    let none: Bounds = [u64::MAX, 0, u64::MAX, 0];
    let widen = |b: Bounds, t: &T| {
        let p = key(t).packed();
        let (hi, lo) = ((p >> 64) as u64, p as u64);
        [b[0].min(hi), b[1].max(hi), b[2].min(lo), b[3].max(lo)]
    };
    let join =
        |a: Bounds, b: Bounds| [a[0].min(b[0]), a[1].max(b[1]), a[2].min(b[2]), a[3].max(b[3])];
    let [hi_least, hi_most, lo_least, lo_most] = if parallel {
        keys.par_iter().fold(|| none, widen).reduce(|| none, join)
    } else {
        keys.iter().fold(none, widen)
    };
    if n == 0 {
        return (Vec::new(), Vec::new());
    }
    let row = u128::from(lo_most - lo_least) + 1;
    let grid = (u128::from(hi_most - hi_least) + 1).saturating_mul(row);
    let (buckets, bucket_count): (Vec<u32>, usize) = if grid
        <= DENSE_SPAN.max(DENSE_PER_ELEMENT * n as u128)
    {
        // Ascending with the key: the high half's row, then the low half within it.
        let bucket = |t: &T| {
            let p = key(t).packed();
            let (hi, lo) = ((p >> 64) as u64, p as u64);
            (u128::from(hi - hi_least) * row + u128::from(lo - lo_least)) as u32
        };
        let b = if parallel {
            keys.par_iter().map(bucket).collect()
        } else {
            keys.iter().map(bucket).collect()
        };
        (b, grid as usize)
    } else {
        let state = PackedState::new();
        let len = n.div_ceil(threads);
        let sets: Vec<std::collections::HashSet<u128, PackedState>> = {
            let set_of = |r: std::ops::Range<usize>| {
                let mut set = std::collections::HashSet::with_hasher(state);
                set.extend(keys[r].iter().map(|t| key(t).packed()));
                set
            };
            let ranges: Vec<_> =
                (0..n.div_ceil(len)).map(|b| b * len..n.min((b + 1) * len)).collect();
            if parallel {
                ranges.into_par_iter().map(set_of).collect()
            } else {
                ranges.into_iter().map(set_of).collect()
            }
        };
        let mut distinct: Vec<u128> = sets
            .into_iter()
            .reduce(|mut a, b| {
                a.extend(b);
                a
            })
            .expect("there is an element")
            .into_iter()
            .collect();
        if parallel {
            distinct.par_sort_unstable()
        } else {
            distinct.sort_unstable()
        };
        let mut rank = std::collections::HashMap::with_capacity_and_hasher(distinct.len(), state);
        rank.extend(distinct.iter().enumerate().map(|(r, &p)| (p, r as u32)));
        let bucket = |t: &T| rank[&key(t).packed()];
        let b = if parallel {
            keys.par_iter().map(bucket).collect()
        } else {
            keys.iter().map(bucket).collect()
        };
        (b, distinct.len())
    };
    // Few blocks when there are many buckets: a histogram per block is `bucket_count` long.
    let blocks = (threads * 4).min((4 * n / bucket_count).max(threads)).max(1);
    let len = n.div_ceil(blocks);
    let histograms: Vec<Vec<u32>> = map_blocks(len, &|_, r| {
        let mut h = vec![0u32; bucket_count];
        for &b in &buckets[r] {
            h[b as usize] += 1;
        }
        h
    });
    // The first place of each (block, bucket), bucket by bucket, block by block.
    let mut firsts = histograms;
    let mut starts = Vec::new();
    let mut at = 0u32;
    for bucket in 0..bucket_count {
        let start = at;
        for h in firsts.iter_mut() {
            let count = h[bucket];
            h[bucket] = at;
            at += count;
        }
        if at > start {
            starts.push(start as usize);
        }
    }
    // Each block's buckets replaced by its elements' places, counted from its own firsts.
    let mut dest = buckets;
    let place = |(chunk, next): (&mut [u32], &mut Vec<u32>)| {
        for d in chunk {
            let bucket = *d as usize;
            *d = next[bucket];
            next[bucket] += 1;
        }
    };
    if parallel {
        dest.par_chunks_mut(len).zip(firsts.par_iter_mut()).for_each(place);
    } else {
        dest.chunks_mut(len).zip(firsts.iter_mut()).for_each(place);
    }
    (dest, starts)
}

impl<'a, K: Clone, V: Columns> Source for &'a Groups<K, V> {
    type Item = (K, V::Slices<'a>);
    #[inline]
    fn size(&self) -> usize {
        self.keys.len()
    }
    #[inline]
    fn fetch(&self, index: usize) -> Self::Item {
        let range = self.starts[index]..self.starts[index + 1];
        (self.keys[index].clone(), V::slices(&self.columns, range))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Reverse;

    static SITE: Site = Site::api("group_by test");

    #[test]
    fn groups_in_key_order_with_values_in_order() {
        let items = vec![(2, ('a', 1)), (1, ('b', 2)), (2, ('c', 3)), (1, ('d', 4)), (3, ('e', 5))];
        let groups = group_by(&SITE, items);
        let got: Vec<(i32, Vec<char>, Vec<i32>)> = (0..Source::size(&&groups))
            .map(|g| {
                let (k, (a, b)) = Source::fetch(&&groups, g);
                (k, a.to_vec(), b.to_vec())
            })
            .collect();
        assert_eq!(
            got,
            [
                (1, vec!['b', 'd'], vec![2, 4]),
                (2, vec!['a', 'c'], vec![1, 3]),
                (3, vec!['e'], vec![5])
            ]
        );
        let empty: Groups<u8, (u8,)> = group_by(&SITE, Vec::new());
        assert!(empty.is_empty());
        // Floats group by `total_cmp`: -0.0 and 0.0 are two keys, NaN is one.
        let floats = group_by(&SITE, vec![(0.0, ()), (f64::NAN, ()), (-0.0, ()), (f64::NAN, ())]);
        assert_eq!(floats.len(), 3);
        // Pairs: a small grid of halves, indexed; Reverse keys descend.
        let pairs = group_by(
            &SITE,
            vec![((2u8, -1i32), ('a',)), ((1, 5), ('b',)), ((2, -1), ('c',)), ((1, -3), ('d',))],
        );
        assert_eq!(pairs.keys, [(1, -3), (1, 5), (2, -1)]);
        assert_eq!(pairs.starts, [0, 1, 2, 4]);
        assert_eq!(pairs.columns.0, ['d', 'b', 'a', 'c']);
        let reversed =
            group_by(&SITE, vec![(Reverse(1u16), ()), (Reverse(7), ()), (Reverse(1), ())]);
        assert_eq!(reversed.keys, [Reverse(7), Reverse(1)]);
        assert_eq!(reversed.starts, [0, 1, 3]);
    }
}
