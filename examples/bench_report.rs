//! The benchmark report: every workload as `par!`, as hand-written sequential code and as
//! idiomatic rayon, interleaved in one process, and a markdown table of the medians, the
//! ratios, and the peak memory of each version.
//!
//! ```text
//! cargo run --release --example bench_report              # the full sizes (the guide's table)
//! cargo run --release --example bench_report -- --quick   # a tenth of the sizes, 3 repetitions
//! cargo run --release --example bench_report -- --reps 9 --only smvm
//! ```
//!
//! Runs are interleaved (par!, sequential, rayon, par!, ...; the order rotates every
//! repetition) so that a machine that gets busier or quieter during the report affects all
//! three alike; the median of the repetitions is reported. Peak memory is measured by a counting
//! allocator: the most bytes live at once during a run, plus the inputs, divided by the output
//! plus the inputs (1.00 means no memory beyond the result).

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

use std::alloc::{GlobalAlloc, Layout, System};
use std::fmt::Write as _;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use timing::fmt_bytes;
use workloads::*;

/// Counts the bytes allocated and the most ever live at once.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every method forwards to the system allocator with the same arguments; the counters
// are only bookkeeping and do not affect what is allocated.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged; the caller upholds `GlobalAlloc::alloc`'s contract.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged; `ptr` was allocated by `alloc` with `layout`.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded unchanged; the caller upholds `GlobalAlloc::realloc`'s contract.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                let live = LIVE.fetch_add(new_size - layout.size(), Ordering::Relaxed) + new_size
                    - layout.size();
                PEAK.fetch_max(live, Ordering::Relaxed);
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// What one run of one version measured.
#[derive(Clone, Copy)]
struct Run {
    time: Duration,
    /// The most bytes live at once during the run, beyond those live before it.
    peak: usize,
}

/// The result of a version, reduced to what is needed to compare versions.
trait Output {
    /// A fingerprint: equal results, equal fingerprints.
    fn fingerprint(&self) -> Vec<u64>;
}

impl<T: Hash> Output for Vec<T> {
    fn fingerprint(&self) -> Vec<u64> {
        let mut h = DefaultHasher::new();
        self.hash(&mut h);
        vec![self.len() as u64, h.finish()]
    }
}

impl Output for u64 {
    fn fingerprint(&self) -> Vec<u64> {
        vec![*self]
    }
}

/// Floats are compared rounded: a parallel sum adds in a different order.
struct Floats<T>(Vec<T>);

impl Output for Floats<f64> {
    fn fingerprint(&self) -> Vec<u64> {
        self.0.iter().map(|v| (v * 1e6).round() as i64 as u64).collect()
    }
}

impl Output for Floats<f32> {
    fn fingerprint(&self) -> Vec<u64> {
        let mut h = DefaultHasher::new();
        for v in &self.0 {
            v.to_bits().hash(&mut h);
        }
        vec![self.0.len() as u64, h.finish()]
    }
}

type Version<'a> = (&'static str, Box<dyn Fn() -> Box<dyn Output> + 'a>);

/// One row of the table.
struct Row {
    name: String,
    size: String,
    input_bytes: usize,
    output_bytes: usize,
    /// Medians and peaks of par!, sequential, rayon.
    runs: Vec<(Duration, usize)>,
}

fn measure(name: &str, size: &str, input_bytes: usize, versions: Vec<Version>, reps: usize) -> Row {
    eprint!("{name} ({size}):");
    let mut runs: Vec<Vec<Run>> = vec![Vec::new(); versions.len()];
    let mut output_bytes = 0;
    let mut reference: Option<Vec<u64>> = None;
    for rep in 0..reps {
        for k in 0..versions.len() {
            // Rotate the order every repetition.
            let v = (k + rep) % versions.len();
            let (label, run) = &versions[v];
            let before = LIVE.load(Ordering::Relaxed);
            PEAK.store(before, Ordering::Relaxed);
            let start = Instant::now();
            let output = run();
            let time = start.elapsed();
            let peak = PEAK.load(Ordering::Relaxed) - before;
            if rep == 0 {
                // The tightest of the versions: a `Vec` grown by pushing holds spare capacity.
                let retained = LIVE.load(Ordering::Relaxed) - before;
                output_bytes = if k == 0 { retained } else { output_bytes.min(retained) };
                let fingerprint = output.fingerprint();
                match &reference {
                    None => reference = Some(fingerprint),
                    Some(r) => {
                        assert!(*r == fingerprint, "{name}: {label} differs from the others")
                    }
                }
            }
            drop(output);
            runs[v].push(Run { time, peak });
        }
        eprint!(" {}", rep + 1);
    }
    eprintln!();
    let runs = runs
        .into_iter()
        .map(|mut r| {
            r.sort_by_key(|run| run.time);
            let peak = r.iter().map(|run| run.peak).max().unwrap_or(0);
            (r[r.len() / 2].time, peak)
        })
        .collect();
    Row { name: name.to_string(), size: size.to_string(), input_bytes, output_bytes, runs }
}

/// The bytes allocated by `f` and still live when it returns, and what it returned.
fn allocated<T>(f: impl FnOnce() -> T) -> (usize, T) {
    let before = LIVE.load(Ordering::Relaxed);
    let value = f();
    (LIVE.load(Ordering::Relaxed).saturating_sub(before), value)
}

/// The identity: results that compare exactly.
fn same<T>(value: T) -> T {
    value
}

fn fmt_time(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 1e-3 {
        format!("{:.1} ms", s * 1e3)
    } else {
        format!("{:.1} µs", s * 1e6)
    }
}

fn main() {
    // The table compares the CPU backends with hand-written CPU code: with a GPU feature on,
    // the device is left to `gpu_report`.
    parcomp::with_backend(parcomp::Backend::Rayon, report);
}

fn report() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let reps: usize = args
        .iter()
        .position(|a| a == "--reps")
        .and_then(|i| args.get(i + 1))
        .map(|n| n.parse().expect("--reps takes a number"))
        .unwrap_or(if quick { 3 } else { 7 });
    let only: Option<&str> =
        args.iter().position(|a| a == "--only").and_then(|i| args.get(i + 1)).map(String::as_str);
    let size = if quick { Size::Reduced } else { Size::Full };
    let wanted = |name: &str| only.is_none_or(|o| name.contains(o));

    rayon::broadcast(|_| ());
    let mut rows = Vec::new();

    macro_rules! workload {
        ($name:expr, $size:expr, $input:expr, $par:expr, $seq:expr, $rayon:expr, $wrap:expr) => {
            if wanted($name) {
                let (input_bytes, input) = allocated($input);
                let versions: Vec<Version> = vec![
                    ("par!", Box::new(|| Box::new($wrap($par(&input))) as Box<dyn Output>)),
                    ("sequential", Box::new(|| Box::new($wrap($seq(&input))) as Box<dyn Output>)),
                    ("rayon", Box::new(|| Box::new($wrap($rayon(&input))) as Box<dyn Output>)),
                ];
                rows.push(measure($name, &$size, input_bytes, versions, reps));
            }
        };
    }
    for (tag, size) in [("", size), (" (10 elements)", Size::Tiny)] {
        let n = pythagorean_n(size);
        workload!(
            &format!("1 pythagorean triples{tag}"),
            format!("n = {n}"),
            || n,
            |n: &i32| pythagorean_par(*n),
            |n: &i32| pythagorean_seq(*n),
            |n: &i32| pythagorean_rayon(*n),
            same
        );
        let count = lines_input(size).len();
        workload!(
            &format!("2 points of lines{tag}"),
            format!("{count} lines"),
            || lines_input(size),
            |l: &Vec<_>| lines_par(l),
            |l: &Vec<_>| lines_seq(l),
            |l: &Vec<_>| lines_rayon(l),
            same
        );
        let count = triangles_input(size).len();
        workload!(
            &format!("3 filled triangles{tag}"),
            format!("{count} triangles"),
            || triangles_input(size),
            |t: &Vec<_>| triangles_par(t),
            |t: &Vec<_>| triangles_seq(t),
            |t: &Vec<_>| triangles_rayon(t),
            same
        );
        let n = sieve_n(size);
        workload!(
            &format!("4 sieve{tag}"),
            format!("primes below {n}"),
            || n,
            |n: &usize| sieve_par(*n),
            |n: &usize| sieve_seq(*n),
            |n: &usize| sieve_rayon(*n),
            same
        );
        let probe = smvm_input(size);
        let desc = format!("{} rows, {} nonzeros", probe.matrix.len(), probe.matrix.values().len());
        drop(probe);
        workload!(
            &format!("5 sparse matrix × vector{tag}"),
            desc,
            || smvm_input(size),
            |i: &Smvm| smvm_par(i),
            |i: &Smvm| smvm_seq(i),
            |i: &Smvm| smvm_rayon(i),
            Floats
        );
        let lengths = skew_input(size);
        let desc = format!(
            "{} rows, {} elements",
            lengths.len(),
            lengths.iter().map(|&l| l as u64).sum::<u64>()
        );
        workload!(
            &format!("6 skewed expand{tag}"),
            desc,
            || skew_input(size),
            |l: &Vec<u32>| skew_par(l),
            |l: &Vec<u32>| skew_seq(l),
            |l: &Vec<u32>| skew_rayon(l),
            same
        );
        let desc = format!("{} options", options_input(size).len());
        workload!(
            &format!("7a Black-Scholes{tag}"),
            desc,
            || options_input(size),
            |o: &Vec<_>| black_scholes_par(o),
            |o: &Vec<_>| black_scholes_seq(o),
            |o: &Vec<_>| black_scholes_rayon(o),
            Floats
        );
        let n = product_n(size);
        workload!(
            &format!("7b product with a filter{tag}"),
            format!("{n} × {n}"),
            || n,
            |n: &u32| product_par(*n),
            |n: &u32| product_seq(*n),
            |n: &u32| product_rayon(*n),
            same
        );
        let m = euclid_m(size);
        workload!(
            &format!("8 Euclid's triple count{tag}"),
            format!("m < {m}"),
            || m,
            |m: &u64| euclid_par(*m),
            |m: &u64| euclid_seq(*m),
            |m: &u64| euclid_rayon(*m),
            same
        );
    }
    // One row only: its point is the cost of a call, which the size does not change.
    let calls = tiny_calls(size);
    workload!(
        "9 many tiny comprehensions",
        format!("{calls} calls of 4-12 elements"),
        || calls,
        |c: &i64| tiny_calls_par(*c),
        |c: &i64| tiny_calls_seq(*c),
        |c: &i64| tiny_calls_rayon(*c),
        same
    );

    let threads = rayon::current_num_threads();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let mut out = String::new();
    let _ = writeln!(out, "Machine: {cores} cores ({cpu}), rayon with {threads} threads; medians of {reps} interleaved runs.\n");
    let _ = writeln!(out, "| workload | size | par! | sequential | rayon | par!/seq | par!/rayon | peak memory par! / seq / rayon |");
    let _ = writeln!(out, "|---|---|---:|---:|---:|---:|---:|---|");
    for row in &rows {
        let [(p, _), (s, _), (r, _)] = [row.runs[0], row.runs[1], row.runs[2]];
        let base = row.output_bytes + row.input_bytes;
        // As a multiple of output + input when those are large enough for the multiple to
        // mean something; the bytes beyond them otherwise (a scalar result, a few kB).
        let memory = if base >= 1 << 20 {
            let ratio = |peak: usize| (peak + row.input_bytes) as f64 / base as f64;
            format!(
                "{:.2} / {:.2} / {:.2} × ({} + {})",
                ratio(row.runs[0].1),
                ratio(row.runs[1].1),
                ratio(row.runs[2].1),
                fmt_bytes(row.output_bytes as u64),
                fmt_bytes(row.input_bytes as u64)
            )
        } else {
            let beyond = |peak: usize| fmt_bytes(peak.saturating_sub(row.output_bytes) as u64);
            format!(
                "+{} / +{} / +{} (output {})",
                beyond(row.runs[0].1),
                beyond(row.runs[1].1),
                beyond(row.runs[2].1),
                fmt_bytes(row.output_bytes as u64)
            )
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {:.2} | {:.2} | {} |",
            row.name,
            row.size,
            fmt_time(p),
            fmt_time(s),
            fmt_time(r),
            p.as_secs_f64() / s.as_secs_f64(),
            p.as_secs_f64() / r.as_secs_f64(),
            memory,
        );
    }
    print!("{out}");
}
