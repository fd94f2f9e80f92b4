//! Reducing: the outputs of a split level folded into one accumulator, parts combined left to
//! right.

use super::partition::Partitioned;
use super::schedule::{probe, weighed_ranges, Job, Probe, Schedule, Shape};
use super::tasks::map_tasks;
use crate::pipeline::{ReduceFolder, Reducer};
use std::sync::atomic::AtomicBool;

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
        let parts = if R::FEW_PARTS { schedule.few_ranges() } else { schedule.ranges() };
        let (ranges, _) = weighed_ranges(schedule, level, done..total, shape, parts);
        let parts: Vec<R::Acc> = map_tasks(ranges.len(), |k| {
            let mut folder = ReduceFolder::new(self.reducer, Some(self.stop));
            let _ = level.run(ranges[k].clone(), &mut folder);
            folder.acc
        });
        parts.into_iter().fold(first.acc, |left, right| self.reducer.combine(left, right))
    }
}
