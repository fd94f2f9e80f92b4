//! The rayon backend.
//!
//! For one comprehension:
//! 1. Pick the level to split. If no generator follows the first, split the source itself.
//!    Otherwise size the children of every source element (the next generator's `Size`), take
//!    the prefix sum, and split the flattened children into ranges of equal size — one huge
//!    row is cut into as many ranges as it needs. If that level is too small to give every
//!    thread several ranges and more generators follow, materialise it and go one level down.
//! 2. Probe: run the first few elements on the calling thread, timed, doubling the batch. Work
//!    that will finish sooner than a parallel dispatch would pay for stays on this thread.
//! 3. Run the rest as `threads * CHUNKS_PER_THREAD` ranges on the current rayon pool; below the
//!    split every range runs the remaining generators, filters and the head as fused nested
//!    loops.
//! 4. Place the outputs: straight into the result at known offsets when each element's output
//!    count is known (counted first when generators but no filters follow), else through
//!    per-range buffers moved into the result in parallel.

use super::output::{reserve, split_slots, SliceWriter};
use super::partition::{Children, Layout, Leaves, Partitioned};
use super::sequential;
use crate::backend::eager_splitting;
use crate::pipeline::{Body, Descend};
use crate::site::Site;
use crate::source::{Materialized, Source};
use rayon::prelude::*;
use std::ops::Range;
use std::time::{Duration, Instant};

/// At most this many elements run on the calling thread without looking at the clock.
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
const PARALLEL_SIZING: usize = 64 * 1024;

/// How the outputs of each range are placed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Placement {
    /// Each element yields exactly one output: output offsets are element offsets.
    Exact,
    /// Output counts are exact but must be counted first (generators, no filters, below).
    Counted,
    /// Counts are unknown until run (filters below): per-range buffers.
    Buffered,
}

/// How a run is divided among threads.
#[derive(Clone, Copy)]
struct Schedule {
    site: &'static Site,
    threads: usize,
    /// Split as finely as possible (see `with_eager_splitting`).
    eager: bool,
}

impl Schedule {
    /// How many ranges the parallel part of a level is cut into.
    fn ranges(self) -> usize {
        let per_thread = if self.eager { 4 * CHUNKS_PER_THREAD } else { CHUNKS_PER_THREAD };
        self.threads * per_thread
    }
}

pub(super) fn collect<S, B>(site: &'static Site, source: &S, body: &B) -> Vec<B::Out>
where
    S: Source + Sync,
    S::Item: Clone + Send + Sync,
    B: Body<S::Item>,
{
    let schedule =
        Schedule { site, threads: rayon::current_num_threads(), eager: eager_splitting() };
    if schedule.threads <= 1 && !schedule.eager {
        // A pool of one thread: nothing to divide.
        return sequential::collect(site, source, body);
    }
    collect_level(schedule, source, body)
}

fn collect_level<P, B>(schedule: Schedule, parents: &P, body: &B) -> Vec<B::Out>
where
    P: Source + Sync,
    P::Item: Clone + Send + Sync,
    B: Body<P::Item>,
{
    let n = parents.size();
    if B::DEPTH == 0 {
        let placement = if B::FILTERS { Placement::Buffered } else { Placement::Exact };
        return run(schedule, &Leaves { parents, body }, n, placement);
    }
    let parallel_sizing = n >= PARALLEL_SIZING || schedule.eager;
    let layout = Layout::new(schedule.site, parents, body, parallel_sizing);
    let total = layout.total();
    if B::DEPTH >= 2 && total > 0 && total < schedule.threads.max(2) * DESCEND_PER_THREAD {
        return body.descend((0..n).map(|i| parents.fetch(i)), Descent { schedule });
    }
    let placement = if B::CHILD_EXACT {
        Placement::Exact
    } else if B::FILTERS_BELOW {
        Placement::Buffered
    } else {
        Placement::Counted
    };
    run(schedule, &Children { parents, body, layout }, total, placement)
}

/// Continues a run one level down, on a materialised level.
struct Descent {
    schedule: Schedule,
}

impl<Out: Send> Descend<Out> for Descent {
    type Output = Vec<Out>;

    fn visit<C, B>(self, contexts: Vec<C>, body: &B) -> Vec<Out>
    where
        C: Clone + Send + Sync,
        B: Body<C, Out = Out>,
    {
        collect_level(self.schedule, &Materialized(contexts), body)
    }
}

/// Runs elements `0..total` of a partitioned level and gathers the outputs in order.
fn run<R: Partitioned>(
    schedule: Schedule,
    level: &R,
    total: usize,
    placement: Placement,
) -> Vec<R::Out> {
    let site = schedule.site;
    let mut out = Vec::new();
    if placement == Placement::Exact {
        reserve(&mut out, total, site);
    }
    let done = match probe(level, total, schedule, &mut out) {
        Probe::Finished => return out,
        Probe::Sequential(done) => {
            if placement == Placement::Counted {
                // Counting first reserves the result once and reports a count too large for
                // usize instead of running until memory is exhausted.
                let rest = level.count(done..total).unwrap_or_else(|| site.size_overflow());
                reserve(&mut out, rest, site);
            }
            let _ = level.run(done..total, &mut out);
            return out;
        }
        Probe::Parallel(done) => done,
    };
    let ranges = split(done..total, schedule.ranges());
    match placement {
        Placement::Exact => {
            let lengths: Vec<usize> = ranges.iter().map(ExactSizeIterator::len).collect();
            fill(site, level, &mut out, ranges, lengths);
        }
        Placement::Counted => {
            let lengths: Vec<usize> = ranges
                .par_iter()
                .with_max_len(1)
                .map(|range| level.count(range.clone()).unwrap_or_else(|| site.size_overflow()))
                .collect();
            fill(site, level, &mut out, ranges, lengths);
        }
        Placement::Buffered => {
            let buffers: Vec<Vec<R::Out>> = ranges
                .into_par_iter()
                .with_max_len(1)
                .map(|range| {
                    let mut buffer = Vec::new();
                    let _ = level.run(range, &mut buffer);
                    buffer
                })
                .collect();
            append(site, &mut out, buffers);
        }
    }
    out
}

enum Probe {
    /// Everything ran.
    Finished,
    /// Elements `0..done` ran; the rest is too little work to share.
    Sequential(usize),
    /// Elements `0..done` ran; the rest is worth running in parallel.
    Parallel(usize),
}

/// Runs a prefix of the level on the calling thread, doubling the batch until enough time has
/// passed to estimate the cost of the rest.
fn probe<R: Partitioned>(
    level: &R,
    total: usize,
    schedule: Schedule,
    out: &mut Vec<R::Out>,
) -> Probe {
    if schedule.eager {
        return if total > 1 { Probe::Parallel(0) } else { Probe::Sequential(0) };
    }
    if schedule.threads <= 1 || total <= TINY {
        return Probe::Sequential(0);
    }
    let start = Instant::now();
    let mut done = 0;
    let mut batch = 1;
    loop {
        let end = total.min(done + batch);
        let _ = level.run(done..end, out);
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
        batch *= 2;
    }
}

/// Splits `range` into at most `parts` consecutive non-empty ranges of nearly equal length.
fn split(range: Range<usize>, parts: usize) -> Vec<Range<usize>> {
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

/// Runs `ranges` in parallel, range `k` writing exactly `lengths[k]` outputs straight into the
/// spare capacity of `out` after its current contents.
fn fill<R: Partitioned>(
    site: &'static Site,
    level: &R,
    out: &mut Vec<R::Out>,
    ranges: Vec<Range<usize>>,
    lengths: Vec<usize>,
) {
    let need = lengths
        .iter()
        .try_fold(0usize, |acc, &n| acc.checked_add(n))
        .unwrap_or_else(|| site.size_overflow());
    reserve(out, need, site);
    let slots = split_slots(&mut out.spare_capacity_mut()[..need], lengths);
    ranges.into_par_iter().zip(slots).with_max_len(1).for_each(|(range, slots)| {
        let mut writer = SliceWriter::new(slots, site);
        let _ = level.run(range, &mut writer);
        writer.finish();
    });
    // SAFETY: `split_slots` cut exactly the first `need` spare slots into the pieces, and every
    // piece was filled completely: `SliceWriter::finish` panics unless its piece received
    // exactly as many outputs as it has slots, and a panic in any range propagates out of
    // `for_each` before this line, leaving `out` at its old length (written elements leak).
    unsafe { out.set_len(out.len() + need) };
}

/// Moves the contents of `buffers`, in order, to the end of `out`, in parallel.
fn append<T: Send>(site: &'static Site, out: &mut Vec<T>, buffers: Vec<Vec<T>>) {
    let need = buffers
        .iter()
        .try_fold(0usize, |acc, b| acc.checked_add(b.len()))
        .unwrap_or_else(|| site.size_overflow());
    reserve(out, need, site);
    let lengths: Vec<usize> = buffers.iter().map(Vec::len).collect();
    let slots = split_slots(&mut out.spare_capacity_mut()[..need], lengths);
    buffers.into_par_iter().zip(slots).for_each(|(buffer, slots)| {
        for (slot, item) in slots.iter_mut().zip(buffer) {
            slot.write(item);
        }
    });
    // SAFETY: the pieces cover the first `need` spare slots and piece `k` has the length of
    // buffer `k`, whose every element was moved into it; moving cannot panic.
    unsafe { out.set_len(out.len() + need) };
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
