use parcomp::par;

fn main() {
    let dept = "MS";
    let _ = par![x | x <- 0..10, group by dept];
}
