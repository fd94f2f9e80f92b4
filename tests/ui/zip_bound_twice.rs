use parcomp::par;

fn main() {
    let xs = vec![1, 2, 3];
    let ys = vec![4, 5, 6];
    let _ = par![x | x <- &xs | x <- &ys];
}
