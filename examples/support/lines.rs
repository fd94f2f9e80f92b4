//! Line geometry of the comprehension paper's section 5 (Elsman & Larsen, *Efficient translation
//! of certain irregular data-parallel array comprehensions*), translated from Futhark to Rust.
//!
//! A line is drawn by *expansion*: a line with `points_in_line(line)` points expands into the
//! points `get_point_in_line(line, i)` for `i` in `0..points_in_line(line)`, so all lines are
//! drawn by one flat comprehension
//!
//! ```text
//! par![get_point_in_line(line, i) | line <- &lines, i <- 0..points_in_line(line)]
//! ```
//!
//! The arithmetic follows the Futhark code exactly (`i32` coordinates, an `f32` slope,
//! `f32.round`, `t32`), because the reference drawing in `tests/data/reference.json` was made
//! with it. Futhark's `f32.round` rounds halfway cases to the nearest *even* integer (its
//! prelude says so: "this differs from `round()` in C"), which is Rust's
//! [`f32::round_ties_even`], not [`f32::round`] (half away from zero). It matters: on the first
//! reference line, (58, 20) → (2, 3), the slope is -17/56 and step 28 gives exactly -8.5 in
//! `f32`; ties-to-even draws (30, 12) as the reference does, `f32::round` would draw (30, 11).
//! `t32` truncates, as `as i32` does.
//!
//! Shared by `examples/lines.rs`, `examples/tour.rs` and `tests/paper_examples.rs` (each through
//! `#[path = ...] mod lines;`); each uses only part of it.
#![allow(dead_code)]

/// A point `(x, y)`; `y` grows downwards when drawn (row 0 at the top).
pub type Point = (i32, i32);
/// A line segment between two points, both included.
pub type Line = (Point, Point);

/// Number of points of a line: one per step along its longer axis, both ends included.
///
/// Futhark: `i32.(1 + max (abs (x2 - x1)) (abs (y2 - y1)))`.
#[parcomp::par_fn]
pub fn points_in_line(((x1, y1), (x2, y2)): Line) -> i32 {
    1 + (x2 - x1).abs().max((y2 - y1).abs())
}

/// The direction in which to step from `v1` towards `v2`: `1`, `-1` or `0`.
#[parcomp::par_fn]
pub fn compare(v1: i32, v2: i32) -> i32 {
    if v2 > v1 {
        1
    } else if v1 > v2 {
        -1
    } else {
        0
    }
}

/// How much the second coordinate changes per unit step of the first (in the direction of the
/// line). `get_point_in_line` only calls it with `x1 == x2` for a line that is a single point
/// (then `i` is 0 and the `±1` of the paper does not matter).
#[parcomp::par_fn]
pub fn slope((x1, y1): Point, (x2, y2): Point) -> f32 {
    if x2 == x1 {
        if y2 > y1 {
            1.0
        } else {
            -1.0
        }
    } else {
        (y2 - y1) as f32 / ((x2 - x1) as f32).abs()
    }
}

/// The `i`-th point of `line`, `0 <= i < points_in_line(line)`: step one unit along the longer
/// axis, and round the other coordinate from the slope.
#[parcomp::par_fn]
pub fn get_point_in_line((p1, p2): Line, i: i32) -> Point {
    // Futhark's `f32.round` (ties to even), then `t32` (truncation; the value is integral).
    let round = |v: f32| v.round_ties_even() as i32;
    if (p1.0 - p2.0).abs() > (p1.1 - p2.1).abs() {
        // Mostly horizontal: x advances by one per point.
        let dir = compare(p1.0, p2.0);
        let sl = slope(p1, p2);
        (p1.0 + dir * i, p1.1 + round(sl * i as f32))
    } else {
        // Mostly vertical (or a single point): y advances by one per point; the slope is
        // computed with the axes swapped.
        let dir = compare(p1.1, p2.1);
        let sl = slope((p1.1, p1.0), (p2.1, p2.0));
        (p1.0 + round(sl * i as f32), p1.1 + i * dir)
    }
}

/// The six lines of `tests/data/reference.json` "points_of_lines", drawn on a 70×30 grid.
pub const REFERENCE_LINES: [Line; 6] = [
    ((58, 20), (2, 3)),
    ((27, 3), (2, 28)),
    ((5, 20), (20, 20)),
    ((4, 10), (6, 25)),
    ((26, 25), (26, 2)),
    ((58, 20), (52, 3)),
];
/// Width of the reference grid.
pub const REFERENCE_WIDTH: usize = 70;
/// Height of the reference grid.
pub const REFERENCE_HEIGHT: usize = 30;

/// Marks the points on a `width` × `height` grid (`grid[y][x]`); points outside are ignored.
pub fn rasterize(points: &[Point], width: usize, height: usize) -> Vec<Vec<bool>> {
    let mut grid = vec![vec![false; width]; height];
    for &(x, y) in points {
        if let (Ok(x), Ok(y)) = (usize::try_from(x), usize::try_from(y)) {
            if x < width && y < height {
                grid[y][x] = true;
            }
        }
    }
    grid
}

/// One string per row, `on` where the grid has a point and `off` elsewhere.
pub fn grid_rows(grid: &[Vec<bool>], on: char, off: char) -> Vec<String> {
    grid.iter().map(|row| row.iter().map(|&set| if set { on } else { off }).collect()).collect()
}

/// `count` random lines with both ends inside a `width` × `height` grid, reproducible from
/// `seed` (a small xorshift generator, so that the examples need no dependency).
pub fn random_lines(count: usize, width: i32, height: i32, seed: u64) -> Vec<Line> {
    let mut state = seed.max(1);
    let mut next = |bound: i32| {
        // xorshift64*: plenty for scattering lines on a picture.
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        let r = state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32;
        (r % bound.max(1) as u64) as i32
    };
    (0..count).map(|_| ((next(width), next(height)), (next(width), next(height)))).collect()
}
