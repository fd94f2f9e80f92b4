//! `group by` whose groups are only reduced: each group's reductions folded per key as the
//! elements are produced, never gathering a group's values.
//!
//! The part before such a `group by` yields `(key, items)`, one item per reduction the rest of
//! the comprehension applies to the groups (`par_sum![a | a <- amount]` folds the amount,
//! `amount.len()` nothing); [`GroupReduce`] is the [`Reducer`] of those elements. Each part of
//! the iteration space fills a [`Table`] of accumulators per key; neighbouring tables are
//! merged left before right (so each key's accumulators combine in the elements' order, as
//! the reduction over its slice would), and the result lists the keys in ascending order, as
//! `group by` promises.
//!
//! The table of keys that pack into a `u128` ([`OrderKey::PACKED`]: one number, a pair, or a
//! tuple of numbers whose components after the first fit in 64 bits) is an array indexed by
//! the key while the keys seen span a small grid (a tuple's first component and the rest: a
//! grid of rows × columns), else a hash table of the packed keys; other keys (strings, tuples
//! of wide numbers) are kept in an ordered map.

use super::group::PackedState;
use super::order::OrderKey;
use crate::pipeline::Reducer;
use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};
use std::ops::ControlFlow;

/// An element of a group, as a reduction over the group's slice would read it: by value when
/// it is `Copy` ([`GroupedByValue`]), else by reference ([`GroupedByRef`]). The method is
/// chosen by autoref, as for a generator's elements: `(&Grouped(&v)).value()`.
pub struct Grouped<'a, T>(pub &'a T);

/// [`Grouped`] of a `Copy` value: the value.
pub trait GroupedByValue {
    /// The value's type.
    type Value;
    /// The value.
    fn value(self) -> Self::Value;
}

impl<T: Copy> GroupedByValue for &Grouped<'_, T> {
    type Value = T;
    #[inline]
    fn value(self) -> T {
        *self.0
    }
}

/// [`Grouped`] of any other value: a reference to it.
pub trait GroupedByRef<'a, T> {
    /// The reference.
    fn value(self) -> &'a T;
}

impl<'a, T> GroupedByRef<'a, T> for &&Grouped<'a, T> {
    #[inline]
    fn value(self) -> &'a T {
        self.0
    }
}

/// A reduction with filters: its items are `Some` for the elements the filters keep.
pub struct Filtered<R>(pub R);

impl<T, R: Reducer<T>> Reducer<Option<T>> for Filtered<R> {
    type Acc = R::Acc;
    type Result = R::Result;
    #[inline]
    fn identity(&self) -> R::Acc {
        self.0.identity()
    }
    #[inline]
    fn push(&self, acc: &mut R::Acc, item: Option<T>) -> ControlFlow<()> {
        match item {
            Some(item) => self.0.push(acc, item),
            None => ControlFlow::Continue(()),
        }
    }
    fn combine(&self, left: R::Acc, right: R::Acc) -> R::Acc {
        self.0.combine(left, right)
    }
    fn finish(&self, acc: R::Acc) -> R::Result {
        self.0.finish(acc)
    }
}

/// The reductions of one group, a tuple of [`Reducer`]s, each folding its own item of the
/// tuple `Items`.
pub trait Aggregates<Items>: Sync {
    /// The accumulators.
    type Accs: Send;
    /// The results.
    type Results: Send;
    /// The accumulators of a group without elements.
    fn identity(&self) -> Self::Accs;
    /// Folds one element's items in. (A reduction that could stop early, `par_any!`, has no
    /// use for it here: the other keys go on.)
    fn push(&self, accs: &mut Self::Accs, items: Items);
    /// The accumulators of a part followed by another.
    fn combine(&self, left: Self::Accs, right: Self::Accs) -> Self::Accs;
    /// The results.
    fn finish(&self, accs: Self::Accs) -> Self::Results;
}

macro_rules! tuple_aggregates {
    ($(($($item:ident $reducer:ident $index:tt),+))*) => {$(
        impl<$($item, $reducer: Reducer<$item>),+> Aggregates<($($item,)+)> for ($($reducer,)+) {
            type Accs = ($($reducer::Acc,)+);
            type Results = ($($reducer::Result,)+);
            #[inline]
            fn identity(&self) -> Self::Accs {
                ($(self.$index.identity(),)+)
            }
            #[inline]
            fn push(&self, accs: &mut Self::Accs, items: ($($item,)+)) {
                $( let _ = self.$index.push(&mut accs.$index, items.$index); )+
            }
            fn combine(&self, left: Self::Accs, right: Self::Accs) -> Self::Accs {
                ($(self.$index.combine(left.$index, right.$index),)+)
            }
            fn finish(&self, accs: Self::Accs) -> Self::Results {
                ($(self.$index.finish(accs.$index),)+)
            }
        }
    )*};
}

tuple_aggregates! {
    (A RA 0)
    (A RA 0, B RB 1)
    (A RA 0, B RB 1, C RC 2)
    (A RA 0, B RB 1, C RC 2, D RD 3)
    (A RA 0, B RB 1, C RC 2, D RD 3, E RE 4)
    (A RA 0, B RB 1, C RC 2, D RD 3, E RE 4, F RF 5)
    (A RA 0, B RB 1, C RC 2, D RD 3, E RE 4, F RF 5, G RG 6)
    (A RA 0, B RB 1, C RC 2, D RD 3, E RE 4, F RF 5, G RG 6, H RH 7)
    (A RA 0, B RB 1, C RC 2, D RD 3, E RE 4, F RF 5, G RG 6, H RH 7, I RI 8)
    (A RA 0, B RB 1, C RC 2, D RD 3, E RE 4, F RF 5, G RG 6, H RH 7, I RI 8, J RJ 9)
    (A RA 0, B RB 1, C RC 2, D RD 3, E RE 4, F RF 5, G RG 6, H RH 7, I RI 8, J RJ 9, K RK 10)
    (A RA 0, B RB 1, C RC 2, D RD 3, E RE 4, F RF 5, G RG 6, H RH 7, I RI 8, J RJ 9, K RK 10,
     L RL 11)
}

/// `group by`'s reductions per key: the [`Reducer`] of the `(key, items)` elements of the part
/// before it, whose result is each key (ascending) with its reductions' results.
pub struct GroupReduce<A>(A);

impl<A> GroupReduce<A> {
    /// The reductions `aggregates`, a tuple of reducers.
    pub fn new(aggregates: A) -> Self {
        GroupReduce(aggregates)
    }

    /// Folds in an element whose key the grid does not hold in use: out of line, so that the
    /// loop over the grid's keys keeps its registers for itself.
    #[inline(never)]
    fn push_outside_grid<K: OrderKey, Items>(
        &self,
        acc: &mut Table<K, A::Accs>,
        key: K,
        items: Items,
    ) where
        A: Aggregates<Items>,
    {
        self.0.push(acc.entry(key, || self.0.identity()), items);
    }
}

impl<K, Items, A> Reducer<(K, Items)> for GroupReduce<A>
where
    K: OrderKey + Send,
    A: Aggregates<Items>,
{
    type Acc = Table<K, A::Accs>;
    type Result = Vec<(K, A::Results)>;
    const FEW_PARTS: bool = true;
    // Packed keys may be in the grid, whose loop `push_iter` runs; other keys gain nothing.
    const OWN_LOOP: bool = K::PACKED;

    #[inline]
    fn identity(&self) -> Self::Acc {
        Table::new()
    }

    #[inline]
    fn push(&self, acc: &mut Self::Acc, (key, items): (K, Items)) -> ControlFlow<()> {
        self.0.push(acc.entry(key, || self.0.identity()), items);
        ControlFlow::Continue(())
    }

    #[inline]
    fn push_iter(
        &self,
        acc: &mut Self::Acc,
        items: impl Iterator<Item = (K, Items)>,
    ) -> ControlFlow<()> {
        let mut items = items;
        // The grid's keys in a loop of their own; each other element (a key new to the grid
        // or outside it) through `entry`, then the loop again.
        while let Some((key, items)) =
            acc.grid.fold_in(&mut items, |accs, items| self.0.push(accs, items))
        {
            self.push_outside_grid(acc, key, items);
        }
        ControlFlow::Continue(())
    }

    fn combine(&self, left: Self::Acc, right: Self::Acc) -> Self::Acc {
        // The smaller table's keys go into the larger; each key's accumulators still combine
        // the left part's before the right's.
        let left_into_right = left.len() < right.len();
        let (mut into, from) = if left_into_right { (right, left) } else { (left, right) };
        let identity = || self.0.identity();
        from.drain(|key, from| {
            // A key new to `into` starts from the identity, which combines to `from`.
            let slot = into.entry(key, identity);
            let there = std::mem::replace(slot, identity());
            *slot = if left_into_right {
                self.0.combine(from, there)
            } else {
                self.0.combine(there, from)
            };
        });
        into
    }

    fn finish(&self, acc: Self::Acc) -> Self::Result {
        acc.into_sorted().into_iter().map(|(key, accs)| (key, self.0.finish(accs))).collect()
    }
}

/// A key ordered by [`OrderKey::cmp_key`], for the ordered map of keys that do not pack.
struct ByKey<K>(K);

impl<K: OrderKey> PartialEq for ByKey<K> {
    fn eq(&self, other: &Self) -> bool {
        self.0.cmp_key(&other.0) == Ordering::Equal
    }
}

impl<K: OrderKey> Eq for ByKey<K> {}

impl<K: OrderKey> PartialOrd for ByKey<K> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<K: OrderKey> Ord for ByKey<K> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.cmp_key(&other.0)
    }
}

/// A grid of keys may have [`GRID_SLOTS`] slots, or [`SLOTS_PER_KEY`] per key it holds, up to
/// [`GRID_BYTES`]; beyond, the keys are hashed (and indexed again once they are dense enough).
const GRID_SLOTS: u128 = 1 << 12;
/// See [`GRID_SLOTS`].
const SLOTS_PER_KEY: u128 = 4;
/// See [`GRID_SLOTS`].
const GRID_BYTES: usize = 64 << 20;

/// One part's accumulators per key (see the module's documentation).
///
/// The grid is kept apart from the rest of the table, and nothing called out of line borrows
/// it: in the loop that folds the elements in (everything inlined into it), the compiler can
/// then keep the grid's bounds and buffers in registers rather than reload them after every
/// accumulator it writes. Out of line, the grid is moved out, rebuilt and moved back.
pub struct Table<K, S> {
    /// The keys in a small grid, indexed (empty while the keys are hashed or ordered).
    grid: Grid<K, S>,
    /// Everything else: where the keys are, the grid's keys' spans, the other keys. Boxed, so
    /// that what the out-of-line calls borrow is not part of the table itself (a borrow of
    /// any part would keep all of it in memory).
    rest: Box<Rest<K, S>>,
}

/// A [`Table`]'s state beyond its grid, read and written only when a key is new to the grid
/// or the grid does not hold it.
struct Rest<K, S> {
    keys: Keys<K, S>,
    /// The grid's slots in use.
    filled: usize,
    /// The halves of the grid's keys, exactly (the grid's spans may be wider).
    used: (Bounds, Bounds),
    /// How many times the keys were moved into a new grid or hash table (a count for tests:
    /// it must stay logarithmic in the number of keys).
    rebuilds: u32,
}

/// Where a [`Table`]'s keys are.
enum Keys<K, S> {
    /// Packed keys, all in the grid.
    Grid,
    /// Packed keys, hashed (the grid is empty).
    Hashed(HashMap<u128, (K, S), PackedState>),
    /// Other keys, ordered (the grid is empty).
    Ordered(BTreeMap<ByKey<K>, S>),
}

/// The packed keys of high halves × low halves: the key `(h, l)` in the slot
/// `(h - starts.0) * lens.1 + (l - starts.1)`, so that ascending slots hold ascending keys.
struct Grid<K, S> {
    /// Each slot's key, if in use, and accumulators (the identity's where no key is): side by
    /// side, so that a new element's slot is one bounds check and one cache line.
    slots: Vec<(Option<K>, S)>,
    shape: Shape,
}

/// Where a [`Grid`]'s spans of high and low halves start, and their lengths (as `u64`: a grid
/// has at most [`GRID_BYTES`] of slots; lengths 0 for an empty grid, which holds no key).
#[derive(Clone, Copy)]
struct Shape {
    starts: (u64, u64),
    lens: (u64, u64),
}

impl Shape {
    /// The slot of the packed key `p` of a `K` in a grid of `slots` slots, if inside.
    #[inline]
    fn index<K: OrderKey>(self, p: u128, slots: usize) -> Option<usize> {
        debug_assert_eq!(slots as u64, self.lens.0 * self.lens.1);
        if K::RADIX {
            // One number (under any `Reverse`s): every key has the same high half, so a grid's
            // span of high halves is that one value and its slots are the low halves' span —
            // bounded by their number, a slot needs no other check.
            debug_assert!(
                self.lens.0 == 0 || (self.lens.0 == 1 && (p >> 64) as u64 == self.starts.0)
            );
            let l = (p as u64).wrapping_sub(self.starts.1);
            return (l < slots as u64).then_some(l as usize);
        }
        let l = (p as u64).wrapping_sub(self.starts.1);
        if K::PACKED_HIGH_BITS <= 32 {
            // High halves below 2^32 times at most 2^32 columns do not overflow: the slot is
            // `high * columns + l - (start high * columns)`, which is below the slot count
            // exactly when the high half is inside (given `l` is): one test for both, which is
            // also the bounds check of the slot.
            debug_assert!(self.lens.1 <= u64::from(u32::MAX));
            let high = (p >> 64) as u64;
            // (`l` may have wrapped: the sum is then wrong, and unused.)
            let at = (high * self.lens.1).wrapping_add(l).wrapping_sub(self.starts.0 * self.lens.1);
            return (l < self.lens.1 && at < slots as u64).then_some(at as usize);
        }
        let h = ((p >> 64) as u64).wrapping_sub(self.starts.0);
        (h < self.lens.0 && l < self.lens.1).then(|| (h * self.lens.1 + l) as usize)
    }
}

impl<K, S> Grid<K, S> {
    fn empty() -> Self {
        Grid { slots: Vec::new(), shape: Shape { starts: (0, 0), lens: (0, 0) } }
    }

    fn new(high: Span, low: Span, identity: impl Fn() -> S) -> Self {
        let mut slots = Vec::new();
        slots.resize_with((high.len * low.len) as usize, || (None, identity()));
        let shape =
            Shape { starts: (high.start, low.start), lens: (high.len as u64, low.len as u64) };
        Grid { slots, shape }
    }

    /// The slot of the packed key `p`, if inside.
    #[inline]
    fn index(&self, p: u128) -> Option<usize>
    where
        K: OrderKey,
    {
        self.shape.index::<K>(p, self.slots.len())
    }

    /// Folds the elements of `items` whose keys are in use in the grid into their slots with
    /// `fold`, until one's is not (returned) or none is left. The grid's shape and slots are
    /// held in locals: nothing in the loop writes them.
    #[inline]
    fn fold_in<I>(
        &mut self,
        items: &mut impl Iterator<Item = (K, I)>,
        fold: impl Fn(&mut S, I),
    ) -> Option<(K, I)>
    where
        K: OrderKey,
    {
        let (shape, slots) = (self.shape, self.slots.as_mut_slice());
        for (key, item) in items {
            let slot = match shape.index::<K>(key.packed(), slots.len()) {
                Some(at) => &mut slots[at],
                None => return Some((key, item)),
            };
            if slot.0.is_none() {
                return Some((key, item));
            }
            fold(&mut slot.1, item);
        }
        None
    }

    /// The keys in use and their accumulators, in ascending key order.
    fn into_entries(self) -> impl Iterator<Item = (K, S)> {
        self.slots.into_iter().filter_map(|(key, accs)| Some((key?, accs)))
    }
}

impl<K, S> Rest<K, S> {
    /// Counts a slot of the grid taken by the packed key `p`.
    #[cold]
    #[inline(never)]
    fn first_use(&mut self, p: u128) {
        self.filled += 1;
        self.used = (self.used.0.holding((p >> 64) as u64), self.used.1.holding(p as u64));
    }
}

/// The values `start..start + len` of a half of a packed key (`len` 0: none yet).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Span {
    start: u64,
    len: u128,
}

/// The least and greatest of some values of a half of a packed key (`min > max`: none yet):
/// what a [`Span`] is kept as while keys arrive, two comparisons per new key.
#[derive(Clone, Copy, Debug)]
struct Bounds {
    min: u64,
    max: u64,
}

impl Bounds {
    const EMPTY: Bounds = Bounds { min: u64::MAX, max: 0 };

    #[inline]
    fn holding(self, v: u64) -> Bounds {
        Bounds { min: self.min.min(v), max: self.max.max(v) }
    }

    /// The span of exactly these values.
    fn span(self) -> Span {
        if self.min > self.max {
            return Span::EMPTY;
        }
        Span { start: self.min, len: u128::from(self.max - self.min) + 1 }
    }
}

impl Span {
    const EMPTY: Span = Span { start: 0, len: 0 };

    /// The span widened to hold `v`: exactly (`pad` false), or by at least doubling its length
    /// (so that keys arriving one beyond another rebuild the grid a logarithmic number of times).
    fn holding(self, v: u64, pad: bool) -> Span {
        if self.len == 0 {
            return Span { start: v, len: 1 };
        }
        let (start, end) = (u128::from(self.start), u128::from(self.start) + self.len);
        let v = u128::from(v);
        let (mut start, mut end) = (start.min(v), end.max(v + 1));
        if pad && end - start > self.len {
            let len = (end - start).max(2 * self.len);
            if v < u128::from(self.start) {
                start = end.saturating_sub(len);
            } else {
                end = (start + len).min(1 << 64);
            }
        }
        Span { start: start as u64, len: end - start }
    }
}

impl<K: OrderKey, S> Table<K, S> {
    #[inline]
    fn new() -> Self {
        let keys = if K::PACKED { Keys::Grid } else { Keys::Ordered(BTreeMap::new()) };
        let rest = Rest { keys, filled: 0, used: (Bounds::EMPTY, Bounds::EMPTY), rebuilds: 0 };
        Table { grid: Grid::empty(), rest: Box::new(rest) }
    }

    /// The number of keys.
    fn len(&self) -> usize {
        match &self.rest.keys {
            Keys::Grid => self.rest.filled,
            Keys::Hashed(map) => map.len(),
            Keys::Ordered(map) => map.len(),
        }
    }

    /// Whether a grid of `high` × `low` may hold `keys` keys. A `padded` grid (each span
    /// doubled, so that a grid grown key by key is rebuilt a logarithmic number of times) may
    /// have four times the slots: whenever the keys' own spans fit, their padding does (short of
    /// [`GRID_BYTES`]).
    fn grid_fits((high, low): (Span, Span), keys: usize, padded: bool) -> bool {
        let slots = high.len.saturating_mul(low.len);
        let bytes = (GRID_BYTES / (size_of::<Option<K>>() + size_of::<S>()).max(1)) as u128;
        let room = GRID_SLOTS.max(SLOTS_PER_KEY * keys as u128) * if padded { 4 } else { 1 };
        slots <= room.min(bytes)
    }

    /// The accumulators of `key`, the identity's if it had none yet.
    #[inline]
    fn entry(&mut self, key: K, identity: impl Fn() -> S + Copy) -> &mut S {
        // A key that does not pack is 0 here, and the grid is empty.
        let packed = key.packed();
        if let Some(at) = self.grid.index(packed) {
            return self.grid_slot(at, packed, key);
        }
        if self.needs_rebuild(packed) {
            // Moved out and back by value: the out-of-line call never borrows `self.grid`.
            let grid = std::mem::replace(&mut self.grid, Grid::empty());
            let empty = std::mem::replace(
                &mut self.grid,
                Self::rebuilt(grid, &mut self.rest, packed, identity),
            );
            drop(empty);
            if let Some(at) = self.grid.index(packed) {
                return self.grid_slot(at, packed, key);
            }
        }
        self.rest.keys.entry(key, packed, identity)
    }

    /// The accumulators in the grid's slot `at`, the packed key `p`'s, marked in use by `key`.
    #[inline(always)]
    fn grid_slot(&mut self, at: usize, p: u128, key: K) -> &mut S {
        let slot = &mut self.grid.slots[at];
        if slot.0.is_none() {
            self.rest.first_use(p);
            slot.0 = Some(key);
        }
        &mut slot.1
    }

    /// Whether the packed key `p`, outside the grid, calls for a new grid or hash table: the
    /// grid's keys widened or hashed, or hashed keys that may have become dense enough to
    /// index (checked as the hash table doubles: a scan of its keys each time).
    #[inline]
    fn needs_rebuild(&self, p: u128) -> bool {
        match &self.rest.keys {
            Keys::Grid => true,
            Keys::Hashed(map) => {
                map.len() >= GRID_SLOTS as usize
                    && map.len().is_power_of_two()
                    && !map.contains_key(&p)
            }
            Keys::Ordered(_) => false,
        }
    }

    /// The grid after [`needs_rebuild`](Self::needs_rebuild) said so for the packed key `p`:
    /// a wider grid (the keys' spans with the new key, doubled), or the keys hashed when that
    /// grid would be too large or too sparse (an empty grid returned); or hashed keys indexed
    /// again if they are dense enough.
    #[cold]
    #[inline(never)]
    fn rebuilt(
        grid: Grid<K, S>,
        rest: &mut Rest<K, S>,
        p: u128,
        identity: impl Fn() -> S,
    ) -> Grid<K, S> {
        rest.rebuilds += 1;
        let (h, l) = ((p >> 64) as u64, p as u64);
        match std::mem::replace(&mut rest.keys, Keys::Grid) {
            Keys::Grid => {
                // From the keys' own spans: the grid's may be padded already.
                let padded =
                    (rest.used.0.span().holding(h, true), rest.used.1.span().holding(l, true));
                if Self::grid_fits(padded, rest.filled + 1, true) {
                    return Self::grid_of(padded, grid.into_entries(), rest, identity);
                }
                let mut map = HashMap::with_hasher(PackedState::new());
                map.extend(grid.into_entries().map(|(key, accs)| (key.packed(), (key, accs))));
                rest.keys = Keys::Hashed(map);
                Grid::empty()
            }
            Keys::Hashed(map) => {
                let spans = map.keys().fold((Span::EMPTY, Span::EMPTY), |(high, low), &q| {
                    (high.holding((q >> 64) as u64, false), low.holding(q as u64, false))
                });
                let spans = (spans.0.holding(h, false), spans.1.holding(l, false));
                if Self::grid_fits(spans, map.len() + 1, false) {
                    Self::grid_of(spans, map.into_values(), rest, identity)
                } else {
                    rest.keys = Keys::Hashed(map);
                    grid
                }
            }
            Keys::Ordered(map) => {
                rest.keys = Keys::Ordered(map);
                grid
            }
        }
    }

    /// A grid of `high` × `low` holding `entries` (each inside it), `rest` counting its keys.
    fn grid_of(
        (high, low): (Span, Span),
        entries: impl Iterator<Item = (K, S)>,
        rest: &mut Rest<K, S>,
        identity: impl Fn() -> S,
    ) -> Grid<K, S> {
        let mut grid = Grid::new(high, low, identity);
        rest.keys = Keys::Grid;
        (rest.filled, rest.used) = (0, (Bounds::EMPTY, Bounds::EMPTY));
        for (key, accs) in entries {
            let p = key.packed();
            let at = grid.index(p).expect("the keys are inside the grid");
            rest.first_use(p);
            grid.slots[at] = (Some(key), accs);
        }
        grid
    }

    /// Hands each key and its accumulators to `f`, in no particular order.
    fn drain(self, mut f: impl FnMut(K, S)) {
        match self.rest.keys {
            Keys::Grid => self.grid.into_entries().for_each(|(k, s)| f(k, s)),
            Keys::Hashed(map) => map.into_values().for_each(|(k, s)| f(k, s)),
            Keys::Ordered(map) => map.into_iter().for_each(|(k, s)| f(k.0, s)),
        }
    }

    /// The keys and their accumulators, in ascending key order.
    fn into_sorted(self) -> Vec<(K, S)> {
        match self.rest.keys {
            Keys::Grid => self.grid.into_entries().collect(),
            Keys::Hashed(map) => {
                let mut entries: Vec<(u128, (K, S))> = map.into_iter().collect();
                entries.sort_unstable_by_key(|(packed, _)| *packed);
                entries.into_iter().map(|(_, entry)| entry).collect()
            }
            Keys::Ordered(map) => map.into_iter().map(|(k, s)| (k.0, s)).collect(),
        }
    }
}

impl<K: OrderKey, S> Keys<K, S> {
    /// The accumulators of `key` (packed: `p`) in the hash table or the ordered map, the
    /// identity's if it had none yet.
    #[inline(never)]
    fn entry(&mut self, key: K, p: u128, identity: impl Fn() -> S) -> &mut S {
        match self {
            Keys::Hashed(map) => &mut map.entry(p).or_insert_with(|| (key, identity())).1,
            Keys::Ordered(map) => map.entry(ByKey(key)).or_insert_with(identity),
            Keys::Grid => unreachable!("a key outside the grid is hashed once the grid is rebuilt"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::{Count, MaxReducer, SumReducer};
    use std::cmp::Reverse;

    /// Reduces `items` in parts of `part` elements, merged left to right, as the executor does:
    /// alternately element by element (`push`) and a part at once (`push_iter`, the grid's own
    /// loop), which must agree.
    fn reduce<K, Items, A>(
        r: &GroupReduce<A>,
        items: Vec<(K, Items)>,
        part: usize,
    ) -> Vec<(K, A::Results)>
    where
        K: OrderKey + Send,
        A: Aggregates<Items>,
    {
        let mut parts = Vec::new();
        let mut items = items.into_iter().peekable();
        while items.peek().is_some() {
            let mut acc = r.identity();
            if parts.len() % 2 == 0 {
                for item in items.by_ref().take(part) {
                    let _ = r.push(&mut acc, item);
                }
            } else {
                let _ = r.push_iter(&mut acc, items.by_ref().take(part));
            }
            parts.push(acc);
        }
        let acc = parts.into_iter().fold(r.identity(), |a, b| r.combine(a, b));
        r.finish(acc)
    }

    /// Each key's sum, count and greatest item.
    type Reduced = (i64, usize, Option<i64>);

    /// The same by sorting: each key's items in order.
    fn expected(items: &[(i64, i64)]) -> Vec<(i64, Reduced)> {
        let mut keys: Vec<i64> = items.iter().map(|p| p.0).collect();
        keys.sort();
        keys.dedup();
        keys.into_iter()
            .map(|k| {
                let of: Vec<i64> = items.iter().filter(|p| p.0 == k).map(|p| p.1).collect();
                (k, (of.iter().sum(), of.len(), of.iter().copied().max()))
            })
            .collect()
    }

    #[test]
    fn keys_ascend_whether_indexed_or_hashed_in_any_part_size() {
        let r = GroupReduce::new((SumReducer::new(), Count, MaxReducer::new()));
        let mut seed = 7u64;
        let mut next = move || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            seed >> 33
        };
        for span in [1i64, 3, 1000, 1 << 20, i64::MAX / 2] {
            let items: Vec<(i64, i64)> = (0..3000)
                .map(|_| ((next() as i64 % span) - span / 2, next() as i64 % 100 - 50))
                .collect();
            let want = expected(&items);
            for part in [1, 7, 1000, 5000] {
                let rows = items.iter().map(|&(k, v)| (k, (v, (), v))).collect();
                assert_eq!(reduce(&r, rows, part), want, "span {span}, parts of {part}");
            }
        }
        // Keys arriving in ascending and descending order (the grid widened at each end), and
        // the extremes of the type.
        for items in [
            (0..5000).map(|k| (k, 1)).collect::<Vec<_>>(),
            (0..5000).rev().map(|k| (k, 1)).collect(),
            vec![(i64::MIN, 1), (i64::MAX, 2), (0, 3), (i64::MIN, 4)],
        ] {
            let rows = items.iter().map(|&(k, v)| (k, (v, (), v))).collect();
            assert_eq!(reduce(&r, rows, 100), expected(&items));
        }
        assert!(reduce(&r, Vec::<(i64, (i64, (), i64))>::new(), 10).is_empty());
    }

    #[test]
    fn sparse_keys_are_hashed_and_indexed_again_once_dense() {
        let r = GroupReduce::new((Count,));
        let mut table: Table<u32, (usize,)> = Table::new();
        // A few keys far apart: hashed.
        for k in [0u32, 50_000, 99_999] {
            let _ = r.push(&mut table, (k, ((),)));
        }
        assert!(matches!(table.rest.keys, Keys::Hashed(_)));
        // Then every key between: dense enough to index (four slots per key at most).
        for k in 0..100_000u32 {
            let _ = r.push(&mut table, (k, ((),)));
        }
        assert!(matches!(table.rest.keys, Keys::Grid));
        let counts = Reducer::<(u32, ((),))>::finish(&r, table);
        assert_eq!(counts.len(), 100_000);
        assert!(counts.iter().enumerate().all(|(i, &(k, (c,)))| k == i as u32
            && c == if [0, 50_000, 99_999].contains(&k) { 2 } else { 1 }));
        // Pairs of skewed halves: the padded grid overshoots, the keys' own spans still fit
        // (12 × 200 slots), so it stays a grid.
        let mut table: Table<(u8, u16), (usize,)> = Table::new();
        let mut distinct = std::collections::BTreeSet::new();
        for i in 0..100_000u64 {
            let month = 1 + (i.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 58) as u8 % 12;
            let city = ((i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20) % 40_000) as f64;
            let key = (month, city.sqrt() as u16);
            distinct.insert(key);
            let _ = r.push(&mut table, (key, ((),)));
        }
        assert!(matches!(table.rest.keys, Keys::Grid));
        let keys: Vec<(u8, u16)> =
            Reducer::<((u8, u16), ((),))>::finish(&r, table).into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys, distinct.into_iter().collect::<Vec<_>>());
        // Keys arriving in order, a third of a span dense or one in five: a logarithmic
        // number of grids (or conversions to and from a hash table), not one per key.
        for step in [3u32, 5] {
            let mut table: Table<u32, (usize,)> = Table::new();
            for k in 0..100_000u32 {
                let _ = r.push(&mut table, (k * step, ((),)));
                assert!(table.rest.rebuilds <= 40, "{} rebuilds by key {k}", table.rest.rebuilds);
            }
            assert_eq!(Reducer::<(u32, ((),))>::finish(&r, table).len(), 100_000);
        }
        // Keys spanning the whole type stay hashed.
        let mut table: Table<u64, (usize,)> = Table::new();
        for k in [u64::MAX, 0, 1 << 63] {
            let _ = r.push(&mut table, (k, ((),)));
        }
        assert!(matches!(table.rest.keys, Keys::Hashed(_)));
        let counts = Reducer::<(u64, ((),))>::finish(&r, table);
        assert_eq!(counts, [(0, (1,)), (1 << 63, (1,)), (u64::MAX, (1,))]);
    }

    #[test]
    fn a_pair_of_narrow_numbers_finds_its_slot_by_one_test() {
        // The slot of a key whose high half has at most 32 bits, against the two range tests,
        // for grids anywhere in those bits and keys inside, beside and far outside them.
        const { assert!(<(u32, u16) as OrderKey>::PACKED_HIGH_BITS == 32) };
        let edges = [0u64, 1, 2, 7, 1 << 16, (1 << 32) - 3, (1 << 32) - 1];
        for start_high in edges {
            for start_low in [0u64, 5, (1 << 16) - 2] {
                for lens in [(0u64, 0u64), (1, 1), (3, 4), (2, 1 << 16), (1 << 10, 3)] {
                    let shape = Shape { starts: (start_high, start_low), lens };
                    let slots = (lens.0 * lens.1) as usize;
                    for high in edges.iter().flat_map(|&e| [e, e.wrapping_add(start_high)]) {
                        let high = high as u32;
                        for low in [0u16, 1, 4, 5, 6, 9, u16::MAX - 2, u16::MAX] {
                            let key = (high, low);
                            let (h, l) = (
                                u64::from(high).wrapping_sub(start_high),
                                u64::from(low).wrapping_sub(start_low),
                            );
                            let want =
                                (h < lens.0 && l < lens.1).then(|| (h * lens.1 + l) as usize);
                            let got = shape.index::<(u32, u16)>(key.packed(), slots);
                            assert_eq!(got, want, "{key:?} in {:?} × {:?}", shape.starts, lens);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn pairs_strings_floats_and_reversed_keys_group_in_key_order() {
        let count = GroupReduce::new((Count,));
        let pairs =
            vec![((2u8, -1i32), ((),)), ((1, 5), ((),)), ((2, -1), ((),)), ((1, -3), ((),))];
        assert_eq!(reduce(&count, pairs, 1), [((1, -3), (1,)), ((1, 5), (1,)), ((2, -1), (2,))]);
        let words = vec![("b", ((),)), ("a", ((),)), ("b", ((),))];
        assert_eq!(reduce(&count, words, 2), [("a", (1,)), ("b", (2,))]);
        // Floats by `total_cmp`: -0.0 and 0.0 are two keys, NaN one.
        let floats = vec![(0.0, ((),)), (f64::NAN, ((),)), (-0.0, ((),)), (f64::NAN, ((),))];
        let got: Vec<(u64, usize)> =
            reduce(&count, floats, 1).into_iter().map(|(k, (c,))| (k.to_bits(), c)).collect();
        assert_eq!(got, [((-0.0f64).to_bits(), 1), (0.0f64.to_bits(), 1), (f64::NAN.to_bits(), 2)]);
        let reversed = vec![(Reverse(1u16), ((),)), (Reverse(7), ((),)), (Reverse(1), ((),))];
        assert_eq!(reduce(&count, reversed, 1), [(Reverse(7), (1,)), (Reverse(1), (2,))]);
    }

    #[test]
    fn accumulators_combine_left_before_right() {
        // A non-commutative reduction: the concatenation of each key's items in order.
        let concat = GroupReduce::new((crate::pipeline::Fold::new(
            String::new(),
            |a: String, b: String| a + &b,
        ),));
        let items: Vec<(u8, (String,))> =
            "abcdefghij".chars().map(|c| ((c as u8) % 3, (c.to_string(),))).collect();
        let got = reduce(&concat, items, 2);
        assert_eq!(
            got,
            [(0, ("cfi".to_string(),)), (1, ("adgj".to_string(),)), (2, ("beh".to_string(),))]
        );
        // The smaller table merged into the larger, from either side.
        let table = |items: &[(u8, &str)]| {
            let mut t = concat.identity();
            for &(k, v) in items {
                let _ = concat.push(&mut t, (k, (v.to_string(),)));
            }
            t
        };
        let (small, large) = (&[(0, "a")][..], &[(0, "b"), (1, "c"), (2, "d")][..]);
        let got = concat.finish(concat.combine(table(small), table(large)));
        assert_eq!(got[0], (0, ("ab".to_string(),)));
        let got = concat.finish(concat.combine(table(large), table(small)));
        assert_eq!(got[0], (0, ("ba".to_string(),)));
        // Filtered items: only the kept ones count.
        let kept = GroupReduce::new((Filtered(Count),));
        let items = vec![(1u8, (Some(()),)), (1, (None,)), (2, (None,))];
        assert_eq!(reduce(&kept, items, 1), [(1, (1,)), (2, (0,))]);
    }

    #[test]
    fn grouped_values_are_read_by_value_when_copy_else_by_reference() {
        let n = 3u32;
        let copied: u32 = (&Grouped(&n)).value();
        assert_eq!(copied, 3);
        let word = String::from("ab");
        let borrowed: &String = (&Grouped(&word)).value();
        assert_eq!(borrowed.len(), 2);
    }
}
