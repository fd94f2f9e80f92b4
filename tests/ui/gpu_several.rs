use parcomp::par;

fn weight(x: u32) -> u32 {
    x % 3
}

fn main() {
    // Every construct the device cannot run is reported at once.
    let _ = par![@gpu (weight(x), format!("{y}")) | x <- 0..10u32, y <- 0..x, weight(y) > 0];
}
