use parcomp::par;

fn main() {
    let width = 8;
    let _ = par![width * 2];
}
