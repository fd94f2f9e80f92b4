use parcomp::{par_fn, DeviceValue};

#[derive(Clone, Copy, DeviceValue)]
struct Point {
    x: f32,
    y: f32,
}

#[par_fn]
impl Point {
    fn norm(&self) -> f32 {
        self.x * self.x + self.y * self.y
    }

    // A method outside the device subset is an error at what the device cannot run.
    fn label(&self) -> usize {
        format!("{}", self.x).len()
    }

    // So is a constant whose value is not in the subset.
    const NAME_LEN: usize = "point".len();
}

fn main() {}
