//! The device half of one run of a comprehension, as the emitted code builds it.
//!
//! The macro compiles a comprehension twice: into the CPU pipeline, and — when every part of it
//! is in the device subset — into kernel source and a [`DevicePlan`]. At the call site the
//! emitted code then *observes* what the kernels need: the root's elements, every captured
//! value, the type of the head. Whether a Rust type can live on a device is decided by
//! autoref dispatch on a `Probe` ([`probe`]): `(&&Probe::of(&x)).capture_slice(&x)` picks
//! the device implementation when the type is a [`DeviceType`], and otherwise one that says
//! why not — no specialization, no trait bound that could stop a program from compiling. The
//! observations are borrowed trait objects: building an [`Offload`] allocates nothing and
//! copies nothing, so a run that stays on the CPU pays for nothing but a few pointers.

pub use super::host_data::{
    DynElements, DynJagged, DynRange, DynSlice, DynValue, HostData, IntegerBits, Observed, Records,
    Unrepresentable,
};
use super::output_codec::OutputCodec;
use super::plan::DevicePlan;

/// What the device holds, for the reasons a comprehension stays on the CPU: a struct lacking
/// the derive is the common case.
const DEVICE_VALUES: &str = "device values are numbers, `bool`, `char`, tuples, `Option`s \
                             and arrays `[T; N]` of them, and structs and fieldless enums with \
                             `#[derive(parcomp::DeviceValue)]`";
use super::types::DeviceType;
use std::marker::PhantomData;

/// The type of a comprehension's elements, for the emitted code to ask (see [`probe`]).
pub struct OutputProbe<T>(pub(crate) PhantomData<T>);

/// The probes of the emitted code: `(&&Probe::of(&x)).capture_scalar(&x)` and the like. Each
/// question has two answers, in two traits: one for `&Probe<T>` that needs `T` to be a device
/// type, and one for `Probe<T>` that says why the value cannot be on a device. Method
/// resolution tries the receiver `&&Probe<T>` by value first, so the first applies whenever
/// its bound holds.
pub mod probe {
    use super::*;

    /// Something whose type the emitted code asks about.
    pub struct Probe<T: ?Sized>(PhantomData<fn(&T)>);

    impl<T: ?Sized> Probe<T> {
        /// A probe of `value`'s type.
        pub fn of(value: &T) -> Self {
            let _ = value;
            Probe(PhantomData)
        }
    }

    fn unrepresentable<T: ?Sized>() -> Unrepresentable {
        Unrepresentable { type_name: std::any::type_name::<T>() }
    }

    /// A captured scalar on the device (asked as `(&&&Probe::of(x)).capture_scalar(x)`).
    pub trait ScalarOnDevice<'a, T: ?Sized> {
        /// The value, for the device.
        fn capture_scalar(&self, value: &'a T) -> Observed<'a>;
    }
    impl<'a, T: DeviceType + 'a> ScalarOnDevice<'a, T> for &&Probe<T> {
        fn capture_scalar(&self, value: &'a T) -> Observed<'a> {
            Ok(HostData::Scalar(value))
        }
    }
    /// A captured reference to a scalar on the device.
    pub trait ScalarRefOnDevice<'a, T: ?Sized> {
        /// The value behind the reference, for the device.
        fn capture_scalar(&self, value: &'a T) -> Observed<'a>;
    }
    impl<'a, 'b: 'a, U: DeviceType + 'b> ScalarRefOnDevice<'a, &'b U> for &Probe<&'b U> {
        fn capture_scalar(&self, value: &'a &'b U) -> Observed<'a> {
            Ok(HostData::Scalar(*value))
        }
    }
    /// A captured scalar that cannot be on the device.
    pub trait ScalarOnHost<'a, T: ?Sized> {
        /// Why the value cannot be on the device.
        fn capture_scalar(&self, value: &'a T) -> Observed<'a>;
    }
    impl<'a, T: ?Sized> ScalarOnHost<'a, T> for Probe<T> {
        fn capture_scalar(&self, _: &'a T) -> Observed<'a> {
            Err(unrepresentable::<T>())
        }
    }

    /// A question with its two answers: `$device`, for `&Probe<T>` when `T: $bound`, hands the
    /// value over as `HostData::$data`; `$host`, for any `Probe<T>`, says why it cannot be on
    /// the device.
    macro_rules! question {
        (
            $(#[$device_doc:meta])* $device:ident: $bound:ident => $data:ident,
            $(#[$host_doc:meta])* $host:ident,
            $method:ident
        ) => {
            $(#[$device_doc])*
            pub trait $device<'a, T: ?Sized> {
                /// The value, for the device.
                fn $method(&self, value: &'a T) -> Observed<'a>;
            }
            impl<'a, T: $bound + 'a> $device<'a, T> for &Probe<T> {
                fn $method(&self, value: &'a T) -> Observed<'a> {
                    Ok(HostData::$data(value))
                }
            }
            $(#[$host_doc])*
            pub trait $host<'a, T: ?Sized> {
                /// Why the value cannot be on the device.
                fn $method(&self, value: &'a T) -> Observed<'a>;
            }
            impl<'a, T: ?Sized> $host<'a, T> for Probe<T> {
                fn $method(&self, _: &'a T) -> Observed<'a> {
                    Err(unrepresentable::<T>())
                }
            }
        };
    }

    question! {
        /// A captured collection on the device.
        SliceOnDevice: DynSlice => Slice,
        /// A captured collection that cannot be on the device.
        SliceOnHost,
        capture_slice
    }
    question! {
        /// A captured array of rows on the device.
        JaggedOnDevice: DynJagged => Jagged,
        /// A captured array of rows that cannot be on the device.
        JaggedOnHost,
        capture_jagged
    }
    question! {
        /// The first generator, an integer or `char` range, computed on the device.
        RangeOnDevice: DynRange => Range,
        /// A first generator that is not an integer or `char` range.
        RangeOnHost,
        root_range
    }
    question! {
        /// The first generator's rows, when its variable holds a row that a later generator
        /// reads (`row <- &m, v <- row`): the device runs over the row indices.
        RowsOnDevice: DynJagged => Jagged,
        /// A first generator whose rows cannot be on the device.
        RowsOnHost,
        root_rows
    }
    question! {
        /// The first generator, any source of device values: its elements are copied.
        ElementsOnDevice: DynElements => Elements,
        /// A first generator whose elements cannot be on the device.
        ElementsOnHost,
        root_elements
    }

    /// The elements of a comprehension, when they are rows of device values (asked as
    /// `(&&&OutputProbe).output_codec()`).
    pub trait OutputRowsOnDevice<T> {
        /// How to read them back.
        fn output_codec(&self) -> Option<OutputCodec<T>>;
    }
    impl<U: DeviceType> OutputRowsOnDevice<Vec<U>> for &&OutputProbe<Vec<U>> {
        fn output_codec(&self) -> Option<OutputCodec<Vec<U>>> {
            Some(OutputCodec::rows())
        }
    }
    /// The elements of a comprehension, when they are device values.
    pub trait OutputOnDevice<T> {
        /// How to read them back.
        fn output_codec(&self) -> Option<OutputCodec<T>>;
    }
    impl<T: DeviceType> OutputOnDevice<T> for &OutputProbe<T> {
        fn output_codec(&self) -> Option<OutputCodec<T>> {
            Some(OutputCodec::of())
        }
    }
    /// The elements of a comprehension, when they cannot be on a device.
    pub trait OutputOnHost<T> {
        /// `None`: they cannot come back from a device.
        fn output_codec(&self) -> Option<OutputCodec<T>>;
    }
    impl<T> OutputOnHost<T> for OutputProbe<T> {
        fn output_codec(&self) -> Option<OutputCodec<T>> {
            None
        }
    }
}

/// The device half of one run: the plan and what was observed at the call site.
pub struct Offload<'a, T> {
    plan: Result<&'static DevicePlan, &'static str>,
    required: bool,
    root: Option<Observed<'a>>,
    captures: &'a [Observed<'a>],
    par_fns: &'a [&'static str],
    output: Option<OutputCodec<T>>,
}

impl<'a, T> Offload<'a, T> {
    /// The device half of a comprehension that cannot run on a device, and why.
    pub fn host_only(why: &'static str) -> Self {
        Offload {
            plan: Err(why),
            required: false,
            root: None,
            captures: &[],
            par_fns: &[],
            output: None,
        }
    }

    /// The device half of a comprehension whose every part the device can express.
    /// `required`: written with `@gpu`.
    pub fn new(
        plan: &'static DevicePlan,
        root: Observed<'a>,
        captures: &'a [Observed<'a>],
        par_fns: &'a [&'static str],
        output: Option<OutputCodec<T>>,
        required: bool,
    ) -> Self {
        Offload { plan: Ok(plan), required, root: Some(root), captures, par_fns, output }
    }

    /// Whether it was written with `@gpu`.
    pub(crate) fn required(&self) -> bool {
        self.required
    }

    /// `Ok` if the device can run it, else why not (for the trace and `par_explain!`).
    pub(crate) fn capable(&self) -> Result<(), String> {
        let plan = self.plan.map_err(str::to_string)?;
        if let Some(Err(e)) = &self.root {
            return Err(format!(
                "the elements of its first generator (`{}`) are not device values ({DEVICE_VALUES})",
                readable(e.type_name)
            ));
        }
        for (k, capture) in self.captures.iter().enumerate() {
            if let Err(e) = capture {
                let name = plan.captures.get(k).map_or("a captured value", |c| c.text);
                return Err(format!(
                    "`{name}` is a `{}`, which the device cannot hold ({DEVICE_VALUES})",
                    readable(e.type_name)
                ));
            }
        }
        if self.output.is_none() {
            return Err(format!(
                "its elements are `{}`, which the device cannot hold ({DEVICE_VALUES})",
                readable(std::any::type_name::<T>())
            ));
        }
        Ok(())
    }

    /// The plan, the root, the captures, the `#[par_fn]`s and the output codec of a capable
    /// offload.
    pub(crate) fn parts(&self) -> Option<OffloadParts<'_, 'a, T>> {
        let plan = self.plan.ok()?;
        let root = self.root.as_ref()?.as_ref().ok()?;
        let output = self.output?;
        Some(OffloadParts { plan, root, captures: self.captures, par_fns: self.par_fns, output })
    }
}

/// The parts of a capable [`Offload`].
pub(crate) struct OffloadParts<'o, 'a, T> {
    pub(crate) plan: &'static DevicePlan,
    pub(crate) root: &'o HostData<'a>,
    pub(crate) captures: &'a [Observed<'a>],
    pub(crate) par_fns: &'a [&'static str],
    pub(crate) output: OutputCodec<T>,
}

/// A type as a user writes it, from `std::any::type_name`'s text: without module paths
/// (`alloc::vec::Vec<u8>` is `Vec<u8>`), a borrowed element as a reference
/// (`Borrowed<'_, Vec<u8>>`, the runtime's wrapper, is `&Vec<u8>`), one `&` where the
/// runtime's reads add a second.
pub(crate) fn readable(type_name: &str) -> String {
    let mut out = String::with_capacity(type_name.len());
    let mut word = String::new();
    let mut chars = type_name.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        if c == ':' && chars.peek() == Some(&':') {
            // A module path's segment: dropped with its `::`.
            chars.next();
            word.clear();
            continue;
        }
        out.push_str(&std::mem::take(&mut word));
        out.push(c);
    }
    out.push_str(&word);
    let mut out = out.replace("Borrowed<'_, ", "&Borrowed<");
    while let Some(at) = out.find("&Borrowed<") {
        // `&Borrowed<T>` is `&T`: drop the wrapper's name and its closing `>`.
        let open = at + "&Borrowed<".len();
        let mut depth = 1;
        let mut close = None;
        for (i, c) in out[open..].char_indices() {
            match c {
                '<' => depth += 1,
                '>' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(open + i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(close) = close else { break };
        out = format!("&{}{}", &out[open..close], &out[close + 1..]);
    }
    while out.contains("&&") {
        out = out.replace("&&", "&");
    }
    out
}

/// The path of a function (`type_name` of its item type): how a `#[par_fn]` is found at run
/// time (`my_crate::lines::get_point_in_line`).
pub fn par_fn_name<F>(_: &F) -> &'static str {
    std::any::type_name::<F>()
}

/// Under `@gpu`: the captured value must be a device type.
pub fn require_scalar<T: DeviceType>(_: &T) {}

/// Under `@gpu`: the captured collection must hold device values.
pub fn require_slice<T: DynSlice>(_: &T) {}

/// Under `@gpu`: the captured array of rows must hold device values.
pub fn require_jagged<T: DynJagged>(_: &T) {}

/// Under `@gpu`: the first generator must be an integer or `char` range.
pub fn require_range<T: DynRange>(_: &T) {}

/// Under `@gpu`: the first generator's elements must be device values.
pub fn require_elements<T: DynElements>(_: &T) {}

/// Under `@gpu`: the comprehension's elements (the rows of its nested `par!`) must be rows of
/// device values.
pub fn require_rows_output<P, H, U>(_: &crate::pipeline::Comprehension<P, H>)
where
    P: crate::pipeline::Stage,
    H: Fn(P::Item) -> Vec<U>,
    U: DeviceType,
{
}

/// Under `@gpu`: the comprehension's elements must be device values.
pub fn require_output<P, H, T>(_: &crate::pipeline::Comprehension<P, H>)
where
    P: crate::pipeline::Stage,
    H: Fn(P::Item) -> T,
    T: DeviceType,
{
}

#[cfg(test)]
mod tests {
    use super::readable;

    #[test]
    fn types_in_messages_read_as_written() {
        let borrowed =
            "comprehension_runtime::source::elements::Borrowed<'_, alloc::vec::Vec<usize>>";
        assert_eq!(readable(borrowed), "&Vec<usize>");
        assert_eq!(
            readable("&&comprehension_runtime::jagged::Jagged<(usize, i64)>"),
            "&Jagged<(usize, i64)>"
        );
        assert_eq!(readable("(u8, core::option::Option<i32>)"), "(u8, Option<i32>)");
        assert_eq!(readable("alloc::string::String"), "String");
    }
}
