use parcomp::par_reduce;

fn main() {
    let prices = vec![3u32, 1, 4];
    let _ = par_reduce!(+, 0; p | p <- &prices);
}
