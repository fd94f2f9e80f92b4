//! The memory bandwidth parcomp's kernels reach on the device, with the data kept there: a flat
//! sum over a `DeviceVec`, a map (a copy with a change), a skewed expand and a nested reduction
//! over a `DeviceJagged` (a segmented reduce), each at 10⁸ elements by default, each result left
//! on the device (`par_device!`) or a single value, so that no copy between host and device is
//! in the time. For each: the device run's median time, the least DRAM traffic the computation
//! needs (every input read once, every output written once: `RunStats::dram_minimum`) over that
//! time, and the share of the device's peak bandwidth where the device tells it (CUDA does).
//!
//! ```text
//! cargo run --release --example gpu_bandwidth --features cuda [-- --n 100000000 --reps 10]
//! ```

#[path = "support/device.rs"]
mod device;

use parcomp::{par_device, par_sum, DeviceJagged, DeviceVec, Jagged};
use std::time::Duration;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |flag: &str, default: usize| -> usize {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .map(|n| n.parse().unwrap_or_else(|_| panic!("{flag} takes a number")))
            .unwrap_or(default)
    };
    let n = number("--n", 100_000_000).max(1000);
    let reps = number("--reps", 10).max(1);
    let Some((device, backend)) = device::device_or_exit("gpu_bandwidth") else {
        return;
    };
    let peak = parcomp::gpu_device(backend).ok().and_then(|d| d.peak_bandwidth);
    println!("Device: {device}. {n} elements, medians of {reps} device runs after a warm-up.\n");
    println!("| kernel | elements | device run | least DRAM traffic | rate | of peak | modelled traffic / least |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    parcomp::with_backend(backend, || {
        let values: Vec<u64> = (0..n as u64).map(|i| i.wrapping_mul(0x9e37_79b9) >> 7).collect();
        let v = DeviceVec::from_slice(&values);
        let want: u64 = values.iter().fold(0u64, |a, &b| a.wrapping_add(b));
        row("sum of u64", n, peak, reps, || {
            let got = par_sum![x | x <- &v];
            assert_eq!(got, want, "the device's sum");
        });
        row("map u64 -> u64", n, peak, reps, || {
            let out: DeviceVec<u64> = par_device![x ^ 5 | x <- &v];
            assert_eq!(out.len(), n);
        });
        drop(v);

        // Half the elements in one row, the rest spread over 999: the expand shares the long
        // row among the whole device.
        let rows = 1000usize;
        let mut lengths = vec![(n / 2 / (rows - 1)) as u32; rows];
        lengths[0] = (n / 2) as u32;
        let total: usize = lengths.iter().map(|&l| l as usize).sum();
        row("skewed expand to u32", total, peak, reps, || {
            let out: DeviceVec<u32> =
                par_device![(r as u32) ^ i | r <- 0..lengths.len(), i <- 0..lengths[r]];
            assert_eq!(out.len(), total);
        });

        // Rows of 1 to 200 values (a sparse matrix's shape): a reduce per row.
        let row_lengths: Vec<usize> = (0..)
            .map(|r: usize| 1 + (r * 7919) % 200)
            .scan(0, |sum, l| {
                *sum += l;
                (*sum <= n).then_some(l)
            })
            .collect();
        let kept: usize = row_lengths.iter().sum();
        let matrix = Jagged::from_lengths(&row_lengths, values[..kept].to_vec())
            .expect("the lengths add up to the values");
        let dm = DeviceJagged::from_jagged(&matrix);
        let reduce =
            || -> DeviceVec<u64> { par_device![par_sum![x | x <- dm.row(i)] | i <- 0..dm.len()] };
        let want: Vec<u64> =
            matrix.iter().map(|r| r.iter().fold(0u64, |a, &b| a.wrapping_add(b))).collect();
        assert_eq!(reduce().to_vec(), want, "the device's row sums");
        row("segmented reduce of u64 rows", kept, peak, reps, || {
            assert_eq!(reduce().len(), want.len());
        });
    });
}

/// Runs `f` once to warm up (and build its programs), then `reps` times, and prints the median
/// device run against the least traffic the run needs.
fn row(name: &str, elements: usize, peak: Option<f64>, reps: usize, f: impl Fn()) {
    f();
    let mut runs = Vec::with_capacity(reps);
    let mut last = None;
    for _ in 0..reps {
        f();
        let stats = parcomp::gpu_stats().expect("the run went to the device");
        runs.push(stats.run);
        last = Some(stats);
    }
    runs.sort();
    let run = runs[runs.len() / 2];
    let stats = last.expect("at least one run");
    let rate = stats.dram_minimum as f64 / run.as_secs_f64().max(1e-9);
    let of_peak = match peak {
        Some(peak) => format!("{:.0}%", 100.0 * rate / peak),
        None => "–".into(),
    };
    println!(
        "| {name} | {elements} | {} | {:.1} MB | {:.0} GB/s | {of_peak} | {:.2}× |",
        micros(run),
        stats.dram_minimum as f64 / 1e6,
        rate / 1e9,
        stats.dram_bytes as f64 / stats.dram_minimum.max(1) as f64
    );
}

/// In microseconds throughout, so that the column compares at a glance.
fn micros(d: Duration) -> String {
    format!("{:.0} µs", d.as_secs_f64() * 1e6)
}
