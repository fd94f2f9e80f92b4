//! Reducing: the outputs of a split level folded into one accumulator, parts combined left to
//! right.

use super::partition::Partitioned;
use super::schedule::{probe, weighed_ranges, Job, Probe, Schedule, Shape};
use crate::pipeline::{Folder, Reducer};
use rayon::prelude::*;
use std::marker::PhantomData;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};

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

/// Reduces the outputs of a split level.
pub(super) struct ReduceJob<'a, R> {
    pub(super) reducer: &'a R,
    pub(super) stop: &'a AtomicBool,
}

impl<R> Clone for ReduceJob<'_, R> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<R> Copy for ReduceJob<'_, R> {}

impl<Out: Send, R: Reducer<Out>> Job<Out> for ReduceJob<'_, R> {
    type Output = R::Acc;

    fn run<L: Partitioned<Out = Out>>(
        self,
        schedule: Schedule,
        level: &L,
        total: usize,
        shape: Shape,
    ) -> R::Acc {
        let mut first = ReduceFolder::new(self.reducer, Some(self.stop));
        let done = match probe(level, total, schedule, &mut first) {
            Probe::Finished => return first.acc,
            Probe::Sequential(done) => {
                let _ = level.run(done..total, &mut first);
                return first.acc;
            }
            Probe::Parallel(done) => done,
        };
        let (ranges, _) = weighed_ranges(schedule, level, done..total, shape);
        let parts: Vec<R::Acc> = ranges
            .into_par_iter()
            .with_max_len(1)
            .map(|range| {
                let mut folder = ReduceFolder::new(self.reducer, Some(self.stop));
                let _ = level.run(range, &mut folder);
                folder.acc
            })
            .collect();
        parts.into_iter().fold(first.acc, |left, right| self.reducer.combine(left, right))
    }
}
