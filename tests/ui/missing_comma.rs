use parcomp::par;

fn main() {
    let rows = vec![1, 2];
    let cols = vec![3, 4];
    let _ = par![(r, c) | r <- rows c <- cols];
}
