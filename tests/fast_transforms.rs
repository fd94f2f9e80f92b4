//! `order by KEY, take K` chosen without a full sort, `group by` without sorting the rows, and
//! groups that are only reduced folded per key without forming them: the same answers as a
//! stable sort of all the elements, on every backend.

mod support;

use parcomp::{
    par, par_all, par_any, par_count, par_explain, par_max, par_min, par_product, par_sum,
};
use proptest::prelude::*;
use support::{on_every_backend, on_every_backend_traced, on_every_cpu_backend};

/// Row indices of `keys` stably sorted by `cmp` (equal keys in input order), the first `k`.
fn stable_first<K>(keys: &[K], k: usize, cmp: impl Fn(&K, &K) -> std::cmp::Ordering) -> Vec<usize> {
    let mut perm: Vec<usize> = (0..keys.len()).collect();
    perm.sort_by(|&a, &b| cmp(&keys[a], &keys[b]));
    perm.truncate(k);
    perm
}

/// Keys with many ties; sometimes enough of them for the parallel selection.
fn tied_keys() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(0u8..6, 0..60),
        (5_000usize..20_000, 1u8..20)
            .prop_map(|(n, m)| (0..n).map(|i| ((i * 7919) % 1013 % m as usize) as u8).collect()),
    ]
}

/// Floats with NaNs of both signs, zeros of both signs and infinities.
fn float_keys() -> impl Strategy<Value = Vec<f64>> {
    let special = prop_oneof![
        Just(f64::NAN),
        Just(-f64::NAN),
        Just(0.0),
        Just(-0.0),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(1.5),
        -3.0..3.0f64,
    ];
    prop::collection::vec(special, 0..80)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn top_k_keeps_the_stable_sorts_order(keys in tied_keys(), k in 0usize..300, big in any::<bool>()) {
        // K beyond the input as often as within it.
        let k = if big { k + keys.len() } else { k };
        let asc = on_every_backend(|| par![i | i <- 0..keys.len(), order by keys[i], take k]);
        prop_assert_eq!(asc, stable_first(&keys, k, |a, b| a.cmp(b)));
        let desc = on_every_backend(|| {
            par![(i, keys[i]) | i <- 0..keys.len(), order by keys[i] desc, take k]
        });
        let want: Vec<(usize, u8)> =
            stable_first(&keys, k, |a, b| b.cmp(a)).into_iter().map(|i| (i, keys[i])).collect();
        prop_assert_eq!(desc, want);
    }

    #[test]
    fn top_k_of_floats_orders_by_total_cmp(keys in float_keys(), k in 0usize..30) {
        let got = on_every_backend(|| {
            par![i | i <- 0..keys.len(), order by keys[i] desc, take k]
        });
        prop_assert_eq!(got, stable_first(&keys, k, |a, b| b.total_cmp(a)));
    }

    #[test]
    fn top_k_of_tuple_and_string_keys(keys in tied_keys(), k in 0usize..40) {
        let names: Vec<String> = keys.iter().map(|k| format!("n{}", k % 3)).collect();
        let got = on_every_cpu_backend(|| {
            par![(i, names[i].as_str()) | i <- 0..keys.len(), let name = names[i].as_str(),
                 order by (name, keys[i]) desc, take k]
        });
        let pairs: Vec<(&str, u8)> = names.iter().map(|n| n.as_str()).zip(keys.iter().copied()).collect();
        let want: Vec<(usize, &str)> = stable_first(&pairs, k, |a, b| b.cmp(a))
            .into_iter()
            .map(|i| (i, names[i].as_str()))
            .collect();
        prop_assert_eq!(got, want);
    }
}

#[test]
fn top_k_of_all_equal_keys_is_the_first_k() {
    let n = 50_000;
    let got = on_every_backend(|| par![i | i <- 0..n, order by 7u8 desc, take 100]);
    assert_eq!(got, (0..100).collect::<Vec<_>>());
    let got = on_every_backend(|| par![i | i <- 0..n, order by 0.5f64, take 0]);
    assert!(got.is_empty());
}

/// The oracle of `group by`: a stable sort by key, cut where the key changes; each group's
/// key, its values in order.
fn oracle_groups<K: Clone + PartialEq, V: Clone>(
    rows: &[(K, V)],
    cmp: impl Fn(&K, &K) -> std::cmp::Ordering,
) -> Vec<(K, Vec<V>)> {
    let mut perm: Vec<usize> = (0..rows.len()).collect();
    perm.sort_by(|&a, &b| cmp(&rows[a].0, &rows[b].0));
    let mut out: Vec<(K, Vec<V>)> = Vec::new();
    for i in perm {
        let (k, v) = rows[i].clone();
        match out.last_mut() {
            Some((last, vs)) if cmp(last, &k).is_eq() => vs.push(v),
            _ => out.push((k, vec![v])),
        }
    }
    out
}

/// Keys from one value to all distinct, with wide spans (hashed) and narrow ones (indexed).
fn group_keys() -> impl Strategy<Value = Vec<i64>> {
    let n = prop_oneof![0usize..50, 5_000usize..12_000];
    (n, 0u32..5, any::<u64>()).prop_map(|(n, shape, seed)| {
        let mut x = seed | 1;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        (0..n)
            .map(|i| match shape {
                0 => 42,                                           // one key
                1 => i as i64 * 3 - 7_000,                         // all distinct, indexed
                2 => next() as i64,                                // all distinct (almost), hashed
                3 => (next() % 13) as i64 * (1 << 40) - (1 << 42), // few keys far apart, hashed
                _ => (next() % 300) as i64 - 150,                  // many keys, indexed
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn group_by_number_keys_is_the_stable_sorts_grouping(keys in group_keys()) {
        let rows: Vec<(i64, usize)> = keys.iter().copied().zip(0..).collect();
        let got = on_every_cpu_backend(|| par![(k, v.to_vec()) | (k, v) <- &rows, group by k]);
        prop_assert_eq!(got, oracle_groups(&rows, |a, b| a.cmp(b)));
    }

    #[test]
    fn group_by_pairs_and_floats(keys in group_keys()) {
        let rows: Vec<((u8, i64), f64)> =
            keys.iter().map(|&k| ((k.rem_euclid(3) as u8, k / 5), (k % 7) as f64 * 0.5)).collect();
        let got = on_every_cpu_backend(|| {
            par![(k, v.to_vec()) | (k, v) <- &rows, group by k]
        });
        prop_assert_eq!(got, oracle_groups(&rows, |a, b| a.cmp(b)));
        // Grouped by the float values: `total_cmp`, so -0.0 and 0.0 apart, NaNs together.
        let floats: Vec<(f64, i64)> = rows
            .iter()
            .zip(&keys)
            .map(|((_, f), &k)| (if k % 11 == 0 { f64::NAN } else if k % 2 == 0 { -*f } else { *f }, k))
            .collect();
        let got = on_every_cpu_backend(|| {
            par![(f.to_bits(), v.to_vec()) | (f, v) <- &floats, group by f]
        });
        let want: Vec<(u64, Vec<i64>)> = oracle_groups(&floats, |a, b| a.total_cmp(b))
            .into_iter()
            .map(|(f, v)| (f.to_bits(), v))
            .collect();
        prop_assert_eq!(got, want);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// Triples and quadruples of numbers are packed (radix-sorted, grouped by indexing or
    /// hashing): the same groups and order as the stable sort compares them into.
    #[test]
    fn tuples_of_numbers_group_and_sort_as_compared(keys in group_keys()) {
        let rows: Vec<((u8, i16, char), u32)> = keys
            .iter()
            .map(|&k| {
                let c = char::from_u32(0x41 + (k.rem_euclid(5) as u32) * 0x3000).unwrap_or('?');
                ((k.rem_euclid(4) as u8, (k / 3) as i16, c), (k as u32) ^ 0x55)
            })
            .collect();
        let got = on_every_cpu_backend(|| par![(k, v.to_vec()) | (k, v) <- &rows, group by k]);
        prop_assert_eq!(got, oracle_groups(&rows, |a, b| a.cmp(b)));
        let got = on_every_backend_traced(|| {
            par![(k, par_sum![v as u64 | v <- vs]) | (k, v) <- &rows, let vs = v, group by k]
        });
        let want: Vec<_> = oracle_groups(&rows, |a, b| a.cmp(b))
            .into_iter()
            .map(|(k, v)| (k, v.iter().map(|&v| v as u64).sum::<u64>()))
            .collect();
        prop_assert_eq!(got, want);
        // Sorted descending by a quadruple with a float and a bool: a stable sort's order.
        let quads: Vec<((i32, bool, f32, u8), usize)> = keys
            .iter()
            .enumerate()
            .map(|(i, &k)| (((k % 3) as i32, k % 2 == 0, (k % 5) as f32 * -0.5, k as u8), i))
            .collect();
        let got = on_every_backend_traced(|| par![i | (k, i) <- &quads, order by k desc]);
        let mut want: Vec<usize> = (0..quads.len()).collect();
        // Descending, component by component (the float by `total_cmp`); ties stay in order.
        want.sort_by(|&a, &b| {
            let (x, y) = (quads[a].0, quads[b].0);
            y.0.cmp(&x.0).then(y.1.cmp(&x.1)).then(y.2.total_cmp(&x.2)).then(y.3.cmp(&x.3))
        });
        prop_assert_eq!(got, want);
    }
}

#[test]
fn group_by_keeps_values_that_are_not_copy() {
    let words: Vec<String> = (0..20_000).map(|i| format!("w{}", (i * 7919) % 10_007)).collect();
    let got = par![(k, w.to_vec()) | s <- &words, let k = s.len(), let w = s.clone(), group by k];
    let rows: Vec<(usize, String)> = words.iter().map(|s| (s.len(), s.clone())).collect();
    assert_eq!(got, oracle_groups(&rows, |a, b| a.cmp(b)));
}

#[test]
fn group_by_pairs_that_share_a_half() {
    // Pairs far apart (hashed), equal in one half: a hash of one half alone would collide.
    let rows: Vec<((u64, u64), u32)> = (0..30_000u32)
        .map(|i| {
            let a = u64::from(i % 97) << 40;
            if i % 2 == 0 {
                ((a, 5), i)
            } else {
                ((7, a ^ u64::from(i % 89)), i)
            }
        })
        .collect();
    let got = on_every_cpu_backend(|| par![(k, v.to_vec()) | (k, v) <- &rows, group by k]);
    assert_eq!(got, oracle_groups(&rows, |a, b| a.cmp(b)));
}

#[test]
fn variables_read_after_a_cut_are_the_only_ones_carried() {
    let n = 10usize;
    let plan = par_explain![(c, amount.to_vec()) |
                            i <- 0..n, let c = i % 3, let amount = i * 2,
                            let unused = i + 1, group by c];
    assert!(plan.contains("((c), (amount,))"), "{plan}");
    // Reduced per key: only the reductions' items are carried.
    let plan = par_explain![(c, par_sum![a | a <- amount]) |
                            i <- 0..n, let c = i % 3, let amount = i * 2,
                            let unused = i + 1, group by c];
    assert!(plan.contains("reduce   per key: par_sum![a | a <- amount]"), "{plan}");
    assert!(!plan.contains("unused)"), "{plan}");
    let got = par![(c, amount.to_vec()) | i <- 0..n, let c = i % 3, let amount = i * 2,
                   let unused = i + 1, group by c];
    assert_eq!(got[0], (0, vec![0, 6, 12, 18]));
    // A variable named only in a format string is carried.
    let got = par![format!("{i}:{j}") | i <- 0..4usize, let j = 3 - i, order by j, take 2];
    assert_eq!(got, ["3:0", "2:1"]);
    let got = par![(i, format!("{}", j.len())) | i <- 0..4usize, let j = vec![i; i], group by i];
    assert_eq!(got[3], (3, "1".to_string()));
}

/// Each group's values, by the slices `group by` forms (`v.to_vec()` is no reduction).
fn groups_by_slices(rows: &[(i64, i64)]) -> Vec<(i64, Vec<i64>)> {
    par![(k, v.to_vec()) | (k, v) <- rows, group by k]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn groups_only_reduced_are_reduced_per_key_as_their_slices_would_be(keys in group_keys()) {
        let rows: Vec<(i64, i64)> = keys.iter().map(|&k| (k, k.wrapping_mul(31) % 1000)).collect();
        let got = on_every_backend_traced(|| {
            par![(k, par_sum![v | v <- vs], vs.len(), par_max![v | v <- vs], par_min![v | v <- vs],
                  par_count![v | v <- vs, v % 2 == 0], par_any![v > 900 | v <- vs],
                  par_all![v >= 0 | v <- vs], par_sum![w | v <- vs, let w = v * 2, w > 10],
                  par_product![if v % 2 == 0 { 1i8 } else { -1 } | v <- vs]) |
                 (k, v) <- &rows, let vs = v, group by k]
        });
        let want: Vec<_> = groups_by_slices(&rows)
            .into_iter()
            .map(|(k, vs)| {
                (k, vs.iter().sum::<i64>(), vs.len(), vs.iter().copied().max(),
                 vs.iter().copied().min(), vs.iter().filter(|&&v| v % 2 == 0).count(),
                 vs.iter().any(|&v| v > 900), vs.iter().all(|&v| v >= 0),
                 vs.iter().map(|v| v * 2).filter(|&w| w > 10).sum::<i64>(),
                 vs.iter().map(|v| if v % 2 == 0 { 1i8 } else { -1 }).product::<i8>())
            })
            .collect();
        prop_assert_eq!(got, want);
    }

    #[test]
    fn pair_keys_reduced_per_key_with_an_order_by_and_take_after(keys in group_keys()) {
        // Pairs sharing halves (grid or hash of the pairs), sums of exact floats.
        let rows: Vec<((u8, i64), f64)> =
            keys.iter().map(|&k| ((k.rem_euclid(3) as u8, k / 5), (k % 7) as f64 * 0.5)).collect();
        let got = on_every_backend_traced(|| {
            par![(k, par_sum![a | a <- amount], amount.len()) |
                 (k, a) <- &rows, let amount = a, group by k,
                 order by (par_sum![a | a <- amount], amount.len()) desc, take 7]
        });
        let mut want: Vec<((u8, i64), f64, usize)> = oracle_groups(&rows, |a, b| a.cmp(b))
            .into_iter()
            .map(|(k, v)| (k, v.iter().sum(), v.len()))
            .collect();
        // A stable sort, descending: equal (sum, count) keep ascending keys.
        want.sort_by(|a, b| (b.1, b.2).partial_cmp(&(a.1, a.2)).expect("no NaN"));
        want.truncate(7);
        prop_assert_eq!(got, want);
    }
}

#[test]
fn reductions_of_groups_see_elements_as_their_slices_would() {
    // Values that are not `Copy` are read by reference, as a generator over the slice reads
    // them; keys that are not numbers (strings) are kept in order.
    let words: Vec<String> = (0..20_000).map(|i| format!("w{}", (i * 7919) % 10_007)).collect();
    let got = on_every_cpu_backend(|| {
        par![(k, par_sum![s.len() | s <- w], par_max![s.len() | s <- w], par_count![s | s <- w, s.ends_with('7')]) |
             s <- &words, let k = s[..2].to_string(), let w = s.clone(), group by k]
    });
    let want: Vec<(String, usize, Option<usize>, usize)> = oracle_groups(
        &words.iter().map(|s| (s[..2].to_string(), s.clone())).collect::<Vec<_>>(),
        |a, b| a.cmp(b),
    )
    .into_iter()
    .map(|(k, ws)| {
        let lens = ws.iter().map(String::len);
        (k, lens.clone().sum(), lens.max(), ws.iter().filter(|s| s.ends_with('7')).count())
    })
    .collect();
    assert_eq!(got, want);
    // Max of floats with equal elements told apart (-0.0, 0.0): the first of the greatest, as
    // the reduction over the slice keeps it, in every part size.
    let signed: Vec<(u8, f64)> =
        (0..10_000).map(|i| ((i % 3) as u8, if i % 2 == 0 { 0.0 } else { -0.0 })).collect();
    let got = on_every_cpu_backend(
        || par![(k, par_max![x | x <- xs].map(f64::to_bits)) | (k, x) <- &signed, let xs = x, group by k],
    );
    let by_slices = par![(k, xs.to_vec()) | (k, x) <- &signed, let xs = x, group by k];
    let want: Vec<(u8, Option<u64>)> = by_slices
        .iter()
        .map(|(k, xs)| (*k, par_max![x | x <- xs].map(|x: f64| x.to_bits())))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn groups_used_otherwise_keep_their_slices() {
    let n = 100usize;
    // A slice read by index, a nested comprehension over the slice, a reduction naming another
    // grouped variable: the groups are formed.
    let plans = [
        par_explain![(c, a[0]) | i <- 0..n, let c = i % 3, let a = i, group by c],
        par_explain![(c, par![x | x <- a]) | i <- 0..n, let c = i % 3, let a = i, group by c],
        par_explain![(c, par_sum![x + b.len() | x <- a]) | i <- 0..n, let c = i % 3, let a = i, let b = i, group by c],
    ];
    for plan in plans {
        assert!(plan.contains("the other variables become the group's slices"), "{plan}");
        assert!(!plan.contains("reduced per key"), "{plan}");
    }
    let got =
        par![(c, a[0], par_sum![x | x <- a]) | i <- 0..n, let c = i % 3, let a = i, group by c];
    assert_eq!(got[1], (1, 1, (0..n).filter(|i| i % 3 == 1).sum()));
    // A reduction whose result borrows a group's element reads the slice as such.
    let words = ["bb", "a", "ccc", "dd"].map(String::from);
    let longest = par![(k, par_max![s.as_str() | s <- &w[..]].map(str::len)) |
                       s <- &words, let k = s.len() % 2, let w = s.clone(), group by k];
    assert_eq!(longest, [(0, Some(2)), (1, Some(3))]);
    // Empty input: no group.
    let none: Vec<(usize, usize)> =
        par![(c, a.len()) | i <- 0..0usize, let c = i, let a = i, group by c];
    assert!(none.is_empty());
}
