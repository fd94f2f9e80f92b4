#![deny(warnings)]

use parcomp::{par, par_fn, DeviceValue};

#[derive(Clone, Copy, Debug, PartialEq, DeviceValue)]
pub struct Point {
    x: f32,
    y: f32,
}

// Private items, a `pub` one, a constant read only by a method: no warnings.
#[par_fn]
impl Point {
    const SCALE: f32 = 2.0;

    pub fn new(x: f32, y: f32) -> Point {
        Point { x, y }
    }

    fn scaled(self) -> Point {
        Self::new(self.x * Self::SCALE, self.y * Self::SCALE)
    }

    fn norm(&self) -> f32 {
        self.x * self.x + self.y * self.y
    }
}

fn main() {
    let points = [Point::new(1.0, 2.0), Point::new(-1.0, 0.5)];
    // `@gpu` compiles with methods and associated functions (found when it runs).
    let norms = par![@gpu p.scaled().norm() | p <- &points];
    assert_eq!(norms, [20.0, 5.0]);
    let made = par![@gpu Point::new(i as f32, 0.0) | i <- 0..2];
    assert_eq!(made, [Point::new(0.0, 0.0), Point::new(1.0, 0.0)]);
}
