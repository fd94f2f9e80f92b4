//! The five baselines on OpenCL, through opencl3: one context and one in-order queue on the
//! device parcomp uses, programs built once, buffers created per run, blocking copies from and
//! into `Vec`s.

use super::{HandWritten, Resident, Result, Timed, Timeline};
use crate::pythagorean::Triple;
use crate::workloads::Smvm;
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::device::{Device, CL_DEVICE_TYPE_ALL};
use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::memory::{Buffer, ClMem, CL_MEM_READ_ONLY, CL_MEM_READ_WRITE, CL_MEM_WRITE_ONLY};
use opencl3::platform::get_platforms;
use opencl3::program::Program;
use opencl3::types::{cl_int, cl_mem_flags, cl_uint, cl_ulong, CL_BLOCKING};
use std::ptr;

/// Work-items per work-group: 256, or the device's limit if lower.
const GROUP: usize = 256;
/// Elements each work-item of a compaction handles per tile (a tile is `GROUP * ITEMS`).
const ITEMS: usize = 16;
/// Work-groups of the reduction: enough to fill a GPU, few enough for the host to add.
const SUM_GROUPS: usize = 1024;

// The CSR row offsets are uploaded as the `Jagged`'s own `usize`s, read as `ulong` by the kernel.
const _: () = assert!(std::mem::size_of::<usize>() == std::mem::size_of::<cl_ulong>());

/// A work-group's inclusive scan of one `uint` per work-item, in local memory
/// (Hillis–Steele); `*total` gets the group's sum. Every work-item of the group calls it.
const GROUP_SCAN: &str = r#"
uint group_scan(uint v, __local uint *s, uint *total) {
    uint lid = get_local_id(0);
    s[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = 1; d < GROUP; d <<= 1) {
        uint t = lid >= d ? s[lid - d] : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        s[lid] += t;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    uint inclusive = s[lid];
    *total = s[GROUP - 1];
    barrier(CLK_LOCAL_MEM_FENCE);
    return inclusive;
}
"#;

const SUM: &str = r#"
/* Each work-group adds a grid-stride share of `in` (neighbouring work-items read neighbouring
   elements) and reduces its work-items' sums in local memory to one partial sum. */
__kernel void sum_partials(__global const ulong *in, ulong n, __global ulong *partials) {
    __local ulong s[GROUP];
    uint lid = get_local_id(0);
    ulong acc = 0;
    for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) acc += in[i];
    s[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = GROUP / 2; d > 0; d >>= 1) {
        if (lid < d) s[lid] += s[lid + d];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) partials[get_group_id(0)] = s[0];
}
"#;

/// Order-preserving compaction over tiles of `TILE` elements, one work-group per tile:
/// `count_kept` counts each tile's kept elements (reading it striped: neighbouring work-items
/// read neighbouring elements), `scan_counts` (one work-group) turns the counts into each
/// tile's first output position and writes the total after them, and `scatter_kept` goes over
/// each tile again, each work-item counting its `ITEMS` consecutive elements, one work-group
/// scan of those counts giving each work-item its first output position, then writing its kept
/// elements in order (one scan per tile rather than one per `GROUP` elements: barriers are the
/// cost of a scan). `ELEM`, `OUT`, `KEEP(x)` and `EMIT(out, at, x, i, width)` come from the
/// program that includes it.
const COMPACTION: &str = r#"
#define TILE ((ulong)GROUP * ITEMS)

__kernel void count_kept(__global const ELEM *in, ulong n, __global uint *counts) {
    __local uint s[GROUP];
    uint lid = get_local_id(0);
    ulong base = (ulong)get_group_id(0) * TILE;
    uint kept = 0;
    for (uint k = 0; k < ITEMS; k++) {
        ulong i = base + (ulong)k * GROUP + lid;
        if (i < n && KEEP(in[i])) kept++;
    }
    s[lid] = kept;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = GROUP / 2; d > 0; d >>= 1) {
        if (lid < d) s[lid] += s[lid + d];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) counts[get_group_id(0)] = s[0];
}

__kernel void scan_counts(__global uint *counts, uint tiles) {
    __local uint s[GROUP];
    uint lid = get_local_id(0);
    uint carry = 0;
    for (uint start = 0; start < tiles; start += GROUP) {
        uint i = start + lid;
        uint v = i < tiles ? counts[i] : 0;
        uint total;
        uint inclusive = group_scan(v, s, &total);
        if (i < tiles) counts[i] = carry + inclusive - v;
        carry += total;
    }
    if (lid == 0) counts[tiles] = carry;
}

__kernel void scatter_kept(__global const ELEM *in, ulong n, uint width,
                           __global const uint *offsets, __global OUT *out) {
    __local uint s[GROUP];
    ulong first = (ulong)get_group_id(0) * TILE + (ulong)get_local_id(0) * ITEMS;
    ulong end = min(first + ITEMS, n);
    uint kept = 0;
    for (ulong i = first; i < end; i++) kept += KEEP(in[i]) ? 1 : 0;
    uint total;
    uint at = offsets[get_group_id(0)] + group_scan(kept, s, &total) - kept;
    for (ulong i = first; i < end; i++) {
        ELEM x = in[i];
        if (KEEP(x)) {
            EMIT(out, at, x, i, width);
            at++;
        }
    }
}
"#;

const FILTER: &str = r#"
#define ELEM ulong
#define OUT ulong
#define KEEP(x) ((x) % 7 == 1)
#define EMIT(out, at, x, i, width) ((out)[at] = (x) * 3)
"#;

const EXPAND: &str = r#"
/* One work-item per output element j: a binary search finds its row, the last r with
   offsets[r] <= j (an empty row shares its offset with the next, so the last is the row that
   holds j), then writes skew_element(r, j - offsets[r]). */
__kernel void expand_rows(__global const ulong *offsets, uint rows, ulong total,
                          __global uint *out) {
    ulong j = get_global_id(0);
    if (j >= total) return;
    uint lo = 0, hi = rows; /* offsets[lo] <= j < offsets[hi] */
    while (hi - lo > 1) {
        uint mid = lo + (hi - lo) / 2;
        if (offsets[mid] <= j) lo = mid; else hi = mid;
    }
    uint i = (uint)(j - offsets[lo]);
    out[j] = (lo ^ i) * 0x9E3779B9u;
}
"#;

const SMVM: &str = r#"
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
/* Rust never fuses v * x + sum into one rounding; neither does this kernel. */
#pragma OPENCL FP_CONTRACT OFF
/* CSR, one row per work-item, adding its products in order. */
__kernel void csr_spmv(ulong rows, __global const ulong *row_start, __global const uint *cols,
                       __global const double *vals, __global const double *x,
                       __global double *y) {
    ulong r = get_global_id(0);
    if (r >= rows) return;
    double sum = 0.0;
    for (ulong k = row_start[r]; k < row_start[r + 1]; k++) sum += vals[k] * x[cols[k]];
    y[r] = sum;
}
"#;

const TRIPLES: &str = r#"
#define ELEM int
#define OUT int
#define KEEP(z) ((z) != 0)
#define EMIT(out, at, z, i, width) do { \
        (out)[3 * (ulong)(at)] = 1 + (int)((i) / (width)); \
        (out)[3 * (ulong)(at) + 1] = (int)((i) % (width)); \
        (out)[3 * (ulong)(at) + 2] = (z); \
    } while (0)

/* One work-item per cell (x, y) of 1..n × 0..n, row-major: the loop over z of the
   comprehension, with its filter, for y >= x; zs gets the z found, or 0 (no triple has z = 0,
   and x and y determine z, so a cell holds at most one). */
__kernel void find_z(int n, __global int *zs) {
    ulong cell = get_global_id(0);
    if (cell >= (ulong)(n - 1) * n) return;
    int x = 1 + (int)(cell / n), y = (int)(cell % n);
    int found = 0;
    if (y >= x) {
        for (int z = y; z < x + y; z++) {
            if (z < n && x * x + y * y == z * z) found = z;
        }
    }
    zs[cell] = found;
}
"#;

/// The three kernels of one compaction.
struct Compaction {
    count: Kernel,
    scan: Kernel,
    scatter: Kernel,
}

/// The OpenCL side: context, queue, the built kernels.
pub struct OpenCl {
    context: Context,
    queue: CommandQueue,
    group: usize,
    sum_partials: Kernel,
    filter: Compaction,
    expand_rows: Kernel,
    csr_spmv: Kernel,
    find_z: Kernel,
    triples: Compaction,
}

impl OpenCl {
    /// Opens the device named `name` (the one parcomp runs on) and builds every program.
    pub fn open(name: &str) -> Result<OpenCl> {
        let mut found = None;
        for platform in get_platforms()? {
            for id in platform.get_devices(CL_DEVICE_TYPE_ALL).unwrap_or_default() {
                let device = Device::new(id);
                if found.is_none() && device.name().unwrap_or_default().trim() == name {
                    found = Some(device);
                }
            }
        }
        let device = found.ok_or_else(|| format!("no OpenCL device named `{name}`"))?;
        let context = Context::from_device(&device)?;
        // `clCreateCommandQueue`, deprecated in OpenCL 2.0 but the call every version has.
        #[allow(deprecated)]
        let queue = CommandQueue::create_default(&context, 0)?;
        // The largest power of two up to GROUP the device allows in a work-group.
        let limit = device.max_work_group_size()?.clamp(1, GROUP);
        let group = 1 << limit.ilog2();
        let options = format!("-D GROUP={group} -D ITEMS={ITEMS}");
        let build = |parts: &[&str]| -> Result<Program> {
            Ok(Program::create_and_build_from_source(&context, &parts.concat(), &options)?)
        };
        let sum = build(&[SUM])?;
        let filter = build(&[GROUP_SCAN, FILTER, COMPACTION])?;
        let expand = build(&[EXPAND])?;
        let smvm = build(&[SMVM])?;
        let triples = build(&[GROUP_SCAN, TRIPLES, COMPACTION])?;
        let compaction = |p: &Program| -> Result<Compaction> {
            Ok(Compaction {
                count: Kernel::create(p, "count_kept")?,
                scan: Kernel::create(p, "scan_counts")?,
                scatter: Kernel::create(p, "scatter_kept")?,
            })
        };
        Ok(OpenCl {
            sum_partials: Kernel::create(&sum, "sum_partials")?,
            filter: compaction(&filter)?,
            expand_rows: Kernel::create(&expand, "expand_rows")?,
            csr_spmv: Kernel::create(&smvm, "csr_spmv")?,
            find_z: Kernel::create(&triples, "find_z")?,
            triples: compaction(&triples)?,
            context,
            queue,
            group,
        })
    }

    /// A device buffer of `len` elements (at least one: OpenCL has no empty buffers).
    fn buffer<T>(&self, t: &mut Timeline, len: usize, flags: cl_mem_flags) -> Result<Buffer<T>> {
        t.counts.allocations += 1;
        // SAFETY: no host pointer is passed (OpenCL allocates the memory itself), and the flags
        // ask for no use of one.
        Ok(unsafe { Buffer::<T>::create(&self.context, flags, len.max(1), ptr::null_mut()) }?)
    }

    fn upload<T>(&self, t: &mut Timeline, buffer: &mut Buffer<T>, data: &[T]) -> Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        // SAFETY: the copy is blocking, so `data` is read before the call returns; `buffer`
        // was created with room for at least `data.len()` elements of `T`.
        unsafe { self.queue.enqueue_write_buffer(buffer, CL_BLOCKING, 0, data, &[]) }?;
        t.counts.host_waits += 1;
        t.counts.bytes_in += std::mem::size_of_val(data) as u64;
        Ok(())
    }

    /// Reads `out.len()` elements from element `at` of `buffer`.
    fn download<T>(
        &self,
        t: &mut Timeline,
        buffer: &Buffer<T>,
        at: usize,
        out: &mut [T],
    ) -> Result<()> {
        if out.is_empty() {
            return Ok(());
        }
        // SAFETY: the copy is blocking, so `out` is written before the call returns; callers
        // read inside the buffer (`at + out.len()` elements at most were created). The
        // offset is in bytes.
        unsafe {
            self.queue.enqueue_read_buffer(
                buffer,
                CL_BLOCKING,
                at * std::mem::size_of::<T>(),
                out,
                &[],
            )
        }?;
        t.counts.host_waits += 1;
        t.counts.bytes_out += std::mem::size_of_val(out) as u64;
        Ok(())
    }

    /// Enqueues `kernel`, its arguments set by `args`, over `groups` work-groups.
    fn launch(
        &self,
        t: &mut Timeline,
        kernel: &Kernel,
        groups: usize,
        args: impl FnOnce(&mut ExecuteKernel),
    ) -> Result<()> {
        let mut launch = ExecuteKernel::new(kernel);
        args(&mut launch);
        // SAFETY: each caller sets every argument of its kernel, in order, with the C type the
        // kernel declares (a `cl_mem` for a global pointer, `cl_ulong`/`cl_uint`/`cl_int` for
        // `ulong`/`uint`/`int`), and sizes the buffers for the work-items launched.
        unsafe {
            launch
                .set_global_work_size(groups.max(1) * self.group)
                .set_local_work_size(self.group)
                .enqueue_nd_range(&self.queue)
        }?;
        t.counts.launches += 1;
        Ok(())
    }

    /// Waits for the kernels, to mark the end of their time (not counted as a wait: the read
    /// that follows would wait for them anyway).
    fn kernels_done(&self, t: &mut Timeline) -> Result<()> {
        self.queue.finish()?;
        t.kernels_done();
        Ok(())
    }

    /// The compaction of `n` elements already in `input`: the number kept, and the output
    /// buffer they were written to (`per_kept` elements of `O` each).
    fn compact<E, O>(
        &self,
        t: &mut Timeline,
        kernels: &Compaction,
        input: &Buffer<E>,
        n: usize,
        width: u32,
        per_kept: usize,
    ) -> Result<(usize, Buffer<O>)> {
        let tile = self.group * ITEMS;
        let tiles = n.div_ceil(tile);
        let tiles_arg = cl_uint::try_from(tiles)?;
        if n >= u32::MAX as usize {
            return Err("the compaction counts in 32 bits".into());
        }
        let counts = self.buffer::<cl_uint>(t, tiles + 1, CL_MEM_READ_WRITE)?;
        let n_arg = n as cl_ulong;
        self.launch(t, &kernels.count, tiles, |k| {
            // SAFETY: `count_kept`'s parameters, in order, with their declared types.
            unsafe { k.set_arg(&input.get()).set_arg(&n_arg).set_arg(&counts.get()) };
        })?;
        self.launch(t, &kernels.scan, 1, |k| {
            // SAFETY: `scan_counts`'s parameters, in order, with their declared types.
            unsafe { k.set_arg(&counts.get()).set_arg(&tiles_arg) };
        })?;
        let mut kept = [0 as cl_uint];
        self.download(t, &counts, tiles, &mut kept)?;
        let kept = kept[0] as usize;
        let out = self.buffer::<O>(t, kept * per_kept, CL_MEM_WRITE_ONLY)?;
        self.launch(t, &kernels.scatter, tiles, |k| {
            // SAFETY: `scatter_kept`'s parameters, in order, with their declared types.
            unsafe {
                k.set_arg(&input.get())
                    .set_arg(&n_arg)
                    .set_arg(&width)
                    .set_arg(&counts.get())
                    .set_arg(&out.get())
            };
        })?;
        Ok((kept, out))
    }

    /// A buffer holding `values`, copied before any run (untimed, uncounted).
    fn kept_input(&self, values: &[u64]) -> Result<Buffer<cl_ulong>> {
        let mut untimed = Timeline::default();
        let mut input = self.buffer::<cl_ulong>(&mut untimed, values.len(), CL_MEM_READ_ONLY)?;
        self.upload(&mut untimed, &mut input, values)?;
        Ok(input)
    }

    /// The buffer of the sum's partial sums, one per work-group.
    fn sum_partials_buffer(&self, t: &mut Timeline, n: usize) -> Result<Buffer<cl_ulong>> {
        let groups = n.div_ceil(self.group).clamp(1, SUM_GROUPS);
        self.buffer::<cl_ulong>(t, groups, CL_MEM_WRITE_ONLY)
    }

    /// The sum's kernel over the `n` elements of `input`, the read of its partial sums and
    /// their sum on the host.
    fn sum_kernels(
        &self,
        t: &mut Timeline,
        input: &Buffer<cl_ulong>,
        n: usize,
        partials: &Buffer<cl_ulong>,
    ) -> Result<u64> {
        let groups = n.div_ceil(self.group).clamp(1, SUM_GROUPS);
        let n_arg = n as cl_ulong;
        self.launch(t, &self.sum_partials, groups, |k| {
            // SAFETY: `sum_partials`'s parameters, in order, with their declared types.
            unsafe { k.set_arg(&input.get()).set_arg(&n_arg).set_arg(&partials.get()) };
        })?;
        self.kernels_done(t)?;
        let mut sums = vec![0; groups];
        self.download(t, partials, 0, &mut sums)?;
        t.device_done();
        Ok(sums.iter().fold(0u64, |a, &b| a.wrapping_add(b)))
    }

    /// The filter-map's compaction of the `n` elements of `input` and the read of its result.
    fn filter_map_kernels(
        &self,
        t: &mut Timeline,
        input: &Buffer<cl_ulong>,
        n: usize,
    ) -> Result<Vec<u64>> {
        let (kept, out) = self.compact::<cl_ulong, cl_ulong>(t, &self.filter, input, n, 0, 1)?;
        self.kernels_done(t)?;
        let mut result = vec![0; kept];
        self.download(t, &out, 0, &mut result)?;
        t.device_done();
        Ok(result)
    }

    /// The CSR matrix's and the vector's buffers, for `rows` rows, `nonzeros` and `x_len`.
    fn csr_buffers(
        &self,
        t: &mut Timeline,
        rows: usize,
        nonzeros: usize,
        x_len: usize,
    ) -> Result<Csr> {
        Ok(Csr {
            row_start: self.buffer::<usize>(t, rows + 1, CL_MEM_READ_ONLY)?,
            cols: self.buffer::<cl_uint>(t, nonzeros, CL_MEM_READ_ONLY)?,
            vals: self.buffer::<f64>(t, nonzeros, CL_MEM_READ_ONLY)?,
            x: self.buffer::<f64>(t, x_len, CL_MEM_READ_ONLY)?,
        })
    }

    /// Copies the CSR arrays and the vector into `csr`.
    fn upload_csr(
        &self,
        t: &mut Timeline,
        mut csr: Csr,
        row_start: &[usize],
        cols: &[u32],
        vals: &[f64],
        x: &[f64],
    ) -> Result<Csr> {
        self.upload(t, &mut csr.row_start, row_start)?;
        self.upload(t, &mut csr.cols, cols)?;
        self.upload(t, &mut csr.vals, vals)?;
        self.upload(t, &mut csr.x, x)?;
        Ok(csr)
    }

    /// The CSR kernel over `rows` rows into `y`, and the read of `y`.
    fn smvm_kernels(
        &self,
        t: &mut Timeline,
        csr: &Csr,
        rows: usize,
        y: &Buffer<f64>,
    ) -> Result<Vec<f64>> {
        let rows_arg = rows as cl_ulong;
        if rows > 0 {
            self.launch(t, &self.csr_spmv, rows.div_ceil(self.group), |k| {
                // SAFETY: `csr_spmv`'s parameters, in order, with their declared types.
                unsafe {
                    k.set_arg(&rows_arg)
                        .set_arg(&csr.row_start.get())
                        .set_arg(&csr.cols.get())
                        .set_arg(&csr.vals.get())
                        .set_arg(&csr.x.get())
                        .set_arg(&y.get())
                };
            })?;
        }
        self.kernels_done(t)?;
        let mut result = vec![0.0; rows];
        self.download(t, y, 0, &mut result)?;
        t.device_done();
        Ok(result)
    }
}

/// A CSR matrix and the vector it multiplies, on the device.
struct Csr {
    row_start: Buffer<usize>,
    cols: Buffer<cl_uint>,
    vals: Buffer<f64>,
    x: Buffer<f64>,
}

impl HandWritten for OpenCl {
    fn sum(&self, values: &[u64]) -> Result<Timed<u64>> {
        let mut t = Timeline::default();
        let mut input = self.buffer::<cl_ulong>(&mut t, values.len(), CL_MEM_READ_ONLY)?;
        let partials = self.sum_partials_buffer(&mut t, values.len())?;
        t.device_starts();
        self.upload(&mut t, &mut input, values)?;
        t.inputs_uploaded();
        let total = self.sum_kernels(&mut t, &input, values.len(), &partials)?;
        Ok(t.timed(total))
    }

    fn sum_resident<'a>(&'a self, values: &[u64]) -> Result<Resident<'a, u64>> {
        let input = self.kept_input(values)?;
        let n = values.len();
        Ok(Box::new(move || {
            let mut t = Timeline::default();
            let partials = self.sum_partials_buffer(&mut t, n)?;
            t.inputs_kept();
            let total = self.sum_kernels(&mut t, &input, n, &partials)?;
            Ok(t.timed(total))
        }))
    }

    fn filter_map(&self, values: &[u64]) -> Result<Timed<Vec<u64>>> {
        let mut t = Timeline::default();
        let mut input = self.buffer::<cl_ulong>(&mut t, values.len(), CL_MEM_READ_ONLY)?;
        t.device_starts();
        self.upload(&mut t, &mut input, values)?;
        t.inputs_uploaded();
        let result = self.filter_map_kernels(&mut t, &input, values.len())?;
        Ok(t.timed(result))
    }

    fn filter_map_resident<'a>(&'a self, values: &[u64]) -> Result<Resident<'a, Vec<u64>>> {
        let input = self.kept_input(values)?;
        let n = values.len();
        Ok(Box::new(move || {
            let mut t = Timeline::default();
            t.inputs_kept();
            let result = self.filter_map_kernels(&mut t, &input, n)?;
            Ok(t.timed(result))
        }))
    }

    fn expand(&self, lengths: &[u32]) -> Result<Timed<Vec<u32>>> {
        let mut t = Timeline::default();
        // The rows' offsets: an exclusive scan on the host (a thousand rows).
        let mut offsets = Vec::with_capacity(lengths.len() + 1);
        let mut total = 0u64;
        offsets.push(0);
        for &l in lengths {
            total += u64::from(l);
            offsets.push(total);
        }
        let total_len = usize::try_from(total)?;
        let rows = cl_uint::try_from(lengths.len())?;
        let mut offsets_buf = self.buffer::<cl_ulong>(&mut t, offsets.len(), CL_MEM_READ_ONLY)?;
        let out = self.buffer::<cl_uint>(&mut t, total_len, CL_MEM_WRITE_ONLY)?;
        t.device_starts();
        self.upload(&mut t, &mut offsets_buf, &offsets)?;
        t.inputs_uploaded();
        if total_len > 0 {
            self.launch(&mut t, &self.expand_rows, total_len.div_ceil(self.group), |k| {
                // SAFETY: `expand_rows`'s parameters, in order, with their declared types.
                unsafe {
                    k.set_arg(&offsets_buf.get()).set_arg(&rows).set_arg(&total).set_arg(&out.get())
                };
            })?;
        }
        self.kernels_done(&mut t)?;
        let mut result = vec![0; total_len];
        self.download(&mut t, &out, 0, &mut result)?;
        t.device_done();
        Ok(t.timed(result))
    }

    fn smvm(&self, input: &Smvm) -> Result<Timed<Vec<f64>>> {
        let mut t = Timeline::default();
        let m = &input.matrix;
        // The (column, value) pairs as the two arrays of CSR.
        let (cols, vals): (Vec<u32>, Vec<f64>) = m.values().iter().copied().unzip();
        let csr = self.csr_buffers(&mut t, m.len(), cols.len(), input.x.len())?;
        let y = self.buffer::<f64>(&mut t, m.len(), CL_MEM_WRITE_ONLY)?;
        t.device_starts();
        let csr = self.upload_csr(&mut t, csr, m.offsets(), &cols, &vals, &input.x)?;
        t.inputs_uploaded();
        let result = self.smvm_kernels(&mut t, &csr, m.len(), &y)?;
        Ok(t.timed(result))
    }

    fn smvm_resident<'a>(&'a self, input: &Smvm) -> Result<Resident<'a, Vec<f64>>> {
        let m = &input.matrix;
        let (cols, vals): (Vec<u32>, Vec<f64>) = m.values().iter().copied().unzip();
        let mut untimed = Timeline::default();
        let csr = self.csr_buffers(&mut untimed, m.len(), cols.len(), input.x.len())?;
        let csr = self.upload_csr(&mut untimed, csr, m.offsets(), &cols, &vals, &input.x)?;
        let rows = m.len();
        Ok(Box::new(move || {
            let mut t = Timeline::default();
            let y = self.buffer::<f64>(&mut t, rows, CL_MEM_WRITE_ONLY)?;
            t.inputs_kept();
            let result = self.smvm_kernels(&mut t, &csr, rows, &y)?;
            Ok(t.timed(result))
        }))
    }

    fn pythagorean(&self, n: i32) -> Result<Timed<Vec<Triple>>> {
        let mut t = Timeline::default();
        if n < 2 {
            return Ok(t.timed(Vec::new()));
        }
        let cells = (n as usize - 1) * n as usize;
        let zs = self.buffer::<cl_int>(&mut t, cells, CL_MEM_READ_WRITE)?;
        // No input to copy: the device's work starts with the first launch.
        t.device_starts();
        t.inputs_uploaded();
        let n_arg = n as cl_int;
        self.launch(&mut t, &self.find_z, cells.div_ceil(self.group), |k| {
            // SAFETY: `find_z`'s parameters, in order, with their declared types.
            unsafe { k.set_arg(&n_arg).set_arg(&zs.get()) };
        })?;
        let (kept, out) =
            self.compact::<cl_int, cl_int>(&mut t, &self.triples, &zs, cells, n as u32, 3)?;
        self.kernels_done(&mut t)?;
        let mut flat = vec![0; 3 * kept];
        self.download(&mut t, &out, 0, &mut flat)?;
        t.device_done();
        let triples = flat.chunks_exact(3).map(|c| (c[0], c[1], c[2])).collect();
        Ok(t.timed(triples))
    }
}
