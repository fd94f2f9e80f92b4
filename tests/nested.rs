//! Nested comprehensions and reductions against the external test vectors and the papers'
//! examples, on every backend.

mod support;

use parcomp::{par, par_count, par_min, par_reduce, par_sum, Jagged};
use serde_json::Value;
use support::on_every_backend;

fn vectors(file: &str) -> Value {
    let path = format!("{}/tests/data/{file}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn ints<T: TryFrom<i64>>(v: &Value) -> Vec<T>
where
    T::Error: std::fmt::Debug,
{
    v.as_array().unwrap().iter().map(|x| T::try_from(x.as_i64().unwrap()).unwrap()).collect()
}

/// The CSR matrix of reference.json "smvm_csr", rows as (column, value) pairs.
fn smvm_matrix() -> (Jagged<(usize, i64)>, Vec<i64>, Vec<i64>) {
    let csr = &vectors("reference.json")["smvm_csr"];
    let offsets: Vec<usize> = ints(&csr["row_off"]);
    let pairs: Vec<(usize, i64)> =
        ints::<usize>(&csr["col_idx"]).into_iter().zip(ints::<i64>(&csr["vals"])).collect();
    (Jagged::from_parts(offsets, pairs).unwrap(), ints(&csr["vector"]), ints(&csr["expected"]))
}

#[test]
fn smvm_as_a_nested_comprehension() {
    let (m, x, expected) = smvm_matrix();
    assert_eq!(expected, [71, 11, 59, 48, 104]);
    let got = on_every_backend(|| par![par_sum![v * x[c] | (c, v) <- m.row(i)] | i <- 0..m.len()]);
    assert_eq!(got, expected);
}

#[test]
fn smvm_with_empty_rows_inserted() {
    // The pitfall of the flattening paper: an empty row must give 0, and must not shift the
    // results of the rows after it.
    let (m, x, expected) = smvm_matrix();
    let mut rows: Vec<Vec<(usize, i64)>> = Vec::new();
    let mut want = Vec::new();
    for (i, row) in m.iter().enumerate() {
        for _ in 0..i % 3 {
            rows.push(Vec::new());
            want.push(0);
        }
        rows.push(row.to_vec());
        want.push(expected[i]);
    }
    rows.insert(0, Vec::new());
    want.insert(0, 0);
    rows.push(Vec::new());
    want.push(0);
    let m = Jagged::from(rows);
    let got = on_every_backend(|| par![par_sum![v * x[c] | (c, v) <- m.row(i)] | i <- 0..m.len()]);
    assert_eq!(got, want);
    // The head may use the outer variable and the inner result together.
    let got = on_every_backend(
        || par![(i, par_sum![v * x[c] | (c, v) <- m.row(i)]) | i <- 0..m.len(), m.row_len(i) > 0],
    );
    let want: Vec<(usize, i64)> =
        (0..m.len()).filter(|&i| m.row_len(i) > 0).map(|i| (i, want[i])).collect();
    assert_eq!(got, want);
}

#[test]
fn cub_segmented_sum_and_min() {
    let cub = &vectors("reference.json")["cub_segmented_reduce"];
    let m = Jagged::from_parts(ints(&cub["offsets"]), ints::<i32>(&cub["values"])).unwrap();
    let sums = on_every_backend(|| par![par_sum![v | v <- m.row(i)] | i <- 0..m.len()]);
    assert_eq!(sums, ints::<i32>(&cub["sum_expected"]));
    let mins = on_every_backend(
        || par![par_reduce!(|a: i32, b| a.min(b), i32::MAX; v | v <- m.row(i)) | i <- 0..m.len()],
    );
    assert_eq!(mins, ints::<i32>(&cub["min_expected_with_init_i32_max"]));
    let mins = on_every_backend(|| par![par_min![v | v <- m.row(i)] | i <- 0..m.len()]);
    assert_eq!(mins, [Some(6), None, Some(0)]);
    // The same, with the rows bound as slices.
    let sums = on_every_backend(|| par![par_sum![v | v <- row] | row <- &m]);
    assert_eq!(sums, ints::<i32>(&cub["sum_expected"]));
}

#[test]
fn expand_reduce_and_expand_outer_reduce_vectors() {
    let vectors = vectors("segmented.json");
    for case in vectors["expand_outer_reduce_size_id_get_mul_add"]["cases"].as_array().unwrap() {
        let input: Vec<i64> = ints(&case["input"]);
        let got = on_every_backend(|| par![par_sum![x * i | i <- 0..x] | x <- &input]);
        assert_eq!(got, ints::<i64>(&case["expected"]), "outer reduce of {input:?}");
    }
    for case in vectors["expand_reduce_size_id_get_mul_add"]["cases"].as_array().unwrap() {
        let input: Vec<i64> = ints(&case["input"]);
        // One value per non-empty row: filter the outer elements with an empty inner space.
        let got = on_every_backend(|| par![par_sum![x * i | i <- 0..x] | x <- &input, x > 0]);
        assert_eq!(got, ints::<i64>(&case["expected"]), "expand_reduce of {input:?}");
    }
}

/// Euclid's algorithm as a loop: device code cannot recurse.
#[parcomp::par_fn]
fn gcd(mut a: u32, mut b: u32) -> u32 {
    while b != 0 {
        let r = a % b;
        a = b;
        b = r;
    }
    a
}

#[test]
fn euclids_count_of_pythagorean_triples() {
    // Every primitive triple (m² - n², 2mn, m² + n²) with c = m² + n² <= 10^6 generates
    // 10^6 / c triples with c <= 10^6.
    let got = on_every_backend(
        || par_sum![1_000_000 / (m * m + n * n) | m <- 1u32..1000, n <- 1..m, (m - n) % 2 == 1, gcd(m, n) == 1],
    );
    let mut want = 0;
    for m in 1u32..1000 {
        for n in 1..m {
            if (m - n) % 2 == 1 && gcd(m, n) == 1 {
                want += 1_000_000 / (m * m + n * n);
            }
        }
    }
    assert_eq!(got, want);
    assert!(want > 0);
}

#[test]
fn float_sums_agree_within_rounding() {
    // Parallel sums group the additions differently: equal up to rounding, not bit for bit.
    let xs: Vec<f64> = (0..200_000).map(|i| 1.0 / (1.0 + i as f64)).collect();
    let reference: f64 = xs.iter().sum();
    for backend in support::backends() {
        let got = parcomp::with_backend(backend, || par_sum![x * y | x <- &xs, y <- [1.0, 0.5]]);
        assert!((got - 1.5 * reference).abs() < 1e-9 * reference, "{backend}: {got}");
    }
}

#[test]
fn nested_collect_gives_one_vec_per_outer_element() {
    let m = Jagged::from(vec![vec![1, 2], vec![], vec![3, 4, 5]]);
    let got = on_every_backend(|| par![par![v * 10 | v <- m.row(i), v != 4] | i <- 0..m.len()]);
    assert_eq!(got, vec![vec![10, 20], vec![], vec![30, 50]]);
    let flat = Jagged::from(got);
    assert_eq!(flat.values(), &[10, 20, 30, 50]);
    let counts = on_every_backend(
        || par![(i, par_count![() | v <- m.row(i), v % 2 == 1]) | i <- 0..m.len()],
    );
    assert_eq!(counts, [(0, 1), (1, 0), (2, 2)]);
}

#[test]
fn comprehensions_nest_to_any_depth() {
    // For every n, the divisors d of n, each with the sum of its own divisors.
    let got = on_every_backend(
        || par![par![(d, par_sum![e | e <- 1..=d, d % e == 0]) | d <- 1..=n, n % d == 0] | n <- 1..13u32],
    );
    let sigma = |d: u32| (1..=d).filter(|e| d % e == 0).sum::<u32>();
    let want: Vec<Vec<(u32, u32)>> = (1..13u32)
        .map(|n| (1..=n).filter(|d| n % d == 0).map(|d| (d, sigma(d))).collect())
        .collect();
    assert_eq!(got, want);
    // Three levels of sums over a triangular space.
    let got = on_every_backend(
        || par_sum![par_sum![par_sum![z | z <- 0..y] | y <- 0..x] | x <- 0..40u64],
    );
    let want: u64 = (0..40u64).map(|x| (0..x).map(|y| (0..y).sum::<u64>()).sum::<u64>()).sum();
    assert_eq!(got, want);
}

/// `let`s that end the qualifiers and compute nested comprehensions are flattened as the head's
/// are (on the device too: `on_every_backend` checks the trace), with the same values; a
/// nested comprehension reading an earlier such `let` keeps them as qualifiers.
#[test]
fn trailing_lets_of_nested_comprehensions_nest_like_the_head() {
    let xs: Vec<i64> = (0..400).map(|i| (i * 37) % 101 - 50).collect();
    let got = on_every_backend(|| {
        par![(x, a, b) | x <- &xs, x % 3 != 0,
             let a = par_sum![x * y | y <- &xs, y > x],
             let b = par_count![y | y <- &xs, y < x],
             let _unused = a + 1]
    });
    let mut want = Vec::new();
    for &x in &xs {
        if x % 3 != 0 {
            let a: i64 = xs.iter().filter(|&&y| y > x).map(|&y| x * y).sum();
            let b = xs.iter().filter(|&&y| y < x).count();
            want.push((x, a, b));
        }
    }
    assert_eq!(got, want);
    assert!(!want.is_empty());
    // A nested comprehension reading an earlier trailing `let`: evaluated as written.
    let got = support::on_every_cpu_backend(
        || par![s | x <- &xs, let a = x * 2, let s = par_sum![a + y | y <- &xs]],
    );
    let want: Vec<i64> = xs.iter().map(|&x| xs.iter().map(|&y| x * 2 + y).sum()).collect();
    assert_eq!(got, want);
}
