//! `ndarray` arrays as generators and captures (the `ndarray` feature): one-dimensional arrays
//! and views are sources, the rows of a two-dimensional one are rows, in every layout, on every
//! backend — the device included, which must run each comprehension — with the answers of the
//! same comprehension over `Vec`s.

mod support;

use ndarray::{s, Array1, Array2, ArrayView1};
use parcomp::{par, par_max, par_sum};
use support::on_every_backend;

fn matrix(rows: usize, cols: usize) -> Array2<i64> {
    Array2::from_shape_fn((rows, cols), |(r, c)| (r as i64 * 7 - c as i64 * 3) % 11)
}

#[test]
fn a_one_dimensional_array_is_a_generator() {
    let a: Array1<f64> = (0..5000).map(|i| f64::from(i % 97) * 0.5).collect();
    let v: Vec<f64> = a.to_vec();
    let want = on_every_backend(|| par![x * 2.0 | x <- &v, x > 10.0]);
    assert_eq!(on_every_backend(|| par![x * 2.0 | x <- &a, x > 10.0]), want);
    assert_eq!(on_every_backend(|| par![x * 2.0 | x <- a.view(), x > 10.0]), want);
    // An owned array read by value is a source too.
    let total = on_every_backend(|| par_sum![x as i64 | x <- a.clone()]);
    assert_eq!(total, v.iter().map(|&x| x as i64).sum::<i64>());
}

#[test]
fn a_strided_view_is_read_by_index() {
    let a: Array1<u32> = (0..3001).collect();
    let every_third: ArrayView1<u32> = a.slice(s![..;3]);
    assert!(every_third.as_slice().is_none(), "the view is not contiguous");
    let want: Vec<u32> = (0..3001).step_by(3).filter(|x| x % 2 == 1).collect();
    assert_eq!(on_every_backend(|| par![x | x <- every_third, x % 2 == 1]), want);
    let reversed = a.slice(s![..;-1]);
    assert_eq!(on_every_backend(|| par![x | x <- reversed, x < 3]), [2, 1, 0]);
}

#[test]
fn a_captured_array_is_read_by_index() {
    let weights: Array1<i64> = (0..64).map(|i| i * i - 40).collect();
    let strided = weights.slice(s![..;2]);
    let want: Vec<i64> = (0..2000i64).map(|i| i * (((i % 64) * (i % 64)) - 40)).collect();
    assert_eq!(on_every_backend(|| par![i * weights[(i % 64) as usize] | i <- 0..2000i64]), want);
    let want: Vec<i64> = (0..2000usize).map(|i| weights[2 * (i % 32)]).filter(|&w| w > 0).collect();
    assert_eq!(
        on_every_backend(|| par![w | i <- 0..2000usize, let w = strided[i % 32], w > 0]),
        want
    );
}

#[test]
fn the_rows_of_a_matrix_are_rows_in_every_layout() {
    let m = matrix(300, 17);
    let rows: Vec<Vec<i64>> = m.rows().into_iter().map(|r| r.to_vec()).collect();
    let want = on_every_backend(|| par![par_sum![v | v <- &rows[i]] | i <- 0..rows.len()]);
    // Standard layout: read in place.
    assert_eq!(on_every_backend(|| par![par_sum![v | v <- m.row(i)] | i <- 0..m.nrows()]), want);
    let flat_want: Vec<(usize, i64)> =
        (0..300).flat_map(|i| rows[i].iter().map(move |&v| (i, v))).filter(|p| p.1 > 3).collect();
    assert_eq!(
        on_every_backend(|| par![(i, v) | i <- 0..m.nrows(), v <- m.row(i), v > 3]),
        flat_want
    );
    // A transposed view and a column slice: rows copied one by one, the same answers.
    let t = m.t();
    let want_t: Vec<i64> = (0..17).map(|c| rows.iter().map(|r| r[c]).sum()).collect();
    assert_eq!(on_every_backend(|| par![par_sum![v | v <- t.row(c)] | c <- 0..t.nrows()]), want_t);
    let cols = m.slice(s![.., 3..9]);
    let want_c: Vec<i64> = rows.iter().map(|r| r[3..9].iter().copied().max().unwrap()).collect();
    assert_eq!(
        on_every_backend(|| par![par_max![v | v <- cols.row(i)].unwrap() | i <- 0..cols.nrows()]),
        want_c
    );
}

#[test]
fn every_row_of_a_view() {
    let m = matrix(40, 5);
    let want: Vec<i64> = m.iter().copied().filter(|v| v % 2 == 0).collect();
    let got = on_every_backend(|| par![v | row <- m.view(), v <- row, v % 2 == 0]);
    assert_eq!(got, want);
}

#[test]
fn empty_arrays() {
    let none: Array1<u8> = Array1::zeros(0);
    assert_eq!(on_every_backend(|| par![x | x <- &none]), Vec::<u8>::new());
    let no_rows = matrix(0, 4);
    assert_eq!(
        on_every_backend(|| par![v | i <- 0..no_rows.nrows(), v <- no_rows.row(i)]),
        Vec::<i64>::new()
    );
    let empty_rows = matrix(50, 0);
    assert_eq!(
        on_every_backend(
            || par![par_sum![v | v <- empty_rows.row(i)] | i <- 0..empty_rows.nrows()]
        ),
        vec![0; 50]
    );
}
