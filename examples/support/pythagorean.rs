//! Pythagorean triples `x² + y² = z²` with `x <= y < z < n`, the seed paper's section 2
//! example, written three ways so that the examples and tests can compare them:
//!
//! - [`by_comprehension`]: `par!`, flattened by expansion and run on every core;
//! - [`by_loops`]: the sequential nested loops a Rust programmer would write;
//! - [`by_rayon`]: the idiomatic rayon version, parallel over `x` only.
//!
//! All three enumerate the same iteration space — `z` runs over `y..x + y` and is then filtered
//! by `z < n`, exactly as in the paper — so their work is the same and their timings compare.
#![allow(dead_code)]

use parcomp::par;
use rayon::prelude::*;

/// A triple `(x, y, z)`.
pub type Triple = (i32, i32, i32);

/// The paper's comprehension, as written there.
pub fn by_comprehension(n: i32) -> Vec<Triple> {
    par![(x, y, z) | x <- 1..n, y <- x..n, z <- y..x + y, z < n, x * x + y * y == z * z]
}

/// The same iteration space as plain sequential nested loops.
pub fn by_loops(n: i32) -> Vec<Triple> {
    let mut out = Vec::new();
    for x in 1..n {
        for y in x..n {
            for z in y..x + y {
                if z < n && x * x + y * y == z * z {
                    out.push((x, y, z));
                }
            }
        }
    }
    out
}

/// The idiomatic rayon version: parallel over the outer loop, sequential inside. Rows for
/// small `x` are short and rows for large `x` long, which rayon's work stealing evens out.
pub fn by_rayon(n: i32) -> Vec<Triple> {
    (1..n)
        .into_par_iter()
        .flat_map_iter(|x| {
            (x..n).flat_map(move |y| {
                (y..x + y).filter(move |&z| z < n && x * x + y * y == z * z).map(move |z| (x, y, z))
            })
        })
        .collect()
}
