use parcomp::par;

fn main() {
    let rows = vec![1, 2, 3];
    let cols = vec![4, 5];
    let _ = par![(r, c) | r < - rows, c <- cols];
}
