use parcomp::par;

fn main() {
    // Text cannot be built on the device.
    let _ = par![@gpu format!("{x}") | x <- 0..10u32];
}
