use parcomp::par;

fn main() {
    let scores = vec![3, 1, 4];
    let _ = par![score <- scores];
}
