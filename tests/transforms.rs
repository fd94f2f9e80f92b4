//! `order by`, `group by`, `take` and `skip` (comprehensive comprehensions): each against
//! nested loops with `sort_by`/grouping written by hand, on every backend, with property tests.

mod support;

use parcomp::{par, par_count, par_explain, par_max, par_reduce, par_sum};
use proptest::prelude::*;
use std::time::{Duration, Instant};
use support::on_every_backend_traced;

/// The GHC user's guide's example of `then group by ... using groupWith`.
#[test]
fn the_ghc_employees_example() {
    let employees = [
        ("Simon", "MS", 80),
        ("Erik", "MS", 100),
        ("Phil", "Ed", 40),
        ("Gordon", "Ed", 45),
        ("Paul", "Yale", 60),
    ];
    let output = on_every_backend_traced(|| {
        par![(dept, par_sum![s | s <- salary]) |
             (name, dept, salary) <- &employees,
             group by dept,
             order by par_sum![s | s <- salary],
             take 5]
    });
    assert_eq!(output, [("Yale", 60), ("Ed", 85), ("MS", 180)]);
    // The form: the largest departments first; `name` is a slice too.
    let largest = par![(dept, name.len(), par_sum![s | s <- salary]) |
                       (name, dept, salary) <- &employees,
                       group by dept,
                       order by par_sum![s | s <- salary] desc,
                       take 2];
    assert_eq!(largest, [("MS", 2, 180), ("Ed", 2, 85)]);
}

#[test]
fn order_by_is_a_stable_sort() {
    let words = ["pear", "fig", "apple", "kiwi", "date", "banana", "fig"];
    let by_len = on_every_backend_traced(|| par![w | w <- words, order by w.len()]);
    let mut expected = words.to_vec();
    expected.sort_by_key(|w| w.len());
    assert_eq!(by_len, expected);
    let desc = on_every_backend_traced(|| par![w | w <- words, order by w.len() desc]);
    let mut expected = words.to_vec();
    expected.sort_by_key(|w| std::cmp::Reverse(w.len()));
    assert_eq!(desc, expected);
    // Tuple keys order lexicographically; later qualifiers and the head see the variables.
    let pairs = on_every_backend_traced(
        || par![(x, y) | x <- 0..6i32, y <- 0..3i32, order by (y, -x), x + y > 2],
    );
    let mut expected: Vec<(i32, i32)> = (0..6).flat_map(|x| (0..3).map(move |y| (x, y))).collect();
    expected.sort_by_key(|&(x, y)| (y, -x));
    expected.retain(|&(x, y)| x + y > 2);
    assert_eq!(pairs, expected);
    // Float keys by total_cmp.
    let xs = [2.5, -0.0, f64::NAN, 0.0, -7.25, f64::INFINITY];
    let sorted = par![x | x <- xs, order by x];
    let mut expected = xs.to_vec();
    expected.sort_by(f64::total_cmp);
    assert_eq!(format!("{sorted:?}"), format!("{expected:?}"));
}

#[test]
fn take_and_skip() {
    // Straight after generators, in nested-loop order, without computing the rest.
    let start = Instant::now();
    let first = par![x * 2 | x <- 0..4_000_000_000i64, take 5];
    assert_eq!(first, [0, 2, 4, 6, 8]);
    let sparse = par![x | x <- 0..4_000_000_000i64, x % 1_000_003 == 0, take 3];
    assert_eq!(sparse, [0, 1_000_003, 2_000_006]);
    let nested = par![(x, y) | x <- 0..4_000_000_000u64, y <- 0..x, take 4];
    assert_eq!(nested, [(1, 0), (2, 0), (2, 1), (3, 0)]);
    assert!(start.elapsed() < Duration::from_secs(60), "take computed everything");
    let n = 3;
    let windows = on_every_backend_traced(|| par![(x, y) | x <- 0..50, y <- x..50, skip 7, take n]);
    let all: Vec<(i32, i32)> = (0..50).flat_map(|x| (x..50).map(move |y| (x, y))).collect();
    assert_eq!(windows, all[7..10]);
    assert_eq!(par![x | x <- 0..10, skip 8], [8, 9]);
    assert_eq!(par![x | x <- 0..10, skip 20], Vec::<i32>::new());
    assert_eq!(par![x | x <- 0..10, take 0], Vec::<i32>::new());
    // After an order by: the first N of the sorted elements.
    let top =
        on_every_backend_traced(|| par![x | x <- 0..1000i64, order by (x * 37) % 101 desc, take 4]);
    let mut expected: Vec<i64> = (0..1000).collect();
    expected.sort_by_key(|x| std::cmp::Reverse((x * 37) % 101));
    assert_eq!(top, expected[..4]);
    // In a reduction, `order by` matters when a `take` follows it.
    assert_eq!(par_sum![x | x <- 1..=100, order by x desc, take 3], 297);
    assert_eq!(par_count![x | x <- 0..100, take 7], 7);
    let folded = par_reduce!(|a: String, b: String| a + &b, String::new();
                             w.to_string() | w <- ["b", "c", "a"], order by w);
    assert_eq!(folded, "abc");
}

#[test]
fn group_by_gives_slices_in_key_order() {
    let sales: Vec<(u32, &str, f64)> = vec![
        (2024, "Oslo", 3.5),
        (2023, "Lima", 1.0),
        (2024, "Lima", 2.0),
        (2023, "Lima", 4.0),
        (2024, "Oslo", 0.5),
    ];
    let totals = on_every_backend_traced(|| {
        par![(year, city, amount.len(), par_sum![a | a <- amount]) |
             (year, city, amount) <- &sales, group by (year, city)]
    });
    assert_eq!(totals, [(2023, "Lima", 2, 5.0), (2024, "Lima", 1, 2.0), (2024, "Oslo", 2, 4.0)]);
    // A computed key is bound first; filters on the groups follow.
    let big = par![(k, x.to_vec()) | x <- 0..20, let k = x % 3, group by k, x.len() > 6];
    assert_eq!(big, [(0, vec![0, 3, 6, 9, 12, 15, 18]), (1, vec![1, 4, 7, 10, 13, 16, 19])]);
    // Generators over a group's slices; no groups from no elements.
    let pairs = par![(k, a, b) | x <- 0..6, let k = x % 2, group by k, a <- x, b <- x, a < b];
    assert_eq!(pairs.len(), 6);
    assert_eq!(pairs[0], (0, 0, 2));
    let empty = par![k | x <- 0..0, let k = x % 2, group by k];
    assert!(empty.is_empty());
    assert_eq!(par_count![k | x <- 0..100, let k = x / 10, group by k], 10);
    assert_eq!(par_max![par_sum![v | v <- x] | x <- 0..10i64, let k = x % 4, group by k], Some(15));
}

#[test]
fn the_plan_shows_the_parts() {
    let employees = [("Simon", "MS", 80)];
    // The groups' slices are read (`to_vec`): they are formed.
    let plan = par_explain![(dept, par_sum![s | s <- salary], salary.to_vec()) |
                            (name, dept, salary) <- &employees,
                            group by dept,
                            order by par_sum![s | s <- salary] desc,
                            take 5];
    assert!(plan.contains("part 1 of 3"), "{plan}");
    assert!(plan.contains("then group by dept: stable sort by the key"), "{plan}");
    assert!(plan.contains("then order by par_sum![s | s <- salary] desc"), "{plan}");
    assert!(plan.contains("then take 5"), "{plan}");
    assert!(plan.contains("nested"), "{plan}");
    // Only reduced: reduced per key in the first part, the reduction named as written.
    let plan = par_explain![(dept, par_sum![s | s <- salary]) |
                            (name, dept, salary) <- &employees,
                            group by dept,
                            order by par_sum![s | s <- salary] desc,
                            take 5];
    assert!(plan.contains("part 1 of 3, reduced per key for the `group by dept`"), "{plan}");
    assert!(plan.contains("reduce   per key: par_sum![s | s <- salary]"), "{plan}");
    assert!(plan.contains("then order by par_sum![s | s <- salary] desc"), "{plan}");
    assert!(!plan.contains("then group by"), "{plan}");
    // The eleventh reduction is shown as written, not as the second's name with a `0` after.
    let plan = par_explain![(k, par_sum![a | a <- x], par_sum![a + 1 | a <- x],
                             par_sum![a + 2 | a <- x], par_sum![a + 3 | a <- x],
                             par_sum![a + 4 | a <- x], par_sum![a + 5 | a <- x],
                             par_sum![a + 6 | a <- x], par_sum![a + 7 | a <- x],
                             par_sum![a + 8 | a <- x], par_sum![a + 9 | a <- x]) |
                            i <- 0..10, let k = i % 2, let x = i, group by k,
                            order by par_sum![a + 10 | a <- x]];
    assert!(plan.contains("then order by par_sum![a + 10 | a <- x]"), "{plan}");
    let n = 10;
    let plan = par_explain![x | x <- 0..n, take 5];
    assert!(plan.contains("its first 5 elements, lazily"), "{plan}");
    // `order by .., take K`: the part keeps its best K as they are produced, never gathered.
    let plan = par_explain![x | x <- 0..n, order by x % 3 desc, take 4];
    assert!(plan.contains("part 1 of 2, its best 4 by the `order by x % 3 desc` after it kept as they are produced, never gathered"), "{plan}");
}

/// `order by .., take K` straight after its generators: the stable sort's first K (ties in
/// nested-loop order), from parts of every size, without gathering the elements — also when
/// they are not `Clone` and the key is not one number.
#[test]
fn order_by_take_keeps_the_best_as_they_are_produced() {
    let n = 50_000u32;
    let best = on_every_backend_traced(
        || par![(i, j) | i <- 0..n, j <- 0..i % 3, order by (i * 7919) % 1000 desc, take 7],
    );
    let mut all: Vec<(u32, u32)> = (0..n).flat_map(|i| (0..i % 3).map(move |j| (i, j))).collect();
    all.sort_by_key(|&(i, _)| std::cmp::Reverse((i * 7919) % 1000));
    assert_eq!(best, all[..7]);
    let words = on_every_backend_traced(
        || par![format!("{i}") | i <- 0..n, order by (i % 10, (i % 7) as u8) desc, take 3],
    );
    let mut all: Vec<u32> = (0..n).collect();
    all.sort_by_key(|&i| std::cmp::Reverse((i % 10, (i % 7) as u8)));
    assert_eq!(words, all[..3].iter().map(|i| i.to_string()).collect::<Vec<_>>());
    assert_eq!(words, ["69", "139", "209"]);
    // More than there are, and none.
    let few = on_every_backend_traced(|| par![i | i <- 0..5u8, order by i desc, take 100]);
    assert_eq!(few, [4, 3, 2, 1, 0]);
    let none = on_every_backend_traced(|| par![i | i <- 0..5u8, order by i desc, take 0]);
    assert!(none.is_empty());
}

/// The parts of a comprehension with transforms run where the backend puts them: on the
/// device when one is forced, the sort included for integer keys.
#[test]
fn every_part_runs_or_says_why() {
    let xs: Vec<i64> = (0..300_000).map(|i| (i * 7919) % 100_003).collect();
    let sorted = on_every_backend_traced(|| par![x * 2 | x <- &xs, x % 3 == 0, order by x desc]);
    let mut expected: Vec<i64> = xs.iter().copied().filter(|x| x % 3 == 0).collect();
    expected.sort_by_key(|x| std::cmp::Reverse(*x));
    assert_eq!(sorted, expected.iter().map(|x| x * 2).collect::<Vec<_>>());
    for &device in support::devices() {
        use parcomp::{trace, with_backend};
        let (_, runs) =
            trace::record(|| with_backend(device, || par![x | x <- &xs, order by x desc, take 3]));
        let sort = runs.iter().find(|r| r.text.starts_with("order by")).expect("the sort ran");
        assert_eq!(sort.backend, device, "{sort}");
        // A key that is not one number is sorted on the host, and the trace says why.
        let (_, runs) = trace::record(|| {
            with_backend(device, || par![x | x <- &xs, order by (x % 7, x), take 3])
        });
        let sort = runs.iter().find(|r| r.text.starts_with("order by")).expect("the sort ran");
        assert!(
            sort.reason.as_deref().unwrap_or("").contains("not one integer or float"),
            "{sort}"
        );
    }
}

/// The oracle: nested loops, `sort_by_key` and grouping written by hand.
fn oracle_groups(keys: &[u8], values: &[i32]) -> Vec<(u8, i64, usize)> {
    let mut pairs: Vec<(u8, i32)> = keys.iter().copied().zip(values.iter().copied()).collect();
    pairs.sort_by_key(|p| p.0);
    let mut out: Vec<(u8, i64, usize)> = Vec::new();
    for (k, v) in pairs {
        match out.last_mut() {
            Some(last) if last.0 == k => {
                last.1 += i64::from(v);
                last.2 += 1;
            }
            _ => out.push((k, i64::from(v), 1)),
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn group_sort_take_match_the_oracle(
        rows in prop::collection::vec((0u8..6, -50i32..50), 0..400),
        take in 0usize..8,
        one_key in any::<bool>(),
    ) {
        let keys: Vec<u8> = rows.iter().map(|r| if one_key { 0 } else { r.0 }).collect();
        let values: Vec<i32> = rows.iter().map(|r| r.1).collect();
        let items: Vec<(u8, i32)> = keys.iter().copied().zip(values.iter().copied()).collect();
        let groups = on_every_backend_traced(|| {
            par![(k, par_sum![i64::from(v) | v <- v], v.len()) | (k, v) <- &items, group by k]
        });
        prop_assert_eq!(&groups, &oracle_groups(&keys, &values));
        let top = on_every_backend_traced(|| {
            par![(k, par_sum![i64::from(v) | v <- v]) | (k, v) <- &items, group by k,
                 order by (par_sum![i64::from(v) | v <- v], k) desc, take take]
        });
        let mut expected: Vec<(u8, i64)> = groups.iter().map(|g| (g.0, g.1)).collect();
        expected.sort_by_key(|&(k, s)| std::cmp::Reverse((s, k)));
        expected.truncate(take);
        prop_assert_eq!(top, expected);
        let sorted = on_every_backend_traced(|| par![(k, v) | (k, v) <- &items, v != 0, order by v, skip 1]);
        let mut expected: Vec<(u8, i32)> = items.iter().copied().filter(|p| p.1 != 0).collect();
        expected.sort_by_key(|p| p.1);
        let expected: Vec<(u8, i32)> = expected.into_iter().skip(1).collect();
        prop_assert_eq!(sorted, expected);
    }
}

/// One huge group and many duplicates: sizes that split across threads and device tiles.
#[test]
fn one_huge_group() {
    let n = 200_000u32;
    let groups = on_every_backend_traced(|| {
        par![(k, v.len(), par_sum![u64::from(x) | x <- v]) |
             i <- 0..n, let k = u32::from(i % 1000 == 999), let v = i, group by k]
    });
    let ones = (0..n).filter(|i| i % 1000 == 999);
    let zeros = (0..n).filter(|i| i % 1000 != 999);
    assert_eq!(
        groups,
        [
            (0, zeros.clone().count(), zeros.map(u64::from).sum()),
            (1, ones.clone().count(), ones.map(u64::from).sum()),
        ]
    );
}
