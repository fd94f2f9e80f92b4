use parcomp::par;

fn main() {
    let _ = par![x | x <-];
}
