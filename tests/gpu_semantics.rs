//! Rust's semantics on the device, point by point: where C differs from Rust, the generated
//! kernels make up for it, and these tests hold them to Rust's answers.
//!
//! A comprehension whose result a debug build cannot compute (it overflows) runs on the device
//! only, against a reference written with the explicit `wrapping_*` methods; everything else
//! runs on every backend.

mod support;

use parcomp::{par, par_fn, par_max, par_sum, trace, with_backend, Backend};
use support::{device_panics, devices, on_devices, on_every_backend};

/// Checks that a device fault's panic carries Rust's message, the comprehension, where it is
/// written and the backend.
fn assert_fault(backend: Backend, message: &str, rust_message: &str, text: &str) {
    assert!(message.contains(rust_message), "{message:?} lacks {rust_message:?}");
    assert!(message.contains(text), "{message:?} does not name the comprehension {text:?}");
    assert!(message.contains("gpu_semantics.rs"), "{message:?} does not say where it is written");
    assert!(message.contains(backend.name()), "{message:?} does not name the backend");
}

#[test]
fn signed_and_unsigned_arithmetic_wraps_as_in_a_release_build() {
    let a: Vec<i32> = vec![i32::MAX, i32::MIN, 46_341, -46_341, 7, -1, 0, 1 << 30];
    let got = on_devices(|| par![(x + y, x - y, x * y, -x) | x <- &a, y <- &a]);
    let mut want = Vec::new();
    for &x in &a {
        for &y in &a {
            want.push((x.wrapping_add(y), x.wrapping_sub(y), x.wrapping_mul(y), x.wrapping_neg()));
        }
    }
    for (_, got) in got {
        assert_eq!(got, want);
    }
    let b: Vec<u64> = vec![u64::MAX, 0, 1, 1 << 63, 0x1234_5678_9abc_def0];
    let got = on_devices(|| par![(x + y, x - y, x * y) | x <- &b, y <- &b]);
    let mut want = Vec::new();
    for &x in &b {
        for &y in &b {
            want.push((x.wrapping_add(y), x.wrapping_sub(y), x.wrapping_mul(y)));
        }
    }
    for (_, got) in got {
        assert_eq!(got, want);
    }
    // The explicit methods agree on every backend.
    on_every_backend(
        || par![(x.wrapping_add(y), x.wrapping_mul(y), x.wrapping_sub(y)) | x <- &a, y <- &a],
    );
}

#[test]
fn narrow_types_keep_their_width() {
    // C promotes u8 to int: (200 + 100) / 2 would be 150 there; Rust wraps to 44 first.
    let bytes: Vec<u8> = vec![0, 1, 100, 127, 128, 200, 255];
    let got = on_devices(|| par![(x + y) / 2 | x <- &bytes, y <- &bytes]);
    let want: Vec<u8> =
        bytes.iter().flat_map(|&x| bytes.iter().map(move |&y| x.wrapping_add(y) / 2)).collect();
    for (_, got) in got {
        assert_eq!(got, want);
    }
    let signed: Vec<i8> = vec![i8::MIN, -100, -1, 0, 1, 100, i8::MAX];
    let got = on_devices(|| par![((x + y) >> 1, x * y) | x <- &signed, y <- &signed]);
    let want: Vec<(i8, i8)> = signed
        .iter()
        .flat_map(|&x| signed.iter().map(move |&y| (x.wrapping_add(y) >> 1, x.wrapping_mul(y))))
        .collect();
    for (_, got) in got {
        assert_eq!(got, want);
    }
    let shorts: Vec<u16> = vec![0, 1, 255, 256, 40_000, u16::MAX];
    let got = on_devices(|| par![(x * y, !x, x - y) | x <- &shorts, y <- &shorts]);
    let want: Vec<(u16, u16, u16)> = shorts
        .iter()
        .flat_map(|&x| shorts.iter().map(move |&y| (x.wrapping_mul(y), !x, x.wrapping_sub(y))))
        .collect();
    for (_, got) in got {
        assert_eq!(got, want);
    }
}

#[test]
fn shifts_mask_their_amount_as_in_a_release_build() {
    let got = on_devices(|| par![(1u32 << s, 1u64 << s, -8i32 >> s, 1u8 << s) | s <- 0u32..80]);
    let want: Vec<(u32, u64, i32, u8)> = (0u32..80)
        .map(|s| {
            (
                1u32.wrapping_shl(s),
                1u64.wrapping_shl(s),
                (-8i32).wrapping_shr(s),
                1u8.wrapping_shl(s),
            )
        })
        .collect();
    for (_, got) in got {
        assert_eq!(got, want);
    }
    // In range, every backend agrees.
    on_every_backend(|| par![(x << s, x >> s, (x as i16) >> s) | x <- 0u16..300, s <- 0u32..16]);
}

#[test]
fn division_and_remainder_of_negatives_truncate() {
    let divisors: Vec<i32> = vec![-7, -3, -2, -1, 1, 2, 3, 7];
    let got = on_every_backend(
        || par![(a / b, a % b, a.div_euclid(b), a.rem_euclid(b)) | a <- -20i32..=20, b <- &divisors],
    );
    let mut want = Vec::new();
    for a in -20i32..=20 {
        for &b in &divisors {
            want.push((a / b, a % b, a.div_euclid(b), a.rem_euclid(b)));
        }
    }
    assert_eq!(got, want);
    assert!(want.contains(&(-7 / 2, -1, -4, 1)));
    let wide: Vec<i64> = vec![i64::MIN + 1, -1_000_000_007, -5, 5, i64::MAX];
    on_every_backend(|| par![(a / b, a % b) | a <- &wide, b <- &wide]);
}

#[test]
fn a_none_pattern_matches_only_none() {
    // `None` in a pattern is the variant, not a name binding everything: as a generator's
    // pattern (a filter) and as a `match` arm, on the device.
    let opts: Vec<Option<i32>> = vec![Some(1), None, Some(3), None, Some(-4), None, Some(0)];
    let want_count = opts.iter().filter(|o| o.is_none()).count();
    let want_codes: Vec<i32> = opts
        .iter()
        .map(|o| match o {
            None => -1,
            _ => o.unwrap_or(0) * 2,
        })
        .collect();
    let want_bound: Vec<i32> = opts.iter().map(|o| o.map_or(0, |v| v + 100)).collect();
    for (backend, (count, codes, bound)) in on_devices(|| {
        (
            par_sum![1usize | None <- &opts],
            par![match o { None => -1, _ => o.unwrap_or(0) * 2 } | o <- &opts],
            par![match o { None => 0, x => x.unwrap() + 100 } | o <- &opts],
        )
    }) {
        assert_eq!(count, want_count, "{backend}");
        assert_eq!(codes, want_codes, "{backend}");
        assert_eq!(bound, want_bound, "{backend}");
    }
    assert_eq!(want_count, 3);
}

#[test]
fn float_division_by_zero_gives_infinities_and_nan() {
    let xs: Vec<f64> = vec![1.0, -1.0, 0.0, f64::INFINITY];
    // Bit for bit, except that a NaN is any NaN: Rust does not specify the sign and payload of
    // a NaN an operation returns, and devices differ in them.
    let bits = |v: Vec<f64>| {
        v.into_iter()
            .map(|x| if x.is_nan() { f64::NAN.to_bits() } else { x.to_bits() })
            .collect::<Vec<_>>()
    };
    let got = on_every_backend(|| bits(par![x / 0.0 | x <- &xs]));
    assert_eq!(got[0], f64::INFINITY.to_bits());
    assert_eq!(got[1], f64::NEG_INFINITY.to_bits());
    assert!(f64::from_bits(got[2]).is_nan());
    on_every_backend(|| bits(par![x % 0.0 + x % 2.5 | x <- &xs]));
}

#[test]
fn division_by_zero_is_rusts_panic_naming_the_comprehension() {
    let divisors: Vec<i32> = vec![5, 4, 0, 3];
    for (backend, message) in device_panics(|| drop(par![100 / b | b <- &divisors])) {
        assert_fault(backend, &message, "attempt to divide by zero", "par![100 / b");
    }
    for (backend, message) in device_panics(|| drop(par![100 % b | b <- &divisors])) {
        assert_fault(
            backend,
            &message,
            "attempt to calculate the remainder with a divisor of zero",
            "par![100 % b",
        );
    }
    let pairs: Vec<i32> = vec![i32::MIN, 7];
    for (backend, message) in device_panics(|| drop(par![a / -b | a <- &pairs, b <- 1..2])) {
        assert_fault(backend, &message, "attempt to divide with overflow", "par![a / -b");
    }
    // A fault in a reduction, and one in a filter, are reported the same way.
    for (backend, message) in device_panics(|| {
        let _ = par_sum![100 / b | b <- &divisors];
    }) {
        assert_fault(backend, &message, "attempt to divide by zero", "par_sum![100 / b");
    }
    for (backend, message) in device_panics(|| drop(par![b | b <- &divisors, 10 / b > 1])) {
        assert_fault(backend, &message, "attempt to divide by zero", "10 / b > 1");
    }
    // In the size of a level, which the level above computes in its own kernel.
    for (backend, message) in device_panics(|| drop(par![(b, c) | b <- &divisors, c <- 0..12 / b]))
    {
        assert_fault(backend, &message, "attempt to divide by zero", "c <- 0..12 / b");
    }
    // In the head of a filtering level, flat and below the first generator, whose work-groups
    // keep all their positions in runs of 500 and one in seven in the runs between: a zero
    // kept in a sparse run (its work-group stages what it keeps in the first phase) and in a
    // dense one (its work-group computes its positions again in the second).
    for zero in [54_600, 54_321] {
        let values: Vec<i64> = (0..100_000i64)
            .map(|i| match i {
                _ if i == zero => 0,
                _ if i % 1000 < 500 || i % 7 == 0 => 2 * i + 2,
                _ => 2 * i + 1,
            })
            .collect();
        for (backend, message) in device_panics(|| drop(par![1000 / b | b <- &values, b % 2 == 0]))
        {
            assert_fault(backend, &message, "attempt to divide by zero", "par![1000 / b");
        }
        let rows = parcomp::Jagged::from(vec![values[..3000].to_vec(), values.clone()]);
        for (backend, message) in device_panics(|| {
            drop(par![(r, 1000 / b) | r <- 0..rows.len(), b <- rows.row(r), b % 2 == 0])
        }) {
            assert_fault(backend, &message, "attempt to divide by zero", "1000 / b");
        }
    }
    // In the filter of a filtering level below the first generator, whose work-items test a
    // row's positions with the filters alone after positions that kept none, and run them in
    // full after positions that kept some: a zero after a long run that keeps nothing, and one
    // right after a kept position.
    for (zero, kept) in [(40_000, 7), (40_000, 39_999)] {
        let values: Vec<i64> = (0..60_000i64)
            .map(|i| match i {
                _ if i == zero => 0,
                _ if i == kept => 3,
                _ => 5000 + i,
            })
            .collect();
        let rows = parcomp::Jagged::from(vec![values[..100].to_vec(), values.clone()]);
        for (backend, message) in device_panics(|| {
            drop(par![(r, b) | r <- 0..rows.len(), b <- rows.row(r), 1000 / b > 1])
        }) {
            assert_fault(backend, &message, "attempt to divide by zero", "1000 / b > 1");
        }
    }
}

#[test]
fn an_index_out_of_bounds_is_rusts_panic_with_the_index_and_the_length() {
    let values: Vec<u32> = (0..300).collect();
    let indices: Vec<usize> = vec![0, 299, 1000, 5];
    for (backend, message) in device_panics(|| drop(par![values[i] | i <- &indices])) {
        assert_fault(
            backend,
            &message,
            "index out of bounds: the len is 300 but the index is 1000",
            "par![values[i]",
        );
    }
    // In bounds, the same comprehension runs everywhere.
    let indices: Vec<usize> = vec![0, 299, 100, 5];
    assert_eq!(on_every_backend(|| par![values[i] | i <- &indices]), vec![0, 299, 100, 5]);
}

#[test]
fn a_row_past_the_end_of_the_rows_is_a_panic_where_the_rows_offsets_are_the_levels() {
    // The range's elements are the rows' indices, and the inner level's offsets are the rows'
    // own only while every row exists: one past the end is Rust's panic, not a read past them.
    let m = parcomp::Jagged::from(vec![vec![(0u32, 1.0f64)], vec![], vec![(1, 2.0), (0, 3.0)]]);
    let x = vec![1.0f64, 2.0];
    for (backend, message) in device_panics(|| {
        drop(par![par_sum![v * x[c as usize] | (c, v) <- m.row(i)] | i <- 0..m.len() + 1])
    }) {
        assert_fault(backend, &message, "index out of bounds", "par![par_sum![v * x[c as usize]");
    }
    assert_eq!(
        on_every_backend(
            || par![par_sum![v * x[c as usize] | (c, v) <- m.row(i)] | i <- 0..m.len()]
        ),
        vec![1.0, 0.0, 7.0]
    );
}

#[test]
fn float_to_int_casts_saturate_and_map_nan_to_zero() {
    let values: Vec<f64> = vec![
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1e20,
        -1e20,
        3.9,
        -3.9,
        -0.0,
        255.5,
        256.0,
        -129.0,
        2_147_483_647.5,
        2_147_483_648.0,
        -2_147_483_649.0,
        4_294_967_296.0,
        1.8e19,
        9.3e18,
        -9.3e18,
        1e-300,
    ];
    on_every_backend(|| par![(x as i8, x as u8, x as i16, x as u16) | x <- &values]);
    on_every_backend(|| par![(x as i32, x as u32, x as i64, x as u64) | x <- &values]);
    let got = on_every_backend(|| par![(x as usize, x as isize) | x <- &values]);
    assert_eq!(got[0], (0, 0));
    assert_eq!(got[1], (usize::MAX, isize::MAX));
    let values32: Vec<f32> = values.iter().map(|&v| v as f32).collect();
    on_every_backend(|| par![(x as i8, x as u8, x as i16, x as u16) | x <- &values32]);
    on_every_backend(|| par![(x as i32, x as u32, x as i64, x as u64) | x <- &values32]);
    // And back: integers to floats round to nearest.
    let ints: Vec<u64> = vec![0, 1, (1 << 53) + 1, u64::MAX, 16_777_217];
    on_every_backend(|| par![(x as f32, x as f64, (x as i64) as f32) | x <- &ints]);
}

#[test]
fn round_goes_half_away_from_zero() {
    let values: Vec<f64> = vec![0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.499_999_999_999_999_94, 1e300];
    let got = on_every_backend(|| par![(x.round(), x.floor(), x.ceil(), x.trunc()) | x <- &values]);
    assert_eq!(got[2].0, 3.0);
    assert_eq!(got[5].0, -3.0);
    assert_eq!(got[6].0, 0.0);
    let values32: Vec<f32> = values.iter().map(|&v| v as f32).collect();
    let got = on_every_backend(|| par![x.round() | x <- &values32]);
    assert_eq!(&got[..6], &[1.0, 2.0, 3.0, -1.0, -2.0, -3.0]);
}

#[test]
fn float_literals_take_the_type_rust_infers() {
    // With x: f32 every literal is f32; C would compute the sum in double and round once.
    let xs: Vec<f32> = (0..1000).map(|i| i as f32 * 0.37).collect();
    let bits = |v: Vec<f32>| v.into_iter().map(f32::to_bits).collect::<Vec<_>>();
    let got = on_every_backend(|| bits(par![x * 0.1 + 1.0 / 3.0 | x <- &xs]));
    let want: Vec<u32> = xs.iter().map(|&x| (x * 0.1 + 1.0 / 3.0).to_bits()).collect();
    assert_eq!(got, want);
    let got = on_every_backend(|| bits(par![(x / 7.0) * 7.0 - x | x <- &xs]));
    let want: Vec<u32> = xs.iter().map(|&x| ((x / 7.0) * 7.0 - x).to_bits()).collect();
    assert_eq!(got, want);
}

/// The relative error of `got` against `want`, zero when both are the same value.
fn relative(got: f64, want: f64) -> f64 {
    if got == want || (got.is_nan() && want.is_nan()) {
        0.0
    } else {
        ((got - want) / want.abs().max(f64::MIN_POSITIVE)).abs()
    }
}

#[test]
fn transcendental_functions_are_within_the_stated_tolerance() {
    // The device's math library is not Rust's: sqrt is exact, the rest within a few ulps. The
    // The guide (`docs/src/devices.md`) states the tolerance these tests hold: 1e-12 relative for f64, 1e-5 for f32.
    let xs: Vec<f64> = (1..2000).map(|i| i as f64 * 0.0173).collect();
    let f = || par![(x.sqrt(), x.exp(), x.ln(), x.sin(), x.cos(), x.powf(1.7)) | x <- &xs];
    let want = with_backend(Backend::Sequential, f);
    for (_, got) in on_devices(f) {
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g.0, w.0, "sqrt is correctly rounded");
            for (a, b) in [(g.1, w.1), (g.2, w.2), (g.3, w.3), (g.4, w.4), (g.5, w.5)] {
                assert!(relative(a, b) < 1e-12 || (a - b).abs() < 1e-15, "{g:?} vs {w:?}");
            }
        }
    }
    let ys: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
    let f = || par![(y.sqrt(), y.exp(), y.ln(), y.sin(), y.cos()) | y <- &ys];
    let want = with_backend(Backend::Sequential, f);
    for (_, got) in on_devices(f) {
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g.0, w.0, "sqrt is correctly rounded");
            for (a, b) in [(g.1, w.1), (g.2, w.2), (g.3, w.3), (g.4, w.4)] {
                let (a, b) = (a as f64, b as f64);
                assert!(relative(a, b) < 1e-5 || (a - b).abs() < 1e-6, "{g:?} vs {w:?}");
            }
        }
    }
}

#[test]
fn bool_u8_i8_and_u16_columns() {
    let n = 1000usize;
    let flags: Vec<bool> = (0..n).map(|i| i % 3 == 0 || i % 7 == 0).collect();
    let bytes: Vec<u8> = (0..n).map(|i| (i * 37 % 256) as u8).collect();
    let signed: Vec<i8> = (0..n).map(|i| (i * 11 % 256) as u8 as i8).collect();
    let shorts: Vec<u16> = (0..n).map(|i| (i * 7919 % 65_536) as u16).collect();
    let got = on_every_backend(|| {
        par![(f, b, s, h, f != (b > 100)) | i <- 0..n, let f = flags[i], let b = bytes[i],
             let s = signed[i], let h = shorts[i], f || s < 0]
    });
    let want: Vec<(bool, u8, i8, u16, bool)> = (0..n)
        .filter(|&i| flags[i] || signed[i] < 0)
        .map(|i| (flags[i], bytes[i], signed[i], shorts[i], flags[i] != (bytes[i] > 100)))
        .collect();
    assert_eq!(got, want);
    // Zipped columns, a filter on a bool, bools and narrow values as results.
    let got = on_every_backend(
        || par![(b, !f, s.wrapping_abs()) | f <- &flags | b <- &bytes | s <- &signed],
    );
    assert_eq!(got.len(), n);
    let got = on_every_backend(|| par![b | (f, b) <- &pairs(&flags, &bytes), f]);
    assert_eq!(got.len(), flags.iter().filter(|&&f| f).count());
    assert_eq!(on_every_backend(|| par_sum![h as u64 | h <- &shorts, h > 30_000]), {
        shorts.iter().filter(|&&h| h > 30_000).map(|&h| h as u64).sum::<u64>()
    });
    assert_eq!(on_every_backend(|| par_max![s | s <- &signed]), signed.iter().copied().max());
}

fn pairs(flags: &[bool], bytes: &[u8]) -> Vec<(bool, u8)> {
    flags.iter().copied().zip(bytes.iter().copied()).collect()
}

#[test]
fn a_row_of_three_million_among_rows_of_three() {
    // 2000 rows of 3 with one row of 3·10⁶ in the middle: the huge row is shared by the whole
    // device, the short ones keep their own results.
    let sizes: Vec<u64> = (0..2001).map(|i| if i == 1000 { 3_000_000 } else { 3 }).collect();
    let got = on_every_backend(|| par![par_sum![j % 1000 | j <- 0..s] | s <- &sizes]);
    let want: Vec<u64> = sizes.iter().map(|&s| (0..s).map(|j| j % 1000).sum()).collect();
    assert_eq!(got, want);
    let total: u64 = want.iter().sum();
    assert_eq!(on_every_backend(|| par_sum![j % 1000 | s <- &sizes, j <- 0..s]), total);
    assert_eq!(
        on_every_backend(|| par_max![(j * 7919) % 1_000_003 | s <- &sizes, j <- 0..s]),
        Some(1_000_002)
    );
    let got =
        on_every_backend(|| par![(i, j) | (i, s) <- &indexed(&sizes), j <- 0..s, j % 100_000 == 7]);
    // Only the huge row is longer than 7.
    assert_eq!(got.len(), 30);
    assert!(got.contains(&(1000, 2_900_007)));
}

fn indexed(sizes: &[u64]) -> Vec<(u64, u64)> {
    sizes.iter().enumerate().map(|(i, &s)| (i as u64, s)).collect()
}

/// A device function whose parameters and locals have names the kernel dialect reserves.
#[par_fn]
fn mix(int: u64, float: u64, kernel: u64) -> u64 {
    let local = int * 3 + float;
    let global = local ^ kernel;
    global % 1_000_003
}

#[test]
fn a_par_fn_with_reserved_names() {
    let got =
        on_every_backend(|| par![mix(int, float, int + 7) | int <- 0u64..200, float <- 0..int % 5]);
    let mut want = Vec::new();
    for int in 0u64..200 {
        for float in 0..int % 5 {
            want.push(mix(int, float, int + 7));
        }
    }
    assert_eq!(got, want);
}

#[test]
fn small_work_stays_on_the_cpu_unless_the_threshold_says_otherwise() {
    if std::env::var_os("PARCOMP_BACKEND").is_some()
        || std::env::var_os("PARCOMP_DEVICE_MIN_WORK").is_some()
    {
        return;
    }
    // The automatic choice's device: the first of the build's device backends present.
    let Some(&device) = devices().first() else {
        return;
    };
    // Without an override, the threshold comes from the device's calibration: small work stays
    // on rayon, and the trace says why in its terms.
    let report = parcomp::backend();
    let calibration = report.calibration.clone().expect("the automatic choice calibrated");
    let automatic = parcomp::device_threshold();
    assert_eq!(automatic, calibration.threshold, "{report}");
    let small = || par![x * 2 | x <- 0..10u32];
    let (_, runs) = trace::record(small);
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].backend, Backend::Rayon, "{}", runs[0]);
    let reason = runs[0].reason.clone().unwrap_or_default();
    if automatic == u64::MAX {
        assert!(reason.contains("the device is slower than rayon on this machine"), "{reason}");
    } else {
        assert!(reason.contains("too little work"), "{reason}");
    }
    assert!(reason.contains("calibrated"), "{reason}");
    // A threshold set by the program wins: large work goes to the device without being
    // forced, small work stays on rayon.
    parcomp::set_device_threshold(1000);
    assert_eq!(parcomp::device_threshold(), 1000);
    let (sum, runs) = trace::record(|| par_sum![x as u64 | x <- 0..4000u32]);
    assert_eq!(runs[0].backend, device, "{}", runs[0]);
    assert_eq!(sum, 3999 * 4000 / 2);
    let (_, runs) = trace::record(small);
    assert_eq!(runs[0].backend, Backend::Rayon, "{}", runs[0]);
    let reason = runs[0].reason.as_deref().unwrap_or_default();
    assert!(reason.contains("too little work for the device (10 elements < 1000"), "{reason}");
    parcomp::set_device_threshold(0);
    let (got, runs) = trace::record(small);
    parcomp::set_device_threshold(automatic);
    assert_eq!(runs[0].backend, device, "{}", runs[0]);
    assert_eq!(got, (0..10).map(|x| x * 2).collect::<Vec<u32>>());
}
