use parcomp::par;

fn main() {
    let n = 10;
    let _ = par![i | i <- ..n];
}
