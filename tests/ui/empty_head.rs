use parcomp::par;

fn main() {
    let _ = par![| x <- 0..10];
}
