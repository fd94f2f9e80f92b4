use parcomp::par;

fn main() {
    // An element of an array is read on the device; a slice of one is not.
    let arrs: Vec<[f32; 4]> = vec![[1.0, 2.0, 3.0, 4.0]];
    let _ = par![@gpu a[1..3].len() | a <- &arrs];
}
