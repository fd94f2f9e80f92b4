//! The sequential reference backend: nested loops on the calling thread.

use super::output::reserve;
use crate::pipeline::{feed_each, Body, ReduceFolder, Reducer};
use crate::site::Site;
use crate::source::Source;

/// Collects by running every context's subtree in order into one `Vec`.
///
/// Before running, the size of the iteration space is counted down to the last generator (an
/// exact count when there is no filter) so that a size sum overflowing `usize` is reported as
/// such instead of looping until memory runs out.
pub(super) fn collect<S, B>(site: &'static Site, source: &S, body: &B) -> Vec<B::Out>
where
    S: Source + Sync,
    S::Item: Clone + Send + Sync,
    B: Body<S::Item>,
{
    let n = source.size();
    let mut bound = n;
    if B::DEPTH > 0 {
        if let Some(fanout) = body.regular_fanout() {
            // A product's size is known without looking at its elements.
            n.checked_mul(fanout).unwrap_or_else(|| site.size_overflow());
        }
        bound = 0;
        for i in 0..n {
            let count = body.count(source.fetch(i)).unwrap_or_else(|| site.size_overflow());
            bound = bound.checked_add(count).unwrap_or_else(|| site.size_overflow());
        }
    }
    let mut out = Vec::new();
    if !B::FILTERS {
        reserve(&mut out, bound, site);
    }
    for i in 0..n {
        // Collecting never stops early.
        let _ = body.feed(source.fetch(i), &mut out);
    }
    out
}

/// Reduces by running every context's subtree in order, stopping once the result is decided.
pub(super) fn reduce<S, B, R>(source: &S, body: &B, reducer: &R) -> R::Acc
where
    S: Source + Sync,
    S::Item: Clone + Send + Sync,
    B: Body<S::Item>,
    R: Reducer<B::Out>,
{
    let mut folder = ReduceFolder::new(reducer, None);
    let _ = feed_each(body, 0..source.size(), |i| source.fetch(i), &mut folder);
    folder.acc
}
