use parcomp::par;

// `order by`, `take`, `skip` and `group by` act on the whole comprehension: not inside one of
// its zipped branches.
fn main() {
    let xs = vec![1, 2, 3];
    let _ = par![(a, b) | a <- &xs | b <- &xs, order by b];
}
