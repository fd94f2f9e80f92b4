//! Reducers: how the elements of a comprehension are combined into one value.
//!
//! A reducer folds elements into an accumulator, combines the accumulators of neighbouring
//! parts of the iteration space (left before right: operators need to be associative, not
//! commutative), and finishes the accumulator into the result. These are what `par_sum!`,
//! `par_product!`, `par_min!`, `par_max!`, `par_count!`, `par_any!`, `par_all!` and
//! `par_reduce!` run, at the top level and nested in the head of another comprehension — and a
//! nested `par!` gathers the elements of each outer element with [`CollectVec`].
//!
//! Named `SumReducer`, `MinReducer`, ...: `parcomp::segmented`'s `Sum`, `Min`, ... are another
//! thing, the monoids a user hands to the segmented primitives (`Min` there has an identity,
//! `MAX`; `MinReducer` here returns `None` for no element, as `par_min!` does).
//!
//! Floating-point addition and multiplication are not associative: in parallel the elements
//! are added in a different grouping than in a sequential loop, so float sums and products may
//! differ from the sequential result in the last bits (the order of the elements is kept).

use super::Folder;
use std::iter::{Product as IterProduct, Sum as IterSum};
use std::marker::PhantomData;
use std::ops::{AddAssign, ControlFlow, MulAssign};
use std::sync::atomic::{AtomicBool, Ordering};

/// Combines the elements of type `T` of a comprehension into one value.
pub trait Reducer<T>: Sync {
    /// What is carried along a part of the iteration space.
    type Acc: Send;
    /// The value the comprehension returns.
    type Result: Send;
    /// Whether [`push`](Reducer::push) may decide the result early (`par_any!`, `par_all!`),
    /// so that parallel parts can stop as soon as one of them has.
    const EARLY_EXIT: bool = false;
    /// Whether an accumulator is costly to start and to combine (a table of keys), so that a
    /// parallel run cuts its work into a few large parts rather than many small ones.
    const FEW_PARTS: bool = false;
    /// Whether [`push_iter`](Reducer::push_iter) runs a loop of its own (see
    /// [`Folder::OWN_LOOP`]).
    const OWN_LOOP: bool = false;
    /// The accumulator of an empty part.
    fn identity(&self) -> Self::Acc;
    /// Folds one element in; `Break` when the result is decided and no element can change it.
    fn push(&self, acc: &mut Self::Acc, item: T) -> ControlFlow<()>;
    /// Folds the elements `items` in, in order, as [`push`](Reducer::push) on each would.
    #[inline]
    fn push_iter(&self, acc: &mut Self::Acc, items: impl Iterator<Item = T>) -> ControlFlow<()> {
        for item in items {
            self.push(acc, item)?;
        }
        ControlFlow::Continue(())
    }
    /// The accumulator of a part followed by another.
    fn combine(&self, left: Self::Acc, right: Self::Acc) -> Self::Acc;
    /// The result.
    fn finish(&self, acc: Self::Acc) -> Self::Result;
    /// The accumulator of a part reduced on a device, which hands back its partial result in
    /// the form of the reduction's kind; `None` if this reducer does not run on a device.
    fn accept_device(&self, partial: DevicePartial<T>) -> Option<Self::Acc> {
        let _ = partial;
        None
    }
}

/// A part of a reduction computed on a device, as the device's kernels give it back: what the
/// host then combines in order with [`Reducer::combine`].
#[derive(Clone, Debug, PartialEq)]
pub enum DevicePartial<T> {
    /// The accumulator of a sum, a product or a `par_reduce!`.
    Value(T),
    /// The least or greatest element, `None` for a part without elements.
    Optional(Option<T>),
    /// A number of elements.
    Count(u64),
    /// Whether some (`par_any!`) or every (`par_all!`) element was true.
    Flag(bool),
}

/// `par_sum!`: `+=`, starting from the empty sum (zero).
pub struct SumReducer<T>(T);

impl<T: IterSum> SumReducer<T> {
    /// A sum of `T`s.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        SumReducer(std::iter::empty::<T>().sum())
    }
}

impl<T> Reducer<T> for SumReducer<T>
where
    T: AddAssign + Clone + Send + Sync,
{
    type Acc = T;
    type Result = T;
    fn identity(&self) -> T {
        self.0.clone()
    }
    #[inline]
    fn push(&self, acc: &mut T, item: T) -> ControlFlow<()> {
        *acc += item;
        ControlFlow::Continue(())
    }
    fn combine(&self, mut left: T, right: T) -> T {
        left += right;
        left
    }
    fn finish(&self, acc: T) -> T {
        acc
    }
    fn accept_device(&self, partial: DevicePartial<T>) -> Option<T> {
        match partial {
            DevicePartial::Value(v) => Some(v),
            _ => None,
        }
    }
}

/// `par_product!`: `*=`, starting from the empty product (one).
pub struct ProductReducer<T>(T);

impl<T: IterProduct> ProductReducer<T> {
    /// A product of `T`s.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        ProductReducer(std::iter::empty::<T>().product())
    }
}

impl<T> Reducer<T> for ProductReducer<T>
where
    T: MulAssign + Clone + Send + Sync,
{
    type Acc = T;
    type Result = T;
    fn identity(&self) -> T {
        self.0.clone()
    }
    #[inline]
    fn push(&self, acc: &mut T, item: T) -> ControlFlow<()> {
        *acc *= item;
        ControlFlow::Continue(())
    }
    fn combine(&self, mut left: T, right: T) -> T {
        left *= right;
        left
    }
    fn finish(&self, acc: T) -> T {
        acc
    }
    fn accept_device(&self, partial: DevicePartial<T>) -> Option<T> {
        match partial {
            DevicePartial::Value(v) => Some(v),
            _ => None,
        }
    }
}

/// A value not ordered with itself: a float NaN, or a tuple holding one.
#[inline]
fn unordered<T: PartialOrd>(value: &T) -> bool {
    value.partial_cmp(value).is_none()
}

/// The accumulator of [`MinReducer`] and [`MaxReducer`]: the element kept so far, and whether it
/// is ordered with itself. That is found once, when the element is kept, so that each element
/// after it takes one comparison: testing every element for a NaN again was a sixth of the loop
/// that folds a group's largest value (`par_max!` per key of a `group by`). The device's kernels
/// combine their partial results by the same rule (the kernel writer's `extreme_op`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Extreme<T> {
    /// No element yet.
    Empty,
    /// An element ordered with itself.
    Ordered(T),
    /// An element that is not (a float NaN, a tuple holding one).
    Unordered(T),
}

impl<T: PartialOrd> Extreme<T> {
    #[inline]
    fn of(value: T) -> Self {
        if unordered(&value) {
            Extreme::Unordered(value)
        } else {
            Extreme::Ordered(value)
        }
    }

    fn from_option(value: Option<T>) -> Self {
        value.map_or(Extreme::Empty, Extreme::of)
    }

    fn into_option(self) -> Option<T> {
        match self {
            Extreme::Empty => None,
            Extreme::Ordered(v) | Extreme::Unordered(v) => Some(v),
        }
    }

    /// Keeps `item` instead of the element kept if `item` is ordered with itself and either
    /// `beats(item, kept)` or the kept element is not: a value not ordered with itself is kept
    /// only while no other is, the first of them. Which is associative (unlike letting such a
    /// value win a comparison, as a tuple holding a NaN may: `(1.0, NaN) >= (0.0, 0.0)`), so
    /// that every way of cutting the elements into parts gives the same result.
    #[inline]
    fn push(&mut self, item: T, beats: impl Fn(&T, &T) -> bool) {
        match self {
            Extreme::Empty => *self = Extreme::of(item),
            Extreme::Ordered(kept) if !beats(&item, kept) => {}
            _ => {
                if !unordered(&item) {
                    *self = Extreme::Ordered(item);
                }
            }
        }
    }

    /// The kept element of a part followed by `right`'s, by the same rule as [`push`].
    ///
    /// [`push`]: Extreme::push
    fn combine(self, right: Self, beats: impl Fn(&T, &T) -> bool) -> Self {
        match (self, right) {
            (left, Extreme::Empty) => left,
            (Extreme::Empty, right) => right,
            (Extreme::Ordered(l), Extreme::Ordered(r)) => {
                Extreme::Ordered(if beats(&r, &l) { r } else { l })
            }
            (Extreme::Unordered(_), Extreme::Ordered(r)) => Extreme::Ordered(r),
            (left, Extreme::Unordered(_)) => left,
        }
    }
}

/// Whether `item` beats `kept` as the least element: it is smaller.
#[inline]
fn less<T: PartialOrd>(item: &T, kept: &T) -> bool {
    item < kept
}

/// Whether `item` beats `kept` as the greatest element: it is at least as large (the last of
/// equals wins).
#[inline]
fn at_least<T: PartialOrd>(item: &T, kept: &T) -> bool {
    item >= kept
}

/// `par_min!`: the least element, the first of equals (as [`Iterator::min`]); `None` when there
/// is no element.
///
/// Floats are compared as `f64::min` does: a NaN is ignored, so the result is NaN only when
/// every element is (the first NaN then). The same holds for any `PartialOrd` type: values
/// that are not ordered with themselves (a tuple holding a NaN) are ignored. `-0.0` and `+0.0`
/// are equal: the first one wins.
pub struct MinReducer<T>(PhantomData<fn(T)>);

impl<T> MinReducer<T> {
    /// The least `T`.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        MinReducer(PhantomData)
    }
}

impl<T: PartialOrd + Send> Reducer<T> for MinReducer<T> {
    type Acc = Extreme<T>;
    type Result = Option<T>;
    fn identity(&self) -> Extreme<T> {
        Extreme::Empty
    }
    #[inline]
    fn push(&self, acc: &mut Extreme<T>, item: T) -> ControlFlow<()> {
        acc.push(item, less);
        ControlFlow::Continue(())
    }
    fn combine(&self, left: Extreme<T>, right: Extreme<T>) -> Extreme<T> {
        left.combine(right, less)
    }
    fn finish(&self, acc: Extreme<T>) -> Option<T> {
        acc.into_option()
    }
    fn accept_device(&self, partial: DevicePartial<T>) -> Option<Extreme<T>> {
        match partial {
            DevicePartial::Optional(v) => Some(Extreme::from_option(v)),
            _ => None,
        }
    }
}

/// `par_max!`: the greatest element, the last of equals (as [`Iterator::max`]); `None` when
/// there is no element. NaN is ignored as in [`MinReducer`].
pub struct MaxReducer<T>(PhantomData<fn(T)>);

impl<T> MaxReducer<T> {
    /// The greatest `T`.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        MaxReducer(PhantomData)
    }
}

impl<T: PartialOrd + Send> Reducer<T> for MaxReducer<T> {
    type Acc = Extreme<T>;
    type Result = Option<T>;
    fn identity(&self) -> Extreme<T> {
        Extreme::Empty
    }
    #[inline]
    fn push(&self, acc: &mut Extreme<T>, item: T) -> ControlFlow<()> {
        acc.push(item, at_least);
        ControlFlow::Continue(())
    }
    fn combine(&self, left: Extreme<T>, right: Extreme<T>) -> Extreme<T> {
        left.combine(right, at_least)
    }
    fn finish(&self, acc: Extreme<T>) -> Option<T> {
        acc.into_option()
    }
    fn accept_device(&self, partial: DevicePartial<T>) -> Option<Extreme<T>> {
        match partial {
            DevicePartial::Optional(v) => Some(Extreme::from_option(v)),
            _ => None,
        }
    }
}

/// `par_count!`: the number of elements (the head is evaluated, its value dropped).
pub struct Count;

impl<T> Reducer<T> for Count {
    type Acc = usize;
    type Result = usize;
    fn identity(&self) -> usize {
        0
    }
    #[inline]
    fn push(&self, acc: &mut usize, _: T) -> ControlFlow<()> {
        // Every count is of elements pushed one at a time, here or in the parts combined into
        // it: a 64-bit count would take centuries to overflow, so only a narrower one is
        // checked (in the loop over a group's elements the check was a tenth of the work).
        if cfg!(target_pointer_width = "64") {
            *acc += 1;
        } else {
            *acc = acc.checked_add(1).unwrap_or_else(|| count_overflow());
        }
        ControlFlow::Continue(())
    }
    fn combine(&self, left: usize, right: usize) -> usize {
        left.checked_add(right).unwrap_or_else(|| count_overflow())
    }
    fn finish(&self, acc: usize) -> usize {
        acc
    }
    fn accept_device(&self, partial: DevicePartial<T>) -> Option<usize> {
        match partial {
            DevicePartial::Count(n) => {
                Some(usize::try_from(n).unwrap_or_else(|_| count_overflow()))
            }
            _ => None,
        }
    }
}

#[cold]
fn count_overflow() -> ! {
    panic!("parcomp: par_count! counted more elements than usize can hold")
}

/// `par_any!`: whether some element is `true`; stops as soon as one is.
pub struct Any;

impl Reducer<bool> for Any {
    type Acc = bool;
    type Result = bool;
    const EARLY_EXIT: bool = true;
    fn identity(&self) -> bool {
        false
    }
    #[inline]
    fn push(&self, acc: &mut bool, item: bool) -> ControlFlow<()> {
        if item {
            *acc = true;
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    }
    fn combine(&self, left: bool, right: bool) -> bool {
        left || right
    }
    fn finish(&self, acc: bool) -> bool {
        acc
    }
    fn accept_device(&self, partial: DevicePartial<bool>) -> Option<bool> {
        match partial {
            DevicePartial::Flag(b) => Some(b),
            _ => None,
        }
    }
}

/// `par_all!`: whether every element is `true`; stops as soon as one is not.
pub struct All;

impl Reducer<bool> for All {
    type Acc = bool;
    type Result = bool;
    const EARLY_EXIT: bool = true;
    fn identity(&self) -> bool {
        true
    }
    #[inline]
    fn push(&self, acc: &mut bool, item: bool) -> ControlFlow<()> {
        if item {
            ControlFlow::Continue(())
        } else {
            *acc = false;
            ControlFlow::Break(())
        }
    }
    fn combine(&self, left: bool, right: bool) -> bool {
        left && right
    }
    fn finish(&self, acc: bool) -> bool {
        acc
    }
    fn accept_device(&self, partial: DevicePartial<bool>) -> Option<bool> {
        match partial {
            DevicePartial::Flag(b) => Some(b),
            _ => None,
        }
    }
}

/// `par_reduce!(op, identity; ...)`: any associative `op` with its neutral element.
pub struct Fold<T, F> {
    identity: T,
    op: F,
}

impl<T, F> Fold<T, F>
where
    F: Fn(T, T) -> T,
{
    /// A reduction by `op` starting from `identity`.
    pub fn new(identity: T, op: F) -> Self {
        Fold { identity, op }
    }
}

impl<T, F> Reducer<T> for Fold<T, F>
where
    T: Clone + Send + Sync,
    F: Fn(T, T) -> T + Sync,
{
    type Acc = T;
    type Result = T;
    fn identity(&self) -> T {
        self.identity.clone()
    }
    #[inline]
    fn push(&self, acc: &mut T, item: T) -> ControlFlow<()> {
        *acc = (self.op)(std::mem::replace(acc, self.identity.clone()), item);
        ControlFlow::Continue(())
    }
    fn combine(&self, left: T, right: T) -> T {
        (self.op)(left, right)
    }
    fn finish(&self, acc: T) -> T {
        acc
    }
    fn accept_device(&self, partial: DevicePartial<T>) -> Option<T> {
        match partial {
            DevicePartial::Value(v) => Some(v),
            _ => None,
        }
    }
}

/// A nested `par!`: the elements of each outer element, as a `Vec`, in order.
pub struct CollectVec;

impl<T: Send> Reducer<T> for CollectVec {
    type Acc = Vec<T>;
    type Result = Vec<T>;
    fn identity(&self) -> Vec<T> {
        Vec::new()
    }
    #[inline]
    fn push(&self, acc: &mut Vec<T>, item: T) -> ControlFlow<()> {
        acc.push(item);
        ControlFlow::Continue(())
    }
    fn combine(&self, mut left: Vec<T>, mut right: Vec<T>) -> Vec<T> {
        if left.is_empty() {
            return right;
        }
        left.append(&mut right);
        left
    }
    fn finish(&self, acc: Vec<T>) -> Vec<T> {
        acc
    }
}

/// A [`Folder`] that reduces into an accumulator. With a `stop` flag, a reducer that can decide
/// its result early (`par_any!`, `par_all!`) raises the flag when it has, and every folder
/// sharing the flag stops at its next element.
pub(crate) struct ReduceFolder<'a, T, R: Reducer<T>> {
    reducer: &'a R,
    pub(crate) acc: R::Acc,
    stop: Option<&'a AtomicBool>,
    item: PhantomData<fn(T)>,
}

impl<'a, T, R: Reducer<T>> ReduceFolder<'a, T, R> {
    pub(crate) fn new(reducer: &'a R, stop: Option<&'a AtomicBool>) -> Self {
        Self::with_acc(reducer, reducer.identity(), stop)
    }

    pub(crate) fn with_acc(reducer: &'a R, acc: R::Acc, stop: Option<&'a AtomicBool>) -> Self {
        ReduceFolder { reducer, acc, stop, item: PhantomData }
    }
}

impl<T, R: Reducer<T>> Folder<T> for ReduceFolder<'_, T, R> {
    // A reducer that may stop early checks the shared flag at every element: its own loop.
    const OWN_LOOP: bool = R::OWN_LOOP && !R::EARLY_EXIT;

    #[inline]
    fn push_iter(&mut self, items: impl Iterator<Item = T>) -> ControlFlow<()> {
        if R::EARLY_EXIT {
            for item in items {
                self.push(item)?;
            }
            return ControlFlow::Continue(());
        }
        self.reducer.push_iter(&mut self.acc, items)
    }

    #[inline]
    fn push(&mut self, item: T) -> ControlFlow<()> {
        if R::EARLY_EXIT {
            if let Some(stop) = self.stop {
                if stop.load(Ordering::Relaxed) {
                    return ControlFlow::Break(());
                }
            }
        }
        let flow = self.reducer.push(&mut self.acc, item);
        if R::EARLY_EXIT && flow.is_break() {
            if let Some(stop) = self.stop {
                stop.store(true, Ordering::Relaxed);
            }
        }
        flow
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fold<T: Clone, R: Reducer<T>>(r: &R, items: &[T]) -> R::Result {
        r.finish(accumulate(r, items))
    }

    fn accumulate<T: Clone, R: Reducer<T>>(r: &R, items: &[T]) -> R::Acc {
        let mut acc = r.identity();
        for item in items {
            if r.push(&mut acc, item.clone()).is_break() {
                break;
            }
        }
        acc
    }

    /// The result of `items` cut at `cut`, each side accumulated alone, then combined.
    fn fold_split<T: Clone, R: Reducer<T>>(r: &R, items: &[T], cut: usize) -> R::Result {
        let (a, b) = items.split_at(cut);
        r.finish(r.combine(accumulate(r, a), accumulate(r, b)))
    }

    #[test]
    fn reducers_agree_with_iterators() {
        let xs = [3i64, -1, 4, 1, -5, 9];
        assert_eq!(fold(&SumReducer::new(), &xs), xs.iter().sum::<i64>());
        assert_eq!(fold(&ProductReducer::new(), &xs), xs.iter().product::<i64>());
        assert_eq!(fold(&MinReducer::new(), &xs), xs.iter().copied().min());
        assert_eq!(fold(&MaxReducer::new(), &xs), xs.iter().copied().max());
        assert_eq!(fold(&MinReducer::<i64>::new(), &[]), None);
        assert_eq!(fold(&Count, &xs), 6);
        assert!(fold(&Any, &[false, true]));
        assert!(!fold(&All, &[true, false]));
        assert!(fold(&All, &[]));
        assert_eq!(fold(&Fold::new(0, |a: i64, b| a.max(b)), &xs), 9);
        assert_eq!(fold(&CollectVec, &xs), xs.to_vec());
        assert_eq!(fold(&SumReducer::<f64>::new(), &[]), 0.0);
        assert_eq!(fold(&ProductReducer::<u8>::new(), &[]), 1);
    }

    #[test]
    fn float_min_and_max_ignore_nan_as_f64_min_does() {
        let nan = f64::NAN;
        let cases: [&[f64]; 6] = [
            &[3.0, nan, -1.0, 2.0],
            &[nan, nan, 5.0],
            &[nan],
            &[nan, nan],
            &[-0.0, 0.0],
            &[f64::INFINITY, nan, f64::NEG_INFINITY],
        ];
        for xs in cases {
            let min = fold(&MinReducer::new(), xs).expect("not empty");
            let max = fold(&MaxReducer::new(), xs).expect("not empty");
            let fmin = xs.iter().copied().fold(nan, f64::min);
            let fmax = xs.iter().copied().fold(nan, f64::max);
            assert_eq!(min.is_nan(), fmin.is_nan(), "{xs:?}");
            assert_eq!(max.is_nan(), fmax.is_nan(), "{xs:?}");
            if !fmin.is_nan() {
                assert_eq!(min, fmin, "{xs:?}");
                assert_eq!(max, fmax, "{xs:?}");
            }
            // Every split combines to the same result.
            for cut in 0..=xs.len() {
                let split = fold_split(&MinReducer::new(), xs, cut).expect("not empty");
                assert_eq!(split.to_bits(), min.to_bits(), "{xs:?} cut at {cut}");
                let split = fold_split(&MaxReducer::new(), xs, cut).expect("not empty");
                assert_eq!(split.to_bits(), max.to_bits(), "{xs:?} cut at {cut}");
            }
        }
        // The first of equal zeros for min, the last for max.
        assert!(fold(&MinReducer::new(), &[-0.0f64, 0.0]).unwrap().is_sign_negative());
        assert!(fold(&MaxReducer::new(), &[-0.0f64, 0.0]).unwrap().is_sign_positive());
    }

    /// Every sequence of up to four pairs drawn from values with a NaN in either component
    /// (so that a pair may compare before the NaN decides, `(0, NaN) < (1, 0)`), folded and
    /// combined at every cut, against the rule written out: `item` replaces `kept` if it is
    /// ordered with itself and beats `kept` (`<` for the least, `>=` for the greatest) or `kept`
    /// is not ordered with itself.
    #[test]
    fn min_and_max_follow_the_rule_for_values_not_ordered_with_themselves() {
        fn by_rule<T: PartialOrd + Copy>(xs: &[T], beats: fn(&T, &T) -> bool) -> Option<T> {
            let mut kept: Option<T> = None;
            for &x in xs {
                kept = match kept {
                    Some(k) if unordered(&x) || !(unordered(&k) || beats(&x, &k)) => Some(k),
                    _ => Some(x),
                };
            }
            kept
        }
        let nan = f64::NAN;
        let values = [(0.0, 0.0), (0.0, nan), (1.0, 0.0), (1.0, nan), (nan, 0.0), (-0.0, 1.0)];
        let bits = |v: Option<(f64, f64)>| v.map(|(a, b)| (a.to_bits(), b.to_bits()));
        let mut sequences = vec![vec![]];
        for len in 1..=4 {
            for code in 0..values.len().pow(len) {
                let (mut c, mut xs) = (code, Vec::new());
                for _ in 0..len {
                    xs.push(values[c % values.len()]);
                    c /= values.len();
                }
                sequences.push(xs);
            }
        }
        for xs in &sequences {
            let (min, max) = (MinReducer::new(), MaxReducer::new());
            let want_min = by_rule(xs, |a, b| a < b);
            let want_max = by_rule(xs, |a, b| a >= b);
            assert_eq!(bits(fold(&min, xs)), bits(want_min), "min of {xs:?}");
            assert_eq!(bits(fold(&max, xs)), bits(want_max), "max of {xs:?}");
            for cut in 0..=xs.len() {
                let split = fold_split(&min, xs, cut);
                assert_eq!(bits(split), bits(want_min), "min of {xs:?} cut at {cut}");
                let split = fold_split(&max, xs, cut);
                assert_eq!(bits(split), bits(want_max), "max of {xs:?} cut at {cut}");
            }
        }
        // A device's partial is classified as it is taken.
        let partial = MaxReducer::new().accept_device(DevicePartial::Optional(Some(nan)));
        assert!(matches!(partial, Some(Extreme::Unordered(_))));
    }

    #[test]
    fn min_and_max_keep_the_first_and_last_of_equals() {
        // Ordered by the first field only.
        #[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
        struct Key(u8, #[allow(dead_code)] u8);
        impl Key {
            fn tag(&self) -> u8 {
                self.1
            }
        }
        let items = [Key(1, 0), Key(0, 1), Key(0, 2), Key(1, 3)];
        let by_first = |k: &Key| k.0;
        let _ = by_first;
        // Derived Ord compares both fields, so make the ties explicit with equal keys.
        let ties = [Key(0, 0), Key(0, 0)];
        assert_eq!(fold(&MinReducer::new(), &ties).map(|k| k.tag()), Some(0));
        assert_eq!(fold(&MinReducer::new(), &items).map(|k| k.tag()), Some(1));
        assert_eq!(fold(&MaxReducer::new(), &items).map(|k| k.tag()), Some(3));
        let (l, r) = (Extreme::Ordered(Key(2, 7)), Extreme::Ordered(Key(2, 7)));
        assert_eq!(MaxReducer::new().combine(l.clone(), r.clone()), r);
        assert_eq!(MinReducer::new().combine(l.clone(), r), l);
    }
}
