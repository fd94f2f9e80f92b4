use parcomp::par;

fn main() {
    let _ = par![x | x <- 0..10, take 2.5];
}
