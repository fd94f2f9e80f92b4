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

use super::plan::DevicePlan;
use super::resident::Resident;
use super::types::{
    columns_par, ColumnLayout, ColumnReader, ColumnWriter, DeviceType, TypeDesc, PIECE,
};
use crate::backend::Backend;
use crate::jagged::Jagged;
use crate::source::{Integer, Source};
use std::marker::PhantomData;
use std::ops::{Range, RangeInclusive};

/// A value the device cannot hold, named for messages.
#[derive(Clone, Copy, Debug)]
pub struct Unrepresentable {
    /// `std::any::type_name` of the value's type.
    pub type_name: &'static str,
}

/// What the emitted code observed of one value the kernels need.
pub type Observed<'a> = Result<HostData<'a>, Unrepresentable>;

/// Host data in a form the device can hold, borrowed until the run ends.
#[derive(Clone, Copy)]
pub enum HostData<'a> {
    /// A single value (a captured scalar, or a value computed once before the run).
    Scalar(&'a dyn DynValue),
    /// A captured slice, `Vec` or array, read by index.
    Slice(&'a dyn DynSlice),
    /// A captured array of rows (`Jagged`, `Vec<Vec<T>>`), read a row at a time.
    Jagged(&'a dyn DynJagged),
    /// The first generator, when it is an integer range: computed on the device.
    Range(&'a dyn DynRange),
    /// The first generator, when it is any other source: its elements are copied.
    Elements(&'a dyn DynElements),
}

/// A device value behind a reference.
pub trait DynValue: Sync {
    /// Its type.
    fn desc(&self) -> TypeDesc;
    /// Writes its components.
    fn write(&self, out: &mut ColumnWriter<'_>);
}

impl<T: DeviceType> DynValue for T {
    fn desc(&self) -> TypeDesc {
        <T as DeviceType>::desc()
    }
    fn write(&self, out: &mut ColumnWriter<'_>) {
        DeviceType::write(self, out)
    }
}

/// A slice of device values behind a reference.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be read by index on the device",
    label = "not a collection of device values",
    note = "the device reads slices, `Vec`s and arrays of device types (numbers, `bool`, tuples \
            and `Option`s of them)"
)]
pub trait DynSlice: Sync {
    /// The elements' type.
    fn desc(&self) -> TypeDesc;
    /// Number of elements.
    fn len(&self) -> usize;
    /// Whether there is no element.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Writes elements `range` into the columns at positions `0..range.len()`.
    fn write(&self, out: &mut ColumnWriter<'_>, range: Range<usize>) {
        for (k, i) in range.enumerate() {
            self.value(i, out.at(k));
        }
    }
    /// Writes element `index` as the writer's current value.
    fn value(&self, index: usize, out: &mut ColumnWriter<'_>);
    /// The elements' bytes in memory, when they already are their device column (one
    /// primitive, stored as on the device): copied as they are.
    fn column_bytes(&self) -> Option<&[u8]> {
        None
    }
    /// The elements already in `backend`'s device memory (a `DeviceVec`).
    fn resident(&self, backend: Backend) -> Option<&Resident> {
        let _ = backend;
        None
    }
}

impl<T: DeviceType> DynSlice for [T] {
    fn desc(&self) -> TypeDesc {
        T::desc()
    }
    fn len(&self) -> usize {
        <[T]>::len(self)
    }
    fn value(&self, index: usize, out: &mut ColumnWriter<'_>) {
        DeviceType::write(&self[index], out)
    }
    fn column_bytes(&self) -> Option<&[u8]> {
        T::as_column(self)
    }
}

impl<T: DeviceType> DynSlice for Vec<T> {
    fn desc(&self) -> TypeDesc {
        T::desc()
    }
    fn len(&self) -> usize {
        Vec::len(self)
    }
    fn value(&self, index: usize, out: &mut ColumnWriter<'_>) {
        DynSlice::value(self.as_slice(), index, out)
    }
    fn column_bytes(&self) -> Option<&[u8]> {
        T::as_column(self)
    }
}

impl<T: DeviceType, const N: usize> DynSlice for [T; N] {
    fn desc(&self) -> TypeDesc {
        T::desc()
    }
    fn len(&self) -> usize {
        N
    }
    fn value(&self, index: usize, out: &mut ColumnWriter<'_>) {
        DynSlice::value(self.as_slice(), index, out)
    }
    fn column_bytes(&self) -> Option<&[u8]> {
        T::as_column(self)
    }
}

impl<S: DynSlice + ?Sized> DynSlice for &S {
    fn desc(&self) -> TypeDesc {
        (**self).desc()
    }
    fn len(&self) -> usize {
        (**self).len()
    }
    fn value(&self, index: usize, out: &mut ColumnWriter<'_>) {
        (**self).value(index, out)
    }
    fn column_bytes(&self) -> Option<&[u8]> {
        (**self).column_bytes()
    }
    fn resident(&self, backend: Backend) -> Option<&Resident> {
        (**self).resident(backend)
    }
}

/// A collection's device column: its own bytes when it already is one (borrowed: nothing is
/// converted), else its values split into columns on every core.
pub(crate) enum ColumnBytes<'a> {
    /// The collection's memory, copied as it is.
    Borrowed(&'a [u8]),
    /// Converted on the host.
    Converted(Vec<u8>),
}

impl ColumnBytes<'_> {
    /// The bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        match self {
            ColumnBytes::Borrowed(b) => b,
            ColumnBytes::Converted(v) => v,
        }
    }

    /// Bytes the host converted.
    pub(crate) fn converted(&self) -> usize {
        match self {
            ColumnBytes::Borrowed(_) => 0,
            ColumnBytes::Converted(v) => v.len(),
        }
    }
}

/// The device column of `len` values laid out as `layout`: `raw` when given, else every value
/// written by `value(i, writer)`, in parallel pieces.
pub(crate) fn column_of<'a>(
    raw: Option<&'a [u8]>,
    layout: &ColumnLayout,
    len: usize,
    value: impl Fn(usize, &mut ColumnWriter<'_>) + Sync,
) -> ColumnBytes<'a> {
    if let Some(raw) = raw {
        return ColumnBytes::Borrowed(raw);
    }
    ColumnBytes::Converted(columns_par(layout, len.div_ceil(PIECE), |piece, writer| {
        for i in piece * PIECE..((piece + 1) * PIECE).min(len) {
            value(i, writer.at(i));
        }
    }))
}

/// An array of rows of device values behind a reference.
#[diagnostic::on_unimplemented(
    message = "the rows of `{Self}` cannot be read on the device",
    label = "not an array of rows of device values",
    note = "the device reads rows of `Jagged` arrays and of `Vec<Vec<T>>` whose values are \
            device types"
)]
pub trait DynJagged: Sync {
    /// The values' type.
    fn desc(&self) -> TypeDesc;
    /// Number of rows.
    fn rows(&self) -> usize;
    /// Number of values in all rows.
    fn values(&self) -> usize;
    /// The offset of every row and the end (`rows() + 1` entries, from 0 to `values()`).
    fn offsets(&self, out: &mut Vec<u64>);
    /// Writes every value, row after row, into the columns.
    fn write(&self, out: &mut ColumnWriter<'_>) {
        let mut at = 0;
        for row in 0..self.rows() {
            at += self.write_row(row, at, out);
        }
    }
    /// Writes the values of row `row` at positions `at..`; returns how many.
    fn write_row(&self, row: usize, at: usize, out: &mut ColumnWriter<'_>) -> usize;
    /// The values' bytes in memory, when they already are their device column.
    fn column_bytes(&self) -> Option<&[u8]> {
        None
    }
    /// The offsets' bytes in memory, when they already are `u64`s as the device reads them.
    fn offset_bytes(&self) -> Option<&[u8]> {
        None
    }
    /// The values and the offsets already in `backend`'s device memory (a `DeviceJagged`).
    fn resident(&self, backend: Backend) -> Option<(&Resident, &Resident)> {
        let _ = backend;
        None
    }
}

/// The bytes of `usize` offsets as the device's `u64`s, on a 64-bit little-endian host.
fn usize_bytes(offsets: &[usize]) -> Option<&[u8]> {
    if cfg!(all(target_endian = "little", target_pointer_width = "64")) {
        // SAFETY: `usize` has no padding, and on a 64-bit little-endian host its bytes are
        // those of the `u64` the device reads.
        Some(unsafe {
            std::slice::from_raw_parts(
                offsets.as_ptr().cast::<u8>(),
                std::mem::size_of_val(offsets),
            )
        })
    } else {
        None
    }
}

impl<T: DeviceType> DynJagged for Jagged<T> {
    fn desc(&self) -> TypeDesc {
        T::desc()
    }
    fn rows(&self) -> usize {
        self.len()
    }
    fn values(&self) -> usize {
        Jagged::values(self).len()
    }
    fn offsets(&self, out: &mut Vec<u64>) {
        out.extend(Jagged::offsets(self).iter().map(|&o| o as u64));
    }
    fn write_row(&self, row: usize, at: usize, out: &mut ColumnWriter<'_>) -> usize {
        let values = self.row(row);
        for (k, v) in values.iter().enumerate() {
            DeviceType::write(v, out.at(at + k));
        }
        values.len()
    }
    fn column_bytes(&self) -> Option<&[u8]> {
        T::as_column(Jagged::values(self))
    }
    fn offset_bytes(&self) -> Option<&[u8]> {
        usize_bytes(Jagged::offsets(self))
    }
}

impl<T: DeviceType> DynJagged for [Vec<T>] {
    fn desc(&self) -> TypeDesc {
        T::desc()
    }
    fn rows(&self) -> usize {
        self.len()
    }
    fn values(&self) -> usize {
        self.iter().map(Vec::len).sum()
    }
    fn offsets(&self, out: &mut Vec<u64>) {
        let mut at = 0u64;
        out.push(0);
        for row in self {
            at += row.len() as u64;
            out.push(at);
        }
    }
    fn write_row(&self, row: usize, at: usize, out: &mut ColumnWriter<'_>) -> usize {
        for (k, v) in self[row].iter().enumerate() {
            DeviceType::write(v, out.at(at + k));
        }
        self[row].len()
    }
}

impl<T: DeviceType> DynJagged for Vec<Vec<T>> {
    fn desc(&self) -> TypeDesc {
        T::desc()
    }
    fn rows(&self) -> usize {
        self.len()
    }
    fn values(&self) -> usize {
        DynJagged::values(self.as_slice())
    }
    fn offsets(&self, out: &mut Vec<u64>) {
        DynJagged::offsets(self.as_slice(), out)
    }
    fn write_row(&self, row: usize, at: usize, out: &mut ColumnWriter<'_>) -> usize {
        DynJagged::write_row(self.as_slice(), row, at, out)
    }
}

impl<S: DynJagged + ?Sized> DynJagged for &S {
    fn desc(&self) -> TypeDesc {
        (**self).desc()
    }
    fn rows(&self) -> usize {
        (**self).rows()
    }
    fn values(&self) -> usize {
        (**self).values()
    }
    fn offsets(&self, out: &mut Vec<u64>) {
        (**self).offsets(out)
    }
    fn write_row(&self, row: usize, at: usize, out: &mut ColumnWriter<'_>) -> usize {
        (**self).write_row(row, at, out)
    }
    fn column_bytes(&self) -> Option<&[u8]> {
        (**self).column_bytes()
    }
    fn offset_bytes(&self) -> Option<&[u8]> {
        (**self).offset_bytes()
    }
    fn resident(&self, backend: Backend) -> Option<(&Resident, &Resident)> {
        (**self).resident(backend)
    }
}

/// An integer range behind a reference.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an integer range the device can compute",
    label = "not a range of a primitive integer type"
)]
pub trait DynRange: Sync {
    /// The elements' type.
    fn desc(&self) -> TypeDesc;
    /// The first element, as the 64 bits of its two's complement.
    fn start_bits(&self) -> u64;
    /// Number of elements (panics as the CPU does for a range longer than `usize` counts).
    fn len(&self) -> usize;
    /// Whether there is no element.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The 64 bits of an integer's two's complement.
pub trait IntegerBits {
    /// `self` sign- or zero-extended to 64 bits.
    fn bits(self) -> u64;
}

macro_rules! integer_bits {
    ($($t:ty),*) => {$(
        impl IntegerBits for $t {
            #[inline]
            fn bits(self) -> u64 {
                self as i128 as u64
            }
        }
    )*};
}

integer_bits!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

impl<T: Integer + DeviceType + IntegerBits + Sync> DynRange for Range<T> {
    fn desc(&self) -> TypeDesc {
        T::desc()
    }
    fn start_bits(&self) -> u64 {
        self.start.bits()
    }
    fn len(&self) -> usize {
        Source::size(self)
    }
}

impl<T: Integer + DeviceType + IntegerBits + Sync> DynRange for RangeInclusive<T> {
    fn desc(&self) -> TypeDesc {
        T::desc()
    }
    fn start_bits(&self) -> u64 {
        self.start().bits()
    }
    fn len(&self) -> usize {
        Source::size(self)
    }
}

/// The elements of any source of device values, read on the host.
#[diagnostic::on_unimplemented(
    message = "the elements of `{Self}` cannot be copied to the device",
    label = "its elements are not device values",
    note = "device values are numbers, `bool`, tuples and `Option`s of them"
)]
pub trait DynElements: Sync {
    /// The elements' type.
    fn desc(&self) -> TypeDesc;
    /// Number of elements.
    fn len(&self) -> usize;
    /// Whether there is no element.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Writes elements `range` into the columns at positions `0..range.len()`.
    fn write(&self, out: &mut ColumnWriter<'_>, range: Range<usize>) {
        for (k, i) in range.enumerate() {
            self.value(i, out.at(k));
        }
    }
    /// Writes element `index` as the writer's current value.
    fn value(&self, index: usize, out: &mut ColumnWriter<'_>);
    /// The elements' bytes in memory, when they are stored as one slice that already is their
    /// device column.
    fn column_bytes(&self) -> Option<&[u8]>;
    /// The elements already in `backend`'s device memory (a `DeviceVec`).
    fn resident(&self, backend: Backend) -> Option<&Resident>;
}

impl<S> DynElements for S
where
    S: Source + Sync,
    S::Item: DeviceType,
{
    fn desc(&self) -> TypeDesc {
        <S::Item as DeviceType>::desc()
    }
    fn len(&self) -> usize {
        self.size()
    }
    fn value(&self, index: usize, out: &mut ColumnWriter<'_>) {
        DeviceType::write(&self.fetch(index), out)
    }
    fn column_bytes(&self) -> Option<&[u8]> {
        self.as_slice().and_then(<S::Item as DeviceType>::as_column)
    }
    fn resident(&self, backend: Backend) -> Option<&Resident> {
        Source::resident(self, backend).and_then(|r| r.downcast_ref::<Resident>())
    }
}

/// How the outputs of a comprehension come back from the device: its element type and how to
/// read values of it out of columns. Only exists for device types.
pub struct OutputCodec<T> {
    /// The type of the values on the device: `T`, or the element type of rows `T`.
    desc: fn() -> TypeDesc,
    read: Read<T>,
    /// Bytes per value when the device's column of values is a `[T]` as it is (a primitive
    /// number): results are then copied straight into the output's memory.
    raw: Option<usize>,
}

/// How [`OutputCodec`] turns columns into elements.
enum Read<T> {
    /// Each element is one device value.
    Value(fn(&mut ColumnReader<'_>) -> T),
    /// Each element is a row (`Vec<U>`) of device values: rows start `empty`, and `append`
    /// pushes `count` values onto the rows their groups name.
    Rows { empty: fn() -> T, append: AppendRows<T> },
}

/// Pushes `count` values of the columns (`bytes`, laid out as the layout says) onto `rows`,
/// value `i` onto row `groups[i]`.
type AppendRows<T> = fn(rows: &mut [T], bytes: &[u8], layout: &ColumnLayout, groups: &[u64]);

impl<T> Clone for Read<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Read<T> {}

impl<T> Clone for OutputCodec<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for OutputCodec<T> {}

fn append_rows<U: DeviceType>(
    rows: &mut [Vec<U>],
    bytes: &[u8],
    layout: &ColumnLayout,
    groups: &[u64],
) {
    let mut reader = ColumnReader::new(bytes, layout);
    for (i, &group) in groups.iter().enumerate() {
        rows[group as usize].push(U::read(reader.at(i)));
    }
}

impl<U: DeviceType> OutputCodec<Vec<U>> {
    /// The codec of rows of a device type: the result of a `par!` whose head is a `par!`.
    pub fn rows() -> Self {
        OutputCodec {
            desc: U::desc,
            read: Read::Rows { empty: Vec::new, append: append_rows::<U> },
            raw: None,
        }
    }
}

impl<T> OutputCodec<T> {
    /// The codec of a device type.
    pub fn of() -> Self
    where
        T: DeviceType,
    {
        OutputCodec { desc: T::desc, read: Read::Value(T::read), raw: T::RAW_SIZE }
    }

    /// Bytes per value when a `[T]` in memory is the device's column of its values.
    pub(crate) fn raw_size(&self) -> Option<usize> {
        self.raw
    }

    /// The type of the values on the device: the elements', or the rows' elements'.
    pub fn desc(&self) -> TypeDesc {
        (self.desc)()
    }

    /// Whether the elements are rows of device values.
    pub fn is_rows(&self) -> bool {
        matches!(self.read, Read::Rows { .. })
    }

    fn value(&self) -> fn(&mut ColumnReader<'_>) -> T {
        match self.read {
            Read::Value(read) => read,
            Read::Rows { .. } => panic!("parcomp internal error: rows read as single values"),
        }
    }

    /// The first `len` values of columns laid out as `layout`.
    pub fn read_all(&self, bytes: &[u8], layout: &ColumnLayout, len: usize) -> Vec<T> {
        let read = self.value();
        let mut reader = ColumnReader::new(bytes, layout);
        (0..len).map(|i| read(reader.at(i))).collect()
    }

    /// Appends the first `len` values of columns laid out as `layout` to `out`, assembled on
    /// every core.
    pub(crate) fn extend_par(
        &self,
        out: &mut Vec<T>,
        bytes: &[u8],
        layout: &ColumnLayout,
        len: usize,
    ) where
        T: Send,
    {
        use rayon::prelude::*;
        let read = self.value();
        out.par_extend(
            (0..len)
                .into_par_iter()
                .with_min_len(PIECE)
                .map_init(|| ColumnReader::new(bytes, layout), move |reader, i| read(reader.at(i))),
        );
    }

    /// Reads value `index` of columns laid out as `layout`.
    pub fn read_one(&self, bytes: &[u8], layout: &ColumnLayout, index: usize) -> T {
        let mut reader = ColumnReader::new(bytes, layout);
        self.value()(reader.at(index))
    }

    /// Reads value `index` of columns of `Option<T>` laid out as `layout`.
    pub fn read_option(&self, bytes: &[u8], layout: &ColumnLayout, index: usize) -> Option<T> {
        let read = self.value();
        let mut reader = ColumnReader::new(bytes, layout);
        let at = reader.at(index);
        let some = at.take::<1>()[0] != 0;
        let value = read(at);
        some.then_some(value)
    }

    /// Appends `n` empty rows to `out`.
    pub fn empty_rows(&self, out: &mut Vec<T>, n: usize) {
        let Read::Rows { empty, .. } = self.read else {
            panic!("parcomp internal error: single values read as rows")
        };
        out.extend((0..n).map(|_| empty()));
    }

    /// Pushes the values of columns laid out as `layout` onto `rows`, value `i` onto row
    /// `groups[i]` (one value per group entry).
    pub fn append_rows(&self, rows: &mut [T], bytes: &[u8], layout: &ColumnLayout, groups: &[u64]) {
        let Read::Rows { append, .. } = self.read else {
            panic!("parcomp internal error: single values read as rows")
        };
        append(rows, bytes, layout, groups);
    }
}

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
        /// The first generator, an integer range, computed on the device.
        RangeOnDevice: DynRange => Range,
        /// A first generator that is not an integer range of a device type.
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
                "the elements of its first generator (`{}`) are not device values",
                e.type_name
            ));
        }
        for (k, capture) in self.captures.iter().enumerate() {
            if let Err(e) = capture {
                let name = plan.captures.get(k).map_or("a captured value", |c| c.text);
                return Err(format!(
                    "`{name}` is a `{}`, which the device cannot hold",
                    e.type_name
                ));
            }
        }
        if self.output.is_none() {
            return Err(format!(
                "its elements are `{}`, which the device cannot hold",
                std::any::type_name::<T>()
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

/// Under `@gpu`: the first generator must be an integer range of a device type.
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
