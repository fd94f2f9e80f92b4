//! `parcomp::segmented::sort_permutation` against the standard library's stable sort of the
//! indices, on the host backends and forced onto each device present (OpenCL, CUDA):
//! empty input, one key, all keys equal, many duplicates, full-range keys, keys differing only
//! in their high bits, sorted and reversed input, sizes around the tile boundaries, and a
//! million keys. Each call must have run where it was sent (the trace says so): a silent host
//! fallback fails.

mod support;

use comprehension_runtime::segmented::sort_permutation;
use comprehension_runtime::{trace, with_backend, Backend};
use support::Rng;

/// Keys per tile of the device sort (`PC_TILE`).
const TILE: usize = 1024;

/// The oracle: the standard library's stable sort of the indices by key.
fn expected(keys: &[u64]) -> Vec<usize> {
    let mut perm: Vec<usize> = (0..keys.len()).collect();
    perm.sort_by_key(|&i| keys[i]);
    perm
}

/// `sort_permutation(keys)` on `backend`, checking that it ran there.
fn sort_on(backend: Backend, what: &str, keys: &[u64]) -> Vec<usize> {
    let (out, runs) = trace::record(|| with_backend(backend, || sort_permutation(keys)));
    assert_eq!(runs.len(), 1, "{what} on {backend}: {runs:?}");
    assert_eq!(runs[0].backend, backend, "{what}: {}", runs[0]);
    out
}

/// Asserts `got` is `expected`, naming the first difference (not printing a million values).
#[track_caller]
fn assert_perm(got: &[usize], expected: &[usize], keys: &[u64], what: &str) {
    assert_eq!(got.len(), expected.len(), "{what}: lengths");
    if let Some(i) = (0..got.len()).find(|&i| got[i] != expected[i]) {
        let key = |j: usize| keys.get(j).map_or("none".into(), |k| format!("{k:#x}"));
        panic!(
            "{what}: at {i}, index {} (key {}) instead of {} (key {})",
            got[i],
            key(got[i]),
            expected[i],
            key(expected[i])
        );
    }
}

/// Sorts `keys` on every backend against the oracle.
fn check(what: &str, keys: &[u64]) {
    let want = expected(keys);
    for backend in support::backends() {
        let got = sort_on(backend, what, keys);
        assert_perm(&got, &want, keys, &format!("{what} on {backend}"));
    }
}

#[test]
fn empty_and_one_key() {
    check("no keys", &[]);
    check("one key", &[42]);
    check("one key, u64::MAX", &[u64::MAX]);
    check("two keys out of order", &[u64::MAX, 0]);
}

#[test]
fn equal_keys_keep_their_order() {
    for n in [2, 1000, 5000] {
        for key in [0, 7, u64::MAX, 0x8000_0000_0000_0001] {
            let keys = vec![key; n];
            check(&format!("{n} keys all {key:#x}"), &keys);
            // The identity: equal keys in their input order.
            for backend in support::backends() {
                let got = sort_on(backend, "all equal", &keys);
                assert!(got.iter().enumerate().all(|(i, &p)| i == p), "not the identity");
            }
        }
        // One key larger than the rest, so that the device runs its passes over the equal ones.
        let mut keys = vec![3; n];
        keys[n / 2] = 1 << 62 | 3;
        check(&format!("{n} equal keys and one larger"), &keys);
        let mut perm: Vec<usize> = (0..n).filter(|&i| i != n / 2).collect();
        perm.push(n / 2);
        for backend in support::backends() {
            assert_eq!(sort_on(backend, "one larger", &keys), perm, "on {backend}");
        }
    }
}

#[test]
fn many_duplicates() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for n in [10, 3000, 100_000] {
        check(&format!("{n} keys in 0..8"), &rng.keys(n, |r| r.below(8)));
        check(
            &format!("{n} keys of 3 values"),
            &rng.keys(n, |r| [5, u64::MAX, 1 << 40][r.below(3) as usize]),
        );
    }
}

#[test]
fn full_range_keys() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for n in [17, 4096, 100_003] {
        check(&format!("{n} full-range keys"), &rng.keys(n, Rng::next));
    }
}

#[test]
fn keys_differing_in_few_bits() {
    let mut rng = Rng(77);
    let n = 20_000;
    check("only the top 8 bits", &rng.keys(n, |r| r.next() & 0xff00_0000_0000_0000));
    check("only the top bit", &rng.keys(n, |r| r.next() & (1 << 63)));
    check(
        "a constant with the top 4 bits varying",
        &rng.keys(n, |r| (r.next() & (0xf << 60)) | 0x0123_4567_89ab_cdef),
    );
    check("bits 20..24 and 60..64", &rng.keys(n, |r| r.next() & 0xf000_0000_00f0_0000));
    check("small keys (below 2^16)", &rng.keys(n, |r| r.below(1 << 16)));
}

#[test]
fn sorted_and_reversed() {
    let n = 50_000u64;
    let sorted: Vec<u64> = (0..n).map(|i| i * 0x0001_0000_0001).collect();
    check("sorted", &sorted);
    let reversed: Vec<u64> = sorted.iter().rev().copied().collect();
    check("reversed", &reversed);
    let mut rng = Rng(5);
    let sorted_dups: Vec<u64> = (0..n).map(|i| i / 7).collect();
    check("sorted with runs of duplicates", &sorted_dups);
    let reversed_dups: Vec<u64> = sorted_dups.iter().rev().copied().collect();
    check("reversed with runs of duplicates", &reversed_dups);
    let saw: Vec<u64> = (0..n).map(|i| (i % 1000) ^ rng.below(2)).collect();
    check("sawtooth", &saw);
}

#[test]
fn sizes_around_tile_boundaries() {
    let mut rng = Rng(0xdead_beef);
    let mut sizes = vec![TILE - 1, TILE, TILE + 1, 2 * TILE];
    for k in [3, 16, 64, 65] {
        sizes.extend([k * TILE - 1, k * TILE + 1]);
    }
    // The histogram's scan spans several scan tiles from 64 sort tiles on.
    sizes.extend([64 * TILE, 64 * TILE + 3]);
    for n in sizes {
        check(&format!("{n} keys in 0..100"), &rng.keys(n, |r| r.below(100)));
        check(&format!("{n} full-range keys"), &rng.keys(n, Rng::next));
    }
}

#[test]
fn a_million_keys() {
    let mut rng = Rng(2024);
    check("a million full-range keys", &rng.keys(1_000_000, Rng::next));
    check("a million keys in 0..1000", &rng.keys(1_000_000, |r| r.below(1000)));
}

#[test]
fn the_automatic_choice_keeps_small_inputs_on_the_host() {
    if support::backend_forced() {
        return;
    }
    // Without a forced backend, 10 keys are below the device threshold.
    let keys: Vec<u64> = (0..10).rev().collect();
    let (perm, runs) = trace::record(|| sort_permutation(&keys));
    assert_eq!(perm, (0..10).rev().collect::<Vec<usize>>());
    assert_eq!(runs.len(), 1);
    assert!(!runs[0].backend.is_device(), "{}", runs[0]);
}

/// The million-key sort timed on each backend (a measurement, not a test): `cargo test --release
/// --features opencl --test gpu_sort -- --ignored --nocapture`.
#[test]
#[ignore]
fn time_a_million_keys() {
    let mut rng = Rng(99);
    let keys = rng.keys(1_000_000, Rng::next);
    let want = expected(&keys);
    for backend in support::backends() {
        // The first call builds (or loads) the device's program.
        assert_perm(&sort_on(backend, "warm-up", &keys), &want, &keys, "warm-up");
        let mut times = Vec::new();
        for _ in 0..5 {
            let start = std::time::Instant::now();
            let got = sort_on(backend, "timed", &keys);
            times.push(start.elapsed());
            assert_perm(&got, &want, &keys, "timed");
        }
        times.sort();
        println!(
            "{backend}: 1,000,000 full-range keys: best {:?}, median {:?}",
            times[0], times[2]
        );
    }
}
