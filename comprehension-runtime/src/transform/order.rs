//! `order by KEY [desc]`: the order of keys ([`OrderKey`]) and the stable sort.

use crate::segmented::go_parallel;
use crate::site::Site;
use rayon::prelude::*;
use std::cmp::{Ordering, Reverse};

/// The order `order by` and `group by` sort keys in, and `par_min_by_key!`/`par_max_by_key!`
/// compare them by.
///
/// It is `Ord` where the type has it (integers, `bool`, `char`, strings), `total_cmp` for
/// floats (`-NaN < -∞ < ... < -0.0 < +0.0 < ... < +∞ < NaN`), lexicographic for tuples,
/// slices, `Vec`s and `Option`s of keys, and reversed under [`Reverse`]. A type of your own
/// that is `Ord` is a key when wrapped in [`ByOrd`] (or implement this trait).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a sort or group key",
    label = "not a parcomp `OrderKey`",
    note = "keys are integers, floats (by `total_cmp`), `bool`, `char`, strings, and tuples, \
            `Option`s, slices and `Vec`s of keys; wrap a type of your own that is `Ord` in \
            `parcomp::ByOrd(..)`"
)]
pub trait OrderKey {
    /// Whether [`OrderKey::radix`] gives the order: the key is one integer or float, sorted by
    /// a radix sort on the device.
    const RADIX: bool = false;
    /// How `self` compares with `other`.
    fn cmp_key(&self, other: &Self) -> Ordering;
    /// A `u64` in the same order as the keys, when [`OrderKey::RADIX`] (else 0).
    fn radix(&self) -> u64 {
        0
    }
    /// The bits [`OrderKey::radix`] may set: it is below `2^RADIX_BITS` (8 for a `u8` or an
    /// `i8`), so that several keys pack side by side.
    const RADIX_BITS: u32 = 64;
    /// Whether [`OrderKey::packed`] gives the order and the equality of keys: one integer or
    /// float, a pair of them, or a tuple of them whose components after the first fit in 64
    /// bits together. `group by` then groups by hashing or indexing the packed keys instead of
    /// sorting the elements, and `order by` radix-sorts them.
    const PACKED: bool = false;
    /// A `u128` in the same order as the keys, equal exactly when they are, when
    /// [`OrderKey::PACKED`] (else 0).
    fn packed(&self) -> u128 {
        0
    }
    /// The bits the high half of [`OrderKey::packed`] may set (its first component's
    /// [`OrderKey::RADIX_BITS`] for a tuple), so that `group by`'s grid may compute a slot from
    /// it without overflow.
    const PACKED_HIGH_BITS: u32 = 64;
}

/// Keys sorted by the radix sort: `$radix` maps a key to a `u64` in the same order, below
/// `2^$bits`.
macro_rules! radix_keys {
    ($($t:ty: $bits:expr),* => |$k:ident| $radix:expr) => {$(
        impl OrderKey for $t {
            const RADIX: bool = true;
            const RADIX_BITS: u32 = $bits;
            #[inline]
            fn cmp_key(&self, other: &Self) -> Ordering {
                self.cmp(other)
            }
            #[inline]
            #[allow(clippy::unnecessary_cast)] // `k as u64` of a `u64`, `as i64` of an `i64`
            fn radix(&self) -> u64 {
                let $k = *self;
                $radix
            }
            const PACKED: bool = true;
            #[inline]
            fn packed(&self) -> u128 {
                u128::from(self.radix())
            }
        }
    )*};
}

radix_keys!(u8: 8, u16: 16, u32: 32, u64: 64, usize: 64, bool: 1, char: 21 => |k| k as u64);
// The distance from the type's least value: negatives first, in as many bits as the type.
radix_keys!(i8: 8, i16: 16, i32: 32, i64: 64, isize: 64 => |k| {
    (k as i64).wrapping_sub(<Self>::MIN as i64) as u64
});

macro_rules! ord_keys {
    ($($t:ty),*) => {$(
        impl OrderKey for $t {
            #[inline]
            fn cmp_key(&self, other: &Self) -> Ordering {
                self.cmp(other)
            }
        }
    )*};
}

ord_keys!(u128, i128, str, String, ());

impl OrderKey for f64 {
    const RADIX: bool = true;
    const PACKED: bool = true;
    #[inline]
    fn packed(&self) -> u128 {
        u128::from(self.radix())
    }
    #[inline]
    fn cmp_key(&self, other: &Self) -> Ordering {
        self.total_cmp(other)
    }
    #[inline]
    fn radix(&self) -> u64 {
        // `total_cmp`'s order as unsigned integers: negative numbers (sign bit set) reversed.
        let bits = self.to_bits();
        if bits >> 63 == 1 {
            !bits
        } else {
            bits | 1 << 63
        }
    }
}

impl OrderKey for f32 {
    const RADIX: bool = true;
    const RADIX_BITS: u32 = 32;
    const PACKED: bool = true;
    #[inline]
    fn packed(&self) -> u128 {
        u128::from(self.radix())
    }
    #[inline]
    fn cmp_key(&self, other: &Self) -> Ordering {
        self.total_cmp(other)
    }
    #[inline]
    fn radix(&self) -> u64 {
        let bits = self.to_bits();
        u64::from(if bits >> 31 == 1 { !bits } else { bits | 1 << 31 })
    }
}

impl<T: OrderKey + ?Sized> OrderKey for &T {
    const RADIX: bool = T::RADIX;
    const RADIX_BITS: u32 = T::RADIX_BITS;
    const PACKED: bool = T::PACKED;
    const PACKED_HIGH_BITS: u32 = T::PACKED_HIGH_BITS;
    #[inline]
    fn packed(&self) -> u128 {
        (**self).packed()
    }
    #[inline]
    fn cmp_key(&self, other: &Self) -> Ordering {
        (**self).cmp_key(*other)
    }
    #[inline]
    fn radix(&self) -> u64 {
        (**self).radix()
    }
}

impl<T: OrderKey + ?Sized> OrderKey for Box<T> {
    const RADIX: bool = T::RADIX;
    const RADIX_BITS: u32 = T::RADIX_BITS;
    const PACKED: bool = T::PACKED;
    const PACKED_HIGH_BITS: u32 = T::PACKED_HIGH_BITS;
    #[inline]
    fn packed(&self) -> u128 {
        (**self).packed()
    }
    fn cmp_key(&self, other: &Self) -> Ordering {
        (**self).cmp_key(other)
    }
    fn radix(&self) -> u64 {
        (**self).radix()
    }
}

impl<T: OrderKey> OrderKey for Reverse<T> {
    const RADIX: bool = T::RADIX;
    const RADIX_BITS: u32 = T::RADIX_BITS;
    const PACKED: bool = T::PACKED;
    fn packed(&self) -> u128 {
        !self.0.packed()
    }
    fn cmp_key(&self, other: &Self) -> Ordering {
        other.0.cmp_key(&self.0)
    }
    fn radix(&self) -> u64 {
        // Complemented within its bits, so that it still packs beside others.
        self.0.radix() ^ (u64::MAX >> (64 - T::RADIX_BITS.clamp(1, 64)))
    }
}

impl<T: OrderKey> OrderKey for Option<T> {
    fn cmp_key(&self, other: &Self) -> Ordering {
        match (self, other) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(a), Some(b)) => a.cmp_key(b),
        }
    }
}

impl<T: OrderKey> OrderKey for [T] {
    fn cmp_key(&self, other: &Self) -> Ordering {
        for (a, b) in self.iter().zip(other) {
            match a.cmp_key(b) {
                Ordering::Equal => {}
                unequal => return unequal,
            }
        }
        self.len().cmp(&other.len())
    }
}

impl<T: OrderKey> OrderKey for Vec<T> {
    fn cmp_key(&self, other: &Self) -> Ordering {
        self.as_slice().cmp_key(other.as_slice())
    }
}

/// Tuples of three or more: packed when every component is a number and those after the first
/// fit in 64 bits together: the first's radix above the others', each in its own bits (so that
/// the packed keys order as the tuples do, and the grid of `group by` indexes the first
/// component by the high half).
macro_rules! tuple_keys {
    ($(($first:ident $first_index:tt, $($name:ident $index:tt),+))*) => {$(
        impl<$first: OrderKey, $($name: OrderKey),+> OrderKey for ($first, $($name,)+) {
            const PACKED: bool =
                $first::RADIX $(&& $name::RADIX)+ && 0 $(+ $name::RADIX_BITS)+ <= 64;
            const PACKED_HIGH_BITS: u32 = $first::RADIX_BITS;
            fn cmp_key(&self, other: &Self) -> Ordering {
                match self.$first_index.cmp_key(&other.$first_index) {
                    Ordering::Equal => {}
                    unequal => return unequal,
                }
                $(
                    match self.$index.cmp_key(&other.$index) {
                        Ordering::Equal => {}
                        unequal => return unequal,
                    }
                )+
                Ordering::Equal
            }
            #[inline]
            fn packed(&self) -> u128 {
                let mut low = 0u64;
                $(
                    // (Only a lone 64-bit component shifts by 64: `low` is 0 then.)
                    low = low.checked_shl($name::RADIX_BITS).unwrap_or(0) | self.$index.radix();
                )+
                u128::from(self.$first_index.radix()) << 64 | u128::from(low)
            }
        }
    )*};
}

impl<A: OrderKey> OrderKey for (A,) {
    const PACKED: bool = A::PACKED;
    const PACKED_HIGH_BITS: u32 = A::PACKED_HIGH_BITS;
    fn cmp_key(&self, other: &Self) -> Ordering {
        self.0.cmp_key(&other.0)
    }
    fn packed(&self) -> u128 {
        self.0.packed()
    }
}

/// A pair of numbers packs into one `u128`: the first's radix above the second's.
impl<A: OrderKey, B: OrderKey> OrderKey for (A, B) {
    const PACKED: bool = A::RADIX && B::RADIX;
    const PACKED_HIGH_BITS: u32 = A::RADIX_BITS;
    fn cmp_key(&self, other: &Self) -> Ordering {
        self.0.cmp_key(&other.0).then_with(|| self.1.cmp_key(&other.1))
    }
    #[inline]
    fn packed(&self) -> u128 {
        u128::from(self.0.radix()) << 64 | u128::from(self.1.radix())
    }
}

tuple_keys! {
    (A 0, B 1, C 2)
    (A 0, B 1, C 2, D 3)
    (A 0, B 1, C 2, D 3, E 4)
    (A 0, B 1, C 2, D 3, E 4, F 5)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7)
}

/// A key of a type of your own that is `Ord`: `order by ByOrd(x.date)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ByOrd<T>(pub T);

impl<T: Ord> OrderKey for ByOrd<T> {
    fn cmp_key(&self, other: &Self) -> Ordering {
        self.0.cmp(&other.0)
    }
}

/// A value with its key, compared by the key alone: what `par_min_by_key!` and
/// `par_max_by_key!` reduce (the first of equal keys is the least, the last the greatest, as
/// `Iterator::min_by_key` and `Iterator::max_by_key`).
#[derive(Clone, Debug)]
pub struct Keyed<K, T> {
    key: K,
    value: T,
}

impl<K, T> Keyed<K, T> {
    /// `value` with its key `key(&value)`.
    pub fn of<F: Fn(&T) -> K>(value: T, key: &F) -> Self {
        Keyed { key: key(&value), value }
    }

    /// The value.
    pub fn into_value(self) -> T {
        self.value
    }
}

impl<K: OrderKey, T> PartialEq for Keyed<K, T> {
    fn eq(&self, other: &Self) -> bool {
        self.key.cmp_key(&other.key) == Ordering::Equal
    }
}

impl<K: OrderKey, T> PartialOrd for Keyed<K, T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.key.cmp_key(&other.key))
    }
}

/// The stable order of `keys`: `perm[i]` is the index of the `i`-th key, ascending or
/// descending, equal keys in their order. Integer and float keys go through the segmented
/// `sort_permutation` (a radix sort on the device when the backend puts it there); others are
/// sorted on the host, and the trace says so.
pub(crate) fn permutation<K: OrderKey + Sync>(
    site: &'static Site,
    keys: &[K],
    descending: bool,
) -> Vec<usize> {
    permutation_of(site, keys, itself::<K>, descending)
}

/// A key, as [`permutation_of`] reads it from itself.
fn itself<K>(key: &K) -> &K {
    key
}

/// `number(key(item))` for each of `items`, in parallel when it is worth it.
fn numbers_of<T: Sync, K, N: Send>(
    items: &[T],
    key: &(impl Fn(&T) -> &K + Sync),
    number: impl Fn(&K) -> N + Sync,
) -> Vec<N> {
    if go_parallel(items.len()) {
        items.par_iter().map(|t| number(key(t))).collect()
    } else {
        items.iter().map(|t| number(key(t))).collect()
    }
}

/// [`permutation`] of the keys `key(item)` of `items`.
pub(crate) fn permutation_of<T: Sync, K: OrderKey + Sync>(
    site: &'static Site,
    items: &[T],
    key: impl Fn(&T) -> &K + Sync,
    descending: bool,
) -> Vec<usize> {
    if K::RADIX {
        let flip = if descending { u64::MAX } else { 0 };
        let radix = numbers_of(items, &key, |k| k.radix() ^ flip);
        return crate::segmented::sort_permutation_at(site, &radix);
    }
    if K::PACKED {
        // A tuple of numbers: the radix sort of the packed keys (all bits flipped for `desc`,
        // which reverses their order and keeps equal keys in input order).
        let flip = if descending { u128::MAX } else { 0 };
        let packed = numbers_of(items, &key, |k| k.packed() ^ flip);
        crate::dispatch::ran_on_host(site, || {
            format!(
                "the key `{}` is a tuple of numbers: radix-sorted on the host",
                std::any::type_name::<K>()
            )
        });
        return crate::segmented::radix_permutation(site, &packed);
    }
    let mut perm: Vec<usize> = (0..items.len()).collect();
    let order = |a: &usize, b: &usize| {
        let o = key(&items[*a]).cmp_key(key(&items[*b]));
        if descending {
            o.reverse()
        } else {
            o
        }
    };
    if go_parallel(items.len()) {
        perm.par_sort_by(order);
    } else {
        perm.sort_by(order);
    }
    crate::dispatch::ran_on_host(site, || {
        format!(
            "the key `{}` is not one integer or float: sorted on the host",
            std::any::type_name::<K>()
        )
    });
    perm
}

/// `items` in the order of `perm` (a permutation of their indices).
pub(crate) fn permute<T>(items: Vec<T>, perm: &[usize]) -> Vec<T> {
    let mut slots: Vec<Option<T>> = items.into_iter().map(Some).collect();
    perm.iter().map(|&i| slots[i].take().expect("a permutation names each index once")).collect()
}

/// `order by KEY [desc]`: the elements, each given with its key, stably sorted by the key
/// (equal keys keep their order, ascending or descending).
pub fn order_by<T, K>(site: &'static Site, items: Vec<(T, K)>, descending: bool) -> Vec<T>
where
    T: Send,
    K: OrderKey + Send + Sync,
{
    let (values, keys): (Vec<T>, Vec<K>) = items.into_iter().unzip();
    let perm = permutation(site, &keys, descending);
    drop(keys);
    permute(values, &perm)
}

/// `order by KEY [desc], take k`: the first `k` elements of [`order_by`]'s answer (the same
/// elements in the same order, equal keys in their input order), without sorting all `n`.
///
/// Each of a few blocks per thread keeps the indices of its best elements in a buffer of at
/// most `2k`: an element enters only when it beats the buffer's `k`-th best, and a full buffer
/// is cut back to its best `k` by `select_nth_unstable_by` (O(n + k log k) for a block, less
/// when few elements beat the `k`-th best). The blocks' survivors are selected and sorted once
/// more. Elements compare by key (reversed for `desc`), then by their index, a total order,
/// so the answer is exactly the stable sort's first `k`. When `k` is a large part of `n`, or a
/// device backend is forced and the key is one integer or float, it is [`order_by`]'s sort,
/// cut.
pub fn order_by_take<T, K>(
    site: &'static Site,
    mut items: Vec<(T, K)>,
    descending: bool,
    k: usize,
) -> Vec<T>
where
    T: Send,
    K: OrderKey + Send + Sync,
{
    let n = items.len();
    if k == 0 {
        return Vec::new();
    }
    let device_forced = matches!(crate::backend::selection(), Some(b) if b.is_device());
    // Most of the elements kept: sorting them all costs little more. A device chosen for
    // every run sorts integer and float keys there (its radix sort), as `order_by` does.
    if k >= n / 4 || (K::RADIX && device_forced) {
        let mut sorted = order_by(site, items, descending);
        sorted.truncate(k);
        return sorted;
    }
    crate::dispatch::ran_on_host(site, || {
        host_choice::<K>(format!("the first {k} of {n} chosen on the host, a selection per thread"))
    });
    let order = |a: &K, b: &K| {
        let o = a.cmp_key(b);
        if descending {
            o.reverse()
        } else {
            o
        }
    };
    // Each block is read by one task through `par_chunks_mut`, so that `T` need only be `Send`.
    let mut best: Vec<usize> = if go_parallel(n) {
        let blocks = rayon::current_num_threads().max(1) * 4;
        let len = n.div_ceil(blocks).max(k);
        items
            .par_chunks_mut(len)
            .enumerate()
            .flat_map_iter(|(b, chunk)| {
                let chunk: &[(T, K)] = chunk;
                let before =
                    |x: &usize, y: &usize| order(&chunk[*x].1, &chunk[*y].1).then(x.cmp(y));
                best_of(chunk.len(), k, before).into_iter().map(move |i| b * len + i)
            })
            .collect()
    } else {
        best_of(n, k, |x: &usize, y: &usize| order(&items[*x].1, &items[*y].1).then(x.cmp(y)))
    };
    let before = |x: &usize, y: &usize| order(&items[*x].1, &items[*y].1).then(x.cmp(y));
    if best.len() > k {
        best.select_nth_unstable_by(k - 1, before);
        best.truncate(k);
    }
    best.sort_unstable_by(before);
    // Moved out by `swap_remove` from the highest index down: what fills a hole comes from
    // the end, above every index still to be taken.
    let mut by_index: Vec<(usize, usize)> =
        best.iter().enumerate().map(|(rank, &index)| (index, rank)).collect();
    by_index.sort_unstable_by_key(|&(index, _)| Reverse(index));
    let mut out: Vec<Option<T>> = (0..k).map(|_| None).collect();
    for (index, rank) in by_index {
        out[rank] = Some(items.swap_remove(index).0);
    }
    out.into_iter().map(|v| v.expect("each rank is filled once")).collect()
}

/// Why the first elements of `order by KEY, take k` were `chosen` on the host: the key, when it
/// is not one integer or float (a device forced for every run sorts those).
pub(super) fn host_choice<K>(chosen: String) -> String
where
    K: OrderKey,
{
    if K::RADIX {
        chosen
    } else {
        format!("the key `{}` is not one integer or float: {chosen}", std::any::type_name::<K>())
    }
}

/// The indices of the best `k` (`k >= 1`) of `0..n` by `before`, in no particular order.
fn best_of(n: usize, k: usize, before: impl Fn(&usize, &usize) -> Ordering) -> Vec<usize> {
    let cap = n.min(k.saturating_mul(2).max(k + 64));
    let mut buf: Vec<usize> = Vec::with_capacity(cap);
    // The k-th best so far, once `buf` has been cut back to `k`.
    let mut bar: Option<usize> = None;
    for i in 0..n {
        if let Some(bar) = bar {
            if before(&i, &bar) != Ordering::Less {
                continue;
            }
        }
        buf.push(i);
        if buf.len() == cap && cap > k {
            buf.select_nth_unstable_by(k - 1, &before);
            buf.truncate(k);
            bar = Some(buf[k - 1]);
        }
    }
    buf
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn radix_keys_sort_as_the_keys() {
        let floats = [f64::NAN, -f64::NAN, 1.5, -0.0, 0.0, f64::NEG_INFINITY, -2.0, f64::INFINITY];
        for a in floats {
            for b in floats {
                assert_eq!(a.radix().cmp(&b.radix()), a.cmp_key(&b), "{a} {b}");
                let (a, b) = (a as f32, b as f32);
                assert_eq!(a.radix().cmp(&b.radix()), a.cmp_key(&b), "{a} {b}");
            }
        }
        let ints = [i64::MIN, -1, 0, 1, i64::MAX];
        for a in ints {
            for b in ints {
                assert_eq!(a.radix().cmp(&b.radix()), a.cmp(&b));
                let (a, b) = (a as i8, b as i8);
                assert_eq!(a.radix().cmp(&b.radix()), a.cmp(&b));
            }
        }
        assert!(Reverse(3u8).radix() < Reverse(2u8).radix());
        let pairs = [(1u8, -2i64), (1, 3), (0, i64::MAX), (2, i64::MIN), (1, 3)];
        for a in pairs {
            for b in pairs {
                assert_eq!(a.packed().cmp(&b.packed()), a.cmp_key(&b), "{a:?} {b:?}");
            }
        }
        const { assert!(<(u8, f64)>::PACKED && <(u8, u8, u8)>::PACKED && !<(u8, String)>::PACKED) };
    }

    /// Every radix is below `2^RADIX_BITS`.
    fn narrow<K: OrderKey>(keys: &[K]) {
        for k in keys {
            assert!(K::RADIX_BITS == 64 || k.radix() >> K::RADIX_BITS == 0, "{}", k.radix());
        }
    }

    #[test]
    fn longer_tuples_of_numbers_pack_in_their_order() {
        narrow(&[i8::MIN, -1, 0, i8::MAX]);
        narrow(&[i16::MIN, -1, 0, i16::MAX]);
        narrow(&[i32::MIN, -1, 0, i32::MAX]);
        narrow(&[0u8, u8::MAX]);
        narrow(&[0u16, u16::MAX]);
        narrow(&['\0', 'z', char::MAX]);
        narrow(&[f32::NEG_INFINITY, -0.0, f32::NAN]);
        narrow(&[Reverse(0u8), Reverse(255)]);
        narrow(&[false, true]);
        // Every component kind, equal and unequal in each place, compared whole.
        let triples = [
            (1u8, -3i16, 'a'),
            (1, -3, 'b'),
            (1, i16::MIN, char::MAX),
            (0, i16::MAX, '\0'),
            (255, 0, 'a'),
            (1, -3, 'a'),
        ];
        for a in triples {
            for b in triples {
                assert_eq!(a.packed().cmp(&b.packed()), a.cmp_key(&b), "{a:?} {b:?}");
                assert_eq!(a.packed() == b.packed(), a == b);
            }
        }
        let quads = [
            (-1i64, Reverse(2u8), true, -0.5f32),
            (-1, Reverse(2), true, 0.5),
            (-1, Reverse(3), false, f32::INFINITY),
            (i64::MIN, Reverse(0), true, f32::NEG_INFINITY),
            (i64::MAX, Reverse(255), false, 0.0),
            (-1, Reverse(2), false, -0.5),
        ];
        for a in quads {
            for b in quads {
                assert_eq!(a.packed().cmp(&b.packed()), a.cmp_key(&b), "{a:?} {b:?}");
            }
        }
        let fives = [(1u8, 2u8, 3u8, 4u8, 5u8), (1, 2, 3, 4, 6), (1, 2, 3, 5, 0), (0, 9, 9, 9, 9)];
        for a in fives {
            for b in fives {
                assert_eq!(a.packed().cmp(&b.packed()), a.cmp_key(&b), "{a:?} {b:?}");
            }
        }
        // The components after the first must fit in 64 bits together.
        const { assert!(<(u64, u32, i32)>::PACKED && !<(u8, u64, ())>::PACKED) };
        const { assert!(!<(u8, u64, u8)>::PACKED && !<(u8, u8, String)>::PACKED) };
    }

    #[test]
    fn order_by_take_is_the_stable_sorts_prefix() {
        static SITE: Site = Site::api("order_by_take test");
        // Values that are not `Copy`, keys with ties and NaNs, large enough to run in parallel.
        let keys = [2.0, f64::NAN, -1.0, 2.0, 0.0, -0.0, f64::NAN, 7.5];
        let items = |n: usize| -> Vec<(String, f64)> {
            (0..n).map(|i| (format!("v{i}"), keys[(i * 5) % keys.len()])).collect()
        };
        for n in [0, 1, 9, 100, 20_000] {
            for k in [0, 1, 2, 3, 24, 100, 1000, n, n + 1] {
                for descending in [false, true] {
                    let mut want = order_by(&SITE, items(n), descending);
                    want.truncate(k);
                    assert_eq!(order_by_take(&SITE, items(n), descending, k), want, "{n} {k}");
                }
            }
        }
    }

    #[test]
    fn tuples_and_options_order_lexicographically() {
        assert_eq!((1, "b").cmp_key(&(1, "a")), Ordering::Greater);
        assert_eq!((0.5, 2).cmp_key(&(0.5, 3)), Ordering::Less);
        assert_eq!(None::<u8>.cmp_key(&Some(0)), Ordering::Less);
        assert_eq!([1, 2][..].cmp_key(&[1, 2, 0][..]), Ordering::Less);
    }
}
