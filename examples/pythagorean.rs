//! Pythagorean triples below n — the seed paper's section 2 example — three ways:
//!
//! - `par!`, exactly as the paper writes the comprehension;
//! - the sequential nested loops a Rust programmer writes by hand;
//! - the idiomatic rayon version, `(1..n).into_par_iter().flat_map_iter(..)`.
//!
//! The iteration space is irregular: `y` runs over `x..n` and `z` over `y..x + y`, so the work
//! per `x` grows with `x`. `par!` flattens the three generators by expansion and splits the
//! whole space evenly across the cores.
//!
//! ```text
//! cargo run --release --example pythagorean          # n = 2000
//! cargo run --release --example pythagorean -- 1000
//! ```

#[path = "support/pythagorean.rs"]
mod pythagorean;
#[path = "support/timing.rs"]
mod timing;

use timing::{fmt_duration, median_time};

/// Timed runs of each version; the median is reported.
const RUNS: usize = 5;

fn main() {
    let n: i32 = match std::env::args().nth(1) {
        None => 2000,
        // x, y < n keeps x² + y² < 2n² within i32 (the paper's element type) up to 32767.
        Some(arg) => match arg.parse() {
            Ok(n) if (0..=32_767).contains(&n) => n,
            _ => {
                eprintln!("usage: pythagorean [N]   (0 <= N <= 32767, default 2000); got {arg:?}");
                std::process::exit(2);
            }
        },
    };

    println!("Pythagorean triples x² + y² = z², x <= y < z < {n}");
    println!(
        "  par![(x, y, z) | x <- 1..n, y <- x..n, z <- y..x + y, z < n, x * x + y * y == z * z]"
    );
    println!();

    // Each version is run RUNS times; the runs are interleaved version by version so that a
    // burst of load on the machine does not favour one of them.
    let mut times = [Vec::new(), Vec::new(), Vec::new()];
    let mut results = [Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..RUNS {
        let runs: [fn(i32) -> Vec<pythagorean::Triple>; 3] =
            [pythagorean::by_comprehension, pythagorean::by_loops, pythagorean::by_rayon];
        for (k, run) in runs.iter().enumerate() {
            let (t, r) = median_time(1, || run(n));
            times[k].push(t);
            results[k] = r;
        }
    }
    let median = |k: usize| {
        let mut t = times[k].clone();
        t.sort();
        t[t.len() / 2]
    };
    let [par_result, loops_result, rayon_result] = results;

    // All three enumerate the same space in the same order, so the vectors must be identical.
    assert_eq!(par_result, loops_result, "par! and the sequential loops disagree");
    assert_eq!(rayon_result, loops_result, "rayon and the sequential loops disagree");

    let triples = &par_result;
    println!("{} triples", triples.len());
    if let (Some(first), Some(last)) = (triples.first(), triples.last()) {
        println!("first {first:?}, last {last:?}");
        println!("{}", timing::abbreviate(triples, 4));
    }
    println!();

    let (t_par, t_loops, t_rayon) = (median(0), median(1), median(2));
    let threads = rayon::current_num_threads();
    let ratio = |t: std::time::Duration| t.as_secs_f64() / t_par.as_secs_f64();
    println!("time, median of {RUNS} runs (rayon uses {threads} threads):");
    println!("  par!                       {:>10}", fmt_duration(t_par));
    println!(
        "  sequential nested loops    {:>10}   {:.2}x the time of par!",
        fmt_duration(t_loops),
        ratio(t_loops)
    );
    println!(
        "  rayon flat_map_iter        {:>10}   {:.2}x the time of par!",
        fmt_duration(t_rayon),
        ratio(t_rayon)
    );
    println!("all three agree.");
}
