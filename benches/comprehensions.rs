//! Criterion benchmarks: every workload as `par!`, hand-written sequential and rayon.
//!
//! ```text
//! cargo bench                          # a tenth of the report's sizes; HTML in target/criterion
//! PARCOMP_BENCH_FULL=1 cargo bench     # the report's sizes (long)
//! cargo bench -- smvm                  # one workload
//! ```
//!
//! For the table in the guide (`docs/src/performance.md`), with the three versions interleaved in one process and peak
//! memory measured, run `cargo run --release --example bench_report`.

#[path = "../examples/support/lines.rs"]
mod lines;
#[path = "../examples/support/pythagorean.rs"]
mod pythagorean;
#[path = "../examples/support/sieve.rs"]
mod sieve;
mod workloads;

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use workloads::*;

fn size() -> Size {
    if std::env::var_os("PARCOMP_BENCH_FULL").is_some() {
        Size::Full
    } else {
        Size::Reduced
    }
}

/// A version of a workload: its name and the function that runs it.
type Version<I, O> = (&'static str, fn(&I) -> O);

/// Benchmarks the three versions of one workload as a group, so that criterion plots them
/// side by side.
fn group<I, O>(c: &mut Criterion, name: &str, input: I, versions: [Version<I, O>; 3]) {
    let mut group = c.benchmark_group(name);
    group.sample_size(10);
    for (version, run) in versions {
        group.bench_function(version, |b| b.iter(|| black_box(run(black_box(&input)))));
    }
    group.finish();
}

fn workloads(c: &mut Criterion) {
    let size = size();
    group(
        c,
        "1 pythagorean triples",
        pythagorean_n(size),
        [
            ("par!", |n| pythagorean_par(*n)),
            ("sequential", |n| pythagorean_seq(*n)),
            ("rayon", |n| pythagorean_rayon(*n)),
        ],
    );
    group(
        c,
        "2 points of lines",
        lines_input(size),
        [
            ("par!", |l| lines_par(l)),
            ("sequential", |l| lines_seq(l)),
            ("rayon", |l| lines_rayon(l)),
        ],
    );
    group(
        c,
        "3 filled triangles",
        triangles_input(size),
        [
            ("par!", |t| triangles_par(t)),
            ("sequential", |t| triangles_seq(t)),
            ("rayon", |t| triangles_rayon(t)),
        ],
    );
    group(
        c,
        "4 sieve",
        sieve_n(size),
        [
            ("par!", |n| sieve_par(*n)),
            ("sequential", |n| sieve_seq(*n)),
            ("rayon", |n| sieve_rayon(*n)),
        ],
    );
    group(
        c,
        "5 smvm",
        smvm_input(size),
        [("par!", smvm_par), ("sequential", smvm_seq), ("rayon", smvm_rayon)],
    );
    group(
        c,
        "6 skewed expand",
        skew_input(size),
        [("par!", |l| skew_par(l)), ("sequential", |l| skew_seq(l)), ("rayon", |l| skew_rayon(l))],
    );
    group(
        c,
        "7a black-scholes",
        options_input(size),
        [
            ("par!", |o| black_scholes_par(o)),
            ("sequential", |o| black_scholes_seq(o)),
            ("rayon", |o| black_scholes_rayon(o)),
        ],
    );
    group(
        c,
        "7b product with a filter",
        product_n(size),
        [
            ("par!", |n| product_par(*n)),
            ("sequential", |n| product_seq(*n)),
            ("rayon", |n| product_rayon(*n)),
        ],
    );
    group(
        c,
        "8 euclid",
        euclid_m(size),
        [
            ("par!", |m| euclid_par(*m)),
            ("sequential", |m| euclid_seq(*m)),
            ("rayon", |m| euclid_rayon(*m)),
        ],
    );
    group(
        c,
        "9 many tiny comprehensions",
        tiny_calls(size),
        [
            ("par!", |c| tiny_calls_par(*c)),
            ("sequential", |c| tiny_calls_seq(*c)),
            ("rayon", |c| tiny_calls_rayon(*c)),
        ],
    );
    group(
        c,
        "tiny black-scholes (10 options)",
        options_input(Size::Tiny),
        [
            ("par!", |o| black_scholes_par(o)),
            ("sequential", |o| black_scholes_seq(o)),
            ("rayon", |o| black_scholes_rayon(o)),
        ],
    );
}

criterion_group!(benches, workloads);
criterion_main!(benches);
