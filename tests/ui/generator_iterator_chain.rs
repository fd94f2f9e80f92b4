use parcomp::par;

fn main() {
    let xs = vec![5, 1, 4, 2, 3];
    let _ = par![(x, y) | x <- 0..5, y <- xs.iter().filter(|v| **v > x)];
}
