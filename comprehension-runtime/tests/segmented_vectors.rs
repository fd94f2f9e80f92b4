//! The external test vectors of the segmented primitives (Futhark's `segmented` library,
//! Thrust's expand, CUB's segmented reduce), on every backend.

mod support;

use comprehension_runtime::segmented::{
    expand, expand_outer_reduce, expand_reduce, reduce_rows, replicated_iota, segmented_iota,
    segmented_reduce, segmented_scan,
};
use comprehension_runtime::segmented::{Max, Min, Monoid, Sum};
use comprehension_runtime::{trace, with_backend, Jagged};
use serde_json::Value;
use std::fmt::Debug;

fn load(name: &str) -> Value {
    let path = format!("{}/../tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {path}: {e}"))
}

fn i64s(v: &Value) -> Vec<i64> {
    v.as_array().expect("an array").iter().map(|x| x.as_i64().expect("an integer")).collect()
}

fn usizes(v: &Value) -> Vec<usize> {
    v.as_array().expect("an array").iter().map(|x| x.as_u64().expect("a size") as usize).collect()
}

fn bools(v: &Value) -> Vec<bool> {
    v.as_array().expect("an array").iter().map(|x| x.as_bool().expect("a flag")).collect()
}

fn cases<'a>(data: &'a Value, key: &str) -> &'a [Value] {
    let v = &data[key];
    let list = if v.is_array() { v } else { &v["cases"] };
    let list = list.as_array().unwrap_or_else(|| panic!("no cases for {key}"));
    assert!(!list.is_empty(), "no cases for {key}");
    list
}

/// Runs `f` on every backend and checks each result against `expected`.
fn on_every_backend<T: PartialEq + Debug>(what: &str, expected: &T, f: impl Fn() -> T) {
    for backend in support::backends() {
        assert_eq!(&with_backend(backend, &f), expected, "{what} on backend {backend}");
    }
}

/// [`on_every_backend`] for the primitives a device runs (the iotas, a [`Monoid`]'s methods):
/// on a device backend, each of them must have run there.
fn on_every_backend_and_device<T: PartialEq + Debug>(what: &str, expected: &T, f: impl Fn() -> T) {
    for backend in support::backends() {
        let (got, runs) = trace::record(|| with_backend(backend, &f));
        assert_eq!(&got, expected, "{what} on backend {backend}");
        if backend.is_device() {
            assert!(!runs.is_empty(), "{what}: nothing ran");
            for run in &runs {
                assert_eq!(run.backend, backend, "{what}: {run}");
            }
        }
    }
}

#[test]
fn futhark_segmented_scan_add() {
    let data = load("segmented.json");
    for case in cases(&data, "segmented_scan_add") {
        let (flags, values) = (bools(&case["flags"]), i64s(&case["values"]));
        on_every_backend(&format!("segmented_scan {case}"), &i64s(&case["expected"]), || {
            segmented_scan(&flags, &values, 0, |a, b| a + b)
        });
        on_every_backend_and_device(
            &format!("Sum.segmented_scan {case}"),
            &i64s(&case["expected"]),
            || Sum.segmented_scan(&flags, &values),
        );
    }
}

#[test]
fn futhark_segmented_reduce_add() {
    let data = load("segmented.json");
    for case in cases(&data, "segmented_reduce_add") {
        let (flags, values) = (bools(&case["flags"]), i64s(&case["values"]));
        on_every_backend(&format!("segmented_reduce {case}"), &i64s(&case["expected"]), || {
            segmented_reduce(&flags, &values, 0, |a, b| a + b)
        });
        on_every_backend_and_device(
            &format!("Sum.segmented_reduce {case}"),
            &i64s(&case["expected"]),
            || Sum.segmented_reduce(&flags, &values),
        );
    }
    on_every_backend_and_device("Sum.segmented_reduce of nothing", &Vec::<i64>::new(), || {
        Sum.segmented_reduce(&[], &[])
    });
    // Empty input: no segments.
    on_every_backend("segmented_reduce of nothing", &Vec::<i64>::new(), || {
        segmented_reduce(&[], &[], 0i64, |a, b| a + b)
    });
}

#[test]
fn futhark_replicated_iota() {
    let data = load("segmented.json");
    for case in cases(&data, "replicated_iota") {
        let reps = usizes(&case["reps"]);
        on_every_backend_and_device(
            &format!("replicated_iota {case}"),
            &usizes(&case["expected"]),
            || replicated_iota(&reps),
        );
    }
}

#[test]
fn futhark_repl_segm_iota() {
    let data = load("segmented.json");
    for case in cases(&data, "repl_segm_iota") {
        let reps = usizes(&case["reps"]);
        let (want_repl, want_segm) =
            (usizes(&case["expected_repl"]), usizes(&case["expected_segm"]));
        on_every_backend(&format!("repl_segm_iota (repl) {case}"), &want_repl, || {
            replicated_iota(&reps)
        });
        // Futhark's repl_segm_iota: the segmented iota of the flags marking where each
        // non-empty row starts.
        on_every_backend(&format!("repl_segm_iota (segm) {case}"), &want_segm, || {
            let repl = replicated_iota(&reps);
            let flags: Vec<bool> =
                (0..repl.len()).map(|i| i == 0 || repl[i] != repl[i - 1]).collect();
            segmented_iota(&flags)
        });
        // The same, as an expansion.
        on_every_backend(&format!("repl_segm_iota (expand) {case}"), &want_segm, || {
            expand(&reps, |&r| r, |_, i| i)
        });
    }
}

#[test]
fn futhark_segmented_iota() {
    let data = load("segmented.json");
    for case in cases(&data, "segmented_iota") {
        let flags = bools(&case["flags"]);
        on_every_backend_and_device(
            &format!("segmented_iota {case}"),
            &usizes(&case["expected"]),
            || segmented_iota(&flags),
        );
    }
}

#[test]
fn futhark_expand_size_id_get_mul() {
    let data = load("segmented.json");
    for case in cases(&data, "expand_size_id_get_mul") {
        let input = i64s(&case["input"]);
        on_every_backend(&format!("expand {case}"), &i64s(&case["expected"]), || {
            expand(&input, |&x| x as usize, |&x, i| x * i as i64)
        });
    }
}

#[test]
fn futhark_expand_reduce_size_id_get_mul_add() {
    let data = load("segmented.json");
    for case in cases(&data, "expand_reduce_size_id_get_mul_add") {
        let input = i64s(&case["input"]);
        on_every_backend(&format!("expand_reduce {case}"), &i64s(&case["expected"]), || {
            expand_reduce(&input, |&x| x as usize, |&x, i| x * i as i64, 0, |a, b| a + b)
        });
    }
    // The cases upstream gets wrong: exactly one non-empty row.
    for input in [vec![3i64], vec![0, 3, 0]] {
        on_every_backend(&format!("expand_reduce {input:?}"), &vec![9], || {
            expand_reduce(&input, |&x| x as usize, |&x, i| x * i as i64, 0, |a, b| a + b)
        });
    }
}

#[test]
fn futhark_expand_outer_reduce_size_id_get_mul_add() {
    let data = load("segmented.json");
    for case in cases(&data, "expand_outer_reduce_size_id_get_mul_add") {
        let input = i64s(&case["input"]);
        on_every_backend(&format!("expand_outer_reduce {case}"), &i64s(&case["expected"]), || {
            expand_outer_reduce(&input, |&x| x as usize, |&x, i| x * i as i64, 0, |a, b| a + b)
        });
    }
}

#[test]
fn thrust_expand() {
    let data = load("reference.json");
    for case in cases(&data, "thrust_expand") {
        let counts = usizes(&case["counts"]);
        let values = case["values"].as_array().unwrap();
        let expected = case["expected"].as_array().unwrap();
        let rows: Vec<usize> = (0..counts.len()).collect();
        if values.iter().all(Value::is_string) {
            let values: Vec<&str> = values.iter().map(|v| v.as_str().unwrap()).collect();
            let want: Vec<String> =
                expected.iter().map(|v| v.as_str().unwrap().to_owned()).collect();
            on_every_backend(&format!("thrust expand {case}"), &want, || {
                expand(&rows, |&r| counts[r], |&r, _| values[r].to_owned())
            });
            // Elements that are `Copy` can be the input themselves.
            let pairs: Vec<(usize, &str)> =
                counts.iter().copied().zip(values.iter().copied()).collect();
            let want: Vec<&str> = want.iter().map(String::as_str).collect();
            on_every_backend(&format!("thrust expand pairs {case}"), &want, || {
                expand(&pairs, |&(count, _)| count, |&(_, value), _| value)
            });
        } else {
            let values = i64s(&case["values"]);
            on_every_backend(&format!("thrust expand {case}"), &i64s(&case["expected"]), || {
                expand(&rows, |&r| counts[r], |&r, _| values[r])
            });
        }
    }
}

#[test]
fn cub_segmented_reduce() {
    let data = load("reference.json");
    let case = &data["cub_segmented_reduce"];
    let offsets = usizes(&case["offsets"]);
    let values: Vec<i32> = i64s(&case["values"]).into_iter().map(|v| v as i32).collect();
    let rows = Jagged::from_parts(offsets, values).expect("valid offsets");
    let sums: Vec<i32> = i64s(&case["sum_expected"]).into_iter().map(|v| v as i32).collect();
    on_every_backend("cub sum", &sums, || reduce_rows(&rows, 0, |a, b| a + b));
    on_every_backend_and_device("cub Sum", &sums, || Sum.reduce_rows(&rows));
    let mins: Vec<i32> =
        i64s(&case["min_expected_with_init_i32_max"]).into_iter().map(|v| v as i32).collect();
    assert_eq!(mins[1], i32::MAX);
    on_every_backend("cub min", &mins, || reduce_rows(&rows, i32::MAX, i32::min));
    on_every_backend_and_device("cub Min", &mins, || Min.reduce_rows(&rows));
    let maxes: Vec<i32> =
        rows.iter().map(|r| r.iter().copied().max().unwrap_or(i32::MIN)).collect();
    on_every_backend_and_device("cub Max", &maxes, || Max.reduce_rows(&rows));
}
