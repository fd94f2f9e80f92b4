//! Small helpers the examples share: timing by the median of several runs, printing durations,
//! byte counts and long vectors abbreviated.
#![allow(dead_code)]

use std::fmt::Debug;
use std::time::{Duration, Instant};

/// Runs `f` `runs` times (at least once) and returns the median time and the last result.
///
/// The median, unlike the mean, is not dragged up by one run that the operating system
/// interrupted.
pub fn median_time<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut times = Vec::with_capacity(runs.max(1));
    let mut result = None;
    for _ in 0..runs.max(1) {
        let start = Instant::now();
        let value = f();
        times.push(start.elapsed());
        // Dropping the previous result outside the timed region.
        result = Some(value);
    }
    times.sort();
    (times[times.len() / 2], result.expect("ran at least once"))
}

/// A duration with a unit a person reads at a glance: `850 µs`, `12.3 ms`, `1.52 s`.
pub fn fmt_duration(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs >= 1.0 {
        format!("{secs:.2} s")
    } else if secs >= 1e-3 {
        format!("{:.1} ms", secs * 1e3)
    } else {
        format!("{:.0} µs", secs * 1e6)
    }
}

/// A byte count with a decimal unit: `176 B`, `24.1 kB`, `156.2 MB`, `1.20 GB`.
pub fn fmt_bytes(b: u64) -> String {
    let b = b as f64;
    if b >= 1e9 {
        format!("{:.2} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.1} kB", b / 1e3)
    } else {
        format!("{b} B")
    }
}

/// `[a, b, c]` for a short slice, `[a, b, c, …, y, z] (N elements)` for a long one.
pub fn abbreviate<T: Debug>(values: &[T], keep: usize) -> String {
    let show = |v: &[T]| v.iter().map(|x| format!("{x:?}")).collect::<Vec<_>>().join(", ");
    if values.len() <= 2 * keep {
        format!("[{}]", show(values))
    } else {
        format!(
            "[{}, …, {}] ({} elements)",
            show(&values[..keep]),
            show(&values[values.len() - keep..]),
            values.len()
        )
    }
}
