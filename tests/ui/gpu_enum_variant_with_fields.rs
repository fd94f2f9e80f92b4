use parcomp::par;

#[derive(Clone, Copy, Debug)]
enum Shape {
    Circle(f64),
    Square(f64),
}

fn main() {
    // The device holds fieldless enums only: a variant with fields is not made there.
    let _ = par![@gpu Shape::Circle(x as f64) | x <- 0..20u32];
    let _ = par![@gpu if x > 3 { Ok(x) } else { Err(x) } | x <- 0..20u32];
    let _ = Shape::Square(1.0);
}
