use parcomp::{par_fn, DeviceValue};

#[derive(Clone, Copy, DeviceValue)]
struct Point {
    x: f32,
    y: f32,
}

trait Norm {
    fn norm(&self) -> f32;
}

// Device code calls a type's own methods, not a trait's.
#[par_fn]
impl Norm for Point {
    fn norm(&self) -> f32 {
        self.x * self.x + self.y * self.y
    }
}

fn main() {}
