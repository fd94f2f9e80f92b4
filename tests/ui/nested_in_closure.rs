use parcomp::{par, par_sum};

fn main() {
    let m = vec![vec![1, 2], vec![3]];
    // Runs once per call of the closure, not once per element: cannot be flattened.
    let _ = par![(0..3).map(|k| par_sum![v * k | v <- m[i]]).max() | i <- 0..m.len()];
}
