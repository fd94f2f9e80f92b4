//! Structs with `#[derive(DeviceValue)]` on the device: stored as one column per leaf field,
//! their fields read by name (`p.x`, `p.a.b`), built in the head (`Point { x, y }`) and read
//! back as the user's structs, in order. Every comprehension runs on every backend, on the
//! device too (checked by the trace), and must give the sequential backend's answer.

mod support;

use parcomp::{par, par_count, par_explain, par_fn, par_sum, DeviceValue};
use support::{off_device, on_devices, on_every_backend, on_every_cpu_backend};

#[derive(Clone, Copy, Debug, PartialEq, DeviceValue)]
struct Point {
    x: f64,
    y: f64,
}

/// Every kind of leaf: integers of each width, a float, a `bool`, a `char`, a tuple and an
/// `Option`, and a field named like a C keyword.
#[derive(Clone, Copy, Debug, PartialEq, DeviceValue)]
struct Row {
    id: u32,
    small: i8,
    wide: u64,
    ratio: f32,
    flag: bool,
    letter: char,
    pair: (i16, u8),
    maybe: Option<i32>,
    half: u16,
}

/// A struct of structs.
#[derive(Clone, Copy, Debug, PartialEq, DeviceValue)]
struct Segment {
    from: Point,
    to: Point,
    weight: Option<u8>,
}

fn points(n: usize) -> Vec<Point> {
    (0..n)
        .map(|i| {
            let t = i as f64;
            Point { x: (t * 0.37).sin() * 10.0, y: (t * 0.11).cos() * 5.0 - 1.0 }
        })
        .collect()
}

fn rows(n: usize) -> Vec<Row> {
    (0..n)
        .map(|i| Row {
            id: (i as u32).wrapping_mul(2_654_435_761),
            small: (i as i8).wrapping_mul(37),
            wide: u64::MAX - i as u64 * 1_000_003,
            ratio: i as f32 * 1.5 - 300.0,
            flag: i % 3 == 0,
            letter: char::from(b'a' + (i % 26) as u8),
            pair: ((i as i16).wrapping_mul(-97), (i * 13) as u8),
            maybe: (i % 4 != 0).then_some(i as i32 * -7),
            half: (i * 31) as u16,
        })
        .collect()
}

#[test]
fn fields_of_the_elements() {
    let points = points(5000);
    let got = on_every_backend(|| par![p.x * p.y | p <- &points, p.x > 0.0]);
    let want: Vec<f64> = points.iter().filter(|p| p.x > 0.0).map(|p| p.x * p.y).collect();
    assert_eq!(got, want);
    assert!(!want.is_empty());
    // Fields as a tuple, and a comparison between two fields.
    let got = on_every_backend(|| par![(p.y, p.x) | p <- &points, p.y < p.x]);
    let want: Vec<_> = points.iter().filter(|p| p.y < p.x).map(|p| (p.y, p.x)).collect();
    assert_eq!(got, want);
    // A reduction over a field.
    let got = on_every_backend(|| par_count![p | p <- &points, p.x * p.x + p.y * p.y < 25.0]);
    assert_eq!(got, points.iter().filter(|p| p.x * p.x + p.y * p.y < 25.0).count());
}

#[test]
fn every_kind_of_field() {
    let rows = rows(3000);
    // Integer arithmetic in fields wraps, as in Rust; casts from floats saturate.
    let got = on_every_backend(|| {
        par![((r.id.wrapping_mul(3).wrapping_add(1), r.small.wrapping_mul(3),
               r.wide.wrapping_add(r.id as u64), r.ratio as u8, r.ratio as i64, r.flag),
              (r.letter as u32, r.pair.0.wrapping_mul(300), r.pair.1, r.maybe.unwrap_or(-1),
               r.half)) | r <- &rows]
    });
    let want: Vec<_> = rows
        .iter()
        .map(|r| {
            (
                (
                    r.id.wrapping_mul(3).wrapping_add(1),
                    r.small.wrapping_mul(3),
                    r.wide.wrapping_add(r.id as u64),
                    r.ratio as u8,
                    r.ratio as i64,
                    r.flag,
                ),
                (
                    r.letter as u32,
                    r.pair.0.wrapping_mul(300),
                    r.pair.1,
                    r.maybe.unwrap_or(-1),
                    r.half,
                ),
            )
        })
        .collect();
    assert_eq!(got, want);
    // Plain `+` and `*` wrap on the device as in a release build (the CPU backends of this
    // debug build would panic on the overflow).
    let got = support::on_device(
        || par![(r.id * 3 + 1, r.small * 3, r.wide + r.id as u64, r.pair.0 * 300) | r <- &rows],
    );
    if let Some(got) = got {
        let want: Vec<_> = want.iter().map(|w| (w.0 .0, w.0 .1, w.0 .2, w.1 .1)).collect();
        assert_eq!(got, want);
    }
    // The whole element, read back as it went.
    let got = on_every_backend(|| par![r | r <- &rows, r.flag || r.letter == 'q']);
    let want: Vec<Row> = rows.iter().filter(|r| r.flag || r.letter == 'q').copied().collect();
    assert_eq!(got, want);
}

#[test]
fn nested_structs() {
    let points = points(2001);
    let segments: Vec<Segment> = points
        .windows(2)
        .enumerate()
        .map(|(i, w)| Segment { from: w[0], to: w[1], weight: (i % 5 != 0).then_some(i as u8) })
        .collect();
    let got = on_every_backend(
        || par![(s.to.x - s.from.x, s.weight.is_some()) | s <- &segments, s.from.y < s.to.y],
    );
    let want: Vec<_> = segments
        .iter()
        .filter(|s| s.from.y < s.to.y)
        .map(|s| (s.to.x - s.from.x, s.weight.is_some()))
        .collect();
    assert_eq!(got, want);
    // A struct field as a value.
    let got = on_every_backend(|| par![s.to | s <- &segments, s.weight.unwrap_or(0) == 3]);
    let want: Vec<Point> = segments.iter().filter(|s| s.weight == Some(3)).map(|s| s.to).collect();
    assert_eq!(got, want);
}

#[test]
fn empty_and_nested_generators() {
    let none: Vec<Point> = Vec::new();
    assert_eq!(on_every_backend(|| par![p.x + p.y | p <- &none]), Vec::<f64>::new());
    let points = points(40);
    // A struct generator inside another one.
    let got = on_every_backend(|| par![(i, p.x) | i <- 0..3usize, p <- &points, p.y > i as f64]);
    let mut want = Vec::new();
    for i in 0..3usize {
        for p in &points {
            if p.y > i as f64 {
                want.push((i, p.x));
            }
        }
    }
    assert_eq!(got, want);
    let got = on_every_backend(|| par_sum![p.x | p <- &points]);
    assert!((got - points.iter().map(|p| p.x).sum::<f64>()).abs() < 1e-9);
}

#[test]
fn explained() {
    let points = points(3);
    let plan = par_explain![p.x * p.y | p <- &points, p.x > 0.0];
    assert!(plan.contains("runs on a device when one is present"), "{plan}");
}

/// A struct without the derive keeps the comprehension on the CPU, and the trace names it.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Plain {
    x: f64,
}

#[test]
fn structs_without_the_derive_stay_on_the_cpu() {
    let plain: Vec<Plain> = (0..10).map(|i| Plain { x: i as f64 }).collect();
    let why = "(`&Vec<Plain>`) are not device values (device values are \
               numbers, `bool`, `char`, tuples, `Option`s and arrays `[T; N]` of them, and \
               structs and fieldless enums with `#[derive(parcomp::DeviceValue)]`)";
    let got = off_device(|| par![p.x * 2.0 | p <- &plain], why);
    if let Some(got) = got {
        assert_eq!(got, (0..10).map(|i| i as f64 * 2.0).collect::<Vec<_>>());
    }
    // A captured struct without the derive: its fields are read on the host, and the
    // comprehension runs on the device.
    let origin = Plain { x: 2.5 };
    let got = on_every_backend(|| par![i as f64 - origin.x | i <- 0..10]);
    assert_eq!(got, (0..10).map(|i| i as f64 - 2.5).collect::<Vec<_>>());
}

#[test]
fn struct_results() {
    let points = points(4000);
    // A struct literal in the head comes back as the user's struct, in order.
    let got = on_every_backend(|| par![Point { x: p.y, y: p.x } | p <- &points]);
    let want: Vec<Point> = points.iter().map(|p| Point { x: p.y, y: p.x }).collect();
    assert_eq!(got, want);
    // Fields given in another order than declared, shorthand fields, a filter.
    let got = on_every_backend(
        || par![Point { y: x * 2.0, x } | p <- &points, let x = p.x - 1.0, p.y > 0.0],
    );
    let want: Vec<Point> = points
        .iter()
        .filter(|p| p.y > 0.0)
        .map(|p| Point { y: (p.x - 1.0) * 2.0, x: p.x - 1.0 })
        .collect();
    assert_eq!(got, want);
    // Functional update, and nested structs built in the head.
    let got = on_every_backend(|| par![Point { y: 0.5, ..p } | p <- &points]);
    assert_eq!(got, points.iter().map(|&p| Point { y: 0.5, ..p }).collect::<Vec<_>>());
    let got = on_every_backend(|| {
        par![Segment { from: p, to: Point { x: p.x + 1.0, y: p.y },
                       weight: if p.y > 0.0 { Some(7) } else { None } } | p <- &points, p.x < 0.0]
    });
    let want: Vec<Segment> = points
        .iter()
        .filter(|p| p.x < 0.0)
        .map(|&p| Segment {
            from: p,
            to: Point { x: p.x + 1.0, y: p.y },
            weight: if p.y > 0.0 { Some(7) } else { None },
        })
        .collect();
    assert_eq!(got, want);
    // Integer fields computed with wrapping arithmetic, floats cast as Rust casts them.
    let rows = rows(1000);
    let got = on_every_backend(|| {
        par![Row { id: r.id.wrapping_add(u32::MAX), small: r.ratio as i8, ratio: r.wide as f32,
                   maybe: Some(r.small as i32), ..r } | r <- &rows]
    });
    let want: Vec<Row> = rows
        .iter()
        .map(|&r| Row {
            id: r.id.wrapping_add(u32::MAX),
            small: r.ratio as i8,
            ratio: r.wide as f32,
            maybe: Some(r.small as i32),
            ..r
        })
        .collect();
    assert_eq!(got, want);
    let none: Vec<Point> = Vec::new();
    assert_eq!(on_every_backend(|| par![Point { x: p.y, y: p.x } | p <- &none]), []);
    // `None` on its own, typed by where it goes.
    let got = on_every_backend(|| par![(p.x, None) | p <- &points, p.y > 4.0]);
    let want: Vec<(f64, Option<u16>)> =
        points.iter().filter(|p| p.y > 4.0).map(|p| (p.x, None)).collect();
    assert_eq!(got, want);
}

#[test]
fn captured_structs() {
    let points = points(3000);
    let origin = Point { x: 1.5, y: -0.5 };
    // A field of a captured struct is read on the host.
    let got = on_every_backend(|| par![(p.x - origin.x, p.y - origin.y) | p <- &points]);
    let want: Vec<_> = points.iter().map(|p| (p.x - origin.x, p.y - origin.y)).collect();
    assert_eq!(got, want);
    // A captured struct as a value.
    let got = on_every_backend(|| par![if p.x > 0.0 { p } else { origin } | p <- &points]);
    let want: Vec<Point> = points.iter().map(|&p| if p.x > 0.0 { p } else { origin }).collect();
    assert_eq!(got, want);
    // A struct-valued `let`, read by field.
    let got = on_every_backend(
        || par![q.x + q.y | p <- &points, let q = if p.y > 0.0 { origin } else { p }],
    );
    let want: Vec<f64> =
        points.iter().map(|&p| if p.y > 0.0 { origin } else { p }).map(|q| q.x + q.y).collect();
    assert_eq!(got, want);
}

/// One European option (as `gpu_report`'s Black-Scholes workload has it).
#[derive(Clone, Copy, Debug, DeviceValue)]
struct EuropeanOption {
    spot: f32,
    strike: f32,
    years: f32,
    rate: f32,
    volatility: f32,
}

/// The cumulative normal distribution (Abramowitz & Stegun 26.2.17).
#[par_fn]
fn cnd(d: f32) -> f32 {
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

/// The price of the call: a `#[par_fn]` taking the struct by value.
#[par_fn]
fn black_scholes(o: EuropeanOption) -> f32 {
    let sqrt_t = o.years.sqrt();
    let d1 = ((o.spot / o.strike).ln() + (o.rate + 0.5 * o.volatility * o.volatility) * o.years)
        / (o.volatility * sqrt_t);
    let d2 = d1 - o.volatility * sqrt_t;
    o.spot * cnd(d1) - o.strike * (-o.rate * o.years).exp() * cnd(d2)
}

/// A struct made by a `#[par_fn]`.
#[par_fn]
fn mirrored(p: Point) -> Point {
    Point { x: -p.x, ..p }
}

#[test]
fn structs_in_par_fns() {
    let options: Vec<EuropeanOption> = (0..20_000)
        .map(|i| {
            let t = i as f32;
            EuropeanOption {
                spot: 5.0 + (t * 0.37).sin().abs() * 25.0,
                strike: 1.0 + (t * 0.11).cos().abs() * 99.0,
                years: 0.25 + (t * 0.05).sin().abs() * 9.75,
                rate: 0.02,
                volatility: 0.30,
            }
        })
        .collect();
    // The CPU backends agree bit for bit; the device within the tolerance of its `exp` and
    // `ln` (the guide: 1e-5 relative for f32, here through a dozen operations and a difference of
    // two prices, so 1e-5 of the spot).
    let run = || par![black_scholes(o) | o <- &options];
    let got = on_every_cpu_backend(run);
    let want: Vec<f32> = options.iter().map(|&o| black_scholes(o)).collect();
    assert_eq!(
        got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        want.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );
    for (backend, got) in on_devices(run) {
        let mut worst = 0.0f32;
        for ((g, w), o) in got.iter().zip(&want).zip(&options) {
            let error = (g - w).abs() / o.spot;
            worst = worst.max(error);
            assert!(error <= 1e-5, "{backend}: {g} vs {w} for {o:?}");
        }
        eprintln!("{backend}: worst error {worst:e} of the spot");
    }
    let points = points(1000);
    let got = on_every_backend(|| par![mirrored(p) | p <- &points, p.y > 0.0]);
    let want: Vec<Point> = points.iter().filter(|p| p.y > 0.0).map(|&p| mirrored(p)).collect();
    assert_eq!(got, want);
}

/// A generic struct, a raw field name, and a struct without fields.
#[derive(Clone, Copy, Debug, PartialEq, DeviceValue)]
struct Tagged<T> {
    r#type: u8,
    value: T,
}

#[derive(Clone, Copy, Debug, PartialEq, DeviceValue)]
struct Marker {}

#[test]
fn generic_raw_and_empty_structs() {
    let tagged: Vec<Tagged<i64>> =
        (0..3000).map(|i| Tagged { r#type: (i % 7) as u8, value: i * -3 }).collect();
    let got = on_every_backend(
        || par![Tagged { r#type: t.r#type, value: t.value as f32 } | t <- &tagged, t.r#type == 3],
    );
    let want: Vec<Tagged<f32>> = tagged
        .iter()
        .filter(|t| t.r#type == 3)
        .map(|t| Tagged { r#type: t.r#type, value: t.value as f32 })
        .collect();
    assert_eq!(got, want);
    let got = on_every_backend(|| par![(Marker {}, x) | x <- 0..2000u32, x % 3 == 0]);
    assert_eq!(
        got,
        (0..2000u32).filter(|x| x % 3 == 0).map(|x| (Marker {}, x)).collect::<Vec<_>>()
    );
    let markers = vec![Marker {}; 1500];
    assert_eq!(on_every_backend(|| par_count![m | m <- &markers]), 1500);
}

/// A struct taken apart in a `#[par_fn]`'s parameter and in a `let`.
#[par_fn]
fn cross(Point { x: ax, y: ay }: Point, b: Point) -> f64 {
    let Point { x: bx, .. } = b;
    let Point { y: by, .. } = b;
    ax * by - ay * bx
}

#[test]
fn struct_patterns() {
    let points = points(3000);
    let origin = Point { x: 0.25, y: -1.0 };
    let got = on_every_backend(|| par![cross(p, origin) | p <- &points]);
    let want: Vec<f64> = points.iter().map(|&p| cross(p, origin)).collect();
    assert_eq!(got, want);
    let segments: Vec<Segment> =
        points.windows(2).map(|w| Segment { from: w[0], to: w[1], weight: Some(1) }).collect();
    let got = on_every_backend(
        || par![{ let Segment { from: Point { x, .. }, to, .. } = s; to.x - x } | s <- &segments],
    );
    let want: Vec<f64> = segments.iter().map(|s| s.to.x - s.from.x).collect();
    assert_eq!(got, want);
}
