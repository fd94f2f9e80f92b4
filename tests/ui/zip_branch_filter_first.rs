use parcomp::par;

// Each zipped branch starts with a generator or a `let`, as a comprehension does.
fn main() {
    let xs = vec![1, 2, 3];
    let _ = par![(a, b) | a <- &xs | b > 0, b <- &xs];
}
