use parcomp::par;

fn main() {
    let _ = par![half | x <- 0..10, let half];
}
