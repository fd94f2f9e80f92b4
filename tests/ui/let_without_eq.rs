use parcomp::par;

fn main() {
    let _ = par![y | x <- 0..10, let y x * 2];
}
