use parcomp::par;

fn main() {
    let low = vec![1u8, 2];
    let high = vec![16u8, 32];
    let _ = par![b | b <- low | high];
}
