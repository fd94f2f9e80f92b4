use parcomp::par;

fn main() {
    let _: Vec<i32> = par![];
}
