//! `order by KEY, take K` chosen without a full sort, and `group by` without sorting the rows:
//! the same answers as a stable sort of all the elements, on every backend.

mod support;

use parcomp::par;
use proptest::prelude::*;
use support::{on_every_backend, on_every_cpu_backend};

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
