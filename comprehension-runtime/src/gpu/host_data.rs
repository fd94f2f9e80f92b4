//! Host values as the device reads them: the emitted code hands the runtime each value the
//! kernels need (a captured scalar, slice or array of rows; the first generator's range or
//! elements) as a borrowed trait object, so that observing a value allocates and copies
//! nothing, and the engine later asks each one for its columns.

use super::resident::Resident;
use super::types::{
    columns_par, columns_par_at, ColumnLayout, ColumnWriter, DeviceType, RecordLayout, TypeDesc,
    PIECE,
};
use crate::backend::Backend;
use crate::jagged::Jagged;
use crate::source::{Integer, Source};
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
    note = "the device reads slices, `Vec`s and arrays of device types (numbers, `bool`, `char`, \
            tuples, `Option`s and arrays of them, structs and enums with \
            `#[derive(parcomp::DeviceValue)]`)"
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
    /// Writes elements `range` into the columns at the same positions: one call per piece of
    /// a conversion, the loop over its elements compiled for the element type.
    fn write_at(&self, range: Range<usize>, out: &mut ColumnWriter<'_>) {
        for i in range {
            self.value(i, out.at(i));
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
    /// The layout of the elements' [`Records`], where [`DynSlice::records`] gives them.
    fn record_layout(&self) -> Option<RecordLayout> {
        None
    }
    /// The elements as records in their own memory (tuples of numbers), for a device that
    /// reads the host's memory where it lies.
    fn records(&self) -> Option<Records<'_>> {
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
    fn write_at(&self, range: Range<usize>, out: &mut ColumnWriter<'_>) {
        let start = range.start;
        for (k, v) in self[range].iter().enumerate() {
            DeviceType::write(v, out.at(start + k));
        }
    }
    fn value(&self, index: usize, out: &mut ColumnWriter<'_>) {
        DeviceType::write(&self[index], out)
    }
    fn column_bytes(&self) -> Option<&[u8]> {
        T::as_column(self)
    }
    fn record_layout(&self) -> Option<RecordLayout> {
        Records::layout::<T>()
    }
    fn records(&self) -> Option<Records<'_>> {
        Records::of(self)
    }
}

impl<T: DeviceType> DynSlice for Vec<T> {
    fn desc(&self) -> TypeDesc {
        T::desc()
    }
    fn len(&self) -> usize {
        Vec::len(self)
    }
    fn write_at(&self, range: Range<usize>, out: &mut ColumnWriter<'_>) {
        DynSlice::write_at(self.as_slice(), range, out)
    }
    fn value(&self, index: usize, out: &mut ColumnWriter<'_>) {
        DynSlice::value(self.as_slice(), index, out)
    }
    fn column_bytes(&self) -> Option<&[u8]> {
        T::as_column(self)
    }
    fn record_layout(&self) -> Option<RecordLayout> {
        Records::layout::<T>()
    }
    fn records(&self) -> Option<Records<'_>> {
        Records::of(self)
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
    fn record_layout(&self) -> Option<RecordLayout> {
        Records::layout::<T>()
    }
    fn records(&self) -> Option<Records<'_>> {
        Records::of(self)
    }
}

impl<S: DynSlice + ?Sized> DynSlice for &S {
    fn desc(&self) -> TypeDesc {
        (**self).desc()
    }
    fn len(&self) -> usize {
        (**self).len()
    }
    fn write_at(&self, range: Range<usize>, out: &mut ColumnWriter<'_>) {
        (**self).write_at(range, out)
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
    fn record_layout(&self) -> Option<RecordLayout> {
        (**self).record_layout()
    }
    fn records(&self) -> Option<Records<'_>> {
        (**self).records()
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

/// A collection's values as they lie in its memory, records of [`RecordLayout`] (a slice of
/// tuples, which is not a column): a device whose memory is the host's reads them there.
/// A pointer, not a `&[u8]`: the records may hold padding, which Rust never reads and the
/// kernels do not either (they read each component at its offset).
#[derive(Clone, Copy)]
pub struct Records<'a> {
    /// The first record.
    pub(crate) data: *const u8,
    /// The records' bytes, `stride` times their number.
    pub(crate) bytes: usize,
    values: std::marker::PhantomData<&'a [u8]>,
}

impl<'a> Records<'a> {
    /// The records of `values`, when their type has a [`Records::layout`].
    fn of<T: DeviceType>(values: &'a [T]) -> Option<Records<'a>> {
        Self::layout::<T>()?;
        Some(Records {
            data: values.as_ptr().cast::<u8>(),
            bytes: std::mem::size_of_val(values),
            values: std::marker::PhantomData,
        })
    }

    /// The layout `T`'s records have, where [`Records::of`] gives them: not for a type that
    /// is its own column, nor one with a component the device could not load where it lies
    /// (not at a multiple of its size in every record: a `#[repr(packed)]` struct's).
    fn layout<T: DeviceType>() -> Option<RecordLayout> {
        let layout = T::record_layout()?;
        let leaves = T::desc().leaves();
        let aligned = leaves.len() == layout.offsets.len()
            && leaves
                .iter()
                .zip(&layout.offsets)
                .all(|(leaf, &at)| at % leaf.size() == 0 && layout.stride % leaf.size() == 0);
        (aligned && !layout.offsets.is_empty() && T::as_column(&[]).is_none()).then_some(layout)
    }
}

// SAFETY: `Records` only points at values borrowed (shared) for 'a, which are `Sync` (every
// `DeviceType` is); it hands the pointer to the device, which only reads through it.
unsafe impl Send for Records<'_> {}
// SAFETY: as for `Send`: shared, read-only access to `Sync` values.
unsafe impl Sync for Records<'_> {}

/// A collection's device column on its way to the device: its own bytes, or its values,
/// which the host converts where the device's memory is to be written.
pub(crate) enum Upload<'a> {
    /// The bytes, copied in.
    Bytes(ColumnBytes<'a>),
    /// `len` bytes of columns, which the function writes at the pointer it is given: valid
    /// for writes of `len` bytes, untouched by anything else, until it returns.
    Convert(usize, Box<dyn Fn(*mut u8) + Sync + 'a>),
}

/// The device column of `len` values laid out as `layout`, every value written by
/// `value(i, writer)`, in parallel pieces, in memory of its own.
pub(crate) fn converted_column(
    layout: &ColumnLayout,
    len: usize,
    value: impl Fn(usize, &mut ColumnWriter<'_>) + Sync,
) -> Vec<u8> {
    columns_par(layout, len.div_ceil(PIECE), |piece, writer| {
        for i in piece * PIECE..((piece + 1) * PIECE).min(len) {
            value(i, writer.at(i));
        }
    })
}

/// The device column of `len` values laid out as `layout`: `raw` when given, else every value
/// written by `values(range, writer)` (values `range` at their positions), in parallel pieces.
pub(crate) fn column_of<'a>(
    raw: Option<&'a [u8]>,
    layout: &ColumnLayout,
    len: usize,
    values: impl Fn(Range<usize>, &mut ColumnWriter<'_>) + Sync + 'a,
) -> Upload<'a> {
    if let Some(raw) = raw {
        return Upload::Bytes(ColumnBytes::Borrowed(raw));
    }
    let layout = layout.clone();
    Upload::Convert(
        layout.bytes,
        Box::new(move |at| {
            // SAFETY: `Upload::Convert`'s promise: `at` is valid for writes of the layout's
            // bytes, and nothing else touches them; each piece writes values of its own.
            unsafe {
                columns_par_at(at, layout.bytes, &layout, len.div_ceil(PIECE), |piece, writer| {
                    values(piece * PIECE..((piece + 1) * PIECE).min(len), writer)
                })
            }
        }),
    )
}

/// An array of rows of device values behind a reference.
#[diagnostic::on_unimplemented(
    message = "the rows of `{Self}` cannot be read on the device",
    label = "not an array of rows of device values",
    note = "the device reads rows of `Jagged` arrays, of `Vec<Vec<T>>` and of slices of arrays \
            `[[T; N]]` whose values are device types"
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
    /// Every value, row after row, as one slice, when they are stored so (a `Jagged`): their
    /// column is then converted in pieces of values rather than of rows.
    fn flat(&self) -> Option<&dyn DynSlice> {
        None
    }
    /// The values and the offsets already in `backend`'s device memory (a `DeviceJagged`).
    fn resident(&self, backend: Backend) -> Option<(&Resident, &Resident)> {
        let _ = backend;
        None
    }
    /// The layout of the values' [`Records`], where [`DynJagged::records`] gives them.
    fn record_layout(&self) -> Option<RecordLayout> {
        None
    }
    /// Every value, row after row, as records in their own memory (tuples of numbers stored
    /// as one slice, a `Jagged`'s), for a device that reads the host's memory where it lies.
    fn records(&self) -> Option<Records<'_>> {
        None
    }
}

/// Writes one row's `values` at positions `at..` of the columns; returns how many: what
/// [`DynJagged::write_row`] does for rows stored as slices or views.
pub(crate) fn write_row_values<'v, T: DeviceType + 'v>(
    values: impl IntoIterator<Item = &'v T>,
    at: usize,
    out: &mut ColumnWriter<'_>,
) -> usize {
    let mut written = 0;
    for v in values {
        DeviceType::write(v, out.at(at + written));
        written += 1;
    }
    written
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
        write_row_values(self.row(row), at, out)
    }
    fn column_bytes(&self) -> Option<&[u8]> {
        T::as_column(Jagged::values(self))
    }
    fn offset_bytes(&self) -> Option<&[u8]> {
        usize_bytes(Jagged::offsets(self))
    }
    fn flat(&self) -> Option<&dyn DynSlice> {
        Some(self.values_vec())
    }
    fn record_layout(&self) -> Option<RecordLayout> {
        Records::layout::<T>()
    }
    fn records(&self) -> Option<Records<'_>> {
        Records::of(Jagged::values(self))
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
        write_row_values(&self[row], at, out)
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

/// A slice of arrays read as rows (`a <- &arrs, v <- a`): every row `N` long, the values the
/// arrays' elements in order (for primitive elements, the slice's own memory).
impl<T: DeviceType, const N: usize> DynJagged for [[T; N]] {
    fn desc(&self) -> TypeDesc {
        T::desc()
    }
    fn rows(&self) -> usize {
        self.len()
    }
    fn values(&self) -> usize {
        self.len() * N
    }
    fn offsets(&self, out: &mut Vec<u64>) {
        out.extend((0..=self.len() as u64).map(|r| r * N as u64));
    }
    fn write_row(&self, row: usize, at: usize, out: &mut ColumnWriter<'_>) -> usize {
        write_row_values(&self[row], at, out)
    }
    fn column_bytes(&self) -> Option<&[u8]> {
        T::as_column(self.as_flattened())
    }
    fn record_layout(&self) -> Option<RecordLayout> {
        Records::layout::<T>()
    }
    fn records(&self) -> Option<Records<'_>> {
        Records::of(self.as_flattened())
    }
}

impl<T: DeviceType, const N: usize> DynJagged for Vec<[T; N]> {
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
    fn column_bytes(&self) -> Option<&[u8]> {
        DynJagged::column_bytes(self.as_slice())
    }
    fn record_layout(&self) -> Option<RecordLayout> {
        DynJagged::record_layout(self.as_slice())
    }
    fn records(&self) -> Option<Records<'_>> {
        DynJagged::records(self.as_slice())
    }
}

impl<T: DeviceType, const N: usize, const M: usize> DynJagged for [[T; N]; M] {
    fn desc(&self) -> TypeDesc {
        T::desc()
    }
    fn rows(&self) -> usize {
        M
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
    fn column_bytes(&self) -> Option<&[u8]> {
        DynJagged::column_bytes(self.as_slice())
    }
    fn record_layout(&self) -> Option<RecordLayout> {
        DynJagged::record_layout(self.as_slice())
    }
    fn records(&self) -> Option<Records<'_>> {
        DynJagged::records(self.as_slice())
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
    fn flat(&self) -> Option<&dyn DynSlice> {
        (**self).flat()
    }
    fn resident(&self, backend: Backend) -> Option<(&Resident, &Resident)> {
        (**self).resident(backend)
    }
    fn record_layout(&self) -> Option<RecordLayout> {
        (**self).record_layout()
    }
    fn records(&self) -> Option<Records<'_>> {
        (**self).records()
    }
}

/// An integer or `char` range behind a reference.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an integer range the device can compute",
    label = "not a range of a primitive integer type or `char`"
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

// A range of `char` skips the surrogates on the device as its `Source` does here (sources.h).
impl DynRange for Range<char> {
    fn desc(&self) -> TypeDesc {
        <char as DeviceType>::desc()
    }
    fn start_bits(&self) -> u64 {
        u32::from(self.start).into()
    }
    fn len(&self) -> usize {
        Source::size(self)
    }
}

impl DynRange for RangeInclusive<char> {
    fn desc(&self) -> TypeDesc {
        <char as DeviceType>::desc()
    }
    fn start_bits(&self) -> u64 {
        u32::from(*self.start()).into()
    }
    fn len(&self) -> usize {
        Source::size(self)
    }
}

/// The elements of any source of device values, read on the host.
#[diagnostic::on_unimplemented(
    message = "the elements of `{Self}` cannot be copied to the device",
    label = "its elements are not device values",
    note = "device values are numbers, `bool`, `char`, tuples, `Option`s and arrays of them, \
            and structs and enums with `#[derive(parcomp::DeviceValue)]`"
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
    /// The layout of the elements' [`Records`], where [`DynElements::records`] gives them.
    fn record_layout(&self) -> Option<RecordLayout>;
    /// The elements as records in their own memory, when they are stored as one slice of
    /// tuples of numbers, for a device that reads the host's memory where it lies.
    fn records(&self) -> Option<Records<'_>>;
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
    fn record_layout(&self) -> Option<RecordLayout> {
        if self.kept_on_device() {
            return None;
        }
        self.as_slice().and_then(|_| Records::layout::<S::Item>())
    }
    fn records(&self) -> Option<Records<'_>> {
        if self.kept_on_device() {
            return None;
        }
        self.as_slice().and_then(Records::of)
    }
}
