use parcomp::par;

fn main() {
    let _ = par![n * n | n <- 1..];
}
