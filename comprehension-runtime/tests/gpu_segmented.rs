//! `parcomp::segmented` on the device: every [`Monoid`] method and both iotas, forced onto each
//! device present (OpenCL, CUDA), against loops written by hand — on empty input, all-empty
//! rows, one huge row among tiny ones, segments spanning tiles, every monoid and several types.
//! Each call must have run on the device (the trace says so): a silent host fallback fails.
#![cfg(any(feature = "opencl", feature = "cuda-api"))]

mod support;

use comprehension_runtime::segmented::{
    replicated_iota, segmented_iota, BitAnd, BitOr, BitXor, Max, Min, Monoid, Product, Sum,
};
use comprehension_runtime::{trace, with_backend, Backend, Jagged};
use std::fmt::Debug;
use support::Rng;

/// One test's device runs at a time: the tests of this binary run on parallel threads and share
/// the device's arena, and one test's runs must not take the buffers another's second run counts
/// on finding there (`a_primitive_meters_its_memory_like_a_comprehension_and_reuses_the_arena`).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs `f` on `backend` and checks that every primitive it called ran there.
fn on_one<T>(backend: Backend, what: &str, f: impl Fn() -> T) -> T {
    let (out, runs) = trace::record(|| with_backend(backend, f));
    assert!(!runs.is_empty(), "{what}: nothing ran on {backend}");
    for run in &runs {
        assert_eq!(run.backend, backend, "{what}: {run}");
    }
    out
}

/// [`on_one`] on each device present (OpenCL, CUDA): each device's result.
fn on_devices<T>(what: &str, f: impl Fn() -> T) -> Vec<(Backend, T)> {
    support::devices().iter().map(|&backend| (backend, on_one(backend, what, &f))).collect()
}

/// Segment shapes: row lengths.
fn shapes() -> Vec<(&'static str, Vec<usize>)> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut huge = vec![3usize; 500];
    huge.insert(250, 200_000);
    vec![
        ("no rows", vec![]),
        ("all rows empty", vec![0; 1000]),
        ("one value", vec![1]),
        ("one row spanning many tiles", vec![70_000]),
        ("a huge row among rows of 3", huge),
        (
            "random rows with empties",
            (0..3000).map(|_| rng.below(40) as usize * (rng.below(3) as usize).min(1)).collect(),
        ),
        ("rows of 1", vec![1; 5000]),
        ("rows of 1023..1025", (0..60).map(|k| 1023 + k % 3).collect()),
    ]
}

fn flags_of(lengths: &[usize]) -> Vec<bool> {
    lengths.iter().filter(|&&l| l > 0).flat_map(|&l| (0..l).map(|i| i == 0)).collect()
}

/// Reference implementations: plain loops.
fn scan_ref<T: Copy>(values: &[T], id: T, op: impl Fn(T, T) -> T, inclusive: bool) -> Vec<T> {
    let mut acc = id;
    let mut out = Vec::new();
    for &v in values {
        if inclusive {
            acc = op(acc, v);
            out.push(acc);
        } else {
            out.push(acc);
            acc = op(acc, v);
        }
    }
    out
}

/// Equality for the tests: floats equal when both are NaN.
trait Same: Copy + Debug {
    fn same(self, other: Self) -> bool;
}

macro_rules! same_eq {
    ($($t:ty),*) => {$(impl Same for $t { fn same(self, other: Self) -> bool { self == other } })*};
}
same_eq!(i8, i16, i32, i64, u8, u16, u32, u64, usize);

impl Same for f32 {
    fn same(self, other: Self) -> bool {
        self == other || (self.is_nan() && other.is_nan())
    }
}

impl Same for f64 {
    fn same(self, other: Self) -> bool {
        self == other || (self.is_nan() && other.is_nan())
    }
}

/// Asserts `got` is `expected`, naming the first difference (not printing a million values).
#[track_caller]
fn assert_same<T: Same>(got: &[T], expected: &[T], what: &str) {
    assert_eq!(got.len(), expected.len(), "{what}: lengths");
    if let Some(i) = (0..got.len()).find(|&i| !got[i].same(expected[i])) {
        panic!("{what}: at {i}, {:?} instead of {:?}", got[i], expected[i]);
    }
}

fn check<T, M>(monoid: M, name: &str, make: impl Fn(&mut Rng) -> T, op: impl Fn(T, T) -> T + Copy)
where
    T: comprehension_runtime::gpu::types::DeviceType + Same,
    M: Monoid<T> + Debug,
{
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let id = monoid.identity();
    for (shape, lengths) in shapes() {
        let what = format!("{monoid:?} on {name}, {shape}");
        let total: usize = lengths.iter().sum();
        let values: Vec<T> = (0..total).map(|_| make(&mut rng)).collect();
        let rows = Jagged::from_lengths(&lengths, values.clone()).unwrap();
        let flags = flags_of(&lengths);

        let expected: Vec<T> = rows.iter().map(|r| r.iter().fold(id, |a, &b| op(a, b))).collect();
        let nonempty: Vec<T> = rows
            .iter()
            .filter(|r| !r.is_empty())
            .map(|r| r.iter().fold(id, |a, &b| op(a, b)))
            .collect();
        let scanned: Vec<T> = rows.iter().flat_map(|r| scan_ref(r, id, op, true)).collect();
        let whole = values.iter().fold(id, |a, &b| op(a, b));
        for &backend in support::devices() {
            let what = format!("{what} on {backend}");
            let got = on_one(backend, &what, || monoid.reduce_rows(&rows));
            assert_same(&got, &expected, &format!("{what}: reduce_rows"));
            let got = on_one(backend, &what, || monoid.segmented_reduce(&flags, &values));
            assert_same(&got, &nonempty, &format!("{what}: segmented_reduce"));
            let got = on_one(backend, &what, || monoid.segmented_scan(&flags, &values));
            assert_same(&got, &scanned, &format!("{what}: segmented_scan"));
            let got = on_one(backend, &what, || monoid.scan_inclusive(&values));
            assert_same(&got, &scan_ref(&values, id, op, true), &format!("{what}: scan_inclusive"));
            let got = on_one(backend, &what, || monoid.scan_exclusive(&values));
            assert_same(
                &got,
                &scan_ref(&values, id, op, false),
                &format!("{what}: scan_exclusive"),
            );
            let got = on_one(backend, &what, || monoid.reduce(&values));
            assert_same(&[got], &[whole], &format!("{what}: reduce"));
        }
    }
}

#[test]
fn integer_monoids_agree_with_loops() {
    let _serial = serial();
    if support::devices().is_empty() {
        return;
    }
    let small = |r: &mut Rng| r.below(2001) as i64 - 1000;
    check(Sum, "i64", small, i64::wrapping_add);
    check(Sum, "u8 (wrapping)", |r| r.next() as u8, u8::wrapping_add);
    check(Product, "i32 (wrapping)", |r| r.below(7) as i32 - 3, i32::wrapping_mul);
    check(Min, "i16", |r| r.next() as i16, Ord::min);
    check(Max, "u64", |r| r.next(), Ord::max);
    check(Max, "usize", |r| r.below(1 << 40) as usize, Ord::max);
    check(BitAnd, "u32", |r| !(1u32 << r.below(32)), |a, b| a & b);
    check(BitOr, "u16", |r| 1u16 << r.below(16), |a, b| a | b);
    check(BitXor, "i8", |r| r.next() as i8, |a, b| a ^ b);
}

#[test]
fn float_monoids_agree_with_loops() {
    let _serial = serial();
    if support::devices().is_empty() {
        return;
    }
    // Small integers in floats: sums are exact in any bracketing, so results compare bit for bit.
    let exact = |r: &mut Rng| (r.below(2001) as f64 - 1000.0) * 0.5;
    check(Sum, "f64", exact, |a, b| a + b);
    check(Sum, "f32", |r| (r.below(201) as f32 - 100.0) * 0.25, |a, b| a + b);
    check(Product, "f64", |r| [1.0, -1.0, 2.0, 0.5][r.below(4) as usize], |a, b| a * b);
    // NaN is ignored by min and max, as f64::min does.
    let with_nan = |r: &mut Rng| if r.below(10) == 0 { f64::NAN } else { r.below(1000) as f64 };
    check(Min, "f64 with NaN", with_nan, f64::min);
    check(Max, "f32", |r| r.next() as f32, f32::max);
}

#[test]
fn float_sums_of_many_values_are_within_tolerance() {
    let _serial = serial();
    if support::devices().is_empty() {
        return;
    }
    let mut rng = Rng(42);
    let values: Vec<f64> = (0..300_000).map(|_| rng.below(1 << 20) as f64 / 7.0).collect();
    let exact: f64 = values.iter().sum();
    for (backend, got) in on_devices("sum", || Sum.reduce(&values)) {
        assert!(((got - exact) / exact).abs() < 1e-12, "{backend}: {got} vs {exact}");
    }
}

#[test]
fn iotas_agree_with_loops() {
    let _serial = serial();
    if support::devices().is_empty() {
        return;
    }
    for (shape, lengths) in shapes() {
        let expected: Vec<usize> =
            lengths.iter().enumerate().flat_map(|(r, &l)| std::iter::repeat_n(r, l)).collect();
        for (backend, got) in on_devices(shape, || replicated_iota(&lengths)) {
            assert_eq!(got, expected, "{shape} on {backend}");
        }
        let flags = flags_of(&lengths);
        let expected: Vec<usize> = lengths.iter().filter(|&&l| l > 0).flat_map(|&l| 0..l).collect();
        for (backend, got) in on_devices(shape, || segmented_iota(&flags)) {
            assert_eq!(got, expected, "{shape} on {backend}");
        }
    }
    // The first position starts a segment even when its flag is false.
    for (backend, got) in
        on_devices("unflagged start", || segmented_iota(&[false, false, true, false]))
    {
        assert_eq!(got, [0, 1, 0, 1], "{backend}");
    }
}

#[test]
fn a_size_sum_that_overflows_panics_on_the_device_too() {
    let _serial = serial();
    if support::devices().is_empty() {
        return;
    }
    for &backend in support::devices() {
        let result = std::panic::catch_unwind(|| {
            with_backend(backend, || replicated_iota(&[usize::MAX, 2]))
        });
        let payload = result.expect_err("an overflowing size sum must panic");
        let message = payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        assert!(message.contains("more elements than usize can count"), "{backend}: {message}");
        assert!(message.contains("replicated_iota"), "{backend}: {message}");
    }
}

#[test]
fn the_automatic_choice_keeps_small_inputs_on_the_host() {
    let _serial = serial();
    if support::backend_forced() {
        return;
    }
    // Without a forced backend, 10 values are below the device threshold.
    let (sums, runs) = trace::record(|| Sum.scan_inclusive(&[1u32; 10]));
    assert_eq!(sums, (1..=10).collect::<Vec<u32>>());
    assert_eq!(runs.len(), 1);
    assert!(!runs[0].backend.is_device(), "{}", runs[0]);
    let reason = runs[0].reason.clone().unwrap_or_default();
    assert!(
        reason.contains("too little work")
            || reason.contains("the device is slower than rayon")
            || reason.starts_with("no "),
        "{reason}"
    );
}

#[test]
fn a_primitive_meters_its_memory_like_a_comprehension_and_reuses_the_arena() {
    let _serial = serial();
    if support::devices().is_empty() {
        return;
    }
    use comprehension_runtime::gpu::last_run_stats;
    // Larger than any other test's buffers here, so the arena holds none that fit: the first
    // run allocates.
    let values: Vec<u64> = (0..1u64 << 21).collect();
    let offsets: Vec<usize> = (0..=64).map(|r| r * values.len() / 64).collect();
    let expected: Vec<u64> = offsets.windows(2).map(|w| values[w[0]..w[1]].iter().sum()).collect();
    let rows = Jagged::from_parts(offsets, values.clone()).expect("valid offsets");
    // Each device has its own arena.
    for &backend in support::devices() {
        let reduce = || on_one(backend, "per-row sums", || Sum.reduce_rows(&rows));
        let first = reduce();
        let stats = last_run_stats().expect("the device run recorded its statistics");
        assert_eq!(first, expected);
        // The values, their segments and the tile aggregates are all held at once: the peak is at
        // least the values and their segment ids, and it is what the run held at most, not the sum
        // of everything it ever allocated.
        let bytes = values.len() as u64 * 8;
        assert!(stats.peak_memory >= 2 * bytes, "{backend}: {stats:?}");
        assert!(stats.peak_memory < 4 * bytes, "{backend}: {stats:?}");
        assert!(stats.allocations > 0, "{backend}: {stats:?}");
        // A second run right after draws its buffers from the arena the first gave them back to.
        assert_eq!(reduce(), expected);
        let again = last_run_stats().expect("the second run recorded its statistics");
        assert_eq!(again.allocations, 0, "{backend}: {again:?}");
    }
}
