//! `parcomp::segmented` on a device: the segmented scans and reductions of a
//! [`Monoid`](crate::segmented::Monoid), and the two iotas.
//!
//! They are the kernels a comprehension runs, used directly: the generic program (scan,
//! load-balanced search, the flag kernels) and the reduction kernels of `reduce.cl`
//! instantiated for the monoid's operation on one primitive type. Every primitive tags each
//! value with its segment (`groups`, nondecreasing): from the flags by a scan of the segment
//! starts, from a [`Jagged`](crate::Jagged)'s offsets by the load-balanced search, or one
//! segment for a plain scan. Then one segmented scan runs in three phases (tile aggregates,
//! their exclusive prefixes, every tile rescanned), and its last phase writes either every
//! position's prefix or each segment's total (segments with no value keep the identity).

use super::arena::{Arena, Mem, Scratch};
use super::device::{Arg, Buffer, Device, DeviceError, DeviceInfo, Program, Queue};
use super::devices::device_of;
use super::executor::{launch_scan, launch_search, record_stats, RunStats};
use super::fault::{self, Fault};
use super::program::{self, GROUP, TILE};
use super::types::{from_columns, to_columns, DeviceType, TypeDesc};
use super::DeviceFailure;
use crate::backend::Backend;
use crate::site::Site;
use std::cell::RefCell;
use std::time::Instant;

/// How the values are cut into segments.
pub(crate) enum Segments<'a> {
    /// One segment.
    Whole,
    /// A segment starts at every `true` and at the first value.
    Flags(&'a [bool]),
    /// Row `r` is the values `offsets[r]..offsets[r + 1]` (rows may be empty).
    Offsets(&'a [usize]),
}

/// What a monoid primitive computes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Output {
    /// Every position's inclusive prefix within its segment.
    Inclusive,
    /// Every position's exclusive prefix within its segment.
    Exclusive,
    /// Each segment's total.
    PerSegment,
}

/// One primitive's run: the device, a queue of its own, its generic program, the fault word,
/// what it measured. Its device memory is a [`Scratch`] of the device's arena, as an executor
/// run's is: buffers it drops are reused by it, all of them go back to the arena when it ends,
/// and the same meter gives its peak memory and allocations. (Also the radix sort's, in
/// `sort.rs`.)
pub(super) struct Run<'d> {
    // The queue comes first: fields drop in order, and dropping the queue finishes it, before
    // the buffers of `fault` go back to the scratch memory.
    queue: Box<dyn Queue + 'd>,
    device: &'d dyn Device,
    scratch: &'d Scratch,
    pub(super) generic: program::Built,
    pub(super) fault: Mem<'d>,
    site: &'static Site,
    backend: &'static str,
    stats: RefCell<RunStats>,
}

/// The bytes of the tile sums a scan of `n` sizes needs (one per tile, and the total).
pub(super) fn scan_sums_bytes(n: u64) -> u64 {
    (n.div_ceil(TILE).max(1) + 1) * 8
}

/// Runs `body` as one primitive's run on the device of `backend`, and records what it measured
/// for [`super::last_run_stats`].
pub(super) fn with_run<R>(
    backend: Backend,
    site: &'static Site,
    body: impl FnOnce(&Run<'_>) -> Result<R, DeviceFailure>,
) -> Result<R, DeviceFailure> {
    let start = Instant::now();
    let device = device_of(backend)?;
    // Made before the run, so dropped after it: the run's queue is finished before its buffers
    // go back to the arena.
    let scratch = Scratch::new(Arena::of(device));
    let run = Run::new(device, &scratch, backend, site)?;
    let result = body(&run)?;
    run.finish(start);
    Ok(result)
}

impl<'d> Run<'d> {
    fn new(
        device: &'d dyn Device,
        scratch: &'d Scratch,
        backend: Backend,
        site: &'static Site,
    ) -> Result<Self, DeviceFailure> {
        let start = Instant::now();
        let (generic, origin) = program::generic(device)?;
        let mut stats = RunStats::default();
        stats.count(origin);
        stats.compile = start.elapsed();
        let queue = device.queue()?;
        let fault = scratch.hold(32)?;
        queue.zero(&fault, 0, 32)?;
        Ok(Run {
            queue,
            device,
            scratch,
            generic,
            fault,
            site,
            backend: backend.name(),
            stats: RefCell::new(stats),
        })
    }

    /// What the device is.
    pub(super) fn info(&self) -> &DeviceInfo {
        self.device.info()
    }

    /// Builds (or finds) the program of the monoid `op` over `tag`.
    fn monoid(&self, tag: &'static str, op: &'static str) -> Result<program::Built, DeviceFailure> {
        self.program(|device| program::monoid(device, tag, op))
    }

    /// Builds (or finds) another program the run needs with `get` (`program::sort`, ...),
    /// counting it in the run's statistics.
    pub(super) fn program(
        &self,
        get: impl FnOnce(&dyn Device) -> Result<(program::Built, program::Origin), DeviceError>,
    ) -> Result<program::Built, DeviceFailure> {
        let start = Instant::now();
        let (program, origin) = get(self.device)?;
        let mut stats = self.stats.borrow_mut();
        stats.count(origin);
        stats.compile += start.elapsed();
        Ok(program)
    }

    /// A buffer of at least `bytes` from the run's scratch memory (back to it when dropped).
    pub(super) fn alloc(&self, bytes: u64) -> Result<Mem<'d>, DeviceFailure> {
        Ok(self.scratch.hold(bytes)?)
    }

    /// A new buffer holding `bytes`.
    pub(super) fn upload(&self, bytes: &[u8]) -> Result<Mem<'d>, DeviceFailure> {
        let buffer = self.alloc(bytes.len() as u64)?;
        let start = Instant::now();
        self.queue.write(&buffer, 0, bytes)?;
        let mut stats = self.stats.borrow_mut();
        stats.transfer += start.elapsed();
        stats.bytes_in += bytes.len() as u64;
        Ok(buffer)
    }

    /// Reads `out.len()` bytes of `buffer` from `offset`, after every kernel queued, and
    /// panics with Rust's message if one of them recorded a fault.
    fn read(&self, buffer: &Buffer, offset: usize, out: &mut [u8]) -> Result<(), DeviceFailure> {
        let mut words = [0u8; 32];
        let start = Instant::now();
        // SAFETY: `words` and `out` are borrowed by this function, so they outlive the queue's
        // `finish` below and nothing else reads or writes them meanwhile; `finish` runs even
        // when a read failed to queue, so no queued read outlives its destination.
        let queued = unsafe {
            self.queue
                .read_async(&self.fault, 0, words.as_mut_ptr(), words.len())
                .and_then(|()| self.queue.read_async(buffer, offset, out.as_mut_ptr(), out.len()))
        };
        let finished = self.queue.finish();
        queued?;
        finished?;
        if let Some(f) = Fault::from_words(&words) {
            fault::raise(f, &[], self.site, self.backend);
        }
        let mut stats = self.stats.borrow_mut();
        stats.transfer += start.elapsed();
        stats.bytes_out += out.len() as u64;
        Ok(())
    }

    pub(super) fn read_usizes(
        &self,
        buffer: &Buffer,
        count: usize,
    ) -> Result<Vec<usize>, DeviceFailure> {
        let mut bytes = vec![0u8; count * 8];
        self.read(buffer, 0, &mut bytes)?;
        let word = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("8 bytes")) as usize;
        Ok(bytes.chunks_exact(8).map(word).collect())
    }

    pub(super) fn launch(
        &self,
        program: &dyn Program,
        kernel: &str,
        items: u64,
        args: &[Arg<'_>],
    ) -> Result<(), DeviceFailure> {
        if items == 0 {
            return Ok(());
        }
        self.stats.borrow_mut().launches += 1;
        self.queue.launch(program, kernel, items, GROUP, args).map_err(DeviceFailure::from)
    }

    /// The exclusive scan of `n` sizes (`u64`s): the offsets (n + 1 entries) and their total.
    /// A total over `u64::MAX` is the size-overflow panic.
    fn scan(&self, sizes: &Buffer, n: u64) -> Result<(Mem<'d>, u64), DeviceFailure> {
        let sums = self.alloc(scan_sums_bytes(n))?;
        let offsets = self.alloc((n + 1) * 8)?;
        self.scan_into(sizes, n, &sums, &offsets)?;
        let mut total = [0u8; 8];
        self.read(&offsets, n as usize * 8, &mut total)?;
        Ok((offsets, u64::from_le_bytes(total)))
    }

    /// Queues the exclusive scan of `n` sizes (`u64`s) into `offsets` (n + 1 entries), with
    /// `sums` ([`scan_sums_bytes`]) for the tiles' sums, reading nothing back.
    pub(super) fn scan_into(
        &self,
        sizes: &Buffer,
        n: u64,
        sums: &Buffer,
        offsets: &Buffer,
    ) -> Result<(), DeviceFailure> {
        let (queue, generic) = (&self.queue, &*self.generic);
        let launch = |kernel: &str, items: u64, args: &[Arg<'_>]| {
            queue.launch(generic, kernel, items, GROUP, args)
        };
        let launches = launch_scan(&launch, &self.fault, sizes, n, sums, offsets)?;
        self.stats.borrow_mut().launches += launches;
        Ok(())
    }

    /// `seg[a]` = the row (of `rows`, by `offsets`) holding position `a`, for `a < count`.
    fn search(&self, offsets: &Buffer, rows: u64, count: u64) -> Result<Mem<'d>, DeviceFailure> {
        let bounds = self.alloc(16)?;
        let seg = self.alloc(count * 8)?;
        let (queue, generic) = (&self.queue, &*self.generic);
        let launch = |kernel: &str, items: u64, args: &[Arg<'_>]| {
            queue.launch(generic, kernel, items, GROUP, args)
        };
        let launches = launch_search(&launch, offsets, rows, 0, count, &bounds, &seg)?;
        self.stats.borrow_mut().launches += launches;
        Ok(seg)
    }

    /// The segment of each position given by `flags` (a segment starts at every `true` and at
    /// 0), the segment starts (`u64` 0 or 1 each), and the number of segments.
    fn groups_of_flags(&self, flags: &[bool]) -> Result<(Mem<'d>, Mem<'d>, u64), DeviceFailure> {
        let n = flags.len() as u64;
        let bytes: Vec<u8> = flags.iter().map(|&f| u8::from(f)).collect();
        let flags = self.upload(&bytes)?;
        let starts = self.alloc(n * 8)?;
        let args = [Arg::Buffer(&flags), Arg::U64(n), Arg::Buffer(&starts)];
        self.launch(&*self.generic, "pc_flag_starts", n, &args)?;
        let (offsets, segments) = self.scan(&starts, n)?;
        let groups = self.alloc(n * 8)?;
        let args = [Arg::Buffer(&offsets), Arg::U64(n), Arg::Buffer(&groups)];
        self.launch(&*self.generic, "pc_groups_of", n, &args)?;
        Ok((groups, starts, segments))
    }

    /// Records the run's statistics for [`super::last_run_stats`].
    fn finish(self, start: Instant) {
        let mut stats = self.stats.take();
        stats.run = start.elapsed();
        stats.peak_memory = self.scratch.peak();
        stats.allocations = self.scratch.allocations();
        record_stats(stats);
    }
}

/// A monoid's scan or reduction of `values`, cut into `segments`, on the device of `backend`:
/// `op` is the dialect's scalar operation (`add`, `mul`, `min`, `max`, `and`, `or`, `xor`),
/// which `identity` must be the identity of.
pub(crate) fn monoid<T: DeviceType>(
    backend: Backend,
    site: &'static Site,
    op: &'static str,
    identity: T,
    values: &[T],
    segments: Segments<'_>,
    output: Output,
) -> Result<Vec<T>, DeviceFailure> {
    let desc = T::desc();
    let TypeDesc::Prim(prim) = desc else {
        return Err(DeviceFailure::cannot(format!("`{desc}` is not a primitive")));
    };
    let n = values.len() as u64;
    let rows = match segments {
        Segments::Offsets(offsets) => offsets.len().saturating_sub(1) as u64,
        _ => 0,
    };
    if n == 0 {
        // Nothing to combine: no prefixes and no flag-delimited segments; the one whole segment
        // and every row are the identity.
        let results = match (output, &segments) {
            (Output::PerSegment, Segments::Whole) => 1,
            (Output::PerSegment, Segments::Offsets(_)) => rows as usize,
            _ => 0,
        };
        return Ok(vec![identity; results]);
    }
    with_run(backend, site, |run| {
        let info = run.info();
        if desc.uses_f64() && !info.fp64 {
            return Err(DeviceFailure::cannot(format!(
                "the values are f64, which {info} does not have"
            )));
        }
        let program = run.monoid(prim.tag(), op)?;
        let program = &*program;
        let (_, bytes) = to_columns(values, values.len());
        let vals = run.upload(&bytes)?;
        let (_, identity_bytes) = to_columns(&[identity], 1);
        let caps = run.upload(&identity_bytes)?;
        // Every value's segment, and how many segments there are.
        let (groups, segment_count) = match segments {
            Segments::Whole => {
                let groups = run.alloc(n * 8)?;
                let args = [Arg::Buffer(&groups), Arg::U64(n), Arg::U64(0)];
                run.launch(&*run.generic, "pc_fill_u64", n, &args)?;
                (groups, 1)
            }
            Segments::Flags(flags) => {
                let (groups, _starts, count) = run.groups_of_flags(flags)?;
                (groups, count)
            }
            Segments::Offsets(offsets) => {
                let words: Vec<u8> =
                    offsets.iter().flat_map(|&o| (o as u64).to_le_bytes()).collect();
                let offsets = run.upload(&words)?;
                (run.search(&offsets, rows, n)?, rows)
            }
        };
        // The carry into the first tile: no group (so the first value starts one), the identity.
        let carry_group = run.upload(&u64::MAX.to_le_bytes())?;
        let carry_val = run.upload(&identity_bytes)?;
        let tiles = n.div_ceil(TILE);
        let agg_flags = run.alloc(tiles * 8)?;
        let (agg_layout, _) = to_columns::<T>(&[], tiles as usize);
        let agg_vals = run.alloc(agg_layout.bytes as u64)?;
        let cap = if output == Output::PerSegment { segment_count } else { n };
        let (out_layout, _) = to_columns::<T>(&[], cap as usize);
        let out = run.alloc(out_layout.bytes as u64)?;

        let (fault, caps) = (Arg::Buffer(&run.fault), Arg::Buffer(&caps));
        // The arguments every phase starts with: the values, tagged with their segments.
        let tagged = [
            fault,
            caps,
            Arg::U64(n),
            Arg::Buffer(&vals),
            Arg::U64(n),
            Arg::Buffer(&groups),
            Arg::Buffer(&carry_group),
        ];
        let aggregates = [Arg::Buffer(&agg_flags), Arg::U64(tiles), Arg::Buffer(&agg_vals)];
        let items = tiles * GROUP as u64;
        run.launch(program, "pc_m_segtiles", items, &[&tagged[..], &aggregates[..]].concat())?;
        let args = [&[fault, caps, Arg::U64(tiles)][..], &aggregates, &[Arg::Buffer(&carry_val)]];
        run.launch(program, "pc_m_segcarries", GROUP as u64, &args.concat())?;
        match output {
            Output::Inclusive | Output::Exclusive => {
                let exclusive = Arg::U32(u32::from(output == Output::Exclusive));
                let tail = [exclusive, Arg::U64(cap), Arg::Buffer(&out)];
                run.launch(
                    program,
                    "pc_m_segscanout",
                    items,
                    &[&tagged[..], &aggregates, &tail].concat(),
                )?;
            }
            Output::PerSegment => {
                // Rows with no value keep the identity.
                let args = [fault, caps, Arg::U64(cap), Arg::U64(cap), Arg::Buffer(&out)];
                run.launch(program, "pc_m_fill", cap, &args)?;
                let (next_group, next_val) = (run.alloc(8)?, run.alloc(8)?);
                let tail = [
                    Arg::U64(cap),
                    Arg::Buffer(&out),
                    Arg::Buffer(&next_group),
                    Arg::Buffer(&next_val),
                ];
                run.launch(
                    program,
                    "pc_m_segapply",
                    items,
                    &[&tagged[..], &aggregates, &tail].concat(),
                )?;
            }
        }
        let mut bytes = vec![0u8; out_layout.bytes];
        run.read(&out, 0, &mut bytes)?;
        let result = from_columns(&bytes, &out_layout, cap as usize);
        Ok(result)
    })
}

/// `replicated_iota` on the device: the row of every element of rows of `sizes`.
pub(crate) fn replicated_iota(
    backend: Backend,
    site: &'static Site,
    sizes: &[usize],
) -> Result<Vec<usize>, DeviceFailure> {
    if sizes.is_empty() {
        return Ok(Vec::new());
    }
    with_run(backend, site, |run| {
        let n = sizes.len() as u64;
        let words: Vec<u8> = sizes.iter().flat_map(|&s| (s as u64).to_le_bytes()).collect();
        let sizes = run.upload(&words)?;
        let (offsets, total) = run.scan(&sizes, n)?;
        let total = usize::try_from(total).unwrap_or_else(|_| site.size_overflow());
        let rows = run.search(&offsets, n, total as u64)?;
        let out = run.read_usizes(&rows, total)?;
        Ok(out)
    })
}

/// `segmented_iota` on the device: every position's index within its flag-delimited segment.
pub(crate) fn segmented_iota(
    backend: Backend,
    site: &'static Site,
    flags: &[bool],
) -> Result<Vec<usize>, DeviceFailure> {
    if flags.is_empty() {
        return Ok(Vec::new());
    }
    with_run(backend, site, |run| {
        let n = flags.len() as u64;
        let (groups, starts, segments) = run.groups_of_flags(flags)?;
        let firsts = run.alloc(segments * 8)?;
        let args = [Arg::Buffer(&starts), Arg::Buffer(&groups), Arg::U64(n), Arg::Buffer(&firsts)];
        run.launch(&*run.generic, "pc_segment_firsts", n, &args)?;
        let out = run.alloc(n * 8)?;
        let args = [Arg::Buffer(&groups), Arg::Buffer(&firsts), Arg::U64(n), Arg::Buffer(&out)];
        run.launch(&*run.generic, "pc_index_in_segment", n, &args)?;
        let out = run.read_usizes(&out, n as usize)?;
        Ok(out)
    })
}
