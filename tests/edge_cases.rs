//! Edge cases and runtime faults, on every backend.

mod support;

use parcomp::{par, with_backend, with_eager_splitting, Backend, Jagged, Source};
use std::panic::{catch_unwind, AssertUnwindSafe};
use support::{on_every_backend, on_every_cpu_backend};

#[test]
#[allow(clippy::reversed_empty_ranges)] // Written empty on purpose.
fn empty_and_reversed_ranges() {
    assert_eq!(on_every_backend(|| par![x | x <- 5..5]), Vec::<i32>::new());
    assert_eq!(on_every_backend(|| par![x | x <- 5..2]), Vec::<i32>::new());
    assert_eq!(on_every_backend(|| par![x | x <- 5..=4]), Vec::<i32>::new());
    let got = on_every_backend(|| par![(x, y) | x <- 0..5, y <- x..3]);
    assert_eq!(got, [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)]);
    let got = on_every_backend(|| par![(x, y) | x <- -3i64..3, y <- (x * 2)..x]);
    assert_eq!(got, [(-3, -6), (-3, -5), (-3, -4), (-2, -4), (-2, -3), (-1, -2)]);
}

#[test]
fn empty_collections_and_single_elements() {
    let none: Vec<u32> = Vec::new();
    assert_eq!(on_every_backend(|| par![x | x <- &none]), none);
    assert_eq!(on_every_backend(|| par![(x, y) | x <- 0..3, y <- &none]), Vec::<(i32, u32)>::new());
    let empty: Jagged<u8> = Jagged::new();
    assert_eq!(on_every_backend(|| par![v | row <- &empty, v <- row]), Vec::<u8>::new());
    assert_eq!(on_every_backend(|| par![x * 2 | x <- [21]]), [42]);
    assert_eq!(on_every_backend(|| par![(x, y) | x <- 7..8, y <- x..=x]), [(7, 7)]);
}

#[test]
fn all_empty_rows() {
    let m = Jagged::from(vec![Vec::<i32>::new(); 5000]);
    assert_eq!(on_every_backend(|| par![v | i <- 0..m.len(), v <- m.row(i)]), Vec::<i32>::new());
    let got = on_every_backend(|| par![(i, v, k) | i <- 0..m.len(), v <- m.row(i), k <- 0..v]);
    assert_eq!(got, Vec::<(usize, i32, i32)>::new());
}

#[test]
fn one_huge_row_among_empty_ones() {
    let mut rows = vec![Vec::<u32>::new(); 300];
    rows[137] = (0..1_000_000).collect();
    rows[299] = vec![7];
    let m = Jagged::from(rows);
    let got = on_every_backend(|| par![v ^ i as u32 | i <- 0..m.len(), v <- m.row(i)]);
    let want: Vec<u32> = (0..1_000_000).map(|v| v ^ 137).chain([7 ^ 299]).collect();
    assert_eq!(got, want);
    // The same row with a filter (buffered outputs) and a level below it (counted outputs).
    let got = on_every_backend(|| par![v | row <- &m, v <- row, v % 1000 == 7]);
    assert_eq!(got, (0..1000).map(|k| k * 1000 + 7).chain([7]).collect::<Vec<u32>>());
    let got = on_every_backend(|| par![v + j | row <- &m, v <- row, v < 3000, j <- 0..v % 3]);
    // Row 137 holds 0..1_000_000, row 299 holds [7] (7 % 3 = 1: one element, 7 + 0).
    let want: Vec<u32> =
        (0..3000).flat_map(|v| (0..v % 3).map(move |j| v + j)).chain([7]).collect();
    assert!(got == want, "{} elements, expected {}", got.len(), want.len());
}

#[test]
fn a_deep_skew_below_a_tiny_level_is_split() {
    // Two outer contexts, one of which holds all the work two levels down.
    let got = on_every_backend(
        || par![x * 1_000_000 + z | x <- 0..2u64, _y <- 0..1, z <- 0..(x * 400_000)],
    );
    assert_eq!(got, (0..400_000).map(|z| 1_000_000 + z).collect::<Vec<u64>>());
}

#[test]
fn every_integer_type_and_its_limits() {
    assert_eq!(
        on_every_backend(|| par![x | x <- i8::MIN..=i8::MAX]),
        (i8::MIN..=i8::MAX).collect::<Vec<_>>()
    );
    assert_eq!(on_every_backend(|| par![x | x <- u8::MIN..=u8::MAX]).len(), 256);
    assert_eq!(
        on_every_backend(|| par![x | x <- (u64::MAX - 2)..=u64::MAX]),
        [u64::MAX - 2, u64::MAX - 1, u64::MAX]
    );
    // 128-bit integers are not device values: on the CPU only.
    let wide = || par![x | x <- (i128::MIN)..(i128::MIN + 3)];
    assert_eq!(on_every_cpu_backend(wide), [i128::MIN, i128::MIN + 1, i128::MIN + 2]);
    support::off_device(wide, "are not device values");
    assert_eq!(on_every_backend(|| par![x | x <- -3isize..0]), [-3, -2, -1]);
    assert_eq!(
        on_every_backend(|| par![(x, y) | x <- 0u16..3, y <- x..3]),
        [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)]
    );
    assert_eq!(on_every_backend(|| par![x | x <- (i32::MAX - 1)..i32::MAX]), [i32::MAX - 1]);
}

#[test]
fn values_that_are_not_copy_can_reach_the_head() {
    // Strings stay on the CPU, and the trace says why.
    let repeat = || par![s | x <- 0..4, s <- (0..x).map(|i| "ab".repeat(i))];
    assert_eq!(on_every_cpu_backend(repeat), ["", "", "ab", "", "ab", "abab"]);
    support::off_device(repeat, "calls the method `.repeat()`");
    let format = || par![format!("{x}-{y}") | x <- 0..2, y <- 0..2, x != y];
    assert_eq!(on_every_cpu_backend(format), ["0-1", "1-0"]);
    support::off_device(format, "uses the macro `format!`");
}

#[test]
fn shadowing_and_lets() {
    assert_eq!(on_every_backend(|| par![x | x <- 0..3, x <- 0..x]), [0, 0, 1]);
    let got = on_every_backend(|| par![(x, d) | let k = 3, x <- 0..k, let d = 2 * x, d != 2]);
    assert_eq!(got, [(0, 0), (2, 4)]);
}

/// A user-defined collection read by index.
struct Squares(usize);

impl Source for Squares {
    type Item = usize;
    fn size(&self) -> usize {
        self.0
    }
    fn fetch(&self, index: usize) -> usize {
        index * index
    }
}

#[test]
fn user_sources() {
    let squares = Squares(5);
    assert_eq!(
        on_every_backend(|| par![s + k | s <- &squares, k <- 0..2]),
        [0, 1, 1, 2, 4, 5, 9, 10, 16, 17]
    );
}

fn panic_message(f: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(f)).expect_err("expected a panic");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// Runs `f` on every backend configuration, expecting each to panic; returns the messages.
fn panics_everywhere(f: impl Fn() + Sync) -> Vec<String> {
    let mut messages = vec![
        panic_message(|| with_backend(Backend::Sequential, &f)),
        panic_message(|| with_backend(Backend::Rayon, &f)),
        panic_message(|| with_backend(Backend::Rayon, || with_eager_splitting(&f))),
    ];
    for &backend in support::devices() {
        messages.push(panic_message(|| with_backend(backend, &f)));
    }
    messages
}

#[test]
fn size_overflow_is_a_clear_panic_naming_the_comprehension() {
    let cases: Vec<Vec<String>> = vec![
        // Irregular: the sizes of two rows overflow when summed.
        panics_everywhere(|| drop(par![(x, y) | x <- [usize::MAX, 1usize], y <- 0..x])),
        // Irregular, over more parents than one work-group scans (the sizes' scan in two
        // steps; on a CPU device one work-item's, up to 65 536): two rows in different tiles
        // overflow when summed.
        panics_everywhere(|| {
            let mut rows = vec![1usize; 5000];
            rows[10] = usize::MAX / 2 + 1;
            rows[4990] = usize::MAX / 2 + 1;
            drop(par![(x, y) | x <- &rows, y <- 0..x])
        }),
        // The same over more parents than a CPU device's work-item scans.
        panics_everywhere(|| {
            let mut rows = vec![1usize; 70_000];
            rows[10] = usize::MAX / 2 + 1;
            rows[69_990] = usize::MAX / 2 + 1;
            drop(par![(x, y) | x <- &rows, y <- 0..x])
        }),
        // Regular: a product larger than usize.
        panics_everywhere(|| drop(par![(x, y) | x <- 0..usize::MAX, y <- 0..2usize])),
        // Two levels down, below a level too small to divide.
        panics_everywhere(|| drop(par![z | x <- 0..2usize, _y <- 0..1, z <- 0..usize::MAX, x > 0])),
    ];
    for messages in cases {
        for message in messages {
            assert!(message.contains("more elements than usize can count"), "{message}");
            assert!(message.contains("par!["), "the message names the comprehension: {message}");
            assert!(message.contains("edge_cases.rs"), "the message names the file: {message}");
        }
    }
}

#[test]
fn a_panic_in_user_code_reaches_the_caller() {
    let check = |x: u32| if x == 77_777 { panic!("no luck with {x}") } else { x };
    for message in panics_everywhere(|| drop(par![check(x) | x <- 0..100_000u32])) {
        assert_eq!(message, "no luck with 77777");
    }
    let size = |x: u32| (100 / (x + 1)).checked_sub(50).expect("a negative size");
    for message in panics_everywhere(|| drop(par![x | x <- 0..3u32, y <- 0..size(x), y > 0])) {
        assert_eq!(message, "a negative size");
    }
}

#[test]
fn runs_in_the_callers_thread_pool() {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    let seen = pool.install(|| {
        with_eager_splitting(|| par![(rayon::current_num_threads(), rayon::current_thread_index()) | _x <- 0..10_000])
    });
    assert!(seen.iter().all(|&(threads, index)| threads == 3 && index.is_some_and(|i| i < 3)));
}
