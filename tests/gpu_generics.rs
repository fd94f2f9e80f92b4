//! Generic `#[par_fn]`s on the device: a function over a type parameter (`fn lerp<F: Real>(a: F,
//! b: F, t: F) -> F`), called with its type arguments written (`lerp::<f32>(..)`, `lerp::<F>(..)`
//! inside another generic function, `lerp::<_>(..)` to let the arguments decide), is compiled
//! once per instance: each call has its own type arguments, solved with the comprehension's
//! types. Every comprehension runs on every backend, on the device too (checked by the trace),
//! and must give the sequential backend's answer.

mod support;

use parcomp::{par, par_fn, par_sum, with_backend, Backend, DeviceValue, Jagged};
use std::ops::{Add, Div, Mul, Sub};
use std::panic::catch_unwind;
use support::{device_faults, off_device, on_devices, on_every_backend};

/// The floats' operations the generic functions use (a user's own trait: the device ignores
/// bounds and compiles the body's operators and numeric methods per instance).
trait Real: Copy + PartialOrd + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> {
    fn sqrt(self) -> Self;
    fn max(self, other: Self) -> Self;
}

impl Real for f32 {
    fn sqrt(self) -> Self {
        f32::sqrt(self)
    }
    fn max(self, other: Self) -> Self {
        f32::max(self, other)
    }
}

impl Real for f64 {
    fn sqrt(self) -> Self {
        f64::sqrt(self)
    }
    fn max(self, other: Self) -> Self {
        f64::max(self, other)
    }
}

/// The integers' operations: wrapping, as the device's and a release build's arithmetic.
trait Int: Copy + Div<Output = Self> {
    fn wrapping_mul(self, other: Self) -> Self;
    fn wrapping_add(self, other: Self) -> Self;
}

macro_rules! int {
    ($($t:ty),*) => {$(
        impl Int for $t {
            fn wrapping_mul(self, other: Self) -> Self {
                <$t>::wrapping_mul(self, other)
            }
            fn wrapping_add(self, other: Self) -> Self {
                <$t>::wrapping_add(self, other)
            }
        }
    )*};
}
int!(u8, i32, i64);

#[par_fn]
fn lerp<F: Real>(a: F, b: F, t: F) -> F {
    a + (b - a) * t
}

/// Integer arithmetic that wraps (`u8` overflows for most inputs).
#[par_fn]
fn mix<T>(a: T, b: T) -> T
where
    T: Int,
{
    a.wrapping_mul(b).wrapping_add(a)
}

#[par_fn]
fn square<F: Real>(x: F) -> F {
    x * x
}

/// A generic function calling generic functions, with its own type parameter as theirs.
#[par_fn]
fn hypot<F: Real>(x: F, y: F) -> F {
    let s: F = square::<F>(x) + square::<F>(y);
    s.sqrt().max(lerp::<F>(x, y, x))
}

/// A non-generic parameter beside the type parameter, and a non-generic `#[par_fn]` called.
#[par_fn]
fn gated<F: Real>(x: F, k: i32) -> F {
    if odd(k) {
        square::<F>(x)
    } else {
        x
    }
}

#[par_fn]
fn odd(k: i32) -> bool {
    k % 2 != 0
}

#[derive(Clone, Copy, Debug, PartialEq, DeviceValue)]
struct Point {
    x: f32,
    y: f32,
}

#[par_fn]
impl Point {
    fn norm(&self) -> f32 {
        self.x * self.x + self.y * self.y
    }
}

/// A struct parameter and a method called on it, beside the type parameter.
#[par_fn]
fn beyond<F: Copy>(p: Point, near: F, far: F) -> F {
    if p.norm() > 50.0 {
        far
    } else {
        near
    }
}

/// Two type parameters; the result is the second.
#[par_fn]
fn pick<A: Copy + PartialOrd, B: Copy>(a: A, limit: A, yes: B, no: B) -> B {
    if a < limit {
        yes
    } else {
        no
    }
}

#[par_fn]
fn double<T: Copy + Add<Output = T>>(x: T) -> T {
    x + x
}

/// Division: a zero divisor faults as in Rust, in every instance.
#[par_fn]
fn ratio<T: Int>(a: T, b: T) -> T {
    a / b
}

/// Generic, but not marked `#[par_fn]`.
fn unmarked<T: Copy + Add<Output = T>>(x: T) -> T {
    x + x
}

mod shapes {
    use parcomp::par_fn;
    use std::ops::Mul;

    #[par_fn]
    pub fn area<F: Copy + Mul<Output = F>>(w: F, h: F) -> F {
        w * h
    }
}

fn floats(n: usize) -> Vec<(f32, f32)> {
    (0..n).map(|i| ((i % 17) as f32 * 0.25, (i % 5) as f32 - 1.5)).collect()
}

#[test]
fn one_function_at_several_types_in_one_comprehension() {
    let data = floats(500);
    let got = on_every_backend(|| {
        par![
            (
                lerp::<f32>(a, b, 0.25),
                lerp::<f64>(a as f64, b as f64, 0.75),
                mix::<u8>(i as u8, 77),
                mix::<i64>(i as i64 - 250, -3),
                mix::<i32>(i as i32, 1 << 24),
            )
            | i <- 0..data.len(), let (a, b) = data[i]
        ]
    });
    let want: Vec<_> = data
        .iter()
        .enumerate()
        .map(|(i, &(a, b))| {
            (
                lerp(a, b, 0.25f32),
                lerp(a as f64, b as f64, 0.75),
                mix(i as u8, 77u8),
                mix(i as i64 - 250, -3i64),
                mix(i as i32, 1i32 << 24),
            )
        })
        .collect();
    assert_eq!(got, want);
    // The u8 instance wrapped (its exact value does not fit in a u8), and the i32 one too.
    assert!(want.iter().enumerate().any(|(i, w)| w.2 as usize != (i % 256) * 78));
    assert!(want.iter().enumerate().any(|(i, w)| w.4 as i64 != i as i64 * ((1 << 24) + 1)));
}

#[test]
fn type_arguments_decided_by_the_arguments() {
    let data = floats(300);
    // `_`: the instance is the arguments' (f32 here; an f64 literal would not fit).
    let got = on_every_backend(|| par![lerp::<_>(a, b, 0.5) | (a, b) <- &data]);
    let want: Vec<f32> = data.iter().map(|&(a, b)| lerp(a, b, 0.5)).collect();
    assert_eq!(got, want);
    // A literal argument of a written type argument is of that type (f32, not f64), also
    // where nothing else decides it (the result is cast).
    let got = on_every_backend(|| par![square::<f32>(0.1) + a | (a, _) <- &data]);
    let want: Vec<f32> = data.iter().map(|&(a, _)| square(0.1f32) + a).collect();
    assert_eq!(got, want);
    let got = on_every_backend(|| par![square::<f32>(0.1) as f64 + a as f64 | (a, _) <- &data]);
    let want: Vec<f64> = data.iter().map(|&(a, _)| square(0.1f32) as f64 + a as f64).collect();
    assert_eq!(got, want);
    assert_ne!(square(0.1f32) as f64, square(0.1f64), "the instances differ");
    // Two type parameters, at two instances each.
    let got = on_every_backend(|| {
        par![
            (pick::<f32, i64>(a, 1.0, 7, -7), pick::<i32, f64>(i, 100, 0.5, 2.5))
            | i <- 0..data.len() as i32, let (a, _) = data[i as usize]
        ]
    });
    let want: Vec<(i64, f64)> = data
        .iter()
        .enumerate()
        .map(|(i, &(a, _))| (pick(a, 1.0, 7, -7), pick(i as i32, 100, 0.5, 2.5)))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn generics_calling_generics_non_generics_and_methods() {
    let data = floats(400);
    let got = on_every_backend(
        || par![(hypot::<f32>(a, b), hypot::<f64>(b as f64, a as f64)) | (a, b) <- &data],
    );
    let want: Vec<(f32, f64)> =
        data.iter().map(|&(a, b)| (hypot(a, b), hypot(b as f64, a as f64))).collect();
    assert_eq!(got, want);
    let got = on_every_backend(
        || par![(gated::<f64>(a as f64, k), gated::<f32>(b, k + 1)) | (a, b) <- &data, k <- 0..3],
    );
    let want: Vec<(f64, f32)> = data
        .iter()
        .flat_map(|&(a, b)| (0..3).map(move |k| (gated(a as f64, k), gated(b, k + 1))))
        .collect();
    assert_eq!(got, want);
    let points: Vec<Point> =
        (0..300).map(|i| Point { x: (i % 13) as f32, y: (i % 7) as f32 - 3.0 }).collect();
    let got = on_every_backend(
        || par![(beyond::<f64>(p, 1.0, 2.0), beyond::<i64>(p, -1, 1)) | p <- &points],
    );
    let want: Vec<(f64, i64)> =
        points.iter().map(|&p| (beyond(p, 1.0f64, 2.0), beyond(p, -1i64, 1))).collect();
    assert_eq!(got, want);
    assert!(want.iter().any(|w| w.1 == 1) && want.iter().any(|w| w.1 == -1));
}

#[test]
fn generics_named_by_path_and_by_a_renamed_import() {
    use shapes::area as surface;
    let data = floats(100);
    let got = on_every_backend(
        || par![(shapes::area::<f32>(a, b), surface::<f64>(a as f64, 3.0)) | (a, b) <- &data],
    );
    let want: Vec<(f32, f64)> = data.iter().map(|&(a, b)| (a * b, a as f64 * 3.0)).collect();
    assert_eq!(got, want);
}

#[test]
fn nested_reductions_over_a_generic() {
    let rows: Vec<Vec<i64>> = (0..200).map(|i| (0..i % 9).map(|j| j * 3 - i).collect()).collect();
    let m = Jagged::from(rows.clone());
    let got =
        on_every_backend(|| par![par_sum![mix::<i64>(v, v) | v <- m.row(i)] | i <- 0..m.len()]);
    let want: Vec<i64> = rows.iter().map(|r| r.iter().map(|&v| mix(v, v)).sum()).collect();
    assert_eq!(got, want);
    // A generator mapped by an instance.
    let got = on_every_backend(|| par![x + i | i <- 0..50i64, x <- (0..i).map(double::<i64>)]);
    let want: Vec<i64> = (0..50i64).flat_map(|i| (0..i).map(move |x| x + x + i)).collect();
    assert_eq!(got, want);
    let total = on_every_backend(|| par_sum![square::<f64>(v as f64) | v <- m.row(7)]);
    assert_eq!(total, rows[7].iter().map(|&v| square(v as f64)).sum::<f64>());
}

#[test]
fn a_fault_inside_an_instance_is_rusts_panic() {
    let values: Vec<i32> = (0..200).collect();
    let divisors = [3, 1, 0, 2];
    for (_, got) in on_devices(|| par![ratio::<i32>(v, 7) | v <- &values]) {
        assert_eq!(got, values.iter().map(|v| v / 7).collect::<Vec<_>>());
    }
    let run = || drop(par![ratio::<i32>(v, d) | v <- &values, d <- &divisors]);
    for message in device_faults(run) {
        assert!(message.contains("attempt to divide by zero"), "{message}");
        assert!(message.contains("ratio"), "{message} does not name the function");
    }
    let on_cpu = catch_unwind(|| with_backend(Backend::Sequential, run));
    let payload = on_cpu.expect_err("the CPU panics too");
    let message = payload
        .downcast::<&str>()
        .map(|s| s.to_string())
        .unwrap_or_else(|p| p.downcast::<String>().map(|s| *s).unwrap_or_default());
    assert!(message.contains("attempt to divide by zero"), "{message}");
}

#[test]
fn a_generic_function_not_marked_stays_on_the_cpu() {
    let values: Vec<u32> = (0..100).collect();
    let want: Vec<u32> = values.iter().map(|&v| v * 2).collect();
    let why = "which is not marked `#[par_fn]`";
    if let Some(got) = off_device(|| par![unmarked::<u32>(v) | v <- &values], why) {
        assert_eq!(got, want);
    }
    assert_eq!(with_backend(Backend::Sequential, || par![unmarked::<u32>(v) | v <- &values]), want);
}
