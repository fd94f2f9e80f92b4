use parcomp::DeviceValue;

// An array is a device value when its elements are: each refused element type is named, at
// the field's type, nested arrays included.
#[derive(Clone, Copy, DeviceValue)]
struct Labels {
    ids: [u32; 4],
    names: [&'static str; 2],
    grid: [[i128; 2]; 3],
    pairs: [(f32, *const u8); 2],
}

fn main() {}
