use parcomp::{par_fn, DeviceValue};

#[derive(Clone, Copy, DeviceValue)]
struct Counter {
    n: u32,
}

#[par_fn]
impl Counter {
    // The device computes values: a method cannot change its receiver in place.
    fn bump(&mut self) {
        self.n += 1;
    }

    // Nor take it in a box.
    fn boxed(self: Box<Self>) -> u32 {
        self.n
    }
}

fn main() {}
