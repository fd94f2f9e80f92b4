//! The plan executor: a comprehension's device plan run on any [`Device`], by flattening by
//! expansion, one chunk at a time.
//!
//! For each level of the comprehension (each generator), given its parents' columns:
//!
//! 1. **sizes** — the size kernel gives every parent's number of children; a product (regular)
//!    level asks one parent, and a position's parent is then a division;
//! 2. **offsets** — otherwise the generic scan turns the sizes into offsets (faulting if they
//!    sum to more than a `u64` counts), and the total is read back;
//! 3. **chunks** — the level's positions are taken `chunk` at a time (so device memory stays
//!    bounded however large the flattened space); for each, the load-balanced search finds
//!    every position's parent, the level kernel fetches the elements and runs the qualifiers,
//!    and what a filter dropped is compacted away;
//! 4. **depth first** — each chunk's children are run through the next level before the next
//!    chunk, so outputs come out in nested-loop order.
//!
//! The last level computes the head: a `par!` appends the chunk's values to the result; a
//! reduction combines per-work-group partial results on the device and the host combines one
//! value per chunk, in order; a comprehension nested in a head runs on its enclosing
//! comprehension's contexts and reduces per context by a segmented reduction (each position
//! tagged with its context, a carry across chunks), after which the head kernel runs.

use super::device::{Arg, Buffer, Device, DeviceError, DeviceErrorKind, Program};
use super::fault::{self, Fault};
use super::offload::HostData;
use super::plan::{ClassId, Comp, DevicePlan, ReduceKind, RootKind, Terminal};
use super::program::{Built, GROUP, LBS_ITEMS, TILE};
use super::types::{ColumnLayout, ColumnWriter, TypeDesc};
use super::DeviceFailure;
use crate::site::Site;
use std::cell::Cell;
use std::time::{Duration, Instant};

/// Positions of a level run at once, unless `PARCOMP_DEVICE_CHUNK` says otherwise.
pub(crate) const DEFAULT_CHUNK: u64 = 1 << 22;

fn chunk_size() -> u64 {
    static CHUNK: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *CHUNK.get_or_init(|| {
        std::env::var("PARCOMP_DEVICE_CHUNK")
            .ok()
            .and_then(|v| v.trim().replace('_', "").parse::<u64>().ok())
            .filter(|&c| c > 0)
            .unwrap_or(DEFAULT_CHUNK)
    })
}

fn fatal(e: DeviceError) -> DeviceFailure {
    DeviceFailure { message: e.to_string(), fatal: true }
}

/// What a run measured, for reports.
#[derive(Clone, Debug, Default)]
pub struct RunStats {
    /// Time spent building programs (near zero when they were cached).
    pub compile: Duration,
    /// Programs compiled by the device's compiler for this run.
    pub programs_compiled: u32,
    /// Programs loaded from the disk cache for this run.
    pub programs_loaded: u32,
    /// Time spent copying to and from the device (not waiting for kernels).
    pub transfer: Duration,
    /// Bytes copied to the device.
    pub bytes_in: u64,
    /// Bytes copied from the device.
    pub bytes_out: u64,
    /// The most device memory the run held at once.
    pub peak_memory: u64,
    /// Kernels launched.
    pub launches: u64,
    /// Positions the level kernels ran (the flattened spaces' sizes).
    pub positions: u64,
    /// Time from the first launch to the end.
    pub run: Duration,
}

impl RunStats {
    /// Counts a program the run needed, by where it came from.
    pub(crate) fn count(&mut self, origin: super::program::Origin) {
        match origin {
            super::program::Origin::Compiled => self.programs_compiled += 1,
            super::program::Origin::Disk => self.programs_loaded += 1,
            super::program::Origin::Memory => {}
        }
    }
}

/// Device memory of a run, counted for its peak.
pub(crate) struct Mem<'c> {
    pub(crate) buf: Buffer,
    live: &'c Cell<u64>,
}

impl Drop for Mem<'_> {
    fn drop(&mut self) {
        self.live.set(self.live.get() - self.buf.bytes() as u64);
    }
}

/// A column of values of one class, with room for `cap` of them.
pub(crate) struct Column<'c> {
    pub(crate) mem: Mem<'c>,
    pub(crate) cap: u64,
    pub(crate) layout: ColumnLayout,
}

/// The contexts a level's positions are children of.
enum Parents<'p, 'c> {
    /// The first generator of the comprehension.
    Root,
    /// `count` contexts in columns (by variable) of capacity `cap`, and, in a nested
    /// comprehension, the group (the enclosing context) of each. `whole`: the contexts of
    /// every chunk of the level together, when known before running it (a regular chain
    /// below the first generator, no filter), so that a space too large to count is the
    /// CPU's size-overflow panic at once, not an endless run of chunks.
    Rows {
        count: u64,
        cap: u64,
        columns: &'p [(u32, Column<'c>)],
        group: Option<&'p Mem<'c>>,
        whole: Option<u64>,
    },
}

/// The carry of a segmented reduction from one chunk to the next: the last group so far and its
/// value (double-buffered: a chunk reads one pair and writes the other).
struct Carry<'c> {
    groups: [Mem<'c>; 2],
    values: [Column<'c>; 2],
    current: usize,
}

/// Contexts after a compaction: how many, their columns (by variable) and their groups.
type Compacted<'c> = (u64, Vec<(u32, Column<'c>)>, Option<Mem<'c>>);

/// Where the head's values go.
pub(crate) trait TopSink {
    /// A `par!`'s values of one chunk, `count` of them in columns laid out as `layout`.
    fn values(&mut self, bytes: &[u8], layout: &ColumnLayout, count: usize);
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

/// One run of a comprehension's device plan.
pub(crate) struct Session<'c> {
    pub(crate) device: &'c dyn Device,
    pub(crate) program: Built,
    pub(crate) generic: Built,
    pub(crate) plan: &'static DevicePlan,
    pub(crate) site: &'static Site,
    pub(crate) types: Vec<TypeDesc>,
    /// The text of every fault site: the comprehension's, then its `#[par_fn]`s'.
    pub(crate) faults: Vec<String>,
    pub(crate) backend: &'static str,
    pub(crate) live: &'c Cell<u64>,
    pub(crate) stats: RunStats,
    pub(crate) chunk: u64,
    fault: Option<Mem<'c>>,
    caps: Option<Mem<'c>>,
    root: Option<Mem<'c>>,
    dummy: Option<Mem<'c>>,
    root_start: u64,
    root_len: u64,
    root_cap: u64,
}

impl<'c> Session<'c> {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        device: &'c dyn Device,
        program: Built,
        generic: Built,
        plan: &'static DevicePlan,
        site: &'static Site,
        types: Vec<TypeDesc>,
        faults: Vec<String>,
        backend: &'static str,
        live: &'c Cell<u64>,
    ) -> Self {
        Session {
            device,
            program,
            generic,
            plan,
            site,
            types,
            faults,
            backend,
            live,
            stats: RunStats::default(),
            chunk: chunk_size(),
            fault: None,
            caps: None,
            root: None,
            dummy: None,
            root_start: 0,
            root_len: 0,
            root_cap: 0,
        }
    }

    fn alloc(&mut self, bytes: u64) -> Result<Mem<'c>, DeviceFailure> {
        let bytes = usize::try_from(bytes.max(8)).map_err(|_| {
            fatal(DeviceError::new(
                DeviceErrorKind::Alloc,
                format!("{bytes} bytes do not fit in memory"),
            ))
        })?;
        let buf = self.device.alloc(bytes).map_err(fatal)?;
        let live = self.live.get() + buf.bytes() as u64;
        self.live.set(live);
        self.stats.peak_memory = self.stats.peak_memory.max(live);
        Ok(Mem { buf, live: self.live })
    }

    fn column(&mut self, class: ClassId, cap: u64) -> Result<Column<'c>, DeviceFailure> {
        let desc = &self.types[class as usize];
        let layout = ColumnLayout::new(desc, cap as usize).ok_or_else(|| DeviceFailure {
            message: format!("a column of {cap} values does not fit in memory"),
            fatal: true,
        })?;
        let mem = self.alloc(layout.bytes as u64)?;
        Ok(Column { mem, cap, layout })
    }

    fn write(&mut self, mem: &Mem<'c>, bytes: &[u8]) -> Result<(), DeviceFailure> {
        let start = Instant::now();
        self.device.write(&mem.buf, 0, bytes).map_err(fatal)?;
        self.stats.transfer += start.elapsed();
        self.stats.bytes_in += bytes.len() as u64;
        Ok(())
    }

    fn read(&mut self, mem: &Mem<'c>, offset: usize, out: &mut [u8]) -> Result<(), DeviceFailure> {
        // A read waits for the kernels queued before it: wait for them first, so that the
        // transfer time is the copy's alone (the queue is in order; this costs no extra wait).
        self.device.finish().map_err(fatal)?;
        let start = Instant::now();
        self.device.read(&mem.buf, offset, out).map_err(fatal)?;
        self.stats.transfer += start.elapsed();
        self.stats.bytes_out += out.len() as u64;
        Ok(())
    }

    fn read_u64(&mut self, mem: &Mem<'c>, index: u64) -> Result<u64, DeviceFailure> {
        let mut bytes = [0u8; 8];
        self.read(mem, index as usize * 8, &mut bytes)?;
        Ok(u64::from_le_bytes(bytes))
    }

    fn launch(
        &mut self,
        generic: bool,
        kernel: &str,
        items: u64,
        args: &[Arg<'_>],
    ) -> Result<(), DeviceFailure> {
        if items == 0 {
            return Ok(());
        }
        self.stats.launches += 1;
        let program = if generic { &*self.generic } else { &*self.program };
        self.device.launch(program, kernel, items, GROUP, args).map_err(fatal)
    }

    /// Copies the captured values and the first generator to the device.
    pub(crate) fn upload(
        &mut self,
        captures: &[HostData<'_>],
        root: &HostData<'_>,
    ) -> Result<(), DeviceFailure> {
        let fault = self.alloc(32)?;
        self.write(&fault, &[0u8; 32])?;
        self.fault = Some(fault);
        let dummy = self.alloc(8)?;
        self.write(&dummy, &[0u8; 8])?;
        self.dummy = Some(dummy);
        // The captures: a header of four words each, then the data.
        let mut header = vec![0u64; 4 * captures.len()];
        let mut data: Vec<u8> = Vec::new();
        let base = 32 * captures.len();
        let align = |data: &mut Vec<u8>| {
            while data.len() % 8 != 0 {
                data.push(0);
            }
        };
        for (k, capture) in captures.iter().enumerate() {
            align(&mut data);
            let at = (base + data.len()) as u64;
            match capture {
                HostData::Scalar(v) => {
                    let layout = ColumnLayout::new(&v.desc(), 1).expect("one value");
                    let mut bytes = vec![0u8; layout.bytes];
                    v.write(ColumnWriter::new(&mut bytes, &layout).at(0));
                    header[4 * k] = at;
                    header[4 * k + 1] = 1;
                    data.extend_from_slice(&bytes);
                }
                HostData::Slice(s) => {
                    let len = s.len();
                    let layout = ColumnLayout::new(&s.desc(), len).ok_or_else(too_big)?;
                    let mut bytes = vec![0u8; layout.bytes];
                    s.write(&mut ColumnWriter::new(&mut bytes, &layout), 0..len);
                    header[4 * k] = at;
                    header[4 * k + 1] = len as u64;
                    data.extend_from_slice(&bytes);
                }
                HostData::Jagged(j) => {
                    let values = j.values();
                    let layout = ColumnLayout::new(&j.desc(), values).ok_or_else(too_big)?;
                    let mut bytes = vec![0u8; layout.bytes];
                    j.write(&mut ColumnWriter::new(&mut bytes, &layout));
                    header[4 * k] = at;
                    header[4 * k + 1] = j.rows() as u64;
                    header[4 * k + 3] = values as u64;
                    data.extend_from_slice(&bytes);
                    align(&mut data);
                    header[4 * k + 2] = (base + data.len()) as u64;
                    let mut offsets = Vec::with_capacity(j.rows() + 1);
                    j.offsets(&mut offsets);
                    for o in offsets {
                        data.extend_from_slice(&o.to_le_bytes());
                    }
                }
                HostData::Range(_) | HostData::Elements(_) => {
                    return Err(DeviceFailure {
                        message: "a capture observed as a generator".into(),
                        fatal: true,
                    })
                }
            }
        }
        let mut caps = Vec::with_capacity(base + data.len());
        for word in header {
            caps.extend_from_slice(&word.to_le_bytes());
        }
        caps.extend_from_slice(&data);
        let mem = self.alloc(caps.len() as u64)?;
        self.write(&mem, &caps)?;
        self.caps = Some(mem);
        // The first generator.
        match root {
            HostData::Range(r) => {
                self.root_len = r.len() as u64;
                self.root_start = r.start_bits();
                let dummy = self.alloc(8)?;
                self.root = Some(dummy);
            }
            HostData::Jagged(j) => {
                // The rows of an array of rows: the row indices 0..rows, as a range.
                self.root_len = j.rows() as u64;
                self.root_start = 0;
                let dummy = self.alloc(8)?;
                self.root = Some(dummy);
            }
            HostData::Elements(e) => {
                let len = e.len();
                let layout = ColumnLayout::new(&e.desc(), len).ok_or_else(too_big)?;
                let mut bytes = vec![0u8; layout.bytes];
                e.write(&mut ColumnWriter::new(&mut bytes, &layout), 0..len);
                let mem = self.alloc(bytes.len() as u64)?;
                self.write(&mem, &bytes)?;
                self.root = Some(mem);
                self.root_len = len as u64;
                self.root_cap = len as u64;
            }
            _ => {
                return Err(DeviceFailure {
                    message: "the first generator is not a range or a source".into(),
                    fatal: true,
                })
            }
        }
        if self.plan.root == RootKind::Elements && matches!(root, HostData::Range(_)) {
            return Err(DeviceFailure {
                message: "the plan reads elements of a range".into(),
                fatal: true,
            });
        }
        Ok(())
    }

    fn common(&self) -> [Arg<'_>; 5] {
        [
            Arg::Buffer(&self.fault.as_ref().expect("uploaded").buf),
            Arg::Buffer(&self.caps.as_ref().expect("uploaded").buf),
            Arg::U64(self.root_start),
            Arg::U64(self.root_cap),
            Arg::Buffer(&self.root.as_ref().expect("uploaded").buf),
        ]
    }

    fn dummy(&self) -> &Buffer {
        &self.dummy.as_ref().expect("uploaded").buf
    }

    /// Panics with Rust's message if a kernel recorded a fault.
    fn check_fault(&mut self) -> Result<(), DeviceFailure> {
        let mut words = [0u8; 32];
        let fault = self.fault.take().expect("uploaded");
        let read = self.read(&fault, 0, &mut words);
        self.fault = Some(fault);
        read?;
        if let Some(f) = Fault::from_words(&words) {
            fault::raise(f, &self.faults, self.site, self.backend);
        }
        Ok(())
    }

    /// Runs the comprehension, delivering to `sink`.
    pub(crate) fn run(&mut self, sink: &mut dyn TopSink) -> Result<(), DeviceFailure> {
        let start = Instant::now();
        let comp = &self.plan.comp;
        let result = self.level(comp, 0, &Parents::Root, &mut Sink::Top(sink));
        self.device.finish().map_err(fatal)?;
        self.check_fault()?;
        self.stats.run = start.elapsed();
        result
    }

    /// The exclusive scan of `n` sizes: offsets (n + 1 entries), and their total.
    fn scan(&mut self, sizes: &Mem<'c>, n: u64) -> Result<(Mem<'c>, u64), DeviceFailure> {
        let sums = self.alloc((n.div_ceil(TILE).max(1) + 1) * 8)?;
        let offsets = self.alloc((n + 1) * 8)?;
        let fault = &self.fault.as_ref().expect("uploaded").buf;
        self.stats.launches +=
            launch_scan(self.device, &*self.generic, fault, &sizes.buf, n, &sums.buf, &offsets.buf)
                .map_err(fatal)?;
        self.check_fault()?;
        let total = self.read_u64(&offsets, n)?;
        Ok((offsets, total))
    }

    /// The parent of every position of a chunk, by the load-balanced search.
    fn search(
        &mut self,
        offsets: &Mem<'c>,
        parents: u64,
        j0: u64,
        count: u64,
    ) -> Result<Mem<'c>, DeviceFailure> {
        let bounds = self.alloc(16)?;
        let seg = self.alloc(count * 8)?;
        self.stats.launches += launch_search(
            self.device,
            &*self.generic,
            &offsets.buf,
            parents,
            j0,
            count,
            &bounds.buf,
            &seg.buf,
        )
        .map_err(fatal)?;
        Ok(seg)
    }

    /// Moves the positions `flags` kept to the front of new columns; returns them and their count.
    fn compact(
        &mut self,
        flags: &Mem<'c>,
        count: u64,
        columns: Vec<(u32, Column<'c>)>,
        group: Option<Mem<'c>>,
    ) -> Result<Compacted<'c>, DeviceFailure> {
        let (positions, kept) = self.scan(flags, count)?;
        let mut out = Vec::with_capacity(columns.len());
        for (var, column) in columns {
            out.push((var, self.compact_column(flags, &positions, count, column, kept)?));
        }
        let group = match group {
            Some(g) => Some(self.compact_group(flags, &positions, count, &g, kept)?),
            None => None,
        };
        Ok((kept, out, group))
    }

    /// Compacts one value column (of class `class`) by `flags`.
    fn compact_values(
        &mut self,
        flags: &Mem<'c>,
        count: u64,
        values: Column<'c>,
    ) -> Result<(u64, Column<'c>), DeviceFailure> {
        let (positions, kept) = self.scan(flags, count)?;
        let tight = self.compact_column(flags, &positions, count, values, kept)?;
        Ok((kept, tight))
    }

    /// Moves the values of `values` that `flags` kept to the places `positions` (their scan)
    /// gives, in a new column of `kept` values.
    fn compact_column(
        &mut self,
        flags: &Mem<'c>,
        positions: &Mem<'c>,
        count: u64,
        values: Column<'c>,
        kept: u64,
    ) -> Result<Column<'c>, DeviceFailure> {
        let layout = ColumnLayout::with_leaves(&values.layout, kept as usize).ok_or_else(|| {
            DeviceFailure {
                message: format!("a column of {kept} values does not fit in memory"),
                fatal: true,
            }
        })?;
        let mem = self.alloc(layout.bytes as u64)?;
        let tight = Column { mem, cap: kept, layout };
        for (k, leaf) in values.layout.leaves.iter().enumerate() {
            let kernel =
                ["pc_compact_1", "pc_compact_2", "", "pc_compact_4", "", "", "", "pc_compact_8"]
                    [leaf.size() - 1];
            self.launch(
                true,
                kernel,
                count,
                &[
                    Arg::U64(count),
                    Arg::Buffer(&flags.buf),
                    Arg::Buffer(&positions.buf),
                    Arg::Buffer(&values.mem.buf),
                    Arg::U64(values.layout.offsets[k] as u64),
                    Arg::Buffer(&tight.mem.buf),
                    Arg::U64(tight.layout.offsets[k] as u64),
                ],
            )?;
        }
        Ok(tight)
    }

    /// Moves the groups of `group` that `flags` kept together, like [`Self::compact_column`].
    fn compact_group(
        &mut self,
        flags: &Mem<'c>,
        positions: &Mem<'c>,
        count: u64,
        group: &Mem<'c>,
        kept: u64,
    ) -> Result<Mem<'c>, DeviceFailure> {
        let tight = self.alloc(kept * 8)?;
        self.launch(
            true,
            "pc_compact_8",
            count,
            &[
                Arg::U64(count),
                Arg::Buffer(&flags.buf),
                Arg::Buffer(&positions.buf),
                Arg::Buffer(&group.buf),
                Arg::U64(0),
                Arg::Buffer(&tight.buf),
                Arg::U64(0),
            ],
        )?;
        Ok(tight)
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
        // Sizes and the layout of the level's positions.
        let (total, fanout, offsets, parent_count, whole) = match parents {
            Parents::Root => (self.root_len, 0, None, 0, Some(self.root_len)),
            Parents::Rows { count, cap, columns, whole, .. } => {
                if *count == 0 {
                    return Ok(());
                }
                let size_kernel = level.size_kernel.expect("a level with parents is sized");
                let asked = if level.regular { 1 } else { *count };
                let sizes = self.alloc(asked * 8)?;
                self.stats.launches += 1;
                {
                    let mut args: Vec<Arg<'_>> = self.common().to_vec();
                    args.push(Arg::U64(asked));
                    args.push(Arg::U64(*cap));
                    for &v in level.inputs {
                        args.push(Arg::Buffer(&input(columns, v).mem.buf));
                    }
                    args.push(Arg::Buffer(&sizes.buf));
                    self.device
                        .launch(&*self.program, size_kernel, asked, GROUP, &args)
                        .map_err(fatal)?;
                }
                if level.regular {
                    self.check_fault()?;
                    let fanout = self.read_u64(&sizes, 0)?;
                    let total =
                        count.checked_mul(fanout).unwrap_or_else(|| self.site.size_overflow());
                    let whole = whole.map(|w| {
                        w.checked_mul(fanout).unwrap_or_else(|| self.site.size_overflow())
                    });
                    (total, fanout, None, *count, whole)
                } else {
                    let (offsets, total) = self.scan(&sizes, *count)?;
                    (total, 0, Some(offsets), *count, None)
                }
            }
        };
        let (in_cap, in_columns, in_group) = match parents {
            Parents::Root => (0, &[][..], None),
            Parents::Rows { cap, columns, group, .. } => (*cap, *columns, *group),
        };
        let nested_comp =
            matches!(sink, Sink::Segmented { .. } | Sink::Rows(_)) || in_group.is_some();
        let mut j0 = 0;
        while j0 < total {
            if let Sink::Top(top) = sink {
                if top.decided() {
                    return Ok(());
                }
            }
            let count = self.chunk.min(total - j0);
            self.stats.positions += count;
            let seg = match &offsets {
                Some(offsets) => Some(self.search(offsets, parent_count, j0, count)?),
                None => None,
            };
            let head_here = last && comp.nested.is_empty();
            let flags = self.alloc(count * 8)?;
            let out_group = if nested_comp { Some(self.alloc(count * 8)?) } else { None };
            // What the kernel writes: the head's values or partials, or the children's columns.
            let head_out: Option<Column<'c>> =
                if head_here { Some(self.head_column(comp, count)?) } else { None };
            let mut outputs = Vec::new();
            if !head_here {
                for &v in level.outputs {
                    let class = self.plan.vars[v as usize];
                    outputs.push((v, self.column(class, count)?));
                }
            }
            self.stats.launches += 1;
            {
                let dummy = self.dummy();
                let mut args: Vec<Arg<'_>> = self.common().to_vec();
                args.push(Arg::U64(j0));
                args.push(Arg::U64(count));
                args.push(Arg::U64(fanout));
                args.push(Arg::Buffer(seg.as_ref().map_or(dummy, |s| &s.buf)));
                args.push(Arg::Buffer(offsets.as_ref().map_or(dummy, |o| &o.buf)));
                args.push(Arg::U64(in_cap));
                for &v in level.inputs {
                    args.push(Arg::Buffer(&input(in_columns, v).mem.buf));
                }
                args.push(Arg::Buffer(in_group.map_or(dummy, |g| &g.buf)));
                match &head_out {
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
                args.push(Arg::Buffer(&flags.buf));
                args.push(Arg::Buffer(out_group.as_ref().map_or(dummy, |g| &g.buf)));
                let items = match (&head_out, comp.terminal, nested_comp) {
                    // A reduction's level kernel runs whole work-groups.
                    (Some(_), Terminal::Reduce { .. }, false) => {
                        count.div_ceil(GROUP as u64) * GROUP as u64
                    }
                    _ => count,
                };
                self.device
                    .launch(&*self.program, level.kernel, items, GROUP, &args)
                    .map_err(fatal)?;
            }
            match head_out {
                Some(out) => {
                    self.deliver(comp, out, count, &flags, out_group, level.filters, sink)?
                }
                None => {
                    let (rows, columns, group) = if level.filters {
                        self.compact(&flags, count, outputs, out_group)?
                    } else {
                        (count, outputs, out_group)
                    };
                    drop(flags);
                    drop(seg);
                    let cap = columns.first().map_or(rows, |(_, c)| c.cap);
                    let children = Parents::Rows {
                        count: rows,
                        cap,
                        columns: &columns,
                        group: group.as_ref(),
                        whole: if level.filters { None } else { whole },
                    };
                    if last {
                        self.nested_and_head(comp, &children, sink)?;
                    } else {
                        self.level(comp, k + 1, &children, sink)?;
                    }
                }
            }
            self.check_fault()?;
            j0 += count;
        }
        Ok(())
    }

    /// The column the head's values (or partial results) of `count` positions go to.
    fn head_column(&mut self, comp: &Comp, count: u64) -> Result<Column<'c>, DeviceFailure> {
        match comp.terminal {
            Terminal::Collect => self.column(comp.head_class, count),
            Terminal::Rows => Err(malformed("rows have no head column")),
            Terminal::Reduce { reduction, .. } => {
                let acc = self.plan.reductions[reduction as usize].acc;
                // A top-level reduction writes one partial per work-group; a nested one a value
                // per position.
                self.column(acc, count)
            }
        }
    }

    /// Delivers the head's values of one chunk to `sink`.
    #[allow(clippy::too_many_arguments)]
    fn deliver(
        &mut self,
        comp: &Comp,
        out: Column<'c>,
        count: u64,
        flags: &Mem<'c>,
        group: Option<Mem<'c>>,
        filters: bool,
        sink: &mut Sink<'_, 'c>,
    ) -> Result<(), DeviceFailure> {
        match (sink, comp.terminal) {
            (Sink::Top(top), Terminal::Collect) => {
                let (kept, values) =
                    if filters { self.compact_values(flags, count, out)? } else { (count, out) };
                let mut bytes = vec![0u8; values.layout.bytes];
                self.read(&values.mem, 0, &mut bytes)?;
                top.values(&bytes, &values.layout, kept as usize);
                Ok(())
            }
            (Sink::Top(top), Terminal::Reduce { reduction, kind }) => {
                let groups = count.div_ceil(GROUP as u64);
                let value = self.reduce_partials(reduction, out, groups)?;
                let mut bytes = vec![0u8; value.layout.bytes];
                self.read(&value.mem, 0, &mut bytes)?;
                top.partial(&bytes, &value.layout, kind);
                Ok(())
            }
            (Sink::Segmented { result, carry, reduction }, Terminal::Reduce { .. }) => {
                let group = group.expect("a nested comprehension's positions have groups");
                self.segmented(*reduction, &out, count, &group, result, carry)
            }
            (Sink::Rows(top), Terminal::Collect) => {
                let group = group.expect("a nested comprehension's positions have groups");
                let (kept, values, group) = if filters {
                    let (positions, kept) = self.scan(flags, count)?;
                    let values = self.compact_column(flags, &positions, count, out, kept)?;
                    let group = self.compact_group(flags, &positions, count, &group, kept)?;
                    (kept, values, group)
                } else {
                    (count, out, group)
                };
                let mut bytes = vec![0u8; values.layout.bytes];
                self.read(&values.mem, 0, &mut bytes)?;
                let mut group_bytes = vec![0u8; kept as usize * 8];
                self.read(&group, 0, &mut group_bytes)?;
                let groups: Vec<u64> = group_bytes
                    .chunks_exact(8)
                    .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
                    .collect();
                top.row_values(&bytes, &values.layout, &groups);
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

    /// Reduces `n` partial results of reduction `r` to one, on the device.
    fn reduce_partials(
        &mut self,
        r: u32,
        mut partials: Column<'c>,
        mut n: u64,
    ) -> Result<Column<'c>, DeviceFailure> {
        let info = self.plan.reductions[r as usize];
        let kernel = format!("{}_partials", info.name);
        loop {
            let groups = n.div_ceil(TILE).max(1);
            let next = self.column(info.acc, groups)?;
            {
                let mut args: Vec<Arg<'_>> = vec![
                    Arg::Buffer(&self.fault.as_ref().expect("uploaded").buf),
                    Arg::Buffer(&self.caps.as_ref().expect("uploaded").buf),
                ];
                args.push(Arg::U64(n));
                args.push(Arg::Buffer(&partials.mem.buf));
                args.push(Arg::U64(partials.cap));
                args.push(Arg::U64(next.cap));
                args.push(Arg::Buffer(&next.mem.buf));
                self.stats.launches += 1;
                self.device
                    .launch(&*self.program, &kernel, groups * GROUP as u64, GROUP, &args)
                    .map_err(fatal)?;
            }
            partials = next;
            n = groups;
            if n <= 1 {
                return Ok(partials);
            }
        }
    }

    fn fill_identity(&mut self, r: u32, column: &Column<'c>, n: u64) -> Result<(), DeviceFailure> {
        let kernel = format!("{}_fill", self.plan.reductions[r as usize].name);
        let fault = &self.fault.as_ref().expect("uploaded").buf;
        let caps = &self.caps.as_ref().expect("uploaded").buf;
        let args = [
            Arg::Buffer(fault),
            Arg::Buffer(caps),
            Arg::U64(n),
            Arg::U64(column.cap),
            Arg::Buffer(&column.mem.buf),
        ];
        self.stats.launches += 1;
        self.device.launch(&*self.program, &kernel, n, GROUP, &args).map_err(fatal)
    }

    fn carry(&mut self, r: u32) -> Result<Carry<'c>, DeviceFailure> {
        let acc = self.plan.reductions[r as usize].acc;
        let groups = [self.alloc(8)?, self.alloc(8)?];
        self.write(&groups[0], &u64::MAX.to_le_bytes())?;
        let values = [self.column(acc, 1)?, self.column(acc, 1)?];
        self.fill_identity(r, &values[0], 1)?;
        Ok(Carry { groups, values, current: 0 })
    }

    /// Reduces the values of one chunk by group into `result`, continuing `carry`.
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
        let tiles = count.div_ceil(TILE);
        let agg_flags = self.alloc(tiles * 8)?;
        let agg_vals = self.column(info.acc, tiles)?;
        let (now, next) = (carry.current, 1 - carry.current);
        let fault = &self.fault.as_ref().expect("uploaded").buf;
        let caps = &self.caps.as_ref().expect("uploaded").buf;
        let program = &*self.program;
        let launch = |kernel: String, items: u64, args: &[Arg<'_>]| {
            self.device.launch(program, &kernel, items, GROUP, args).map_err(fatal)
        };
        launch(
            format!("{}_segtiles", info.name),
            tiles * GROUP as u64,
            &[
                Arg::Buffer(fault),
                Arg::Buffer(caps),
                Arg::U64(count),
                Arg::Buffer(&values.mem.buf),
                Arg::U64(values.cap),
                Arg::Buffer(&group.buf),
                Arg::Buffer(&carry.groups[now].buf),
                Arg::Buffer(&agg_flags.buf),
                Arg::U64(agg_vals.cap),
                Arg::Buffer(&agg_vals.mem.buf),
            ],
        )?;
        launch(
            format!("{}_segcarries", info.name),
            GROUP as u64,
            &[
                Arg::Buffer(fault),
                Arg::Buffer(caps),
                Arg::U64(tiles),
                Arg::Buffer(&agg_flags.buf),
                Arg::U64(agg_vals.cap),
                Arg::Buffer(&agg_vals.mem.buf),
                Arg::Buffer(&carry.values[now].mem.buf),
            ],
        )?;
        launch(
            format!("{}_segapply", info.name),
            tiles * GROUP as u64,
            &[
                Arg::Buffer(fault),
                Arg::Buffer(caps),
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
            ],
        )?;
        self.stats.launches += 3;
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
        let Parents::Rows { count, cap, columns, group, .. } = rows else {
            unreachable!("nested comprehensions run on stored contexts")
        };
        if *count == 0 {
            return Ok(());
        }
        // Every nested comprehension runs on the same contexts, each its own group: one iota
        // tags them, for all of them.
        let iota = self.alloc(count * 8)?;
        self.launch(true, "pc_iota", *count, &[Arg::Buffer(&iota.buf), Arg::U64(*count)])?;
        let inner =
            Parents::Rows { count: *count, cap: *cap, columns, group: Some(&iota), whole: None };
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
                return Err(DeviceFailure {
                    message: "a nested `par!` runs on the CPU".into(),
                    fatal: false,
                });
            };
            let acc = self.plan.reductions[reduction as usize].acc;
            let result = self.column(acc, *cap)?;
            self.fill_identity(reduction, &result, *count)?;
            let mut carry = self.carry(reduction)?;
            let mut inner_sink = Sink::Segmented { result: &result, carry: &mut carry, reduction };
            self.level(nested.comp, 0, &inner, &mut inner_sink)?;
            results.push((nested.result, result));
        }
        let head = comp.head_kernel.expect("a comprehension with nested ones has a head kernel");
        let out = self.head_column(comp, *count)?;
        let flags = self.alloc(count * 8)?;
        let nested_comp = group.is_some();
        let out_group = if nested_comp { Some(self.alloc(count * 8)?) } else { None };
        self.stats.launches += 1;
        {
            let dummy = self.dummy();
            let mut args: Vec<Arg<'_>> = self.common().to_vec();
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
            args.push(Arg::Buffer(&flags.buf));
            args.push(Arg::Buffer(out_group.as_ref().map_or(dummy, |g| &g.buf)));
            let items = match (comp.terminal, nested_comp) {
                (Terminal::Reduce { .. }, false) => count.div_ceil(GROUP as u64) * GROUP as u64,
                _ => *count,
            };
            self.device.launch(&*self.program, head, items, GROUP, &args).map_err(fatal)?;
        }
        self.deliver(comp, out, *count, &flags, out_group, false, sink)
    }
}

/// Queues the exclusive scan of the `n` sizes in `sizes` into `offsets` (n + 1 entries, the
/// last the total; `sums` holds `n / TILE + 2` entries): three kernels of the generic program,
/// faulting when the total overflows. Returns the number of launches.
pub(crate) fn launch_scan(
    device: &dyn Device,
    generic: &dyn Program,
    fault: &Buffer,
    sizes: &Buffer,
    n: u64,
    sums: &Buffer,
    offsets: &Buffer,
) -> Result<u64, DeviceError> {
    let tiles = n.div_ceil(TILE).max(1);
    let items = tiles * GROUP as u64;
    let (fault, sizes, sums) = (Arg::Buffer(fault), Arg::Buffer(sizes), Arg::Buffer(sums));
    device.launch(generic, "pc_scan_tiles", items, GROUP, &[fault, sizes, Arg::U64(n), sums])?;
    device.launch(
        generic,
        "pc_scan_carries",
        GROUP as u64,
        GROUP,
        &[fault, sums, Arg::U64(tiles)],
    )?;
    let args = [fault, sizes, Arg::U64(n), sums, Arg::U64(tiles), Arg::Buffer(offsets)];
    device.launch(generic, "pc_scan_apply", items, GROUP, &args)?;
    Ok(3)
}

/// The load-balanced search: `seg[a]` = the segment (of `segments`, by `offsets`) holding
/// position `j0 + a`, for `a < count`; `bounds` holds two `u64`s. Reads the bounds back, to
/// size the launch. Returns the number of launches.
#[allow(clippy::too_many_arguments)]
pub(crate) fn launch_search(
    device: &dyn Device,
    generic: &dyn Program,
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
    device.launch(generic, "pc_lbs_bounds", 1, GROUP, &args)?;
    let mut b = [0u8; 16];
    device.read(bounds, 0, &mut b)?;
    let first = u64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
    let last = u64::from_le_bytes(b[8..].try_into().expect("8 bytes"));
    let items = (count + (last - first)).div_ceil(LBS_ITEMS);
    let args = [offsets, bounds_arg, Arg::U64(j0), Arg::U64(count), Arg::Buffer(seg)];
    device.launch(generic, "pc_lbs", items, GROUP, &args)?;
    Ok(2)
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
    DeviceFailure { message: format!("parcomp internal error: {what}"), fatal: true }
}

fn too_big() -> DeviceFailure {
    DeviceFailure { message: "a captured value does not fit in memory".into(), fatal: true }
}
