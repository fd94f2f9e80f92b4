use parcomp::par;

fn main() {
    let _ = par![@gpu x | x <- 0..10i32, order by x];
}
