use parcomp::par_fn;

// A parameter or result built from a type parameter, and a type parameter that is the type of
// no parameter or result, are refused.
#[par_fn]
fn unwrap_or<F: Copy>(x: Option<F>, d: F) -> F {
    x.unwrap_or(d)
}

#[par_fn]
fn pair<F: Copy>(x: F) -> (F, u8) {
    (x, 0)
}

#[par_fn]
fn count<F>(x: u32) -> u32 {
    x
}

fn main() {}
