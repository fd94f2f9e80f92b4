//! The rayon backend: where to split a comprehension, and when it is worth it.
//!
//! For one comprehension:
//! 1. Pick the level to split. If no generator follows the first, split the source itself.
//!    Otherwise size the children of every source element (the next generator's `Size`), take
//!    the prefix sum, and split the flattened children into ranges of equal size — one huge
//!    row is cut into as many ranges as it needs. If that level is too small to give every
//!    thread several ranges and more generators follow, materialise it and go one level down.
//! 2. Probe: run the first few elements on the calling thread, timed, in batches growing
//!    fourfold. Work that will finish sooner than a parallel dispatch would pay for stays on
//!    this thread.
//! 3. Cut the rest into ranges (see [`weighed_ranges`]): of equal length when every element is
//!    about as much work; of equal *work* when generators follow the split, the work of an
//!    element being the size of its subtree (counted in a quick pass over the levels between);
//!    finely, and taken by the threads as they become free, when filters decide the outputs.
//!    Below the split every range runs the remaining generators, filters and the head as fused
//!    nested loops.
//! 4. Combine the ranges' results: [`collect`](super::collect) places outputs, in order, in
//!    one `Vec`; [`reduce`](super::reduce) combines accumulators left to right.

use super::partition::{Children, Layout, Leaves, Partitioned};
use crate::pipeline::{Body, Descend, Folder};
use crate::site::Site;
use crate::source::{Cloned, Source};
use std::ops::{ControlFlow, Range};
use std::time::{Duration, Instant};

/// At most this many elements run on the calling thread without looking at the clock (so up to
/// this many expensive elements run one after the other before the work is shared).
const TINY: usize = 16;
/// The probe stops once it has run this long (enough to estimate the rest) ...
const PROBE_TIME: Duration = Duration::from_micros(2);
/// ... or this many elements.
const PROBE_ELEMENTS: usize = 4096;
/// Estimated remaining work below this stays on the calling thread: a dispatch to the pool and
/// back costs a few microseconds.
const PARALLEL_WORTH: Duration = Duration::from_micros(30);
/// Ranges per thread: several, so that ranges of unequal cost even out by work stealing.
const CHUNKS_PER_THREAD: usize = 16;
/// A level with fewer elements than this per thread is materialised and split one level lower.
const DESCEND_PER_THREAD: usize = 16;
/// Levels with at least this many contexts are sized in parallel.
pub(super) const PARALLEL_SIZING: usize = 64 * 1024;

/// How a run is divided among threads.
#[derive(Clone, Copy)]
pub(crate) struct Schedule {
    pub(super) site: &'static Site,
    pub(crate) threads: usize,
    /// Split as finely as possible (see `with_eager_splitting`).
    pub(crate) eager: bool,
}

impl Schedule {
    /// How many ranges the parallel part of a level is cut into.
    pub(crate) fn ranges(self) -> usize {
        Pool { threads: self.threads, eager: self.eager }.ranges()
    }

    /// How many ranges a reduction whose accumulators are costly to start and combine
    /// ([`Reducer::FEW_PARTS`](crate::pipeline::Reducer::FEW_PARTS)) is cut into: two per
    /// thread (as finely as ever when splitting eagerly, which tests the combining).
    pub(crate) fn few_ranges(self) -> usize {
        if self.eager {
            self.ranges()
        } else {
            2 * self.threads
        }
    }
}

/// The threads a run started on this thread can divide its work among.
#[derive(Clone, Copy)]
pub(crate) struct Pool {
    pub(crate) threads: usize,
    /// Split as finely as possible (see `with_eager_splitting`).
    pub(crate) eager: bool,
}

impl Pool {
    /// The caller's current rayon pool, or `None` when there is nothing to divide (a pool of
    /// one thread, and no eager splitting): run sequentially.
    pub(crate) fn current(eager: bool) -> Option<Pool> {
        let pool = Pool { threads: rayon::current_num_threads(), eager };
        (pool.threads > 1 || pool.eager).then_some(pool)
    }

    /// The schedule of a run of the comprehension written at `site`.
    pub(crate) fn at(self, site: &'static Site) -> Schedule {
        Schedule { site, threads: self.threads, eager: self.eager }
    }

    /// How many ranges the parallel part of a level is cut into.
    pub(crate) fn ranges(self) -> usize {
        let per_thread = if self.eager { 4 * CHUNKS_PER_THREAD } else { CHUNKS_PER_THREAD };
        self.threads * per_thread
    }
}

/// What the outputs of the elements of a split level look like.
#[derive(Clone, Copy)]
pub(super) struct Shape {
    /// Each element yields exactly one output.
    pub(super) exact: bool,
    /// [`Partitioned::count`] is exact (no filter below the split).
    pub(super) countable: bool,
    /// Generators stand below the split, so elements differ in how much work they hold.
    pub(super) uneven: bool,
}

/// Blocks counted per range when weighing uneven elements.
const BLOCKS_PER_RANGE: usize = 8;
/// How much finer than usual a level is cut when its outputs cannot be counted.
const FINE_RANGES: usize = 8;

/// Cuts `range` into about `parts` (usually [`Schedule::ranges`]) consecutive ranges of equal *work*: for uneven elements
/// (generators below the split) the work of an element is its number of outputs ignoring the
/// filters of the last level — the size of its subtree — plus one. Returns the ranges and, for
/// each, its counted outputs (exact when `shape.countable`), or `None` for even elements,
/// which are simply cut into ranges of equal length.
pub(super) fn weighed_ranges<R: Partitioned>(
    schedule: Schedule,
    level: &R,
    range: Range<usize>,
    shape: Shape,
    parts: usize,
) -> (Vec<Range<usize>>, Option<Vec<usize>>) {
    if !shape.countable {
        // Filters decide the outputs: counting would cost another pass over everything below.
        // Instead, cut finely and let the threads take ranges as they become free, so that an
        // expensive range at the end holds up only a small part of the work (and buffered
        // outputs can be gathered in waves).
        return (split(range, parts * FINE_RANGES), None);
    }
    if !shape.uneven {
        return (split(range, parts), None);
    }
    let site = schedule.site;
    let blocks = split(range, parts * BLOCKS_PER_RANGE);
    let counts: Vec<usize> = super::tasks::map_tasks(blocks.len(), |k| {
        level.count(blocks[k].clone()).unwrap_or_else(|| site.size_overflow())
    });
    let (ranges, range_counts) = cut_by_weight(site, parts, &blocks, &counts);
    (ranges, Some(range_counts))
}

/// Joins consecutive `blocks` (with their output `counts`) into about `parts` ranges of equal
/// work (outputs plus elements), and sums their counts. Not generic: compiled once.
fn cut_by_weight(
    site: &'static Site,
    parts: usize,
    blocks: &[Range<usize>],
    counts: &[usize],
) -> (Vec<Range<usize>>, Vec<usize>) {
    let weight = |k: usize| counts[k].saturating_add(blocks[k].len());
    let total: usize = (0..blocks.len()).fold(0usize, |sum, k| sum.saturating_add(weight(k)));
    let target = total.div_ceil(parts).max(1);
    let mut ranges = Vec::with_capacity(parts + 1);
    let mut range_counts = Vec::with_capacity(parts + 1);
    let (mut start, mut weight_so_far, mut count_so_far) =
        (blocks.first().map_or(0, |b| b.start), 0usize, 0usize);
    for k in 0..blocks.len() {
        weight_so_far = weight_so_far.saturating_add(weight(k));
        count_so_far = count_so_far.checked_add(counts[k]).unwrap_or_else(|| site.size_overflow());
        if weight_so_far >= target || k + 1 == blocks.len() {
            ranges.push(start..blocks[k].end);
            range_counts.push(count_so_far);
            start = blocks[k].end;
            weight_so_far = 0;
            count_so_far = 0;
        }
    }
    (ranges, range_counts)
}

/// What to do with a split level: gather its outputs, reduce them, ...
pub(super) trait Job<Out: Send>: Copy + Sync {
    /// The result.
    type Output;
    /// Runs elements `0..total` of `level`.
    fn run<R: Partitioned<Out = Out>>(
        self,
        schedule: Schedule,
        level: &R,
        total: usize,
        shape: Shape,
    ) -> Self::Output;
}

/// Picks the level to split below `parents` and runs `job` on it.
pub(super) fn run_level<P, B, J>(schedule: Schedule, parents: &P, body: &B, job: J) -> J::Output
where
    P: Source + Sync,
    P::Item: Clone + Send + Sync,
    B: Body<P::Item>,
    J: Job<B::Out>,
{
    let n = parents.size();
    if B::DEPTH == 0 {
        let shape = Shape { exact: !B::FILTERS, countable: !B::FILTERS, uneven: B::NESTED };
        return job.run(schedule, &Leaves { parents, body }, n, shape);
    }
    let parallel_sizing = n >= PARALLEL_SIZING || schedule.eager;
    let layout = Layout::new(schedule.site, parents, body, parallel_sizing);
    let total = layout.total();
    if B::DEPTH >= 2 && total > 0 && total < schedule.threads.max(2) * DESCEND_PER_THREAD {
        return body.descend((0..n).map(|i| parents.fetch(i)), Descent { schedule, job });
    }
    let shape = Shape {
        exact: B::CHILD_EXACT,
        countable: !B::FILTERS_BELOW,
        uneven: B::DEPTH >= 2 || B::NESTED,
    };
    job.run(schedule, &Children { parents, body, layout }, total, shape)
}

/// Continues a run one level down, on a materialised level.
struct Descent<J> {
    schedule: Schedule,
    job: J,
}

impl<Out: Send, J: Job<Out>> Descend<Out> for Descent<J> {
    type Output = J::Output;

    fn visit<C, B>(self, contexts: Vec<C>, body: &B) -> J::Output
    where
        C: Clone + Send + Sync,
        B: Body<C, Out = Out>,
    {
        run_level(self.schedule, &Cloned(&contexts), body, self.job)
    }
}

/// What the probe found.
pub(super) enum Probe {
    /// Everything ran.
    Finished,
    /// Elements `0..done` ran; the rest is too little work to share.
    Sequential(usize),
    /// Elements `0..done` ran; the rest is worth running in parallel.
    Parallel(usize),
}

/// Runs a prefix of the level on the calling thread, doubling the batch until enough time has
/// passed to estimate the cost of the rest. A run that stops early (`Break`) is finished.
pub(super) fn probe<R, F>(level: &R, total: usize, schedule: Schedule, out: &mut F) -> Probe
where
    R: Partitioned,
    F: Folder<R::Out>,
{
    if schedule.eager {
        return if total > 1 { Probe::Parallel(0) } else { Probe::Sequential(0) };
    }
    if schedule.threads <= 1 || total <= TINY {
        return Probe::Sequential(0);
    }
    // The clock costs tens of nanoseconds here: read it after the first `TINY` elements, then
    // after batches four times larger, until there is enough to estimate the rest.
    let start = Instant::now();
    let mut done = 0;
    let mut batch = TINY;
    loop {
        let end = total.min(done + batch);
        if let ControlFlow::Break(()) = level.run(done..end, out) {
            return Probe::Finished;
        }
        done = end;
        if done == total {
            return Probe::Finished;
        }
        let elapsed = start.elapsed();
        if elapsed >= PROBE_TIME || done >= PROBE_ELEMENTS {
            let remaining = elapsed.as_nanos() * (total - done) as u128 / done as u128;
            return if remaining >= PARALLEL_WORTH.as_nanos() {
                Probe::Parallel(done)
            } else {
                Probe::Sequential(done)
            };
        }
        batch *= 4;
    }
}

/// Splits `range` into at most `parts` consecutive non-empty ranges of nearly equal length.
pub(crate) fn split(range: Range<usize>, parts: usize) -> Vec<Range<usize>> {
    let len = range.end - range.start;
    let parts = parts.clamp(1, len.max(1));
    (0..parts)
        .map(|k| {
            // k * len / parts without overflow: len < 2^64 and parts is small, so use u128.
            let at = |k: usize| range.start + ((k as u128 * len as u128) / parts as u128) as usize;
            at(k)..at(k + 1)
        })
        .filter(|r| !r.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn split_covers_the_range_in_order() {
        for (start, len, parts) in [(0, 0, 4), (3, 1, 4), (5, 10, 3), (0, 100, 7), (7, 5, 32)] {
            let ranges = split(start..start + len, parts);
            assert!(ranges.len() <= parts.max(1));
            let flat: Vec<usize> = ranges.iter().flat_map(|r| r.clone()).collect();
            assert_eq!(flat, (start..start + len).collect::<Vec<_>>());
            assert!(ranges.iter().all(|r| !r.is_empty()));
        }
    }
}
