//! The segmented primitives against naive sequential oracles, on every backend (the sequential
//! reference, rayon in the global pool and rayon in pools of other sizes), on random inputs:
//! empty input, all-empty rows, many empty rows, one huge row among tiny ones, single elements;
//! with integer operators and a non-commutative one (2x2 matrix product mod a prime), which
//! proves that the parallel algorithms keep left-to-right order.

mod support;

use comprehension_runtime::segmented::{
    expand, expand_outer_reduce, expand_reduce, reduce_rows, replicated_iota, scan_exclusive,
    scan_inclusive, segmented_iota, segmented_reduce, segmented_scan,
};
use comprehension_runtime::{with_backend, Backend, Jagged};
use proptest::prelude::*;
use std::fmt::Debug;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

// ---------------------------------------------------------------------------------------------
// Inputs

/// splitmix64: a small deterministic generator, so that proptest only draws a few numbers and
/// the (large) inputs are derived from them.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Rows given by sizes, the flat values, and a seed per row.
#[derive(Debug)]
struct Shape {
    sizes: Vec<usize>,
    values: Vec<u64>,
    seeds: Vec<u64>,
    /// Whether `flags[0]` is left `false` (the first element starts a segment anyway).
    first_flag_false: bool,
}

impl Shape {
    fn new(sizes: Vec<usize>, rng: &mut Rng) -> Shape {
        let total: usize = sizes.iter().sum();
        let values = (0..total).map(|_| rng.next() >> rng.below(64)).collect();
        let seeds = sizes.iter().map(|_| rng.next()).collect();
        Shape { sizes, values, seeds, first_flag_false: rng.below(2) == 0 }
    }

    /// The shapes the properties draw from, chosen by `kind`.
    fn generate(kind: u8, seed: u64) -> Shape {
        let mut rng = Rng(seed);
        let sizes: Vec<usize> = match kind {
            // Empty input.
            0 => vec![],
            // A single element.
            1 => vec![1],
            // Only empty rows (many of them).
            2 => vec![0; rng.below(20_000) as usize],
            // Many empty rows and a few short ones.
            3 => (0..rng.below(20_000))
                .map(|_| if rng.below(50) == 0 { 1 + rng.below(5) as usize } else { 0 })
                .collect(),
            // One huge row among tiny ones.
            4 => {
                let rows = 1 + rng.below(300) as usize;
                let huge = rng.below(rows as u64) as usize;
                (0..rows)
                    .map(|r| {
                        if r == huge {
                            5_000 + rng.below(25_000) as usize
                        } else {
                            rng.below(3) as usize
                        }
                    })
                    .collect()
            }
            // Many short rows.
            5 => (0..rng.below(8_000)).map(|_| rng.below(6) as usize).collect(),
            // A few long rows.
            6 => (0..1 + rng.below(6)).map(|_| rng.below(12_000) as usize).collect(),
            // A handful of tiny rows.
            _ => (0..rng.below(8)).map(|_| rng.below(4) as usize).collect(),
        };
        Shape::new(sizes, &mut rng)
    }

    /// One flag per value: `true` at the first element of every non-empty row.
    fn flags(&self) -> Vec<bool> {
        let mut flags = Vec::with_capacity(self.values.len());
        for &n in &self.sizes {
            flags.extend((0..n).map(|i| i == 0));
        }
        if self.first_flag_false && !flags.is_empty() {
            flags[0] = false;
        }
        flags
    }

    /// The expansion input: (seed, size) per row.
    fn rows(&self) -> Vec<(u64, usize)> {
        self.seeds.iter().copied().zip(self.sizes.iter().copied()).collect()
    }
}

/// Element `i` of the expanded row `(seed, _)`.
fn fetch((seed, _): &(u64, usize), i: usize) -> u64 {
    mix(seed ^ (i as u64).wrapping_mul(0x2545_F491_4F6C_DD1D)) >> (i % 64)
}

// ---------------------------------------------------------------------------------------------
// Backends

/// A pool with more threads than cores, so that blocks and chunks are many and small.
fn wide_pool() -> &'static rayon::ThreadPool {
    static POOL: OnceLock<rayon::ThreadPool> = OnceLock::new();
    POOL.get_or_init(|| rayon::ThreadPoolBuilder::new().num_threads(7).build().unwrap())
}

/// A pool of one thread.
fn single_pool() -> &'static rayon::ThreadPool {
    static POOL: OnceLock<rayon::ThreadPool> = OnceLock::new();
    POOL.get_or_init(|| rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap())
}

/// Checks `f` against `expected` on the sequential reference, on rayon in the current pool and
/// on rayon in a pool of 7 threads and one of 1 thread.
fn check<T: PartialEq + Debug + Send>(what: &str, expected: &T, f: impl Fn() -> T + Sync) {
    let runs: [(&str, &dyn Fn() -> T); 4] = [
        ("seq", &|| with_backend(Backend::Sequential, &f)),
        ("rayon", &|| with_backend(Backend::Rayon, &f)),
        ("rayon, 7 threads", &|| wide_pool().install(|| with_backend(Backend::Rayon, &f))),
        ("rayon, 1 thread", &|| single_pool().install(|| with_backend(Backend::Rayon, &f))),
    ];
    for (name, run) in runs {
        let got = run();
        if &got != expected {
            // Keep the message short: the inputs can be large.
            let text = format!("{got:?}");
            let want = format!("{expected:?}");
            let at = text.bytes().zip(want.bytes()).position(|(a, b)| a != b).unwrap_or(0);
            panic!(
                "{what} on {name} differs from the oracle near character {at}: \
                 got …{}…, want …{}…",
                &text[at.saturating_sub(40)..(at + 80).min(text.len())],
                &want[at.saturating_sub(40)..(at + 80).min(want.len())],
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Operators

const P: u64 = 1_000_000_007;

/// 2x2 matrices mod P, row-major: an associative, non-commutative product.
type Mat = [u64; 4];
const ID: Mat = [1, 0, 0, 1];

fn mat_mul(a: Mat, b: Mat) -> Mat {
    [
        (a[0] * b[0] + a[1] * b[2]) % P,
        (a[0] * b[1] + a[1] * b[3]) % P,
        (a[2] * b[0] + a[3] * b[2]) % P,
        (a[2] * b[1] + a[3] * b[3]) % P,
    ]
}

fn mat(v: u64) -> Mat {
    [v % P, (v >> 7) % P, (v >> 13) % 5, 1 + (v >> 17) % 3]
}

/// Runs every property of `shape` under one operator: `elem` maps a raw value to an operand.
fn properties<T, E, F>(shape: &Shape, op_name: &str, elem: E, identity: T, op: F)
where
    T: Copy + Send + Sync + PartialEq + Debug,
    E: Fn(u64) -> T + Sync,
    F: Fn(T, T) -> T + Sync + Copy,
{
    let values: Vec<T> = shape.values.iter().map(|&v| elem(v)).collect();
    let flags = shape.flags();
    let fold = |xs: &mut dyn Iterator<Item = T>| xs.fold(identity, op);

    // Scans: the oracle folds every prefix (incrementally).
    let mut inclusive = Vec::new();
    let mut exclusive = Vec::new();
    let mut acc = identity;
    for &v in &values {
        exclusive.push(acc);
        acc = op(acc, v);
        inclusive.push(acc);
    }
    check(&format!("scan_inclusive {op_name}"), &inclusive, || {
        scan_inclusive(&values, identity, op)
    });
    check(&format!("scan_exclusive {op_name}"), &exclusive, || {
        scan_exclusive(&values, identity, op)
    });

    // Flag-delimited segments, cut out explicitly.
    let mut segments: Vec<&[T]> = Vec::new();
    let mut start = 0;
    for i in 1..=values.len() {
        if i == values.len() || flags[i] {
            segments.push(&values[start..i]);
            start = i;
        }
    }
    let mut scanned = Vec::with_capacity(values.len());
    for seg in &segments {
        let mut acc = identity;
        for &v in seg.iter() {
            acc = op(acc, v);
            scanned.push(acc);
        }
    }
    check(&format!("segmented_scan {op_name}"), &scanned, || {
        segmented_scan(&flags, &values, identity, op)
    });
    let reduced: Vec<T> = segments.iter().map(|seg| fold(&mut seg.iter().copied())).collect();
    check(&format!("segmented_reduce {op_name}"), &reduced, || {
        segmented_reduce(&flags, &values, identity, op)
    });

    // Rows given by sizes, empty ones included.
    let jagged = Jagged::from_lengths(&shape.sizes, values.clone()).unwrap();
    let rows: Vec<T> = jagged.iter().map(|row| fold(&mut row.iter().copied())).collect();
    check(&format!("reduce_rows {op_name}"), &rows, || reduce_rows(&jagged, identity, op));

    // Expansion without the expanded array.
    let input = shape.rows();
    let outer: Vec<T> =
        input.iter().map(|a| fold(&mut (0..a.1).map(|i| elem(fetch(a, i))))).collect();
    check(&format!("expand_outer_reduce {op_name}"), &outer, || {
        expand_outer_reduce(&input, |a| a.1, |a, i| elem(fetch(a, i)), identity, op)
    });
    let inner: Vec<T> =
        input.iter().zip(&outer).filter(|(a, _)| a.1 > 0).map(|(_, &r)| r).collect();
    check(&format!("expand_reduce {op_name}"), &inner, || {
        expand_reduce(&input, |a| a.1, |a, i| elem(fetch(a, i)), identity, op)
    });
}

/// The properties that do not depend on an operator.
fn index_properties(shape: &Shape) {
    let flags = shape.flags();
    let mut repl = Vec::new();
    for (row, &n) in shape.sizes.iter().enumerate() {
        repl.extend(std::iter::repeat_n(row, n));
    }
    check("replicated_iota", &repl, || replicated_iota(&shape.sizes));

    let mut segm = Vec::with_capacity(flags.len());
    for &n in &shape.sizes {
        segm.extend(0..n);
    }
    check("segmented_iota", &segm, || segmented_iota(&flags));

    let input = shape.rows();
    let mut expanded = Vec::new();
    for a in &input {
        for i in 0..a.1 {
            expanded.push(fetch(a, i));
        }
    }
    check("expand", &expanded, || expand(&input, |a| a.1, fetch));
    // Non-`Copy` outputs, on the rows that hold the first few thousand elements.
    let mut total = 0;
    let few = input.iter().take_while(|a| {
        total += a.1;
        total <= 3000
    });
    let few: Vec<(u64, usize)> = few.copied().collect();
    let want: Vec<String> =
        expanded[..few.iter().map(|a| a.1).sum::<usize>()].iter().map(u64::to_string).collect();
    check("expand to String", &want, || expand(&few, |a| a.1, |a, i| fetch(a, i).to_string()));
}

fn all_properties(shape: &Shape) {
    index_properties(shape);
    properties(shape, "wrapping add", |v| v, 0u64, u64::wrapping_add);
    properties(shape, "min", |v| v, u64::MAX, u64::min);
    properties(shape, "max", |v| v as i64, i64::MIN, i64::max);
    properties(shape, "2x2 matrix product", mat, ID, mat_mul);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn random_shapes(kind in 0u8..8, seed in any::<u64>()) {
        all_properties(&Shape::generate(kind, seed));
    }
}

// ---------------------------------------------------------------------------------------------
// Fixed shapes, so that the important cases do not depend on the draw.

#[test]
fn every_kind_of_shape() {
    for kind in 0..8 {
        all_properties(&Shape::generate(kind, 0x5EED + u64::from(kind)));
    }
}

#[test]
fn one_huge_row_among_tiny_ones() {
    let mut rng = Rng(42);
    let mut sizes: Vec<usize> = (0..500).map(|_| rng.below(3) as usize).collect();
    sizes[137] = 100_000;
    let shape = Shape::new(sizes, &mut rng);
    index_properties(&shape);
    properties(&shape, "wrapping add", |v| v, 0u64, u64::wrapping_add);
    properties(&shape, "2x2 matrix product", mat, ID, mat_mul);
}

#[test]
fn a_single_huge_row() {
    let mut rng = Rng(7);
    let shape = Shape::new(vec![100_000], &mut rng);
    properties(&shape, "2x2 matrix product", mat, ID, mat_mul);
    let flags = vec![false; 100_000];
    check("segmented_iota of one segment", &(0..100_000).collect::<Vec<_>>(), || {
        segmented_iota(&flags)
    });
}

#[test]
fn a_million_empty_rows() {
    let mut sizes = vec![0usize; 1_000_000];
    sizes[500_000] = 3;
    sizes[999_999] = 2;
    let input: Vec<usize> = (0..sizes.len()).collect();
    let mut want = vec![0u64; sizes.len()];
    want[500_000] = 3 * 500_000 + 3;
    want[999_999] = 2 * 999_999 + 1;
    let get = |&r: &usize, i: usize| (r + i) as u64;
    check("expand_outer_reduce", &want, || {
        expand_outer_reduce(&input, |&r| sizes[r], get, 0, |a, b| a + b)
    });
    check("expand_reduce", &vec![want[500_000], want[999_999]], || {
        expand_reduce(&input, |&r| sizes[r], get, 0, |a, b| a + b)
    });
    let jagged = Jagged::from_lengths(&sizes, vec![1u32; 5]).unwrap();
    let mut counts = vec![0u32; sizes.len()];
    counts[500_000] = 3;
    counts[999_999] = 2;
    check("reduce_rows", &counts, || reduce_rows(&jagged, 0, |a, b| a + b));
    check("replicated_iota", &vec![500_000, 500_000, 500_000, 999_999, 999_999], || {
        replicated_iota(&sizes)
    });
    check("expand", &vec![500_000, 500_001, 500_002, 999_999, 1_000_000], || {
        expand(&input, |&r| sizes[r], get)
    });
}

// ---------------------------------------------------------------------------------------------
// Errors

fn panic_message(f: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(f)).expect_err("expected a panic");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[test]
#[should_panic(expected = "has more elements than usize can count")]
fn expand_size_overflow_panics() {
    expand(&[usize::MAX, 1], |&n| n, |&n, i| n ^ i);
}

#[test]
fn size_overflow_is_a_clear_error_on_every_backend() {
    let overflow = "has more elements than usize can count";
    for backend in support::backends() {
        let sizes = [usize::MAX, 1];
        let messages = [
            (
                "expand",
                panic_message(|| {
                    with_backend(backend, || expand(&sizes, |&n| n, |&n, i| n ^ i));
                }),
            ),
            (
                "expand_reduce",
                panic_message(|| {
                    with_backend(backend, || {
                        expand_reduce(&sizes, |&n| n, |&n, i| n ^ i, 0, |a, b| a ^ b)
                    });
                }),
            ),
            (
                "expand_outer_reduce",
                panic_message(|| {
                    with_backend(backend, || {
                        expand_outer_reduce(&sizes, |&n| n, |&n, i| n ^ i, 0, |a, b| a ^ b)
                    });
                }),
            ),
            (
                "replicated_iota",
                panic_message(|| {
                    with_backend(backend, || replicated_iota(&sizes));
                }),
            ),
        ];
        for (name, message) in messages {
            assert!(message.contains(overflow), "{name} on {backend}: {message}");
            assert!(
                message.contains(&format!("parcomp::segmented::{name}")),
                "{name} on {backend}: {message}"
            );
        }
        // Long inputs overflow in the parallel prefix sum.
        let mut long = vec![1usize; 10_000];
        long[6_000] = usize::MAX - 100;
        let message = panic_message(|| {
            with_backend(backend, || expand_outer_reduce(&long, |&n| n, |_, i| i, 0, |a, b| a ^ b));
        });
        assert!(message.contains(overflow), "long input on {backend}: {message}");
    }
}

#[test]
fn mismatched_lengths_name_the_function_and_both_lengths() {
    let message = panic_message(|| {
        segmented_scan(&[true, false], &[1, 2, 3], 0, |a, b| a + b);
    });
    assert!(message.contains("segmented_scan"), "{message}");
    assert!(message.contains("flags has 2 elements and values has 3"), "{message}");
    let message = panic_message(|| {
        segmented_reduce(&[true], &[0u8; 0], 0, |a, b| a + b);
    });
    assert!(message.contains("segmented_reduce"), "{message}");
    assert!(message.contains("flags has 1 elements and values has 0"), "{message}");
}

#[test]
fn a_panic_in_user_code_reaches_the_caller() {
    let values: Vec<u32> = (0..50_000).collect();
    for backend in support::backends() {
        let message = panic_message(|| {
            with_backend(backend, || {
                scan_inclusive(&values, 0, |a, b| {
                    if b == 40_000 {
                        panic!("boom at 40000")
                    } else {
                        a + b
                    }
                })
            });
        });
        assert!(message.contains("boom at 40000"), "{backend}: {message}");
    }
}
