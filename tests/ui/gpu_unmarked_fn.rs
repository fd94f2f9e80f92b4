use parcomp::par;

fn cube(x: u64) -> u64 {
    x * x * x
}

fn main() {
    // `cube` is not marked `#[par_fn]`: the device has no code for it.
    let _ = par![@gpu cube(x) | x <- 0..10u64];
}
