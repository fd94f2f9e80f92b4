use parcomp::par;

fn main() {
    // A loop over the caller's collection (a `Vec` here; an array alike): the device reads it
    // by index. (A loop over an array of the device's own values is fine.)
    let xs = vec![1u32, 2, 3];
    let _ = par![@gpu { let mut s = x; for v in &xs { s += v; } s } | x <- 0..3u32];
}
