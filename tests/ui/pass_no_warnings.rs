// Correct comprehensions compile without a single warning (unused variables, needless
// parentheses, unused results...) and give the expected values.
#![deny(warnings)]

use parcomp::{par, par_count, par_max, par_reduce, par_sum, Jagged};

fn main() {
    let n = 20;
    let triples =
        par![(x, y, z) | x <- 1..n, y <- x..n, z <- y..x + y, z < n, x * x + y * y == z * z];
    assert_eq!(triples[0], (3, 4, 5));

    let m = Jagged::from(vec![vec![(0, 1), (1, 2), (3, 11)], vec![], vec![(1, 3)]]);
    let v = [3, 1, 2, 6];
    let products = par![value * v[col] | i <- 0..m.len(), (col, value) <- m.row(i)];
    assert_eq!(products, [3, 2, 66, 3]);

    // Unused parts of a pattern, `_`, a `let`, a filter that uses only some variables.
    let pairs = vec![(1, 'a'), (2, 'b'), (3, 'c')];
    let firsts = par![k | (k, _) <- &pairs, _ <- 0..2, let doubled = k * 2, doubled > 2];
    assert_eq!(firsts, [2, 2, 3, 3]);

    let rows = vec![vec![1, 2], vec![], vec![3]];
    let flat = par![x | i <- 0..rows.len(), x <- rows[i]];
    assert_eq!(flat, [1, 2, 3]);

    let steps = par![(i, j) | i <- 0..4, j <- (0..i).rev().step_by(2).map(|k| k * 10)];
    assert_eq!(steps, [(1, 0), (2, 10), (3, 20), (3, 0)]);

    let flags = par![(b | 1) == 1 | b <- 0u8..4, (b & 1) == 0];
    assert_eq!(flags, [true, false]);

    // Reductions, and nested ones: the macros a nested comprehension uses count as used.
    let sums = par![par_sum![value * v[col] | (col, value) <- m.row(i)] | i <- 0..m.len()];
    assert_eq!(sums, [71, 0, 3]);
    let largest = par_max![x * x | x <- 0..5];
    assert_eq!(largest, Some(16));
    let product = par_reduce!(|a: u64, b| a * b, 1; x | x <- 1..6u64);
    assert_eq!(product, 120);

    // Groups only reduced (each reduction folded per key): a count that reads no element, a
    // pattern naming more than the reduction uses, a `let` in a reduction.
    let per_key = par![(k, par_count![x | x <- xs], par_sum![a | (a, _) <- xs],
                        par_sum![d | (a, b) <- xs, let d = a * 2, b > 0], xs.len()) |
                       i <- 0..6, let k = i % 2, let xs = (i, i + 1), group by k];
    assert_eq!(per_key, [(0, 3, 6, 12, 3), (1, 3, 9, 18, 3)]);

    // Parallel branches.
    let zipped = par![(a, b) | a <- 0..3 | b <- ['x', 'y']];
    assert_eq!(zipped, [(0, 'x'), (1, 'y')]);

    // Struct patterns bind fields, some unused or left to `..`; a variant's pattern filters.
    let points = [Point { x: 1.0, y: 2.0, z: 0 }, Point { x: -1.0, y: 0.5, z: 3 }];
    let xs = par![x | Point { x, y, .. } <- &points, let Meters(d, ..) = Meters(y, 0), d > 0.0];
    assert_eq!(xs, [1.0, -1.0]);
    let shapes = [Shape::Circle { r: 2.0 }, Shape::Square(1.0), Shape::Circle { r: 0.5 }];
    let radii = par![r | Shape::Circle { r } <- &shapes];
    assert_eq!(radii, [2.0, 0.5]);
    let sides = par![s | Shape::Square(s) <- &shapes];
    assert_eq!(sides, [1.0]);

    // Parentheses the language needs (a `|` in a head, a `let`, a filter, a count, a pattern)
    // or a user writes draw no warning: the expansion does not keep them around a closure's
    // body or a `let`'s value, where rustc would call them unnecessary.
    let n = 2usize;
    let ors = par![(g | 12) | g <- 0..4u8, (g != 1), let h = (g | 1), h > 0, take (n + 1)];
    assert_eq!(ors, [12, 14, 15]);
    let sums = par![(par_sum![(v | 1) | v <- 0..x]) | x <- 0..3u8];
    assert_eq!(sums, [0, 1, 2]);
    let picked = par![y | y @ (1 | 3) <- 0..5u8];
    assert_eq!(picked, [1, 3]);
    assert_eq!(par_max![(x * 2) | x <- 0..4, (x < 3)], Some(4));

    // Trailing `let`s of nested comprehensions move into the head: one the head does not read
    // warns of nothing.
    let totals = par![t | x <- 0..3i64, let t = par_sum![x * y | y <- 0..4], let unread = t * 2];
    assert_eq!(totals, [0, 6, 12]);
}

#[derive(Clone, Copy, parcomp::DeviceValue)]
struct Point {
    x: f64,
    y: f64,
    z: u8,
}

#[derive(Clone, Copy, parcomp::DeviceValue)]
struct Meters(f64, u8);

#[derive(Clone, Copy)]
enum Shape {
    Circle { r: f64 },
    Square(f64),
}
