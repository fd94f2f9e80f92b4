use parcomp::DeviceValue;

// The device copies values: a struct without `Copy` cannot be one.
#[derive(Clone, DeviceValue)]
struct Point {
    x: f64,
    y: f64,
}

// A field of a struct without the derive.
#[derive(Clone, Copy)]
struct Plain {
    x: f64,
}

#[derive(Clone, Copy, DeviceValue)]
struct Wrapper {
    inner: Plain,
}

fn main() {}
