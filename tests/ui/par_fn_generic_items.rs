use parcomp::par_fn;

trait Zero {
    const MAX: Self;
    fn zero() -> Self;
}

// The device does not resolve a type parameter's trait items.
#[par_fn]
fn clamp_low<F: Zero + PartialOrd + Copy>(x: F) -> F {
    if x < F::zero() {
        F::zero()
    } else {
        x
    }
}

#[par_fn]
fn top<F: Zero + Copy>(x: F) -> F {
    let _ = x;
    F::MAX
}

fn main() {}
