//! Hand-written baselines for `gpu_report`: five workloads written directly on the device API
//! (opencl3, or cudarc for CUDA), the way a competent user writes them, run beside the same
//! computation as a comprehension forced onto the same device, on the same data, interleaved,
//! with their results checked equal.
//!
//! - sum, `par_sum![x | x <- &v]`: per-work-group tree reductions in local memory, the host
//!   adds the partial sums;
//! - filter-map, `par![x * 3 | x <- values, x % 7 == 1]`: an order-preserving copy-if (per-tile
//!   counts, their scan, then a scan and scatter per tile);
//! - skewed expand, `skew_par`: a host scan of the row lengths, then one work-item per output
//!   element doing a binary search for its row;
//! - sparse matrix × vector, `smvm_par`: CSR, one row per work-item;
//! - Pythagorean triples, `pythagorean_par`: one work-item per `(x, y)` looping over `z` with
//!   the comprehension's filter, then the copy-if.
//!
//! The hand-written programs are built once before anything is timed, as parcomp caches its
//! own. Each hand-written run marks its own timeline (see [`Timeline`]): end to end is what the
//! caller waits for (host preparation, buffers, copies from and to the `Vec`s, kernels);
//! device-only runs from the first copy to the last read; kernels-only from the moment the
//! inputs are on the device to the last kernel's end. With the inputs kept on the device, both
//! sides upload them once before the runs (the hand-written side's [`Resident`] runs), and a
//! run's device time is its kernels and the read of its result, as parcomp's device run is
//! (inputs copied just before the kernels may also still be in a cache that a kept input has
//! left).

#[cfg(any(feature = "cuda", feature = "cuda-12"))]
mod cuda;
mod opencl;

use crate::pythagorean::Triple;
use crate::timing::{fmt_bytes, fmt_duration};
use crate::workloads::{pythagorean_par, skew_input, skew_par, smvm_input, smvm_par, Size, Smvm};
use parcomp::{par, par_sum, trace, with_backend, Backend, DeviceJagged, DeviceVec, RunStats};
use std::fmt::Write as _;
use std::time::{Duration, Instant};

pub type Error = Box<dyn std::error::Error>;
pub type Result<T> = std::result::Result<T, Error>;

/// What a hand-written run asked of the device.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counts {
    pub launches: u64,
    /// Blocking copies and finishes (the timeline's own wait after the last kernel is not
    /// counted: the read after it waits for the same kernels anyway).
    pub host_waits: u64,
    pub allocations: u64,
    pub bytes_in: u64,
    pub bytes_out: u64,
}

/// The moments a hand-written run marks as it goes, and its counts.
#[derive(Default)]
pub struct Timeline {
    first_copy: Option<Instant>,
    kernels_start: Option<Instant>,
    kernels_end: Option<Instant>,
    last_read: Option<Instant>,
    pub counts: Counts,
}

impl Timeline {
    /// Just before the first copy to the device (or the first launch, when there is no input).
    pub fn device_starts(&mut self) {
        self.first_copy = Some(Instant::now());
    }

    /// Every input is on the device (the copies were blocking): the kernels start now.
    pub fn inputs_uploaded(&mut self) {
        self.kernels_start = Some(Instant::now());
    }

    /// A run over inputs kept on the device: its device time starts with its kernels.
    pub fn inputs_kept(&mut self) {
        self.device_starts();
        self.inputs_uploaded();
    }

    /// The last kernel has finished.
    pub fn kernels_done(&mut self) {
        self.kernels_end = Some(Instant::now());
    }

    /// The last read has finished: what follows is host work on the results.
    pub fn device_done(&mut self) {
        self.last_read = Some(Instant::now());
    }

    /// The run's result with its device and kernel times.
    pub fn timed<T>(self, result: T) -> Timed<T> {
        let span = |from: Option<Instant>, to: Option<Instant>| match (from, to) {
            (Some(from), Some(to)) => to.saturating_duration_since(from),
            _ => Duration::ZERO,
        };
        Timed {
            result,
            device: span(self.first_copy, self.last_read),
            kernels: span(self.kernels_start, self.kernels_end),
            counts: self.counts,
        }
    }
}

/// A hand-written run's result and what it measured of itself.
pub struct Timed<T> {
    pub result: T,
    /// From the first copy to the last read finished.
    pub device: Duration,
    /// From the inputs being on the device to the last kernel finished.
    pub kernels: Duration,
    pub counts: Counts,
}

/// Runs of a hand-written workload over inputs uploaded once, before them: each is the kernels
/// and the read of the result (with the buffers it writes, allocated before its device time).
pub type Resident<'a, T> = Box<dyn Fn() -> Result<Timed<T>> + 'a>;

/// The five workloads written by hand on one device API.
pub trait HandWritten {
    /// The sum of `values` (wrapping, as a release build's `iter().sum()`).
    fn sum(&self, values: &[u64]) -> Result<Timed<u64>>;
    /// `x * 3` for every `x` of `values` with `x % 7 == 1`, in order.
    fn filter_map(&self, values: &[u64]) -> Result<Timed<Vec<u64>>>;
    /// `skew_element(r, i)` for every row `r` and every `i < lengths[r]`, in order.
    fn expand(&self, lengths: &[u32]) -> Result<Timed<Vec<u32>>>;
    /// The matrix times the vector.
    fn smvm(&self, input: &Smvm) -> Result<Timed<Vec<f64>>>;
    /// [`Self::sum`] with `values` uploaded once, by this call (untimed).
    fn sum_resident<'a>(&'a self, values: &[u64]) -> Result<Resident<'a, u64>>;
    /// [`Self::filter_map`] with `values` uploaded once, by this call (untimed).
    fn filter_map_resident<'a>(&'a self, values: &[u64]) -> Result<Resident<'a, Vec<u64>>>;
    /// [`Self::smvm`] with the CSR arrays and the vector uploaded once, by this call (untimed).
    fn smvm_resident<'a>(&'a self, input: &Smvm) -> Result<Resident<'a, Vec<f64>>>;
    /// The triples of `pythagorean_par(n)`, by the same triple loop and filter.
    fn pythagorean(&self, n: i32) -> Result<Timed<Vec<Triple>>>;
}

/// The comparison's sizes: `--full` gives the issue's, the default a quarter to a tenth of
/// them (the sparse matrix is the same: it is already quick), so that the default run stays
/// short on PoCL.
struct Sizes {
    slice: usize,
    /// The skewed row lengths of `skew_input(Size::Reduced)` (10⁷ elements) divided by this.
    skew_divisor: u32,
    pythagorean: i32,
}

impl Sizes {
    fn new(size: Size) -> Sizes {
        match size {
            Size::Full => Sizes { slice: 1 << 24, skew_divisor: 1, pythagorean: 400 },
            Size::Reduced | Size::Tiny => {
                Sizes { slice: 1 << 22, skew_divisor: 10, pythagorean: 200 }
            }
        }
    }
}

/// The slice the sum and the filter read: `len` hashed values below 2²⁴ (those of the
/// report's row 9).
fn slice_values(len: usize) -> Vec<u64> {
    (0..len as u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40).collect()
}

fn parcomp_filter_map(values: &[u64]) -> Vec<u64> {
    par![x * 3 | x <- values, x % 7 == 1]
}

/// Equal up to the rounding of differently grouped sums.
fn close(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1e-9 * (1.0 + x.abs().max(y.abs())))
}

/// One workload's comparison.
struct Line {
    name: &'static str,
    size: String,
    /// Where a part of the comprehension ran off the device, and why (none: all on it).
    off_device: Option<String>,
    parcomp: Duration,
    hand: Duration,
    parcomp_run: Duration,
    hand_device: Duration,
    hand_kernels: Duration,
    stats: Option<RunStats>,
    counts: Counts,
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times.get(times.len() / 2).copied().unwrap_or_default()
}

/// Runs the comprehension on `backend` and the hand-written version, once each first (the
/// comprehension's first run builds or loads its programs), then `reps` times interleaved in
/// alternating order; every result is checked against the comprehension's first.
fn compare<T>(
    backend: Backend,
    name: &'static str,
    size: String,
    reps: usize,
    parcomp: &dyn Fn() -> T,
    hand: &dyn Fn() -> Result<Timed<T>>,
    agree: &dyn Fn(&T, &T) -> bool,
) -> Result<Line> {
    eprint!("baseline {name} ({size}):");
    let (want, runs) = trace::record(|| with_backend(backend, parcomp));
    let off_device = runs
        .iter()
        .find(|r| r.backend != backend)
        .map(|r| format!("{} ({})", r.backend, r.reason.clone().unwrap_or_default()));
    let first = hand()?;
    assert!(agree(&want, &first.result), "{name}: the hand-written result differs from parcomp's");
    let (mut p_times, mut p_runs, mut h_times, mut h_device, mut h_kernels) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut stats, mut counts) = (None, first.counts);
    for rep in 0..reps {
        for k in 0..2 {
            if (k + rep) % 2 == 0 {
                let start = Instant::now();
                let got = with_backend(backend, parcomp);
                p_times.push(start.elapsed());
                stats = parcomp::gpu_stats();
                if let Some(s) = &stats {
                    p_runs.push(s.run);
                }
                assert!(agree(&want, &got), "{name}: parcomp's result changed between runs");
            } else {
                let start = Instant::now();
                let got = hand()?;
                h_times.push(start.elapsed());
                h_device.push(got.device);
                h_kernels.push(got.kernels);
                counts = got.counts;
                assert!(
                    agree(&want, &got.result),
                    "{name}: the hand-written result differs from parcomp's"
                );
            }
        }
        eprint!(" {}", rep + 1);
    }
    eprintln!();
    Ok(Line {
        name,
        size,
        off_device,
        parcomp: median(p_times),
        hand: median(h_times),
        parcomp_run: median(p_runs),
        hand_device: median(h_device),
        hand_kernels: median(h_kernels),
        stats,
        counts,
    })
}

/// Opens the hand-written side on `backend`'s device, builds its programs, runs the five
/// comparisons and returns the report's section.
pub fn report(backend: Backend, size: Size, reps: usize) -> Result<String> {
    let device = parcomp::gpu_device(backend).map_err(|e| e.to_string())?;
    let hand: Box<dyn HandWritten> = match backend {
        Backend::OpenCl => Box::new(opencl::OpenCl::open(&device.name)?),
        // Only reached when the runtime opened the CUDA device: the driver and NVRTC load, so
        // cudarc (which panics when a library is missing) is safe to call.
        #[cfg(any(feature = "cuda", feature = "cuda-12"))]
        Backend::Cuda => Box::new(cuda::Cuda::open()?),
        other => return Err(format!("no hand-written baselines for the backend {other}").into()),
    };
    let sizes = Sizes::new(size);
    let reps = reps.max(1);
    let mut lines = Vec::new();
    // The same with the inputs kept on the device (`DeviceVec`, `DeviceJagged`, uploaded by the
    // untimed first run): parcomp's device run against the hand-written kernels alone.
    let mut resident = Vec::new();

    let values = slice_values(sizes.slice);
    lines.push(compare(
        backend,
        "sum",
        format!("{} u64", values.len()),
        reps,
        &|| par_sum![x | x <- &values],
        &|| hand.sum(&values),
        &|a, b| a == b,
    )?);
    lines.push(compare(
        backend,
        "filter-map",
        format!("{} u64", values.len()),
        reps,
        &|| parcomp_filter_map(&values),
        &|| hand.filter_map(&values),
        &|a, b| a == b,
    )?);
    let on_device = DeviceVec::from_slice(&values);
    let hand_sum = hand.sum_resident(&values)?;
    resident.push(compare(
        backend,
        "sum",
        format!("{} u64", values.len()),
        reps,
        &|| par_sum![x | x <- &on_device],
        &*hand_sum,
        &|a, b| a == b,
    )?);
    drop(hand_sum);
    let hand_filter_map = hand.filter_map_resident(&values)?;
    resident.push(compare(
        backend,
        "filter-map",
        format!("{} u64", values.len()),
        reps,
        &|| par![x * 3 | x <- &on_device, x % 7 == 1],
        &*hand_filter_map,
        &|a, b| a == b,
    )?);
    drop((values, on_device, hand_filter_map));

    let lengths: Vec<u32> =
        skew_input(Size::Reduced).iter().map(|&l| l / sizes.skew_divisor).collect();
    let outputs: u64 = lengths.iter().map(|&l| u64::from(l)).sum();
    lines.push(compare(
        backend,
        "skewed expand",
        format!("{} rows, {outputs} outputs", lengths.len()),
        reps,
        &|| skew_par(&lengths),
        &|| hand.expand(&lengths),
        &|a, b| a == b,
    )?);
    drop(lengths);

    let input = smvm_input(Size::Reduced);
    lines.push(compare(
        backend,
        "sparse matrix × vector",
        format!("{} rows, {} nonzeros", input.matrix.len(), input.matrix.values().len()),
        reps,
        &|| smvm_par(&input),
        &|| hand.smvm(&input),
        &|a, b| close(a, b),
    )?);
    let (m, x) = (DeviceJagged::from_jagged(&input.matrix), DeviceVec::from_slice(&input.x));
    let hand_smvm = hand.smvm_resident(&input)?;
    resident.push(compare(
        backend,
        "sparse matrix × vector",
        format!("{} rows, {} nonzeros", input.matrix.len(), input.matrix.values().len()),
        reps,
        &|| par![par_sum![v * x[c as usize] | (c, v) <- m.row(i)] | i <- 0..m.len()],
        &*hand_smvm,
        &|a, b| close(a, b),
    )?);
    drop((input, m, x, hand_smvm));

    let n = sizes.pythagorean;
    lines.push(compare(
        backend,
        "Pythagorean triples",
        format!("n = {n}"),
        reps,
        &|| pythagorean_par(n),
        &|| hand.pythagorean(n),
        &|a, b| a == b,
    )?);

    Ok(table(backend, reps, &lines) + &resident_table(&resident))
}

/// The comparison with the inputs on the device: parcomp's device run over `DeviceVec` /
/// `DeviceJagged` inputs against the hand-written kernels over inputs they uploaded once.
fn resident_table(lines: &[Line]) -> String {
    let mut out = String::new();
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "With the inputs kept on the device (`DeviceVec`, `DeviceJagged`; the hand-written side's \
         uploaded once, before the runs): parcomp's device run against the hand-written kernels \
         and the read of their result, and against the kernels alone."
    );
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "| workload | size | parcomp device-only | hand-written kernels and read | ratio | \
         hand-written kernels only | ratio | parcomp launches / host waits / allocations | \
         parcomp bytes in / out |"
    );
    let _ = writeln!(out, "|---|---|---:|---:|---:|---:|---:|---:|---:|");
    for l in lines {
        let Some(s) = &l.stats else { continue };
        let name = match &l.off_device {
            None => l.name.to_string(),
            Some(why) => format!("{} (partly on {why})", l.name),
        };
        let _ = writeln!(
            out,
            "| {name} | {} | {} | {} | {} | {} | {} | {} / {} / {} | {} / {} |",
            l.size,
            fmt_duration(l.parcomp_run),
            fmt_duration(l.hand_device),
            ratio(l.parcomp_run, l.hand_device),
            fmt_duration(l.hand_kernels),
            ratio(l.parcomp_run, l.hand_kernels),
            s.launches,
            s.host_waits,
            s.allocations,
            fmt_bytes(s.bytes_in),
            fmt_bytes(s.bytes_out),
        );
    }
    out
}

fn ratio(a: Duration, b: Duration) -> String {
    if b.is_zero() {
        "–".into()
    } else {
        format!("{:.2}", a.as_secs_f64() / b.as_secs_f64())
    }
}

fn table(backend: Backend, reps: usize, lines: &[Line]) -> String {
    let api = if backend == Backend::Cuda { "cudarc" } else { "opencl3" };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Hand-written baselines ({api}, programs built before timing), the comprehension forced \
         onto the same device, same data, results checked equal; medians of {reps} interleaved \
         runs. Ratios are parcomp / hand-written."
    );
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "| workload | size | parcomp end to end | hand-written end to end | ratio | parcomp \
         device-only | hand-written device-only | ratio | hand-written kernels only | parcomp \
         launches / host waits / allocations | parcomp bytes in / read in place / converted / staged | parcomp modelled \
         DRAM / minimum | hand-written launches / host waits / allocations |"
    );
    let _ = writeln!(out, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for l in lines {
        let name = match &l.off_device {
            None => l.name.to_string(),
            Some(why) => format!("{} (partly on {why})", l.name),
        };
        let (run, counted, bytes, dram) = match &l.stats {
            Some(s) => (
                fmt_duration(l.parcomp_run),
                format!("{} / {} / {}", s.launches, s.host_waits, s.allocations),
                format!(
                    "{} / {} / {} / {}",
                    fmt_bytes(s.bytes_in),
                    fmt_bytes(s.bytes_in_place),
                    fmt_bytes(s.bytes_converted),
                    fmt_bytes(s.bytes_staged)
                ),
                if s.dram_minimum > 0 {
                    format!(
                        "{} / {} ({:.2}×)",
                        fmt_bytes(s.dram_bytes),
                        fmt_bytes(s.dram_minimum),
                        s.dram_bytes as f64 / s.dram_minimum as f64
                    )
                } else {
                    format!("{} / {}", fmt_bytes(s.dram_bytes), fmt_bytes(s.dram_minimum))
                },
            ),
            None => ("–".into(), "–".into(), "–".into(), "–".into()),
        };
        let c = &l.counts;
        let _ = writeln!(
            out,
            "| {name} | {} | {} | {} | {} | {run} | {} | {} | {} | {counted} | {bytes} | {dram} | \
             {} / {} / {} |",
            l.size,
            fmt_duration(l.parcomp),
            fmt_duration(l.hand),
            ratio(l.parcomp, l.hand),
            fmt_duration(l.hand_device),
            if l.stats.is_some() { ratio(l.parcomp_run, l.hand_device) } else { "–".into() },
            fmt_duration(l.hand_kernels),
            c.launches,
            c.host_waits,
            c.allocations,
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "End to end: everything the caller waits for (the hand-written side: host preparation \
         such as splitting the matrix's (column, value) pairs, buffers, copies from and into \
         Vecs, kernels). Device-only: parcomp's RunStats.run of its last run; the hand-written \
         side's from its first copy to its last read finished. Kernels only: the hand-written \
         kernels (and the reads of a compaction's total between them) with the inputs already \
         on the device."
    );
    let bytes_in: Vec<String> =
        lines.iter().map(|l| format!("{} {}", l.name, fmt_bytes(l.counts.bytes_in))).collect();
    let bytes_out: Vec<String> =
        lines.iter().map(|l| format!("{} {}", l.name, fmt_bytes(l.counts.bytes_out))).collect();
    let _ = writeln!(
        out,
        "Hand-written bytes copied in: {}; copied out: {}.",
        bytes_in.join(", "),
        bytes_out.join(", ")
    );
    out
}
