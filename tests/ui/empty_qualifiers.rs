use parcomp::par;

fn main() {
    let x = 1;
    let _ = par![x | ];
}
