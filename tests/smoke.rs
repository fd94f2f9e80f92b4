//! The smallest end-to-end check: comprehensions over ranges, the rows of a `Jagged` and of a
//! `Vec`, with a `let`, a mapped generator and a reversed, stepped range.
use parcomp::{par, Jagged};

#[test]
fn smoke() {
    let n = 100;
    let t = par![(x, y, z) | x <- 1..n, y <- x..n, z <- y..x + y, z < n, x * x + y * y == z * z];
    assert_eq!(t.len(), 50);
    let m = Jagged::from(vec![vec![1, 2], vec![], vec![3]]);
    let v = par![x * 10 + i as i32 | i <- 0..m.len(), x <- m.row(i)];
    assert_eq!(v, [10, 20, 32]);
    let rows = vec![vec![1, 2], vec![], vec![3]];
    let v = par![x | i <- 0..rows.len(), x <- rows[i]];
    assert_eq!(v, [1, 2, 3]);
    let v = par![x | row <- &m, x <- row];
    assert_eq!(v, [1, 2, 3]);
    let v = par![(x, y) | x <- 0..3, let s = x * x, y <- (0..2).map(|k| k + s), y % 2 == 0];
    assert_eq!(v, [(0, 0), (1, 2), (2, 4)]);
    let v = par![x | x <- (0..10).rev().step_by(3)];
    assert_eq!(v, [9, 6, 3, 0]);
}
