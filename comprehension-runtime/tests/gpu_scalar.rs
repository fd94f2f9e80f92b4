#![cfg(any(feature = "opencl", feature = "cuda-api"))]
//! `scalar.h` against Rust: every operation and cast of every type tag, run on each device
//! present (OpenCL, PoCL in CI; CUDA) over edge values and deterministic pseudo-random values, compared with the same
//! operation computed on the host with a release build's semantics (`wrapping_*`, masked shifts,
//! saturating float-to-int casts).
//!
//! - Integer and bool results, casts and the exactly specified float operations (`+ - * /`, `%`,
//!   sqrt, abs, neg, signum, recip, copysign, mul_add, floor, ceil, round, round_ties_even,
//!   trunc, fract, min, max, div_euclid, rem_euclid, powi, to_degrees, to_radians) must match bit
//!   for bit (any NaN matches any NaN; for min and max of +0.0 and -0.0 either zero, as Rust
//!   allows).
//! - The functions Rust leaves to libm must be within the ULP tolerances of [`TOLERANCES`].
//! - The checked operations (`/`, `%`, div_euclid, rem_euclid, clamp) get a fault slot each:
//!   where Rust panics (its panic message tells which fault), the slot must hold that fault's
//!   code, the `where` passed and the bounds (clamp), and the return value must be 0 (division)
//!   or `x` (clamp); elsewhere the slot must stay zero.
//! - The shared fault word: the first fault of a run wins.
//!
//! Each tag is one kernel computing all its operations, so the whole check is one program.

mod support;

use comprehension_runtime::gpu::device::{Arg, Buffer, Device};
use comprehension_runtime::gpu::{prelude, SCALAR};
use comprehension_runtime::Backend;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::panic::{self, UnwindSafe};
use std::sync::Once;

// The fault codes of prelude.h.
const DIV_ZERO: u32 = 1;
const REM_ZERO: u32 = 2;
const DIV_OVERFLOW: u32 = 3;
const REM_OVERFLOW: u32 = 4;
const CLAMP: u32 = 10;

/// The largest difference allowed, in ULPs of the result, between the device and Rust on the
/// host for each function left to libm: the device's bound from the OpenCL 1.2 specification's
/// accuracy table (§7.4, full profile; the same for f32 and f64) plus the host libm's own error
/// (glibc's x86_64 `libm-test-ulps`: at most 2 ulp for each of these functions in f32 and f64,
/// except cbrt in f64: 4). Functions that std writes in Rust from others inherit their parts'
/// errors:
/// - `log(x, b) = ln x / ln b`: (3 + 2) ulp on each logarithm; a relative error of k ulp in
///   one binade is at most 2k ulp in another, so 2 * (5 + 5), plus the division's rounding;
/// - `acosh`: one `ln` of an argument computed identically on both sides: 3 + 2;
/// - `atanh`: one `ln_1p` of an argument computed identically: 2 + 2;
/// - `asinh`: `ln_1p` (2 + 2) of an argument that contains a `hypot` (4 + 2): 4 + 2 * 6.
const TOLERANCES: &[(&str, u64)] = &[
    ("cbrt", 2 + 4),
    ("exp", 3 + 2),
    ("exp2", 3 + 2),
    ("exp_m1", 3 + 2),
    ("ln", 3 + 2),
    ("log2", 3 + 2),
    ("log10", 3 + 2),
    ("ln_1p", 2 + 2),
    ("log", 2 * (5 + 5) + 1),
    ("powf", 16 + 2),
    ("sin", 4 + 2),
    ("cos", 4 + 2),
    ("tan", 5 + 2),
    ("asin", 4 + 2),
    ("acos", 4 + 2),
    ("atan", 5 + 2),
    ("atan2", 6 + 2),
    ("sinh", 4 + 2),
    ("cosh", 4 + 2),
    ("tanh", 5 + 2),
    ("hypot", 4 + 2),
    ("asinh", 4 + 2 * 6),
    ("acosh", 3 + 2),
    ("atanh", 2 + 2),
];

fn tolerance(name: &str) -> u64 {
    TOLERANCES.iter().find(|(n, _)| *n == name).map(|(_, t)| *t).expect("a tolerance")
}

// ---- values as the kernels store them ----------------------------------------------------------

/// How a kernel stores a result in its u64 slot: integers and bools converted to u64 (signed
/// values sign-extended), floats as their bits.
#[derive(Clone, Copy, PartialEq)]
enum Enc {
    Int,
    F32,
    F64,
}

trait Bits: Copy {
    const ENC: Enc;
    fn bits(self) -> u64;
}

macro_rules! int_bits {
    ($($t:ty),*) => {
        $(impl Bits for $t {
            const ENC: Enc = Enc::Int;
            fn bits(self) -> u64 {
                self as u64
            }
        })*
    };
}
int_bits!(i8, i16, i32, i64, u8, u16, u32, u64);

impl Bits for bool {
    const ENC: Enc = Enc::Int;
    fn bits(self) -> u64 {
        self as u64
    }
}

impl Bits for f32 {
    const ENC: Enc = Enc::F32;
    fn bits(self) -> u64 {
        self.to_bits() as u64
    }
}

impl Bits for f64 {
    const ENC: Enc = Enc::F64;
    fn bits(self) -> u64 {
        self.to_bits()
    }
}

/// Bytes of a slice of values, as the device reads them.
trait Le: Copy {
    fn le(self, out: &mut Vec<u8>);
}

macro_rules! le {
    ($($t:ty),*) => {
        $(impl Le for $t {
            fn le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        })*
    };
}
le!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);

impl Le for bool {
    fn le(self, out: &mut Vec<u8>) {
        out.push(self as u8);
    }
}

fn bytes<T: Le>(values: &[T]) -> Vec<u8> {
    let mut out = Vec::new();
    for v in values {
        v.le(&mut out);
    }
    out
}

// ---- Rust's panics as faults --------------------------------------------------------------------

thread_local! {
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f`, turning Rust's panic into the fault code the kernels record for it.
fn caught<R>(f: impl FnOnce() -> R + UnwindSafe) -> Result<R, u32> {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !QUIET.with(Cell::get) {
                default(info);
            }
        }));
    });
    QUIET.with(|q| q.set(true));
    let result = panic::catch_unwind(f);
    QUIET.with(|q| q.set(false));
    result.map_err(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        if message == "attempt to divide by zero" {
            DIV_ZERO
        } else if message == "attempt to calculate the remainder with a divisor of zero" {
            REM_ZERO
        } else if message == "attempt to divide with overflow" {
            DIV_OVERFLOW
        } else if message == "attempt to calculate the remainder with overflow" {
            REM_OVERFLOW
        } else if message.starts_with("min > max") {
            CLAMP
        } else {
            panic!("an unexpected panic: {message}")
        }
    })
}

/// What a checked operation must do for one input: return `value`, and record `fault`.
struct Outcome {
    value: u64,
    fault: Option<(u32, u64, u64)>,
}

/// `/` and `%`-like: on a panic, the fault (arguments 0, 0) and 0.
fn division<R: Bits>(f: impl FnOnce() -> R + UnwindSafe) -> Outcome {
    match caught(f) {
        Ok(v) => Outcome { value: v.bits(), fault: None },
        Err(code) => Outcome { value: 0, fault: Some((code, 0, 0)) },
    }
}

/// clamp: on a panic, the fault with the bounds and `x`.
fn clamping<R: Bits>(x: R, lo: R, hi: R, f: impl FnOnce() -> R + UnwindSafe) -> Outcome {
    match caught(f) {
        Ok(v) => Outcome { value: v.bits(), fault: None },
        Err(code) => Outcome { value: x.bits(), fault: Some((code, lo.bits(), hi.bits())) },
    }
}

// ---- a suite: one tag's inputs and operations --------------------------------------------------

#[derive(Clone, Copy)]
enum Cmp {
    /// The same bits (any NaN for any NaN).
    Exact,
    /// Within this many ULPs.
    Ulp(u64),
    /// Exact, or either input when the inputs compare equal (min / max of +0.0 and -0.0).
    MinMax,
}

struct Case {
    /// The function, e.g. `pc_add_i32`.
    op: String,
    /// Its call in the kernel, over `x`, `y`, `z`, `e`; `F` and `W` stand for the fault slot and
    /// `where` of a checked operation.
    call: String,
    enc: Enc,
    cmp: Cmp,
    /// The index of its fault slots, for checked operations.
    slot: Option<usize>,
    expect: Vec<Outcome>,
}

struct Suite {
    tag: &'static str,
    n: usize,
    /// x, y, z as the device reads them, and e (u32).
    x: Vec<u8>,
    y: Vec<u8>,
    z: Vec<u8>,
    e: Vec<u32>,
    describe: Box<dyn Fn(usize) -> String>,
    /// The bits of x and y, for Cmp::MinMax.
    xy_bits: Vec<(u64, u64)>,
    cases: Vec<Case>,
    slots: usize,
}

impl Suite {
    fn new<T: Le + Bits + std::fmt::Debug + 'static>(
        tag: &'static str,
        x: Vec<T>,
        y: Vec<T>,
        z: Vec<T>,
        e: Vec<u32>,
    ) -> Suite {
        let n = x.len();
        assert!(y.len() == n && z.len() == n && e.len() == n);
        let xy_bits = (0..n).map(|i| (x[i].bits(), y[i].bits())).collect();
        let (xb, yb, zb) = (bytes(&x), bytes(&y), bytes(&z));
        let e2 = e.clone();
        let describe = Box::new(move |i: usize| {
            let show = |v: T| {
                if T::ENC == Enc::Int {
                    format!("{v:?}")
                } else {
                    format!("{v:?} ({:#x})", v.bits())
                }
            };
            format!(
                "x = {}, y = {}, z = {}, e = {} ({})",
                show(x[i]),
                show(y[i]),
                show(z[i]),
                e2[i],
                e2[i] as i32
            )
        });
        Suite { tag, n, x: xb, y: yb, z: zb, e, describe, xy_bits, cases: Vec::new(), slots: 0 }
    }

    /// `pc_<name>_<tag>(args)`, expected `f(i)` for input i.
    fn op<R: Bits>(&mut self, name: &str, args: &str, cmp: Cmp, f: impl Fn(usize) -> R) {
        let op = format!("pc_{name}_{}", self.tag);
        let expect = (0..self.n).map(|i| Outcome { value: f(i).bits(), fault: None }).collect();
        let call = format!("{op}({args})");
        self.cases.push(Case { op, call, enc: R::ENC, cmp, slot: None, expect });
    }

    /// A checked operation `pc_<name>_<tag>(fault, where, args)`.
    fn checked(&mut self, name: &str, args: &str, enc: Enc, f: impl Fn(usize) -> Outcome) {
        let op = format!("pc_{name}_{}", self.tag);
        let expect = (0..self.n).map(f).collect();
        let call = format!("{op}(F, W, {args})");
        self.cases.push(Case { op, call, enc, cmp: Cmp::Exact, slot: Some(self.slots), expect });
        self.slots += 1;
    }

    /// `pc_cast_<tag>_<to>(x)`.
    fn cast<R: Bits>(&mut self, to: &str, f: impl Fn(usize) -> R) {
        let op = format!("pc_cast_{}_{to}", self.tag);
        let expect = (0..self.n).map(|i| Outcome { value: f(i).bits(), fault: None }).collect();
        let call = format!("{op}(x)");
        self.cases.push(Case { op, call, enc: R::ENC, cmp: Cmp::Exact, slot: None, expect });
    }

    fn kernel(&self) -> String {
        let t = format!("PC_T({})", self.tag);
        let mut k = format!(
            "PC_KERNEL void check_{tag}(PC_GLOBAL const {t}* xs, PC_GLOBAL const {t}* ys,\n\
             \x20   PC_GLOBAL const {t}* zs, PC_GLOBAL const pc_u32* es, PC_GLOBAL pc_u64* out,\n\
             \x20   PC_GLOBAL pc_u32* faults, pc_u64 n) {{\n\
             \x20 pc_u64 i = PC_GLOBAL_ID();\n\
             \x20 if (i >= n) return;\n\
             \x20 {t} x = xs[i];\n  {t} y = ys[i];\n  {t} z = zs[i];\n  pc_u32 e = es[i];\n\
             \x20 (void)y; (void)z; (void)e; (void)faults;\n",
            tag = self.tag
        );
        for (k_index, case) in self.cases.iter().enumerate() {
            let mut call = case.call.clone();
            if let Some(slot) = case.slot {
                call = call.replace(
                    "F, W",
                    &format!("faults + ({slot}u * n + i) * 8u, {}u", 1000 + k_index),
                );
            }
            let value = match case.enc {
                Enc::Int => format!("(pc_u64)({call})"),
                Enc::F32 => format!("(pc_u64)PC_F32_BITS({call})"),
                Enc::F64 => format!("PC_F64_BITS({call})"),
            };
            k += &format!("  out[{k_index}u * n + i] = {value};\n");
        }
        k += "}\n";
        k
    }
}

// ---- inputs -----------------------------------------------------------------------------------

/// A 64-bit LCG (Knuth's MMIX constants); the high half of each state.
struct Lcg(u64);

impl Lcg {
    fn next32(&mut self) -> u32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 32) as u32
    }
    fn next64(&mut self) -> u64 {
        ((self.next32() as u64) << 32) | self.next32() as u64
    }
}

/// Shift amounts and exponents: around every width, and beyond.
const AMOUNTS: &[u32] = &[
    0,
    1,
    2,
    3,
    4,
    5,
    6,
    7,
    8,
    9,
    10,
    15,
    16,
    17,
    31,
    32,
    33,
    63,
    64,
    65,
    100,
    127,
    128,
    255,
    1000,
    u32::MAX,
    u32::MAX - 1,
    1 << 31,
    (-3i32) as u32,
    (-10i32) as u32,
    i32::MAX as u32,
    (i32::MIN + 1) as u32,
];

/// Integer inputs of a `bits`-wide type, as i128 (wrapped into the type with `as`): the core
/// values (every pair of them is tried) and the edge values (the core ones, then more).
fn int_values(bits: u32, signed: bool) -> (Vec<i128>, Vec<i128>) {
    let (min, max) = if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    };
    let b = bits as i128;
    let core = vec![
        0,
        1,
        2,
        3,
        5,
        7,
        100,
        -1,
        -2,
        -3,
        -7,
        -100,
        min,
        min + 1,
        max,
        max - 1,
        max / 2,
        min / 2,
        b - 1,
        b,
        b + 1,
        1 << (bits / 2),
        -(1 << (bits / 2)),
        (1 << (bits / 2)) + 1,
    ];
    let mut edge = core.clone();
    edge.extend([10, 127, 128, 255, 256, 1000, 65535, 65536, -128, -129, -1000, min + 2, max - 2]);
    for k in 0..bits {
        let p = 1i128 << k;
        edge.extend([p, p - 1, p + 1, -p, -p - 1]);
    }
    (core, edge)
}

/// x, y, z, e for integer tags: all pairs of the core values, every edge value against a core
/// value, then random triples (half of them small, so that divisions and clamps have ordinary
/// cases too).
fn int_inputs<T>(bits: u32, signed: bool, wrap: impl Fn(i128) -> T) -> Inputs<T> {
    let (core, edge) = int_values(bits, signed);
    let mut rng = Lcg(bits as u64 * 2 + signed as u64);
    let mut inputs = Inputs { x: Vec::new(), y: Vec::new(), z: Vec::new(), e: Vec::new() };
    let mut push = |a: i128, b: i128, c: i128, s: u32| {
        inputs.x.push(wrap(a));
        inputs.y.push(wrap(b));
        inputs.z.push(wrap(c));
        inputs.e.push(s);
    };
    let mut i = 0usize;
    for &a in &core {
        for &b in &core {
            push(a, b, core[(i * 7 + 3) % core.len()], AMOUNTS[i % AMOUNTS.len()]);
            i += 1;
        }
    }
    for (j, &a) in edge.iter().enumerate() {
        push(a, core[j % core.len()], edge[(j * 5 + 1) % edge.len()], AMOUNTS[j % AMOUNTS.len()]);
        push(edge[(j * 3 + 2) % edge.len()], a, core[(j + 5) % core.len()], j as u32);
    }
    for j in 0..400 {
        let (a, b, c) = if j % 2 == 0 {
            (rng.next64() as i128, rng.next64() as i128, rng.next64() as i128)
        } else {
            let mut small = || (rng.next32() % 2001) as i128 - 1000;
            (small(), small(), small())
        };
        let s = if j % 3 == 0 { rng.next32() } else { rng.next32() % 130 };
        push(a, b, c, s);
    }
    inputs
}

struct Inputs<T> {
    x: Vec<T>,
    y: Vec<T>,
    z: Vec<T>,
    e: Vec<u32>,
}

/// Powers for powi (as u32 bits of an i32): small, large, negative, and the extremes.
const POWERS: &[i32] = &[
    0,
    1,
    2,
    3,
    4,
    5,
    7,
    8,
    10,
    16,
    31,
    32,
    100,
    127,
    128,
    149,
    1000,
    1075,
    -1,
    -2,
    -3,
    -4,
    -10,
    -127,
    -128,
    -149,
    -1000,
    -1075,
    i32::MIN,
    i32::MIN + 1,
    i32::MAX,
];

/// x, y, z, e for float tags: all pairs of the core values, every edge value against a core
/// value, then `random` values (whose kinds it picks by index).
fn float_inputs<F: Copy>(
    core: &[F],
    extra: &[F],
    seed: u64,
    mut random: impl FnMut(&mut Lcg, usize) -> F,
) -> Inputs<F> {
    let edge: Vec<F> = core.iter().chain(extra).copied().collect();
    let mut rng = Lcg(seed);
    let mut inputs = Inputs { x: Vec::new(), y: Vec::new(), z: Vec::new(), e: Vec::new() };
    let mut push = |a: F, b: F, c: F, p: i32| {
        inputs.x.push(a);
        inputs.y.push(b);
        inputs.z.push(c);
        inputs.e.push(p as u32);
    };
    let mut i = 0usize;
    for &a in core {
        for &b in core {
            push(a, b, core[(i * 5 + 1) % core.len()], POWERS[i % POWERS.len()]);
            i += 1;
        }
    }
    for (j, &a) in edge.iter().enumerate() {
        push(a, core[j % core.len()], edge[(j * 7 + 2) % edge.len()], POWERS[j % POWERS.len()]);
        push(edge[(j * 3 + 1) % edge.len()], a, core[(j + 4) % core.len()], j as i32 - 20);
    }
    for j in 0..600 {
        let (a, b, c) = (random(&mut rng, j), random(&mut rng, j + 1), random(&mut rng, j + 2));
        let p = if j % 4 == 0 { rng.next32() as i32 } else { (rng.next32() % 81) as i32 - 40 };
        push(a, b, c, p);
    }
    inputs
}

fn f32_inputs() -> Inputs<f32> {
    let core = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        1.5,
        -1.5,
        2.5,
        -2.5,
        0.49999997,
        -0.49999997,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MIN_POSITIVE,
        f32::from_bits(0x0040_0000),
        -f32::from_bits(1),
        2147483648.0,
        2147483520.0, // the f32 nearest 2^31 - 0.5 from below
        2147483647.5f64 as f32,
        -2147483649.0f64 as f32,
        -2147483904.0,
        9223372036854775808.0,
        -9223372036854775808.0,
        18446744073709551616.0,
        1e30,
        -1e30,
        3.0,
        0.1,
        -7.25,
        100.0,
        f32::MAX,
        f32::MIN,
    ];
    let extra = [
        127.0,
        127.5,
        128.0,
        -127.5,
        -128.0,
        -128.5,
        -129.0,
        254.5,
        255.5,
        256.0,
        32767.0,
        32767.5,
        -32767.5,
        -32768.0,
        -32768.5,
        65535.5,
        65536.0,
        -2147483520.0,
        4294967040.0,
        -9223371487098961920.0,
        4294967296.0,
        18446742974197923840.0,
        9223371487098961920.0,
        -9223373136366403584.0,
        88.72,
        89.0,
        -87.3,
        -103.9,
        -150.0,
        std::f32::consts::PI,
        std::f32::consts::E,
        1e10,
        1e-10,
        1e38,
        3e38,
        0.75,
        0.99999994,
        1.0000001,
        -0.99999994,
        10.0,
        1e-3,
        f32::from_bits(1),
        f32::from_bits(0x007f_ffff),
        f32::EPSILON,
        16777217.0,
        f32::from_bits(0x7fc0_0001),
        f32::from_bits(0xffc0_0000),
    ];
    float_inputs(&core, &extra, 32, |rng, j| match j % 3 {
        0 => f32::from_bits(rng.next32()),
        1 => {
            let m = 1.0 + (rng.next32() >> 8) as f32 / (1u32 << 24) as f32;
            let sign = if rng.next32() & 1 == 1 { -1.0 } else { 1.0 };
            sign * m * 2f32.powi((rng.next32() % 61) as i32 - 30)
        }
        _ => (rng.next32() as f32 / u32::MAX as f32) * 2.2 - 1.1,
    })
}

fn f64_inputs() -> Inputs<f64> {
    let core = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        1.5,
        -1.5,
        2.5,
        -2.5,
        0.49999999999999994,
        -0.49999999999999994,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::MIN_POSITIVE,
        f64::from_bits(0x0008_0000_0000_0000),
        -f64::from_bits(1),
        2147483648.0,
        2147483647.5,
        -2147483649.0,
        -2147483648.5,
        9223372036854775808.0,
        -9223372036854775808.0,
        18446744073709551616.0,
        1e30,
        -1e30,
        3.0,
        0.1,
        -7.25,
        100.0,
        f64::MAX,
        f64::MIN,
    ];
    let extra = [
        127.0,
        127.5,
        128.0,
        -127.5,
        -128.0,
        -128.5,
        -129.0,
        254.5,
        255.5,
        256.0,
        32767.0,
        32767.5,
        -32767.5,
        -32768.0,
        -32768.5,
        65535.5,
        65536.0,
        2147483647.0,
        -2147483647.0,
        -2147483647.5,
        4294967295.0,
        4294967295.5,
        -9223372036854774784.0,
        4294967296.0,
        18446744073709549568.0,
        9223372036854774784.0,
        -9223372036854777856.0,
        9007199254740993.0,
        709.78,
        710.0,
        -708.5,
        -745.2,
        -1100.0,
        std::f64::consts::PI,
        std::f64::consts::E,
        1e10,
        1e-10,
        1e300,
        1e308,
        0.75,
        0.9999999999999999,
        1.0000000000000002,
        -0.9999999999999999,
        10.0,
        1e-3,
        f64::from_bits(1),
        f64::from_bits(0x000f_ffff_ffff_ffff),
        f64::EPSILON,
        3.4028234663852886e38,
        f64::from_bits(0x7ff8_0000_0000_0001),
        f64::from_bits(0xfff8_0000_0000_0000),
    ];
    float_inputs(&core, &extra, 64, |rng, j| match j % 3 {
        0 => f64::from_bits(rng.next64()),
        1 => {
            let m = 1.0 + (rng.next64() >> 11) as f64 / (1u64 << 53) as f64;
            let sign = if rng.next32() & 1 == 1 { -1.0 } else { 1.0 };
            sign * m * 2f64.powi((rng.next32() % 121) as i32 - 60)
        }
        _ => (rng.next64() as f64 / u64::MAX as f64) * 2.2 - 1.1,
    })
}

// ---- the suites ---------------------------------------------------------------------------------

/// Rust's `as` from `$x[i]` to every numeric type.
macro_rules! casts {
    ($s:ident, $x:ident) => {
        $s.cast("i8", |i| $x[i] as i8);
        $s.cast("i16", |i| $x[i] as i16);
        $s.cast("i32", |i| $x[i] as i32);
        $s.cast("i64", |i| $x[i] as i64);
        $s.cast("u8", |i| $x[i] as u8);
        $s.cast("u16", |i| $x[i] as u16);
        $s.cast("u32", |i| $x[i] as u32);
        $s.cast("u64", |i| $x[i] as u64);
        $s.cast("f32", |i| $x[i] as f32);
        $s.cast("f64", |i| $x[i] as f64);
    };
}

/// PartialEq / PartialOrd.
macro_rules! comparisons {
    ($s:ident, $x:ident, $y:ident) => {
        $s.op("eq", "x, y", Cmp::Exact, |i| $x[i] == $y[i]);
        $s.op("ne", "x, y", Cmp::Exact, |i| $x[i] != $y[i]);
        $s.op("lt", "x, y", Cmp::Exact, |i| $x[i] < $y[i]);
        $s.op("le", "x, y", Cmp::Exact, |i| $x[i] <= $y[i]);
        $s.op("gt", "x, y", Cmp::Exact, |i| $x[i] > $y[i]);
        $s.op("ge", "x, y", Cmp::Exact, |i| $x[i] >= $y[i]);
    };
}

/// An integer tag: `$t` with the unsigned `$u` of the same width; `signed` or `unsigned`.
macro_rules! int_suite {
    ($name:ident, $t:ty, $tag:literal, $bits:literal, $kind:ident) => {
        fn $name() -> Suite {
            let inputs = int_inputs($bits, int_suite!(@signed $kind), |v| v as $t);
            let (x, y, z, e) =
                (inputs.x.clone(), inputs.y.clone(), inputs.z.clone(), inputs.e.clone());
            let mut s = Suite::new($tag, inputs.x, inputs.y, inputs.z, inputs.e);
            let (x, y, z, e) = (&x[..], &y[..], &z[..], &e[..]);
            comparisons!(s, x, y);
            s.op("min", "x, y", Cmp::Exact, |i| x[i].min(y[i]));
            s.op("max", "x, y", Cmp::Exact, |i| x[i].max(y[i]));
            s.op("add", "x, y", Cmp::Exact, |i| x[i].wrapping_add(y[i]));
            s.op("sub", "x, y", Cmp::Exact, |i| x[i].wrapping_sub(y[i]));
            s.op("mul", "x, y", Cmp::Exact, |i| x[i].wrapping_mul(y[i]));
            s.op("neg", "x", Cmp::Exact, |i| x[i].wrapping_neg());
            s.op("not", "x", Cmp::Exact, |i| !x[i]);
            s.op("and", "x, y", Cmp::Exact, |i| x[i] & y[i]);
            s.op("or", "x, y", Cmp::Exact, |i| x[i] | y[i]);
            s.op("xor", "x, y", Cmp::Exact, |i| x[i] ^ y[i]);
            s.op("shl", "x, e", Cmp::Exact, |i| x[i].wrapping_shl(e[i]));
            s.op("shr", "x, e", Cmp::Exact, |i| x[i].wrapping_shr(e[i]));
            s.op("pow", "x, e", Cmp::Exact, |i| x[i].wrapping_pow(e[i]));
            s.op("abs_diff", "x, y", Cmp::Exact, |i| x[i].abs_diff(y[i]));
            s.op("count_ones", "x", Cmp::Exact, |i| x[i].count_ones());
            s.op("count_zeros", "x", Cmp::Exact, |i| x[i].count_zeros());
            s.op("leading_zeros", "x", Cmp::Exact, |i| x[i].leading_zeros());
            s.op("trailing_zeros", "x", Cmp::Exact, |i| x[i].trailing_zeros());
            s.op("rotate_left", "x, e", Cmp::Exact, |i| x[i].rotate_left(e[i]));
            s.op("rotate_right", "x, e", Cmp::Exact, |i| x[i].rotate_right(e[i]));
            s.op("saturating_add", "x, y", Cmp::Exact, |i| x[i].saturating_add(y[i]));
            s.op("saturating_sub", "x, y", Cmp::Exact, |i| x[i].saturating_sub(y[i]));
            s.op("saturating_mul", "x, y", Cmp::Exact, |i| x[i].saturating_mul(y[i]));
            s.checked("div", "x, y", Enc::Int, |i| {
                let (a, b) = (x[i], y[i]);
                division(move || a / b)
            });
            s.checked("rem", "x, y", Enc::Int, |i| {
                let (a, b) = (x[i], y[i]);
                division(move || a % b)
            });
            s.checked("div_euclid", "x, y", Enc::Int, |i| {
                let (a, b) = (x[i], y[i]);
                division(move || a.div_euclid(b))
            });
            s.checked("rem_euclid", "x, y", Enc::Int, |i| {
                let (a, b) = (x[i], y[i]);
                division(move || a.rem_euclid(b))
            });
            s.checked("clamp", "x, y, z", Enc::Int, |i| {
                let (a, lo, hi) = (x[i], y[i], z[i]);
                clamping(a, lo, hi, move || a.clamp(lo, hi))
            });
            int_suite!(@extra $kind, s, x);
            casts!(s, x);
            s
        }
    };
    (@signed signed) => {
        true
    };
    (@signed unsigned) => {
        false
    };
    (@extra signed, $s:ident, $x:ident) => {
        $s.op("abs", "x", Cmp::Exact, |i| $x[i].wrapping_abs());
        $s.op("signum", "x", Cmp::Exact, |i| $x[i].signum());
        $s.op("is_positive", "x", Cmp::Exact, |i| $x[i].is_positive());
        $s.op("is_negative", "x", Cmp::Exact, |i| $x[i].is_negative());
    };
    (@extra unsigned, $s:ident, $x:ident) => {
        $s.op("is_power_of_two", "x", Cmp::Exact, |i| $x[i].is_power_of_two());
    };
}

int_suite!(suite_i8, i8, "i8", 8, signed);
int_suite!(suite_i16, i16, "i16", 16, signed);
int_suite!(suite_i32, i32, "i32", 32, signed);
int_suite!(suite_i64, i64, "i64", 64, signed);
int_suite!(suite_u8, u8, "u8", 8, unsigned);
int_suite!(suite_u16, u16, "u16", 16, unsigned);
int_suite!(suite_u32, u32, "u32", 32, unsigned);
int_suite!(suite_u64, u64, "u64", 64, unsigned);

fn suite_bool() -> Suite {
    let mut x = Vec::new();
    let mut y = Vec::new();
    let mut z = Vec::new();
    for k in 0..8u32 {
        x.push(k & 1 != 0);
        y.push(k & 2 != 0);
        z.push(k & 4 != 0);
    }
    let e = vec![0; x.len()];
    let mut s = Suite::new("bool", x.clone(), y.clone(), z, e);
    let (x, y) = (&x[..], &y[..]);
    comparisons!(s, x, y);
    s.op("min", "x, y", Cmp::Exact, |i| x[i].min(y[i]));
    s.op("max", "x, y", Cmp::Exact, |i| x[i].max(y[i]));
    s.op("not", "x", Cmp::Exact, |i| !x[i]);
    s.op("and", "x, y", Cmp::Exact, |i| x[i] & y[i]);
    s.op("or", "x, y", Cmp::Exact, |i| x[i] | y[i]);
    s.op("xor", "x, y", Cmp::Exact, |i| x[i] ^ y[i]);
    s.cast("i8", |i| x[i] as i8);
    s.cast("i16", |i| x[i] as i16);
    s.cast("i32", |i| x[i] as i32);
    s.cast("i64", |i| x[i] as i64);
    s.cast("u8", |i| x[i] as u8);
    s.cast("u16", |i| x[i] as u16);
    s.cast("u32", |i| x[i] as u32);
    s.cast("u64", |i| x[i] as u64);
    s.cast("f32", |i| x[i] as u8 as f32);
    s.cast("f64", |i| x[i] as u8 as f64);
    s
}

/// A float tag.
macro_rules! float_suite {
    ($name:ident, $f:ty, $tag:literal, $inputs:expr) => {
        fn $name() -> Suite {
            let inputs: Inputs<$f> = $inputs;
            let (x, y, z, e) =
                (inputs.x.clone(), inputs.y.clone(), inputs.z.clone(), inputs.e.clone());
            let mut s = Suite::new($tag, inputs.x, inputs.y, inputs.z, inputs.e);
            let (x, y, z, e) = (&x[..], &y[..], &z[..], &e[..]);
            let ulp = |name: &str| Cmp::Ulp(tolerance(name));
            comparisons!(s, x, y);
            // Exactly specified: bit for bit.
            s.op("add", "x, y", Cmp::Exact, |i| x[i] + y[i]);
            s.op("sub", "x, y", Cmp::Exact, |i| x[i] - y[i]);
            s.op("mul", "x, y", Cmp::Exact, |i| x[i] * y[i]);
            s.op("div", "faults, 0u, x, y", Cmp::Exact, |i| x[i] / y[i]);
            s.op("rem", "faults, 0u, x, y", Cmp::Exact, |i| x[i] % y[i]);
            s.op("neg", "x", Cmp::Exact, |i| -x[i]);
            s.op("abs", "x", Cmp::Exact, |i| x[i].abs());
            s.op("signum", "x", Cmp::Exact, |i| x[i].signum());
            s.op("sqrt", "x", Cmp::Exact, |i| x[i].sqrt());
            s.op("copysign", "x, y", Cmp::Exact, |i| x[i].copysign(y[i]));
            s.op("recip", "x", Cmp::Exact, |i| x[i].recip());
            s.op("mul_add", "x, y, z", Cmp::Exact, |i| x[i].mul_add(y[i], z[i]));
            s.op("floor", "x", Cmp::Exact, |i| x[i].floor());
            s.op("ceil", "x", Cmp::Exact, |i| x[i].ceil());
            s.op("round", "x", Cmp::Exact, |i| x[i].round());
            s.op("round_ties_even", "x", Cmp::Exact, |i| x[i].round_ties_even());
            s.op("trunc", "x", Cmp::Exact, |i| x[i].trunc());
            s.op("fract", "x", Cmp::Exact, |i| x[i].fract());
            s.op("min", "x, y", Cmp::MinMax, |i| x[i].min(y[i]));
            s.op("max", "x, y", Cmp::MinMax, |i| x[i].max(y[i]));
            s.op("div_euclid", "faults, 0u, x, y", Cmp::Exact, |i| x[i].div_euclid(y[i]));
            s.op("rem_euclid", "faults, 0u, x, y", Cmp::Exact, |i| x[i].rem_euclid(y[i]));
            s.op("powi", "x, (pc_i32)e", Cmp::Exact, |i| x[i].powi(e[i] as i32));
            s.op("to_degrees", "x", Cmp::Exact, |i| x[i].to_degrees());
            s.op("to_radians", "x", Cmp::Exact, |i| x[i].to_radians());
            // Left to libm: within the tolerances.
            s.op("cbrt", "x", ulp("cbrt"), |i| x[i].cbrt());
            s.op("exp", "x", ulp("exp"), |i| x[i].exp());
            s.op("exp2", "x", ulp("exp2"), |i| x[i].exp2());
            s.op("exp_m1", "x", ulp("exp_m1"), |i| x[i].exp_m1());
            s.op("ln", "x", ulp("ln"), |i| x[i].ln());
            s.op("log2", "x", ulp("log2"), |i| x[i].log2());
            s.op("log10", "x", ulp("log10"), |i| x[i].log10());
            s.op("ln_1p", "x", ulp("ln_1p"), |i| x[i].ln_1p());
            s.op("log", "x, y", ulp("log"), |i| x[i].log(y[i]));
            s.op("powf", "x, y", ulp("powf"), |i| x[i].powf(y[i]));
            s.op("sin", "x", ulp("sin"), |i| x[i].sin());
            s.op("cos", "x", ulp("cos"), |i| x[i].cos());
            s.op("tan", "x", ulp("tan"), |i| x[i].tan());
            s.op("asin", "x", ulp("asin"), |i| x[i].asin());
            s.op("acos", "x", ulp("acos"), |i| x[i].acos());
            s.op("atan", "x", ulp("atan"), |i| x[i].atan());
            s.op("atan2", "x, y", ulp("atan2"), |i| x[i].atan2(y[i]));
            s.op("sinh", "x", ulp("sinh"), |i| x[i].sinh());
            s.op("cosh", "x", ulp("cosh"), |i| x[i].cosh());
            s.op("tanh", "x", ulp("tanh"), |i| x[i].tanh());
            s.op("asinh", "x", ulp("asinh"), |i| x[i].asinh());
            s.op("acosh", "x", ulp("acosh"), |i| x[i].acosh());
            s.op("atanh", "x", ulp("atanh"), |i| x[i].atanh());
            s.op("hypot", "x, y", ulp("hypot"), |i| x[i].hypot(y[i]));
            // Classification.
            s.op("is_nan", "x", Cmp::Exact, |i| x[i].is_nan());
            s.op("is_infinite", "x", Cmp::Exact, |i| x[i].is_infinite());
            s.op("is_finite", "x", Cmp::Exact, |i| x[i].is_finite());
            s.op("is_sign_positive", "x", Cmp::Exact, |i| x[i].is_sign_positive());
            s.op("is_sign_negative", "x", Cmp::Exact, |i| x[i].is_sign_negative());
            s.checked("clamp", "x, y, z", <$f as Bits>::ENC, |i| {
                let (a, lo, hi) = (x[i], y[i], z[i]);
                clamping(a, lo, hi, move || a.clamp(lo, hi))
            });
            casts!(s, x);
            s
        }
    };
}

float_suite!(suite_f32, f32, "f32", f32_inputs());
float_suite!(suite_f64, f64, "f64", f64_inputs());

// ---- running and comparing ----------------------------------------------------------------------

/// Whether `bits` (of the encoding `enc`) is a NaN.
fn is_nan(enc: Enc, bits: u64) -> bool {
    match enc {
        Enc::F32 => f32::from_bits(bits as u32).is_nan(),
        Enc::F64 => f64::from_bits(bits).is_nan(),
        Enc::Int => false,
    }
}

/// The position of a float among all floats of its type, in order (+0.0 and -0.0 one apart).
fn ordinal(enc: Enc, bits: u64) -> i128 {
    let width = if enc == Enc::F32 { 32 } else { 64 };
    let magnitude = (bits & ((1u64 << (width - 1)) - 1)) as i128;
    if bits >> (width - 1) & 1 == 1 {
        -magnitude - 1
    } else {
        magnitude
    }
}

/// The distance in ULPs between two floats; `None` when exactly one is a NaN.
fn ulps(enc: Enc, a: u64, b: u64) -> Option<u64> {
    match (is_nan(enc, a), is_nan(enc, b)) {
        (true, true) => Some(0),
        (false, false) => Some((ordinal(enc, a) - ordinal(enc, b)).unsigned_abs() as u64),
        _ => None,
    }
}

fn show(enc: Enc, bits: u64) -> String {
    match enc {
        Enc::Int => format!("{bits} ({:#x}, as i64 {})", bits, bits as i64),
        Enc::F32 => format!("{:?} ({:#010x})", f32::from_bits(bits as u32), bits),
        Enc::F64 => format!("{:?} ({:#018x})", f64::from_bits(bits), bits),
    }
}

fn floats_equal(enc: Enc, a: u64, b: u64) -> bool {
    match enc {
        Enc::F32 => f32::from_bits(a as u32) == f32::from_bits(b as u32),
        _ => f64::from_bits(a) == f64::from_bits(b),
    }
}

#[derive(Default)]
struct Report {
    failures: Vec<String>,
    failed: usize,
    /// The largest ULP distance seen, per libm function and tag.
    max_ulps: BTreeMap<String, u64>,
}

impl Report {
    fn fail(&mut self, message: String) {
        self.failed += 1;
        if self.failures.len() < 60 {
            self.failures.push(message);
        }
    }
}

fn upload(device: &dyn Device, data: &[u8]) -> Buffer {
    let buffer = device.alloc(data.len().max(1)).unwrap_or_else(|e| panic!("{e}"));
    if !data.is_empty() {
        device.write(&buffer, 0, data).unwrap_or_else(|e| panic!("{e}"));
    }
    buffer
}

fn run_suite(
    device: &dyn Device,
    program: &dyn comprehension_runtime::gpu::device::Program,
    suite: &Suite,
    report: &mut Report,
) {
    let n = suite.n;
    let x = upload(device, &suite.x);
    let y = upload(device, &suite.y);
    let z = upload(device, &suite.z);
    let e = upload(device, &bytes(&suite.e));
    let out = upload(device, &vec![0u8; suite.cases.len() * n * 8]);
    let faults = upload(device, &vec![0u8; suite.slots * n * 32]);
    let args = [
        Arg::Buffer(&x),
        Arg::Buffer(&y),
        Arg::Buffer(&z),
        Arg::Buffer(&e),
        Arg::Buffer(&out),
        Arg::Buffer(&faults),
        Arg::U64(n as u64),
    ];
    let kernel = format!("check_{}", suite.tag);
    device.launch(program, &kernel, n as u64, 64, &args).unwrap_or_else(|e| panic!("{e}"));
    let mut raw = vec![0u8; suite.cases.len() * n * 8];
    device.read(&out, 0, &mut raw).unwrap_or_else(|e| panic!("{e}"));
    let results: Vec<u64> =
        raw.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
    let mut raw = vec![0u8; suite.slots * n * 32];
    device.read(&faults, 0, &mut raw).unwrap_or_else(|e| panic!("{e}"));
    let fault_words: Vec<u32> =
        raw.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();

    for (k, case) in suite.cases.iter().enumerate() {
        for (i, want) in case.expect.iter().enumerate() {
            let got = results[k * n + i];
            let ok = match (case.enc, case.cmp) {
                (Enc::Int, _) => got == want.value,
                (enc, Cmp::Exact) => {
                    got == want.value || is_nan(enc, got) && is_nan(enc, want.value)
                }
                (enc, Cmp::MinMax) => {
                    let (xb, yb) = suite.xy_bits[i];
                    got == want.value
                        || is_nan(enc, got) && is_nan(enc, want.value)
                        || floats_equal(enc, xb, yb) && (got == xb || got == yb)
                }
                (enc, Cmp::Ulp(tolerance)) => match ulps(enc, got, want.value) {
                    Some(d) => {
                        let max = report.max_ulps.entry(case.op.clone()).or_insert(0);
                        *max = (*max).max(d);
                        d <= tolerance
                    }
                    None => false,
                },
            };
            if !ok {
                let allowed = match case.cmp {
                    Cmp::Ulp(t) => format!(" (allowed: {t} ulp)"),
                    _ => String::new(),
                };
                report.fail(format!(
                    "{} with {}: the device gives {}, Rust {}{allowed}",
                    case.op,
                    (suite.describe)(i),
                    show(case.enc, got),
                    show(case.enc, want.value)
                ));
            }
            if let Some(slot) = case.slot {
                let words = &fault_words[(slot * n + i) * 8..(slot * n + i) * 8 + 8];
                let expected: [u32; 8] = match want.fault {
                    None => [0; 8],
                    Some((code, a0, a1)) => [
                        code,
                        1000 + k as u32,
                        a0 as u32,
                        (a0 >> 32) as u32,
                        a1 as u32,
                        (a1 >> 32) as u32,
                        0,
                        0,
                    ],
                };
                if words != expected {
                    report.fail(format!(
                        "{} with {}: the fault slot holds {words:?}, expected {expected:?}",
                        case.op,
                        (suite.describe)(i)
                    ));
                }
            }
        }
    }
}

/// The device of each backend these tests run on (see `support::devices`).
fn devices() -> Vec<(Backend, &'static dyn Device)> {
    support::devices()
        .iter()
        .map(|&backend| {
            let device = comprehension_runtime::gpu::device(backend)
                .unwrap_or_else(|e| panic!("{backend} is present: {e}"));
            (backend, device)
        })
        .collect()
}

/// `#define PC_HAVE_F64`, the prelude, scalar.h, then `kernels`.
fn program_source(kernels: &str) -> String {
    format!("#define PC_HAVE_F64 1\n{}\n{SCALAR}\n{kernels}", prelude())
}

#[test]
fn every_operation_of_every_tag_matches_rust() {
    for (backend, device) in devices() {
        every_operation_on(backend, device);
    }
}

fn every_operation_on(backend: Backend, device: &dyn Device) {
    assert!(device.info().fp64, "the {backend} device computes in f64");
    let started = std::time::Instant::now();
    let suites = vec![
        suite_i8(),
        suite_i16(),
        suite_i32(),
        suite_i64(),
        suite_u8(),
        suite_u16(),
        suite_u32(),
        suite_u64(),
        suite_bool(),
        suite_f32(),
        suite_f64(),
    ];
    let kernels: String = suites.iter().map(Suite::kernel).collect::<Vec<_>>().join("\n");
    let host = started.elapsed();
    let program = device.build(&program_source(&kernels), "").unwrap_or_else(|e| panic!("{e}"));
    let built = started.elapsed();
    let mut report = Report::default();
    let mut checked = 0;
    for suite in &suites {
        run_suite(device, &*program, suite, &mut report);
        checked += suite.n * suite.cases.len();
    }
    println!(
        "{backend}: {checked} results of {} operations checked (host {host:?}, build {:?}, total {:?})",
        suites.iter().map(|s| s.cases.len()).sum::<usize>(),
        built - host,
        started.elapsed()
    );
    println!("largest ULP errors observed (libm functions):");
    for (op, ulps) in &report.max_ulps {
        println!("  {op}: {ulps}");
    }
    assert!(
        report.failed == 0,
        "{backend}: {} of {checked} results differ from Rust; the first {}:\n{}",
        report.failed,
        report.failures.len(),
        report.failures.join("\n")
    );
}

#[test]
fn the_first_fault_of_a_run_wins() {
    for (backend, device) in devices() {
        first_fault_on(backend, device);
    }
}

fn first_fault_on(backend: Backend, device: &dyn Device) {
    let kernels = "PC_KERNEL void faults(PC_GLOBAL pc_u32* fault, PC_GLOBAL pc_u64* out) {\n\
        \x20 out[0] = (pc_u64)pc_div_i32(fault, 7u, PC_MIN_i32, -1);\n\
        \x20 out[1] = (pc_u64)pc_rem_u64(fault, 8u, 5u, 0u);\n\
        \x20 out[2] = PC_F64_BITS(pc_clamp_f64(fault, 9u, 1.5, 2.0, 1.0));\n\
        }\n\
        PC_KERNEL void clamp_bounds(PC_GLOBAL pc_u32* fault, PC_GLOBAL pc_u64* out) {\n\
        \x20 out[0] = (pc_u64)pc_clamp_i8(fault, 11u, 5, -1, -2);\n\
        \x20 out[1] = (pc_u64)pc_div_i8(fault, 12u, 1, 0);\n\
        }\n";
    let program = device.build(&program_source(kernels), "").unwrap_or_else(|e| panic!("{e}"));
    let run = |kernel: &str| {
        let fault = upload(device, &[0u8; 32]);
        let out = upload(device, &[0u8; 24]);
        device
            .launch(&*program, kernel, 1, 1, &[Arg::Buffer(&fault), Arg::Buffer(&out)])
            .unwrap_or_else(|e| panic!("{e}"));
        let mut raw = [0u8; 32];
        device.read(&fault, 0, &mut raw).unwrap_or_else(|e| panic!("{e}"));
        let words: Vec<u32> =
            raw.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
        let mut raw = [0u8; 24];
        device.read(&out, 0, &mut raw).unwrap_or_else(|e| panic!("{e}"));
        let values: Vec<u64> =
            raw.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
        (words, values)
    };
    // i32::MIN / -1 faults first; the remainder by zero and the clamp with min > max after it
    // are not recorded, but return their dummy values (0, and x).
    let (words, values) = run("faults");
    assert_eq!(words, [DIV_OVERFLOW, 7, 0, 0, 0, 0, 0, 0], "{backend}");
    assert_eq!(values, [0, 0, 1.5f64.to_bits()], "{backend}");
    // clamp records its bounds: an i8 bound as its value in u64 (sign-extended).
    let (words, values) = run("clamp_bounds");
    assert_eq!(words, [CLAMP, 11, u32::MAX, u32::MAX, (-2i32) as u32, u32::MAX, 0, 0], "{backend}");
    assert_eq!(values, [5, 0, 0], "{backend}");
}

#[test]
fn scalar_h_builds_without_f64() {
    // Every f64 definition is inside `#ifdef PC_HAVE_F64` (without it there is no pc_f64), so
    // devices without fp64 build the header too.
    let source = format!(
        "{}\n{SCALAR}\nPC_KERNEL void f(PC_GLOBAL pc_f32* out) {{\n\
         \x20 out[0] = pc_cast_i64_f32(pc_pow_i64(3, 5u)) + pc_sqrt_f32(out[0]);\n}}\n",
        prelude()
    );
    for (backend, device) in devices() {
        device.build(&source, "").unwrap_or_else(|e| panic!("{backend}: {e}"));
    }
}
