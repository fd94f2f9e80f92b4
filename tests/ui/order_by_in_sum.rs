use parcomp::par_sum;

fn main() {
    let _ = par_sum![x | x <- 0..10, order by x desc];
}
