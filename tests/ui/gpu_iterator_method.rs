use parcomp::par;

fn main() {
    // Iterator chains are not part of the device subset.
    let rows = vec![vec![1u32, 2], vec![3]];
    let _ = par![@gpu rows[i].iter().sum::<u32>() | i <- 0..rows.len()];
}
