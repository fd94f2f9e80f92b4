use parcomp::par;

fn main() {
    let _ = par![x | x: u32 <- 0..10];
}
