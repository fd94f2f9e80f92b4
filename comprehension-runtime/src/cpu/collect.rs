//! Collecting: the outputs of a split level, in nested-loop order, in one `Vec`.
//!
//! When the number of outputs of each range is known — each element yields exactly one, or
//! the ranges are counted first because generators but no filters follow the split — the
//! result is allocated once and every range writes straight into its own part of it. When it
//! is not known (filters), each range fills a buffer and the buffers are moved into the result
//! in one parallel pass.

use super::output::{reserve, split_slots, SliceWriter};
use super::partition::Partitioned;
use super::schedule::{probe, weighed_ranges, Job, Probe, Schedule, Shape};
use super::tasks::{each_item, each_piece_mut, map_tasks};
use crate::site::Site;
use std::ops::Range;

/// Gathers the outputs of a split level, in order.
#[derive(Clone, Copy)]
pub(super) struct CollectJob;

impl<Out: Send> Job<Out> for CollectJob {
    type Output = Vec<Out>;

    fn run<R: Partitioned<Out = Out>>(
        self,
        schedule: Schedule,
        level: &R,
        total: usize,
        shape: Shape,
    ) -> Vec<Out> {
        let placement = if shape.exact {
            Placement::Exact
        } else if shape.countable {
            Placement::Counted
        } else {
            Placement::Buffered
        };
        run(schedule, level, total, placement, shape)
    }
}

/// Ranges per thread in one wave of a buffered run.
const WAVE_RANGES_PER_THREAD: usize = 16;

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

/// Runs elements `0..total` of a split level and gathers the outputs in order.
fn run<R: Partitioned>(
    schedule: Schedule,
    level: &R,
    total: usize,
    placement: Placement,
    shape: Shape,
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
    let (ranges, counts) = weighed_ranges(schedule, level, done..total, shape, schedule.ranges());
    match placement {
        Placement::Exact => fill_exact(site, level, &mut out, done..total),
        Placement::Counted => {
            let lengths = match counts {
                Some(counts) => counts,
                None => map_tasks(ranges.len(), |k| {
                    level.count(ranges[k].clone()).unwrap_or_else(|| site.size_overflow())
                }),
            };
            fill(site, level, &mut out, ranges, lengths);
        }
        Placement::Buffered => {
            // In waves, each moved into the result before the next starts, so that the buffers
            // never hold more than a wave's worth of outputs besides the result.
            let wave = schedule.threads * WAVE_RANGES_PER_THREAD;
            let mut ran = 0;
            for ranges_of_wave in ranges.chunks(wave) {
                let buffers: Vec<Vec<R::Out>> = map_tasks(ranges_of_wave.len(), |k| {
                    let mut buffer = Vec::new();
                    let _ = level.run(ranges_of_wave[k].clone(), &mut buffer);
                    buffer
                });
                if ran == 0 && ranges_of_wave.len() < ranges.len() {
                    // Growing the result wave by wave would copy it again and again: reserve
                    // what the first wave suggests the whole will need (a little more), once.
                    let produced: usize = buffers.iter().map(Vec::len).sum();
                    let estimate = (produced as u128 * ranges.len() as u128
                        / ranges_of_wave.len() as u128) as usize;
                    let _ = out.try_reserve_exact(estimate.saturating_add(estimate / 8));
                }
                ran += ranges_of_wave.len();
                append(site, &mut out, buffers);
            }
            if out.capacity() - out.len() > out.len() / 8 {
                out.shrink_to_fit();
            }
        }
    }
    out
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
    each_item(ranges.into_iter().zip(slots).collect(), |_, (range, slots)| {
        let mut writer = SliceWriter::new(slots, site);
        let _ = level.run(range, &mut writer);
        writer.finish();
    });
    // SAFETY: `split_slots` cut exactly the first `need` spare slots into the pieces, and every
    // piece was filled completely: `SliceWriter::finish` panics unless its piece received
    // exactly as many outputs as it has slots, and a panic in any range propagates out of
    // `each_item` before this line, leaving `out` at its old length (written elements leak).
    unsafe { out.set_len(out.len() + need) };
}

/// Runs elements `range` of a level whose every element yields exactly one output, writing
/// them straight into the spare capacity of `out`. The range and its slots are split together,
/// adaptively: rayon splits a piece again only when a thread is idle, so an even level is cut
/// into as few pieces as keep the threads busy.
fn fill_exact<R: Partitioned>(
    site: &'static Site,
    level: &R,
    out: &mut Vec<R::Out>,
    range: Range<usize>,
) {
    let need = range.end - range.start;
    reserve(out, need, site);
    let slots = &mut out.spare_capacity_mut()[..need];
    each_piece_mut(slots, MIN_PIECE, |offset, slots| {
        let elements = range.start + offset..range.start + offset + slots.len();
        let mut writer = SliceWriter::new(slots, site);
        let _ = level.run(elements, &mut writer);
        writer.finish();
    });
    // SAFETY: the pieces cover the first `need` spare slots of `out` (piece at `offset` runs
    // the elements at the same offset of `range`), and every piece was filled completely:
    // `SliceWriter::finish` panics unless its piece received exactly as many outputs as it has
    // slots, and a panic propagates out of `each_piece_mut` before this line, leaving `out` at
    // its old length (written elements leak).
    unsafe { out.set_len(out.len() + need) };
}

/// The fewest elements a piece of an exact level is split into.
const MIN_PIECE: usize = 256;

/// Moves the contents of `buffers`, in order, to the end of `out`, in parallel.
pub(super) fn append<T: Send>(site: &'static Site, out: &mut Vec<T>, buffers: Vec<Vec<T>>) {
    let need = buffers
        .iter()
        .try_fold(0usize, |acc, b| acc.checked_add(b.len()))
        .unwrap_or_else(|| site.size_overflow());
    reserve(out, need, site);
    let lengths: Vec<usize> = buffers.iter().map(Vec::len).collect();
    let slots = split_slots(&mut out.spare_capacity_mut()[..need], lengths);
    each_item(buffers.into_iter().zip(slots).collect(), |_, (buffer, slots)| {
        for (slot, item) in slots.iter_mut().zip(buffer) {
            slot.write(item);
        }
    });
    // SAFETY: the pieces cover the first `need` spare slots and piece `k` has the length of
    // buffer `k`, whose every element was moved into it; moving cannot panic.
    unsafe { out.set_len(out.len() + need) };
}
