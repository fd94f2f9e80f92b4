use parcomp::par;

fn main() {
    let xs = vec![1, 2, 3];
    let _ = par![x | x < -xs];
}
