//! The device report: the `bench_report` workloads run by `par!` on the device (CUDA or
//! OpenCL, whichever the automatic choice finds, or the one `PARCOMP_BACKEND` names), against
//! hand-written sequential and rayon code on the host's cores, interleaved in one process.
//!
//! ```text
//! cargo run --release --example gpu_report --features opencl            # reduced sizes
//! cargo run --release --example gpu_report --features opencl -- --full  # the guide's sizes
//! cargo run --release --example gpu_report --features cuda -- --full    # on an NVIDIA GPU
//! cargo run --release --example gpu_report --features opencl -- --baselines-only  # the last table
//! cargo run --release --example gpu_report --features cuda -- --no-baselines  # nothing compiled
//!     # at run time: with a kernel bundle (PARCOMP_KERNEL_BUNDLE) on a machine without NVRTC
//! ```
//!
//! For each workload: the end-to-end median on the device (everything a caller waits for:
//! program lookup, copies, kernels, reading back), the device run of its last run (from its
//! first copy to the last result read: the copies in, the kernels, the reads) and the time the
//! host spent queueing copies and waiting for reads (copies are asynchronous, so a wait includes
//! the kernels queued before it), the first run's program build (compiled now, or loaded from the disk cache), the
//! peak device memory, and the ratios against the host versions. Then the achieved bandwidth of
//! the expand kernel (bytes written per second of kernel time) and of the reduction kernel
//! (bytes read per second). On PoCL the "device" is this machine's CPU: the numbers describe an
//! OpenCL CPU runtime, not a GPU, and the report says so.

#[path = "support/baselines/mod.rs"]
mod baselines;
#[path = "support/device.rs"]
mod device;
#[path = "support/lines.rs"]
mod lines;
#[path = "support/pythagorean.rs"]
mod pythagorean;
#[path = "support/sieve.rs"]
mod sieve;
#[path = "support/timing.rs"]
mod timing;
#[path = "../benches/workloads/mod.rs"]
mod workloads;

use parcomp::{par_sum, trace, with_backend, Backend, RunStats};
use std::fmt::Write as _;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::time::{Duration, Instant};
use timing::{fmt_bytes, fmt_duration};
use workloads::*;

/// A fingerprint of a result: equal results, equal fingerprints (floats rounded).
trait Fingerprint {
    fn fingerprint(&self) -> u64;
    /// Whether `self` is the result `want` (by default: the same fingerprint).
    fn agrees(&self, want: &Self) -> bool {
        self.fingerprint() == want.fingerprint()
    }
}

/// Floats from the device's `exp` and `ln`, which agree with the CPU's within a tolerance
/// (the guide's devices chapter: 1e-5 relative for f32), not bit for bit: equal when every value is within the
/// absolute tolerance given.
struct Close(Vec<f32>, f32);

impl Fingerprint for Close {
    fn fingerprint(&self) -> u64 {
        self.0.len() as u64
    }
    fn agrees(&self, want: &Self) -> bool {
        self.0.len() == want.0.len()
            && self.0.iter().zip(&want.0).all(|(a, b)| (a - b).abs() <= want.1)
    }
}

impl<T: Hash> Fingerprint for Vec<T> {
    fn fingerprint(&self) -> u64 {
        let mut h = DefaultHasher::new();
        self.hash(&mut h);
        h.finish()
    }
}

impl Fingerprint for u64 {
    fn fingerprint(&self) -> u64 {
        *self
    }
}

struct Rounded(Vec<f64>);

impl Fingerprint for Rounded {
    fn fingerprint(&self) -> u64 {
        let v: Vec<i64> = self.0.iter().map(|x| (x * 1e6).round() as i64).collect();
        v.fingerprint()
    }
}

/// What one workload measured.
struct Row {
    name: String,
    size: String,
    /// Where the `par!` version ran, and why not on the device when it did not.
    placement: String,
    device: Duration,
    seq: Duration,
    rayon: Duration,
    first: Option<RunStats>,
    first_time: Duration,
    last: Option<RunStats>,
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// Runs the three versions `reps` times, interleaved, after one first run of the device
/// version (which builds its programs), and checks that they agree.
fn measure<T: Fingerprint>(
    backend: Backend,
    name: &str,
    size: String,
    reps: usize,
    on_device: &dyn Fn() -> T,
    seq: &dyn Fn() -> T,
    rayon: &dyn Fn() -> T,
) -> Row {
    eprint!("{name} ({size}):");
    let start = Instant::now();
    let (first, runs) = trace::record(|| with_backend(backend, on_device));
    let first_time = start.elapsed();
    let first_stats = parcomp::gpu_stats();
    let placement = match runs.iter().find(|r| r.backend != backend) {
        None => backend.to_string(),
        Some(run) => format!("{} ({})", run.backend, run.reason.clone().unwrap_or_default()),
    };
    let want = seq();
    assert!(first.agrees(&want), "{name}: the device differs from the sequential code");
    assert!(rayon().agrees(&want), "{name}: rayon differs from the sequential code");
    drop(want);
    let device = || with_backend(backend, on_device);
    let versions: [&dyn Fn() -> T; 3] = [&device, seq, rayon];
    let mut times = [Vec::new(), Vec::new(), Vec::new()];
    let mut last = None;
    for rep in 0..reps {
        for k in 0..3 {
            // Rotate the order every repetition.
            let v = (k + rep) % 3;
            let start = Instant::now();
            drop(std::hint::black_box(versions[v]()));
            times[v].push(start.elapsed());
            if v == 0 {
                last = parcomp::gpu_stats();
            }
        }
        eprint!(" {}", rep + 1);
    }
    eprintln!();
    let [d, s, r] = times;
    let on_device = placement == backend.name();
    Row {
        name: name.to_string(),
        size,
        placement,
        device: median(d),
        seq: median(s),
        rayon: median(r),
        first: if on_device { first_stats } else { None },
        first_time,
        last: if on_device { last } else { None },
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let full = args.iter().any(|a| a == "--full");
    let reps: usize = args
        .iter()
        .position(|a| a == "--reps")
        .and_then(|i| args.get(i + 1))
        .map(|n| n.parse().expect("--reps takes a number"))
        .unwrap_or(5);
    let Some((device, backend)) = device::device_or_exit("gpu_report") else {
        return;
    };
    let size = if full { Size::Full } else { Size::Reduced };
    rayon::broadcast(|_| ());
    if args.iter().any(|a| a == "--baselines-only") {
        let section = baselines_or_exit(backend, size, reps, "");
        print!("Device: {device}.\n\n{section}");
        return;
    }
    let mut rows = Vec::new();

    // What a device run costs whatever its size: launches, copies, reading back.
    rows.push(measure(
        backend,
        "0 ten elements",
        "10".into(),
        reps,
        &|| parcomp::par![x * 3 | x <- 0..10u32],
        &|| (0..10u32).map(|x| x * 3).collect::<Vec<_>>(),
        &|| {
            use rayon::prelude::*;
            (0..10u32).into_par_iter().map(|x| x * 3).collect::<Vec<_>>()
        },
    ));
    let n = pythagorean_n(size);
    rows.push(measure(
        backend,
        "1 pythagorean triples",
        format!("n = {n}"),
        reps,
        &|| pythagorean_par(n),
        &|| pythagorean_seq(n),
        &|| pythagorean_rayon(n),
    ));
    let input = lines_input(size);
    rows.push(measure(
        backend,
        "2 points of lines",
        format!("{} lines", input.len()),
        reps,
        &|| lines_par(&input),
        &|| lines_seq(&input),
        &|| lines_rayon(&input),
    ));
    let input = triangles_input(size);
    rows.push(measure(
        backend,
        "3 filled triangles",
        format!("{} triangles", input.len()),
        reps,
        &|| triangles_par(&input),
        &|| triangles_seq(&input),
        &|| triangles_rayon(&input),
    ));
    let n = sieve_n(size);
    rows.push(measure(
        backend,
        "4 sieve",
        format!("primes below {n}"),
        reps,
        &|| sieve_par(n),
        &|| sieve_seq(n),
        &|| sieve_rayon(n),
    ));
    let input = smvm_input(size);
    rows.push(measure(
        backend,
        "5 sparse matrix × vector",
        format!("{} rows, {} nonzeros", input.matrix.len(), input.matrix.values().len()),
        reps,
        &|| Rounded(smvm_par(&input)),
        &|| Rounded(smvm_seq(&input)),
        &|| Rounded(smvm_rayon(&input)),
    ));
    let input = skew_input(size);
    let skew_elements: u64 = input.iter().map(|&l| l as u64).sum();
    rows.push(measure(
        backend,
        "6 skewed expand",
        format!("{} rows, {skew_elements} elements", input.len()),
        reps,
        &|| skew_par(&input),
        &|| skew_seq(&input),
        &|| skew_rayon(&input),
    ));
    let input = options_input(size);
    let tolerance = 1e-5 * input.iter().map(|o| o.spot).fold(1.0, f32::max);
    rows.push(measure(
        backend,
        "7a Black-Scholes",
        format!("{} options", input.len()),
        reps,
        // Within 1e-5 of the largest spot: the prices' error follows the spot's.
        &|| Close(black_scholes_par(&input), tolerance),
        &|| Close(black_scholes_seq(&input), tolerance),
        &|| Close(black_scholes_rayon(&input), tolerance),
    ));
    let n = product_n(size);
    rows.push(measure(
        backend,
        "7b product with a filter",
        format!("{n} × {n}"),
        reps,
        &|| product_par(n),
        &|| product_seq(n),
        &|| product_rayon(n),
    ));
    let m = euclid_m(size);
    rows.push(measure(
        backend,
        "8 Euclid's triple count",
        format!("m < {m}"),
        reps,
        &|| euclid_par(m),
        &|| euclid_seq(m),
        &|| euclid_rayon(m),
    ));
    // A flat reduction over a captured slice: the reduction kernel's read bandwidth.
    let values: Vec<u64> =
        (0..1u64 << 24).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40).collect();
    rows.push(measure(
        backend,
        "9 sum of a slice",
        format!("{} u64", values.len()),
        reps,
        &|| par_sum![v | v <- &values],
        &|| values.iter().sum::<u64>(),
        &|| {
            use rayon::prelude::*;
            values.par_iter().sum::<u64>()
        },
    ));

    let mut out = String::new();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let _ = writeln!(out, "Device: {device}.");
    let _ = writeln!(
        out,
        "Host: {cores} cores, rayon with {} threads; medians of {reps} interleaved runs.",
        rayon::current_num_threads()
    );
    if device.to_lowercase().contains("portable computing language") || device.contains("pthread") {
        let _ = writeln!(
            out,
            "\nThis device is PoCL: OpenCL on this machine's CPU. The numbers describe an OpenCL \
             CPU runtime sharing the host's cores, not a GPU; they show that every kernel runs, \
             not how fast a GPU runs them."
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "| workload | size | ran on | end-to-end | device run | of it, host in copies and waits | first run (build) | \
         peak device memory | seq | rayon | device/seq | device/rayon |"
    );
    let _ = writeln!(out, "|---|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|");
    for row in &rows {
        let (kernel, transfer, peak) = match &row.last {
            Some(s) => (fmt_duration(s.run), fmt_duration(s.transfer), fmt_bytes(s.peak_memory)),
            None => ("–".into(), "–".into(), "–".into()),
        };
        let first = match &row.first {
            Some(s) => format!(
                "{} ({} compiled, {} from cache, {} from a bundle: {})",
                fmt_duration(row.first_time),
                s.programs_compiled,
                s.programs_loaded,
                s.programs_bundled,
                fmt_duration(s.compile)
            ),
            None => fmt_duration(row.first_time),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.2} | {:.2} |",
            row.name,
            row.size,
            row.placement,
            fmt_duration(row.device),
            kernel,
            transfer,
            first,
            peak,
            fmt_duration(row.seq),
            fmt_duration(row.rayon),
            row.device.as_secs_f64() / row.seq.as_secs_f64(),
            row.device.as_secs_f64() / row.rayon.as_secs_f64(),
        );
    }
    let _ = writeln!(out);
    let peak = parcomp::gpu_device(backend).ok().and_then(|d| d.peak_bandwidth);
    let bandwidth = |bytes: u64, time: Duration| {
        let rate = bytes as f64 / time.as_secs_f64().max(1e-9);
        match peak {
            Some(peak) => format!(
                "{:.2} GB/s, {:.0}% of the device's peak {:.0} GB/s",
                rate / 1e9,
                100.0 * rate / peak,
                peak / 1e9
            ),
            None => format!("{:.2} GB/s", rate / 1e9),
        }
    };
    if let Some(stats) =
        rows.iter().find(|r| r.name.starts_with("6 ")).and_then(|r| r.last.as_ref())
    {
        let _ = writeln!(
            out,
            "Expand (6): {} elements of 4 bytes written in a device run of {}: {}, {} read back.",
            skew_elements,
            fmt_duration(stats.run),
            bandwidth(skew_elements * 4, stats.run),
            fmt_bytes(stats.bytes_out)
        );
    }
    if let Some(stats) =
        rows.iter().find(|r| r.name.starts_with("9 ")).and_then(|r| r.last.as_ref())
    {
        let bytes = values.len() as u64 * 8;
        let _ = writeln!(
            out,
            "Reduction (9): {} read in a device run of {}: {}; {} copied in, {} launches.",
            fmt_bytes(bytes),
            fmt_duration(stats.run),
            bandwidth(bytes, stats.run),
            fmt_bytes(stats.bytes_in),
            stats.launches
        );
    }
    // The hand-written baselines, after every other row, so that their data sets are not held
    // while the rows above run. `--no-baselines` leaves them out: they are compiled at run time
    // (NVRTC on CUDA), which a run from a kernel bundle on a machine without NVRTC cannot do.
    let _ = writeln!(out);
    if args.iter().any(|a| a == "--no-baselines") {
        let _ = writeln!(out, "(The hand-written baselines were not run: --no-baselines.)");
    } else {
        let section = baselines_or_exit(backend, size, reps, &out);
        out.push_str(&section);
    }
    print!("{out}");
}

/// The hand-written baselines' section; on a failure, prints what the report has so far
/// (`done`) and the error, and exits with status 1.
fn baselines_or_exit(backend: Backend, size: Size, reps: usize, done: &str) -> String {
    baselines::report(backend, size, reps).unwrap_or_else(|e| {
        print!("{done}");
        eprintln!("gpu_report: the hand-written baselines failed: {e}");
        std::process::exit(1)
    })
}
