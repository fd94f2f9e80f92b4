use parcomp::DeviceValue;

// Every field that cannot be a device value is named, at its type.
#[derive(Clone, Copy, DeviceValue)]
struct Order {
    price: f64,
    city: &'static str,
    qty: u32,
    wide: Option<(u8, i128)>,
}

#[derive(Clone, DeviceValue)]
struct Customer {
    id: u64,
    name: String,
    orders: Vec<Order>,
}

fn main() {}
