//! The plan executor: a comprehension's device plan run on any [`Device`], by flattening by
//! expansion, one chunk at a time, on a queue of its own.
//!
//! For each level of the comprehension (each generator), given its parents' columns:
//!
//! 1. **sizes** — the size kernel gives every parent's number of children; a product (regular)
//!    level asks one parent, once per run, and a position's parent is then a division;
//! 2. **offsets** — otherwise the generic scan turns the sizes into offsets (faulting if they
//!    sum to more than a `u64` counts), and the total is read back (with the fault word);
//! 3. **chunks** — the level's positions are taken `chunk` at a time (so device memory stays
//!    bounded however large the flattened space; the chunk follows the device's memory); for
//!    each, the load-balanced search finds every position's parent (its bounds found on the
//!    device), the level kernel fetches the elements and runs the qualifiers, and what a filter
//!    dropped is compacted away;
//! 4. **depth first** — each chunk's children are run through the next level before the next
//!    chunk, so outputs come out in nested-loop order.
//!
//! The last level computes the head: a `par!` reads the chunk's values straight into the
//! result; a reduction combines per-work-group partial results on the device into one partial
//! per chunk, kept on the device until the run ends; a comprehension nested in a head runs on
//! its enclosing comprehension's contexts and reduces per context by a segmented reduction
//! (each position tagged with its context, a carry across chunks), after which the head kernel
//! runs. Copies in are queued without waiting; the host waits only to read what sizes an output
//! (see the gpu README's "What a run costs"), and reads the fault word with each such read.

use super::arena::{self, Mem, Scratch};
use super::device::{Arg, Buffer, Device, DeviceError, Mark, Queue};
use super::fault::{self, Fault};
use super::host_data::{column_of, ColumnBytes, DynJagged, HostData, Records, Upload};
use super::plan::{
    CaptureKind, ClassId, Comp, DevicePlan, Level, ReduceKind, RootKind, RowsKernel, Terminal,
};
use super::program::{
    cpu_shapes, env_count, filter_items, level_items, plain_items, reduce_items, Built, GROUP,
    LBS_ITEMS, TILE,
};
use super::resident::Resident;
use super::types::{columns_par_at, Prim};
use super::types::{ColumnLayout, ColumnWriter, RecordLayout, TypeDesc};
use super::DeviceFailure;
use crate::backend::Backend;
use crate::site::Site;
use std::cell::Cell;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// What a run measured, for reports and for the tests that hold the cost budgets.
///
/// Counts are exact (what the executor asked of the device); the DRAM bytes are a *model*: for
/// each kernel, the bytes its access pattern implies it reads and writes in device memory
/// (every element of an input column it reads once, every output it writes, its flags,
/// offsets and segment ids; caches ignored), as documented in the gpu README, beside the
/// minimum any implementation needs (every input read once, every output written once).
#[derive(Clone, Debug, Default)]
pub struct RunStats {
    /// Time spent building programs (near zero when they were cached).
    pub compile: Duration,
    /// Programs compiled by the device's compiler for this run.
    pub programs_compiled: u32,
    /// Programs loaded from the disk cache for this run.
    pub programs_loaded: u32,
    /// Programs loaded from a kernel bundle (embedded by `kernel_bundle!`, or named by
    /// `PARCOMP_KERNEL_BUNDLE`) for this run.
    pub programs_bundled: u32,
    /// Time the host spent queueing copies and in its waits for reads (which include the
    /// kernels queued before them: copies are asynchronous).
    pub transfer: Duration,
    /// Bytes copied to the device.
    pub bytes_in: u64,
    /// Bytes copied from the device.
    pub bytes_out: u64,
    /// Copies to the device (each a call of the API's copy).
    pub copies_in: u64,
    /// Copies from the device.
    pub copies_out: u64,
    /// Bytes of the caller's memory the device read where they lie, neither copied nor
    /// converted: a primitive slice as the first generator, on a device whose memory is the
    /// host's (a CPU device such as PoCL).
    pub bytes_in_place: u64,
    /// Bytes the host converted element by element on their way to or from the device
    /// (splitting tuples into columns, assembling tuple results); a primitive slice copied as
    /// it is, or a primitive result read into the output's memory, converts nothing.
    pub bytes_converted: u64,
    /// Times the host waited for the device (a blocking read or a finish).
    pub host_waits: u64,
    /// Bytes the host copied through pinned staging memory on their way to or from the device
    /// (a GPU's copies of at least 64 kB; none on a device whose memory is the host's, such as
    /// PoCL's, unless `PARCOMP_DEVICE_STAGING` asks for it).
    pub bytes_staged: u64,
    /// Times a staged copy waited for the copy of the piece before last to end before reusing
    /// its pinned slot (the host copies each piece while the device moves the one before).
    pub staging_waits: u64,
    /// Bytes copied on the run's copy lane, beside its kernels (of the bytes in and out): a
    /// chunk's values read while the next chunk's kernels run, the first generator's elements
    /// copied a chunk ahead of the kernels that read them. None where the device has no lane
    /// (a CPU device, unless `PARCOMP_DEVICE_OVERLAP=on`) or the run is one chunk.
    pub bytes_beside: u64,
    /// Device allocations made by the run (buffers the session's arena could not reuse).
    pub allocations: u64,
    /// Copies in the run did not queue because the device held those bytes from an earlier
    /// run: the captures' header and scalars, when they are an earlier run's again (as in an
    /// iteration's rounds over data kept on the device). At most one; not in `copies_in`.
    pub copies_saved: u64,
    /// Fills the run did not queue: its fault record is one an earlier run read as zeros, so
    /// zeros still. At most one.
    pub fills_saved: u64,
    /// The most device memory the run held at once.
    pub peak_memory: u64,
    /// Kernels launched.
    pub launches: u64,
    /// Positions the level kernels ran (the flattened spaces' sizes).
    pub positions: u64,
    /// Positions a chunk holds (from the device's memory, or `PARCOMP_DEVICE_CHUNK`).
    pub chunk_size: u64,
    /// Chunks the levels were run in, all levels together.
    pub chunks: u64,
    /// Each kernel launched: its launches and modelled DRAM bytes, in order of first launch.
    pub kernels: Vec<KernelCost>,
    /// The modelled DRAM bytes of every kernel together.
    pub dram_bytes: u64,
    /// The least DRAM traffic the computation needs: every input read once, every output
    /// written once.
    pub dram_minimum: u64,
    /// Time from the first copy to the device (the inputs' and the captures' uploads) to the
    /// end: the copies in, the kernels, and the reads of the result.
    pub run: Duration,
}

/// One kernel's share of a run: launches, and the DRAM bytes its access pattern implies.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelCost {
    /// The kernel's name.
    pub name: String,
    /// How many times it was launched.
    pub launches: u64,
    /// Modelled bytes read from and written to device memory.
    pub dram_bytes: u64,
}

impl RunStats {
    /// Counts a program the run needed, by where it came from.
    pub(crate) fn count(&mut self, origin: super::program::Origin) {
        match origin {
            super::program::Origin::Compiled => self.programs_compiled += 1,
            super::program::Origin::Disk => self.programs_loaded += 1,
            super::program::Origin::Bundle => self.programs_bundled += 1,
            super::program::Origin::Memory => {}
        }
    }
}

thread_local! {
    /// What the last device run on this thread measured.
    static LAST_STATS: std::cell::RefCell<Option<RunStats>> = const { std::cell::RefCell::new(None) };
}

/// What the last device run on this thread measured (for reports).
pub fn last_run_stats() -> Option<RunStats> {
    LAST_STATS.with(|s| s.borrow().clone())
}

/// Records what a device run (the executor's, a segmented primitive's, the sort's) measured,
/// for [`last_run_stats`].
pub(crate) fn record_stats(stats: RunStats) {
    LAST_STATS.with(|s| *s.borrow_mut() = Some(stats));
}

/// Device memory a run reads: its own, values kept on the device by their owner, or the
/// caller's memory read in place ([`Device::wrap`]: released with the session, after its
/// queue finished, and never given to the arena).
enum Held<'c> {
    Own(Mem<'c>),
    Resident(&'c Buffer),
    InPlace(Buffer),
}

impl Held<'_> {
    fn buf(&self) -> &Buffer {
        match self {
            Held::Own(mem) => &mem.buf,
            Held::Resident(buffer) => buffer,
            Held::InPlace(buffer) => buffer,
        }
    }
}

/// Where a captured collection's values, or an array of rows' offsets, lie for the kernels (a
/// buffer of `PC_CAPS`, `kernels/captures.h`).
#[derive(Clone, Copy, Debug)]
enum CapBuf<'c> {
    /// Copied from the host into the captures' buffer.
    Caps,
    /// Kept on the device by its owner (a `DeviceVec`, a `DeviceJagged`).
    Resident(&'c Buffer),
    /// The caller's memory, read in place: the session's `in_place` buffer at this index.
    InPlace(usize),
}

/// Where a captured array of rows keeps its offsets, and the offsets on the host.
#[derive(Clone, Copy)]
struct RowOffsets<'c> {
    /// Their buffer: `cap_bufs[buffer]`.
    buffer: usize,
    /// Their byte offset in it.
    at: usize,
    rows: usize,
    /// As the device reads them.
    host: &'c [u8],
}

/// A column of values of one class, with room for `cap` of them.
pub(crate) struct Column<'c> {
    pub(crate) mem: Mem<'c>,
    pub(crate) cap: u64,
    pub(crate) layout: ColumnLayout,
}

impl Column<'_> {
    /// Bytes per value, all its components.
    fn value_bytes(&self) -> u64 {
        self.layout.bytes as u64 / self.cap.max(1)
    }
}

/// A level's offsets (each parent's first position, and their total after them).
enum Offsets<'c> {
    /// The scan of the parents' sizes.
    Own(Mem<'c>),
    /// The offsets of the rows the level reads (`Level::rows_of`), where the captures hold them:
    /// the buffer `cap_bufs[buffer]`, `at` bytes into it (8-aligned).
    Captured { buffer: usize, at: usize },
}

/// The contexts a level's positions are children of.
enum Parents<'p, 'c> {
    /// The first generator of the comprehension.
    Root,
    /// `count` contexts in columns (by variable) of capacity `cap`, and, below the first level
    /// of a nested comprehension, the group (the enclosing context) of each (at its first level
    /// the group is the parent's index, which the kernel takes itself). `whole`: the contexts of
    /// every chunk of the level together, when known before running it (a regular chain
    /// below the first generator, no filter), so that a space too large to count is the
    /// CPU's size-overflow panic at once, not an endless run of chunks.
    Rows {
        count: u64,
        cap: u64,
        columns: &'p [(u32, Column<'c>)],
        group: Option<&'p Mem<'c>>,
        whole: Option<u64>,
        /// When the contexts are the first generator's positions `first..first + count` (a
        /// top-level comprehension's first level, without a filter): `Some(first)`.
        first: Option<u64>,
        /// The level's sizes, when the level above wrote them (see [`sizes_next`]), with room
        /// for their total: taken by the level's scan.
        sizes: Option<&'p Cell<Option<Mem<'c>>>>,
    },
}

/// Whether level `k` of `comp` writes the next level's sizes itself (the kernel writer's
/// `next`): it keeps every position and the next level's sizes differ by parent.
fn sizes_next(comp: &Comp, k: usize) -> bool {
    comp.levels.get(k + 1).is_some_and(|next| !comp.levels[k].filters && !next.regular)
}

/// A run's output region for a filtering last level's kept values over several chunks (see
/// [`Session::level`]): the values, and how many of them (`u64`, on the device).
struct Region<'c> {
    column: Column<'c>,
    base: Mem<'c>,
}

/// The carry of a segmented reduction from one chunk to the next: the last group so far and its
/// value (double-buffered: a chunk reads one pair and writes the other).
struct Carry<'c> {
    groups: [Mem<'c>; 2],
    values: [Column<'c>; 2],
    current: usize,
    /// Whether no chunk has been reduced yet: the carry is no group's identity, set by a
    /// launch only where the chunk's reduction reads it from memory (more than one tile).
    fresh: bool,
}

/// Where the head's values go.
pub(crate) trait TopSink {
    /// A `par!`'s values of one chunk: `count` of them in the device's columns laid out as
    /// `layout`, read with `fetch` (straight into the output's memory where the layout allows).
    fn values(
        &mut self,
        layout: &ColumnLayout,
        count: usize,
        fetch: &mut Fetch<'_, '_>,
    ) -> Result<(), DeviceFailure>;
    /// Whether the values stay on the device ([`TopSink::keep`] instead of
    /// [`TopSink::values`]).
    fn keeps(&self) -> bool {
        false
    }
    /// A `par_device!`'s values of one chunk, kept on the device: `count` of them in `buffer`,
    /// laid out as `layout` (capacity `count`).
    fn keep(&mut self, buffer: Buffer, layout: ColumnLayout, count: usize) {
        let _ = (buffer, layout, count);
        unreachable!("parcomp internal error: values kept by a sink that reads them")
    }
    /// The run's values number `count` in all, known before the first of them is delivered
    /// (a `par!` whose first generator is its only level and keeps every position): room for
    /// them may be made at once.
    fn expect(&mut self, count: usize) {
        let _ = count;
    }
    /// Every read the sink queued with [`Fetch::read_later`] has landed: the run waited at its
    /// end without a fault.
    fn landed(&mut self) {}
    /// A reduction's result over one chunk, in columns of one value.
    fn partial(&mut self, bytes: &[u8], layout: &ColumnLayout, kind: ReduceKind);
    /// A `par!` whose head is a `par!`: `count` more rows, empty so far.
    fn begin_rows(&mut self, count: usize);
    /// Values of the rows begun last, in columns laid out as `layout`: value `i` belongs to row
    /// `groups[i]` of them.
    fn row_values(&mut self, bytes: &[u8], layout: &ColumnLayout, groups: &[u64]);
    /// Whether the result is decided and the rest need not run (`par_any!`, `par_all!`).
    fn decided(&self) -> bool {
        false
    }
}

/// Reads of one device column for a [`TopSink`], queued without a wait (the run's next wait
/// lands them, and reads the fault word).
pub(crate) struct Fetch<'s, 'c> {
    session: &'s mut Session<'c>,
    column: &'s Buffer,
    /// The column's first values, read already with the wait for their count.
    early: Option<EarlyValues>,
    /// Whether the reads go on the copy lane, once the next chunk's kernels are queued
    /// ([`Deferred`]): they are held in the session's `deferred_parts` until the caller takes
    /// them with the column.
    beside: bool,
}

/// The first values of a filtering last level's output, read in the same wait as the kept count
/// (before it is known): when they cover what was kept, delivering them waits no more.
struct EarlyValues {
    bytes: Vec<u8>,
    /// Each component's range: its offset in the device's column, its place in `bytes`, its
    /// length.
    ranges: Vec<(usize, usize, usize)>,
}

impl EarlyValues {
    /// Copies `len` bytes at `offset` of the column to `out` when they were read early.
    ///
    /// # Safety
    ///
    /// `out` must be valid for writes of `len` bytes.
    unsafe fn copy(&self, offset: usize, out: *mut u8, len: usize) -> bool {
        let Some(&(at, place, _)) =
            self.ranges.iter().find(|&&(at, _, n)| at <= offset && offset + len <= at + n)
        else {
            return false;
        };
        let from = &self.bytes[place + offset - at..][..len];
        // SAFETY: `from` holds `len` bytes; the caller's promise for `out`, which is not inside
        // `bytes` (a local of the session's).
        unsafe { std::ptr::copy_nonoverlapping(from.as_ptr(), out, len) };
        true
    }
}

/// Bytes of a filtering last level's values read with their count, before it is known: enough
/// for a selective filter's few kept values (the Pythagorean triples keep about a hundred), so
/// that delivering them takes no second wait, and little against a wait when more were kept.
const EARLY_BYTES: usize = 16 << 10;

/// A fault record no kernel has written (the fault word and its details): zeros.
const FAULT_CLEAN: [u8; 32] = [0; 32];

impl Fetch<'_, '_> {
    /// Queues copies of bytes of the column to the host (`(offset, destination, length)` each)
    /// without waiting: they land with the run's next wait — a later read's, a sizing wait's,
    /// or the one at the run's end, after which the sink hears of it ([`TopSink::landed`], or
    /// [`Fetch::landed`] at its next delivery). So a run of many chunks waits once for its
    /// values, not once per chunk, and on an in-order queue each chunk's read still comes
    /// before the next chunk's kernels reuse the column's memory. A fault is raised at that
    /// wait.
    ///
    /// # Safety
    ///
    /// Each destination must be valid for writes of its length, and untouched by anything else
    /// (not read, not moved, not freed) until the reads landed; the run's session finishes its
    /// queue before it is dropped, whatever the run's outcome.
    pub(crate) unsafe fn read_later(
        &mut self,
        parts: &[(usize, *mut u8, usize)],
    ) -> Result<(), DeviceFailure> {
        if let Some(early) = &self.early {
            // SAFETY: the caller's promise for each destination.
            if parts.iter().all(|&(offset, out, len)| unsafe { early.copy(offset, out, len) }) {
                return Ok(());
            }
        }
        if self.beside {
            let session = &mut *self.session;
            session.deferred_parts.extend(parts.iter().filter(|p| p.2 > 0));
            session.reads_in_flight |= !session.deferred_parts.is_empty();
            return Ok(());
        }
        // SAFETY: the caller's promise, passed on.
        unsafe { self.read_on_queue(parts) }
    }

    /// Queues the reads on the run's queue.
    ///
    /// # Safety
    ///
    /// As for [`Fetch::read_later`].
    unsafe fn read_on_queue(
        &mut self,
        parts: &[(usize, *mut u8, usize)],
    ) -> Result<(), DeviceFailure> {
        let session = &mut *self.session;
        for &(offset, out, len) in parts.iter().filter(|p| p.2 > 0) {
            // SAFETY: the caller's promise, passed on; the session finishes the queue before
            // it is dropped.
            unsafe { session.queue.read_async(self.column, offset, out, len) }?;
            session.stats.copies_out += 1;
            session.stats.bytes_out += len as u64;
            session.reads_in_flight = true;
            session.unchecked = true;
        }
        Ok(())
    }

    /// Whether every read [`Fetch::read_later`] queued has landed (a wait came since).
    pub(crate) fn landed(&self) -> bool {
        !self.session.reads_in_flight
    }

    /// Waits for the reads [`Fetch::read_later`] queued (and checks the fault word), when some
    /// have not landed.
    pub(crate) fn wait(&mut self) -> Result<(), DeviceFailure> {
        // Reads of this column held for the lane go on the queue now: the wait lands them.
        let held = std::mem::take(&mut self.session.deferred_parts);
        // SAFETY: `read_later`'s promise for each, given when they were held.
        unsafe { self.read_on_queue(&held)? };
        if self.landed() {
            return Ok(());
        }
        // SAFETY: no destination besides the fault word.
        unsafe { self.session.fetch(&[]) }
    }

    /// Counts bytes the host converted (assembling tuple results).
    pub(crate) fn converted(&mut self, bytes: usize) {
        self.session.stats.bytes_converted += bytes as u64;
    }
}

/// A chunk's values to be read on the copy lane, held back until the next chunk's kernels are
/// queued: a read through pinned slots keeps the host copying its pieces out while the lane
/// moves them, and queued before the next chunk's kernels it would keep those from starting
/// beside it. The column stays out of the arena until the lane has read it.
struct Deferred<'c> {
    column: Column<'c>,
    /// `(offset, destination, length)` each, as [`Fetch::read_later`] was given them.
    parts: Vec<(usize, *mut u8, usize)>,
    /// After the kernels that wrote the column: the lane's read waits for it.
    written: Mark,
}

/// The first generator's elements, copied on the copy lane a chunk at a time when the level
/// runs in several: each chunk's elements while the chunk before runs, its kernels waiting for
/// their copy's mark, not for every element of the level.
struct RootPieces {
    /// The elements in the device's layout, in the host's memory (the caller's, or converted
    /// into the session's `hold`), valid until the queue finished.
    host: *const u8,
    layout: ColumnLayout,
    /// Positions whose copy is queued.
    queued: u64,
    /// The mark after each queued copy, with the position it ends at.
    marks: VecDeque<(u64, Mark)>,
}

enum Sink<'s, 'c> {
    Top(&'s mut dyn TopSink),
    /// The values of the nested `par!` of a [`Terminal::Rows`] comprehension, each tagged with
    /// its group: the row it belongs to among those begun last.
    Rows(&'s mut dyn TopSink),
    Segmented {
        result: &'s Column<'c>,
        carry: &'s mut Carry<'c>,
        reduction: u32,
    },
}

/// A top-level reduction's partial results, one per chunk, kept on the device until the run
/// ends (a chunk does not wait for its result).
struct Partials<'c> {
    column: Column<'c>,
    used: u64,
}

/// Partial results a top-level reduction keeps before combining them into the first.
const PARTIAL_SLOTS: u64 = 256;

/// One run of a comprehension's device plan.
pub(crate) struct Session<'c> {
    // The queue comes first: fields drop in order, so the queue is finished (dropping it
    // waits) before `hold` frees host bytes a queued copy may read, and before the caller's
    // memory a kernel reads in place is released (`root`).
    queue: Box<dyn Queue + 'c>,
    /// The caller's memory the kernels read in place ([`CapBuf::InPlace`]).
    in_place: Vec<Buffer>,
    device: &'c dyn Device,
    /// Host bytes queued copies read (inputs converted on the host), kept until the queue
    /// finished.
    hold: Vec<Vec<u8>>,
    scratch: &'c Scratch,
    pub(crate) program: Built,
    pub(crate) generic: Built,
    pub(crate) plan: &'static DevicePlan,
    pub(crate) site: &'static Site,
    pub(crate) types: Vec<TypeDesc>,
    /// Where each captured array of rows keeps its offsets, by capture (`None` for other
    /// captures, and for rows whose offsets the host does not hold as `u64`s).
    row_offsets: Vec<Option<RowOffsets<'c>>>,
    /// The captures' header words (four per capture, `kernels/captures.h`), as uploaded: a
    /// rows kernel takes them as arguments (`RowsKernel::header_arguments`).
    header: Vec<u64>,
    /// The element type and record size of each captured collection read as records, for
    /// the traffic model: a record is read whole (its padding too).
    record_reads: Vec<(TypeDesc, u64)>,
    /// The buffers of the captured collections, after the captures' own, in the order of the
    /// kernels' `PC_CAPS` (each slice's values, each array of rows' values and offsets).
    cap_bufs: Vec<CapBuf<'c>>,
    /// The text of every fault site: the comprehension's, then its `#[par_fn]`s'.
    pub(crate) faults: Vec<String>,
    pub(crate) backend: Backend,
    pub(crate) stats: RunStats,
    pub(crate) chunk: u64,
    /// Bytes of the device's memory a run may take for one purpose: a quarter of what is free.
    memory_budget: u64,
    /// Positions per work-item of a filtering level below the first generator, and of the
    /// first generator's with a CPU device's shapes (`PC_FILTER_ITEMS` of the program).
    filter_items: u64,
    /// Whether the program takes a CPU device's shapes (`PC_CPU_SHAPES`): then the first
    /// generator's filtering level takes `filter_items` positions per work-item too, and a
    /// nested reduction's level `level_items(true)` (`PC_LEVEL_ITEMS` of the program).
    cpu_shapes: bool,
    /// Whether work was queued since the fault word was last read.
    unchecked: bool,
    /// Whether a sink's reads were queued without a wait since ([`Fetch::read_later`]): they
    /// land with the next wait, a later read's or the run's last.
    reads_in_flight: bool,
    /// The sizes of regular levels (the same for every parent), by comprehension and level.
    fanouts: Vec<(usize, usize, u64)>,
    partials: Option<Partials<'c>>,
    fault: Option<Mem<'c>>,
    caps: Option<Mem<'c>>,
    /// All that `caps` holds, where that is small and nothing but the header and the scalars
    /// (to give back to the arena as such: [`Self::keep_known`]).
    caps_content: Option<Box<[u8]>>,
    root: Option<Held<'c>>,
    dummy: Option<Mem<'c>>,
    root_start: u64,
    root_len: u64,
    root_cap: u64,
    /// Whether the queue has a copy lane: then a run of several chunks reads each chunk's
    /// values, and copies the first generator's elements, beside the kernels.
    lane: bool,
    /// Whether the top-level comprehension's level running now, or one above it, runs in
    /// several chunks: then its values go on the lane (one chunk has nothing to run beside).
    several: bool,
    /// The reads [`Fetch::read_later`] held for the lane, until the caller takes them with
    /// their column.
    deferred_parts: Vec<(usize, *mut u8, usize)>,
    /// The last chunk's values, to be read on the lane once the next chunk's kernels are
    /// queued.
    deferred: Option<Deferred<'c>>,
    /// The column the lane is reading, with the mark of the read's end: it goes back to the
    /// arena once the queue waits for that mark (or finished).
    reading: Option<(Column<'c>, Mark)>,
    root_pieces: Option<RootPieces>,
}

impl<'c> Session<'c> {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        device: &'c dyn Device,
        scratch: &'c Scratch,
        program: Built,
        generic: Built,
        plan: &'static DevicePlan,
        site: &'static Site,
        types: Vec<TypeDesc>,
        faults: Vec<String>,
        backend: Backend,
    ) -> Result<Self, DeviceFailure> {
        let queue = device.queue()?;
        let lane = queue.lane().is_some();
        let memory_budget = memory_budget(device);
        let chunk = chunk_size(device, plan, &types, memory_budget);
        let cpu_shapes = cpu_shapes(device.info().is_cpu);
        let filter_items = filter_items(&types, cpu_shapes);
        Ok(Session {
            queue,
            in_place: Vec::new(),
            device,
            hold: Vec::new(),
            row_offsets: Vec::new(),
            header: Vec::new(),
            record_reads: Vec::new(),
            cap_bufs: Vec::new(),
            scratch,
            program,
            generic,
            plan,
            site,
            types,
            faults,
            backend,
            stats: RunStats { chunk_size: chunk, ..RunStats::default() },
            chunk,
            memory_budget,
            filter_items,
            cpu_shapes,
            unchecked: false,
            reads_in_flight: false,
            fanouts: Vec::new(),
            partials: None,
            fault: None,
            caps: None,
            caps_content: None,
            root: None,
            dummy: None,
            root_start: 0,
            root_len: 0,
            root_cap: 0,
            lane,
            several: false,
            deferred_parts: Vec::new(),
            deferred: None,
            reading: None,
            root_pieces: None,
        })
    }

    fn alloc(&mut self, bytes: u64) -> Result<Mem<'c>, DeviceFailure> {
        Ok(self.scratch.hold(bytes)?)
    }

    fn column(&mut self, class: ClassId, cap: u64) -> Result<Column<'c>, DeviceFailure> {
        let desc = &self.types[class as usize];
        let layout = ColumnLayout::new(desc, cap as usize).ok_or_else(|| {
            DeviceFailure::fatal(format!("a column of {cap} values does not fit in memory"))
        })?;
        let mem = self.alloc(layout.bytes as u64)?;
        Ok(Column { mem, cap, layout })
    }

    /// Queues a copy of `bytes` into `mem` at `offset`, without waiting.
    fn copy_in(
        &mut self,
        mem: &Mem<'c>,
        offset: usize,
        bytes: ColumnBytes<'c>,
    ) -> Result<(), DeviceFailure> {
        let converted = bytes.converted();
        let (data, len) = (bytes.bytes().as_ptr(), bytes.bytes().len());
        if let ColumnBytes::Converted(v) = bytes {
            // The vector's heap memory does not move when the vector does.
            self.hold.push(v);
        }
        let start = Instant::now();
        // SAFETY: borrowed bytes live for 'c, longer than the session, and converted ones are
        // held by the session; either way until its queue finished (the session finishes it
        // before `hold` drops, and the borrowed data outlives the session).
        unsafe { self.queue.write_async(&mem.buf, offset, data, len) }?;
        self.stats.transfer += start.elapsed();
        self.count_copy_in(len, converted);
        Ok(())
    }

    /// Counts a copy in of `len` bytes, `converted` of them converted on the host.
    fn count_copy_in(&mut self, len: usize, converted: usize) {
        self.stats.bytes_converted += converted as u64;
        self.stats.copies_in += 1;
        self.stats.bytes_in += len as u64;
    }

    /// Where a captured collection's column (values, or rows' offsets) is read, its buffer
    /// added to the captures' ([`CapBuf`]); returns the column's offset in that buffer. One kept
    /// on the device (`Err`: its storage) is read there; the caller's bytes, where the device
    /// reads the host's memory in place ([`Device::wrap`]), where they lie; anything else is
    /// copied into the captures' buffer at `at` (queued in `columns`), which `at` passes.
    fn capture_column(
        &mut self,
        column: Result<Upload<'c>, &'c Resident>,
        at: &mut usize,
        columns: &mut Vec<(usize, Upload<'c>)>,
    ) -> Result<u64, DeviceFailure> {
        let column = match column {
            Err(resident) => {
                self.stats.dram_minimum += resident.layout.bytes as u64;
                self.cap_bufs.push(CapBuf::Resident(&resident.buffer));
                return Ok(0);
            }
            Ok(column) => column,
        };
        if let Some(buffer) = self.read_in_place(&column)? {
            self.stats.dram_minimum += buffer.bytes as u64;
            self.cap_bufs.push(CapBuf::InPlace(self.in_place.len()));
            self.in_place.push(buffer);
            return Ok(0);
        }
        let len = match &column {
            Upload::Bytes(bytes) => bytes.bytes().len(),
            Upload::Convert(len, _) => *len,
        };
        let offset = *at;
        columns.push((offset, column));
        *at += len;
        self.cap_bufs.push(CapBuf::Caps);
        Ok(offset as u64)
    }

    /// Values of type `desc` read as the records they are in the caller's memory (their
    /// program was built so, `Prepared::records`, `Prepared::root_records`), as a buffer over
    /// them, counted in `bytes_in_place` and in the traffic model; `None` when there is no byte
    /// to read (an empty collection).
    fn wrap_records(
        &mut self,
        records: Option<Records<'c>>,
        layout: &RecordLayout,
        desc: TypeDesc,
    ) -> Result<Option<Buffer>, DeviceFailure> {
        let records = records
            .ok_or_else(|| DeviceFailure::fatal("values read as records have no records"))?;
        self.record_reads.push((desc, layout.stride as u64));
        // SAFETY: the caller's values, borrowed for 'c, longer than the session, which releases
        // the buffer (in `in_place` or `root`) after its queue finished; no kernel writes a
        // capture or the first generator.
        let wrapped = unsafe { self.device.wrap(records.data, records.bytes) }?;
        match wrapped {
            Some(_) => {
                self.stats.bytes_in_place += records.bytes as u64;
                self.stats.dram_minimum += records.bytes as u64;
            }
            None if records.bytes > 0 => {
                return Err(DeviceFailure::fatal("the device did not read records where they lie"))
            }
            None => {}
        }
        Ok(wrapped)
    }

    /// Where a captured collection read as records ([`Self::wrap_records`]) lies for the
    /// kernels: its buffer added to the captures' ([`CapBuf::InPlace`]); returns its offset
    /// in that buffer. No records (an empty collection) take no buffer of their own: the
    /// captures' own stands in.
    fn capture_records(
        &mut self,
        records: Option<Records<'c>>,
        layout: &RecordLayout,
        desc: TypeDesc,
        at: usize,
    ) -> Result<u64, DeviceFailure> {
        let Some(buffer) = self.wrap_records(records, layout, desc)? else {
            self.cap_bufs.push(CapBuf::Caps);
            return Ok(at as u64);
        };
        self.cap_bufs.push(CapBuf::InPlace(self.in_place.len()));
        self.in_place.push(buffer);
        Ok(0)
    }

    /// `column` as a buffer the kernels read where it lies, when it is the caller's bytes and
    /// the device reads the host's memory in place ([`Device::wrap`]; counted in
    /// `bytes_in_place`); `None` otherwise (bytes to copy, values to convert, another device).
    fn read_in_place(&mut self, column: &Upload<'c>) -> Result<Option<Buffer>, DeviceFailure> {
        let Upload::Bytes(ColumnBytes::Borrowed(raw)) = column else {
            return Ok(None);
        };
        // SAFETY: the caller's bytes, borrowed for 'c, longer than the session, which releases
        // the buffer (in `in_place` or `root`) after its queue finished; no kernel writes a
        // capture or the first generator.
        let wrapped = unsafe { self.device.wrap(raw.as_ptr(), raw.len()) }?;
        if wrapped.is_some() {
            self.stats.bytes_in_place += raw.len() as u64;
        }
        Ok(wrapped)
    }

    /// Puts a collection's column into `mem` at `offset`: its bytes copied in without waiting;
    /// values converted on the host's cores where the device's memory lies when the device
    /// lets the host write it (a CPU device's: no copy), else into memory of the session's,
    /// copied in without waiting.
    fn put_column(
        &mut self,
        mem: &Mem<'c>,
        offset: usize,
        column: Upload<'c>,
    ) -> Result<(), DeviceFailure> {
        let (len, convert) = match column {
            Upload::Bytes(bytes) => return self.copy_in(mem, offset, bytes),
            Upload::Convert(len, convert) => (len, convert),
        };
        // `Upload::Convert`'s promise holds for both: `fill_in_place` hands out `len` writable
        // bytes that nothing else touches during the call, and so does the vector.
        if self.queue.fill_in_place(&mem.buf, offset, len, &mut |at| convert(at))? {
            self.count_copy_in(len, len);
            return Ok(());
        }
        let mut bytes = vec![0u8; len];
        convert(bytes.as_mut_ptr());
        self.copy_in(mem, offset, ColumnBytes::Converted(bytes))
    }

    /// The first generator's elements as they are copied a chunk at a time on the lane
    /// ([`RootPieces`]): the caller's bytes where they are the device's column, else converted
    /// on the host's cores once; `None` where the device's memory was filled in place.
    fn root_by_pieces(
        &mut self,
        mem: &Mem<'c>,
        column: Upload<'c>,
        layout: &ColumnLayout,
    ) -> Result<Option<RootPieces>, DeviceFailure> {
        let host = match column {
            Upload::Bytes(bytes) => {
                let host = bytes.bytes().as_ptr();
                self.stats.bytes_converted += bytes.converted() as u64;
                if let ColumnBytes::Converted(v) = bytes {
                    // The vector's heap memory does not move when the vector does.
                    self.hold.push(v);
                }
                host
            }
            Upload::Convert(len, convert) => {
                // `Upload::Convert`'s promise holds as in `put_column`.
                if self.queue.fill_in_place(&mem.buf, 0, len, &mut |at| convert(at))? {
                    self.count_copy_in(len, len);
                    return Ok(None);
                }
                let mut bytes = vec![0u8; len];
                convert(bytes.as_mut_ptr());
                self.stats.bytes_converted += len as u64;
                let host = bytes.as_ptr();
                self.hold.push(bytes);
                host
            }
        };
        Ok(Some(RootPieces { host, layout: layout.clone(), queued: 0, marks: VecDeque::new() }))
    }

    /// Copies bytes of buffers to the host (`(buffer, offset, destination, length)` each) and
    /// the fault word, waiting once; raises a recorded fault as Rust's panic.
    ///
    /// # Safety
    ///
    /// Each destination must be valid for writes of its length, and untouched by anything else
    /// until this returns.
    unsafe fn fetch(
        &mut self,
        parts: &[(&Buffer, usize, *mut u8, usize)],
    ) -> Result<(), DeviceFailure> {
        let mut words = FAULT_CLEAN;
        let start = Instant::now();
        // The last chunk's values held for the lane are read now: the wait lands them.
        let mut queued = match self.deferred.take() {
            Some(deferred) => self.read_beside(deferred),
            None => Ok(()),
        };
        let fault = self.fault.as_ref().expect("uploaded");
        for &(buffer, offset, out, len) in parts.iter().filter(|p| p.3 > 0) {
            if queued.is_err() {
                break;
            }
            // SAFETY: the caller's promise; the queue is finished below before returning.
            queued = unsafe { self.queue.read_async(buffer, offset, out, len) };
            if queued.is_err() {
                break;
            }
            self.stats.copies_out += 1;
            self.stats.bytes_out += len as u64;
        }
        if queued.is_ok() {
            // SAFETY: `words` lives until the queue is finished below.
            queued =
                unsafe { self.queue.read_async(&fault.buf, 0, words.as_mut_ptr(), words.len()) };
        }
        // Finish even after a failed read: the queued ones must not outlive their destinations.
        let finished = self.queue.finish();
        // The lane's reads have ended with it.
        self.reading = None;
        self.stats.host_waits += 1;
        self.stats.transfer += start.elapsed();
        queued?;
        finished?;
        self.unchecked = false;
        self.reads_in_flight = false;
        if let Some(f) = Fault::from_words(&words) {
            fault::raise(f, &self.faults, self.site, self.backend.name());
        }
        Ok(())
    }

    /// The kept count a filtering level's scan left at `places[tiles]` (one wait) and, for a
    /// level whose kept values are a `par!`'s (`values`), the first [`EARLY_BYTES`] of them read
    /// in the same wait: kept when they hold every kept value.
    fn read_kept(
        &mut self,
        places: &Mem<'c>,
        tiles: u64,
        values: Option<&Column<'c>>,
    ) -> Result<(u64, Option<EarlyValues>), DeviceFailure> {
        let Some(values) = values else {
            return Ok((self.read_u64s(&[(places, tiles)])?[0], None));
        };
        let value_bytes = values.layout.leaves.iter().map(|l| l.size()).sum::<usize>().max(1);
        let first = (EARLY_BYTES / value_bytes).min(values.cap as usize);
        let mut bytes = Vec::new();
        let (tight, reads) = values.layout.prefix_reads(first, &mut bytes).ok_or_else(too_big)?;
        let mut kept = 0u64;
        let mut parts: Vec<(&Buffer, usize, *mut u8, usize)> =
            reads.iter().map(|&(at, to, len)| (&*values.mem.buf, at, to, len)).collect();
        let count_at = tiles as usize * 8;
        parts.push((&*places.buf, count_at, std::ptr::from_mut(&mut kept).cast::<u8>(), 8));
        // SAFETY: the destinations are ranges of `bytes` (component k's array of the tight
        // layout, inside it) and `kept`, locals untouched until the call returns.
        unsafe { self.fetch(&parts)? };
        let kept = u64::from_le(kept);
        if kept > first as u64 {
            return Ok((kept, None));
        }
        let ranges = (0..tight.leaves.len())
            .map(|k| (values.layout.offsets[k], tight.offsets[k], reads[k].2))
            .collect();
        Ok((kept, Some(EarlyValues { bytes, ranges })))
    }

    /// Values `index..` of `u64` buffers, read together (one wait), after checking the fault.
    fn read_u64s(&mut self, reads: &[(&Mem<'c>, u64)]) -> Result<Vec<u64>, DeviceFailure> {
        let mut out = vec![0u64; reads.len()];
        let parts: Vec<(&Buffer, usize, *mut u8, usize)> = reads
            .iter()
            .zip(out.iter_mut())
            .map(|(&(mem, index), slot)| {
                (&*mem.buf, index as usize * 8, std::ptr::from_mut(slot).cast::<u8>(), 8)
            })
            .collect();
        // SAFETY: every destination is an element of `out`, which lives past the call and is
        // not touched until it returns.
        unsafe { self.fetch(&parts)? };
        Ok(out.into_iter().map(u64::from_le).collect())
    }

    /// Counts a launch of `kernel` and the DRAM bytes its access pattern implies.
    fn count_launch(&mut self, kernel: &str, dram: u64) {
        self.stats.launches += 1;
        self.unchecked = true;
        self.count_dram(kernel, dram).launches += 1;
    }

    /// Counts DRAM bytes of `kernel` (of a launch [`count_launch`](Self::count_launch)
    /// counts, or counted already); its entry.
    fn count_dram(&mut self, kernel: &str, dram: u64) -> &mut KernelCost {
        self.stats.dram_bytes += dram;
        let kernels = &mut self.stats.kernels;
        let at = match kernels.iter().position(|k| k.name == kernel) {
            Some(at) => at,
            None => {
                kernels.push(KernelCost { name: kernel.to_string(), launches: 0, dram_bytes: 0 });
                kernels.len() - 1
            }
        };
        kernels[at].dram_bytes += dram;
        &mut kernels[at]
    }

    /// After a run that ended well, its fault record and its captures' buffer go back to the
    /// arena with what they hold, for a later run that needs the same bytes: the record was
    /// read as zeros after the last launch (else the run would have failed), and the queue has
    /// waited since (`unchecked` is clear), so nothing writes either.
    pub(crate) fn keep_known(&mut self) {
        if self.unchecked || self.reads_in_flight {
            return;
        }
        if let Some(fault) = self.fault.take() {
            self.scratch.keep_known(fault, Box::new(FAULT_CLEAN));
        }
        // Only a buffer whose whole content is known: else `caps` stays, and goes back with the
        // session as any buffer.
        if let Some(content) = self.caps_content.take() {
            if let Some(caps) = self.caps.take() {
                self.scratch.keep_known(caps, content);
            }
        }
    }

    /// Launches `kernel` of the comprehension's program (`generic`: of the generic one) over
    /// `items` work-items; `dram` is its modelled traffic.
    fn launch(
        &mut self,
        generic: bool,
        kernel: &str,
        items: u64,
        dram: u64,
        args: &[Arg<'_>],
    ) -> Result<(), DeviceFailure> {
        if items == 0 {
            return Ok(());
        }
        self.count_launch(kernel, dram);
        let program = if generic { &*self.generic } else { &*self.program };
        self.queue.launch(program, kernel, items, GROUP, args).map_err(DeviceFailure::from)
    }

    /// Copies the captured values and the first generator to the device: a primitive slice as
    /// it is, other values split into columns on the host's cores. Nothing waits.
    pub(crate) fn upload(
        &mut self,
        captures: &[HostData<'c>],
        records: &[Option<RecordLayout>],
        root_records: Option<&RecordLayout>,
        root: &HostData<'c>,
    ) -> Result<(), DeviceFailure> {
        let uploaded = super::resident::uploaded();
        // A fault record an earlier run read as zeros is zeros still: no fill.
        let fault = match self.scratch.hold_known(&FAULT_CLEAN) {
            Some(fault) => {
                self.stats.fills_saved += 1;
                fault
            }
            None => {
                let fault = self.alloc(FAULT_CLEAN.len() as u64)?;
                self.queue.zero(&fault.buf, 0, FAULT_CLEAN.len())?;
                fault
            }
        };
        self.fault = Some(fault);
        let dummy = self.alloc(8)?;
        self.dummy = Some(dummy);
        // The captures: a header of four words each (where its data starts, its length, where
        // a Jagged's offsets start, its number of values), then the scalars and the collections
        // copied from the host, each 8-aligned; a collection kept on the device, or the caller's
        // own on a device whose memory is the host's, is read where it lies, from a buffer of its
        // own (`kernels/captures.h`), its offsets in the header from that buffer's start.
        let mut header = vec![0u64; 4 * captures.len()];
        let mut at = 32 * captures.len();
        let mut scalars: Vec<(usize, Vec<u8>)> = Vec::new();
        let mut columns: Vec<(usize, Upload<'c>)> = Vec::new();
        for (k, &capture) in captures.iter().enumerate() {
            at = at.next_multiple_of(8);
            match (capture, records.get(k).and_then(Option::as_ref)) {
                (HostData::Scalar(v), _) => {
                    let layout = ColumnLayout::new(&v.desc(), 1).expect("one value");
                    let mut bytes = vec![0u8; layout.bytes];
                    v.write(ColumnWriter::new(&mut bytes, &layout).at(0));
                    header[4 * k] = at as u64;
                    header[4 * k + 1] = 1;
                    at += bytes.len();
                    scalars.push((header[4 * k] as usize, bytes));
                }
                (HostData::Slice(s), Some(layout)) => {
                    header[4 * k + 1] = s.len() as u64;
                    header[4 * k] = self.capture_records(s.records(), layout, s.desc(), at)?;
                }
                (HostData::Slice(s), None) => {
                    let len = s.len();
                    let layout = ColumnLayout::new(&s.desc(), len).ok_or_else(too_big)?;
                    header[4 * k + 1] = len as u64;
                    let resident = s.resident(self.backend).filter(|r| r.layout == layout);
                    let column = match resident {
                        Some(resident) => Err(resident),
                        None => Ok(column_of(s.column_bytes(), &layout, len, move |range, w| {
                            s.write_at(range, w)
                        })),
                    };
                    header[4 * k] = self.capture_column(column, &mut at, &mut columns)?;
                }
                (HostData::Jagged(j), record) => {
                    let values = j.values();
                    let layout = ColumnLayout::new(&j.desc(), values).ok_or_else(too_big)?;
                    let offsets_layout =
                        ColumnLayout::new(&TypeDesc::Prim(Prim::U64), j.rows() + 1)
                            .ok_or_else(too_big)?;
                    header[4 * k + 1] = j.rows() as u64;
                    header[4 * k + 3] = values as u64;
                    let resident = j
                        .resident(self.backend)
                        .filter(|(v, o)| v.layout == layout && o.layout == offsets_layout);
                    let (values_column, offsets_column) = match resident {
                        Some((v, o)) => (Err(v), Err(o)),
                        None => {
                            let offsets = match j.offset_bytes() {
                                Some(raw) => ColumnBytes::Borrowed(raw),
                                None => {
                                    let mut offsets = Vec::with_capacity(j.rows() + 1);
                                    j.offsets(&mut offsets);
                                    ColumnBytes::Converted(
                                        offsets.iter().flat_map(|o| o.to_le_bytes()).collect(),
                                    )
                                }
                            };
                            (Ok(jagged_values(j, &layout)), Ok(Upload::Bytes(offsets)))
                        }
                    };
                    // The values as records where they lie, or as columns (the offsets are
                    // a column either way).
                    header[4 * k] = if let Some(layout) = record {
                        self.capture_records(j.records(), layout, j.desc(), at)?
                    } else {
                        self.capture_column(values_column, &mut at, &mut columns)?
                    };
                    at = at.next_multiple_of(8);
                    let offsets_at = self.capture_column(offsets_column, &mut at, &mut columns)?;
                    header[4 * k + 2] = offsets_at;
                    let offsets_in = self.cap_bufs.len() - 1;
                    if self.row_offsets.len() <= k {
                        self.row_offsets.resize(k + 1, None);
                    }
                    self.row_offsets[k] = j.offset_bytes().map(|host| RowOffsets {
                        buffer: offsets_in,
                        at: offsets_at as usize,
                        rows: j.rows(),
                        host,
                    });
                }
                (HostData::Range(_) | HostData::Elements(_), _) => {
                    return Err(DeviceFailure::fatal("a capture observed as a generator"))
                }
            }
        }
        if !captures.is_empty() {
            // The header and the scalars in one copy; each collection copied in one of its own.
            let mut head = vec![0u8; 32 * captures.len()];
            for (k, word) in header.iter().enumerate() {
                head[8 * k..8 * k + 8].copy_from_slice(&word.to_le_bytes());
            }
            for (offset, bytes) in &scalars {
                if head.len() < offset + bytes.len() {
                    head.resize(offset + bytes.len(), 0);
                }
                head[*offset..offset + bytes.len()].copy_from_slice(bytes);
            }
            // Where the buffer holds nothing else, an earlier run's with the same bytes (the
            // same captures again, as an iteration's rounds have) is taken as it is.
            let known = columns.is_empty() && head.len() <= arena::KNOWN_BYTES;
            let content = known.then(|| head.clone().into_boxed_slice());
            let mem = match content.as_ref().and_then(|c| self.scratch.hold_known(c)) {
                Some(mem) => {
                    self.stats.copies_saved += 1;
                    mem
                }
                None => {
                    let mem = self.alloc(at as u64)?;
                    let converted = head.len();
                    self.copy_in(&mem, 0, ColumnBytes::Converted(head))?;
                    // The header is bookkeeping, not the user's data converted.
                    self.stats.bytes_converted -= converted as u64;
                    for (offset, column) in columns {
                        self.put_column(&mem, offset, column)?;
                    }
                    mem
                }
            };
            self.caps_content = content;
            self.caps = Some(mem);
            self.header = header;
        } else {
            let dummy = self.alloc(8)?;
            self.caps = Some(dummy);
        }
        self.stats.dram_minimum += self.stats.bytes_in;
        // The first generator.
        match *root {
            HostData::Range(r) => {
                self.root_len = r.len() as u64;
                self.root_start = r.start_bits();
                let dummy = self.alloc(8)?;
                self.root = Some(Held::Own(dummy));
            }
            HostData::Jagged(j) => {
                // The rows of an array of rows: the row indices 0..rows, as a range.
                self.root_len = j.rows() as u64;
                self.root_start = 0;
                let dummy = self.alloc(8)?;
                self.root = Some(Held::Own(dummy));
            }
            HostData::Elements(e) if root_records.is_some() => {
                // The records where they lie (the program reads them so): nothing copied.
                let layout = root_records.expect("matched");
                self.root = Some(match self.wrap_records(e.records(), layout, e.desc())? {
                    Some(buffer) => Held::InPlace(buffer),
                    None => Held::Own(self.alloc(8)?),
                });
                self.root_len = e.len() as u64;
                self.root_cap = e.len() as u64;
            }
            HostData::Elements(e) => {
                let len = e.len();
                let layout = ColumnLayout::new(&e.desc(), len).ok_or_else(too_big)?;
                self.stats.dram_minimum +=
                    layout.leaves.iter().map(|l| (l.size() * len) as u64).sum::<u64>();
                match e.resident(self.backend).filter(|r| r.layout == layout) {
                    // Already in the device's memory: read there, nothing copied.
                    Some(resident) => self.root = Some(Held::Resident(&resident.buffer)),
                    None => {
                        let column = column_of(e.column_bytes(), &layout, len, move |range, w| {
                            for i in range {
                                e.value(i, w.at(i));
                            }
                        });
                        let by_pieces = self.lane && len as u64 > self.chunk;
                        if !by_pieces {
                            self.root = self.read_in_place(&column)?.map(Held::InPlace);
                        }
                        if self.root.is_none() {
                            let mem = self.alloc(layout.bytes as u64)?;
                            if by_pieces {
                                self.root_pieces = self.root_by_pieces(&mem, column, &layout)?;
                            } else {
                                self.put_column(&mem, 0, column)?;
                            }
                            self.root = Some(Held::Own(mem));
                        }
                    }
                }
                self.root_len = len as u64;
                self.root_cap = len as u64;
            }
            _ => {
                return Err(DeviceFailure::fatal("the first generator is not a range or a source"))
            }
        }
        // Uploads of resident values this run caused (a `DeviceVec` made on the host, read
        // by a device for the first time) are this run's copies.
        let (copies, bytes) = super::resident::uploaded();
        self.stats.copies_in += copies - uploaded.0;
        self.stats.bytes_in += bytes - uploaded.1;
        if self.plan.root == RootKind::Elements && matches!(root, HostData::Range(_)) {
            return Err(DeviceFailure::fatal("the plan reads elements of a range"));
        }
        Ok(())
    }

    /// The parameters every generated kernel starts with: the fault word, the captures
    /// (`PC_CAPS`), the first generator.
    fn common(&self) -> Vec<Arg<'_>> {
        self.with_captures(&[
            Arg::U64(self.root_start),
            Arg::U64(self.root_cap),
            Arg::Buffer(self.root.as_ref().expect("uploaded").buf()),
        ])
    }

    /// The arguments of a kernel that takes the fault word and the captures (`PC_CAPS`: their
    /// buffer, then each collection's) first, as every kernel of `reduce.cl` does: those, then
    /// `rest`.
    fn with_captures<'a>(&'a self, rest: &[Arg<'a>]) -> Vec<Arg<'a>> {
        let mut args = vec![
            Arg::Buffer(&self.fault.as_ref().expect("uploaded").buf),
            Arg::Buffer(&self.caps.as_ref().expect("uploaded").buf),
        ];
        args.extend(self.cap_bufs.iter().map(|&b| Arg::Buffer(self.cap_buf(b))));
        args.extend_from_slice(rest);
        args
    }

    /// The buffer a captured collection's column lies in.
    fn cap_buf(&self, b: CapBuf<'c>) -> &Buffer {
        match b {
            CapBuf::Caps => &self.caps.as_ref().expect("uploaded").buf,
            CapBuf::Resident(buffer) => buffer,
            CapBuf::InPlace(k) => &self.in_place[k],
        }
    }

    fn dummy(&self) -> &Buffer {
        &self.dummy.as_ref().expect("uploaded").buf
    }

    /// Runs the comprehension, delivering to `sink`; the run's time counts from `start` (before
    /// the uploads).
    pub(crate) fn run(
        &mut self,
        sink: &mut dyn TopSink,
        start: Instant,
    ) -> Result<(), DeviceFailure> {
        let comp = &self.plan.comp;
        self.level(comp, 0, &Parents::Root, &mut Sink::Top(&mut *sink))?;
        self.finish_partials(sink)?;
        if self.unchecked || self.reads_in_flight {
            // The fault word, once per run, when no read since the last launch brought it; and
            // the wait for the values a sink's reads queued without one.
            // SAFETY: no destination besides the fault word.
            unsafe { self.fetch(&[])? };
        }
        sink.landed();
        self.stats.run = start.elapsed();
        // The queue's staging and its lane's, which has slots of its own.
        for staged in std::iter::once(self.queue.take_staging())
            .chain(self.queue.lane().map(|lane| lane.take_staging()))
        {
            self.stats.bytes_staged += staged.bytes;
            self.stats.staging_waits += staged.waits;
        }
        self.stats.peak_memory = self.scratch.peak();
        self.stats.allocations = self.scratch.allocations();
        Ok(())
    }

    /// The exclusive scan of the `n` sizes in `sizes` (which has room for `n + 1` entries):
    /// offsets (n + 1 entries), and their total (one wait). Few sizes (at most
    /// [`SCAN_IN_ONE_GROUP`]; on a CPU device [`SCAN_SERIAL`], by one work-item) are scanned in
    /// place by one work-group, in one launch; sizes of at
    /// most [`TILE`] tiles in two (the tiles' sums, then each tile's offsets from the sums
    /// before it); more in three (the tiles' sums scanned between).
    fn scan(&mut self, sizes: Mem<'c>, n: u64) -> Result<(Mem<'c>, u64), DeviceFailure> {
        let tiles = n.div_ceil(TILE).max(1);
        let in_one = if self.cpu_shapes { SCAN_SERIAL } else { SCAN_IN_ONE_GROUP };
        if n <= in_one {
            // On a CPU device one work-item adds them in order; elsewhere one work-group by
            // tiles. It reads the sizes (again from the cache) and writes the offsets.
            let kernel = if self.cpu_shapes { "pc_scan_serial" } else { "pc_scan_carries" };
            self.count_launch(kernel, n * 16 + 8);
            let fault = &self.fault.as_ref().expect("uploaded").buf;
            let args = [Arg::Buffer(fault), Arg::Buffer(&sizes.buf), Arg::U64(n)];
            self.queue.launch(&*self.generic, kernel, GROUP as u64, GROUP, &args)?;
            let total = self.read_u64s(&[(&sizes, n)])?[0];
            return Ok((sizes, total));
        }
        let sums = self.alloc((tiles + 1) * 8)?;
        let offsets = self.alloc((n + 1) * 8)?;
        let fault = &self.fault.as_ref().expect("uploaded").buf;
        let queue = &self.queue;
        let generic = &*self.generic;
        let launches = launch_scan(
            &|kernel, items, args| queue.launch(generic, kernel, items, GROUP, args),
            fault,
            &sizes.buf,
            n,
            &sums.buf,
            &offsets.buf,
        )?;
        // The first and the last read the sizes, the last writes the offsets; the tile sums are
        // small (in two launches each work-group reads those before its own, from the cache
        // for the most part).
        self.count_launch("pc_scan_tiles", n * 8);
        if launches == 2 {
            self.count_launch("pc_scan_apply_summed", n * 16 + tiles * 8);
        } else {
            self.count_launch("pc_scan_carries", tiles * 16);
            self.count_launch("pc_scan_apply", n * 16 + tiles * 8);
        }
        let total = self.read_u64s(&[(&offsets, n)])?[0];
        Ok((offsets, total))
    }

    /// The children's offsets and their total for a level whose generator is the row of
    /// captured rows that the first generator's element selects (`Level::rows_of`), when its
    /// parents are that generator's positions from 0, an integer range from 0 (the elements are
    /// the rows' indices) within the rows: the rows' own offsets, read where the captures hold
    /// them, and the total read from the host's, with no size kernel, scan, copy or wait. `None` otherwise:
    /// the size kernel and the scan compute them (and fault for a row past the end).
    fn row_offsets(&self, level: &Level, parents: &Parents<'_, 'c>) -> Option<(Offsets<'c>, u64)> {
        let (Some(k), Parents::Rows { count, first: Some(0), .. }) = (level.rows_of, parents)
        else {
            return None;
        };
        let &Some(RowOffsets { buffer, at, rows, .. }) = self.row_offsets.get(k as usize)? else {
            return None;
        };
        if self.root_start != 0 || self.plan.root == RootKind::Elements || *count > rows as u64 {
            return None;
        }
        let total = self.row_offset(level, *count)?;
        Some((Offsets::Captured { buffer, at }, total))
    }

    /// Bytes per value of class `class` (all its components).
    fn class_bytes(&self, class: ClassId) -> u64 {
        self.types[class as usize].leaves().iter().map(|l| l.size() as u64).sum()
    }

    /// The bytes a position reads of an element of `class` from captured memory: a record's
    /// size where a capture of that type is read as records, else its components'.
    fn element_read_bytes(&self, class: ClassId) -> u64 {
        let desc = &self.types[class as usize];
        let record = self.record_reads.iter().filter(|(t, _)| t == desc).map(|&(_, b)| b).max();
        record.unwrap_or_else(|| self.class_bytes(class))
    }

    /// The traffic model's bytes for the captured collections a launch of `level`'s kernel
    /// over `positions` positions reads by indices of its own (`Level::gathers`): where those
    /// reads land depends on the indices, so each collection counts once, as read into the
    /// cache, but no more than one element per position.
    fn gathered_bytes(&self, level: &Level, positions: u64) -> u64 {
        level
            .gathers
            .iter()
            .map(|g| {
                let k = 4 * g.capture as usize;
                // A slice's length, or an array of rows' number of values (`captures.h`).
                let rows = self.plan.captures[g.capture as usize].kind == CaptureKind::Jagged;
                let word = if rows { k + 3 } else { k + 1 };
                let elements = self.header.get(word).copied().unwrap_or(0);
                elements.min(positions) * self.element_read_bytes(g.class)
            })
            .sum()
    }

    /// The number of children of the first `asked` parents (in `columns` of capacity `cap`),
    /// by the level's size kernel, in a new buffer.
    fn sizes(
        &mut self,
        level: &Level,
        asked: u64,
        cap: u64,
        columns: &[(u32, Column<'c>)],
    ) -> Result<Mem<'c>, DeviceFailure> {
        let size_kernel = level.size_kernel.expect("a level with parents is sized");
        // Room for the total after the sizes: a scan in place writes it there.
        let sizes = self.alloc((asked + 1) * 8)?;
        let per_parent = 8 + level
            .inputs
            .iter()
            .map(|&v| self.class_bytes(self.plan.vars[v as usize]))
            .sum::<u64>();
        self.count_launch(size_kernel, asked * per_parent);
        let mut args: Vec<Arg<'_>> = self.common();
        args.push(Arg::U64(asked));
        args.push(Arg::U64(cap));
        for &v in level.inputs {
            args.push(Arg::Buffer(&input(columns, v).mem.buf));
        }
        args.push(Arg::Buffer(&sizes.buf));
        self.queue.launch(&*self.program, size_kernel, asked, GROUP, &args)?;
        Ok(sizes)
    }

    /// The size of every child of a regular level (the same for every parent): asked of the
    /// device once per run, with the fault word (one wait).
    fn fanout(
        &mut self,
        comp: &Comp,
        k: usize,
        parents: &Parents<'_, 'c>,
    ) -> Result<u64, DeviceFailure> {
        let key = (std::ptr::from_ref(comp) as usize, k);
        if let Some(&(_, _, fanout)) = self.fanouts.iter().find(|f| (f.0, f.1) == key) {
            return Ok(fanout);
        }
        let level = &comp.levels[k];
        let Parents::Rows { cap, columns, .. } = parents else {
            unreachable!("a regular level has parents")
        };
        let sizes = self.sizes(level, 1, *cap, columns)?;
        let fanout = self.read_u64s(&[(&sizes, 0)])?[0];
        self.fanouts.push((key.0, key.1, fanout));
        Ok(fanout)
    }

    /// Runs level `k` of `comp` for `parents`, and everything below it.
    fn level(
        &mut self,
        comp: &Comp,
        k: usize,
        parents: &Parents<'_, 'c>,
        sink: &mut Sink<'_, 'c>,
    ) -> Result<(), DeviceFailure> {
        let level = &comp.levels[k];
        let last = k + 1 == comp.levels.len();
        if let Parents::Root = parents {
            // The range's elements are the rows' indices, which the nested reduction's rows
            // kernel computes itself: no kernel writes them.
            let contexts = Parents::Rows {
                count: self.root_len,
                cap: self.root_len,
                columns: &[],
                group: None,
                whole: Some(self.root_len),
                first: Some(0),
                sizes: None,
            };
            if self.contexts_unread(comp, &contexts) {
                return self.nested_and_head(comp, &contexts, sink);
            }
        }
        // Sizes and the layout of the level's positions.
        // Whether the level's offsets are its rows' own, so that its positions are the indices
        // of their elements (the kernel's `pc_rows_direct`).
        let mut rows_direct = false;
        let (total, fanout, offsets, parent_count, whole) = match parents {
            Parents::Root => (self.root_len, 0, None, 0, Some(self.root_len)),
            Parents::Rows { count, cap, columns, whole, sizes, .. } => {
                if *count == 0 {
                    return Ok(());
                }
                if level.regular {
                    let fanout = self.fanout(comp, k, parents)?;
                    let total =
                        count.checked_mul(fanout).unwrap_or_else(|| self.site.size_overflow());
                    let whole = whole.map(|w| {
                        w.checked_mul(fanout).unwrap_or_else(|| self.site.size_overflow())
                    });
                    (total, fanout, None, *count, whole)
                } else if let Some((offsets, total)) = self.row_offsets(level, parents) {
                    rows_direct = true;
                    (total, 0, Some(offsets), *count, None)
                } else {
                    let sizes = match sizes.and_then(Cell::take) {
                        Some(written) => written,
                        None => self.sizes(level, *count, *cap, columns)?,
                    };
                    let (offsets, total) = self.scan(sizes, *count)?;
                    (total, 0, Some(Offsets::Own(offsets)), *count, None)
                }
            }
        };
        let (in_cap, in_columns, in_group) = match parents {
            Parents::Root => (0, &[][..], None),
            Parents::Rows { cap, columns, group, .. } => (*cap, *columns, *group),
        };
        if let (true, Some(offsets), Sink::Segmented { .. }) = (rows_direct, &offsets, &*sink) {
            if let Some(kernel) = self.rows_kernel(comp, level, parent_count, total) {
                let parents = (parent_count, in_cap, in_columns);
                return self.row_per_work_item(kernel, level, offsets, parents, total, sink);
            }
        }
        // The first level of a nested reduction sets its contexts' results: a context without
        // a position gets the identity from the level's kernel when the level is the last (it
        // reduces by parent, and the work-item stepping past an empty parent writes it), else
        // from a launch that sets every result first — and when there is no position at all.
        if let (0, Sink::Segmented { result, reduction, .. }) = (k, &*sink) {
            let by_kernel =
                last && comp.nested.is_empty() && matches!(comp.terminal, Terminal::Reduce { .. });
            if !by_kernel || total == 0 {
                self.fill_identity(*reduction, result, parent_count)?;
            }
        }
        let nested_comp =
            matches!(sink, Sink::Segmented { .. } | Sink::Rows(_)) || in_group.is_some();
        // What the level kernel reads: a parent's columns (its group, and its offset when the
        // level is irregular) once per parent and tile that needs them — a parent's children are
        // neighbouring positions, whose reads of it coalesce or hit the cache — and each
        // position's element: of the first generator, or of a captured slice or row the
        // generator reads (gathers by other indices, `x[c]`, are not modelled).
        let parent_bytes: u64 =
            level.inputs.iter().map(|&v| self.class_bytes(self.plan.vars[v as usize])).sum::<u64>()
                + if offsets.is_some() { 8 } else { 0 }
                + if in_group.is_some() { 8 } else { 0 };
        // The first generator's element is its first variable's class (the element itself
        // where its pattern is a name); a comprehension that binds no variable (`k | _ <- xs`)
        // reads no element.
        let element_bytes: u64 = match (parents, self.plan.root, self.plan.vars.first()) {
            (Parents::Root, RootKind::Elements, Some(&class)) => self.element_read_bytes(class),
            _ => 0,
        } + level.reads.map_or(0, |c| self.element_read_bytes(c));
        // The level's kernel delivers the head's values (no level or nested comprehension
        // follows it).
        let head_here = last && comp.nested.is_empty();
        if let (Parents::Root, true, Terminal::Collect, Sink::Top(top)) =
            (parents, head_here && !level.filters, comp.terminal, &mut *sink)
        {
            // The first generator's every position is a value: the sink may make room for all
            // of them before the first chunk's are read.
            top.expect(usize::try_from(total).unwrap_or(usize::MAX));
        }
        // A filtering last level whose kept values are a `par!`'s or a `par_device!`'s, over
        // more chunks than one: the chunks append their kept values to one region, each placed
        // after the chunks before by a running total the device keeps (`pc_scan_carries_from`),
        // so the host waits for the kept count only when the region may be full and at the
        // level's end, not once per chunk. The region holds the level's positions, or as many
        // values as a quarter of the device's free memory holds (at least a chunk's).
        let appends = level.filters
            && head_here
            && !nested_comp
            && matches!(comp.terminal, Terminal::Collect)
            && matches!(&*sink, Sink::Top(_))
            && total > self.chunk;
        let region = if appends {
            let value_bytes = self.class_bytes(comp.head_class).max(1);
            let room = region_override().unwrap_or(self.memory_budget / value_bytes);
            let cap = total.min(room.max(self.chunk));
            let column = self.column(comp.head_class, cap)?;
            let base = self.alloc(8)?;
            self.queue.zero(&base.buf, 0, 8)?;
            Some(Region { column, base })
        } else {
            None
        };
        // The most values the region may hold now: the positions of the chunks appended since
        // it was last emptied.
        let mut appended = 0u64;
        let several_above = self.several;
        if let Sink::Top(_) = sink {
            self.several |= total > self.chunk;
        }
        let mut j0 = 0;
        while j0 < total {
            if let Sink::Top(top) = sink {
                if top.decided() {
                    self.several = several_above;
                    return Ok(());
                }
            }
            let count = self.chunk.min(total - j0);
            self.stats.positions += count;
            self.stats.chunks += 1;
            // A nested reduction's kernel reduces its tiles itself: what it hands on is two
            // summary entries (value and group) per tile, not a value per position.
            let summarised = head_here
                && matches!(
                    (&*sink, comp.terminal),
                    (Sink::Segmented { .. }, Terminal::Reduce { .. })
                );
            // Below the first generator, its work-items take `level_items` positions each, and a
            // tile GROUP × `level_items`.
            let coarse_reduce = summarised && !matches!(parents, Parents::Root);
            let level_items = level_items(self.cpu_shapes);
            // A level that writes a value per position: with a CPU device's shapes, below the
            // first generator, `plain_items` consecutive positions per work-item (the kernel's
            // `coarse_plain`); with a GPU's, at every level, `plain_items` positions GROUP
            // apart (`striped_plain`). A tile is GROUP × `plain_items` positions either way.
            let reduced_here = head_here && matches!(comp.terminal, Terminal::Reduce { .. });
            let plain_tiled = !level.filters
                && !reduced_here
                && (!self.cpu_shapes || !matches!(parents, Parents::Root));
            let plain_items = plain_items(self.cpu_shapes);
            let tiles = if coarse_reduce {
                count.div_ceil(GROUP as u64 * level_items)
            } else if plain_tiled {
                count.div_ceil(GROUP as u64 * plain_items)
            } else {
                count.div_ceil(GROUP as u64)
            };
            let entries = if summarised { 2 * tiles } else { count };
            // A level that filters writes the positions it keeps packed, in two phases (see
            // search.h); a reduction needs no packing (a rejected position adds the identity).
            let compacting = level.filters && !reduced_here;
            // Below the first generator (and at it, with a CPU device's shapes), a compacting
            // level's work-items take `filter_items` positions each, and a work-group GROUP ×
            // that many.
            let coarse = compacting && (self.cpu_shapes || !matches!(parents, Parents::Root));
            let places_count =
                if coarse { count.div_ceil(GROUP as u64 * self.filter_items) } else { tiles };
            let out_group = if nested_comp { Some(self.alloc(entries * 8)?) } else { None };
            // What the kernel writes: the head's values or partials, or the children's columns.
            if let Some(region) = &region {
                if appended + count > region.column.cap {
                    self.empty_region(level.kernel, region, sink)?;
                    appended = 0;
                }
            }
            let head_out: Option<Column<'c>> = if head_here && region.is_none() {
                Some(self.head_column(comp, entries, nested_comp)?)
            } else {
                None
            };
            // Where the head's values go: a column of the chunk's, or the region.
            let head_ref: Option<&Column<'c>> =
                head_out.as_ref().or(region.as_ref().map(|r| &r.column));
            let mut outputs = Vec::new();
            if !head_here {
                for &v in level.outputs {
                    let class = self.plan.vars[v as usize];
                    outputs.push((v, self.column(class, count)?));
                }
            }
            let places = if compacting { Some(self.alloc((places_count + 1) * 8)?) } else { None };
            // The next level's sizes, when this level's kernel writes them (with room for
            // their total: the next level's scan may take them in place).
            let sizes_out =
                if sizes_next(comp, k) { Some(self.alloc((count + 1) * 8)?) } else { None };
            let items = match (head_ref, comp.terminal, nested_comp) {
                // A reduction's level kernel runs whole work-groups.
                (Some(_), Terminal::Reduce { reduction, .. }, false) => {
                    count.div_ceil(self.reduce_tile(reduction)) * GROUP as u64
                }
                _ if coarse => count.div_ceil(self.filter_items),
                _ if coarse_reduce => count.div_ceil(level_items),
                _ if plain_tiled => count.div_ceil(plain_items),
                _ => count,
            };
            // Bytes per value written.
            let value_bytes: u64 = match head_ref {
                Some(out) => out.value_bytes(),
                None => outputs
                    .iter()
                    .map(|(v, _)| self.class_bytes(self.plan.vars[*v as usize]))
                    .sum::<u64>(),
            };
            // The parents a chunk spans, in proportion to its share of the level; and per
            // work-group the tile's first parent again, and the two searches' offsets.
            let spanned = (parent_count as u128 * count as u128).div_ceil(total as u128) as u64 + 1;
            let parent_reads = count.min(spanned + tiles);
            let searched_tiles = if coarse { places_count } else { tiles };
            let search_bytes = if offsets.is_some() { searched_tiles * 16 } else { 0 };
            let reads = parent_reads * parent_bytes + search_bytes + count * element_bytes;
            // The captured collections read by indices of the kernel's own (counted in the
            // model, not in what decides the stage below: their reads hit the cache or not
            // whatever is staged).
            let gathers = self.gathered_bytes(level, count);
            // A compacting work-group that keeps at most `stage_limit` of its positions stages
            // its kept values in phase 0 (search.h): each work-group a region of `stage_limit`
            // values in every held column (the head's, or the children's), and in the group
            // column when the comprehension is nested, each column `stride` bytes.
            let stage_limit = if compacting {
                let tile = if coarse { GROUP as u64 * self.filter_items } else { GROUP as u64 };
                stage_limit(tile, count, reads, value_bytes, nested_comp)
            } else {
                0
            };
            let stage_cap = places_count * stage_limit;
            let stage = if compacting {
                let layouts: Vec<&ColumnLayout> = match head_ref {
                    Some(out) => vec![&out.layout],
                    None => outputs.iter().map(|(_, c)| &c.layout).collect(),
                };
                let mut stride = if nested_comp { stage_cap * 8 } else { 0 };
                for layout in &layouts {
                    let staged = ColumnLayout::with_leaves(layout, stage_cap as usize)
                        .ok_or_else(too_big)?;
                    stride = stride.max(staged.bytes as u64);
                }
                let columns = layouts.len() as u64 + u64::from(nested_comp);
                let bytes = columns.checked_mul(stride).ok_or_else(too_big)?;
                Some((self.alloc(bytes.max(8))?, stride))
            } else {
                None
            };
            let launch = |session: &mut Self, phase: u32| -> Result<(), DeviceFailure> {
                let dummy = session.dummy();
                let mut args: Vec<Arg<'_>> = session.common();
                args.push(Arg::U64(j0));
                args.push(Arg::U64(count));
                args.push(Arg::U64(fanout));
                args.push(Arg::U64(parent_count));
                args.push(Arg::Buffer(match &offsets {
                    Some(Offsets::Own(mem)) => &mem.buf,
                    Some(Offsets::Captured { buffer, .. }) => {
                        session.cap_buf(session.cap_bufs[*buffer])
                    }
                    None => dummy,
                }));
                args.push(Arg::U64(match offsets {
                    Some(Offsets::Captured { at, .. }) => at as u64 / 8,
                    _ => 0,
                }));
                args.push(Arg::U64(in_cap));
                for &v in level.inputs {
                    args.push(Arg::Buffer(&input(in_columns, v).mem.buf));
                }
                args.push(Arg::Buffer(in_group.map_or(dummy, |g| &g.buf)));
                match head_ref {
                    Some(out) => {
                        args.push(Arg::U64(out.cap));
                        args.push(Arg::Buffer(&out.mem.buf));
                    }
                    None => {
                        args.push(Arg::U64(count));
                        for (_, column) in &outputs {
                            args.push(Arg::Buffer(&column.mem.buf));
                        }
                    }
                }
                args.push(Arg::Buffer(out_group.as_ref().map_or(dummy, |g| &g.buf)));
                match &*sink {
                    Sink::Segmented { result, .. } if summarised => {
                        args.push(Arg::U64(result.cap));
                        args.push(Arg::Buffer(&result.mem.buf));
                    }
                    _ => {
                        args.push(Arg::U64(0));
                        args.push(Arg::Buffer(dummy));
                    }
                }
                args.push(Arg::Buffer(places.as_ref().map_or(dummy, |p| &p.buf)));
                args.push(Arg::U32(phase));
                args.push(Arg::U32(u32::from(rows_direct)));
                args.push(Arg::Buffer(stage.as_ref().map_or(dummy, |(m, _)| &m.buf)));
                args.push(Arg::U64(stage_cap));
                args.push(Arg::U64(stage.as_ref().map_or(0, |&(_, stride)| stride)));
                args.push(Arg::U64(stage_limit));
                args.push(Arg::Buffer(sizes_out.as_ref().map_or(dummy, |m| &m.buf)));
                session
                    .queue
                    .launch(&*session.program, level.kernel, items, GROUP, &args)
                    .map_err(DeviceFailure::from)
            };
            // The first generator's elements of the chunk, where they go a chunk at a time: the
            // kernels wait for their copy; the next chunk's is queued once they are.
            let root = matches!(parents, Parents::Root);
            if root {
                self.root_arrived(j0 + count)?;
            }
            let next_root = (j0 + count).saturating_add(self.chunk).min(total);
            let mut early = None;
            let kept = match (&places, &region) {
                (Some(places), Some(region)) => {
                    let tiles = places_count;
                    // Phase 1 is counted as computing its kept values again (which work-groups
                    // staged is not known without their counts); the values' writes are
                    // counted when the region is emptied.
                    self.count_launch(level.kernel, reads + gathers + tiles * 8);
                    launch(self, 0)?;
                    self.scan_places(places, tiles, Some(&region.base))?;
                    self.count_launch(level.kernel, reads + gathers + tiles * 8);
                    launch(self, 1)?;
                    if root {
                        self.copy_root(next_root)?;
                    }
                    appended += count;
                    0
                }
                (Some(places), None) => {
                    // Phase 0 counts each work-group's kept positions; their scan gives each
                    // group its first place and the total; phase 1 writes the kept values.
                    let tiles = places_count;
                    // Phase 0's staged values are counted below, once the kept count is known.
                    self.count_launch(level.kernel, reads + gathers + tiles * 8);
                    launch(self, 0)?;
                    self.scan_places(places, tiles, None)?;
                    launch(self, 1)?;
                    if root {
                        self.copy_root(next_root)?;
                    }
                    // A `par!`'s values are read early with their count where they are few.
                    let collects = match (&head_out, &*sink, comp.terminal) {
                        (Some(out), Sink::Top(top), Terminal::Collect) if !top.keeps() => Some(out),
                        _ => None,
                    };
                    let kept;
                    (kept, early) = self.read_kept(places, tiles, collects)?;
                    let kept_bytes = kept * value_bytes + if nested_comp { kept * 8 } else { 0 };
                    // Which work-groups staged is not read back: the model takes the kept
                    // positions as spread evenly, so that every work-group staged when the
                    // chunk kept at most `stage_limit` per work-group (then phase 0 also wrote
                    // them to the stage, and phase 1 read each group's two places and the
                    // staged values, and wrote them), and none did otherwise (phase 1 read the
                    // inputs again).
                    if kept <= stage_cap {
                        self.count_dram(level.kernel, kept_bytes);
                        self.count_launch(level.kernel, tiles * 16 + 2 * kept_bytes);
                    } else {
                        self.count_launch(level.kernel, reads + gathers + tiles * 8 + kept_bytes);
                    }
                    // Phase 1, counted now, ran before the read: the read checked its fault.
                    self.unchecked = false;
                    kept
                }
                (None, _) => {
                    let out_bytes = match (head_ref, comp.terminal, nested_comp) {
                        (Some(_), Terminal::Reduce { reduction, .. }, false) => {
                            count.div_ceil(self.reduce_tile(reduction)) * value_bytes
                        }
                        // The summaries, and each group completed in the chunk written once.
                        (Some(_), _, _) if summarised => {
                            (entries + spanned.min(count)) * value_bytes
                        }
                        _ => count * value_bytes,
                    };
                    let group_bytes = if nested_comp { entries * 8 } else { 0 };
                    // And the next level's sizes, when it writes them.
                    let size_bytes = if sizes_out.is_some() { count * 8 } else { 0 };
                    self.count_launch(
                        level.kernel,
                        reads + gathers + out_bytes + group_bytes + size_bytes,
                    );
                    launch(self, 1)?;
                    if root {
                        self.copy_root(next_root)?;
                    }
                    entries
                }
            };
            drop(places);
            drop(stage);
            let next_sizes = Cell::new(sizes_out);
            match head_out {
                Some(out) => self.deliver(comp, out, kept, out_group, early, sink)?,
                // Appended to the region: delivered when it is emptied.
                None if head_here => {}
                None => {
                    let children = Parents::Rows {
                        count: kept,
                        cap: count,
                        columns: &outputs,
                        group: out_group.as_ref(),
                        whole: if level.filters { None } else { whole },
                        first: (k == 0 && matches!(parents, Parents::Root) && !level.filters)
                            .then_some(j0),
                        sizes: Some(&next_sizes),
                    };
                    if last {
                        self.nested_and_head(comp, &children, sink)?;
                    } else {
                        self.level(comp, k + 1, &children, sink)?;
                    }
                }
            }
            j0 += count;
        }
        if let Some(region) = &region {
            self.empty_region(level.kernel, region, sink)?;
        }
        self.several = several_above;
        Ok(())
    }

    /// Whether the top-level `comp`'s only level, an integer range from 0 (the root), need
    /// not run, its positions going to the nested comprehension as `contexts` with no column:
    /// its one nested comprehension is a reduction that is the head, whose rows kernel will run
    /// ([`Session::rows_kernel`], over the rows the range's elements index:
    /// [`Session::row_offsets`]) and reads no column of the range's level (it computes the
    /// element from the row), and the range's positions are one chunk. Its kernel would only
    /// write the elements 0..n.
    fn contexts_unread(&self, comp: &Comp, contexts: &Parents<'_, 'c>) -> bool {
        let ([level], [nested], Some(0), Terminal::Collect) =
            (comp.levels, comp.nested, comp.head_result, comp.terminal)
        else {
            return false;
        };
        let (Terminal::Reduce { reduction, .. }, [inner]) =
            (nested.comp.terminal, nested.comp.levels)
        else {
            return false;
        };
        let acc = self.plan.reductions[reduction as usize].acc;
        let fits = !level.filters
            && self.root_len > 0
            && self.root_len <= self.chunk
            && self.types[acc as usize] == self.types[comp.head_class as usize]
            && inner.rows_kernel.is_some_and(|k| !k.reads_parents);
        fits && self.row_offsets(inner, contexts).is_some_and(|(_, total)| {
            self.rows_kernel(nested.comp, inner, self.root_len, total).is_some()
        })
    }

    /// Offset `r` of the rows `level` reads directly (`Level::rows_of`), from the host's copy.
    fn row_offset(&self, level: &Level, r: u64) -> Option<u64> {
        let host = self.row_offsets.get(level.rows_of? as usize)?.as_ref()?.host;
        let at = usize::try_from(r).ok()?.checked_mul(8)?;
        Some(u64::from_le_bytes(host.get(at..at + 8)?.try_into().ok()?))
    }

    /// A CPU device's one-row-per-work-item kernel for `level` (`Level::rows_kernel`), where it
    /// may run: the level is a nested reduction's only one, it reads its `rows` rows' elements
    /// directly (the caller's `rows_direct`), and no work-group's rows hold more of its `total`
    /// positions than a position-partitioned work-group's tile or an eighth of a compute unit's
    /// share ([`ROWS_SHARE`]). Then a long row, which that form would leave to one work-item,
    /// is not there: the host reads one offset per work-group of rows to know (a few hundred
    /// reads for the sparse matrix × vector's 10⁵ rows), in the copy of the offsets it holds.
    fn rows_kernel(&self, comp: &Comp, level: &Level, rows: u64, total: u64) -> Option<RowsKernel> {
        let kernel = level.rows_kernel?;
        let reduces = comp.levels.len() == 1
            && comp.nested.is_empty()
            && matches!(comp.terminal, Terminal::Reduce { .. });
        if !self.cpu_shapes || !reduces {
            return None;
        }
        let offset = |r: u64| self.row_offset(level, r);
        let units = u64::from(self.device.info().compute_units.max(1));
        let share =
            (total / units.saturating_mul(ROWS_SHARE)).max(GROUP as u64 * level_items(true));
        let groups = rows.div_ceil(GROUP as u64);
        for g in 0..groups {
            let first = offset(g * GROUP as u64)?;
            let end = offset(((g + 1) * GROUP as u64).min(rows))?;
            if end.checked_sub(first)? > share {
                return None;
            }
        }
        Some(kernel)
    }

    /// Runs a nested reduction's only level by `kernel`, one work-item per row (see
    /// [`Session::rows_kernel`]): each folds its row's positions in order and writes the
    /// row's result (an empty row's the identity) — one launch, nothing in between.
    fn row_per_work_item(
        &mut self,
        kernel: RowsKernel,
        level: &Level,
        offsets: &Offsets<'c>,
        (rows, in_cap, in_columns): (u64, u64, &[(u32, Column<'c>)]),
        total: u64,
        sink: &Sink<'_, 'c>,
    ) -> Result<(), DeviceFailure> {
        let Sink::Segmented { result, reduction, .. } = sink else {
            return Err(malformed("rows reduced into no results"));
        };
        self.stats.positions += total;
        self.stats.chunks += 1;
        // Each row's inputs (where it reads them) and its two offsets, each position's element,
        // each result.
        let parent_bytes: u64 = match kernel.reads_parents {
            true => {
                level.inputs.iter().map(|&v| self.class_bytes(self.plan.vars[v as usize])).sum()
            }
            false => 0,
        };
        let element_bytes = level.reads.map_or(0, |c| self.element_read_bytes(c));
        let acc_bytes = self.class_bytes(self.plan.reductions[*reduction as usize].acc);
        let gathers = self.gathered_bytes(level, total);
        self.count_launch(
            kernel.name,
            rows * (parent_bytes + 8 + acc_bytes) + 8 + total * element_bytes + gathers,
        );
        let dummy = self.dummy();
        let mut args: Vec<Arg<'_>> = self.common();
        args.extend([Arg::U64(0), Arg::U64(total), Arg::U64(0), Arg::U64(rows)]);
        let Offsets::Captured { buffer, at } = *offsets else {
            return Err(malformed("rows read directly without their offsets"));
        };
        args.push(Arg::Buffer(self.cap_buf(self.cap_bufs[buffer])));
        args.push(Arg::U64(at as u64 / 8));
        args.push(Arg::U64(in_cap));
        for &v in level.inputs {
            // A kernel that computes its inputs reads none (the range's level may not have
            // run: `Session::contexts_unread`).
            let column = in_columns.iter().find(|(w, _)| *w == v).map(|(_, c)| &*c.mem.buf);
            match column {
                Some(buffer) => args.push(Arg::Buffer(buffer)),
                None if !kernel.reads_parents => args.push(Arg::Buffer(dummy)),
                None => return Err(malformed("a rows kernel without its parents' column")),
            }
        }
        // No group column in, no values or groups out: the row's result goes to `pc_res`.
        args.extend([Arg::Buffer(dummy), Arg::U64(0), Arg::Buffer(dummy), Arg::Buffer(dummy)]);
        args.extend([Arg::U64(result.cap), Arg::Buffer(&result.mem.buf)]);
        args.extend([Arg::Buffer(dummy), Arg::U32(1), Arg::U32(1), Arg::Buffer(dummy)]);
        args.extend([Arg::U64(0), Arg::U64(0), Arg::U64(0), Arg::Buffer(dummy)]);
        if kernel.header_arguments {
            args.extend(self.header.iter().map(|&w| Arg::U64(w)));
        }
        self.queue.launch(&*self.program, kernel.name, rows, GROUP, &args)?;
        Ok(())
    }

    /// Launches the scan of a filtering level's `tiles` work-group counts in `places` into each
    /// work-group's first place and the total after them: from 0, or from the running total
    /// `from` holds, which it advances (a region's, see [`Session::level`]).
    fn scan_places(
        &mut self,
        places: &Mem<'c>,
        tiles: u64,
        from: Option<&Mem<'c>>,
    ) -> Result<(), DeviceFailure> {
        let fault = &self.fault.as_ref().expect("uploaded").buf;
        let mut args = vec![Arg::Buffer(fault), Arg::Buffer(&places.buf), Arg::U64(tiles)];
        let kernel = match from {
            Some(base) => {
                args.push(Arg::Buffer(&base.buf));
                "pc_scan_carries_from"
            }
            None => "pc_scan_carries",
        };
        self.queue.launch(&*self.generic, kernel, GROUP as u64, GROUP, &args)?;
        let base_bytes = if from.is_some() { 16 } else { 0 };
        self.count_launch(kernel, tiles * 16 + base_bytes);
        Ok(())
    }

    /// Delivers the values appended to `region` (one wait, for their count, with their first
    /// values read in it) and empties it; `kernel` wrote them.
    fn empty_region(
        &mut self,
        kernel: &str,
        region: &Region<'c>,
        sink: &mut Sink<'_, 'c>,
    ) -> Result<(), DeviceFailure> {
        let Sink::Top(top) = sink else {
            return Err(malformed("a region of values for a sink that is not a `par!`'s"));
        };
        let keeps = top.keeps();
        let values = if keeps { None } else { Some(&region.column) };
        let (kept, early) = self.read_kept(&region.base, 0, values)?;
        let value_bytes = region.column.value_bytes();
        self.count_dram(kernel, kept * value_bytes);
        if keeps {
            // A `par_device!`'s values stay on the device: a column of their own (the region
            // is written again).
            self.stats.dram_minimum += kept * value_bytes;
            let values = self.copy_prefix(&region.column, kept)?;
            let layout = values.layout.clone();
            top.keep(values.mem.into_buffer(), layout, kept as usize);
        } else {
            self.deliver_values(&region.column, kept, early, &mut **top)?;
        }
        // After the reads just queued (the queue runs in order), before the next chunk's.
        self.queue.zero(&region.base.buf, 0, 8)?;
        Ok(())
    }

    /// Delivers the first `count` values of `out` to a `par!`'s sink that reads them.
    fn deliver_values(
        &mut self,
        out: &Column<'c>,
        count: u64,
        early: Option<EarlyValues>,
        top: &mut dyn TopSink,
    ) -> Result<(), DeviceFailure> {
        self.stats.dram_minimum += count * out.value_bytes();
        let layout = out.layout.clone();
        let mut fetch = Fetch { session: self, column: &out.mem.buf, early, beside: false };
        top.values(&layout, count as usize, &mut fetch)
    }

    /// Delivers a chunk's values to `top` as [`Session::deliver_values`] does, its reads going on
    /// the copy lane: held until the next chunk's kernels are queued (or the run's next wait),
    /// while the previous chunk's, held until now, are queued on the lane — so a chunk's
    /// values move while the next chunk runs.
    fn deliver_beside(
        &mut self,
        out: Column<'c>,
        count: u64,
        top: &mut dyn TopSink,
    ) -> Result<(), DeviceFailure> {
        self.stats.dram_minimum += count * out.value_bytes();
        let layout = out.layout.clone();
        let mut fetch = Fetch { session: self, column: &out.mem.buf, early: None, beside: true };
        top.values(&layout, count as usize, &mut fetch)?;
        let parts = std::mem::take(&mut self.deferred_parts);
        if parts.is_empty() {
            return Ok(());
        }
        let written = self.queue.mark()?;
        if let Some(before) = self.deferred.replace(Deferred { column: out, parts, written }) {
            self.read_beside(before)?;
        }
        Ok(())
    }

    /// Queues on the lane the reads of a chunk's values held back ([`Deferred`]), after the mark
    /// of the kernels that wrote them; the column the lane read before goes back to the arena,
    /// the queue's later work waiting for that read to end (the host does not wait).
    fn read_beside(&mut self, deferred: Deferred<'c>) -> Result<(), DeviceError> {
        let lane = self.queue.lane().expect("values are held for a lane only where there is one");
        lane.wait_mark(&deferred.written)?;
        for &(offset, out, len) in &deferred.parts {
            // SAFETY: `Fetch::read_later`'s promise for each destination: valid and untouched
            // until the reads landed, at the run's next wait, which finishes the lane too (and
            // the session finishes both before it is dropped).
            unsafe { lane.read_async(&deferred.column.mem.buf, offset, out, len) }?;
            self.stats.copies_out += 1;
            self.stats.bytes_out += len as u64;
            self.stats.bytes_beside += len as u64;
        }
        let read = lane.mark()?;
        if let Some((column, before)) = self.reading.replace((deferred.column, read)) {
            self.queue.wait_mark(&before)?;
            drop(column);
        }
        self.unchecked = true;
        Ok(())
    }

    /// Copies the first generator's positions up to `to` on the lane, where they go there a
    /// chunk at a time ([`RootPieces`]) and are not queued yet, and marks the copy's end.
    fn copy_root(&mut self, to: u64) -> Result<(), DeviceError> {
        let Some(pieces) = &mut self.root_pieces else {
            return Ok(());
        };
        let from = pieces.queued;
        if from >= to {
            return Ok(());
        }
        let lane = self.queue.lane().expect("the first generator goes by pieces only on a lane");
        let buffer = self.root.as_ref().expect("uploaded").buf();
        for (k, leaf) in pieces.layout.leaves.iter().enumerate() {
            let size = leaf.size();
            let at = pieces.layout.offsets[k] + from as usize * size;
            let len = (to - from) as usize * size;
            // SAFETY: `at + len` lies inside the layout's bytes, which `host` holds (the
            // caller's elements, or the session's `hold`), valid until the queue finished.
            unsafe { lane.write_async(buffer, at, pieces.host.add(at), len) }?;
            self.stats.copies_in += 1;
            self.stats.bytes_in += len as u64;
            self.stats.bytes_beside += len as u64;
        }
        pieces.marks.push_back((to, lane.mark()?));
        pieces.queued = to;
        Ok(())
    }

    /// Makes the queue's next kernels wait until the first generator's positions below `to` are
    /// on the device, where they go a chunk at a time; then queues the next chunk's copy, up to
    /// `next`, on the lane, to run beside the kernels the caller queues now. (A copy through
    /// pinned slots keeps the host copying its pieces in, so the next chunk's is queued only
    /// once this chunk's kernels are: see [`Session::level`].)
    fn root_arrived(&mut self, to: u64) -> Result<(), DeviceError> {
        self.copy_root(to)?;
        let Some(pieces) = &mut self.root_pieces else {
            return Ok(());
        };
        while pieces.marks.front().is_some_and(|&(end, _)| end <= to) {
            let (_, mark) = pieces.marks.pop_front().expect("a mark");
            self.queue.wait_mark(&mark)?;
        }
        Ok(())
    }

    /// The column the head's values (or partial results) of `count` positions go to;
    /// `nested`: the positions belong to a nested comprehension.
    fn head_column(
        &mut self,
        comp: &Comp,
        count: u64,
        nested: bool,
    ) -> Result<Column<'c>, DeviceFailure> {
        match comp.terminal {
            Terminal::Collect => self.column(comp.head_class, count),
            Terminal::Rows => Err(malformed("rows have no head column")),
            Terminal::Reduce { reduction, .. } => {
                let acc = self.plan.reductions[reduction as usize].acc;
                // A top-level reduction writes one partial per work-group; a nested one a value
                // per position.
                let values =
                    if nested { count } else { count.div_ceil(self.reduce_tile(reduction)) };
                self.column(acc, values)
            }
        }
    }

    /// The positions one work-group of a top-level reduction's kernel takes (see
    /// [`reduce_items`]).
    fn reduce_tile(&self, r: u32) -> u64 {
        let acc = self.plan.reductions[r as usize].acc;
        GROUP as u64 * reduce_items(&self.types[acc as usize])
    }

    /// Delivers the head's values of one chunk to `sink`: the first `count` values of `out`
    /// (and of `group`); a filtering level packed them there.
    fn deliver(
        &mut self,
        comp: &Comp,
        out: Column<'c>,
        count: u64,
        group: Option<Mem<'c>>,
        early: Option<EarlyValues>,
        sink: &mut Sink<'_, 'c>,
    ) -> Result<(), DeviceFailure> {
        match (sink, comp.terminal) {
            (Sink::Top(top), Terminal::Collect) => {
                if top.keeps() {
                    self.stats.dram_minimum += count * out.value_bytes();
                    // A kept column holds exactly its values.
                    let values = self.tight(out, count)?;
                    let layout = values.layout.clone();
                    top.keep(values.mem.into_buffer(), layout, count as usize);
                    return Ok(());
                }
                if self.lane && self.several && early.is_none() {
                    return self.deliver_beside(out, count, &mut **top);
                }
                self.deliver_values(&out, count, early, &mut **top)
            }
            (Sink::Top(top), Terminal::Reduce { reduction, kind }) => {
                let groups = count.div_ceil(self.reduce_tile(reduction));
                self.add_partial(reduction, &out, groups)?;
                if let ReduceKind::Flag { .. } = kind {
                    // `par_any!` / `par_all!` may stop early: each chunk's answer is read.
                    self.deliver_partials(&mut **top, reduction, kind)?;
                }
                Ok(())
            }
            (Sink::Segmented { result, carry, reduction }, Terminal::Reduce { .. }) => {
                let group = group.expect("a nested comprehension's positions have groups");
                self.segmented(*reduction, &out, count, &group, result, carry)
            }
            (Sink::Rows(top), Terminal::Collect) => {
                let group = group.expect("a nested comprehension's positions have groups");
                // The first `count` values of each component, read into a column that holds
                // just them.
                let mut bytes = Vec::new();
                let (layout, reads) =
                    out.layout.prefix_reads(count as usize, &mut bytes).ok_or_else(too_big)?;
                let mut groups = vec![0u64; count as usize];
                let mut parts: Vec<(&Buffer, usize, *mut u8, usize)> =
                    reads.into_iter().map(|(at, to, len)| (&*out.mem.buf, at, to, len)).collect();
                parts.push((&*group.buf, 0, groups.as_mut_ptr().cast::<u8>(), groups.len() * 8));
                // SAFETY: every destination is a range of `bytes` (component k's array of the
                // tight layout, inside it) or `groups`, local vectors untouched until the call
                // returns.
                unsafe { self.fetch(&parts)? };
                self.stats.bytes_converted += bytes.len() as u64;
                self.stats.dram_minimum += bytes.len() as u64;
                let groups: Vec<u64> = groups.into_iter().map(u64::from_le).collect();
                top.row_values(&bytes, &layout, &groups);
                Ok(())
            }
            (Sink::Segmented { .. }, Terminal::Collect) => {
                Err(malformed("a nested `par!` delivered to a reduction"))
            }
            (_, Terminal::Rows) | (Sink::Rows(_), Terminal::Reduce { .. }) => {
                Err(malformed("rows delivered as values"))
            }
        }
    }

    /// `column` holding exactly its first `count` values: itself when it has no more room,
    /// else a new column they are copied into, within the device.
    fn tight(&mut self, column: Column<'c>, count: u64) -> Result<Column<'c>, DeviceFailure> {
        if column.cap == count {
            return Ok(column);
        }
        self.copy_prefix(&column, count)
    }

    /// A new column holding the first `count` values of `column`, copied within the device.
    fn copy_prefix(
        &mut self,
        column: &Column<'c>,
        count: u64,
    ) -> Result<Column<'c>, DeviceFailure> {
        let layout =
            ColumnLayout::with_leaves(&column.layout, count as usize).ok_or_else(too_big)?;
        let mem = self.alloc(layout.bytes as u64)?;
        for (k, leaf) in layout.leaves.iter().enumerate() {
            let len = leaf.size() * count as usize;
            if len > 0 {
                self.queue.copy(
                    &column.mem.buf,
                    column.layout.offsets[k],
                    &mem.buf,
                    layout.offsets[k],
                    len,
                )?;
            }
        }
        Ok(Column { mem, cap: count, layout })
    }

    /// Launches reduction `r`'s partials kernel as one work-group: the `n` values of `input`
    /// reduced in order into value `at` of `output` (which may be `input` itself, `at` 0: the
    /// work-group reads all before it writes).
    fn reduce_once(
        &mut self,
        r: u32,
        input: &Column<'c>,
        n: u64,
        output: &Column<'c>,
        at: u64,
    ) -> Result<(), DeviceFailure> {
        let info = self.plan.reductions[r as usize];
        let kernel = format!("{}_partials", info.name);
        let acc_bytes = self.class_bytes(info.acc);
        self.count_launch(&kernel, (n + 1) * acc_bytes);
        let args = self.with_captures(&[
            Arg::U64(n),
            Arg::Buffer(&input.mem.buf),
            Arg::U64(input.cap),
            Arg::U64(n.div_ceil(GROUP as u64).max(1)),
            Arg::U64(output.cap),
            Arg::Buffer(&output.mem.buf),
            Arg::U64(at),
        ]);
        self.queue
            .launch(&*self.program, &kernel, GROUP as u64, GROUP, &args)
            .map_err(DeviceFailure::from)
    }

    /// Reduces the `n` per-work-group partials of one chunk into the run's next partial slot
    /// (on the device; nothing waits).
    fn add_partial(&mut self, r: u32, partials: &Column<'c>, n: u64) -> Result<(), DeviceFailure> {
        if self.partials.is_none() {
            let acc = self.plan.reductions[r as usize].acc;
            let column = self.column(acc, PARTIAL_SLOTS)?;
            self.partials = Some(Partials { column, used: 0 });
        }
        let mut slots = self.partials.take().expect("made above");
        let result = self.reduce_once(r, partials, n, &slots.column, slots.used);
        slots.used += 1;
        let result = result.and_then(|()| {
            if slots.used == PARTIAL_SLOTS {
                // Full: the slots so far into the first, in order.
                self.reduce_once(r, &slots.column, slots.used, &slots.column, 0)?;
                slots.used = 1;
            }
            Ok(())
        });
        self.partials = Some(slots);
        result
    }

    /// Combines the run's partial slots and hands the result to `top` (one wait).
    fn deliver_partials(
        &mut self,
        top: &mut dyn TopSink,
        r: u32,
        kind: ReduceKind,
    ) -> Result<(), DeviceFailure> {
        let Some(mut slots) = self.partials.take() else { return Ok(()) };
        if slots.used == 0 {
            self.partials = Some(slots);
            return Ok(());
        }
        if slots.used > 1 {
            if let Err(e) = self.reduce_once(r, &slots.column, slots.used, &slots.column, 0) {
                self.partials = Some(slots);
                return Err(e);
            }
        }
        let mut bytes = vec![0u8; slots.column.layout.bytes];
        // SAFETY: the destination is a local vector of that length, untouched until it returns.
        let read =
            unsafe { self.fetch(&[(&slots.column.mem.buf, 0, bytes.as_mut_ptr(), bytes.len())]) };
        slots.used = 0;
        let layout = slots.column.layout.clone();
        self.partials = Some(slots);
        read?;
        self.stats.dram_minimum += self.class_bytes(self.plan.reductions[r as usize].acc);
        top.partial(&bytes, &layout, kind);
        Ok(())
    }

    /// At the end of a run: a top-level reduction's result, from the partial slots.
    fn finish_partials(&mut self, sink: &mut dyn TopSink) -> Result<(), DeviceFailure> {
        if let Terminal::Reduce { reduction, kind } = self.plan.comp.terminal {
            self.deliver_partials(sink, reduction, kind)?;
        }
        Ok(())
    }

    fn fill_identity(&mut self, r: u32, column: &Column<'c>, n: u64) -> Result<(), DeviceFailure> {
        let kernel = format!("{}_fill", self.plan.reductions[r as usize].name);
        let acc_bytes = self.class_bytes(self.plan.reductions[r as usize].acc);
        self.count_launch(&kernel, n * acc_bytes);
        let args =
            self.with_captures(&[Arg::U64(n), Arg::U64(column.cap), Arg::Buffer(&column.mem.buf)]);
        self.queue.launch(&*self.program, &kernel, n, GROUP, &args).map_err(DeviceFailure::from)
    }

    fn carry(&mut self, r: u32) -> Result<Carry<'c>, DeviceFailure> {
        let acc = self.plan.reductions[r as usize].acc;
        let groups = [self.alloc(8)?, self.alloc(8)?];
        let values = [self.column(acc, 1)?, self.column(acc, 1)?];
        Ok(Carry { groups, values, current: 0, fresh: true })
    }

    /// Reduces the values of one chunk by group into `result`, continuing `carry`: in one
    /// launch when they fit in one tile (`_segone`), else in three (the tiles' aggregates, their
    /// prefixes from the carry, every position's value).
    fn segmented(
        &mut self,
        r: u32,
        values: &Column<'c>,
        count: u64,
        group: &Mem<'c>,
        result: &Column<'c>,
        carry: &mut Carry<'c>,
    ) -> Result<(), DeviceFailure> {
        let info = self.plan.reductions[r as usize];
        let acc_bytes = self.class_bytes(info.acc);
        let (now, next) = (carry.current, 1 - carry.current);
        if count <= TILE {
            // One work-group reads the values and their groups (a second time from its
            // cache) and writes the results (at most one per position).
            let kernel = format!("{}_segone", info.name);
            let args = self.with_captures(&[
                Arg::U64(count),
                Arg::Buffer(&values.mem.buf),
                Arg::U64(values.cap),
                Arg::Buffer(&group.buf),
                Arg::U32(u32::from(carry.fresh)),
                Arg::Buffer(&carry.groups[now].buf),
                Arg::Buffer(&carry.values[now].mem.buf),
                Arg::U64(result.cap),
                Arg::Buffer(&result.mem.buf),
                Arg::Buffer(&carry.groups[next].buf),
                Arg::Buffer(&carry.values[next].mem.buf),
            ]);
            self.queue.launch(&*self.program, &kernel, GROUP as u64, GROUP, &args)?;
            self.count_launch(&kernel, count * (2 * acc_bytes + 8));
            (carry.current, carry.fresh) = (next, false);
            return Ok(());
        }
        if carry.fresh {
            // The carry of no group: a group no position has, and the identity.
            let groups = &carry.groups[now];
            let args = [Arg::Buffer(&groups.buf), Arg::U64(1), Arg::U64(u64::MAX)];
            self.launch(true, "pc_fill_u64", 1, 8, &args)?;
            self.fill_identity(r, &carry.values[now], 1)?;
            carry.fresh = false;
        }
        let tiles = count.div_ceil(TILE);
        let agg_flags = self.alloc(tiles * 8)?;
        let agg_vals = self.column(info.acc, tiles)?;
        let program = &*self.program;
        let queue = &self.queue;
        let launch = |kernel: String, items: u64, args: &[Arg<'_>]| {
            queue.launch(program, &kernel, items, GROUP, args).map_err(DeviceFailure::from)
        };
        launch(
            format!("{}_segtiles", info.name),
            tiles * GROUP as u64,
            &self.with_captures(&[
                Arg::U64(count),
                Arg::Buffer(&values.mem.buf),
                Arg::U64(values.cap),
                Arg::Buffer(&group.buf),
                Arg::Buffer(&carry.groups[now].buf),
                Arg::Buffer(&agg_flags.buf),
                Arg::U64(agg_vals.cap),
                Arg::Buffer(&agg_vals.mem.buf),
            ]),
        )?;
        launch(
            format!("{}_segcarries", info.name),
            GROUP as u64,
            &self.with_captures(&[
                Arg::U64(tiles),
                Arg::Buffer(&agg_flags.buf),
                Arg::U64(agg_vals.cap),
                Arg::Buffer(&agg_vals.mem.buf),
                Arg::Buffer(&carry.values[now].mem.buf),
            ]),
        )?;
        launch(
            format!("{}_segapply", info.name),
            tiles * GROUP as u64,
            &self.with_captures(&[
                Arg::U64(count),
                Arg::Buffer(&values.mem.buf),
                Arg::U64(values.cap),
                Arg::Buffer(&group.buf),
                Arg::Buffer(&carry.groups[now].buf),
                Arg::Buffer(&agg_flags.buf),
                Arg::U64(agg_vals.cap),
                Arg::Buffer(&agg_vals.mem.buf),
                Arg::U64(result.cap),
                Arg::Buffer(&result.mem.buf),
                Arg::Buffer(&carry.groups[next].buf),
                Arg::Buffer(&carry.values[next].mem.buf),
            ]),
        )?;
        // Tiles and apply each read the values and their groups; apply writes the results
        // (at most one per position).
        self.count_launch(&format!("{}_segtiles", info.name), count * (acc_bytes + 8));
        self.count_launch(&format!("{}_segcarries", info.name), tiles * (acc_bytes + 8) * 2);
        self.count_launch(&format!("{}_segapply", info.name), count * (2 * acc_bytes + 8));
        carry.current = next;
        Ok(())
    }

    /// After the last level of a comprehension with nested ones: runs each nested comprehension
    /// on the contexts `rows`, then the head kernel.
    fn nested_and_head(
        &mut self,
        comp: &Comp,
        rows: &Parents<'_, 'c>,
        sink: &mut Sink<'_, 'c>,
    ) -> Result<(), DeviceFailure> {
        let Parents::Rows { count, cap, columns, group, first, .. } = rows else {
            unreachable!("nested comprehensions run on stored contexts")
        };
        if *count == 0 {
            return Ok(());
        }
        // Every nested comprehension runs on the same contexts, each its own group: its first
        // level takes a position's parent index for its group, and reads no group column.
        let inner = Parents::Rows {
            count: *count,
            cap: *cap,
            columns,
            group: None,
            whole: None,
            first: *first,
            sizes: None,
        };
        if let Terminal::Rows = comp.terminal {
            // The head is the nested `par!`: its values, grouped by context, are the rows.
            let (Sink::Top(top), [nested]) = (sink, comp.nested) else {
                return Err(malformed("rows of a nested comprehension"));
            };
            top.begin_rows(usize::try_from(*count).map_err(|_| too_big())?);
            return self.level(nested.comp, 0, &inner, &mut Sink::Rows(&mut **top));
        }
        let mut results: Vec<(u32, Column<'c>)> = Vec::new();
        for nested in comp.nested {
            let Terminal::Reduce { reduction, .. } = nested.comp.terminal else {
                return Err(DeviceFailure::cannot("a nested `par!` runs on the CPU"));
            };
            let acc = self.plan.reductions[reduction as usize].acc;
            // Its results are set to the identity by its first level (see `Session::level`).
            let result = self.column(acc, *cap)?;
            let mut carry = self.carry(reduction)?;
            let mut inner_sink = Sink::Segmented { result: &result, carry: &mut carry, reduction };
            self.level(nested.comp, 0, &inner, &mut inner_sink)?;
            results.push((nested.result, result));
        }
        let nested_comp = group.is_some();
        if let (Some(k), Terminal::Collect, false) = (comp.head_result, comp.terminal, nested_comp)
        {
            // The head is exactly nested reduction `k`'s result, of the head's type: the head
            // kernel would only copy the results column into the output column, so the results
            // column is the output.
            let nested =
                comp.nested.get(k as usize).ok_or_else(|| malformed("the head's result"))?;
            let Terminal::Reduce { reduction, .. } = nested.comp.terminal else {
                return Err(malformed("the head is the result of a nested `par!`"));
            };
            let acc = self.plan.reductions[reduction as usize].acc;
            if self.types[acc as usize] == self.types[comp.head_class as usize] {
                let at = results
                    .iter()
                    .position(|(r, _)| *r == nested.result)
                    .ok_or_else(|| malformed("the head's result"))?;
                let (_, out) = results.swap_remove(at);
                return self.deliver(comp, out, *count, None, None, sink);
            }
        }
        let head = comp.head_kernel.expect("a comprehension with nested ones has a head kernel");
        let out = self.head_column(comp, *count, nested_comp)?;
        let out_group = if nested_comp { Some(self.alloc(count * 8)?) } else { None };
        let in_bytes: u64 = comp
            .head_inputs
            .iter()
            .map(|&v| match results.iter().find(|(r, _)| *r == v) {
                Some((_, c)) => c.value_bytes(),
                None => self.class_bytes(self.plan.vars[v as usize]),
            })
            .sum();
        // It reads each context's inputs (and its group, when the comprehension is nested) and
        // writes its values (and their groups).
        let group_bytes = if nested_comp { count * 16 } else { 0 };
        self.count_launch(head, count * in_bytes + out.layout.bytes as u64 + group_bytes);
        {
            let dummy = self.dummy();
            let mut args: Vec<Arg<'_>> = self.common();
            args.push(Arg::U64(*count));
            args.push(Arg::U64(*cap));
            for &v in comp.head_inputs {
                let column = results
                    .iter()
                    .find(|(r, _)| *r == v)
                    .map(|(_, c)| c)
                    .unwrap_or_else(|| input(columns, v));
                args.push(Arg::Buffer(&column.mem.buf));
            }
            args.push(Arg::Buffer(group.map_or(dummy, |g| &g.buf)));
            args.push(Arg::U64(out.cap));
            args.push(Arg::Buffer(&out.mem.buf));
            args.push(Arg::Buffer(out_group.as_ref().map_or(dummy, |g| &g.buf)));
            let items = match (comp.terminal, nested_comp) {
                (Terminal::Reduce { reduction, .. }, false) => {
                    count.div_ceil(self.reduce_tile(reduction)) * GROUP as u64
                }
                _ => *count,
            };
            self.queue.launch(&*self.program, head, items, GROUP, &args)?;
        }
        self.deliver(comp, out, *count, out_group, None, sink)
    }
}

/// A CPU device's one-row-per-work-item form of a nested reduction's level runs where no
/// work-group's rows hold more than `1 / ROWS_SHARE` of a compute unit's share of the positions
/// (or a tile of the position-partitioned form, whichever is more): the device's threads take
/// work-groups as they finish, so the last to finish waits at most that long for the others.
const ROWS_SHARE: u64 = 8;

/// The most sizes a level's scan takes in one work-group, in place (`pc_scan_carries`): four
/// tiles, four steps of one work-group, where three launches would each do one step.
const SCAN_IN_ONE_GROUP: u64 = 4 * TILE;

/// The most sizes a level's scan takes in one work-item on a CPU device, in place
/// (`pc_scan_serial`): about a nanosecond each on one core, where the tiled form's launches
/// cost tens of microseconds each on PoCL.
const SCAN_SERIAL: u64 = 1 << 16;

/// A launch on a queue: `(kernel, items, args)` of one program, in groups of [`GROUP`].
pub(crate) type Launcher<'l> = dyn Fn(&str, u64, &[Arg<'_>]) -> Result<(), DeviceError> + 'l;

/// Queues the exclusive scan of the `n` sizes in `sizes` into `offsets` (n + 1 entries, the
/// last the total; `sums` holds `n / TILE + 2` entries), faulting when the total overflows:
/// kernels of the generic program, the tiles' sums then each tile's offsets from the sums
/// before it (two launches) for at most [`TILE`] tiles, else with the tiles' sums scanned
/// between (three). Returns the number of launches.
pub(crate) fn launch_scan(
    launch: &Launcher<'_>,
    fault: &Buffer,
    sizes: &Buffer,
    n: u64,
    sums: &Buffer,
    offsets: &Buffer,
) -> Result<u64, DeviceError> {
    let tiles = n.div_ceil(TILE).max(1);
    let items = tiles * GROUP as u64;
    let (fault, sizes, sums) = (Arg::Buffer(fault), Arg::Buffer(sizes), Arg::Buffer(sums));
    launch("pc_scan_tiles", items, &[fault, sizes, Arg::U64(n), sums])?;
    if tiles <= TILE {
        let args = [fault, sizes, Arg::U64(n), sums, Arg::U64(tiles), Arg::Buffer(offsets)];
        launch("pc_scan_apply_summed", items, &args)?;
        return Ok(2);
    }
    launch("pc_scan_carries", GROUP as u64, &[fault, sums, Arg::U64(tiles)])?;
    let args = [fault, sizes, Arg::U64(n), sums, Arg::U64(tiles), Arg::Buffer(offsets)];
    launch("pc_scan_apply", items, &args)?;
    Ok(3)
}

/// The load-balanced search: `seg[a]` = the segment (of `segments`, by `offsets`) holding
/// position `j0 + a`, for `a < count`; `bounds` holds two `u64`s. The chunk's first and last
/// segments are found on the device, and the merge is launched for the most segments a chunk
/// can span (work-items past the chunk's merge path return at once), so nothing is read back.
/// Returns the number of launches.
#[allow(clippy::too_many_arguments)]
pub(crate) fn launch_search(
    launch: &Launcher<'_>,
    offsets: &Buffer,
    segments: u64,
    j0: u64,
    count: u64,
    bounds: &Buffer,
    seg: &Buffer,
) -> Result<u64, DeviceError> {
    if count == 0 {
        return Ok(0);
    }
    let (offsets, bounds_arg) = (Arg::Buffer(offsets), Arg::Buffer(bounds));
    let args = [offsets, Arg::U64(segments), Arg::U64(j0), Arg::U64(count), bounds_arg];
    launch("pc_lbs_bounds", 1, &args)?;
    let items = (count + segments).div_ceil(LBS_ITEMS);
    let args = [offsets, bounds_arg, Arg::U64(j0), Arg::U64(count), Arg::Buffer(seg)];
    launch("pc_lbs", items, &args)?;
    Ok(2)
}

/// The values of an array of rows as one column: its own memory when it already is one,
/// else split into columns on the host's cores, row by row.
fn jagged_values<'a>(j: &'a dyn DynJagged, layout: &ColumnLayout) -> Upload<'a> {
    if let Some(raw) = j.column_bytes() {
        return Upload::Bytes(ColumnBytes::Borrowed(raw));
    }
    if let Some(flat) = j.flat() {
        return column_of(None, layout, flat.len(), move |range, w| flat.write_at(range, w));
    }
    let layout = layout.clone();
    Upload::Convert(
        layout.bytes,
        Box::new(move |at| {
            let mut starts = Vec::with_capacity(j.rows() + 1);
            j.offsets(&mut starts);
            let rows = j.rows();
            const ROWS: usize = 1 << 10;
            // SAFETY: `Upload::Convert`'s promise: `at` is valid for writes of the layout's
            // bytes, and nothing else touches them; each piece writes rows of its own.
            unsafe {
                columns_par_at(at, layout.bytes, &layout, rows.div_ceil(ROWS), |piece, writer| {
                    let first = piece * ROWS;
                    for (row, &start) in
                        starts.iter().enumerate().take((first + ROWS).min(rows)).skip(first)
                    {
                        j.write_row(row, start as usize, writer);
                    }
                })
            }
        }),
    )
}

/// Positions a chunk holds: `PARCOMP_DEVICE_CHUNK` when set, else what `budget` (a quarter of the
/// device's free memory) holds of the plan's widest level (every column a position of it
/// writes, twice for compaction, half again for a filter's stage, with its flag, segment id,
/// group and scan entries), within the largest buffer the device allows, between 2¹⁶ and 2³⁰.
fn chunk_size(device: &dyn Device, plan: &DevicePlan, types: &[TypeDesc], budget: u64) -> u64 {
    static OVERRIDE: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    let set = *OVERRIDE.get_or_init(|| env_count("PARCOMP_DEVICE_CHUNK"));
    if let Some(set) = set {
        return set;
    }
    let info = device.info();
    let bytes_of = |class: ClassId| -> u64 {
        types.get(class as usize).map_or(8, |t| t.leaves().iter().map(|l| l.size() as u64).sum())
    };
    let mut widest = bytes_of(plan.comp.head_class);
    let mut column = widest;
    let mut comps = vec![&plan.comp];
    while let Some(comp) = comps.pop() {
        for level in comp.levels {
            let outputs: u64 = level.outputs.iter().map(|&v| bytes_of(plan.vars[v as usize])).sum();
            widest = widest.max(outputs);
            for &v in level.outputs {
                column = column.max(bytes_of(plan.vars[v as usize]));
            }
        }
        comps.extend(comp.nested.iter().map(|n| n.comp));
    }
    // A filtering level's stage holds half a value and half a group per position (search.h).
    let per_position = 2 * widest + (widest + 8).div_ceil(2) + 40;
    let by_memory = budget / per_position;
    let by_buffer = if info.max_buffer == 0 { u64::MAX } else { info.max_buffer / column.max(8) };
    by_memory.min(by_buffer).clamp(1 << 16, 1 << 30)
}

/// `PARCOMP_DEVICE_REGION`, read once: the values a filtering last level's output region holds
/// over several chunks (at least a chunk's), instead of what a quarter of the device's free
/// memory holds — for tests, which make it small to see the region emptied within a level.
fn region_override() -> Option<u64> {
    static OVERRIDE: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    *OVERRIDE.get_or_init(|| env_count("PARCOMP_DEVICE_REGION"))
}

/// A quarter of the device's free memory (of its memory where it does not say what is free).
fn memory_budget(device: &dyn Device) -> u64 {
    let free = device.free_memory().unwrap_or(device.info().global_memory);
    if free == 0 {
        1 << 30
    } else {
        free / 4
    }
}

/// The most kept positions a filtering level's work-group stages in phase 0 rather than
/// computing them again in phase 1 (search.h), from what each moves: staging `k` values
/// writes them, reads them and writes them again (`2k` values more than computing again),
/// computing again reads the work-group's inputs again (`per_tile`, its share of the
/// chunk's `reads`: its elements, parents and searches). At most half the work-group's
/// positions, which bounds the staging buffer (`chunk_size` counts it).
fn stage_limit(tile: u64, count: u64, reads: u64, value_bytes: u64, nested: bool) -> u64 {
    let kept_bytes = value_bytes + if nested { 8 } else { 0 };
    if kept_bytes == 0 {
        return tile / 2;
    }
    // A whole work-group's share: the chunk's last one may hold fewer positions.
    let per_tile = (reads as u128 * tile as u128).div_ceil(count.max(1) as u128);
    ((per_tile / (2 * kept_bytes as u128)) as u64).min(tile / 2)
}

fn input<'a, 'c>(columns: &'a [(u32, Column<'c>)], var: u32) -> &'a Column<'c> {
    columns
        .iter()
        .find(|(v, _)| *v == var)
        .map(|(_, c)| c)
        .expect("parcomp internal error: a level reads a variable its parents do not hold")
}

/// A plan that does not fit together: the macro and the runtime disagree.
fn malformed(what: &str) -> DeviceFailure {
    DeviceFailure::fatal(format!("parcomp internal error: {what}"))
}

fn too_big() -> DeviceFailure {
    DeviceFailure::fatal("a captured value does not fit in memory")
}
