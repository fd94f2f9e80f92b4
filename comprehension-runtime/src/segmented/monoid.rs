//! Monoids: the associative operators with an identity that a device runs as well as the host.
//!
//! The free functions of [`crate::segmented`] take any Rust closure as their operator, so they
//! run on the host. A [`Monoid`] is an operator the kernels know — [`Sum`], [`Product`],
//! [`Min`], [`Max`], [`BitAnd`], [`BitOr`], [`BitXor`] on the primitive numbers — and its
//! methods run on the backend in effect, as a comprehension does: on the device when one is
//! forced (`PARCOMP_BACKEND=opencl`) or present and the input is large enough
//! ([`device_threshold`](crate::device_threshold)), on the host otherwise, with the same
//! results. `PARCOMP_TRACE=1` and [`trace::record`](crate::trace::record) say where each call
//! ran.

use super::{reduce_rows, scan_exclusive, scan_inclusive, segmented_reduce, segmented_scan};
use crate::backend;
use crate::gpu::segmented::{self as device, Output, Segments};
use crate::gpu::types::{DeviceType, TypeDesc};
use crate::gpu::PrimitivePrograms;
use crate::site::Site;
use crate::Jagged;
use rayon::prelude::*;

mod sealed {
    pub trait Sealed {}
}

/// An associative operator with an identity, known to the device's kernels as well as to the
/// host: [`Sum`], [`Product`], [`Min`], [`Max`], [`BitAnd`], [`BitOr`], [`BitXor`].
///
/// Its methods are the segmented primitives of [`crate::segmented`] with the operator and the
/// identity given by the monoid; they run on a device when the backend in effect puts them
/// there, and give the same results on every backend (for floats, up to the bracketing of
/// the operations: see the [module documentation](crate::segmented)).
///
/// ```
/// use comprehension_runtime::segmented::{Max, Monoid, Sum};
/// use comprehension_runtime::Jagged;
/// assert_eq!(Sum.scan_exclusive(&[3usize, 0, 2]), vec![0, 3, 3]);
/// assert_eq!(Sum.segmented_reduce(&[true, false, true, false, false], &[1, 2, 3, 4, 5]), vec![3, 12]);
/// let rows = Jagged::from_lengths(&[2, 0, 3], vec![4.0, 1.5, 2.0, 9.0, -1.0]).unwrap();
/// let longest: Vec<f64> = Max.reduce_rows(&rows);
/// assert_eq!((longest[0], longest[2]), (4.0, 9.0));
/// assert!(longest[1].is_nan()); // an empty row: NaN, the identity of f64::max
/// ```
pub trait Monoid<T: DeviceType>: sealed::Sealed + Copy + Send + Sync + 'static {
    /// The identity: `combine(identity, x) == x == combine(x, identity)`.
    fn identity(self) -> T;

    /// Combines two values, `a` first.
    fn combine(self, a: T, b: T) -> T;

    /// The kernel dialect's name of the operation (`add`, `mul`, `min`, ...).
    #[doc(hidden)]
    fn kernel_op(self) -> &'static str;

    /// The combination of all `values`, in order (the identity if there are none).
    fn reduce(self, values: &[T]) -> T {
        static SITE: Site = Site::api("parcomp::segmented::Monoid::reduce");
        let host = || {
            vec![if backend::host_parallel() {
                values.par_iter().copied().reduce(|| self.identity(), |a, b| self.combine(a, b))
            } else {
                values.iter().fold(self.identity(), |a, &b| self.combine(a, b))
            }]
        };
        // One segment, one result (the identity when there are no values).
        run(self, &SITE, values.len() as u64, values, Segments::Whole, Output::PerSegment, host)[0]
    }

    /// The inclusive scan of `values`, as [`scan_inclusive`].
    fn scan_inclusive(self, values: &[T]) -> Vec<T> {
        static SITE: Site = Site::api("parcomp::segmented::Monoid::scan_inclusive");
        run(self, &SITE, values.len() as u64, values, Segments::Whole, Output::Inclusive, || {
            scan_inclusive(values, self.identity(), |a, b| self.combine(a, b))
        })
    }

    /// The exclusive scan of `values`, as [`scan_exclusive`].
    fn scan_exclusive(self, values: &[T]) -> Vec<T> {
        static SITE: Site = Site::api("parcomp::segmented::Monoid::scan_exclusive");
        run(self, &SITE, values.len() as u64, values, Segments::Whole, Output::Exclusive, || {
            scan_exclusive(values, self.identity(), |a, b| self.combine(a, b))
        })
    }

    /// The inclusive scan restarting at every segment start, as [`segmented_scan`].
    ///
    /// # Panics
    ///
    /// If `flags` and `values` differ in length.
    fn segmented_scan(self, flags: &[bool], values: &[T]) -> Vec<T> {
        static SITE: Site = Site::api("parcomp::segmented::Monoid::segmented_scan");
        super::check_lengths("Monoid::segmented_scan", flags.len(), values.len());
        let segments = Segments::Flags(flags);
        run(self, &SITE, values.len() as u64, values, segments, Output::Inclusive, || {
            segmented_scan(flags, values, self.identity(), |a, b| self.combine(a, b))
        })
    }

    /// One combination per flag-delimited segment, as [`segmented_reduce`].
    ///
    /// # Panics
    ///
    /// If `flags` and `values` differ in length.
    fn segmented_reduce(self, flags: &[bool], values: &[T]) -> Vec<T> {
        static SITE: Site = Site::api("parcomp::segmented::Monoid::segmented_reduce");
        super::check_lengths("Monoid::segmented_reduce", flags.len(), values.len());
        let segments = Segments::Flags(flags);
        run(self, &SITE, values.len() as u64, values, segments, Output::PerSegment, || {
            segmented_reduce(flags, values, self.identity(), |a, b| self.combine(a, b))
        })
    }

    /// One combination per row (the identity for an empty row), as [`reduce_rows`].
    fn reduce_rows(self, rows: &Jagged<T>) -> Vec<T> {
        static SITE: Site = Site::api("parcomp::segmented::Monoid::reduce_rows");
        let work = (rows.values().len() as u64).saturating_add(rows.len() as u64);
        let segments = Segments::Offsets(rows.offsets());
        run(self, &SITE, work, rows.values(), segments, Output::PerSegment, || {
            reduce_rows(rows, self.identity(), |a, b| self.combine(a, b))
        })
    }
}

/// Runs one of `monoid`'s primitives where the backend in effect puts it: on a device, the
/// segmented scan of `values` cut into `segments`, giving `output`; on the host, `host`.
fn run<T: DeviceType, M: Monoid<T>>(
    monoid: M,
    site: &'static Site,
    work: u64,
    values: &[T],
    segments: Segments<'_>,
    output: Output,
    host: impl FnOnce() -> Vec<T>,
) -> Vec<T> {
    let op = monoid.kernel_op();
    let programs = match T::desc() {
        TypeDesc::Prim(prim) => PrimitivePrograms::Monoid { tag: prim.tag(), op },
        _ => PrimitivePrograms::Runtime,
    };
    let on_device = |b| device::monoid(b, site, op, monoid.identity(), values, segments, output);
    crate::dispatch::primitive(site, programs, || work, on_device, host)
}

/// Addition: integers wrap (as a release build's `+`); the float identity is `-0.0`, so that
/// the sum of `[-0.0]` is `-0.0`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sum;

/// Multiplication: integers wrap (as a release build's `*`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Product;

/// The smaller value: `Ord::min` for integers (identity `MAX`); `f64::min` for floats, which
/// ignores a NaN operand, so that NaN is its identity: the minimum of floats that are all NaN,
/// or of none, is NaN (`+∞` would not be an identity: `f64::min(+∞, NaN)` is `+∞`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Min;

/// The larger value: `Ord::max` for integers (identity `MIN`); `f64::max` for floats, which
/// ignores a NaN operand, so that NaN is its identity: the maximum of floats that are all NaN,
/// or of none, is NaN.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Max;

/// Bitwise and of integers (identity: all ones).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BitAnd;

/// Bitwise or of integers (identity 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BitOr;

/// Bitwise exclusive or of integers (identity 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BitXor;

impl sealed::Sealed for Sum {}
impl sealed::Sealed for Product {}
impl sealed::Sealed for Min {}
impl sealed::Sealed for Max {}
impl sealed::Sealed for BitAnd {}
impl sealed::Sealed for BitOr {}
impl sealed::Sealed for BitXor {}

macro_rules! monoid {
    ($monoid:ident, $op:literal, [$($t:ty),*], |$a:ident, $b:ident| $combine:expr, $identity:expr) => {$(
        impl Monoid<$t> for $monoid {
            #[inline]
            fn identity(self) -> $t {
                #[allow(dead_code)]
                type T = $t;
                $identity
            }
            #[inline]
            fn combine(self, $a: $t, $b: $t) -> $t {
                $combine
            }
            fn kernel_op(self) -> &'static str {
                $op
            }
        }
    )*};
}

macro_rules! integers {
    ($($t:ty),*) => {
        monoid!(Sum, "add", [$($t),*], |a, b| a.wrapping_add(b), 0);
        monoid!(Product, "mul", [$($t),*], |a, b| a.wrapping_mul(b), 1);
        monoid!(Min, "min", [$($t),*], |a, b| Ord::min(a, b), T::MAX);
        monoid!(Max, "max", [$($t),*], |a, b| Ord::max(a, b), T::MIN);
        monoid!(BitAnd, "and", [$($t),*], |a, b| a & b, !0);
        monoid!(BitOr, "or", [$($t),*], |a, b| a | b, 0);
        monoid!(BitXor, "xor", [$($t),*], |a, b| a ^ b, 0);
    };
}

integers!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

macro_rules! floats {
    ($($t:ty),*) => {
        monoid!(Sum, "add", [$($t),*], |a, b| a + b, -0.0);
        monoid!(Product, "mul", [$($t),*], |a, b| a * b, 1.0);
        monoid!(Min, "min", [$($t),*], |a, b| a.min(b), T::NAN);
        monoid!(Max, "max", [$($t),*], |a, b| a.max(b), T::NAN);
    };
}

floats!(f32, f64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identities_are_neutral() {
        for x in [0i32, 1, -7, i32::MIN, i32::MAX] {
            assert_eq!(Sum.combine(Monoid::<i32>::identity(Sum), x), x);
            assert_eq!(Product.combine(x, Monoid::<i32>::identity(Product)), x);
            assert_eq!(Min.combine(Monoid::<i32>::identity(Min), x), x);
            assert_eq!(Max.combine(x, Monoid::<i32>::identity(Max)), x);
            assert_eq!(BitAnd.combine(Monoid::<i32>::identity(BitAnd), x), x);
            assert_eq!(BitOr.combine(x, Monoid::<i32>::identity(BitOr)), x);
            assert_eq!(BitXor.combine(Monoid::<i32>::identity(BitXor), x), x);
        }
        let zero: f64 = Sum.combine(Monoid::<f64>::identity(Sum), -0.0);
        assert!(zero == 0.0 && zero.is_sign_negative());
        assert_eq!(Min.combine(Monoid::<f64>::identity(Min), 2.0), 2.0);
        assert_eq!(Max.combine(-3.0f32, Monoid::<f32>::identity(Max)), -3.0);
        assert!(Min.combine(Monoid::<f64>::identity(Min), f64::NAN).is_nan());
    }
}
