use parcomp::{par, par_sum};

fn divisors(n: u32) -> Vec<u32> {
    (1..=n).filter(|d| n % d == 0).collect()
}

fn main() {
    // The inner generator depends on the outer variable but cannot be sized.
    let _ = par![par_sum![d | d <- divisors(n)] | n <- 1..100u32];
}
