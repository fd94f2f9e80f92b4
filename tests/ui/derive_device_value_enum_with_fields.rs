use parcomp::DeviceValue;

// Variants holding fields: the device holds fieldless enums only (every one is named).
#[derive(Clone, Copy, DeviceValue)]
enum Shape {
    Circle(f64),
    Square { side: f64 },
    Point,
}

// No values to hold.
#[derive(Clone, Copy, DeviceValue)]
enum Never {}

// A 128-bit discriminant is not a device value.
#[derive(Clone, Copy, DeviceValue)]
#[repr(u128)]
enum Huge {
    One = 1,
}

#[derive(Clone, Copy, DeviceValue)]
union Bits {
    f: f32,
    u: u32,
}

fn main() {}
