//! A tour of parcomp: the examples of the papers behind it, each shown as the comprehension's
//! source text, its result and its time.
//!
//! ```text
//! cargo run --release --example tour
//! ```
//!
//! - (a) `expand (λx→x) (*) [2,3,1]`, the primitive of flattening by expansion;
//! - (b) Pythagorean triples (comprehension paper, section 2), timed against plain loops;
//! - (c) the points of 6 lines (comprehension paper, section 5), drawn as text;
//! - (d) a sparse matrix × vector product (CSR) as a nested comprehension;
//! - (e) primes below 1,000,000 by the flattened sieve (flattening-by-expansion paper);
//! - (f) what a comprehension is compiled into, from `par_explain!`;
//! - (g) the kernel source generated for it, `par_kernel!`, and a run on the OpenCL device
//!   (PoCL runs it on the CPU), with where each comprehension ran.
//!
//! (a) to (f) run on rayon, whatever devices there are: their times compare with plain loops.
//!
//! With `--check-kernels`, the tour ends by listing its device-capable comprehensions that no
//! kernel bundle covers (`parcomp::kernels::missing`) and fails if there is one: CI runs it with
//! the bundle of its own recorded programs.

#[path = "support/lines.rs"]
mod lines;
#[path = "support/pythagorean.rs"]
mod pythagorean;
#[path = "support/sieve.rs"]
mod sieve;
#[path = "support/timing.rs"]
mod timing;

use lines::{get_point_in_line, points_in_line};
use parcomp::{par, par_explain, par_kernel, par_sum, trace, with_backend, Backend, Jagged};
use std::time::Instant;
use timing::{abbreviate, fmt_duration, median_time};

/// Evaluates a comprehension and returns its source text (as written here), its value and how
/// long it took, so that what is printed is exactly what ran.
macro_rules! run {
    ($($comprehension:tt)*) => {{
        // `stringify!` keeps the spacing of the source but may wrap long lines; undo that.
        let source = stringify!($($comprehension)*).split_whitespace().collect::<Vec<_>>().join(" ");
        let start = Instant::now();
        let value = $($comprehension)*;
        (source, value, start.elapsed())
    }};
}

fn main() {
    // Start rayon's worker threads now, so that the first timing below does not include it.
    rayon::broadcast(|_| ());
    let threads = rayon::current_num_threads();
    println!("parcomp tour — comprehensions run on rayon, {threads} threads\n");

    with_backend(Backend::Rayon, || {
        expand_example();
        pythagorean_example();
        lines_example();
        smvm_example();
        sieve_example();
        explain_example();
    });
    device_example();
    backends_agree();
    if std::env::args().any(|a| a == "--check-kernels") {
        check_kernels();
    }
}

/// Lists the device-capable comprehensions no kernel bundle covers, and fails if there is one.
fn check_kernels() {
    let missing = parcomp::kernels::missing().unwrap_or_else(|e| panic!("{e}"));
    println!("\nDevice-capable comprehensions without a precompiled program: {}", missing.len());
    for site in &missing {
        println!("  {site}");
    }
    if !missing.is_empty() {
        std::process::exit(1);
    }
}

fn heading(title: &str) {
    println!("{title}");
    println!("{}", "-".repeat(title.chars().count()));
}

/// Prints a comprehension, its (abbreviated) result and its time.
fn show(source: &str, result: &str, time: std::time::Duration) {
    println!("  {source}");
    println!("  = {result}");
    println!("  ({})", fmt_duration(time));
}

/// (a) `expand size get xs` makes `size(x)` elements `get(x, i)` of every `x`; as a
/// comprehension it is just two generators, the second sized by the first.
fn expand_example() {
    heading("(a) expand (λx→x) (*) [2,3,1]  — the primitive of flattening by expansion");
    let (source, v, t) = run!(par![x * i | x <- [2, 3, 1], i <- 0..x]);
    show(&source, &format!("{v:?}"), t);
    assert_eq!(v, [0, 2, 0, 3, 6, 0]);
    println!();
}

/// (b) The comprehension paper's first example: an irregular, filtered triple loop.
fn pythagorean_example() {
    heading("(b) Pythagorean triples (comprehension paper, section 2)");
    let n = 100;
    let (source, triples, t) =
        run!(par![(x, y, z) | x <- 1..n, y <- x..n, z <- y..x + y, z < n, x * x + y * y == z * z]);
    println!("  n = {n}");
    show(&source, &abbreviate(&triples, 3), t);
    assert_eq!(triples.len(), 50);
    assert_eq!((triples[0], triples[49]), ((3, 4, 5), (65, 72, 97)));

    // The same for a larger n against the nested loops one writes by hand. Both enumerate the
    // same iteration space (~1.7·10⁸ candidates), so the ratio is the gain of running on every
    // core with the work balanced by expansion.
    let n = 1000;
    let runs = 3;
    let (t_par, by_par) = median_time(runs, || pythagorean::by_comprehension(n));
    let (t_seq, by_loops) = median_time(runs, || pythagorean::by_loops(n));
    assert_eq!(by_par, by_loops);
    let speedup = t_seq.as_secs_f64() / t_par.as_secs_f64();
    let verdict = if speedup >= 1.0 {
        format!("par! {speedup:.2}x faster")
    } else {
        format!("par! {:.2}x slower", 1.0 / speedup)
    };
    println!(
        "  n = {n}: {} triples; par! {} vs sequential nested loops {} — {verdict} \
         (median of {runs} runs, {} rayon threads)",
        by_par.len(),
        fmt_duration(t_par),
        fmt_duration(t_seq),
        rayon::current_num_threads()
    );
    println!();
}

/// (c) Lines by expansion: every line expands into as many points as it is long.
fn lines_example() {
    heading("(c) points of lines (comprehension paper, section 5)");
    // The 6 lines of tests/data/reference.json "points_of_lines", on a 70×30 grid.
    let lines = lines::REFERENCE_LINES.to_vec();
    let (source, points, t) =
        run!(par![get_point_in_line(line, i) | line <- &lines, i <- 0..points_in_line(line)]);
    show(&source, &abbreviate(&points, 3), t);
    let grid = lines::rasterize(&points, lines::REFERENCE_WIDTH, lines::REFERENCE_HEIGHT);
    for row in lines::grid_rows(&grid, '#', '.') {
        println!("    {row}");
    }
    println!("  (`cargo run --release --example lines` also writes it as lines.png)");
    println!();
}

/// (d) Sparse matrix × vector: a sum per row, nested in a comprehension over the rows.
fn smvm_example() {
    heading("(d) sparse matrix × vector (CSR), a nested comprehension");
    // The CSR matrix of tests/data/reference.json "smvm_csr" (from the flattening-by-expansion
    // paper's artifact): row i holds the (column, value) pairs offsets[i]..offsets[i + 1].
    let offsets = vec![0, 3, 5, 8, 9, 11];
    let columns = [0, 1, 3, 1, 2, 1, 2, 3, 3, 3, 4];
    let values = [1, 2, 11, 3, 4, 5, 6, 7, 8, 9, 10];
    let x = [3, 1, 2, 6, 5];
    let pairs: Vec<(usize, i64)> = columns.into_iter().zip(values).collect();
    let m = Jagged::from_parts(offsets, pairs).expect("valid CSR offsets");

    // The rows are read in place (`m.row(i)` is sized without building anything), and all row
    // sums run inside one parallel run over the rows, not one parallel sum per row.
    let (source, y, t) = run!(par![par_sum![v * x[c] | (c, v) <- m.row(i)] | i <- 0..m.len()]);
    show(&source, &format!("{y:?}"), t);
    assert_eq!(y, [71, 11, 59, 48, 104]);

    // An empty row gives 0 and keeps its place (the pitfall the flattening paper warns about).
    let mut rows: Vec<Vec<(usize, i64)>> = m.iter().map(<[_]>::to_vec).collect();
    rows.insert(2, Vec::new());
    let m = Jagged::from(rows);
    let (source, y, t) = run!(par![par_sum![v * x[c] | (c, v) <- m.row(i)] | i <- 0..m.len()]);
    println!("  with an empty row inserted at index 2:");
    show(&source, &format!("{y:?}"), t);
    assert_eq!(y, [71, 11, 0, 59, 48, 104]);
    println!();
}

/// (e) The flattened sieve of Eratosthenes: each round expands every known prime into its
/// multiples in the next range.
fn sieve_example() {
    heading("(e) primes below 1,000,000 by expansion (flattening-by-expansion paper)");
    println!("  each round, with the primes ps below c known, sieves [c, c2 = min(c², n)):");
    println!("  multiples  = par![p * k | p <- &ps, k <- first_multiple(p, c)..ceil_div(c2, p)]");
    println!("  new primes = par![x | x <- c..c2, !composite[x - c]]");
    let n = 1_000_000;
    let start = Instant::now();
    let primes = sieve::primes_below(n);
    let t = start.elapsed();
    println!("  = {} primes, {}", primes.len(), abbreviate(&primes, 4));
    println!("  ({})", fmt_duration(t));
    assert_eq!(primes.len(), 78_498);
    println!();
}

/// (f) `par_explain!` shows the chain of runtime stages a comprehension became.
fn explain_example() {
    heading("(f) the plan: par_explain![...]");
    let n = 100;
    let plan = par_explain![(x, y, z) | x <- 1..n, y <- x..n, z <- y..x + y, z < n, x * x + y * y == z * z];
    for line in plan.lines() {
        println!("  {line}");
    }
    println!();
}

/// (g) The kernels generated for a comprehension, and the comprehension run on the device.
fn device_example() {
    heading("(g) on a device: par_kernel![...] and where it ran");
    let source =
        par_kernel![(x, y, z) | x <- 1..n, y <- x..n, z <- y..x + y, z < n, x * x + y * y == z * z];
    let kernels = source.matches("PC_KERNEL void").count();
    println!(
        "  {kernels} kernels, {} lines of C; the last level's, which runs the filters:",
        source.lines().count()
    );
    let last = source.rfind("/* `z <- y..x + y`").unwrap_or(0);
    for line in source[last..].lines().take_while(|l| !l.is_empty()) {
        println!("    {line}");
    }
    let report = parcomp::backend();
    println!("  {report}");
    if report.device.is_none() {
        println!("  (no OpenCL device here: install PoCL, `apt-get install pocl-opencl-icd`)\n");
        return;
    }
    let start = Instant::now();
    let (on_device, runs) =
        trace::record(|| with_backend(Backend::OpenCl, || pythagorean::by_comprehension(300)));
    let t = start.elapsed();
    for run in &runs {
        println!("  ran: {run}");
    }
    assert_eq!(on_device, with_backend(Backend::Sequential, || pythagorean::by_comprehension(300)));
    println!(
        "  = {} triples with n = 300, the same as on the CPU ({}, including the program build or \
         its load from the disk cache)",
        on_device.len(),
        fmt_duration(t)
    );
    println!();
}

/// The same comprehensions on the sequential reference backend give the same vectors.
fn backends_agree() {
    heading("every backend, the same result");
    let lines = lines::REFERENCE_LINES.to_vec();
    let compute = || {
        (
            par![x * i | x <- [2, 3, 1], i <- 0..x],
            pythagorean::by_comprehension(300),
            par![get_point_in_line(line, i) | line <- &lines, i <- 0..points_in_line(line)],
            sieve::primes_below(100_000),
        )
    };
    let on_rayon = parcomp::with_backend(Backend::Rayon, compute);
    let on_sequential = parcomp::with_backend(Backend::Sequential, compute);
    assert!(on_rayon == on_sequential, "the backends disagree");
    println!(
        "  (a), (b) with n = 300, (c) and (e) with n = 100,000 give identical vectors on {} and {}",
        Backend::Rayon,
        Backend::Sequential
    );
}
