//! The CPU backends: rayon and the sequential reference.
//!
//! Both run the same [`Body`] chains through one [`Executor`], [`CpuExecutor`]. The sequential
//! backend ([`sequential`]) is plain nested loops and defines the semantics; the rayon backend
//! ([`schedule`] picks where to split and whether it pays, [`collect`] and [`reduce`] combine
//! the parts) must produce the same results, element for element.

mod collect;
mod output;
mod partition;
mod reduce;
mod schedule;
mod sequential;
mod tasks;

use crate::pipeline::{Body, Executor, ReduceFolder, Reducer};
use crate::site::Site;
use crate::source::Source;
use collect::CollectJob;
use reduce::ReduceJob;
use schedule::run_level;
pub(crate) use schedule::split;
use schedule::Pool;
use std::sync::atomic::AtomicBool;

/// Inner spaces of nested comprehensions with at least this many elements are divided among
/// the threads.
const DIVIDE_INNER_FROM: usize = 1 << 15;

/// Runs comprehensions on the host: on the calling thread (the sequential reference, or rayon
/// with a single thread), or divided among the threads of the current rayon pool.
#[derive(Clone, Copy)]
pub struct CpuExecutor {
    schedule: Option<Pool>,
}

impl CpuExecutor {
    /// The sequential reference: nested loops on the calling thread.
    pub(crate) fn sequential() -> Self {
        CpuExecutor { schedule: None }
    }

    /// rayon, in the caller's current pool; with one thread there is nothing to divide, so it
    /// runs sequentially (unless eager splitting is in effect, for tests).
    pub(crate) fn rayon(eager: bool) -> Self {
        CpuExecutor { schedule: Pool::current(eager) }
    }
}

impl Executor for CpuExecutor {
    fn collect<S, B>(self, site: &'static Site, source: &S, body: &B) -> Vec<B::Out>
    where
        S: Source + Sync,
        S::Item: Clone + Send + Sync,
        B: Body<S::Item>,
    {
        match self.schedule {
            None => sequential::collect(site, source, body),
            Some(schedule) => run_level(schedule.at(site), source, body, CollectJob),
        }
    }

    fn reduce<S, B, R>(self, site: &'static Site, source: &S, body: &B, reducer: &R) -> R::Acc
    where
        S: Source + Sync,
        S::Item: Clone + Send + Sync,
        B: Body<S::Item>,
        R: Reducer<B::Out>,
    {
        match self.schedule {
            None => sequential::reduce(source, body, reducer),
            Some(schedule) => {
                let stop = AtomicBool::new(false);
                run_level(schedule.at(site), source, body, ReduceJob { reducer, stop: &stop })
            }
        }
    }

    fn divide_inner_from(self) -> Option<usize> {
        let schedule = self.schedule?;
        Some(if schedule.eager { 2 } else { DIVIDE_INNER_FROM })
    }

    fn reduce_children<C, B, R>(self, body: &B, ctx: &C, children: usize, reducer: &R) -> R::Acc
    where
        C: Clone + Send + Sync,
        B: Body<C>,
        R: Reducer<B::Out>,
    {
        let pieces = self.schedule.map_or(1, Pool::ranges);
        let pieces = split(0..children, pieces);
        tasks::map_tasks(pieces.len(), |k| {
            let mut folder = ReduceFolder::new(reducer, None);
            let _ = body.feed_children(ctx, pieces[k].clone(), &mut folder);
            folder.acc
        })
        .into_iter()
        .reduce(|left, right| reducer.combine(left, right))
        .unwrap_or_else(|| reducer.identity())
    }
}
