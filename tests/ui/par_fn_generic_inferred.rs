use parcomp::{par, par_fn};

#[par_fn]
fn twice<T: Copy + std::ops::Add<Output = T>>(x: T) -> T {
    x + x
}

fn main() {
    // A generic `#[par_fn]` is called with its type arguments written (`twice::<u32>(x)`, or
    // `twice::<_>(x)`): the device's name of the call is its instance's.
    let _ = par![twice(x) | x <- 0..10u32];
}
