// `@gpu` accepts arrays in every form the device has (elements, fields, literals, repeats,
// indexing by a variable, `.len()`, loops, element assignment, patterns, a const table), and
// compiles without a warning.
#![deny(warnings)]

use parcomp::{par, par_fn, DeviceValue};

#[derive(Clone, Copy, Debug, PartialEq, DeviceValue)]
struct Body {
    pos: [f32; 3],
    vel: [f32; 3],
}

#[par_fn]
fn moved(b: Body, dt: f32) -> Body {
    const SCALE: [f32; 3] = [1.0, 1.0, 0.5];
    let mut pos = b.pos;
    for k in 0..pos.len() {
        pos[k] += b.vel[k] * dt * SCALE[k];
    }
    let [x, y, z] = pos;
    Body { pos: [x, y, z], ..b }
}

#[par_fn]
fn total(a: [u32; 4]) -> u32 {
    let mut s = 0u32;
    for v in a {
        s = s.wrapping_add(v);
    }
    s
}

fn main() {
    let bodies = vec![Body { pos: [0.0; 3], vel: [1.0, 2.0, 4.0] }; 3];
    let quads: Vec<[u32; 4]> = vec![[1, 2, 3, 4], [5, 6, 7, 8]];
    // Without a device an `@gpu` comprehension panics saying so: run it only with one.
    if parcomp::backend().device.is_some() {
        let moved = par![@gpu moved(b, 0.5) | b <- &bodies];
        assert_eq!(moved[0].pos, [0.5, 1.0, 1.0]);
        let picked = par![@gpu q[k] * 2 | q <- &quads, k <- 0..q.len(), k % 2 == 0];
        assert_eq!(picked, vec![2, 6, 10, 14]);
        let sums = par![@gpu [[total(q), q[0]]; 2] | q <- &quads];
        assert_eq!(sums, vec![[[10, 1]; 2], [[26, 5]; 2]]);
    }
}
