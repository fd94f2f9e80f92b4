use parcomp::par;

fn main() {
    let _ = par![i * i | for i <- 0..10];
}
