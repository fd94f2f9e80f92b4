//! The examples of the papers behind parcomp, as comprehensions, checked against the external
//! reference vectors in `tests/data/` on every backend.
//!
//! - `reference.json`: Thrust's `expand`, the CSR smvm of the flattening-by-expansion artifact,
//!   prime counts, the points-of-lines drawing, the Pythagorean triples of the seed paper;
//! - `segmented.json`: the Futhark `segmented` library's test vectors (`expand`).

mod support;

#[path = "../examples/support/lines.rs"]
mod lines;
#[path = "../examples/support/pythagorean.rs"]
mod pythagorean;
#[path = "../examples/support/sieve.rs"]
mod sieve;

use lines::{get_point_in_line, points_in_line, Line};
use parcomp::{par, with_backend, Backend, Jagged};
use serde_json::Value;

const REFERENCE: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/reference.json"));
const SEGMENTED: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/segmented.json"));

fn reference() -> Value {
    serde_json::from_str(REFERENCE).expect("tests/data/reference.json is valid JSON")
}

fn segmented() -> Value {
    serde_json::from_str(SEGMENTED).expect("tests/data/segmented.json is valid JSON")
}

/// Runs `check` once on every backend, saying which one failed; on the device, every
/// comprehension must have run there.
fn on_every_backend(check: impl FnMut(Backend)) {
    on_every_backend_but(&[], check)
}

/// [`on_every_backend`], where the comprehensions written as `host_only[k].0` may stay on the
/// CPU, for a reason containing `host_only[k].1`.
fn on_every_backend_but(host_only: &[(&str, &str)], mut check: impl FnMut(Backend)) {
    for &backend in &[Backend::Sequential, Backend::Rayon] {
        with_backend(backend, || check(backend));
    }
    for &device in support::devices() {
        let ((), runs) = parcomp::trace::record(|| with_backend(device, || check(device)));
        for run in &runs {
            match host_only.iter().find(|(text, _)| run.text.contains(text)) {
                Some((_, why)) => {
                    let reason = run.reason.as_deref().unwrap_or_default();
                    assert!(reason.contains(why), "{run}");
                }
                None => assert_eq!(run.backend, device, "{run}"),
            }
        }
    }
}

fn ints(v: &Value) -> Vec<i64> {
    v.as_array()
        .unwrap_or_else(|| panic!("expected an array, got {v}"))
        .iter()
        .map(|x| x.as_i64().unwrap_or_else(|| panic!("expected an integer, got {x}")))
        .collect()
}

fn usizes(v: &Value) -> Vec<usize> {
    ints(v).into_iter().map(|x| usize::try_from(x).expect("non-negative")).collect()
}

#[test]
fn expand_identity_times() {
    // The comprehension paper's introduction: expand (λx→x) (*) [2,3,1] = [0,2,0,3,6,0].
    on_every_backend(|backend| {
        let v = par![x * i | x <- [2, 3, 1], i <- 0..x];
        assert_eq!(v, [0, 2, 0, 3, 6, 0], "on {backend}");
    });
}

#[test]
fn expand_cases_of_the_segmented_library() {
    let data = segmented();
    let cases = data["expand_size_id_get_mul"]["cases"].as_array().expect("cases");
    assert!(!cases.is_empty());
    on_every_backend(|backend| {
        for case in cases {
            let input = ints(&case["input"]);
            let expected = ints(&case["expected"]);
            // expand (size x = x) (get x i = x * i)
            let v = par![x * i | x <- &input, i <- 0..x];
            assert_eq!(v, expected, "on {backend}, input {input:?}");
        }
    });
}

#[test]
fn thrust_expand() {
    let data = reference();
    let cases = data["thrust_expand"]["cases"].as_array().expect("cases");
    let mut strings = 0;
    let mut numbers = 0;
    for case in cases {
        let counts = usizes(&case["counts"]);
        let values = case["values"].as_array().expect("values");
        let expected = case["expected"].as_array().expect("expected");
        // Every value repeated `counts[j]` times; the inner generator only sizes the row.
        if values[0].is_string() {
            // Strings are not device values: these run on the CPU, and say why.
            let values: Vec<&str> = values.iter().map(|v| v.as_str().unwrap()).collect();
            let expected: Vec<&str> = expected.iter().map(|v| v.as_str().unwrap()).collect();
            let expand = || par![values[j] | j <- 0..counts.len(), _ <- 0..counts[j]];
            assert_eq!(support::on_every_cpu_backend(expand), expected, "counts {counts:?}");
            if let Some(v) = support::off_device(expand, "which the device cannot hold") {
                assert_eq!(v, expected);
            }
            strings += 1;
        } else {
            let values = ints(&case["values"]);
            let expand = || par![values[j] | j <- 0..counts.len(), _ <- 0..counts[j]];
            assert_eq!(
                support::on_every_backend(expand),
                ints(&case["expected"]),
                "counts {counts:?}"
            );
            numbers += 1;
        }
    }
    // Both kinds of case were exercised.
    assert_eq!(strings, 3);
    assert_eq!(numbers, 1);
}

#[test]
fn pythagorean_triples_match_the_paper() {
    let data = reference();
    let reference = &data["pythagorean_triples"];
    let n = reference["n"].as_i64().unwrap() as i32;
    let triple = |v: &Value| {
        let t = ints(v);
        (t[0] as i32, t[1] as i32, t[2] as i32)
    };
    let first5: Vec<_> = reference["first5"].as_array().unwrap().iter().map(triple).collect();
    let last = triple(&reference["last"]);
    let count = reference["count"].as_u64().unwrap() as usize;
    on_every_backend(|backend| {
        let t =
            par![(x, y, z) | x <- 1..n, y <- x..n, z <- y..x + y, z < n, x * x + y * y == z * z];
        assert_eq!(t.len(), count, "on {backend}");
        assert_eq!(t[..5], first5[..], "on {backend}");
        assert_eq!(t.last(), Some(&last), "on {backend}");
    });
    assert_eq!((count, last), (50, (65, 72, 97)));
}

#[test]
fn pythagorean_triples_match_nested_loops() {
    on_every_backend(|backend| {
        for n in [0, 1, 2, 5, 300] {
            let t = par![(x, y, z) | x <- 1..n, y <- x..n, z <- y..x + y, z < n, x * x + y * y == z * z];
            assert_eq!(t, pythagorean::by_loops(n), "on {backend}, n = {n}");
        }
    });
    assert!(pythagorean::by_loops(2).is_empty());
    assert_eq!(pythagorean::by_loops(6), [(3, 4, 5)]);
}

#[test]
fn points_of_lines_draw_the_reference_grid() {
    let data = reference();
    let reference = &data["points_of_lines"];
    let width = reference["width"].as_u64().unwrap() as usize;
    let height = reference["height"].as_u64().unwrap() as usize;
    let point = |v: &Value| {
        let p = ints(v);
        (p[0] as i32, p[1] as i32)
    };
    let lines: Vec<Line> = reference["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (point(&l[0]), point(&l[1])))
        .collect();
    // The examples hard-code the same lines.
    assert_eq!(lines, lines::REFERENCE_LINES);
    assert_eq!((width, height), (lines::REFERENCE_WIDTH, lines::REFERENCE_HEIGHT));
    let total = reference["total_points"].as_u64().unwrap() as usize;
    let grid: Vec<&str> =
        reference["grid"].as_array().unwrap().iter().map(|r| r.as_str().unwrap()).collect();

    on_every_backend(|backend| {
        let points =
            par![get_point_in_line(line, i) | line <- &lines, i <- 0..points_in_line(line)];
        assert_eq!(points.len(), total, "on {backend}");
        // In line order: every line starts at its first end point and ends at its second.
        assert_eq!(points[0], lines[0].0, "on {backend}");
        assert_eq!(points[total - 1], lines[5].1, "on {backend}");
        let drawn = lines::grid_rows(&lines::rasterize(&points, width, height), '1', '0');
        for (y, (got, want)) in drawn.iter().zip(&grid).enumerate() {
            assert_eq!(got, want, "on {backend}, row {y}");
        }
        assert_eq!(drawn.len(), grid.len());
    });
}

#[test]
fn points_of_lines_round_halves_to_even() {
    // Line 0 of the reference, (58, 20) -> (2, 3): slope -17/56, and step 28 gives exactly
    // -8.5 in f32. Futhark's f32.round (ties to even) gives -8, so y = 12, as in the reference
    // grid; rounding half away from zero would give y = 11.
    assert_eq!(get_point_in_line(((58, 20), (2, 3)), 28), (30, 12));
    // Degenerate lines: a single point, and vertical/horizontal lines in both directions.
    assert_eq!(points_in_line(((4, 4), (4, 4))), 1);
    assert_eq!(get_point_in_line(((4, 4), (4, 4)), 0), (4, 4));
    let down = par![get_point_in_line(l, i) | l <- [((1, 3), (1, 0))], i <- 0..points_in_line(l)];
    assert_eq!(down, [(1, 3), (1, 2), (1, 1), (1, 0)]);
    let left = par![get_point_in_line(l, i) | l <- [((2, 0), (0, 0))], i <- 0..points_in_line(l)];
    assert_eq!(left, [(2, 0), (1, 0), (0, 0)]);
}

#[test]
fn primes_by_the_expansion_sieve() {
    let data = reference();
    let cases = data["primes_below"]["cases"].as_array().unwrap();
    let mut checked = 0;
    // The new primes are read from the atomic flags the multiples were marked in (on the CPU):
    // that comprehension stays on the CPU (the device cannot hold atomics, whose `.load()` the
    // runtime would otherwise look for as a method of the element's type); the multiples run
    // on the device.
    let host_only = [(
        "composite[x - c].load",
        "`composite` is a `Vec<AtomicBool>`, which the device cannot hold",
    )];
    on_every_backend_but(&host_only, |backend| {
        for case in cases {
            let n = case["n"].as_u64().unwrap() as usize;
            let expected = case["expected_count"].as_u64().unwrap() as usize;
            if n > 1_000_000 {
                continue; // 10^8 takes too long in a debug build
            }
            // The reference counts primes p <= n; none of the n here is prime.
            let primes = sieve::primes_below(n);
            assert_eq!(primes.len(), expected, "on {backend}, n = {n}");
            checked += 1;
        }
        // The primes themselves, not only their count.
        assert_eq!(sieve::primes_below(30), [2, 3, 5, 7, 11, 13, 17, 19, 23, 29], "on {backend}");
        assert_eq!(sieve::primes_below(10_000), sieve::eratosthenes(10_000), "on {backend}");
        for n in 0..3 {
            assert!(sieve::primes_below(n).is_empty(), "on {backend}, n = {n}");
        }
        assert_eq!(sieve::primes_below(3), [2], "on {backend}");
    });
    // Three cases below 10^6, on every backend that ran.
    let backends = 2 + support::devices().len();
    assert_eq!(checked, 3 * backends);
}

#[test]
fn primes_across_capped_rounds() {
    // Above sieve::MAX_ROUND the rounds are capped; check a range that needs several of them
    // against the plain sieve (on the default backend only: it is the slowest check here).
    let n = 65_536 + 2 * sieve::MAX_ROUND + 12_345;
    let mut rounds = 0;
    let primes = sieve::primes_below_traced(n, |_| rounds += 1);
    assert!(rounds >= 7, "{rounds} rounds");
    assert_eq!(primes, sieve::eratosthenes(n));
}

#[test]
fn smvm_products_summed_per_row() {
    let data = reference();
    let csr = &data["smvm_csr"];
    let offsets = usizes(&csr["row_off"]);
    let columns = usizes(&csr["col_idx"]);
    let values = ints(&csr["vals"]);
    let x = ints(&csr["vector"]);
    let expected = ints(&csr["expected"]);
    let m =
        Jagged::from_parts(offsets.clone(), columns.into_iter().zip(values).collect::<Vec<_>>())
            .expect("valid CSR");

    on_every_backend(|backend| {
        let products = par![v * x[c] | i <- 0..m.len(), (c, v) <- m.row(i)];
        assert_eq!(products, [3, 2, 66, 3, 8, 5, 12, 42, 48, 54, 50], "on {backend}");
        // One sum per row, over the row's products (plain Rust over the offsets).
        let sums: Vec<i64> =
            offsets.windows(2).map(|w| products[w[0]..w[1]].iter().sum()).collect();
        assert_eq!(sums, expected, "on {backend}");
        // The same with the segmented runtime's reduction.
        let rows = Jagged::from_parts(offsets.clone(), products).unwrap();
        assert_eq!(
            parcomp::segmented::reduce_rows(&rows, 0, |a, b| a + b),
            expected,
            "on {backend}"
        );
    });
    assert_eq!(expected, [71, 11, 59, 48, 104]);
}
