use parcomp::par;

fn main() {
    // An array pattern names every element on the device: `..` is refused.
    let arrs: Vec<[f32; 4]> = vec![[1.0, 2.0, 3.0, 4.0]];
    let _ = par![@gpu { let [first, .., last] = a; first + last } | a <- &arrs];
}
