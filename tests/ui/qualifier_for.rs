use parcomp::par;

fn main() {
    let words = vec!["a", "bb", "ccc"];
    let _ = par![word.len() | for word in words];
}
