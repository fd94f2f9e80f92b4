//! Random comprehensions over random data: every backend agrees with hand-written nested loops.

mod support;

use parcomp::{
    par, par_all, par_any, par_count, par_max, par_min, par_product, par_reduce, par_sum, Jagged,
};
use proptest::prelude::*;
use support::on_every_backend;

/// Concatenation of polynomial hashes `(hash, base^length)`: associative, not commutative.
#[parcomp::par_fn]
fn hash_concat((h1, p1): (u64, u64), (h2, p2): (u64, u64)) -> (u64, u64) {
    (h1.wrapping_mul(p2).wrapping_add(h2), p1.wrapping_mul(p2))
}

/// Rows with many empty ones and, sometimes, one huge row.
fn rows() -> impl Strategy<Value = Vec<Vec<i32>>> {
    let row = prop_oneof![
        6 => Just(Vec::new()),
        3 => prop::collection::vec(-50i32..50, 1..6),
    ];
    (prop::collection::vec(row, 0..40), any::<bool>(), 0usize..40, 2_000usize..20_000).prop_map(
        |(mut rows, huge, at, len)| {
            if huge {
                let at = at.min(rows.len());
                rows.insert(at, (0..len as i32).map(|v| v % 97 - 40).collect());
            }
            rows
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn nested_ranges_with_dependent_bounds(
        a in -12i64..12, b in -12i64..12, c in -4i64..6, d in -4i64..6, m in 1i64..5,
    ) {
        let got = on_every_backend(|| {
            par![(x, y, z) | x <- a..b, y <- (x - c)..=(x + d), let s = x + y,
                             z <- (y..s).rev(), (x + y + z).rem_euclid(m) == 0]
        });
        let mut want = Vec::new();
        for x in a..b {
            for y in (x - c)..=(x + d) {
                let s = x + y;
                for z in (y..s).rev() {
                    if (x + y + z).rem_euclid(m) == 0 {
                        want.push((x, y, z));
                    }
                }
            }
        }
        prop_assert_eq!(got, want);
    }

    #[test]
    fn rows_of_jagged_data(rows in rows(), k in 1usize..4) {
        let m = Jagged::from(rows.clone());
        let got = on_every_backend(|| par![(i, v) | i <- 0..m.len(), v <- m.row(i)]);
        let want: Vec<(usize, i32)> =
            rows.iter().enumerate().flat_map(|(i, r)| r.iter().map(move |&v| (i, v))).collect();
        prop_assert_eq!(got, want);

        let got = on_every_backend(|| {
            par![v * j | row <- &m, v <- row, j <- 0..v.rem_euclid(4), v % 3 != 0]
        });
        let mut want = Vec::new();
        for row in &rows {
            for &v in row {
                for j in 0..v.rem_euclid(4) {
                    if v % 3 != 0 {
                        want.push(v * j);
                    }
                }
            }
        }
        prop_assert_eq!(got, want);

        let got = on_every_backend(|| {
            par![(i, w) | i <- 0..rows.len(), w <- rows[i].map(|v| v * 2).rev().step_by(k)]
        });
        let mut want = Vec::new();
        for (i, row) in rows.iter().enumerate() {
            for w in row.iter().map(|v| v * 2).rev().step_by(k) {
                want.push((i, w));
            }
        }
        prop_assert_eq!(got, want);
    }

    #[test]
    fn tuple_patterns_and_regular_products(
        pairs in prop::collection::vec(prop::collection::vec((-9i32..9, -9i32..9), 0..5), 0..30),
        xs in prop::collection::vec(0u8..20, 0..30),
        n in 0u8..12,
    ) {
        let m = Jagged::from(pairs.clone());
        let got = on_every_backend(|| par![a * b | row <- &m, (a, b) <- row, a > b]);
        let want: Vec<i32> =
            pairs.iter().flatten().filter(|(a, b)| a > b).map(|(a, b)| a * b).collect();
        prop_assert_eq!(got, want);

        let got = on_every_backend(|| par![(x, y, ((x ^ y), _w)) | x <- &xs, y <- 0..n, _w <- [(); 2]]);
        let mut want = Vec::new();
        for &x in &xs {
            for y in 0..n {
                for w in [(); 2] {
                    want.push((x, y, ((x ^ y), w)));
                }
            }
        }
        prop_assert_eq!(got, want);

        let got = on_every_backend(|| par![x + y | x <- &xs, x % 2 == 0, y <- (0..n).map(|j| j + x)]);
        let mut want = Vec::new();
        for &x in &xs {
            if x % 2 == 0 {
                for y in (0..n).map(|j| j + x) {
                    want.push(x + y);
                }
            }
        }
        prop_assert_eq!(got, want);
    }
}

/// Widens a value before summing (a function the device calls).
#[parcomp::par_fn]
fn wide(v: i32) -> i64 {
    i64::from(v)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn nested_reductions_over_jagged_rows(rows in rows(), threshold in -60i32..60) {
        let m = Jagged::from(rows.clone());

        let got = on_every_backend(|| par![par_sum![wide(v) | v <- m.row(i)] | i <- 0..m.len()]);
        let want: Vec<i64> = rows.iter().map(|r| r.iter().map(|&v| wide(v)).sum()).collect();
        prop_assert_eq!(got, want);

        let got = on_every_backend(|| par![(par_min![v | v <- row], par_max![v | v <- row]) | row <- &m]);
        let want: Vec<(Option<i32>, Option<i32>)> =
            rows.iter().map(|r| (r.iter().copied().min(), r.iter().copied().max())).collect();
        prop_assert_eq!(got, want);

        let got = on_every_backend(|| {
            par![par_count![() | v <- m.row(i), v > threshold] | i <- 0..m.len(), i % 2 == 0]
        });
        let want: Vec<usize> = rows
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 2 == 0)
            .map(|(_, r)| r.iter().filter(|&&v| v > threshold).count())
            .collect();
        prop_assert_eq!(got, want);

        let got = on_every_backend(|| {
            par![(par_any![v == threshold | v <- row], par_all![v < threshold | v <- row]) | row <- &m]
        });
        let want: Vec<(bool, bool)> = rows
            .iter()
            .map(|r| (r.contains(&threshold), r.iter().all(|&v| v < threshold)))
            .collect();
        prop_assert_eq!(got, want);

        // An associative, non-commutative operator keeps the order: a polynomial hash of the
        // inner elements, carried as (hash, 31^length).
        let got = on_every_backend(|| {
            par![par_reduce!(hash_concat, (0, 1); ((v + 100) as u64, 31) | v <- m.row(i))
                 | i <- 0..m.len()]
        });
        let want: Vec<(u64, u64)> = rows
            .iter()
            .map(|r| r.iter().fold((0, 1), |acc, &v| hash_concat(acc, ((v + 100) as u64, 31))))
            .collect();
        prop_assert_eq!(got, want);

        // A nested comprehension with two generators and a filter inside.
        let got = on_every_backend(|| {
            par![par_sum![wide(v) * k | v <- m.row(i), k <- 0..wide(v).rem_euclid(3), v != threshold]
                 | i <- 0..m.len()]
        });
        let want: Vec<i64> = rows
            .iter()
            .map(|r| {
                let mut s = 0;
                for &v in r {
                    for k in 0..wide(v).rem_euclid(3) {
                        if v != threshold {
                            s += wide(v) * k;
                        }
                    }
                }
                s
            })
            .collect();
        prop_assert_eq!(got, want);

        // Nested collect.
        let got = on_every_backend(|| par![par![v * 2 | v <- row, v % 2 == 0] | row <- &m]);
        let want: Vec<Vec<i32>> =
            rows.iter().map(|r| r.iter().filter(|&&v| v % 2 == 0).map(|v| v * 2).collect()).collect();
        prop_assert_eq!(got, want);
    }

    #[test]
    fn top_level_reductions(rows in rows(), k in 1i64..7) {
        let m = Jagged::from(rows.clone());
        let flat: Vec<i64> = rows.iter().flatten().map(|&v| i64::from(v)).collect();
        prop_assert_eq!(
            on_every_backend(|| par_sum![i64::from(v) * k | row <- &m, v <- row]),
            flat.iter().map(|v| v * k).sum::<i64>()
        );
        prop_assert_eq!(
            on_every_backend(|| par_count![v | row <- &m, v <- row, i64::from(v) % k == 0]),
            flat.iter().filter(|&&v| v % k == 0).count()
        );
        prop_assert_eq!(
            on_every_backend(|| par_min![(v, i) | i <- 0..m.len(), v <- m.row(i)]),
            rows.iter().enumerate().flat_map(|(i, r)| r.iter().map(move |&v| (v, i))).min()
        );
        prop_assert_eq!(
            on_every_backend(|| par_product![if v % 5 == 0 { -1i64 } else { 1 } | row <- &m, v <- row]),
            flat.iter().map(|&v| if v % 5 == 0 { -1i64 } else { 1 }).product::<i64>()
        );
        prop_assert_eq!(
            on_every_backend(|| par_any![i64::from(v) == k * 7 | row <- &m, v <- row]),
            flat.contains(&(k * 7))
        );
    }

    #[test]
    fn parallel_branches_zip_to_the_shortest(
        xs in prop::collection::vec(-50i32..50, 0..40),
        ys in prop::collection::vec(0u8..10, 0..40),
        limit in -50i32..50,
    ) {
        let got = on_every_backend(|| par![(x, y) | x <- &xs | y <- &ys]);
        let want: Vec<(i32, u8)> = xs.iter().copied().zip(ys.iter().copied()).collect();
        prop_assert_eq!(got, want);

        // Branches with several qualifiers are zipped after their own filters and lets.
        let got = on_every_backend(|| {
            par![(x, sq, y, j) | x <- &xs, x > limit, let sq = x * x | y <- &ys, j <- 0..y]
        });
        let left: Vec<(i32, i32)> = xs.iter().filter(|&&x| x > limit).map(|&x| (x, x * x)).collect();
        let right: Vec<(u8, u8)> = ys.iter().flat_map(|&y| (0..y).map(move |j| (y, j))).collect();
        let want: Vec<(i32, i32, u8, u8)> =
            left.into_iter().zip(right).map(|((x, sq), (y, j))| (x, sq, y, j)).collect();
        prop_assert_eq!(got, want);
    }
}
