use parcomp::par;

mod geometry {
    pub fn area(w: u32, h: u32) -> u32 {
        w * h
    }
}

fn main() {
    // Called by its path, `geometry::area` is not marked `#[par_fn]` either.
    let _ = par![@gpu geometry::area(w, 2) | w <- 0..10u32];
}
