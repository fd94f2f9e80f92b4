//! Methods on the device: `#[par_fn]` on an inherent `impl` block makes its methods (`self`,
//! `mut self`, `&self`), associated functions and associated constants callable in device code,
//! found at run time by the receiver's solved type. Every comprehension runs on every backend,
//! on the device too (checked by the trace), and must give the sequential backend's answer.

mod support;

use parcomp::{par, par_explain, par_fn, par_sum, trace, with_backend, Backend, DeviceValue};
use std::panic::catch_unwind;
use support::{
    device_faults, devices, off_device, on_devices, on_every_backend, on_every_cpu_backend,
};

#[derive(Clone, Copy, Debug, PartialEq, DeviceValue)]
struct Point {
    x: f32,
    y: f32,
}

#[par_fn]
impl Point {
    /// An associated constant of the struct's own type.
    const ORIGIN: Point = Point { x: 0.0, y: 0.0 };
    /// A numeric associated constant.
    const SCALE: f32 = 2.0;

    /// An item compiled out is not registered either.
    #[cfg(any())]
    fn compiled_out(self) -> f32 {
        self.x
    }

    /// An associated function, called as `Point::new(x, y)` and `Self::new(x, y)`.
    fn new(x: f32, y: f32) -> Point {
        Point { x, y }
    }

    /// `self` by value, another struct as a parameter.
    fn dist(self, q: Point) -> f32 {
        self.minus(q).norm()
    }

    /// `&self`, returning a struct built with `Self::new`.
    fn minus(&self, q: Point) -> Point {
        Self::new(self.x - q.x, self.y - q.y)
    }

    /// `&self`, calling a free `#[par_fn]`.
    fn norm(&self) -> f32 {
        square(self.x) + square(self.y)
    }

    /// `mut self`, reading the associated constants through `Self` and the type's name.
    fn scaled(mut self) -> Self {
        self = Self::new(self.x * Self::SCALE, self.y * Point::SCALE);
        if self.x == Self::ORIGIN.x {
            self = Point { y: 0.0, ..self };
        }
        self
    }
}

#[par_fn]
fn square(v: f32) -> f32 {
    v * v
}

/// A method named like a method of the numbers (`len`, `abs`, `min`).
#[derive(Clone, Copy, Debug, PartialEq, DeviceValue)]
struct Line {
    from: Point,
    to: Point,
}

#[par_fn]
impl Line {
    fn between(from: Point, to: Point) -> Line {
        Line { from, to }
    }

    fn len(&self) -> f32 {
        self.from.dist(self.to)
    }

    fn abs(self) -> Line {
        Line { from: self.to, to: self.from }
    }

    /// Nested structs: a method of a field's type on a field.
    fn mid(&self) -> Point {
        Point::new((self.from.x + self.to.x) / 2.0, (self.from.y + self.to.y) / 2.0)
    }
}

/// Integer methods: Rust's semantics (wrapping arithmetic, division by zero's panic).
#[derive(Clone, Copy, Debug, PartialEq, DeviceValue)]
struct Counter {
    count: u8,
    step: i32,
}

#[par_fn]
impl Counter {
    const LIMIT: i32 = 1000;

    /// `Option::unwrap` of `None` inside a method: Rust's panic.
    fn first(self, of: Option<u8>) -> u8 {
        of.unwrap() + self.count
    }

    fn bumped(self) -> u8 {
        self.count + 200
    }

    fn per(&self, d: i32) -> i32 {
        Counter::LIMIT / d + self.step
    }
}

fn points(n: usize) -> Vec<Point> {
    (0..n)
        .map(|i| {
            let t = i as f32;
            Point { x: (t * 0.37).sin() * 10.0, y: (t * 0.11).cos() * 5.0 - 1.0 }
        })
        .collect()
}

#[test]
fn methods_by_value_and_by_reference() {
    let points = points(3000);
    let q = Point { x: 1.5, y: -2.0 };
    let got = on_every_backend(|| par![p.dist(q) | p <- &points]);
    let want: Vec<f32> = points.iter().map(|p| p.dist(q)).collect();
    assert_eq!(got, want);
    let got = on_every_backend(|| par![(p.norm(), p.minus(q)) | p <- &points, p.norm() < 20.0]);
    let want: Vec<_> =
        points.iter().filter(|p| p.norm() < 20.0).map(|p| (p.norm(), p.minus(q))).collect();
    assert_eq!(got, want);
    assert!(!want.is_empty());
    // `mut self`, and a method of a method's result.
    let got = on_every_backend(|| par![p.scaled().norm() | p <- &points]);
    let want: Vec<f32> = points.iter().map(|p| p.scaled().norm()).collect();
    assert_eq!(got, want);
    // A method in a `let` and in a filter.
    let got = on_every_backend(|| par![d | p <- &points, let d = p.dist(q), d > 10.0]);
    let want: Vec<f32> = points.iter().map(|p| p.dist(q)).filter(|&d| d > 10.0).collect();
    assert_eq!(got, want);
}

#[test]
fn associated_functions_and_constants() {
    let got = on_every_backend(|| par![Point::new(i as f32, 2.0).norm() | i <- 0..1000]);
    let want: Vec<f32> = (0..1000).map(|i| Point::new(i as f32, 2.0).norm()).collect();
    assert_eq!(got, want);
    // A method called by its path, as a function of the receiver.
    let points = points(500);
    let got = on_every_backend(|| par![Point::dist(p, Point::ORIGIN) | p <- &points]);
    let want: Vec<f32> = points.iter().map(|&p| Point::dist(p, Point::ORIGIN)).collect();
    assert_eq!(got, want);
    // Constants in the head: a struct and a number (read on the host, as any path).
    let got = on_every_backend(|| par![Point::ORIGIN.minus(p).x * Point::SCALE | p <- &points]);
    let want: Vec<f32> = points.iter().map(|&p| Point::ORIGIN.minus(p).x * 2.0).collect();
    assert_eq!(got, want);
}

#[test]
fn methods_named_like_the_numbers_methods() {
    let points = points(400);
    let lines: Vec<Line> = points.windows(2).map(|w| Line { from: w[0], to: w[1] }).collect();
    let got = on_every_backend(|| par![l.len() | l <- &lines]);
    let want: Vec<f32> = lines.iter().map(Line::len).collect();
    assert_eq!(got, want);
    // The numbers' own `abs` still applies to a number, beside `Line::abs`.
    let got = on_every_backend(|| par![(l.abs().from.x.abs(), l.mid()) | l <- &lines]);
    let want: Vec<_> = lines.iter().map(|l| (l.abs().from.x.abs(), l.mid())).collect();
    assert_eq!(got, want);
}

#[test]
fn integer_methods_wrap_and_fault_as_rust_does() {
    let counters: Vec<Counter> =
        (0..300).map(|i: i32| Counter { count: i as u8, step: i * 7 - 1000 }).collect();
    // u8 + 200 wraps in a release build; the device wraps too (a debug build would panic).
    for (_, got) in on_devices(|| par![c.bumped() | c <- &counters]) {
        let want: Vec<u8> = counters.iter().map(|c| c.count.wrapping_add(200)).collect();
        assert_eq!(got, want);
    }
    let got = on_every_backend(|| par![c.per(d) | c <- &counters, d <- 1..4]);
    let want: Vec<i32> = counters.iter().flat_map(|c| (1..4).map(move |d| c.per(d))).collect();
    assert_eq!(got, want);
    // A division by zero inside a method is Rust's panic, raised on the host.
    let divisors = [3, 1, 0, 2];
    let run = || drop(par![c.per(d) | c <- &counters, d <- &divisors]);
    for message in device_faults(run) {
        assert!(message.contains("attempt to divide by zero"), "{message}");
        assert!(message.contains("Counter::per"), "{message} does not name the method");
    }
    let on_cpu = catch_unwind(|| with_backend(Backend::Sequential, run));
    assert!(on_cpu.is_err());
    // So is `unwrap` of `None`.
    let options = [Some(1u8), None];
    let run = || drop(par![c.first(o) | c <- &counters[..2], o <- &options]);
    for message in device_faults(run) {
        assert!(message.contains("called `Option::unwrap()` on a `None` value"), "{message}");
    }
    assert!(catch_unwind(|| with_backend(Backend::Sequential, run)).is_err());
}

#[test]
fn reductions_over_methods() {
    let points = points(2000);
    let got = on_every_backend(|| par_sum![p.scaled().x as f64 | p <- &points]);
    let want: f64 = points.iter().map(|p| p.scaled().x as f64).sum();
    assert_eq!(got, want);
}

/// A struct whose `impl` is not `#[par_fn]`.
#[derive(Clone, Copy, Debug, PartialEq, DeviceValue)]
struct Plain {
    v: i32,
}

impl Plain {
    fn twice(self) -> i32 {
        self.v * 2
    }
}

#[test]
fn a_method_the_device_does_not_have_stays_on_the_cpu() {
    let plain: Vec<Plain> = (0..100).map(|v| Plain { v }).collect();
    let want: Vec<i32> = (0..100).map(|v| v * 2).collect();
    assert_eq!(on_every_cpu_backend(|| par![p.twice() | p <- &plain]), want);
    let why = "calls the method `.twice()`, which the device does not have";
    if let Some(got) = off_device(|| par![p.twice() | p <- &plain], why) {
        assert_eq!(got, want);
    }
    // The reason names the type and what to do.
    let (_, runs) = trace::record(|| {
        for &backend in devices() {
            with_backend(backend, || par![p.twice() | p <- &plain]);
        }
    });
    for run in &runs {
        let reason = run.reason.as_deref().unwrap_or_default();
        assert!(reason.contains("Plain` has no method `twice` in a `#[par_fn] impl`"), "{run}");
    }
    // A method of a number that the device does not have.
    let why = "calls the method `.twice()`, which the device does not have for a `i32`";
    off_device(|| par![p.v.twice() | p <- &plain], why);
    // A method named like a number's method, which the struct does not have.
    let why = "calls the method `.abs()`, which the device does not have: `gpu_methods::Plain` \
               has no method `abs` in a `#[par_fn] impl` block";
    off_device(|| par![p.abs() | p <- &plain], why);
    // A `#[par_fn]` calling a method the device does not have: the reason names it.
    let why = "`gpu_methods::Plain` has no method `twice` in a `#[par_fn] impl` block (in \
               `#[par_fn] gpu_methods::twice_of`)";
    off_device(|| par![twice_of(p) | p <- &plain], why);
    // Under `@gpu` a method is looked for when the comprehension runs: one that is missing
    // keeps it on the CPU, with the reason in the trace.
    let why = "`gpu_methods::Plain` has no method `twice`";
    if let Some(got) = off_device(|| par![@gpu p.twice() | p <- &plain], why) {
        assert_eq!(got, want);
    }
    // `par_explain!` cannot know the receiver's type: it says the device runs it when the
    // method is found.
    let plan = par_explain![p.dist(p) | p <- &plain];
    assert!(plan.contains("runs on a device when one is present"), "{plan}");
    assert!(
        plan.contains(
            "once `.dist()` is found in the `#[par_fn] impl` block of its receiver's type"
        ),
        "{plan}"
    );
    // A numeric method's name is not listed: it serves a number too.
    let plan = par_explain![p.v.abs() | p <- &plain];
    assert!(plan.ends_with("the work is large enough\n"), "{plan}");
}

#[par_fn]
fn twice_of(p: Plain) -> i32 {
    p.twice()
}

impl Plain {
    fn abs(self) -> Plain {
        Plain { v: self.v.abs() }
    }
}

trait Twice {
    fn twice(self) -> i32;
}

impl Twice for i32 {
    fn twice(self) -> i32 {
        self * 2
    }
}

#[test]
fn methods_inside_par_fns() {
    // A free `#[par_fn]` calling methods and reading constants.
    let points = points(700);
    let got = on_every_backend(|| par![spread(p, i) | p <- &points, i <- 0..3]);
    let want: Vec<f32> = points.iter().flat_map(|&p| (0..3).map(move |i| spread(p, i))).collect();
    assert_eq!(got, want);
}

#[par_fn]
fn spread(p: Point, i: i32) -> f32 {
    let l = Line::between(p, Point::new(i as f32, Point::SCALE));
    l.len() + l.mid().dist(Point::ORIGIN)
}

/// A generic derived struct, with a `#[par_fn] impl` for one of its instances.
#[derive(Clone, Copy, Debug, PartialEq, DeviceValue)]
struct Pair<T> {
    a: T,
    b: T,
}

#[par_fn]
impl Pair<i64> {
    const ZERO: Pair<i64> = Pair { a: 0, b: 0 };

    fn sum(self) -> i64 {
        self.a + self.b
    }

    fn swapped(&self) -> Self {
        Pair { a: self.b, b: self.a }
    }

    /// Named like the numbers' `min`, typed otherwise (a struct in, a number out).
    fn min(self, other: Pair<i64>) -> i64 {
        self.a.min(self.b).min(other.a.min(other.b))
    }

    fn is_zero(self) -> bool {
        self.a == Self::ZERO.a && self.b == Pair::<i64>::ZERO.b
    }
}

#[test]
fn an_impl_of_a_generic_structs_instance() {
    let pairs: Vec<Pair<i64>> =
        (-50..50).map(|i| Pair { a: i * 3, b: i64::MAX - 50 - i }).collect();
    let got = on_every_backend(|| par![(p.swapped(), p.is_zero()) | p <- &pairs]);
    let want: Vec<_> = pairs.iter().map(|p| (p.swapped(), p.is_zero())).collect();
    assert_eq!(got, want);
    let got = on_every_backend(|| par![(p.min(q), p.a.min(q.b)) | p <- &pairs, q <- &pairs[..3]]);
    let want: Vec<_> = pairs
        .iter()
        .flat_map(|&p| pairs[..3].iter().map(move |&q| (p.min(q), p.a.min(q.b))))
        .collect();
    assert_eq!(got, want);
    // `i64::MAX - i + 3 i` wraps on the device as in a release build.
    for (_, got) in on_devices(|| par![p.sum() | p <- &pairs]) {
        let want: Vec<i64> = pairs.iter().map(|p| p.a.wrapping_add(p.b)).collect();
        assert_eq!(got, want);
    }
}

/// `.len()` and `.is_empty()` of an array and of a struct whose impl has them, side by side:
/// the runtime picks the array's length or the method by the receiver's type.
#[derive(Clone, Copy, Debug, PartialEq, DeviceValue)]
struct Bag {
    items: [u8; 4],
    used: u8,
}

#[par_fn]
impl Bag {
    fn len(&self) -> usize {
        self.used as usize
    }

    fn is_empty(&self) -> bool {
        self.used == 0
    }
}

#[test]
fn len_of_arrays_and_of_structs_with_a_len() {
    let bags: Vec<Bag> =
        (0..500u32).map(|i| Bag { items: [i as u8, 1, 2, 3], used: (i % 5) as u8 }).collect();
    let got = on_every_backend(
        || par![(b.len(), b.is_empty(), b.items.len(), b.items.is_empty()) | b <- &bags],
    );
    let want: Vec<_> =
        bags.iter().map(|b| (b.len(), b.is_empty(), b.items.len(), b.items.is_empty())).collect();
    assert_eq!(got, want);
}
