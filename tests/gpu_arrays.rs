//! Fixed-size arrays `[T; N]` on the device: as the elements of a generator, as struct fields,
//! as captures and as results; indexed with constants and variables (checked, with Rust's
//! panic), `.len()`, literals `[a, b]` and `[v; N]`, `for` loops over them and element
//! assignment in `#[par_fn]`s. Every comprehension runs on every backend, on the device too
//! (checked by the trace), and must give the sequential backend's answer.

// The #[par_fn]s and their references loop over indices on purpose: that is what is tested.
#![allow(clippy::needless_range_loop, clippy::explicit_counter_loop)]

mod support;

use parcomp::{
    par, par_fn, par_max, par_reduce, par_sum, trace, with_backend, Backend, DeviceValue,
};
use std::panic::{catch_unwind, AssertUnwindSafe};
use support::{devices, on_device, on_devices, on_every_backend};

fn triples(n: usize) -> Vec<[f32; 3]> {
    (0..n).map(|i| [i as f32 * 0.5 - 7.0, (i % 13) as f32, 1.0 / (i as f32 + 1.0)]).collect()
}

#[test]
fn arrays_as_elements_indexed_by_constants() {
    let arrs = triples(3000);
    let got = on_every_backend(|| par![a[0] * a[1] + a[2] | a <- &arrs, a[1] > 3.0]);
    let want: Vec<f32> = arrs.iter().filter(|a| a[1] > 3.0).map(|a| a[0] * a[1] + a[2]).collect();
    assert_eq!(got, want);
    assert!(!want.is_empty());
    // The whole array as the result, in order.
    let got = on_every_backend(|| par![a | a <- &arrs, a[0] < 0.0]);
    assert_eq!(got, arrs.iter().filter(|a| a[0] < 0.0).copied().collect::<Vec<_>>());
    // Its length is a constant.
    let got = on_every_backend(|| par![a.len() + 1 | a <- &arrs]);
    assert_eq!(got, vec![4usize; arrs.len()]);
}

#[test]
fn arrays_indexed_by_variables() {
    let arrs = triples(500);
    let got = on_every_backend(|| par![(k, a[k]) | a <- &arrs, k <- 0..a.len(), a[k] > 0.5]);
    let mut want = Vec::new();
    for a in &arrs {
        for (k, &v) in a.iter().enumerate() {
            if v > 0.5 {
                want.push((k, v));
            }
        }
    }
    assert_eq!(got, want);
    // An index computed from the element, and the last element by `len() - 1`.
    let ints: Vec<[u16; 4]> =
        (0..700u16).map(|i| [i, i.wrapping_mul(31), i % 7, i.wrapping_mul(7) ^ 0x55]).collect();
    let got = on_every_backend(|| par![a[(a[0] % 4) as usize] + a[a.len() - 1] | a <- &ints]);
    let want: Vec<u16> = ints.iter().map(|a| a[(a[0] % 4) as usize] + a[a.len() - 1]).collect();
    assert_eq!(got, want);
}

/// The panic of `f` on `backend`, and the backend the trace says it ran on.
fn panic_of(backend: Backend, f: &dyn Fn()) -> (String, Vec<Backend>) {
    let (result, runs) =
        trace::record(|| catch_unwind(AssertUnwindSafe(|| with_backend(backend, f))));
    let payload = result.expect_err("the comprehension should panic");
    let message = match payload.downcast::<String>() {
        Ok(s) => *s,
        Err(payload) => payload.downcast::<&str>().map(|s| s.to_string()).unwrap_or_default(),
    };
    (message, runs.iter().map(|r| r.backend).collect())
}

#[test]
fn an_index_out_of_bounds_is_rusts_panic() {
    let arrs = triples(300);
    let ks: Vec<usize> = (0..300).map(|i| if i == 217 { 5 } else { i % 3 }).collect();
    let pairs: Vec<([f32; 3], usize)> = arrs.iter().copied().zip(ks).collect();
    let rust = "index out of bounds: the len is 3 but the index is 5";
    let f = || drop(par![a[k] * 2.0 | (a, k) <- &pairs]);
    let (message, _) = panic_of(Backend::Sequential, &f);
    assert!(message.contains(rust), "{message}");
    for &backend in devices() {
        let (message, ran) = panic_of(backend, &f);
        assert!(ran.iter().all(|&b| b == backend), "{ran:?}");
        assert!(message.contains(rust), "{message:?} lacks {rust:?}");
        assert!(message.contains("a[k]"), "{message:?} does not name the index");
        assert!(message.contains("gpu_arrays.rs"), "{message:?} does not say where");
        assert!(message.contains(backend.name()), "{message:?} does not name the backend");
    }
    // The same in a #[par_fn]'s loop, and in an assignment to an element.
    let f = || drop(par![pick(a, k) | (a, k) <- &pairs]);
    assert!(panic_of(Backend::Sequential, &f).0.contains(rust));
    for &backend in devices() {
        let (message, ran) = panic_of(backend, &f);
        assert!(ran.iter().all(|&b| b == backend), "{ran:?}");
        assert!(message.contains(rust), "{message:?} lacks {rust:?}");
        assert!(message.contains("a[k]"), "{message:?} does not name the index");
    }
    let f = || drop(par![bump(a, k) | (a, k) <- &pairs]);
    assert!(panic_of(Backend::Sequential, &f).0.contains(rust));
    for &backend in devices() {
        let (message, _) = panic_of(backend, &f);
        assert!(message.contains(rust), "{message:?} lacks {rust:?}");
        assert!(message.contains("a[k]"), "{message:?} does not name the index");
    }
    // In bounds, the same comprehensions run everywhere.
    let fine: Vec<([f32; 3], usize)> = pairs.iter().map(|&(a, k)| (a, k % 3)).collect();
    let got = on_every_backend(|| par![(a[k], pick(a, k), bump(a, k)) | (a, k) <- &fine]);
    assert_eq!(got.len(), 300);
    assert_eq!(got[217].0, fine[217].0[2]);
}

#[par_fn]
fn pick(a: [f32; 3], k: usize) -> f32 {
    let mut s = 0.0;
    for i in 0..a.len() {
        if i == 1 {
            s += a[k];
        }
    }
    s
}

#[par_fn]
fn bump(a: [f32; 3], k: usize) -> [f32; 3] {
    let mut a = a;
    a[k] += 1.0;
    a
}

#[test]
fn array_literals_as_results() {
    let got = on_every_backend(|| par![[x, y, x + y] | x <- 0..40i32, y <- 0..15]);
    let mut want = Vec::new();
    for x in 0..40i32 {
        for y in 0..15 {
            want.push([x, y, x + y]);
        }
    }
    assert_eq!(got, want);
    // A repeat, and nested arrays.
    let got = on_every_backend(|| par![([x as f64 * 0.5; 4], [[x, 1], [2, x]]) | x <- 0..=255u8]);
    let want: Vec<_> = (0..=255u8).map(|x| ([x as f64 * 0.5; 4], [[x, 1], [2, x]])).collect();
    assert_eq!(got, want);
    // Literals indexed in the head.
    let got = on_every_backend(|| par![[x, x * 2, x * 3][(x % 3) as usize] | x <- 0..100u64]);
    assert_eq!(got, (0..100u64).map(|x| x * (x % 3 + 1)).collect::<Vec<_>>());
}

#[test]
fn empty_arrays_and_empty_inputs() {
    let empties: Vec<[u16; 0]> = vec![[]; 50];
    let got = on_every_backend(|| par![(a.len(), a.is_empty(), a) | a <- &empties]);
    assert_eq!(got, vec![(0usize, true, []); 50]);
    let arrs = triples(20);
    assert_eq!(on_every_backend(|| par![a.is_empty() | a <- &arrs]), vec![false; 20]);
    let got = on_every_backend(|| par![[x; 0] | x <- 0..20i64]);
    assert_eq!(got, vec![[0i64; 0]; 20]);
    // Any index of an empty array is out of bounds.
    let ks: Vec<([u16; 0], usize)> = vec![([], 0); 10];
    let rust = "index out of bounds: the len is 0 but the index is 0";
    let f = || drop(par![a[k] | (a, k) <- &ks]);
    assert!(panic_of(Backend::Sequential, &f).0.contains(rust));
    for &backend in devices() {
        let (message, ran) = panic_of(backend, &f);
        assert!(ran.iter().all(|&b| b == backend), "{ran:?}");
        assert!(message.contains(rust), "{message:?} lacks {rust:?}");
    }
    let none: Vec<[f32; 3]> = Vec::new();
    assert_eq!(on_every_backend(|| par![a[0] + a[2] | a <- &none]), Vec::<f32>::new());
    assert_eq!(on_every_backend(|| par![a | a <- &none]), none);
}

#[test]
fn arrays_as_captures() {
    let xs: Vec<f32> = (0..1000).map(|i| i as f32 * 0.25 - 30.0).collect();
    let w = [1.0f32, -2.0, 3.5];
    // Read by index (as a captured slice), and whole.
    let got = on_every_backend(|| par![x * w[i] | x <- &xs, i <- 0..3]);
    let want: Vec<f32> = xs.iter().flat_map(|&x| w.iter().map(move |&wi| x * wi)).collect();
    assert_eq!(got, want);
    let arrs = triples(800);
    let got = on_every_backend(|| par![dot(w, a) | a <- &arrs]);
    assert_eq!(
        got,
        arrs.iter().map(|a| w[0] * a[0] + w[1] * a[1] + w[2] * a[2]).collect::<Vec<_>>()
    );
    let got = on_every_backend(|| par![w | _x <- 0..3]);
    assert_eq!(got, vec![w; 3]);
}

/// A #[par_fn] over two arrays, with a `for` loop over their indices.
#[par_fn]
fn dot(a: [f32; 3], b: [f32; 3]) -> f32 {
    let mut s = 0.0;
    for i in 0..a.len() {
        s += a[i] * b[i];
    }
    s
}

/// A `for` loop over an array's elements.
#[par_fn]
fn total(a: [u32; 5]) -> u32 {
    let mut s = 0u32;
    for v in a {
        s = s.wrapping_add(v);
    }
    s
}

/// A histogram: element assignment with a variable index, an array of zeros by repeat.
#[par_fn]
fn histogram(a: [u8; 8]) -> [u32; 4] {
    let mut acc = [0u32; 4];
    for v in &a {
        acc[(v % 4) as usize] += 1;
    }
    acc
}

/// A matrix transposed element by element: nested arrays assigned by two indices.
#[par_fn]
fn transpose(m: [[i16; 3]; 2]) -> [[i16; 2]; 3] {
    let mut t = [[0i16; 2]; 3];
    for i in 0..2 {
        for j in 0..3 {
            t[j][i] = m[i][j];
        }
    }
    t
}

#[test]
fn arrays_in_par_fn_loops() {
    let fives: Vec<[u32; 5]> =
        (0..600u32).map(|i| [i, i.wrapping_mul(2_654_435_761), u32::MAX - i, 7, i << 20]).collect();
    let got = on_every_backend(|| par![total(a) | a <- &fives]);
    let want: Vec<u32> =
        fives.iter().map(|a| a.iter().fold(0u32, |s, &v| s.wrapping_add(v))).collect();
    assert_eq!(got, want);
    let bytes: Vec<[u8; 8]> =
        (0..500u32).map(|i| std::array::from_fn(|k| (i * 31 + k as u32 * 17) as u8)).collect();
    let got = on_every_backend(|| par![histogram(a) | a <- &bytes]);
    let want: Vec<[u32; 4]> = bytes
        .iter()
        .map(|a| {
            let mut acc = [0u32; 4];
            for v in a {
                acc[(v % 4) as usize] += 1;
            }
            acc
        })
        .collect();
    assert_eq!(got, want);
    let ms: Vec<[[i16; 3]; 2]> =
        (0..400i16).map(|i| [[i, -i, i * 3], [i ^ 0x5a, 1, i.wrapping_mul(300)]]).collect();
    let got = on_every_backend(|| par![transpose(m) | m <- &ms]);
    let want: Vec<[[i16; 2]; 3]> =
        ms.iter().map(|m| std::array::from_fn(|j| [m[0][j], m[1][j]])).collect();
    assert_eq!(got, want);
    // Nested arrays indexed by variables in the head.
    let got = on_every_backend(|| par![m[i][j] | m <- &ms, i <- 0..2usize, j <- 0..3usize]);
    let want: Vec<i16> =
        ms.iter().flat_map(|m| (0..2).flat_map(move |i| (0..3).map(move |j| m[i][j]))).collect();
    assert_eq!(got, want);
}

#[test]
fn arithmetic_on_elements_wraps_on_the_device() {
    let ints: Vec<[i32; 3]> =
        (0..1000).map(|i| [i32::MAX - i, i * 46_341, i32::MIN + i * 3]).collect();
    // Plain `+` and `*` wrap on the device as in a release build (the CPU backends of this
    // debug build would panic on the overflow).
    let got = on_device(|| par![[a[0] + a[1], a[1] * a[1], a[2] - a[0]] | a <- &ints]);
    if let Some(got) = got {
        let want: Vec<[i32; 3]> = ints
            .iter()
            .map(|a| [a[0].wrapping_add(a[1]), a[1].wrapping_mul(a[1]), a[2].wrapping_sub(a[0])])
            .collect();
        assert_eq!(got, want);
    }
    let got =
        on_every_backend(|| par![[a[0].wrapping_add(a[1]), a[1].wrapping_mul(a[1])] | a <- &ints]);
    assert_eq!(
        got[999],
        [ints[999][0].wrapping_add(ints[999][1]), ints[999][1].wrapping_mul(ints[999][1])]
    );
}

#[derive(Clone, Copy, Debug, PartialEq, DeviceValue)]
struct Particle {
    pos: [f32; 3],
    vel: [f32; 3],
    mass: f32,
}

#[derive(Clone, Copy, Debug, PartialEq, DeviceValue)]
struct Point {
    x: f64,
    y: f64,
}

/// Arrays of everything: structs, tuples, `Option`s, nested arrays.
#[derive(Clone, Copy, Debug, PartialEq, DeviceValue)]
struct Mixed {
    corners: [Point; 2],
    tags: [(u8, char); 2],
    maybe: [Option<i64>; 3],
    grid: [[bool; 2]; 2],
    none: [f64; 0],
}

fn particles(n: usize) -> Vec<Particle> {
    (0..n)
        .map(|i| {
            let t = i as f32;
            Particle {
                pos: [t.sin(), t.cos() * 2.0, t * 0.01],
                vel: [0.5 - t * 0.001, 1.0, -(t % 7.0)],
                mass: 1.0 + (i % 5) as f32,
            }
        })
        .collect()
}

/// One step of a particle: a loop over the three coordinates.
#[par_fn]
fn step(p: Particle, dt: f32) -> Particle {
    let mut pos = p.pos;
    for k in 0..3 {
        pos[k] += p.vel[k] * dt;
    }
    Particle { pos, ..p }
}

#[test]
fn structs_of_arrays() {
    let ps = particles(2000);
    let got = on_every_backend(|| par![p.pos[1] * p.mass | p <- &ps, p.vel[2] > -3.0]);
    let want: Vec<f32> = ps.iter().filter(|p| p.vel[2] > -3.0).map(|p| p.pos[1] * p.mass).collect();
    assert_eq!(got, want);
    let dt = 0.125f32;
    let got = on_every_backend(|| par![step(p, dt) | p <- &ps]);
    let want: Vec<Particle> = ps
        .iter()
        .map(|p| {
            let mut q = *p;
            for k in 0..3 {
                q.pos[k] += p.vel[k] * dt;
            }
            q
        })
        .collect();
    assert_eq!(got, want);
    // A struct literal holding arrays, built in the head.
    let got = on_every_backend(
        || par![Particle { pos: [p.pos[0], 0.0, p.pos[2]], vel: [p.mass; 3], mass: p.vel[1] } | p <- &ps],
    );
    let want: Vec<Particle> = ps
        .iter()
        .map(|p| Particle { pos: [p.pos[0], 0.0, p.pos[2]], vel: [p.mass; 3], mass: p.vel[1] })
        .collect();
    assert_eq!(got, want);
    let got = on_every_backend(|| par_sum![p.pos[0] as f64 * p.mass as f64 | p <- &ps]);
    assert_eq!(got, ps.iter().map(|p| p.pos[0] as f64 * p.mass as f64).sum::<f64>());
}

#[test]
fn arrays_of_structs_tuples_and_options() {
    let ms: Vec<Mixed> = (0..900)
        .map(|i| Mixed {
            corners: [Point { x: i as f64, y: -(i as f64) }, Point { x: 0.5, y: i as f64 * 2.0 }],
            tags: [(i as u8, char::from(b'a' + (i % 26) as u8)), (7, 'z')],
            maybe: [(i % 3 == 0).then_some(i as i64), None, Some(-(i as i64))],
            grid: [[i % 2 == 0, true], [false, i % 5 == 0]],
            none: [],
        })
        .collect();
    let got = on_every_backend(|| {
        par![(m.corners[1].y - m.corners[0].x, m.tags[0].1, m.maybe[0].unwrap_or(-1), m.grid[1][1])
             | m <- &ms, m.grid[0][0]]
    });
    let want: Vec<_> = ms
        .iter()
        .filter(|m| m.grid[0][0])
        .map(|m| {
            (m.corners[1].y - m.corners[0].x, m.tags[0].1, m.maybe[0].unwrap_or(-1), m.grid[1][1])
        })
        .collect();
    assert_eq!(got, want);
    // The whole value back, and arrays of structs as results.
    assert_eq!(on_every_backend(|| par![m | m <- &ms]), ms);
    let got =
        on_every_backend(|| par![[m.corners[1], Point { x: 1.0, y: m.corners[0].y }] | m <- &ms]);
    let want: Vec<[Point; 2]> =
        ms.iter().map(|m| [m.corners[1], Point { x: 1.0, y: m.corners[0].y }]).collect();
    assert_eq!(got, want);
    // Arrays compare as Rust compares them: element by element.
    let got = on_every_backend(
        || par![(m.tags < [(3, 'd'), (7, 'z')], m.grid == [[true, true], [false, false]]) | m <- &ms],
    );
    let want: Vec<_> = ms
        .iter()
        .map(|m| (m.tags < [(3, 'd'), (7, 'z')], m.grid == [[true, true], [false, false]]))
        .collect();
    assert_eq!(got, want);
}

/// The cumulative normal distribution with its coefficients in a `const` array, as
/// `gpu_report`'s Black-Scholes writes it.
#[par_fn]
fn cnd_table(d: f32) -> f32 {
    const A: [f32; 5] = [0.319_381_53, -0.356_563_78, 1.781_477_9, -1.821_256, 1.330_274_4];
    let k = 1.0 / (1.0 + 0.231_641_9 * d.abs());
    let poly = k * (A[0] + k * (A[1] + k * (A[2] + k * (A[3] + k * A[4]))));
    let w = 1.0 - 0.398_942_3 * (-0.5 * d * d).exp() * poly;
    if d < 0.0 {
        1.0 - w
    } else {
        w
    }
}

/// The same with the coefficients written in the expression.
fn cnd_literals(d: f32) -> f32 {
    let k = 1.0 / (1.0 + 0.231_641_9 * d.abs());
    let poly = k
        * (0.319_381_53
            + k * (-0.356_563_78 + k * (1.781_477_9 + k * (-1.821_256 + k * 1.330_274_4))));
    let w = 1.0 - 0.398_942_3 * (-0.5 * d * d).exp() * poly;
    if d < 0.0 {
        1.0 - w
    } else {
        w
    }
}

#[test]
fn a_const_array_of_coefficients() {
    let ds: Vec<f32> = (0..4001).map(|i| (i as f32 - 2000.0) * 0.004).collect();
    let bits = |v: Vec<f32>| v.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    // Bit for bit the literals' results on the CPU backends; within the device's `exp`
    // tolerance (the guide's devices chapter: 1e-5 relative for f32; the result is at most 1) on the device.
    let got = support::on_every_cpu_backend(|| bits(par![cnd_table(d) | d <- &ds]));
    assert_eq!(got, bits(ds.iter().map(|&d| cnd_literals(d)).collect()));
    for (backend, got) in on_devices(|| par![cnd_table(d) | d <- &ds]) {
        for (g, &d) in got.iter().zip(&ds) {
            assert!((g - cnd_literals(d)).abs() <= 1e-5, "{backend}: {g} for {d}");
        }
    }
}

/// Element-wise sums of arrays (a `mut` parameter, a type annotation, an `.iter()` loop).
#[par_fn]
fn add4(mut a: [u64; 4], b: [u64; 4]) -> [u64; 4] {
    let mut k: usize = 0;
    for v in b.iter() {
        a[k] = a[k].wrapping_add(*v);
        k += 1;
    }
    let out: [u64; 4] = a;
    out
}

#[test]
fn reductions_over_arrays() {
    let quads: Vec<[u64; 4]> = (0..5000u64)
        .map(|i| [i, i * i, u64::MAX - i, i.wrapping_mul(0x9e37_79b9_7f4a_7c15)])
        .collect();
    let got = on_every_backend(|| par_reduce!(add4, [0u64; 4]; q | q <- &quads));
    let want = quads.iter().fold([0u64; 4], |acc, &q| add4(acc, q));
    assert_eq!(got, want);
    // The largest array, compared as Rust compares arrays (element by element).
    let got = on_every_backend(|| par_max![[q[0] % 7, q[3] % 11] | q <- &quads]);
    assert_eq!(got, quads.iter().map(|q| [q[0] % 7, q[3] % 11]).max());
}

/// Arrays taken apart by patterns: a parameter's and a `let`'s.
#[par_fn]
fn cross([ax, ay, az]: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    let [bx, by, bz] = b;
    [ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx]
}

#[test]
fn array_patterns() {
    let vs: Vec<[f64; 3]> =
        (0..700).map(|i| [i as f64 * 0.5, (i as f64).sin(), 3.0 - i as f64]).collect();
    let got = on_every_backend(|| par![cross(v, [1.0, -2.0, 0.25]) | v <- &vs]);
    let want: Vec<[f64; 3]> = vs.iter().map(|&v| cross(v, [1.0, -2.0, 0.25])).collect();
    assert_eq!(got, want);
    let got = on_every_backend(|| par![{ let [x, _, z] = v; x * z } | v <- &vs]);
    assert_eq!(got, vs.iter().map(|v| v[0] * v[2]).collect::<Vec<_>>());
}

#[test]
fn arrays_that_stay_on_the_device() {
    let arrs = triples(1200);
    let dv = parcomp::DeviceVec::from_slice(&arrs);
    let got = on_every_backend(|| par![a[2] - a[0] | a <- &dv]);
    assert_eq!(got, arrs.iter().map(|a| a[2] - a[0]).collect::<Vec<_>>());
    let made: parcomp::DeviceVec<[f32; 2]> = parcomp::par_device![[a[1], a[0]] | a <- &dv];
    let got = on_every_backend(|| par![b[0] + b[1] | b <- &made]);
    assert_eq!(got, arrs.iter().map(|a| a[1] + a[0]).collect::<Vec<_>>());
    assert_eq!(made.to_vec(), arrs.iter().map(|a| [a[1], a[0]]).collect::<Vec<_>>());
}

#[test]
fn an_index_faults_before_what_follows_it() {
    // `p.pos[k] + 100 / d` with both out of order in one element: Rust checks the index first.
    let ps = particles(200);
    let rows: Vec<(Particle, usize, i32)> = ps
        .iter()
        .enumerate()
        .map(|(i, &p)| (p, if i == 150 { 7 } else { i % 3 }, i as i32 - 150))
        .collect();
    let rust = "index out of bounds: the len is 3 but the index is 7";
    let f = || drop(par![p.pos[k] + { let q = 100 / d; q as f32 } | (p, k, d) <- &rows]);
    assert!(panic_of(Backend::Sequential, &f).0.contains(rust));
    for &backend in devices() {
        let (message, ran) = panic_of(backend, &f);
        assert!(ran.iter().all(|&b| b == backend), "{ran:?}");
        assert!(message.contains(rust), "{message:?} lacks {rust:?}");
    }
}

/// `m[i][k / d] = v`: `i` is checked before `k / d` is evaluated.
#[par_fn]
fn set_cell(m: [[u8; 2]; 2], i: usize, k: usize, d: usize) -> [[u8; 2]; 2] {
    let mut m = m;
    m[i][k / d] = 9;
    m
}

#[test]
fn nested_assignment_checks_each_index_in_order() {
    let m = [[1u8, 2], [3, 4]];
    let rows: Vec<(usize, usize)> =
        (0..100).map(|x| if x == 60 { (5, 0) } else { (x % 2, 1) }).collect();
    let rust = "index out of bounds: the len is 2 but the index is 5";
    let f = || drop(par![set_cell(m, i, 1, d) | (i, d) <- &rows]);
    assert!(panic_of(Backend::Sequential, &f).0.contains(rust));
    for &backend in devices() {
        let (message, ran) = panic_of(backend, &f);
        assert!(ran.iter().all(|&b| b == backend), "{ran:?}");
        assert!(message.contains(rust), "{message:?} lacks {rust:?}");
    }
    let fine: Vec<(usize, usize)> = rows.iter().map(|&(i, d)| (i % 2, d.max(1))).collect();
    let got = on_every_backend(|| par![set_cell(m, i, 1, d) | (i, d) <- &fine]);
    assert_eq!(got[1], [[1, 2], [3, 9]]);
}

#[test]
fn explained() {
    let arrs = triples(3);
    let plan = parcomp::par_explain![a[k] * dot(a, a) | a <- &arrs, k <- 0..a.len()];
    assert!(plan.contains("runs on a device when one is present"), "{plan}");
}

#[test]
fn generators_over_arrays() {
    // `v <- a` over an array read as a row (every row N long), first and later generators.
    let arrs = triples(900);
    let got = on_every_backend(|| par![v * 2.0 + a[1] | a <- &arrs, v <- a, v > 0.0]);
    let want: Vec<f32> = arrs
        .iter()
        .flat_map(|a| a.iter().filter(|&&v| v > 0.0).map(move |&v| v * 2.0 + a[1]))
        .collect();
    assert_eq!(got, want);
    let small = &arrs[..40];
    let got = on_every_backend(|| par![(i, v) | i <- 0..3usize, a <- small, v <- a, a[i] < v]);
    let mut want = Vec::new();
    for i in 0..3usize {
        for a in small {
            for &v in a {
                if a[i] < v {
                    want.push((i, v));
                }
            }
        }
    }
    assert_eq!(got, want);
    // A fixed-size matrix's rows, and a sum per row.
    let m: [[u32; 4]; 3] = [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]];
    let got = on_every_backend(|| par![parcomp::par_sum![v | v <- row] | row <- &m]);
    assert_eq!(got, vec![10, 26, 42]);
    // An index of a row past its length is the array's panic.
    let ks: Vec<usize> = vec![0, 2, 3];
    let rust = "index out of bounds: the len is 3 but the index is 3";
    let f = || drop(par![a[k] + v | a <- &arrs, v <- a, k <- &ks]);
    assert!(panic_of(Backend::Sequential, &f).0.contains(rust));
    for &backend in devices() {
        let (message, ran) = panic_of(backend, &f);
        assert!(ran.iter().all(|&b| b == backend), "{ran:?}");
        assert!(message.contains(rust), "{message:?} lacks {rust:?}");
    }
}

/// A long array: 256 counters, incremented in place.
#[par_fn]
fn byte_counts(a: [u8; 32]) -> [u16; 256] {
    let mut counts = [0u16; 256];
    for b in a {
        counts[b as usize] += 1;
    }
    counts
}

#[test]
fn long_arrays() {
    let rows: Vec<[u8; 32]> =
        (0..300u32).map(|i| std::array::from_fn(|k| (i * 7 + k as u32 * (i % 5)) as u8)).collect();
    let got = on_every_backend(
        || par![byte_counts(a)[(a[0] as usize + k) % 256] | a <- &rows, k <- 0..4usize],
    );
    let want: Vec<u16> = rows
        .iter()
        .flat_map(|a| {
            let counts = byte_counts(*a);
            (0..4usize).map(move |k| counts[(a[0] as usize + k) % 256])
        })
        .collect();
    assert_eq!(got, want);
    assert_eq!(
        on_every_backend(|| par![byte_counts(a) | a <- &rows[..20]]),
        rows[..20].iter().map(|&a| byte_counts(a)).collect::<Vec<_>>()
    );
}

/// Elements of arrays inside structs and tuples assigned in place.
#[par_fn]
fn drift(p: Particle, dt: f32) -> Particle {
    let mut q = p;
    for k in 0..3 {
        q.pos[k] += q.vel[k] * dt;
    }
    q.vel[2] = -q.vel[2];
    q
}

#[par_fn]
fn mark(m: Mixed, i: usize) -> (Mixed, [u8; 2]) {
    let mut out = (m, [0u8; 2]);
    out.0.corners[i].y = 7.5;
    out.0.tags[i].0 += 1;
    out.1[i % 2] = 3;
    out
}

#[test]
fn elements_of_arrays_in_structs_assigned() {
    let ps = particles(1500);
    let got = on_every_backend(|| par![drift(p, 0.25) | p <- &ps]);
    assert_eq!(got, ps.iter().map(|&p| drift(p, 0.25)).collect::<Vec<_>>());
    let m = Mixed {
        corners: [Point { x: 1.0, y: 2.0 }, Point { x: 3.0, y: 4.0 }],
        tags: [(200, 'a'), (254, 'b')],
        maybe: [None, Some(1), Some(-1)],
        grid: [[true, false], [false, true]],
        none: [],
    };
    let got = on_every_backend(|| par![mark(m, i) | i <- 0..2usize]);
    assert_eq!(got, (0..2).map(|i| mark(m, i)).collect::<Vec<_>>());
}
