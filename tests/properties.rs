//! Random comprehensions over random data: every backend agrees with hand-written nested loops.

mod support;

use parcomp::{par, Jagged};
use proptest::prelude::*;
use support::on_every_backend;

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
