use parcomp::par;

fn main() {
    let _ = par![area | side <- 1..10u32, let area: u64 = (side * side).into()];
}
