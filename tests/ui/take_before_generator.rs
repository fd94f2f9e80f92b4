use parcomp::par;

fn main() {
    let _ = par![x | take 3, x <- 0..10];
}
