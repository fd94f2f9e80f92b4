use parcomp::{par, par_sum};

fn main() {
    let n = 10;
    let _ = par![par![par_sum![z | z <- 0..y] | y <- 0..x] | x <- 0..n];
}
