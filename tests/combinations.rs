//! The language's forms combined, as the comprehension generator (`scripts/fuzz`) combines
//! them: every kind of qualifier first in a zipped branch, patterns that bind nothing in every
//! position, every pair of transforms in sequence, `.map` closures without annotations on
//! dependent generators, and parentheses the language needs. Each against plain Rust, on
//! every backend.

mod support;

use parcomp::{
    par, par_any, par_count, par_max, par_max_by_key, par_min_by_key, par_reduce, par_sum, trace,
    with_backend, Jagged,
};
use support::{devices, on_every_backend, on_every_backend_traced};

#[test]
fn every_qualifier_starts_a_zipped_branch() {
    let xs = vec![4i64, -2, 9, 0, 7];
    let opts = vec![Some(1i64), None, Some(3), Some(-5), None, Some(8)];
    let pairs = vec![(1i32, -1i32), (2, 3), (5, -1), (7, 0), (9, -1)];
    let zip = |a: Vec<i64>| a.into_iter().zip(0..10i64).collect::<Vec<_>>();
    // A name, a tuple, `_`.
    assert_eq!(
        on_every_backend_traced(|| par![(a, b) | a <- &xs | b <- 0..10i64]),
        zip(xs.clone())
    );
    let got = on_every_backend_traced(|| par![(p + q, b) | (p, q) <- &pairs | b <- 0..10i64]);
    assert_eq!(got, [(0, 0), (5, 1), (4, 2), (7, 3), (8, 4)]);
    assert_eq!(on_every_backend_traced(|| par![b | _ <- &xs | b <- 0..10i64]), [0, 1, 2, 3, 4]);
    // Patterns that may not match: only the elements that match are zipped.
    let somes: Vec<i64> = opts.iter().flatten().copied().collect();
    assert_eq!(
        on_every_backend_traced(|| par![(a, b) | Some(a) <- &opts | b <- 0..10i64]),
        zip(somes.clone())
    );
    let got = on_every_backend_traced(|| par![(j, b) | (j, -1) <- &pairs | b <- 0..10i64]);
    assert_eq!(got, [(1, 0), (5, 1), (9, 2)]);
    let got = on_every_backend_traced(
        || par![(v, b) | v @ 5..=16 <- (0..12i64).map(|n| n * 2) | b <- 0..10i64],
    );
    assert_eq!(got, [(6, 0), (8, 1), (10, 2), (12, 3), (14, 4), (16, 5)]);
    let got = on_every_backend_traced(|| par![b | 1..=1 <- (0..=36u8).step_by(9) | b <- 0..10i64]);
    assert_eq!(got, Vec::<i64>::new());
    let got = on_every_backend_traced(|| par![b | 9..=9 <- (0..=36u8).step_by(9) | b <- 0..10i64]);
    assert_eq!(got, [0]);
    // Both branches filter; the second branch's first generator filters.
    let got = on_every_backend_traced(|| par![(a, b) | Some(a) <- &opts | Some(b) <- &opts]);
    assert_eq!(got, somes.iter().map(|&v| (v, v)).collect::<Vec<_>>());
    let got = on_every_backend_traced(|| par![(a, b) | a <- &xs | Some(b) <- &opts, b > 0]);
    assert_eq!(got, [(4, 1), (-2, 3), (9, 8)]);
    // A `let` first, and a filter after the first generator of a computed branch.
    let got = on_every_backend_traced(
        || par![(a, c, d) | a <- 0..4i64 | let c = 7, d <- 0..c, d % 2 == 0],
    );
    assert_eq!(got, [(0, 7, 0), (1, 7, 2), (2, 7, 4), (3, 7, 6)]);
    // A reduction over zipped branches that filter: (1, 4), (3, -2), (-5, 9), (8, 0).
    assert_eq!(
        on_every_backend_traced(|| par_sum![a * b | Some(a) <- &opts | b <- &xs]),
        4 - 6 - 45
    );
}

#[test]
fn patterns_that_bind_nothing_run_on_every_backend() {
    let bs = vec![1u32, 2, 3, 4];
    let k = 7i64;
    let xs = vec![1u8, 2, 3];
    let pairs = vec![(1i32, 2i32), (3, 4), (5, 1)];
    let nested = vec![((1i32, 2i32), 3i32), ((4, 5), 6)];
    let jag = Jagged::from(vec![vec![1i32], vec![], vec![2, 3]]);
    // Each runs on the device: a generator that binds nothing reads no element there.
    assert_eq!(on_every_backend(|| par![k | _ <- &bs]), [7, 7, 7, 7]);
    assert_eq!(on_every_backend(|| par_count![() | _ <- &xs]), 3);
    assert_eq!(on_every_backend(|| par![1 | (_, _) <- &pairs]), [1, 1, 1]);
    assert_eq!(on_every_backend(|| par![2 | ((_, _), _) <- &nested]), [2, 2]);
    // A reduction in a filter runs on the host (saying so), over a row that binds nothing.
    assert_eq!(
        on_every_backend_traced(|| par![x | x <- 0..3i32, par_any![true | _ <- jag.row(2)]]),
        [0, 1, 2]
    );
    assert_eq!(
        on_every_backend_traced(|| par![x | x <- 0..3i32, par_any![true | _ <- jag.row(1)]]),
        Vec::<i32>::new()
    );
    assert_eq!(
        on_every_backend(|| par![(x, par_count![() | _ <- jag.row(x)]) | x <- 0..3usize]),
        [(0, 1), (1, 0), (2, 2)]
    );
    assert_eq!(on_every_backend(|| par_reduce!(|a: i64, b: i64| a ^ b, 0; k | _ <- &bs)), 0);
    assert_eq!(on_every_backend(|| par_sum![k | _ <- &bs, _ <- 0..3u8]), 84);
    assert_eq!(on_every_backend(|| par![x | x <- 0..4i32, _ <- &xs, x > 1]), [2, 2, 2, 3, 3, 3]);
    // Patterns that filter without binding: a range, a literal in a tuple, `None`, `Some(_)`.
    assert_eq!(on_every_backend(|| par![7 | 4..=10 <- 8..36u8]), [7, 7, 7]);
    assert_eq!(on_every_backend_traced(|| par![7 | 4..=10 <- 8..36u8, take 2]), [7, 7]);
    assert_eq!(on_every_backend_traced(|| par![0 | (_, 1) <- &pairs]), [0]);
    let opts = vec![Some(1i8), None, None, Some(4)];
    assert_eq!(on_every_backend_traced(|| par_count![() | None <- &opts]), 2);
    assert_eq!(on_every_backend_traced(|| par_count![() | Some(_) <- &opts]), 2);
    assert_eq!(on_every_backend(|| par![b | (0 | 2) <- 0..5u8, b <- 0..2u8]), [0, 1, 0, 1]);
    // After a transform, and zipped.
    assert_eq!(
        on_every_backend_traced(|| par![x | x <- 0..3i32, order by -x, _ <- &xs]),
        [2, 2, 2, 1, 1, 1, 0, 0, 0]
    );
    assert_eq!(on_every_backend_traced(|| par![b | _ <- &xs | b <- &bs]), [1, 2, 3]);
}

#[test]
fn range_patterns_with_negative_bounds_run_on_the_device() {
    assert_eq!(on_every_backend(|| par![x | x @ -4..=0 <- -10..10i32]), [-4, -3, -2, -1, 0]);
    assert_eq!(
        on_every_backend(|| par![x | -4..=-2 <- -10..10i32, x <- 0..2u8]),
        [0, 1, 0, 1, 0, 1]
    );
    let got = on_every_backend(|| par![(x, y) | x @ -2..=0 <- -5..5i64, y @ (1 | 3) <- 0..5u8]);
    assert_eq!(got, [(-2, 1), (-2, 3), (-1, 1), (-1, 3), (0, 1), (0, 3)]);
}

/// The elements `par![(x, y) | x <- 0..12, y <- 0..3]` gives.
fn pairs() -> Vec<(i32, i32)> {
    (0..12).flat_map(|x| (0..3).map(move |y| (x, y))).collect()
}

/// The key the transforms below order by: few distinct values, so ties are many.
fn key(&(x, y): &(i32, i32)) -> i32 {
    (x * 7 + y) % 5
}

#[derive(Clone, Copy)]
enum T {
    Order,
    Desc,
    Take(usize),
    Skip(usize),
}

/// A transform applied as plain Rust: a stable sort (equal keys keep their order, also when
/// descending), a prefix, a suffix.
fn apply<V: Clone>(mut v: Vec<V>, t: T, key: impl Fn(&V) -> i32) -> Vec<V> {
    match t {
        T::Order => v.sort_by_key(|e| key(e)),
        T::Desc => v.sort_by_key(|e| std::cmp::Reverse(key(e))),
        T::Take(n) => v.truncate(n),
        T::Skip(n) => v = v.into_iter().skip(n).collect(),
    }
    v
}

/// `let k = x % 4, group by k` over pairs: each key with its `y`s, keys ascending.
fn groups(v: &[(i32, i32)]) -> Vec<(i32, Vec<i32>)> {
    let mut out: std::collections::BTreeMap<i32, Vec<i32>> = Default::default();
    for &(x, y) in v {
        out.entry(x % 4).or_default().push(y);
    }
    out.into_iter().collect()
}

// The comprehensions' variables are passed in (`x y k v`): written in a macro's body, they
// could not be named by the transforms the caller passes (macro hygiene).
macro_rules! two {
    ($x:ident $y:ident: [$($a:tt)*] $ta:expr, [$($b:tt)*] $tb:expr) => {{
        let got = on_every_backend_traced(|| par![($x, $y) | $x <- 0..12i32, $y <- 0..3i32, $($a)*, $($b)*]);
        let want = apply(apply(pairs(), $ta, key), $tb, key);
        assert_eq!(got, want, "{} then {}", stringify!($($a)*), stringify!($($b)*));
    }};
}

macro_rules! then_group {
    ($x:ident $y:ident $k:ident $v:ident: [$($a:tt)*] $ta:expr) => {{
        let kept = apply(pairs(), $ta, key);
        let got = on_every_backend_traced(|| par![($k, $y.to_vec()) | $x <- 0..12i32, $y <- 0..3i32, $($a)*, let $k = $x % 4, group by $k]);
        assert_eq!(got, groups(&kept), "{} then group by", stringify!($($a)*));
        // Only reduced after `group by`: folded per key, the groups never formed.
        let got = on_every_backend_traced(|| par![($k, par_sum![$v | $v <- $y], $y.len()) | $x <- 0..12i32, $y <- 0..3i32, $($a)*, let $k = $x % 4, group by $k]);
        let want: Vec<_> = groups(&kept).into_iter().map(|(k, y)| (k, y.iter().sum::<i32>(), y.len())).collect();
        assert_eq!(got, want, "{} then a reduced group by", stringify!($($a)*));
    }};
}

macro_rules! group_then {
    ($x:ident $y:ident $k:ident $v:ident: [$($b:tt)*] $tb:expr) => {{
        let by_key = |g: &(i32, Vec<i32>)| (g.0 * 3 + g.1.len() as i32) % 4;
        let got = on_every_backend_traced(|| par![($k, $y.to_vec()) | $x <- 0..12i32, $y <- 0..3i32, let $k = $x % 4, group by $k, $($b)*]);
        assert_eq!(got, apply(groups(&pairs()), $tb, by_key), "group by then {}", stringify!($($b)*));
        let got = on_every_backend_traced(|| par![($k, par_sum![$v | $v <- $y]) | $x <- 0..12i32, $y <- 0..3i32, let $k = $x % 4, group by $k, $($b)*]);
        let ordered = apply(groups(&pairs()), $tb, by_key);
        let sums: Vec<(i32, i32)> = ordered.into_iter().map(|(k, y)| (k, y.iter().sum())).collect();
        assert_eq!(got, sums, "a reduced group by then {}", stringify!($($b)*));
    }};
}

#[test]
fn every_pair_of_transforms_in_sequence() {
    let (o, d) = (T::Order, T::Desc);
    two!(x y: [order by (x * 7 + y) % 5] o, [order by (x * 7 + y) % 5] o);
    two!(x y: [order by (x * 7 + y) % 5] o, [order by (x * 7 + y) % 5 desc] d);
    two!(x y: [order by (x * 7 + y) % 5] o, [take 7] T::Take(7));
    two!(x y: [order by (x * 7 + y) % 5] o, [skip 30] T::Skip(30));
    two!(x y: [order by (x * 7 + y) % 5 desc] d, [order by (x * 7 + y) % 5] o);
    two!(x y: [order by (x * 7 + y) % 5 desc] d, [order by (x * 7 + y) % 5 desc] d);
    two!(x y: [order by (x * 7 + y) % 5 desc] d, [take 7] T::Take(7));
    two!(x y: [order by (x * 7 + y) % 5 desc] d, [skip 30] T::Skip(30));
    two!(x y: [take 20] T::Take(20), [order by (x * 7 + y) % 5] o);
    two!(x y: [take 20] T::Take(20), [order by (x * 7 + y) % 5 desc] d);
    two!(x y: [take 20] T::Take(20), [take 7] T::Take(7));
    two!(x y: [take 20] T::Take(20), [skip 5] T::Skip(5));
    two!(x y: [skip 5] T::Skip(5), [order by (x * 7 + y) % 5] o);
    two!(x y: [skip 5] T::Skip(5), [order by (x * 7 + y) % 5 desc] d);
    two!(x y: [skip 5] T::Skip(5), [take 7] T::Take(7));
    two!(x y: [skip 5] T::Skip(5), [skip 29] T::Skip(29));
    // Counts past the end, and zero.
    two!(x y: [take 100] T::Take(100), [skip 0] T::Skip(0));
    two!(x y: [skip 40] T::Skip(40), [take 3] T::Take(3));
    two!(x y: [take 0] T::Take(0), [order by (x * 7 + y) % 5] o);

    then_group!(x y k v: [order by (x * 7 + y) % 5] o);
    then_group!(x y k v: [order by (x * 7 + y) % 5 desc] d);
    then_group!(x y k v: [take 13] T::Take(13));
    then_group!(x y k v: [skip 13] T::Skip(13));

    group_then!(x y k v: [order by (k * 3 + y.len() as i32) % 4] o);
    group_then!(x y k v: [order by (k * 3 + y.len() as i32) % 4 desc] d);
    group_then!(x y k v: [take 3] T::Take(3));
    group_then!(x y k v: [skip 1] T::Skip(1));
}

#[test]
fn group_by_twice() {
    // The second `group by` gathers the first one's groups: their values become slices of
    // slices, and their keys the second key's groups.
    let got = on_every_backend_traced(
        || par![(j, k.to_vec(), y.iter().map(|s| s.len()).sum::<usize>()) | x <- 0..12i32, y <- 0..3i32, let k = x % 4, group by k, let j = k % 2, group by j],
    );
    assert_eq!(got, [(0, vec![0, 2], 18), (1, vec![1, 3], 18)]);
}

#[test]
fn by_key_reductions_see_the_order_transforms_give() {
    // Of equal keys the greatest is the last: `order by` decides which.
    let plain = on_every_backend_traced(
        || par_max_by_key!(|p: &(i32, i32)| p.1; (x, x % 3) | x <- 0..10i32),
    );
    assert_eq!(plain, Some((8, 2)));
    let got = on_every_backend_traced(
        || par_max_by_key!(|p: &(i32, i32)| p.1; (x, x % 3) | x <- 0..10i32, order by x desc, take 10),
    );
    assert_eq!(got, Some((2, 2)));
    let got = on_every_backend_traced(
        || par_max_by_key!(|p: &(i32, i32)| p.1; (x, x % 3) | x <- 0..10i32, order by x desc),
    );
    assert_eq!(got, Some((2, 2)));
    let got = on_every_backend_traced(
        || par_min_by_key!(|p: &(i32, i32)| p.1; (x, x % 3) | x <- 0..10i32, order by x desc),
    );
    assert_eq!(got, Some((9, 0)));
    let got = on_every_backend_traced(
        || par_min_by_key!(|p: &(i32, i32)| p.1; (x, x % 3) | x <- 0..10i32, order by x % 4, take 3),
    );
    assert_eq!(got, Some((0, 0)));
}

#[test]
fn map_closures_on_dependent_generators_need_no_annotation() {
    let rows = vec![vec![1i32, 5, 2], vec![], vec![7, -3]];
    let jag = Jagged::from(rows.clone());
    let want = |f: fn(i32) -> i32| -> Vec<i32> { rows.iter().flatten().map(|&v| f(v)).collect() };
    assert_eq!(
        on_every_backend_traced(|| par![c | x <- 0..5i32, c <- (0..x).map(|h| h.max(3))]),
        [3, 3, 3, 3, 3, 3, 3, 3, 3, 3]
    );
    assert_eq!(
        on_every_backend_traced(|| par![c | i <- 0..3usize, c <- rows[i].map(|h| h.abs() + 1)]),
        want(|v| v.abs() + 1)
    );
    assert_eq!(
        on_every_backend_traced(|| par![c | i <- 0..3usize, c <- jag.row(i).map(|h| h.min(4))]),
        want(|v| v.min(4))
    );
    assert_eq!(
        on_every_backend_traced(|| par![c | row <- &rows, c <- row.map(|h| h * 2)]),
        want(|v| v * 2)
    );
    assert_eq!(
        on_every_backend_traced(|| par![c | row <- &jag, c <- row.map(|h| h.pow(2))]),
        want(|v| v.pow(2))
    );
    // Two maps, the second after `rev` and `step_by`, the first reading the context.
    let got = on_every_backend_traced(
        || par![c | x <- 1..4u64, c <- (0..x).map(|h| h + x).rev().step_by(2).map(|h| h.leading_zeros())],
    );
    let want: Vec<u32> = (1..4u64)
        .flat_map(|x| (0..x).map(move |h| h + x).rev().step_by(2).map(|h| h.leading_zeros()))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn refutable_generators_before_transforms_and_groups() {
    let opts = vec![Some(1i64), None, Some(3), Some(2), None];
    let optp = vec![(Some(1i32), 2i32), (None, 3), (Some(1), 5), (Some(0), 1)];
    let got =
        on_every_backend_traced(|| par![(v, w) | Some(v) <- &opts, Some(w) <- &opts, order by v]);
    assert_eq!(got, [(1, 1), (1, 3), (1, 2), (2, 1), (2, 3), (2, 2), (3, 1), (3, 3), (3, 2)]);
    let got = on_every_backend_traced(
        || par![(j, par_sum![y | y <- d]) | (Some(j), d) <- &optp, group by j],
    );
    assert_eq!(got, [(0, 1), (1, 7)]);
    let got = on_every_backend_traced(|| par![(j, d.to_vec()) | (Some(j), d) <- &optp, group by j]);
    assert_eq!(got, [(0, vec![1]), (1, vec![2, 5])]);
    let got =
        on_every_backend_traced(|| par![v | Some(v) <- &opts, take 2, Some(w) <- &opts, w > v]);
    assert_eq!(got, [1, 1]);
    // A transform before a group by that is only reduced: the variables the reductions read
    // are carried through the `take`.
    let got = on_every_backend_traced(
        || par![(j, par_max![k | k <- a]) | u <- 0..10usize, a <- u..=(u + 2usize), take 5, let j = u % 3, group by j],
    );
    assert_eq!(got, [(0, Some(2)), (1, Some(2))]);
}

#[test]
fn the_device_says_what_the_user_wrote() {
    // Runs the device cannot take: their reasons name the user's collections and types as
    // written, never a name or a path of the expansion.
    let rows = vec![vec![1i32, 2], vec![3]];
    let jag = Jagged::from(vec![vec![(0usize, 1i64)], vec![(1, 2)]]);
    for &backend in devices() {
        let ((a, b), runs) = trace::record(|| {
            with_backend(backend, || {
                (
                    par![v | row <- &rows, v <- row],
                    par![c | i <- 0..2usize, r <- &jag, (c, _) <- r, i > 0],
                )
            })
        });
        assert_eq!((a, b), (vec![1, 2, 3], vec![0, 1]));
        assert!(!runs.is_empty());
        for run in runs {
            let reason = run.reason.unwrap_or_default();
            for internal in ["__parcomp", "comprehension_runtime", "alloc::", "core::", "Borrowed"]
            {
                assert!(!reason.contains(internal), "{reason}");
            }
        }
    }
}

#[test]
fn patterns_of_tuples_and_options_run_on_the_device() {
    // Refutable generators over tuples and `Option`s, and `match` arms of them, test the
    // fields on the device and bind names to them.
    let opts = vec![Some(1i64), None, Some(3), Some(-5), None, Some(8)];
    let pairs = vec![(1i32, -1i32), (2, 3), (5, -1), (7, 0), (9, -1)];
    let optp = vec![(Some(1i32), 2i32), (None, 3), (Some(1), 5), (Some(0), 1)];
    let nested = vec![Some((1u8, 2u8)), None, Some((3, 2)), Some((4, 9))];
    assert_eq!(on_every_backend(|| par![v * 10 | Some(v) <- &opts]), [10, 30, -50, 80]);
    assert_eq!(on_every_backend(|| par![j | (j, -1) <- &pairs]), [1, 5, 9]);
    assert_eq!(on_every_backend(|| par![(j, d) | (Some(j), d) <- &optp]), [(1, 2), (1, 5), (0, 1)]);
    assert_eq!(on_every_backend(|| par![a | Some((a, 2)) <- &nested]), [1, 3]);
    assert_eq!(on_every_backend(|| par![a + b | Some((a, b @ 2..=9)) <- &nested]), [3, 5, 13]);
    assert_eq!(on_every_backend(|| par_count![() | Some(_) <- &opts]), 4);
    assert_eq!(on_every_backend(|| par_count![() | None <- &opts]), 2);
    let got = on_every_backend(|| par![(v, w) | Some(v) <- &opts, Some(w) <- &opts, w > v]);
    assert_eq!(got, [(1, 3), (1, 8), (3, 8), (-5, 1), (-5, 3), (-5, 8)]);
    let got = on_every_backend(|| par![match p { (1 | 2, x) => x, (_, y) => -y } | p <- &pairs]);
    assert_eq!(got, [-1, 3, 1, 0, 1]);
    let got = on_every_backend(
        || par![match o { Some(v @ 0..=3) => v, Some(_) => 100, None => -1 } | o <- &opts],
    );
    assert_eq!(got, [1, -1, 3, 100, -1, 100]);
}
