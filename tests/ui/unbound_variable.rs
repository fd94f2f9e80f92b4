use parcomp::par;

fn main() {
    let _ = par![x + y | y <- 0..x, x <- 0..10];
}
