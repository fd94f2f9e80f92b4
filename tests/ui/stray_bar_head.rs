use parcomp::par;

fn main() {
    let flags = vec![1u8, 2, 4];
    let mask = 8u8;
    let _ = par![flag | mask | flag <- flags];
}
