// `@gpu` accepts calls of `#[par_fn]` functions, also imported from another module with `use`
// (in the module or inside a function, renamed or not) or called by their path, and compiles
// without a warning.
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
        // Called by its path, and imported inside the function.
        let by_path = par![@gpu geometry::point(l, 0) | l <- &lines];
        assert_eq!(by_path, vec![(0, 4), (0, 0), (0, 7)]);
        use geometry::points_in_line as count;
        let counts = par![@gpu count(l) | l <- &lines];
        assert_eq!(counts, vec![3, 1, 4]);
    }
}
