//! The benchmark workloads: each written three ways, as the user would write them.
//!
//! - `par!`: the comprehension;
//! - sequential: the plain nested `for` loops (or iterator chain) a Rust programmer writes;
//! - rayon: the idiomatic rayon version, `par_iter().flat_map_iter(..)` or `.map(..)`.
//!
//! All three compute the same result over the same iteration space, so their times compare.
//! Shared by `benches/comprehensions.rs` (criterion) and `examples/bench_report.rs` (the table in
//! the guide, `docs/src/performance.md`); both include this file and `examples/support/{lines,pythagorean,sieve}.rs` by
//! path, as the modules `workloads`, `lines`, `pythagorean` and `sieve`.
#![allow(dead_code)]

use super::lines::{get_point_in_line, points_in_line, Line, Point};
use super::sieve;
use parcomp::{par, par_fn, par_sum, DeviceValue, Jagged};
use rayon::prelude::*;

/// How big the inputs are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    /// The sizes of the benchmark report (the table in `docs/src/performance.md`).
    Full,
    /// A tenth or so of those, for criterion's many iterations.
    Reduced,
    /// About 10 elements: what it costs to call a comprehension on almost nothing.
    Tiny,
}

/// A deterministic random number generator (splitmix64), so that every run sees the same data.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..bound`.
    pub fn below(&mut self, bound: u64) -> u64 {
        ((self.next_u64() >> 32) * bound) >> 32
    }
    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

// ---------------------------------------------------------------------------------------------
// 1. Pythagorean triples: triangular iteration space and a filter.

pub fn pythagorean_n(size: Size) -> i32 {
    match size {
        Size::Full => 2000,
        Size::Reduced => 800,
        Size::Tiny => 10,
    }
}

pub use super::pythagorean::{
    by_comprehension as pythagorean_par, by_loops as pythagorean_seq, by_rayon as pythagorean_rayon,
};

// ---------------------------------------------------------------------------------------------
// 2. Points of lines: one expansion, lengths skewed (most lines short, a few long).

/// Random lines on a 4096 × 4096 grid: 98 % of length 1..32, 2 % of length 512..4096.
pub fn lines_input(size: Size) -> Vec<Line> {
    let count = match size {
        Size::Full => 200_000,
        Size::Reduced => 20_000,
        Size::Tiny => 10,
    };
    let mut rng = Rng::new(2);
    (0..count)
        .map(|_| {
            let (x, y) = (rng.below(4096) as i32, rng.below(4096) as i32);
            let length =
                if rng.below(100) < 98 { 1 + rng.below(32) } else { 512 + rng.below(3585) } as f64;
            let angle = rng.unit() * std::f64::consts::TAU;
            let clamp = |v: f64| (v.round() as i32).clamp(0, 4095);
            (
                (x, y),
                (clamp(x as f64 + length * angle.cos()), clamp(y as f64 + length * angle.sin())),
            )
        })
        .collect()
}

pub fn lines_par(lines: &[Line]) -> Vec<Point> {
    par![get_point_in_line(line, i) | line <- lines, i <- 0..points_in_line(line)]
}

pub fn lines_seq(lines: &[Line]) -> Vec<Point> {
    let mut out = Vec::new();
    for &line in lines {
        for i in 0..points_in_line(line) {
            out.push(get_point_in_line(line, i));
        }
    }
    out
}

pub fn lines_rayon(lines: &[Line]) -> Vec<Point> {
    lines
        .par_iter()
        .flat_map_iter(|&line| (0..points_in_line(line)).map(move |i| get_point_in_line(line, i)))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// 3. Filled triangles: triangles → horizontal lines → points, two expansions.

/// A triangle, its corners sorted by `y`: a device value (an array of three points), whose
/// methods the device calls (`#[par_fn]` on the block that the comprehension uses).
#[derive(Clone, Copy, Debug, DeviceValue)]
pub struct Triangle {
    pub corners: [Point; 3],
}

impl Triangle {
    fn new(mut corners: [Point; 3]) -> Triangle {
        corners.sort_by_key(|p| p.1);
        Triangle { corners }
    }
}

#[par_fn]
impl Triangle {
    /// The first row the triangle covers.
    pub fn top(&self) -> i32 {
        self.corners[0].1
    }

    /// The last row the triangle covers.
    pub fn bottom(&self) -> i32 {
        self.corners[2].1
    }

    /// The columns the triangle covers on row `y`: where the long edge (top to bottom corner)
    /// and the short edge on that side of the middle corner cross the row.
    pub fn span(&self, y: i32) -> (i32, i32) {
        let [a, b, c] = self.corners;
        // (The points' type written out: the device reads a type alias only in a signature.)
        let at = |p: (i32, i32), q: (i32, i32)| -> f32 {
            if q.1 == p.1 {
                p.0 as f32
            } else {
                p.0 as f32 + (q.0 - p.0) as f32 * (y - p.1) as f32 / (q.1 - p.1) as f32
            }
        };
        let long = at(a, c);
        let short = if y < b.1 { at(a, b) } else { at(b, c) };
        let (lo, hi) = if long < short { (long, short) } else { (short, long) };
        (lo.round() as i32, hi.round() as i32)
    }
}

/// Random triangles on a 4096 × 4096 grid: most small, a few large.
pub fn triangles_input(size: Size) -> Vec<Triangle> {
    let count = match size {
        Size::Full => 20_000,
        Size::Reduced => 2_000,
        Size::Tiny => 10,
    };
    let mut rng = Rng::new(3);
    (0..count)
        .map(|_| {
            let extent = if rng.below(100) < 99 { 8 + rng.below(56) } else { 256 + rng.below(512) };
            let (x, y) = (rng.below(4096 - extent) as i32, rng.below(4096 - extent) as i32);
            let mut corner = || (x + rng.below(extent) as i32, y + rng.below(extent) as i32);
            Triangle::new([corner(), corner(), corner()])
        })
        .collect()
}

pub fn triangles_par(triangles: &[Triangle]) -> Vec<Point> {
    par![(x, y) | t <- triangles, y <- t.top()..=t.bottom(), let (x0, x1) = t.span(y), x <- x0..=x1]
}

pub fn triangles_seq(triangles: &[Triangle]) -> Vec<Point> {
    let mut out = Vec::new();
    for t in triangles {
        for y in t.top()..=t.bottom() {
            let (x0, x1) = t.span(y);
            for x in x0..=x1 {
                out.push((x, y));
            }
        }
    }
    out
}

pub fn triangles_rayon(triangles: &[Triangle]) -> Vec<Point> {
    triangles
        .par_iter()
        .flat_map_iter(|t| {
            (t.top()..=t.bottom()).flat_map(move |y| {
                let (x0, x1) = t.span(y);
                (x0..=x1).map(move |x| (x, y))
            })
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// 4. The sieve of Eratosthenes by expansion.

pub fn sieve_n(size: Size) -> usize {
    match size {
        Size::Full => 100_000_000,
        Size::Reduced => 10_000_000,
        Size::Tiny => 30,
    }
}

pub fn sieve_par(n: usize) -> Vec<usize> {
    sieve::primes_below(n)
}

pub fn sieve_seq(n: usize) -> Vec<usize> {
    sieve::eratosthenes(n)
}

/// The same rounds as [`sieve_par`], the expansion written with rayon's `flat_map_iter`.
pub fn sieve_rayon(n: usize) -> Vec<usize> {
    use std::sync::atomic::{AtomicBool, Ordering};
    let mut ps: Vec<usize> = Vec::new();
    let mut c = 2;
    while c < n {
        let c2 = c.saturating_mul(c).min(n).min(c + sieve::MAX_ROUND);
        let sieving = &ps[..ps.partition_point(|&p| p.saturating_mul(p) < c2)];
        let multiples: Vec<usize> = sieving
            .par_iter()
            .flat_map_iter(|&p| {
                (sieve::first_multiple(p, c)..sieve::ceil_div(c2, p)).map(move |k| p * k)
            })
            .collect();
        let composite: Vec<AtomicBool> = (c..c2).map(|_| AtomicBool::new(false)).collect();
        let mark = |&m: &usize| composite[m - c].store(true, Ordering::Relaxed);
        if multiples.len() < 1 << 14 {
            multiples.iter().for_each(mark);
        } else {
            multiples.par_iter().for_each(mark);
        }
        let new: Vec<usize> = (c..c2)
            .into_par_iter()
            .filter(|&x| !composite[x - c].load(Ordering::Relaxed))
            .collect();
        ps.extend_from_slice(&new);
        c = c2;
    }
    ps
}

// ---------------------------------------------------------------------------------------------
// 5. Sparse matrix × vector, power-law row lengths: a nested sum.

/// The matrix (rows of (column, value)) and the vector.
pub struct Smvm {
    pub matrix: Jagged<(u32, f64)>,
    pub x: Vec<f64>,
}

/// `rows` rows whose lengths follow a power law (Pareto, α = 1.5, mean about 10, the longest
/// tens of thousands), columns and values uniform.
pub fn smvm_input(size: Size) -> Smvm {
    let rows = match size {
        Size::Full => 1_000_000,
        Size::Reduced => 100_000,
        Size::Tiny => 10,
    };
    let mut rng = Rng::new(5);
    let lengths: Vec<usize> = (0..rows)
        .map(|_| {
            let u = 1.0 - rng.unit();
            ((4.4 / u.powf(1.0 / 1.5)) as usize).saturating_sub(3).min(rows)
        })
        .collect();
    let values: Vec<(u32, f64)> = lengths
        .iter()
        .flat_map(|&n| (0..n).map(|_| (0, 0.0)))
        .map(|_| (rng.below(rows as u64) as u32, rng.unit() * 2.0 - 1.0))
        .collect();
    let matrix = Jagged::from_lengths(&lengths, values).expect("lengths sum to the values");
    let x = (0..rows).map(|_| rng.unit()).collect();
    Smvm { matrix, x }
}

pub fn smvm_par(input: &Smvm) -> Vec<f64> {
    let (m, x) = (&input.matrix, &input.x);
    par![par_sum![v * x[c as usize] | (c, v) <- m.row(i)] | i <- 0..m.len()]
}

pub fn smvm_seq(input: &Smvm) -> Vec<f64> {
    let (m, x) = (&input.matrix, &input.x);
    let mut y = Vec::with_capacity(m.len());
    for row in m.iter() {
        let mut sum = 0.0;
        for &(c, v) in row {
            sum += v * x[c as usize];
        }
        y.push(sum);
    }
    y
}

pub fn smvm_rayon(input: &Smvm) -> Vec<f64> {
    let (m, x) = (&input.matrix, &input.x);
    (0..m.len())
        .into_par_iter()
        .map(|i| m.row(i).iter().map(|&(c, v)| v * x[c as usize]).sum())
        .collect()
}

// ---------------------------------------------------------------------------------------------
// 6. A skewed expansion: row 0 holds half of all elements.

/// Row lengths: 1000 rows, 10^8 elements, half of them in row 0.
pub fn skew_input(size: Size) -> Vec<u32> {
    let (rows, total) = match size {
        Size::Full => (1000, 100_000_000u32),
        Size::Reduced => (1000, 10_000_000),
        Size::Tiny => (10, 20),
    };
    let mut lengths = vec![total / 2 / (rows - 1); rows as usize];
    lengths[0] = total / 2;
    lengths
}

/// A cheap element: a hash of the row and the index.
#[parcomp::par_fn]
fn skew_element(row: u32, i: u32) -> u32 {
    (row ^ i).wrapping_mul(0x9E37_79B9)
}

pub fn skew_par(lengths: &[u32]) -> Vec<u32> {
    par![skew_element(r as u32, i) | r <- 0..lengths.len(), i <- 0..lengths[r]]
}

pub fn skew_seq(lengths: &[u32]) -> Vec<u32> {
    let mut out = Vec::new();
    for (r, &n) in lengths.iter().enumerate() {
        for i in 0..n {
            out.push(skew_element(r as u32, i));
        }
    }
    out
}

pub fn skew_rayon(lengths: &[u32]) -> Vec<u32> {
    lengths
        .par_iter()
        .enumerate()
        .flat_map_iter(|(r, &n)| (0..n).map(move |i| skew_element(r as u32, i)))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// 7a. Regular: Black-Scholes, a map.

/// One European option.
#[derive(Clone, Copy, Debug, DeviceValue)]
pub struct Option_ {
    pub spot: f32,
    pub strike: f32,
    pub years: f32,
    pub rate: f32,
    pub volatility: f32,
}

pub fn options_input(size: Size) -> Vec<Option_> {
    let count = match size {
        Size::Full => 10_000_000,
        Size::Reduced => 1_000_000,
        Size::Tiny => 10,
    };
    let mut rng = Rng::new(7);
    (0..count)
        .map(|_| Option_ {
            spot: 5.0 + 25.0 * rng.unit() as f32,
            strike: 1.0 + 99.0 * rng.unit() as f32,
            years: 0.25 + 9.75 * rng.unit() as f32,
            rate: 0.02,
            volatility: 0.30,
        })
        .collect()
}

/// The cumulative normal distribution (Abramowitz & Stegun 26.2.17).
#[par_fn]
fn cnd(d: f32) -> f32 {
    const A: [f32; 5] = [0.319_381_53, -0.356_563_78, 1.781_477_9, -1.821_256, 1.330_274_4];
    let k = 1.0 / (1.0 + 0.231_641_9 * d.abs());
    let poly = k * (A[0] + k * (A[1] + k * (A[2] + k * (A[3] + k * A[4]))));
    let w = 1.0 - 0.398_942_3 * (-0.5 * d * d).exp() * poly;
    if d < 0.0 {
        1.0 - w
    } else {
        w
    }
}

/// The price of the call.
#[par_fn]
pub fn black_scholes(o: Option_) -> f32 {
    let sqrt_t = o.years.sqrt();
    let d1 = ((o.spot / o.strike).ln() + (o.rate + 0.5 * o.volatility * o.volatility) * o.years)
        / (o.volatility * sqrt_t);
    let d2 = d1 - o.volatility * sqrt_t;
    o.spot * cnd(d1) - o.strike * (-o.rate * o.years).exp() * cnd(d2)
}

pub fn black_scholes_par(options: &[Option_]) -> Vec<f32> {
    par![black_scholes(o) | o <- options]
}

pub fn black_scholes_seq(options: &[Option_]) -> Vec<f32> {
    options.iter().map(|&o| black_scholes(o)).collect()
}

pub fn black_scholes_rayon(options: &[Option_]) -> Vec<f32> {
    options.par_iter().map(|&o| black_scholes(o)).collect()
}

// ---------------------------------------------------------------------------------------------
// 7b. Regular: a 4000 × 4000 product with a filter.

pub fn product_n(size: Size) -> u32 {
    match size {
        Size::Full => 4000,
        Size::Reduced => 1300,
        Size::Tiny => 3,
    }
}

#[parcomp::par_fn]
fn keep(x: u32, y: u32) -> bool {
    (x ^ y).wrapping_mul(0x9E37_79B9) % 7 == 0
}

pub fn product_par(n: u32) -> Vec<(u32, u32)> {
    par![(x, y) | x <- 0..n, y <- 0..n, keep(x, y)]
}

pub fn product_seq(n: u32) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    for x in 0..n {
        for y in 0..n {
            if keep(x, y) {
                out.push((x, y));
            }
        }
    }
    out
}

pub fn product_rayon(n: u32) -> Vec<(u32, u32)> {
    (0..n)
        .into_par_iter()
        .flat_map_iter(|x| (0..n).filter(move |&y| keep(x, y)).map(move |y| (x, y)))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// 8. Euclid's count of Pythagorean triples: a nested filtered sum.

pub fn euclid_m(size: Size) -> u64 {
    match size {
        Size::Full => 10_000,
        Size::Reduced => 3_000,
        Size::Tiny => 5,
    }
}

/// Euclid's algorithm as a loop (device code cannot recurse).
#[parcomp::par_fn]
pub fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        let r = a % b;
        a = b;
        b = r;
    }
    a
}

/// The number of Pythagorean triples with `c <= m_max²`, from the primitive ones of
/// Euclid's formula: `(m² - n², 2mn, m² + n²)` with `m > n`, `m - n` odd, `gcd(m, n) = 1`.
pub fn euclid_par(m_max: u64) -> u64 {
    let limit = m_max * m_max;
    par_sum![limit / (m * m + n * n) | m <- 1..m_max, n <- 1..m, (m - n) % 2 == 1, gcd(m, n) == 1]
}

pub fn euclid_seq(m_max: u64) -> u64 {
    let limit = m_max * m_max;
    let mut count = 0;
    for m in 1..m_max {
        for n in 1..m {
            if (m - n) % 2 == 1 && gcd(m, n) == 1 {
                count += limit / (m * m + n * n);
            }
        }
    }
    count
}

pub fn euclid_rayon(m_max: u64) -> u64 {
    let limit = m_max * m_max;
    (1..m_max)
        .into_par_iter()
        .map(|m| {
            (1..m)
                .filter(|&n| (m - n) % 2 == 1 && gcd(m, n) == 1)
                .map(|n| limit / (m * m + n * n))
                .sum::<u64>()
        })
        .sum()
}

// 9. Many tiny comprehensions: what one call costs when it has almost nothing to do, as in a
// comprehension inside a loop. Each call has 4 to 12 elements.

/// The number of calls.
pub fn tiny_calls(size: Size) -> i64 {
    match size {
        Size::Full => 20_000,
        Size::Reduced => 5_000,
        Size::Tiny => 10,
    }
}

/// The sum of each call's elements.
pub fn tiny_calls_par(calls: i64) -> Vec<i64> {
    (0..calls)
        .map(|k| {
            let v: Vec<i64> = par![x * y | x <- 0..4i64, y <- 0..(x + k % 3)];
            v.iter().sum()
        })
        .collect()
}

pub fn tiny_calls_seq(calls: i64) -> Vec<i64> {
    (0..calls)
        .map(|k| {
            let mut v = Vec::new();
            for x in 0..4i64 {
                for y in 0..(x + k % 3) {
                    v.push(x * y);
                }
            }
            v.iter().sum()
        })
        .collect()
}

pub fn tiny_calls_rayon(calls: i64) -> Vec<i64> {
    (0..calls)
        .map(|k| {
            let v: Vec<i64> = (0..4i64)
                .into_par_iter()
                .flat_map_iter(|x| (0..(x + k % 3)).map(move |y| x * y))
                .collect();
            v.iter().sum()
        })
        .collect()
}
