use parcomp::par;

fn twice<T: Copy + std::ops::Add<Output = T>>(x: T) -> T {
    x + x
}

fn main() {
    // A generic function called with its type arguments must still be a `#[par_fn]`.
    let _ = par![@gpu twice::<u32>(x) | x <- 0..10u32];
}
