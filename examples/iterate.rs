//! An iteration that keeps its data on the device: heat spreading along a rod, one
//! comprehension per time step, each reading the previous step's temperatures.
//!
//! ```text
//! cargo run --release --example iterate --features opencl
//! PARCOMP_BACKEND=opencl cargo run --release --example iterate --features opencl  # PoCL
//! ```
//!
//! (The automatic choice keeps work off a device that its calibration found slower than
//! rayon, as PoCL on the CPU is: the second line forces it, to show the device's counts.)
//!
//! Written with `Vec`s, every step copies the whole rod to the device and back. Written with
//! `DeviceVec` and `par_device!`, the rod is uploaded once, every step reads the previous
//! step's result where it already is, and only the final answer comes back. The program prints
//! what the device's counters (`parcomp::gpu_stats()`) saw per step, both ways, and checks
//! that both give the same temperatures. Without a device both run on the CPU, with the same
//! results.

use parcomp::{par, par_device, par_max, DeviceVec};
use std::time::Instant;

const CELLS: u32 = 1 << 20;
const STEPS: usize = 20;

/// Temperatures after one step: each inner cell moves a quarter of the way towards the mean of
/// its neighbours; the ends are held at their temperatures.
fn step_vec(t: &[f32]) -> Vec<f32> {
    let last = t.len() as u32 - 1;
    par![if i == 0 || i == last { t[i as usize] } else {
            let c = t[i as usize];
            c + 0.25 * (t[i as usize - 1] + t[i as usize + 1] - 2.0 * c)
        } | i <- 0..t.len() as u32]
}

/// The same step on a `DeviceVec`, its result left on the device.
fn step_device(t: &DeviceVec<f32>) -> DeviceVec<f32> {
    let last = t.len() as u32 - 1;
    par_device![if i == 0 || i == last { t[i as usize] } else {
            let c = t[i as usize];
            c + 0.25 * (t[i as usize - 1] + t[i as usize + 1] - 2.0 * c)
        } | i <- 0..t.len() as u32]
}

fn describe(label: &str) -> String {
    match parcomp::gpu_stats() {
        Some(s) => format!(
            "{label}: {} copies in ({} bytes), {} copies out ({} bytes), {} host waits, {} \
             allocations",
            s.copies_in, s.bytes_in, s.copies_out, s.bytes_out, s.host_waits, s.allocations
        ),
        None => format!("{label}: ran on the CPU"),
    }
}

fn main() {
    // A rod cold everywhere but a hot left end.
    let start: Vec<f32> = (0..CELLS).map(|i| if i < 1024 { 100.0 } else { 0.0 }).collect();
    println!("{}", parcomp::backend());

    let clock = Instant::now();
    let mut t = start.clone();
    for k in 0..STEPS {
        t = step_vec(&t);
        if k < 2 || k == STEPS - 1 {
            println!("  {}", describe(&format!("Vec step {k}")));
        }
    }
    let with_vecs = clock.elapsed();

    let clock = Instant::now();
    let mut d = DeviceVec::from_slice(&start);
    for k in 0..STEPS {
        d = step_device(&d);
        if k < 2 || k == STEPS - 1 {
            println!("  {}", describe(&format!("DeviceVec step {k}")));
        }
    }
    let hottest = par_max![x | x <- &d].expect("cells");
    let on_device = d.to_vec();
    let with_device = clock.elapsed();

    assert_eq!(on_device, t, "the two ways differ");
    println!(
        "{STEPS} steps over {CELLS} cells: {with_vecs:.2?} with Vecs, {with_device:.2?} with a \
         DeviceVec (hottest cell {hottest:.2}, warmth reached cell {})",
        t.iter().rposition(|&x| x > 0.0).unwrap_or(0)
    );
}
