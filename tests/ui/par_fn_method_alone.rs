use parcomp::{par_fn, DeviceValue};

#[derive(Clone, Copy, DeviceValue)]
struct Point {
    x: f32,
    y: f32,
}

impl Point {
    // The attribute on a method cannot see the type it belongs to: it goes on the block.
    #[par_fn]
    fn norm(&self) -> f32 {
        self.x * self.x + self.y * self.y
    }

    // Nor on an associated function naming `Self`.
    #[par_fn]
    fn new(x: f32, y: f32) -> Self {
        Point { x, y }
    }
}

fn main() {}
