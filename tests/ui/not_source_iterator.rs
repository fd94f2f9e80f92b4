use parcomp::par;

fn main() {
    let words = vec!["alpha", "beta"];
    let _ = par![len | len <- words.iter().map(|w| w.len())];
}
