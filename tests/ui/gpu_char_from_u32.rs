use parcomp::par;

fn main() {
    // Not every `u32` is a `char`: the device makes them from `u8`s only.
    let _ = par![@gpu char::from_u32(x) | x <- 0..200u32];
}
