use parcomp::par_fn;

// Only type parameters: a const parameter and a lifetime are refused.
#[par_fn]
fn repeat<const N: usize>(x: u32) -> u32 {
    x
}

#[par_fn]
fn first<'a>(x: &'a u32) -> u32 {
    *x
}

fn main() {}
