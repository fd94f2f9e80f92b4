//! The flattened sieve of Eratosthenes of *Data-parallel flattening by expansion* (Elsman,
//! Henriksen and Serup, ARRAY'19), written with `par!`.
//!
//! The sieve runs in rounds. With the primes `ps` below `c` known, every composite number below
//! `c²` has a prime factor in `ps`, so the round sieves the range `[c, c2)` with
//! `c2 = min(c², n)`: the multiples of every `p` in `ps` that fall in the range are
//!
//! ```text
//! par![p * k | p <- &ps, k <- first_multiple(p, c)..ceil_div(c2, p)]
//! ```
//!
//! — an irregular expansion (a small prime has many multiples, a large one few or none), which
//! the comprehension flattens into one balanced parallel loop. The numbers of the range that are
//! not among them are the next primes: `par![x | x <- c..c2, !composite[x - c]]`. Starting from
//! `c = 2` with no primes, the rounds cover `[2, 4)`, `[4, 16)`, `[16, 256)`, `[256, 65536)`, ….
//!
//! Two refinements keep the work and memory down without changing the idea: only the primes with
//! `p * p < c2` take part (a smaller multiple `p * k`, `k < p`, was already crossed out as a
//! multiple of `k`'s prime factors), which is also why `first_multiple` starts at `p * p`; and a
//! round covers at most [`MAX_ROUND`] numbers, since the paper's last round would hold all the
//! composites in `[√n, n)` at once (about 2.5 n of them, 2 GB for n = 10⁸).
#![allow(dead_code)]

use parcomp::par;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

/// The most numbers one round sieves. Rounds before `c` reaches it are exactly the paper's.
pub const MAX_ROUND: usize = 1 << 18;

/// Rounds with fewer multiples than this mark them on the calling thread.
const PARALLEL_MARKING: usize = 1 << 14;

/// `⌈a / b⌉`.
#[parcomp::par_fn]
pub fn ceil_div(a: usize, b: usize) -> usize {
    a.div_ceil(b)
}

/// The first `k` for which `p * k` must be crossed out in a round starting at `c`: the first
/// multiple at or above `c`, but never below `p * p`.
#[parcomp::par_fn]
pub fn first_multiple(p: usize, c: usize) -> usize {
    ceil_div(c, p).max(p)
}

/// What one round did, for printing.
#[derive(Clone, Copy, Debug)]
pub struct Round {
    /// The range sieved is `start..end`.
    pub start: usize,
    /// End of the range (exclusive).
    pub end: usize,
    /// Primes that took part (those with `p * p < end`).
    pub sieving_primes: usize,
    /// Multiples produced by the expansion (with repetitions: 12 is a multiple of 2 and 3).
    pub multiples: usize,
    /// Primes found in the range.
    pub new_primes: usize,
}

/// The primes below `n`, in increasing order, by the flattened sieve.
pub fn primes_below(n: usize) -> Vec<usize> {
    primes_below_traced(n, |_| {})
}

/// [`primes_below`], calling `on_round` after every round.
pub fn primes_below_traced(n: usize, mut on_round: impl FnMut(Round)) -> Vec<usize> {
    let mut ps: Vec<usize> = Vec::new();
    let mut c = 2;
    while c < n {
        let c2 = c.saturating_mul(c).min(n).min(c + MAX_ROUND);
        // Only primes with p² < c2 have a multiple to cross out in [c, c2); `ps` is sorted.
        let sieving = &ps[..ps.partition_point(|&p| p.saturating_mul(p) < c2)];

        // The expansion: every multiple of every sieving prime in [c, c2).
        let multiples = par![p * k | p <- sieving, k <- first_multiple(p, c)..ceil_div(c2, p)];

        // Mark them. Several primes may mark the same number, so the flags are atomic and the
        // marking runs in parallel too.
        let composite: Vec<AtomicBool> = (c..c2).map(|_| AtomicBool::new(false)).collect();
        let mark = |&m: &usize| composite[m - c].store(true, Ordering::Relaxed);
        if multiples.len() < PARALLEL_MARKING {
            // A round this small is over before a thread pool would have started on it.
            multiples.iter().for_each(mark);
        } else {
            multiples.par_iter().for_each(mark);
        }

        // The unmarked numbers are the primes of the range, in order.
        let new = par![x | x <- c..c2, !composite[x - c].load(Ordering::Relaxed)];

        on_round(Round {
            start: c,
            end: c2,
            sieving_primes: sieving.len(),
            multiples: multiples.len(),
            new_primes: new.len(),
        });
        ps.extend_from_slice(&new);
        c = c2;
    }
    ps
}

/// The plain sequential sieve of Eratosthenes, for comparison: the primes below `n`.
pub fn eratosthenes(n: usize) -> Vec<usize> {
    let mut is_prime = vec![true; n];
    let mut i = 2;
    while i * i < n {
        if is_prime[i] {
            let mut m = i * i;
            while m < n {
                is_prime[m] = false;
                m += i;
            }
        }
        i += 1;
    }
    (2..n).filter(|&x| is_prime[x]).collect()
}
