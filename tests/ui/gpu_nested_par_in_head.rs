use parcomp::par;

fn main() {
    // The device delivers a nested `par!` only as the whole head.
    let _ = par![@gpu (i, par![j | j <- 0..i]) | i <- 0..10u32];
}
