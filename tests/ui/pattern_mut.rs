use parcomp::par;

fn main() {
    let _ = par![x | mut x <- 0..10];
}
