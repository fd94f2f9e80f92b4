use parcomp::par;

fn main() {
    let pairs = vec![(1, 2), (3, 4)];
    let _ = par![a | (a, a) <- pairs];
}
