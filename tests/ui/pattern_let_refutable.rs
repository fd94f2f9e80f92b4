use parcomp::par;

fn main() {
    let maybe = vec![Some(1), None, Some(3)];
    let _ = par![y | x <- &maybe, let Some(y) = x];
}
