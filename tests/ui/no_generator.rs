use parcomp::par;

fn main() {
    let enabled = true;
    let _ = par![1 | enabled];
}
