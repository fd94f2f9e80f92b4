use parcomp::{par, par_sum};

fn main() {
    let n = 10;
    let _ = par![{ let scale = x * 2; par_sum![y * scale | y <- 0..x] } | x <- 0..n];
}
