//! Primes below n by *expansion*: the flattened sieve of Eratosthenes of *Data-parallel
//! flattening by expansion* (Elsman, Henriksen and Serup, ARRAY'19), written with `par!`.
//!
//! Each round knows the primes `ps` below `c` and sieves `[c, c2)`, `c2 = min(c², n)`: the
//! multiples of every prime expand into one flat comprehension,
//!
//! ```text
//! par![p * k | p <- &ps, k <- first_multiple(p, c)..ceil_div(c2, p)]
//! ```
//!
//! whose rows are very uneven (2 has hundreds of thousands of multiples, a prime near √n just
//! one), which is exactly what flattening by expansion balances across cores. The code is in
//! `examples/support/sieve.rs`, shared with the tests.
//!
//! ```text
//! cargo run --release --example sieve               # n = 10,000,000
//! cargo run --release --example sieve -- 100000000  # n = 10^8 (5,761,455 primes)
//! ```

#[path = "support/sieve.rs"]
mod sieve;
#[path = "support/timing.rs"]
mod timing;

use timing::{fmt_duration, median_time};

/// Timed runs of each version; the median is reported.
const RUNS: usize = 3;

fn main() {
    let n: usize = match std::env::args().nth(1) {
        None => 10_000_000,
        Some(arg) => match arg.replace('_', "").parse() {
            Ok(n) => n,
            Err(_) => {
                eprintln!("usage: sieve [N]   (primes below N, default 10000000); got {arg:?}");
                std::process::exit(2);
            }
        },
    };

    println!("primes below {n} by the flattened sieve (flattening by expansion, ARRAY'19)");
    println!("  multiples: par![p * k | p <- &ps, k <- first_multiple(p, c)..ceil_div(c2, p)]");
    println!("  new primes: par![x | x <- c..c2, !composite[x - c]]");
    println!();

    // One untimed run that reports its rounds, so that the reader sees the expansion at work:
    // the paper's rounds grow as c², then (for large n) capped rounds follow.
    let mut rounds = Vec::new();
    let primes = sieve::primes_below_traced(n, |r| rounds.push(r));
    println!("{:>24}  {:>9}  {:>12}  {:>10}", "round [c, c2)", "sieving", "multiples", "primes");
    for (k, r) in rounds.iter().enumerate() {
        // Long runs of capped rounds look alike: show the first ones and the last one.
        if k == 7 && rounds.len() > 9 {
            println!("{:>24}", format!("… {} more rounds …", rounds.len() - 8));
        }
        if k < 7 || k + 1 == rounds.len() || rounds.len() <= 9 {
            let range = format!("[{}, {})", r.start, r.end);
            println!(
                "{range:>24}  {:>9}  {:>12}  {:>10}",
                r.sieving_primes, r.multiples, r.new_primes
            );
        }
    }
    println!(
        "({} rounds; a round sieves at most {} numbers, which bounds the memory)",
        rounds.len(),
        sieve::MAX_ROUND
    );
    println!();

    let last: Vec<usize> = primes.iter().rev().take(5).rev().copied().collect();
    println!("{} primes below {n}; the last ones: {last:?}", primes.len());
    println!();

    // Timings: the comprehension sieve on every core, the same on one thread (the sequential
    // backend), and a plain sequential sieve of Eratosthenes as a Rust programmer writes it.
    let threads = rayon::current_num_threads();
    let (t_par, by_expansion) = median_time(RUNS, || sieve::primes_below(n));
    let (t_seq_backend, _) = median_time(RUNS, || {
        parcomp::with_backend(parcomp::Backend::Sequential, || sieve::primes_below(n))
    });
    let (t_plain, plain) = median_time(RUNS, || sieve::eratosthenes(n));
    assert_eq!(by_expansion, primes, "two runs of the expansion sieve disagree");
    assert_eq!(
        by_expansion.len(),
        plain.len(),
        "the expansion sieve and the plain sieve count different primes"
    );
    assert_eq!(by_expansion, plain, "the expansion sieve and the plain sieve disagree");

    println!("time (median of {RUNS} runs, rayon uses {threads} threads):");
    let relative = |t: std::time::Duration| t.as_secs_f64() / t_par.as_secs_f64();
    println!("  expansion sieve, par! on rayon    {:>10}", fmt_duration(t_par));
    println!(
        "  expansion sieve, par! sequential  {:>10}   {:.2}x the time of par! on rayon \
         (the comprehensions on one thread)",
        fmt_duration(t_seq_backend),
        relative(t_seq_backend)
    );
    println!(
        "  plain sequential Eratosthenes     {:>10}   {:.2}x the time of par! on rayon",
        fmt_duration(t_plain),
        relative(t_plain)
    );
    println!("both sieves agree: {} primes", plain.len());
}
