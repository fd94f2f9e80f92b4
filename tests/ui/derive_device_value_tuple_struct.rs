use parcomp::DeviceValue;

#[derive(Clone, Copy, DeviceValue)]
struct Meters(f64);

#[derive(Clone, Copy, DeviceValue)]
enum Shape {
    Circle,
    Square,
}

fn main() {}
