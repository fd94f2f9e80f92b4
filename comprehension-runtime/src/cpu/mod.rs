//! The CPU backends: rayon and the sequential reference.
//!
//! Both run the same [`Body`] chains. The sequential backend ([`sequential`]) is plain nested
//! loops and defines the semantics; the rayon backend ([`schedule`] picks where to split and
//! whether it pays, [`collect`] and [`reduce`] combine the parts, [`segments`] reduces the
//! inner comprehensions of nested ones) must produce the same results, element for element.

mod collect;
mod output;
mod partition;
mod reduce;
mod schedule;
mod segments;
mod sequential;

pub(crate) use reduce::ReduceFolder;
pub(crate) use segments::reduce_segments;

use crate::backend::Backend;
use crate::pipeline::{Body, Reducer};
use crate::site::Site;
use crate::source::Source;
use collect::CollectJob;
use rayon::prelude::*;
use reduce::ReduceJob;
use schedule::{run_level, Schedule};
use std::sync::atomic::AtomicBool;

/// Work below which an already materialised list is processed on the calling thread.
const OWNED_SEQUENTIAL: usize = 1024;

/// Whether a materialised list of `len` items is worth processing in parallel.
fn owned_parallel(site: &'static Site, len: usize) -> bool {
    schedule(site).is_some_and(|s| s.eager || len >= OWNED_SEQUENTIAL)
}

/// The parallel schedule for a run started on this thread, if the backend is rayon and there is
/// more than one thread to divide among.
fn schedule(site: &'static Site) -> Option<Schedule> {
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

/// Runs `body` on each of `items` (already materialised, consumed in order), gathering the
/// outputs in order.
pub(crate) fn collect_owned<T, B>(site: &'static Site, items: Vec<T>, body: &B) -> Vec<B::Out>
where
    T: Send,
    B: Body<T>,
{
    if !owned_parallel(site, items.len()) {
        let mut out = Vec::new();
        if B::DEPTH == 0 && !B::FILTERS {
            output::reserve(&mut out, items.len(), site);
        }
        for item in items {
            let _ = body.feed(item, &mut out);
        }
        return out;
    }
    if B::DEPTH == 0 && !B::FILTERS {
        // Exactly one output per item: rayon places them in order.
        return items
            .into_par_iter()
            .map(|item| {
                let mut one = output::Single(None);
                let _ = body.feed(item, &mut one);
                one.take(site)
            })
            .collect();
    }
    let buffers: Vec<Vec<B::Out>> = items
        .into_par_iter()
        .fold(Vec::new, |mut buffer, item| {
            let _ = body.feed(item, &mut buffer);
            buffer
        })
        .collect();
    let mut out = Vec::new();
    collect::append(site, &mut out, buffers);
    out
}

/// Runs `body` on each of `items` (already materialised, consumed in order), reducing the
/// outputs.
pub(crate) fn reduce_owned<T, B, R>(
    site: &'static Site,
    items: Vec<T>,
    body: &B,
    reducer: &R,
) -> R::Acc
where
    T: Send,
    B: Body<T>,
    R: Reducer<B::Out>,
{
    if !owned_parallel(site, items.len()) {
        let mut folder = ReduceFolder::new(reducer, None);
        for item in items {
            if body.feed(item, &mut folder).is_break() {
                break;
            }
        }
        return folder.acc;
    }
    items
        .into_par_iter()
        .fold(
            || reducer.identity(),
            |acc, item| {
                let mut folder = ReduceFolder::with_acc(reducer, acc, None);
                let _ = body.feed(item, &mut folder);
                folder.acc
            },
        )
        .reduce(|| reducer.identity(), |left, right| reducer.combine(left, right))
}
