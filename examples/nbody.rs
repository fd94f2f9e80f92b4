//! An n-body step on the device: particles are your own structs (positions and velocities as
//! `[f32; 3]` fields), the force of one particle on another is a method, and one comprehension
//! per time step gives every particle its new state.
//!
//! ```text
//! cargo run --release --example nbody                                             # rayon
//! PARCOMP_BACKEND=opencl cargo run --release --example nbody --features opencl    # PoCL
//! ```
//!
//! Nothing in it is device-specific: `#[derive(DeviceValue)]` stores the particles as one
//! column per leaf field (a coalesced load of `pos[0]` over all particles), `#[par_fn]` on the
//! `impl` block compiles its methods for the device, and the nested `par_reduce!` is the
//! all-pairs sum. The program runs the same steps on the sequential backend and on the backend
//! chosen, checks that every position agrees (the float sums are grouped differently, so within
//! a relative 1e-4 of the system's size, not bit for bit), says where each step ran (the trace),
//! and prints the times.

use parcomp::{par, par_fn, par_reduce, trace, with_backend, Backend, DeviceValue};
use std::time::Instant;

/// A particle: where it is, how fast it goes, how heavy it is.
#[derive(Clone, Copy, Debug, PartialEq, DeviceValue)]
struct Particle {
    pos: [f32; 3],
    vel: [f32; 3],
    mass: f32,
}

#[par_fn]
impl Particle {
    /// Keeps two particles that meet from pulling each other infinitely hard.
    const SOFTENING: f32 = 0.05;

    /// The acceleration `other` gives `self`.
    fn pull(&self, other: Particle) -> [f32; 3] {
        let d =
            [other.pos[0] - self.pos[0], other.pos[1] - self.pos[1], other.pos[2] - self.pos[2]];
        let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + Self::SOFTENING;
        let s = other.mass / (r2 * r2.sqrt());
        [d[0] * s, d[1] * s, d[2] * s]
    }

    /// The particle after `dt` under the acceleration `acc`.
    fn advanced(self, acc: [f32; 3], dt: f32) -> Particle {
        let mut vel = self.vel;
        let mut pos = self.pos;
        for k in 0..3 {
            vel[k] += acc[k] * dt;
            pos[k] += vel[k] * dt;
        }
        Particle { pos, vel, ..self }
    }
}

/// The sum of two accelerations (what the all-pairs reduction adds up).
#[par_fn]
fn add(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

/// One time step of all the particles: each particle's acceleration is the sum of every
/// particle's pull (a nested reduction: one segmented reduction over all the pairs).
fn step(ps: &[Particle], dt: f32) -> Vec<Particle> {
    par![p.advanced(par_reduce!(add, [0.0; 3]; p.pull(q) | q <- ps), dt) | p <- ps]
}

/// A disc of particles turning around a heavy centre.
fn galaxy(n: usize) -> Vec<Particle> {
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 40) as f32 / (1u64 << 24) as f32
    };
    (0..n)
        .map(|i| {
            if i == 0 {
                return Particle { pos: [0.0; 3], vel: [0.0; 3], mass: 1000.0 };
            }
            let (r, a) = (1.0 + 9.0 * next(), std::f32::consts::TAU * next());
            let speed = (1000.0 / r).sqrt() * 0.3;
            Particle {
                pos: [r * a.cos(), r * a.sin(), next() - 0.5],
                vel: [-speed * a.sin(), speed * a.cos(), 0.0],
                mass: 0.5 + next(),
            }
        })
        .collect()
}

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(2048);
    let steps = 5;
    let dt = 0.001;
    println!("{}", parcomp::backend());
    println!("{n} particles, {steps} steps of {dt}");

    // The reference: the sequential backend.
    let clock = Instant::now();
    let mut want = galaxy(n);
    for _ in 0..steps {
        want = with_backend(Backend::Sequential, || step(&want, dt));
    }
    let sequential = clock.elapsed();

    // The backend chosen (PARCOMP_BACKEND, or the automatic choice), traced; the first step
    // timed apart (on a device it builds the kernels, once per process).
    let mut first = std::time::Duration::ZERO;
    let clock = Instant::now();
    let (got, runs) = trace::record(|| {
        let mut ps = galaxy(n);
        for s in 0..steps {
            ps = step(&ps, dt);
            if s == 0 {
                first = clock.elapsed();
            }
        }
        ps
    });
    let rest = clock.elapsed() - first;
    let mut places: Vec<String> = runs.iter().map(|r| r.to_string()).collect();
    places.dedup();
    for place in &places {
        println!("ran: {place}");
    }
    let device = runs.iter().any(|r| r.backend.is_device());
    if std::env::var_os("PARCOMP_REQUIRE_DEVICE").is_some_and(|v| v != "0") {
        assert!(device, "PARCOMP_REQUIRE_DEVICE is set, but the steps did not run on a device");
    }

    // Every coordinate within 1e-4 of the system's size of the sequential one.
    let size = want.iter().flat_map(|p| p.pos).fold(0.0f32, |m, v| m.max(v.abs()));
    let worst = got
        .iter()
        .zip(&want)
        .flat_map(|(g, w)| (0..3).map(move |k| (g.pos[k] - w.pos[k]).abs()))
        .fold(0.0f32, f32::max);
    assert_eq!(got.len(), want.len());
    assert!(worst <= 1e-4 * size, "positions differ by {worst} in a system of size {size}");
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    println!(
        "per step: sequential {:.1} ms, {} {:.1} ms (the first step {:.1} ms); largest difference \
         {worst:.2e} (system size {size:.1})",
        ms(sequential) / steps as f64,
        if device { "device" } else { "chosen backend" },
        ms(rest) / (steps - 1) as f64,
        ms(first),
    );
}
