//! The CPU backends: rayon and the sequential reference.
//!
//! Both run the same [`Body`] chains. The sequential backend ([`sequential`]) is plain nested
//! loops and defines the semantics; the rayon backend ([`schedule`] picks where to split and
//! whether it pays, [`collect`] and [`reduce`] combine the parts) must produce the same
//! results, element for element.

mod collect;
mod output;
mod partition;
mod reduce;
mod schedule;
mod sequential;

pub(crate) use reduce::ReduceFolder;

use crate::backend::Backend;
use crate::pipeline::{Body, Reducer};
use crate::site::Site;
use crate::source::Source;
use collect::CollectJob;
use reduce::ReduceJob;
use schedule::run_level;
pub(crate) use schedule::{split, Schedule};
use std::sync::atomic::AtomicBool;

/// The parallel schedule for a run started on this thread, if the backend is rayon and there is
/// more than one thread to divide among.
pub(crate) fn schedule(site: &'static Site) -> Option<Schedule> {
    match Backend::current() {
        Backend::Sequential => None,
        Backend::Rayon => Schedule::current(site),
    }
}

/// Runs a comprehension, gathering its outputs in nested-loop order.
pub(crate) fn collect<S, B>(site: &'static Site, source: &S, body: &B) -> Vec<B::Out>
where
    S: Source + Sync,
    S::Item: Clone + Send + Sync,
    B: Body<S::Item>,
{
    match schedule(site) {
        None => sequential::collect(site, source, body),
        Some(schedule) => run_level(schedule, source, body, CollectJob),
    }
}

/// Runs a comprehension, reducing its outputs.
pub(crate) fn reduce<S, B, R>(site: &'static Site, source: &S, body: &B, reducer: &R) -> R::Acc
where
    S: Source + Sync,
    S::Item: Clone + Send + Sync,
    B: Body<S::Item>,
    R: Reducer<B::Out>,
{
    match schedule(site) {
        None => sequential::reduce(source, body, reducer),
        Some(schedule) => {
            let stop = AtomicBool::new(false);
            run_level(schedule, source, body, ReduceJob { reducer, stop: &stop })
        }
    }
}
