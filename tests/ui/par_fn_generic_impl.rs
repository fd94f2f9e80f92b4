use parcomp::{par_fn, DeviceValue};

#[derive(Clone, Copy, DeviceValue)]
struct Pair<T> {
    a: T,
    b: T,
}

// One device function per method: the block must be for a concrete type.
#[par_fn]
impl<T: Copy> Pair<T> {
    fn first(self) -> T {
        self.a
    }
}

fn main() {}
