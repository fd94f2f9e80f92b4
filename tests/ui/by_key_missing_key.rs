use parcomp::par_max_by_key;

fn main() {
    let lines = ["a", "bb"];
    let _ = par_max_by_key![l | l <- lines];
}
