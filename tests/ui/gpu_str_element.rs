use parcomp::par;

fn main() {
    // A `&str` is not a value the device can hold.
    let names = vec!["ada", "grace"];
    let _ = par![@gpu name | name <- &names, _ <- 0..2];
}
