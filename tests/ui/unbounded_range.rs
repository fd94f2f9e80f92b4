use parcomp::par;

fn main() {
    let _ = par![(x, y) | x <- 0..10, y <- x..];
}
