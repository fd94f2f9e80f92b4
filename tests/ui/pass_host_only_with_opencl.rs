// A crate whose comprehensions the device cannot run still compiles, without a warning, when
// the `opencl` feature is on (these tests build with it): they run on the CPU and say why.
#![deny(warnings)]

use parcomp::{par, par_explain, par_sum};

fn label(x: u32) -> String {
    format!("#{x}")
}

fn main() {
    let labels = par![format!("{x}-{y}") | x <- 0..3u32, y <- 0..x];
    assert_eq!(labels, ["1-0", "2-0", "2-1"]);
    let names = vec!["ada", "grace"];
    let lengths = par![name.len() + i | name <- &names, i <- 0..2];
    assert_eq!(lengths, [3, 4, 5, 6]);
    assert_eq!(par![label(x) | x <- 0..2u32], ["#0", "#1"]);
    assert_eq!(par_sum![label(x).len() | x <- 0..12u32], 2 * 10 + 3 * 2);
    let kept = par![@cpu x * 2 | x <- 0..4u32];
    assert_eq!(kept, [0, 2, 4, 6]);
    let plan = par_explain![format!("{x}") | x <- 0..3u32];
    assert!(plan.contains("device   no: uses the macro `format!`"), "{plan}");
}
