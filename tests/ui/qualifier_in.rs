use parcomp::par;

fn main() {
    let prices = vec![10, 20, 30];
    let _ = par![price * 2 | price in prices];
}
