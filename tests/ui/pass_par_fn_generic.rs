#![deny(warnings)]

use parcomp::{par, par_fn};
use std::ops::{Add, Mul};

#[par_fn]
fn square<F: Copy + Mul<Output = F>>(x: F) -> F {
    x * x
}

#[par_fn]
fn sum_of_squares<F>(x: F, y: F) -> F
where
    F: Copy + Add<Output = F> + Mul<Output = F>,
{
    square::<F>(x) + square::<F>(y)
}

fn main() {
    let v = par![@gpu (sum_of_squares::<u32>(x, 2), square::<f64>(x as f64)) | x <- 0..10u32];
    assert_eq!(v[3], (13, 9.0));
}
