// `@gpu` accepts calls of `#[par_fn]` functions, also imported from another module with `use`,
// and compiles without a warning.
#![deny(warnings)]

mod geometry {
    #[parcomp::par_fn]
    pub fn points_in_line(length: u32) -> u32 {
        length / 2 + 1
    }

    #[parcomp::par_fn]
    pub fn point(length: u32, i: u32) -> (u32, u32) {
        (i, length - i)
    }
}

use geometry::{point, points_in_line};
use parcomp::par;

fn main() {
    let lines = vec![4u32, 0, 7];
    // Without a device an `@gpu` comprehension panics saying so: run it only with one.
    if parcomp::backend().device.is_some() {
        let points = par![@gpu point(l, i) | l <- &lines, i <- 0..points_in_line(l)];
        assert_eq!(points.len(), 3 + 1 + 4);
        assert_eq!(points[0], (0, 4));
    }
}
