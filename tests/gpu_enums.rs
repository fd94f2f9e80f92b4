//! Tuple structs and fieldless enums with `#[derive(DeviceValue)]` on the device. A tuple
//! struct is a struct whose fields are named by their positions (`w.0`, `Wrapper(a, b)`,
//! `let Wrapper(a, b) = w`); a fieldless enum is its discriminant (compared, matched, cast with
//! `as`, named `Color::Red` in a `#[par_fn]`). Every comprehension runs on every backend, on the
//! device too (checked by the trace), and must give the sequential backend's answer.

mod support;

use parcomp::{par, par_count, par_fn, par_sum, DeviceValue};

use support::{on_device, on_every_backend};

/// A tuple struct of two numbers.
#[derive(Clone, Copy, Debug, PartialEq, DeviceValue)]
struct Meters(f64, u16);

/// A tuple struct holding another and an `Option`.
#[derive(Clone, Copy, Debug, PartialEq, DeviceValue)]
struct Tagged(Meters, Option<i8>);

/// A fieldless enum without a `#[repr]`: its discriminant is an `isize`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, DeviceValue)]
enum Color {
    Red,
    Green,
    Blue,
}

/// Explicit discriminants, some negative, and a `#[repr]`; a variant named like a C keyword.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, DeviceValue)]
#[repr(i16)]
#[allow(non_camel_case_types)]
enum Level {
    Low = -300,
    Mid = 7,
    High,
    r#int = 1000,
}

/// Discriminants above `i64::MAX` in a `u64` enum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, DeviceValue)]
#[repr(u64)]
enum Wide {
    Small = 1,
    Huge = u64::MAX - 1,
}

/// An order: a struct holding an enum.
#[derive(Clone, Copy, Debug, PartialEq, DeviceValue)]
struct Order {
    price: f32,
    color: Color,
    level: Level,
}

fn meters(n: usize) -> Vec<Meters> {
    (0..n).map(|i| Meters((i as f64 * 0.37).sin() * 10.0, (i * 7919) as u16)).collect()
}

fn orders(n: usize) -> Vec<Order> {
    let colors = [Color::Red, Color::Green, Color::Blue];
    let levels = [Level::Low, Level::Mid, Level::High, Level::r#int];
    (0..n)
        .map(|i| Order {
            price: (i % 97) as f32 * 1.25 - 20.0,
            color: colors[(i * 7) % 3],
            level: levels[(i * 5 + i / 3) % 4],
        })
        .collect()
}

#[test]
fn tuple_struct_fields_and_results() {
    let ms = meters(4000);
    let got = on_every_backend(|| par![m.0 * 2.0 | m <- &ms, m.1 % 3 == 0]);
    let want: Vec<f64> = ms.iter().filter(|m| m.1 % 3 == 0).map(|m| m.0 * 2.0).collect();
    assert_eq!(got, want);
    assert!(!want.is_empty());
    // Built in the head, read back as the user's tuple struct; arithmetic on `u16` wraps.
    let got = on_every_backend(|| par![Meters { 1: m.1.wrapping_mul(9), 0: m.0 - 1.0 } | m <- &ms]);
    let want: Vec<Meters> = ms.iter().map(|m| Meters(m.0 - 1.0, m.1.wrapping_mul(9))).collect();
    assert_eq!(got, want);
    let got = on_every_backend(|| par![Meters(m.0 - 1.0, m.1.wrapping_mul(9)) | m <- &ms]);
    let want: Vec<Meters> = ms.iter().map(|m| Meters(m.0 - 1.0, m.1.wrapping_mul(9))).collect();
    assert_eq!(got, want);
    // Nested tuple structs, `Option`s in them, and the whole element back.
    let tagged: Vec<Tagged> =
        ms.iter().enumerate().map(|(i, &m)| Tagged(m, (i % 3 != 0).then_some(i as i8))).collect();
    let got = on_every_backend(|| par![(t.0 .1, t.1.unwrap_or(-1)) | t <- &tagged, t.0 .0 > 0.0]);
    let want: Vec<_> =
        tagged.iter().filter(|t| t.0 .0 > 0.0).map(|t| (t.0 .1, t.1.unwrap_or(-1))).collect();
    assert_eq!(got, want);
    let got = on_every_backend(|| par![Tagged(t.0, None) | t <- &tagged, t.1.is_some()]);
    let want: Vec<_> = tagged.iter().filter(|t| t.1.is_some()).map(|t| Tagged(t.0, None)).collect();
    assert_eq!(got, want);
    // Empty input.
    let none: Vec<Meters> = Vec::new();
    assert_eq!(on_every_backend(|| par![m.0 | m <- &none]), Vec::<f64>::new());
}

/// A tuple struct taken apart in a `let`, and made by a `#[par_fn]`.
#[par_fn]
fn scaled(m: Meters, by: f64) -> Meters {
    let Meters(d, k) = m;
    Meters(d * by, k.wrapping_add(k))
}

/// Struct literals typed by their names alone (the parameter's type is the struct so named):
/// built, then only taken apart or read by field.
#[par_fn]
fn rebuilt(m: Meters) -> f64 {
    let Meters(a, _) = Meters(m.0, m.1);
    let w = Meters(a * 2.0, m.1);
    w.0 + w.1 as f64
}

/// A tuple struct taken apart in a parameter, `..` ending the pattern.
#[par_fn]
fn first(Meters(d, ..): Meters) -> f64 {
    d
}

#[test]
fn tuple_structs_in_par_fns() {
    let ms = meters(3000);
    let got = on_every_backend(|| par![scaled(m, 0.5) | m <- &ms]);
    let want: Vec<Meters> = ms.iter().map(|m| Meters(m.0 * 0.5, m.1.wrapping_add(m.1))).collect();
    assert_eq!(got, want);
    let got = on_every_backend(|| par![rebuilt(m) | m <- &ms]);
    assert_eq!(got, ms.iter().map(|m| m.0 * 2.0 + m.1 as f64).collect::<Vec<_>>());
    // In a comprehension's `let`: the element's type names it.
    let got = on_every_backend(|| par![w.0 - w.1 as f64 | m <- &ms, let w = Meters(m.0, 3)]);
    assert_eq!(got, ms.iter().map(|m| m.0 - 3.0).collect::<Vec<_>>());
    let got = on_every_backend(|| par![first(m) | m <- &ms]);
    assert_eq!(got, ms.iter().map(|m| m.0).collect::<Vec<_>>());
    // A captured tuple struct: its fields are read on the host.
    let origin = Meters(2.5, 4);
    let got = on_every_backend(|| par![m.0 - origin.0 + origin.1 as f64 | m <- &ms]);
    let want: Vec<f64> = ms.iter().map(|m| m.0 - 2.5 + 4.0).collect();
    assert_eq!(got, want);
}

#[test]
fn enums_compared_matched_and_cast() {
    let orders = orders(5000);
    // Compared with a variant read on the host, and with each other (by discriminant).
    let got = on_every_backend(|| par![o.price | o <- &orders, o.color == Color::Green]);
    let want: Vec<f32> =
        orders.iter().filter(|o| o.color == Color::Green).map(|o| o.price).collect();
    assert_eq!(got, want);
    assert!(!want.is_empty());
    let got = on_every_backend(|| par_count![o | o <- &orders, o.level > Level::Mid]);
    assert_eq!(got, orders.iter().filter(|o| o.level > Level::Mid).count());
    // `as` casts give the discriminants, negative ones too.
    let got =
        on_every_backend(|| par![(o.color as u8, o.level as i32, o.level as u8) | o <- &orders]);
    let want: Vec<_> =
        orders.iter().map(|o| (o.color as u8, o.level as i32, o.level as u8)).collect();
    assert_eq!(got, want);
    // `match` on an enum in the head.
    let got = on_every_backend(|| {
        par![match o.color { Color::Red => o.price, Color::Green => -o.price, _ => 0.0 }
             | o <- &orders]
    });
    let want: Vec<f32> = orders
        .iter()
        .map(|o| match o.color {
            Color::Red => o.price,
            Color::Green => -o.price,
            _ => 0.0,
        })
        .collect();
    assert_eq!(got, want);
    // Enums as results: the elements' own, a field's, and a chosen one.
    let got = on_every_backend(|| par![(o.level, o.color) | o <- &orders, o.price > 10.0]);
    let want: Vec<_> =
        orders.iter().filter(|o| o.price > 10.0).map(|o| (o.level, o.color)).collect();
    assert_eq!(got, want);
    let got = on_every_backend(|| par![o | o <- &orders, o.level == Level::r#int]);
    let want: Vec<Order> = orders.iter().filter(|o| o.level == Level::r#int).copied().collect();
    assert_eq!(got, want);
    let got =
        on_every_backend(|| par![if o.price < 0.0 { Color::Blue } else { o.color } | o <- &orders]);
    let want: Vec<Color> =
        orders.iter().map(|o| if o.price < 0.0 { Color::Blue } else { o.color }).collect();
    assert_eq!(got, want);
    // `min`/`max` of enums order them by discriminant, as `#[derive(Ord)]` does.
    let got = on_every_backend(|| par![o.level.max(Level::Mid) | o <- &orders]);
    let want: Vec<Level> = orders.iter().map(|o| o.level.max(Level::Mid)).collect();
    assert_eq!(got, want);
}

#[test]
fn wide_discriminants() {
    let wides: Vec<Wide> =
        (0..1000).map(|i| if i % 3 == 0 { Wide::Huge } else { Wide::Small }).collect();
    let got = on_every_backend(|| par![(w, w as u64) | w <- &wides, w != Wide::Small]);
    let want: Vec<_> =
        wides.iter().filter(|&&w| w != Wide::Small).map(|&w| (w, w as u64)).collect();
    assert_eq!(got, want);
    assert_eq!(want[0].1, u64::MAX - 1);
}

/// Variants named in a `#[par_fn]`: matched, compared and returned.
#[par_fn]
fn weight(c: Color, l: Level) -> f32 {
    let base = match c {
        Color::Red => 1.0,
        Color::Green | Color::Blue => 2.5,
    };
    if l == Level::Low {
        base * 0.5
    } else if l >= Level::High {
        base * 4.0
    } else {
        base
    }
}

#[par_fn]
fn next(c: Color) -> Color {
    match c {
        Color::Red => Color::Green,
        Color::Green => Color::Blue,
        Color::Blue => Color::Red,
    }
}

#[par_fn]
fn level_of(price: f32) -> Level {
    if price < 0.0 {
        Level::Low
    } else if price < 50.0 {
        Level::Mid
    } else {
        Level::r#int
    }
}

#[test]
fn enums_in_par_fns() {
    let orders = orders(4000);
    let got = on_every_backend(|| par_sum![o.price * weight(o.color, o.level) | o <- &orders]);
    let want: f32 = orders.iter().map(|o| o.price * weight(o.color, o.level)).sum();
    assert!((got - want).abs() <= want.abs() * 1e-4, "{got} against {want}");
    let got = on_every_backend(|| par![(next(o.color), level_of(o.price)) | o <- &orders]);
    let want: Vec<_> = orders.iter().map(|o| (next(o.color), level_of(o.price))).collect();
    assert_eq!(got, want);
    // The device ran them (the exact results above came from it too).
    let on = on_device(|| par![level_of(x as f32 - 10.0) as i16 | x <- 0..100]);
    if let Some(on) = on {
        let want: Vec<i16> = (0..100).map(|x| level_of(x as f32 - 10.0) as i16).collect();
        assert_eq!(on, want);
    }
}

/// A struct with named fields, for patterns.
#[derive(Clone, Copy, Debug, PartialEq, DeviceValue)]
struct Point {
    x: f64,
    y: f64,
}

#[test]
fn struct_patterns_in_generators_and_lets() {
    let points: Vec<Point> =
        (0..3000).map(|i| Point { x: (i as f64 * 0.3).sin(), y: i as f64 * 0.01 }).collect();
    let want: Vec<f64> = points.iter().filter(|p| p.x > 0.0).map(|p| p.x * p.y).collect();
    // A struct pattern in a generator always matches: it binds the fields.
    let got = on_every_backend(|| par![x * y | Point { x, y } <- &points, x > 0.0]);
    assert_eq!(got, want);
    let got = on_every_backend(|| par![x * b | Point { x, y: b } <- &points, x > 0.0]);
    assert_eq!(got, want);
    // In a `let` qualifier, with `..`, and a tuple struct's.
    let got = on_every_backend(|| par![x * p.y | p <- &points, let Point { x, .. } = p, x > 0.0]);
    assert_eq!(got, want);
    let ms = meters(500);
    let got = on_every_backend(|| par![d + k as f64 | Meters(d, k) <- &ms]);
    assert_eq!(got, ms.iter().map(|m| m.0 + m.1 as f64).collect::<Vec<_>>());
    let got = on_every_backend(|| par![d | m <- &ms, let Meters(d, ..) = m, d < 0.0]);
    assert_eq!(got, ms.iter().filter(|m| m.0 < 0.0).map(|m| m.0).collect::<Vec<_>>());
    // Nested in a tuple pattern.
    let pairs: Vec<(Point, u8)> =
        points.iter().take(100).map(|&p| (p, (p.y * 100.0) as u8)).collect();
    let got = on_every_backend(|| par![x + k as f64 | (Point { x, .. }, k) <- &pairs]);
    assert_eq!(got, pairs.iter().map(|(p, k)| p.x + *k as f64).collect::<Vec<_>>());
}

/// Methods of an enum and of a tuple struct.
#[par_fn]
impl Color {
    const FAVOURITE: Color = Color::Blue;

    fn warmth(self) -> i32 {
        match self {
            Color::Red => 3,
            Color::Green => 1,
            Color::Blue => -2,
        }
    }

    fn is_favourite(&self) -> bool {
        *self == Self::FAVOURITE
    }
}

#[par_fn]
impl Meters {
    fn doubled(self) -> Meters {
        Meters(self.0 * 2.0, self.1)
    }
}

#[test]
fn methods_of_enums_and_tuple_structs() {
    let orders = orders(3000);
    let got = on_every_backend(|| par![(o.color.warmth(), o.color.is_favourite()) | o <- &orders]);
    let want: Vec<_> = orders.iter().map(|o| (o.color.warmth(), o.color.is_favourite())).collect();
    assert_eq!(got, want);
    let ms = meters(300);
    let got = on_every_backend(|| par![m.doubled().0 | m <- &ms]);
    assert_eq!(got, ms.iter().map(|m| m.0 * 2.0).collect::<Vec<_>>());
}
