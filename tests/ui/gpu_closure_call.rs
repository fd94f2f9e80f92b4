use parcomp::par;

fn main() {
    // A closure is host code; the device cannot call it.
    let offset = |x: u32| x + 1;
    let _ = par![@gpu offset(x) | x <- 0..10u32];
}
