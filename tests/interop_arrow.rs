//! Apache Arrow arrays in comprehensions (the `arrow` feature): primitive arrays and their
//! buffers as generators and captures, list arrays as rows, results back as Arrow arrays — on
//! every backend, the device included (required to run each one), with the answers of the same
//! comprehension over `Vec`s; null slots and foreign types as clear errors.

mod support;

use arrow_array::types::{Float64Type, Int32Type, Int64Type, UInt16Type};
use arrow_array::{Array, Int64Array, LargeListArray, ListArray, PrimitiveArray};
use parcomp::arrow::{list_array, options, ListRows};
use parcomp::{par, par_count, par_sum, Jagged};
use support::on_every_backend;

fn lists(rows: &[Vec<i32>]) -> ListArray {
    ListArray::from_iter_primitive::<Int32Type, _, _>(
        rows.iter().map(|r| Some(r.iter().map(|&v| Some(v)).collect::<Vec<_>>())),
    )
}

#[test]
fn a_primitive_array_is_a_generator() {
    let v: Vec<f64> = (0..5000).map(|i| f64::from(i % 89) * 0.25).collect();
    let prices = PrimitiveArray::<Float64Type>::from(v.clone());
    let want = on_every_backend(|| par![x * 3.0 | x <- &v, x > 7.0]);
    assert_eq!(on_every_backend(|| par![x * 3.0 | x <- &prices, x > 7.0]), want);
    assert_eq!(on_every_backend(|| par![x * 3.0 | x <- prices.values(), x > 7.0]), want);
}

#[test]
fn a_captured_buffer_is_read_by_index() {
    let weights = Int64Array::from((0..100).map(|i| i * 3 - 50).collect::<Vec<i64>>());
    let w = weights.values();
    let want: Vec<i64> = (0..3000i64).map(|i| i * ((i % 100) * 3 - 50)).collect();
    assert_eq!(on_every_backend(|| par![i * w[(i % 100) as usize] | i <- 0..3000i64]), want);
}

#[test]
fn null_slots_are_read_as_options_and_refused_as_values() {
    let with_nulls =
        PrimitiveArray::<UInt16Type>::from(vec![Some(4), None, Some(9), None, Some(1)]);
    let present = on_every_backend(|| par![x | x <- options(&with_nulls), x.is_some()]);
    assert_eq!(present, [Some(4), Some(9), Some(1)]);
    assert_eq!(on_every_backend(|| par_count![x | x <- options(&with_nulls), x.is_none()]), 2);
    for backend in support::backends() {
        let message = std::panic::catch_unwind(|| {
            parcomp::with_backend(backend, || par![x | x <- &with_nulls])
        })
        .expect_err("a generator over values with nulls panics");
        let message = message.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(message.contains("has 2 null slots"), "{backend}: {message}");
        assert!(message.contains("parcomp::arrow::options"), "{backend}: {message}");
    }
}

#[test]
fn list_arrays_are_rows() {
    let rows: Vec<Vec<i32>> =
        (0..400).map(|r| (0..(r * 7 % 13)).map(|k| r * 10 - k * 3).collect()).collect();
    let list = lists(&rows);
    let m = ListRows::<i32, Int32Type>::new(&list).unwrap();
    assert_eq!((m.len(), m.row(5), m.row(0)), (400, &rows[5][..], &[][..]));
    let want = on_every_backend(|| par![par_sum![v | v <- &rows[i]] | i <- 0..rows.len()]);
    assert_eq!(on_every_backend(|| par![par_sum![v | v <- m.row(i)] | i <- 0..m.len()]), want);
    let want: Vec<(usize, i32)> = (0..400)
        .flat_map(|i| rows[i].iter().map(move |&v| (i, v)))
        .filter(|&(_, v)| v % 4 == 1)
        .collect();
    assert_eq!(
        on_every_backend(|| par![(i, v) | i <- 0..m.len(), v <- m.row(i), v % 4 == 1]),
        want
    );
    let flat: Vec<i32> = rows.concat();
    assert_eq!(on_every_backend(|| par![v | row <- m, v <- row]), flat);

    // A slice of the list: its offsets start past 0.
    let sliced = list.slice(100, 50);
    let s = ListRows::<i32, Int32Type>::new(&sliced).unwrap();
    let want: Vec<i32> = rows[100..150].iter().map(|r| r.iter().sum()).collect();
    assert_eq!(on_every_backend(|| par![par_sum![v | v <- s.row(i)] | i <- 0..s.len()]), want);
}

#[test]
fn a_large_list_round_trips_through_a_comprehension() {
    // Rows made by a nested comprehension, as an Arrow list, read back in place.
    let rows: Vec<Vec<i64>> = par![par![x * y | y <- 0..x % 9] | x <- 0..300i64];
    let list: LargeListArray = list_array::<Int64Type>(Jagged::from(rows.clone()));
    assert_eq!((list.len(), list.null_count()), (300, 0));
    let m = ListRows::<i64, Int64Type>::new(&list).unwrap();
    let want: Vec<i64> = rows.iter().map(|r| r.iter().sum()).collect();
    assert_eq!(on_every_backend(|| par![par_sum![v | v <- m.row(i)] | i <- 0..m.len()]), want);
    let sliced = list.slice(7, 200);
    let s = ListRows::<i64, Int64Type>::new(&sliced).unwrap();
    assert_eq!(
        on_every_backend(|| par![par_sum![v | v <- s.row(i)] | i <- 0..s.len()]),
        want[7..207]
    );
    // A comprehension's `Vec` is an Arrow array through Arrow's own conversion.
    let squares = Int64Array::from(par![x * x | x <- &m.values()[..6]]);
    assert_eq!(m.values()[..6], [0, 0, 2, 0, 3, 6]);
    assert_eq!(squares.values().to_vec(), [0, 0, 4, 0, 9, 36]);
}

#[test]
fn empty_lists_and_arrays() {
    let none = Int64Array::from(Vec::<i64>::new());
    assert_eq!(on_every_backend(|| par![x | x <- &none]), Vec::<i64>::new());
    let no_rows = lists(&[]);
    let m = ListRows::<i32, Int32Type>::new(&no_rows).unwrap();
    assert!(m.is_empty());
    assert_eq!(on_every_backend(|| par![v | i <- 0..m.len(), v <- m.row(i)]), Vec::<i32>::new());
    let empty_rows = lists(&vec![vec![]; 30]);
    let m = ListRows::<i32, Int32Type>::new(&empty_rows).unwrap();
    assert_eq!(
        on_every_backend(|| par![par_sum![v | v <- m.row(i)] | i <- 0..m.len()]),
        vec![0; 30]
    );
}

#[test]
fn lists_parcomp_cannot_read_are_errors() {
    let list = lists(&[vec![1, 2], vec![3]]);
    let wrong = ListRows::<i32, Int64Type>::new(&list).err().expect("not i64 values");
    assert_eq!(wrong.to_string(), "the list's values are Int32, not Int64");
    let null_row = ListArray::from_iter_primitive::<Int32Type, _, _>([Some(vec![Some(1)]), None]);
    let err = ListRows::<i32, Int32Type>::new(&null_row).err().expect("a null row");
    assert!(err.to_string().contains("1 null rows"), "{err}");
    let null_value =
        ListArray::from_iter_primitive::<Int32Type, _, _>([Some(vec![Some(1), None, Some(3)])]);
    let err = ListRows::<i32, Int32Type>::new(&null_value).err().expect("a null value");
    assert_eq!(err.to_string(), "the list's rows hold 1 null values");
}
