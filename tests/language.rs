//! The everyday language: borrowed elements, `char` ranges, patterns that filter, float
//! `par_min!`/`par_max!` and the extremum by key — each against hand-written loops, on every
//! backend.

mod support;

use parcomp::{par, par_count, par_max, par_max_by_key, par_min, par_min_by_key, par_sum};
use support::{on_every_backend, on_every_backend_traced, on_every_cpu_backend};

#[test]
fn elements_that_are_not_copy_are_borrowed() {
    let words: Vec<String> =
        ["", "alpha", "be", "", "gamma", "delta"].iter().map(|s| s.to_string()).collect();
    let lens = on_every_backend_traced(|| par![s.len() | s <- &words, !s.is_empty()]);
    let expected: Vec<usize> = words.iter().filter(|s| !s.is_empty()).map(|s| s.len()).collect();
    assert_eq!(lens, expected);
    // The variable is a `&String`: methods, comparisons with `&str`, and references out.
    let long: Vec<&String> = par![s | s <- &words, s.len() > 4];
    assert_eq!(long, [&words[1], &words[4], &words[5]]);
    // Vec<Vec<T>> rows are borrowed too, and a generator can read a borrowed row.
    let rows: Vec<Vec<String>> = vec![vec!["a".into(), "b".into()], vec![], vec!["c".into()]];
    let flat = on_every_backend_traced(
        || par![(i, w.clone()) | (i, row) <- (0..3).map(|i| (i, &rows[i])), w <- row],
    );
    assert_eq!(flat, [(0, "a".to_string()), (0, "b".into()), (2, "c".into())]);
    let nested = par![par_sum![w.len() | w <- row] | row <- &rows];
    assert_eq!(nested, [2, 0, 1]);
    // Copy elements keep being yielded by value.
    let numbers = vec![3u8, 4];
    let doubled: Vec<u8> = par![x * 2 | x <- &numbers];
    assert_eq!(doubled, [6, 8]);
}

#[test]
fn structs_are_borrowed_and_their_fields_read() {
    #[derive(Debug, PartialEq)]
    struct Employee {
        name: String,
        dept: &'static str,
        salary: u32,
    }
    let staff = vec![
        Employee { name: "Simon".into(), dept: "MS", salary: 80 },
        Employee { name: "Phil".into(), dept: "Ed", salary: 40 },
    ];
    let names = on_every_backend_traced(|| par![e.name.as_str() | e <- &staff, e.salary > 50]);
    assert_eq!(names, ["Simon"]);
    let slice: &[Employee] = &staff;
    assert_eq!(par_sum![e.salary | e <- slice], 120);
    assert_eq!(par![e.dept | e <- slice], ["MS", "Ed"]);
}

#[test]
fn char_ranges_are_sources() {
    let letters = on_every_backend(|| par![c | c <- 'a'..='e']);
    assert_eq!(letters, ['a', 'b', 'c', 'd', 'e']);
    let pairs = on_every_backend(|| par![(a, b) | a <- 'x'..'{', b <- a..'{']);
    let mut expected = Vec::new();
    for a in 'x'..'{' {
        for b in a..'{' {
            expected.push((a, b));
        }
    }
    assert_eq!(pairs, expected);
    // Across the surrogate gap, as `Range<char>` iterates.
    let across = par![c | c <- '\u{D7FE}'..'\u{E002}'];
    assert_eq!(across, ('\u{D7FE}'..'\u{E002}').collect::<Vec<_>>());
    #[allow(clippy::reversed_empty_ranges)]
    let reversed = par![c | c <- 'z'..'a'];
    assert!(reversed.is_empty());
}

#[test]
fn refutable_patterns_filter() {
    let opts = vec![Some(1), None, Some(3), None, Some(-4)];
    let values = on_every_backend_traced(|| par![v * 10 | Some(v) <- &opts]);
    assert_eq!(values, [10, 30, -40]);
    let results: Vec<Result<u32, String>> = vec![Ok(1), Err("no".into()), Ok(7)];
    let oks = on_every_backend_traced(|| par![*x | Ok(x) <- &results]);
    assert_eq!(oks, [1, 7]);
    let errs: Vec<&str> = par![e.as_str() | Err(e) <- &results];
    assert_eq!(errs, ["no"]);
    let pairs = vec![(0, 'a'), (1, 'b'), (0, 'c')];
    let zeros = on_every_backend_traced(|| par![y | (0, y) <- &pairs]);
    assert_eq!(zeros, ['a', 'c']);
    assert_eq!(on_every_backend_traced(|| par_count![() | None <- &opts]), 2);
    // Nested generators and later qualifiers see the pattern's variables.
    let grid = [vec![Some(1), None], vec![Some(2), Some(5)]];
    let got = par![(r, v) | (r, row) <- (0..2).map(|r| (r, &grid[r])), Some(v) <- row, v > 1];
    assert_eq!(got, [(1, 2), (1, 5)]);
    // Ranges and bindings with `@`.
    let digits = par![n | n @ 1..=9 <- &[0, 5, 12, 9, -1]];
    assert_eq!(digits, [5, 9]);
    // Rows of a range with a refutable pattern: every element is checked.
    let evens = on_every_backend_traced(
        || par![x | x <- 0..1000i64, (0 | 2 | 4) <- (x % 10..x % 10 + 1), x % 7 == 0],
    );
    let expected: Vec<i64> =
        (0..1000).filter(|x| [0, 2, 4].contains(&(x % 10)) && x % 7 == 0).collect();
    assert_eq!(evens, expected);
}

#[test]
fn float_sums_keep_the_sign_of_zero() {
    // Rust's sum of no floats is -0.0 (the identity of `+`: -0.0 + x is x for every x, -0.0
    // included), and so is a sum of -0.0s. The bits are compared: -0.0 == 0.0.
    let zeros = vec![-0.0f64; 300_000];
    let none: Vec<f64> = Vec::new();
    let bits = |x: f64| x.to_bits();
    let want = bits(-0.0);
    assert_eq!(on_every_backend(|| bits(par_sum![x | x <- &zeros])), want);
    assert_eq!(on_every_backend(|| bits(par_sum![x | x <- &none])), want);
    // Nothing kept by the filter, over a range large enough for the device.
    assert_eq!(on_every_backend(|| bits(par_sum![x as f64 | x <- 0..300_000i64, x < 0])), want);
    let f32s = on_every_backend(|| par_sum![x as f32 * -0.0 | x <- 1..300_000i64].to_bits());
    assert_eq!(f32s, (-0.0f32).to_bits());
    // Per row: empty rows, rows of -0.0, rows whose positions the filter all rejects.
    let rows: Vec<Vec<f64>> = (0..5000)
        .map(|r| match r % 4 {
            0 => Vec::new(),
            1 => vec![-0.0; r % 300],
            2 => vec![1.0; r % 300],
            _ => vec![-0.0, 2.5, -0.0],
        })
        .collect();
    let m = parcomp::Jagged::from(rows.clone());
    // (The device has `is_sign_negative`, not `to_bits`: the values and their signs apart.)
    let sums = on_every_backend(|| par![par_sum![x | x <- m.row(i)] | i <- 0..m.len()]);
    let signs =
        on_every_backend(|| par![par_sum![x | x <- m.row(i)].is_sign_negative() | i <- 0..m.len()]);
    let by_hand: Vec<f64> = rows.iter().map(|row| row.iter().sum()).collect();
    assert_eq!(sums, by_hand);
    assert_eq!(signs, by_hand.iter().map(|x| x.is_sign_negative()).collect::<Vec<_>>());
    assert_eq!((signs[0], signs[1], signs[2]), (true, true, false));
    let signs = on_every_backend(
        || par![par_sum![x | x <- m.row(i), x > 1.0].is_sign_negative() | i <- 0..m.len()],
    );
    let by_hand: Vec<bool> = rows
        .iter()
        .map(|row| row.iter().copied().filter(|&x| x > 1.0).sum::<f64>().is_sign_negative())
        .collect();
    assert_eq!(signs, by_hand);
    assert!(signs[1]);
}

#[test]
fn float_min_and_max_ignore_nan() {
    let m = on_every_backend(|| par_min![x as f64 * 0.5 | x <- 1..10i64]);
    assert_eq!(m, Some(0.5));
    let xs = vec![2.5f64, f64::NAN, -1.0, 7.0, f64::NAN];
    let lo = on_every_backend(|| par_min![x | x <- &xs]);
    let hi = on_every_backend(|| par_max![x | x <- &xs]);
    assert_eq!((lo, hi), (Some(-1.0), Some(7.0)));
    let nans = vec![f64::NAN; 3];
    assert!(par_min![x | x <- &nans].unwrap().is_nan());
    assert_eq!(par_max![x | x <- &Vec::<f32>::new()], None);
    // Large enough for the device and for parallel parts, NaN sprinkled in.
    let big: Vec<f64> = (0..300_000i64)
        .map(|i| if i % 7 == 3 { f64::NAN } else { ((i * 7919) % 100_003) as f64 - 50_000.5 })
        .collect();
    let lo = on_every_backend(|| par_min![x | x <- &big]);
    let hi = on_every_backend(|| par_max![x * 2.0 | x <- &big]);
    assert_eq!(lo, Some(big.iter().copied().fold(f64::NAN, f64::min)));
    assert_eq!(hi, Some(big.iter().copied().fold(f64::NAN, f64::max) * 2.0));
    // A tuple holding a NaN is not ordered with itself, and ignored too, even where its first
    // component alone would decide a comparison: (999, NaN) is not the greatest pair here.
    let pairs: Vec<(f64, f64)> = (0..300_000i64)
        .map(|i| {
            let first = ((i * 7919) % 1000) as f64;
            (first, if i % 5 == 0 { f64::NAN } else { (i % 13) as f64 })
        })
        .collect();
    let ordered = || pairs.iter().filter(|p| p.1 == p.1);
    let bits = |p: Option<(f64, f64)>| p.map(|(a, b)| (a.to_bits(), b.to_bits()));
    let by_hand = |p: Option<&(f64, f64)>| bits(p.copied());
    let lo = on_every_backend(|| bits(par_min![p | p <- &pairs]));
    let hi = on_every_backend(|| bits(par_max![(a, b) | (a, b) <- &pairs]));
    let order = |a: &&(f64, f64), b: &&(f64, f64)| a.partial_cmp(b).expect("ordered");
    assert_eq!(lo, by_hand(ordered().min_by(order)));
    assert_eq!(hi, by_hand(ordered().max_by(order)));
    assert_eq!(hi.map(|p| f64::from_bits(p.0)), Some(999.0));
    // Only pairs holding a NaN: the first of them.
    let all_nan: Vec<(f64, f64)> = (0..1000).map(|i| (i as f64, f64::NAN)).collect();
    let first = on_every_backend(|| bits(par_max![p | p <- &all_nan]));
    assert_eq!(first, bits(Some(all_nan[0])));
    // Nested, per row.
    let rows = vec![vec![1.5f32, f32::NAN], vec![], vec![f32::NAN], vec![-2.0, 4.0]];
    let per_row = par![par_max![x | x <- row] | row <- &rows];
    assert_eq!(per_row[0], Some(1.5));
    assert_eq!(per_row[1], None);
    assert!(per_row[2].unwrap().is_nan());
    assert_eq!(per_row[3], Some(4.0));
}

#[test]
fn min_and_max_by_key_return_the_element() {
    let lines = vec!["short", "the longest line", "mid line", "also sixteen chr"];
    let longest = on_every_backend_traced(|| par_max_by_key!(|l| l.len(); l | l <- &lines));
    // The last of equal keys, as Iterator::max_by_key.
    assert_eq!(longest, lines.iter().copied().max_by_key(|l| l.len()));
    let shortest = par_min_by_key!(|l| l.len(); l | l <- &lines);
    assert_eq!(shortest, lines.iter().copied().min_by_key(|l| l.len()));
    let none = par_max_by_key!(|x: &i32| *x; x | x <- 0..0);
    assert_eq!(none, None);
    // Float keys order by total_cmp.
    let points = vec![(1, 0.5f64), (2, -3.0), (3, 2.25), (4, -3.0)];
    let lowest = par_min_by_key!(|p: &(i32, f64)| p.1; p | p <- &points);
    assert_eq!(lowest, Some((2, -3.0)));
    // Large, with many equal keys: the first/last of equals on every backend.
    let big = on_every_backend_traced(|| {
        (
            par_max_by_key!(|p: &(u32, u32)| p.1 % 1000; p | p <- (0..200_000u32).map(|i| (i, i * 7 % 5003))),
            par_min_by_key!(|p: &(u32, u32)| p.1 % 1000; p | p <- (0..200_000u32).map(|i| (i, i * 7 % 5003))),
        )
    });
    let all: Vec<(u32, u32)> = (0..200_000u32).map(|i| (i, i * 7 % 5003)).collect();
    assert_eq!(big.0, all.iter().copied().max_by_key(|p| p.1 % 1000));
    assert_eq!(big.1, all.iter().copied().min_by_key(|p| p.1 % 1000));
}

#[test]
fn captured_collections_read_by_index_give_what_they_hold() {
    // Captured collections the comprehension only indexes or measures are read through a view
    // (a slice where the collection is one) by the CPU's pipeline: every kind, by value and by
    // reference, gives what indexing the collection itself gives.
    let v: Vec<u64> = (0..50).map(|i| i * 3 % 17).collect();
    let by_ref = &v;
    let by_ref_ref = &by_ref;
    let array = [5u64, 1, 4, 1, 5, 9, 2, 6];
    let boxed: Box<[u64]> = v.iter().map(|x| x + 1).collect();
    let got = on_every_cpu_backend(|| {
        par![v[i] + by_ref[i] * by_ref_ref[i] + array[i % array.len()] + boxed[i]
             | i <- 0..v.len(), !boxed.is_empty()]
    });
    let want: Vec<u64> =
        (0..v.len()).map(|i| v[i] + v[i] * v[i] + array[i % array.len()] + boxed[i]).collect();
    assert_eq!(got, want);
    // Ranges of a slice, and a collection that is no slice (a map, a string) read as itself.
    let sums = on_every_cpu_backend(|| par![v[i..i + 3].iter().sum::<u64>() | i <- 0..v.len() - 2]);
    assert_eq!(sums[4], v[4] + v[5] + v[6]);
    let names: std::collections::HashMap<u64, &str> =
        [(0, "zero"), (1, "one"), (2, "two")].into_iter().collect();
    let text = String::from("héllo, world");
    let got = par![(names[&(x % 3)], &text[0..1], text.len()) | x <- 0..4u64];
    assert_eq!(got[3], ("zero", "h", 13));
    // A name a closure binds, or a comprehension variable, is that binding, not the capture.
    let w = vec![10u64, 20, 30];
    let got = on_every_cpu_backend(
        || par![(w[i], [7u64].iter().map(|w| w + 1).sum::<u64>()) | i <- 0..w.len()],
    );
    assert_eq!(got, [(10, 8), (20, 8), (30, 8)]);
    let got = on_every_cpu_backend(|| par![(w[i], par_sum![w | w <- 0..i]) | i <- 0..w.len()]);
    assert_eq!(got, [(10, 0), (20, 0), (30, 1)]);
}
