use parcomp::par;

#[derive(Clone, Copy)]
struct Point {
    x: f64,
    y: f64,
}

fn main() {
    // A struct is a device value only with `#[derive(parcomp::DeviceValue)]`.
    let points = vec![Point { x: 1.0, y: 2.0 }];
    let _ = par![@gpu p.x * p.y | p <- &points];
}
