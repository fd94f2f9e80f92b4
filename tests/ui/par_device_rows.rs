use parcomp::{par, par_device};

fn main() {
    let _ = par_device![par![y | y <- 0..x] | x <- 0..10u32];
}
