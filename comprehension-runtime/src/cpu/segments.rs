//! Segmented reduction of a nested comprehension: one result per outer element.
//!
//! `par![par_sum![v * x[c] | (c, v) <- m.row(i)] | i <- 0..m.len()]` runs the inner
//! comprehension for every outer context. Rather than one parallel run per outer element, the
//! inner iteration spaces of all outer elements are laid end to end (the offsets are the
//! prefix sum of the inner sizes) and cut into equal chunks along the merge path of row ends
//! and elements — so a huge row is shared by many chunks and millions of empty rows cost no
//! more than their count. Each chunk reduces its pieces of rows; the pieces of a row cut by
//! chunk boundaries are combined in order. An outer element with no inner element gets the
//! reducer's identity.

use super::partition::Layout;
use super::reduce::ReduceFolder;
use super::schedule::{Schedule, PARALLEL_SIZING};
use crate::backend::Backend;
use crate::pipeline::{Body, Reducer};
use crate::segmented::reduce::reduce_by_offsets;
use crate::site::Site;
use crate::source::Cloned;

/// Elements of work per chunk below which a chunk is not worth a task.
const MIN_CHUNK: usize = 1024;

/// The accumulator of `body`'s outputs for every context of `contexts`, in order.
pub(crate) fn reduce_segments<C, B, R>(
    site: &'static Site,
    contexts: &[C],
    body: &B,
    reducer: &R,
) -> Vec<R::Acc>
where
    C: Clone + Send + Sync,
    B: Body<C>,
    R: Reducer<B::Out>,
{
    let schedule = match Backend::current() {
        Backend::Sequential => None,
        Backend::Rayon => Schedule::current(site),
    };
    let (Some(schedule), true) = (schedule, B::DEPTH > 0) else {
        return contexts
            .iter()
            .map(|ctx| {
                let mut folder = ReduceFolder::new(reducer, None);
                let _ = body.feed(ctx.clone(), &mut folder);
                folder.acc
            })
            .collect();
    };
    let parents = Cloned(contexts);
    let parallel_sizing = contexts.len() >= PARALLEL_SIZING || schedule.eager;
    let offsets = Layout::new(site, &parents, body, parallel_sizing).into_offsets(contexts.len());
    let work =
        contexts.len().checked_add(offsets[contexts.len()]).unwrap_or_else(|| site.size_overflow());
    let chunks = schedule.ranges();
    let block = if schedule.eager {
        Some(work.div_ceil(chunks).max(1))
    } else if work >= 2 * MIN_CHUNK {
        Some(work.div_ceil(chunks).max(MIN_CHUNK))
    } else {
        None
    };
    reduce_by_offsets(
        site,
        &offsets,
        &|| reducer.identity(),
        &|left, right| reducer.combine(left, right),
        block,
        &|row, range| {
            let start = offsets[row];
            let mut folder = ReduceFolder::new(reducer, None);
            let _ = body.feed_children(
                &contexts[row],
                range.start - start..range.end - start,
                &mut folder,
            );
            folder.acc
        },
    )
}
