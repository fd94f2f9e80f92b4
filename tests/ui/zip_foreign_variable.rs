use parcomp::par;

fn main() {
    let names = vec!["ada", "alan", "grace"];
    let _ = par![(name, i) | name <- &names | i <- 0..name.len()];
}
