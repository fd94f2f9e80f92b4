use parcomp::par;

fn main() {
    let _ = par![x | x <- 0..10, x | 1 == 3];
}
