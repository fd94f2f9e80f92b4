use parcomp::par;

fn main() {
    let limit = 100;
    let _ = par![n * n | limit > 10, n <- 0..limit];
}
