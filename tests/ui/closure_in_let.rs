use parcomp::par;

fn main() {
    let factor = 3;
    let _ = par![scale(x) | x <- 0..10, let scale = |v| v * factor];
}
