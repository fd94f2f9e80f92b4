use parcomp::{par_fn, DeviceValue};

#[derive(Clone, Copy, DeviceValue)]
struct Point {
    x: f32,
}

// A method of a `#[par_fn] impl` block is not generic (a free `#[par_fn] fn` may be).
#[par_fn]
impl Point {
    fn scaled<F: Copy>(self, by: F) -> F {
        by
    }
}

fn main() {}
