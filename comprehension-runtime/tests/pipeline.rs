//! The pipeline written by hand the way the macro emits it, on every backend.

use comprehension_runtime::pipeline::source;
use comprehension_runtime::source::{map, rev};
use comprehension_runtime::{with_backend, Backend, Jagged, Site};

static SITE: Site = Site { text: "test", file: file!(), line: line!(), column: column!() };

fn each_backend<T: PartialEq + std::fmt::Debug>(f: impl Fn() -> T) -> T {
    let reference = with_backend(Backend::Sequential, &f);
    for &b in Backend::ALL {
        assert_eq!(with_backend(b, &f), reference, "backend {b}");
    }
    reference
}

fn triples(n: u32) -> Vec<(u32, u32, u32)> {
    source(&SITE, &(1..n))
        .expand(|&x| x..n)
        .expand(|&(x, y)| y..x + y)
        .filter(|&(_, z)| z < n)
        .filter(|&((x, y), z)| x * x + y * y == z * z)
        .map(|((x, y), z)| (x, y, z))
        .collect()
}

#[test]
fn pythagorean_triples() {
    for n in [0, 1, 5, 100, 300] {
        let got = each_backend(|| triples(n));
        let mut want = Vec::new();
        for x in 1..n {
            for y in x..n {
                for z in y..x + y {
                    if z < n && x * x + y * y == z * z {
                        want.push((x, y, z));
                    }
                }
            }
        }
        assert_eq!(got, want);
    }
    assert_eq!(triples(100).len(), 50);
}

#[test]
fn skewed_rows_and_products() {
    let rows: Vec<Vec<u64>> = (0..200u64)
        .map(|i| if i == 3 { (0..200_000).collect() } else { (0..i % 4).collect() })
        .collect();
    let jagged = Jagged::from(rows.clone());
    let got = each_backend(|| {
        source(&SITE, &(0..rows.len()))
            .expand(|&i| jagged.row(i))
            .product(&map(0..3u64, |k| k))
            .map(|((i, v), k)| i as u64 * 1000 + v * 3 + k)
            .collect()
    });
    let mut want = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        for &v in row {
            for k in 0..3 {
                want.push(i as u64 * 1000 + v * 3 + k);
            }
        }
    }
    assert_eq!(got, want);
}

#[test]
fn lets_filters_and_regular_sizes() {
    let got = each_backend(|| {
        source(&SITE, &(0..50i64))
            .filter(|&x| x % 3 != 0)
            .bind(|&x| x * x)
            .product_map(&(0..7i64), |&(x, _), i| x + i)
            .filter(|&((_, sq), y)| (sq + y) % 2 == 0)
            .expand(|&((x, _), y)| rev(y..x + 40))
            .map(|(((x, sq), y), z)| x + sq + y * z)
            .collect()
    });
    let mut want = Vec::new();
    for x in 0..50i64 {
        if x % 3 == 0 {
            continue;
        }
        let sq = x * x;
        for y in (0..7).map(|i| x + i) {
            if (sq + y) % 2 != 0 {
                continue;
            }
            for z in (y..x + 40).rev() {
                want.push(x + sq + y * z);
            }
        }
    }
    assert_eq!(got, want);
}

#[test]
fn nested_reductions_and_reducers() {
    use comprehension_runtime::pipeline::{CollectVec, Count, MaxReducer, SumReducer};
    let m = Jagged::from(vec![
        vec![(0usize, 1i64), (1, 2), (3, 11)],
        vec![(1, 3), (2, 4)],
        vec![],
        vec![(1, 5), (2, 6), (3, 7)],
        vec![(3, 8)],
        vec![(3, 9), (4, 10)],
    ]);
    let x = [3i64, 1, 2, 6, 5];
    let got = each_backend(|| {
        source(&SITE, &(0..m.len()))
            .nested(|p| p.expand(|&i| m.row(i)).map(|(_, (c, v))| v * x[c]), SumReducer::new())
            .map(|(_, s)| s)
            .collect()
    });
    assert_eq!(got, [71, 11, 0, 59, 48, 104]);
    let got = each_backend(|| {
        source(&SITE, &(0..m.len()))
            .nested(|p| p.expand(|&i| m.row(i)).map(|(_, (_, v))| v), MaxReducer::new())
            .nested(|p| p.expand(|&(i, _)| m.row(i)).map(|(_, (c, _))| c), CollectVec)
            .map(|((i, max), cols)| (i, max, cols))
            .collect()
    });
    assert_eq!(got[2], (2, None, vec![]));
    assert_eq!(got[3], (3, Some(7), vec![1, 2, 3]));
    let total = each_backend(|| {
        source(&SITE, &(0..1000u64))
            .expand(|&x| 0..x)
            .map(|(_, y)| y)
            .reduce_with(SumReducer::new())
    });
    assert_eq!(total, (0..1000u64).map(|x| x * x.saturating_sub(1) / 2).sum());
    let count = each_backend(|| {
        source(&SITE, &(0..1000u64))
            .expand(|&x| 0..x)
            .filter(|&(x, y)| (x + y) % 3 == 0)
            .map(|_| ())
            .reduce_with(Count)
    });
    assert_eq!(count, (0..1000u64).map(|x| (0..x).filter(|y| (x + y) % 3 == 0).count()).sum());
}
