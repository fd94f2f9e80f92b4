//! The five baselines on CUDA, through cudarc: the device parcomp uses (`PARCOMP_CUDA_DEVICE`,
//! 0 by default), its primary context and default stream, the kernels compiled once by NVRTC
//! (CUDA C++, `extern "C"` entry points), device memory allocated per run, copies from and
//! into `Vec`s (pageable memory: cudarc's copies of a `Vec` return when the copy is done).
//!
//! Only opened when parcomp's device backend is CUDA, so the driver and NVRTC are known to
//! load (cudarc panics when one is missing).

use super::{HandWritten, Resident, Result, Timed, Timeline};
use crate::pythagorean::Triple;
use crate::workloads::Smvm;
use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, DeviceRepr, LaunchArgs, LaunchConfig,
    PushKernelArg,
};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions};
use std::sync::Arc;

/// Threads per block.
const GROUP: u32 = 256;
/// Elements each thread of a compaction handles per tile (a tile is `GROUP * ITEMS`).
const ITEMS: u32 = 16;
/// Blocks of the reduction: enough to fill a GPU, few enough for the host to add.
const SUM_GROUPS: usize = 1024;

const SOURCE: &str = r#"
typedef unsigned long long u64;
typedef unsigned int u32;

/* Each block adds a grid-stride share of `in` (neighbouring threads read neighbouring
   elements) and reduces its threads' sums in shared memory to one partial sum. */
extern "C" __global__ void sum_partials(const u64 *in, u64 n, u64 *partials) {
    __shared__ u64 s[GROUP];
    u32 lid = threadIdx.x;
    u64 acc = 0;
    for (u64 i = (u64)blockIdx.x * blockDim.x + lid; i < n; i += (u64)gridDim.x * blockDim.x)
        acc += in[i];
    s[lid] = acc;
    __syncthreads();
    for (u32 d = GROUP / 2; d > 0; d >>= 1) {
        if (lid < d) s[lid] += s[lid + d];
        __syncthreads();
    }
    if (lid == 0) partials[blockIdx.x] = s[0];
}

/* A block's inclusive scan of one value per thread: within each warp by shuffles, then the
   warps' totals by the first warp; *total gets the block's sum. Every thread calls it. */
__device__ u32 block_scan(u32 v, u32 *total) {
    __shared__ u32 warps[GROUP / 32];
    u32 lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (u32 d = 1; d < 32; d <<= 1) {
        u32 t = __shfl_up_sync(0xffffffffu, v, d);
        if (lane >= d) v += t;
    }
    if (lane == 31) warps[warp] = v;
    __syncthreads();
    if (warp == 0) {
        u32 w = lane < GROUP / 32 ? warps[lane] : 0;
        for (u32 d = 1; d < 32; d <<= 1) {
            u32 t = __shfl_up_sync(0xffffffffu, w, d);
            if (lane >= d) w += t;
        }
        if (lane < GROUP / 32) warps[lane] = w;
    }
    __syncthreads();
    u32 inclusive = v + (warp > 0 ? warps[warp - 1] : 0);
    *total = warps[GROUP / 32 - 1];
    __syncthreads();
    return inclusive;
}

#define TILE ((u64)GROUP * ITEMS)

/* Order-preserving compaction over tiles of TILE elements, one block per tile: count_kept
   counts each tile's kept elements (reading it striped: neighbouring threads read neighbouring
   elements), scan_counts (one block) turns the counts into each tile's first output position
   and writes the total after them, and scatter_kept goes over each tile again, each thread
   counting its ITEMS consecutive elements, one block scan of those counts giving each thread
   its first output position, then writing its kept elements in order. P says what is kept and
   what is written. */
template <class P> __device__ void count_kept(const typename P::Elem *in, u64 n, u32 *counts) {
    __shared__ u32 s[GROUP];
    u32 lid = threadIdx.x;
    u64 base = (u64)blockIdx.x * TILE;
    u32 kept = 0;
    for (u32 k = 0; k < ITEMS; k++) {
        u64 i = base + (u64)k * GROUP + lid;
        if (i < n && P::keep(in[i])) kept++;
    }
    s[lid] = kept;
    __syncthreads();
    for (u32 d = GROUP / 2; d > 0; d >>= 1) {
        if (lid < d) s[lid] += s[lid + d];
        __syncthreads();
    }
    if (lid == 0) counts[blockIdx.x] = s[0];
}

extern "C" __global__ void scan_counts(u32 *counts, u32 tiles) {
    u32 carry = 0;
    for (u32 start = 0; start < tiles; start += GROUP) {
        u32 i = start + threadIdx.x;
        u32 v = i < tiles ? counts[i] : 0;
        u32 total;
        u32 inclusive = block_scan(v, &total);
        if (i < tiles) counts[i] = carry + inclusive - v;
        carry += total;
    }
    if (threadIdx.x == 0) counts[tiles] = carry;
}

template <class P>
__device__ void scatter_kept(const typename P::Elem *in, u64 n, u32 width, const u32 *offsets,
                             typename P::Out *out) {
    u64 first = (u64)blockIdx.x * TILE + (u64)threadIdx.x * ITEMS;
    u64 end = first + ITEMS < n ? first + ITEMS : n;
    u32 kept = 0;
    for (u64 i = first; i < end; i++) kept += P::keep(in[i]) ? 1 : 0;
    u32 total;
    u32 at = offsets[blockIdx.x] + block_scan(kept, &total) - kept;
    for (u64 i = first; i < end; i++) {
        typename P::Elem x = in[i];
        if (P::keep(x)) {
            P::emit(out, at, x, i, width);
            at++;
        }
    }
}

/* The filter-map: x * 3 for every x with x % 7 == 1. */
struct Filter {
    typedef u64 Elem;
    typedef u64 Out;
    static __device__ bool keep(u64 x) { return x % 7 == 1; }
    static __device__ void emit(u64 *out, u32 at, u64 x, u64, u32) { out[at] = x * 3; }
};

extern "C" __global__ void filter_count(const u64 *in, u64 n, u32 *counts) {
    count_kept<Filter>(in, n, counts);
}

extern "C" __global__ void filter_scatter(const u64 *in, u64 n, u32 width, const u32 *offsets,
                                          u64 *out) {
    scatter_kept<Filter>(in, n, width, offsets, out);
}

/* One thread per output element j: a binary search finds its row, the last r with
   offsets[r] <= j (an empty row shares its offset with the next, so the last is the row that
   holds j), then writes skew_element(r, j - offsets[r]). */
extern "C" __global__ void expand_rows(const u64 *offsets, u32 rows, u64 total, u32 *out) {
    u64 j = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= total) return;
    u32 lo = 0, hi = rows; /* offsets[lo] <= j < offsets[hi] */
    while (hi - lo > 1) {
        u32 mid = lo + (hi - lo) / 2;
        if (offsets[mid] <= j) lo = mid; else hi = mid;
    }
    u32 i = (u32)(j - offsets[lo]);
    out[j] = (lo ^ i) * 0x9E3779B9u;
}

/* CSR, one row per thread, adding its products in order (compiled without FMA contraction,
   as Rust computes). */
extern "C" __global__ void csr_spmv(u64 rows, const u64 *row_start, const u32 *cols,
                                    const double *vals, const double *x, double *y) {
    u64 r = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    double sum = 0.0;
    for (u64 k = row_start[r]; k < row_start[r + 1]; k++) sum += vals[k] * x[cols[k]];
    y[r] = sum;
}

/* One thread per cell (x, y) of 1..n × 0..n, row-major: the loop over z of the comprehension,
   with its filter, for y >= x; zs gets the z found, or 0 (no triple has z = 0, and x and y
   determine z, so a cell holds at most one). */
extern "C" __global__ void find_z(int n, int *zs) {
    u64 cell = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (cell >= (u64)(n - 1) * n) return;
    int x = 1 + (int)(cell / n), y = (int)(cell % n);
    int found = 0;
    if (y >= x) {
        for (int z = y; z < x + y; z++) {
            if (z < n && x * x + y * y == z * z) found = z;
        }
    }
    zs[cell] = found;
}

/* The triples: the cells with a z, written as (x, y, z). */
struct Triples {
    typedef int Elem;
    typedef int Out;
    static __device__ bool keep(int z) { return z != 0; }
    static __device__ void emit(int *out, u32 at, int z, u64 i, u32 width) {
        out[3 * (u64)at] = 1 + (int)(i / width);
        out[3 * (u64)at + 1] = (int)(i % width);
        out[3 * (u64)at + 2] = z;
    }
};

extern "C" __global__ void triples_count(const int *in, u64 n, u32 *counts) {
    count_kept<Triples>(in, n, counts);
}

extern "C" __global__ void triples_scatter(const int *in, u64 n, u32 width, const u32 *offsets,
                                           int *out) {
    scatter_kept<Triples>(in, n, width, offsets, out);
}
"#;

/// The CUDA side: the stream and the loaded kernels.
pub struct Cuda {
    stream: Arc<CudaStream>,
    sum_partials: CudaFunction,
    filter_count: CudaFunction,
    filter_scatter: CudaFunction,
    scan_counts: CudaFunction,
    expand_rows: CudaFunction,
    csr_spmv: CudaFunction,
    find_z: CudaFunction,
    triples_count: CudaFunction,
    triples_scatter: CudaFunction,
}

/// The kernels of one compaction.
struct Compaction<'a> {
    count: &'a CudaFunction,
    scatter: &'a CudaFunction,
}

fn blocks(groups: usize) -> Result<LaunchConfig> {
    Ok(LaunchConfig {
        grid_dim: (u32::try_from(groups.max(1))?, 1, 1),
        block_dim: (GROUP, 1, 1),
        shared_mem_bytes: 0,
    })
}

impl Cuda {
    /// Opens the device parcomp uses and compiles the kernels for its architecture.
    pub fn open() -> Result<Cuda> {
        let ordinal = match std::env::var("PARCOMP_CUDA_DEVICE") {
            Ok(v) if !v.trim().is_empty() => v.trim().parse()?,
            _ => 0,
        };
        let context = CudaContext::new(ordinal)?;
        let (major, minor) = context.compute_capability()?;
        let options = CompileOptions {
            // Rust never fuses `v * x + sum` into one rounding; neither does the CSR kernel.
            fmad: Some(false),
            options: vec![
                format!("--gpu-architecture=compute_{major}{minor}"),
                format!("-DGROUP={GROUP}"),
                format!("-DITEMS={ITEMS}"),
            ],
            ..Default::default()
        };
        let module = context.load_module(compile_ptx_with_opts(SOURCE, options)?)?;
        let f = |name: &str| module.load_function(name);
        Ok(Cuda {
            sum_partials: f("sum_partials")?,
            filter_count: f("filter_count")?,
            filter_scatter: f("filter_scatter")?,
            scan_counts: f("scan_counts")?,
            expand_rows: f("expand_rows")?,
            csr_spmv: f("csr_spmv")?,
            find_z: f("find_z")?,
            triples_count: f("triples_count")?,
            triples_scatter: f("triples_scatter")?,
            stream: context.default_stream(),
        })
    }

    /// Device memory for `len` elements, left uninitialised: every caller writes it (a copy
    /// or a kernel) before reading it.
    fn alloc<T: DeviceRepr>(&self, t: &mut Timeline, len: usize) -> Result<CudaSlice<T>> {
        t.counts.allocations += 1;
        // SAFETY: uninitialised device memory is sound to hold; each caller fills it (by a
        // copy or by the kernel that writes every element it later reads) before any read.
        Ok(unsafe { self.stream.alloc::<T>(len.max(1)) }?)
    }

    fn upload<T: DeviceRepr>(
        &self,
        t: &mut Timeline,
        data: &[T],
        to: &mut CudaSlice<T>,
    ) -> Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        self.stream.memcpy_htod(data, to)?;
        t.counts.host_waits += 1;
        t.counts.bytes_in += std::mem::size_of_val(data) as u64;
        Ok(())
    }

    fn download<T: DeviceRepr>(
        &self,
        t: &mut Timeline,
        from: &CudaSlice<T>,
        at: usize,
        out: &mut [T],
    ) -> Result<()> {
        if out.is_empty() {
            return Ok(());
        }
        self.stream.memcpy_dtoh(&from.slice(at..at + out.len()), out)?;
        t.counts.host_waits += 1;
        t.counts.bytes_out += std::mem::size_of_val(out) as u64;
        Ok(())
    }

    /// Launches `args`'s kernel over `groups` blocks.
    fn launch(&self, t: &mut Timeline, args: &mut LaunchArgs<'_>, groups: usize) -> Result<()> {
        // SAFETY: each caller pushes every argument of its kernel, in order, with the type the
        // kernel declares (a `CudaSlice<T>` for a `T *`, `u64`/`u32`/`i32` for
        // `u64`/`u32`/`int`), and sizes the memory for the threads launched.
        unsafe { args.launch(blocks(groups)?) }?;
        t.counts.launches += 1;
        Ok(())
    }

    /// Waits for the kernels, to mark the end of their time (not counted as a wait: the read
    /// that follows would wait for them anyway).
    fn kernels_done(&self, t: &mut Timeline) -> Result<()> {
        self.stream.synchronize()?;
        t.kernels_done();
        Ok(())
    }

    /// The compaction of the `n` elements of `input`: the number kept, and the output they
    /// were written to (`per_kept` elements of `O` each).
    fn compact<E: DeviceRepr, O: DeviceRepr>(
        &self,
        t: &mut Timeline,
        kernels: Compaction<'_>,
        input: &CudaSlice<E>,
        n: usize,
        width: u32,
        per_kept: usize,
    ) -> Result<(usize, CudaSlice<O>)> {
        let tiles = n.div_ceil((GROUP * ITEMS) as usize);
        let tiles_arg = u32::try_from(tiles)?;
        if n >= u32::MAX as usize {
            return Err("the compaction counts in 32 bits".into());
        }
        let n_arg = n as u64;
        let mut counts = self.alloc::<u32>(t, tiles + 1)?;
        self.launch(
            t,
            self.stream.launch_builder(kernels.count).arg(input).arg(&n_arg).arg(&mut counts),
            tiles,
        )?;
        self.launch(
            t,
            self.stream.launch_builder(&self.scan_counts).arg(&mut counts).arg(&tiles_arg),
            1,
        )?;
        let mut kept = [0u32];
        self.download(t, &counts, tiles, &mut kept)?;
        let kept = kept[0] as usize;
        let mut out = self.alloc::<O>(t, kept * per_kept)?;
        self.launch(
            t,
            self.stream
                .launch_builder(kernels.scatter)
                .arg(input)
                .arg(&n_arg)
                .arg(&width)
                .arg(&counts)
                .arg(&mut out),
            tiles,
        )?;
        Ok((kept, out))
    }

    /// Device memory holding `values`, copied before any run (untimed, uncounted).
    fn kept_input(&self, values: &[u64]) -> Result<CudaSlice<u64>> {
        let mut untimed = Timeline::default();
        let mut input = self.alloc::<u64>(&mut untimed, values.len())?;
        self.upload(&mut untimed, values, &mut input)?;
        Ok(input)
    }

    /// The memory of the sum's partial sums, one per block.
    fn sum_partials_memory(&self, t: &mut Timeline, n: usize) -> Result<CudaSlice<u64>> {
        self.alloc::<u64>(t, n.div_ceil(GROUP as usize).clamp(1, SUM_GROUPS))
    }

    /// The sum's kernel over the `n` elements of `input`, the read of its partial sums and
    /// their sum on the host.
    fn sum_kernels(
        &self,
        t: &mut Timeline,
        input: &CudaSlice<u64>,
        n: usize,
        partials: &mut CudaSlice<u64>,
    ) -> Result<u64> {
        let groups = n.div_ceil(GROUP as usize).clamp(1, SUM_GROUPS);
        let n_arg = n as u64;
        self.launch(
            t,
            self.stream
                .launch_builder(&self.sum_partials)
                .arg(input)
                .arg(&n_arg)
                .arg(&mut *partials),
            groups,
        )?;
        self.kernels_done(t)?;
        let mut sums = vec![0u64; groups];
        self.download(t, partials, 0, &mut sums)?;
        t.device_done();
        Ok(sums.iter().fold(0u64, |a, &b| a.wrapping_add(b)))
    }

    /// The filter-map's compaction of the `n` elements of `input` and the read of its result.
    fn filter_map_kernels(
        &self,
        t: &mut Timeline,
        input: &CudaSlice<u64>,
        n: usize,
    ) -> Result<Vec<u64>> {
        let kernels = Compaction { count: &self.filter_count, scatter: &self.filter_scatter };
        let (kept, out) = self.compact::<u64, u64>(t, kernels, input, n, 0, 1)?;
        self.kernels_done(t)?;
        let mut result = vec![0u64; kept];
        self.download(t, &out, 0, &mut result)?;
        t.device_done();
        Ok(result)
    }

    /// The CSR matrix's and the vector's memory, for `rows` rows, `nonzeros` and `x_len`.
    fn csr_memory(
        &self,
        t: &mut Timeline,
        rows: usize,
        nonzeros: usize,
        x_len: usize,
    ) -> Result<Csr> {
        Ok(Csr {
            row_start: self.alloc::<u64>(t, rows + 1)?,
            cols: self.alloc::<u32>(t, nonzeros)?,
            vals: self.alloc::<f64>(t, nonzeros)?,
            x: self.alloc::<f64>(t, x_len)?,
        })
    }

    /// Copies the CSR arrays and the vector into `csr`.
    fn upload_csr(
        &self,
        t: &mut Timeline,
        mut csr: Csr,
        row_start: &[u64],
        cols: &[u32],
        vals: &[f64],
        x: &[f64],
    ) -> Result<Csr> {
        self.upload(t, row_start, &mut csr.row_start)?;
        self.upload(t, cols, &mut csr.cols)?;
        self.upload(t, vals, &mut csr.vals)?;
        self.upload(t, x, &mut csr.x)?;
        Ok(csr)
    }

    /// The CSR kernel over `rows` rows into `y`, and the read of `y`.
    fn smvm_kernels(
        &self,
        t: &mut Timeline,
        csr: &Csr,
        rows: usize,
        y: &mut CudaSlice<f64>,
    ) -> Result<Vec<f64>> {
        let rows_arg = rows as u64;
        if rows > 0 {
            self.launch(
                t,
                self.stream
                    .launch_builder(&self.csr_spmv)
                    .arg(&rows_arg)
                    .arg(&csr.row_start)
                    .arg(&csr.cols)
                    .arg(&csr.vals)
                    .arg(&csr.x)
                    .arg(&mut *y),
                rows.div_ceil(GROUP as usize),
            )?;
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
    row_start: CudaSlice<u64>,
    cols: CudaSlice<u32>,
    vals: CudaSlice<f64>,
    x: CudaSlice<f64>,
}

impl HandWritten for Cuda {
    fn sum(&self, values: &[u64]) -> Result<Timed<u64>> {
        let mut t = Timeline::default();
        let mut input = self.alloc::<u64>(&mut t, values.len())?;
        let mut partials = self.sum_partials_memory(&mut t, values.len())?;
        t.device_starts();
        self.upload(&mut t, values, &mut input)?;
        t.inputs_uploaded();
        let total = self.sum_kernels(&mut t, &input, values.len(), &mut partials)?;
        Ok(t.timed(total))
    }

    fn sum_resident<'a>(&'a self, values: &[u64]) -> Result<Resident<'a, u64>> {
        let input = self.kept_input(values)?;
        let n = values.len();
        Ok(Box::new(move || {
            let mut t = Timeline::default();
            let mut partials = self.sum_partials_memory(&mut t, n)?;
            t.inputs_kept();
            let total = self.sum_kernels(&mut t, &input, n, &mut partials)?;
            Ok(t.timed(total))
        }))
    }

    fn filter_map(&self, values: &[u64]) -> Result<Timed<Vec<u64>>> {
        let mut t = Timeline::default();
        let mut input = self.alloc::<u64>(&mut t, values.len())?;
        t.device_starts();
        self.upload(&mut t, values, &mut input)?;
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
        offsets.push(0u64);
        for &l in lengths {
            total += u64::from(l);
            offsets.push(total);
        }
        let total_len = usize::try_from(total)?;
        let rows = u32::try_from(lengths.len())?;
        let mut offsets_dev = self.alloc::<u64>(&mut t, offsets.len())?;
        let mut out = self.alloc::<u32>(&mut t, total_len)?;
        t.device_starts();
        self.upload(&mut t, &offsets, &mut offsets_dev)?;
        t.inputs_uploaded();
        if total_len > 0 {
            self.launch(
                &mut t,
                self.stream
                    .launch_builder(&self.expand_rows)
                    .arg(&offsets_dev)
                    .arg(&rows)
                    .arg(&total)
                    .arg(&mut out),
                total_len.div_ceil(GROUP as usize),
            )?;
        }
        self.kernels_done(&mut t)?;
        let mut result = vec![0u32; total_len];
        self.download(&mut t, &out, 0, &mut result)?;
        t.device_done();
        Ok(t.timed(result))
    }

    fn smvm(&self, input: &Smvm) -> Result<Timed<Vec<f64>>> {
        let mut t = Timeline::default();
        let m = &input.matrix;
        // The (column, value) pairs as the two arrays of CSR, the row offsets as u64.
        let (cols, vals): (Vec<u32>, Vec<f64>) = m.values().iter().copied().unzip();
        let row_start: Vec<u64> = m.offsets().iter().map(|&o| o as u64).collect();
        let csr = self.csr_memory(&mut t, m.len(), cols.len(), input.x.len())?;
        let mut y = self.alloc::<f64>(&mut t, m.len())?;
        t.device_starts();
        let csr = self.upload_csr(&mut t, csr, &row_start, &cols, &vals, &input.x)?;
        t.inputs_uploaded();
        let result = self.smvm_kernels(&mut t, &csr, m.len(), &mut y)?;
        Ok(t.timed(result))
    }

    fn smvm_resident<'a>(&'a self, input: &Smvm) -> Result<Resident<'a, Vec<f64>>> {
        let m = &input.matrix;
        let (cols, vals): (Vec<u32>, Vec<f64>) = m.values().iter().copied().unzip();
        let row_start: Vec<u64> = m.offsets().iter().map(|&o| o as u64).collect();
        let mut untimed = Timeline::default();
        let csr = self.csr_memory(&mut untimed, m.len(), cols.len(), input.x.len())?;
        let csr = self.upload_csr(&mut untimed, csr, &row_start, &cols, &vals, &input.x)?;
        let rows = m.len();
        Ok(Box::new(move || {
            let mut t = Timeline::default();
            let mut y = self.alloc::<f64>(&mut t, rows)?;
            t.inputs_kept();
            let result = self.smvm_kernels(&mut t, &csr, rows, &mut y)?;
            Ok(t.timed(result))
        }))
    }

    fn pythagorean(&self, n: i32) -> Result<Timed<Vec<Triple>>> {
        let mut t = Timeline::default();
        if n < 2 {
            return Ok(t.timed(Vec::new()));
        }
        let cells = (n as usize - 1) * n as usize;
        let mut zs = self.alloc::<i32>(&mut t, cells)?;
        // No input to copy: the device's work starts with the first launch.
        t.device_starts();
        t.inputs_uploaded();
        self.launch(
            &mut t,
            self.stream.launch_builder(&self.find_z).arg(&n).arg(&mut zs),
            cells.div_ceil(GROUP as usize),
        )?;
        let kernels = Compaction { count: &self.triples_count, scatter: &self.triples_scatter };
        let (kept, out) = self.compact::<i32, i32>(&mut t, kernels, &zs, cells, n as u32, 3)?;
        self.kernels_done(&mut t)?;
        let mut flat = vec![0i32; 3 * kept];
        self.download(&mut t, &out, 0, &mut flat)?;
        t.device_done();
        let triples = flat.chunks_exact(3).map(|c| (c[0], c[1], c[2])).collect();
        Ok(t.timed(triples))
    }
}
