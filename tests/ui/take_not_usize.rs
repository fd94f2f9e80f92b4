use parcomp::par;

fn main() {
    let n = 2.5f64;
    let _ = par![x | x <- 0..10, take n];
}
