use parcomp::par;

fn main() {
    let _ = par![|a: i32| a + x | x <- 0..10];
}
