//! Apache Arrow arrays as generators, captures and results (the `arrow` feature).
//!
//! - A [`PrimitiveArray`] is a generator of its values (`x <- &prices`), and so is its values'
//!   buffer (`x <- prices.values()`), which a comprehension may also capture and index
//!   (`vals[i]`). Both are read where they lie, on the host and by a device (one copy of their
//!   bytes). An array with null slots is not read as values: a generator over one panics,
//!   naming the nulls; [`options`] reads it as `Option`s instead.
//! - A [`ListArray`](arrow_array::ListArray) or [`LargeListArray`] of primitive values is an
//!   array of rows through [`ListRows`]: its offsets and values borrowed, `v <- rows.row(i)` or
//!   `row <- rows, v <- row`, on the host and on a device.
//! - Results go back to Arrow without a copy of their layout: a comprehension's `Vec` is a
//!   `PrimitiveArray` (Arrow's own `From<Vec<_>>`), and a [`Jagged`] of rows is a
//!   [`LargeListArray`] ([`list_array`]).

use crate::gpu::host_data::{write_row_values, DynJagged, DynSlice, Records};
use crate::gpu::types::{ColumnWriter, DeviceType, RecordLayout, TypeDesc};
use crate::source::Source;
use crate::Jagged;
use arrow_array::types::ArrowPrimitiveType;
use arrow_array::{Array, GenericListArray, LargeListArray, OffsetSizeTrait, PrimitiveArray};
use arrow_buffer::{ArrowNativeType, OffsetBuffer, ScalarBuffer, ToByteSlice};
use std::fmt;
use std::sync::Arc;

/// Why an Arrow array cannot be read as parcomp reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArrowReadError {
    message: String,
}

impl fmt::Display for ArrowReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ArrowReadError {}

fn error(message: String) -> ArrowReadError {
    ArrowReadError { message }
}

/// The values of `array`, which must have no null slot.
fn values_of<T: ArrowPrimitiveType>(array: &PrimitiveArray<T>) -> &[T::Native] {
    let nulls = array.null_count();
    assert!(
        nulls == 0,
        "the Arrow array of {} values has {nulls} null slots, which a generator over its values \
         cannot read: use `parcomp::arrow::options(&array)` to read them as `Option`s",
        array.len()
    );
    array.values()
}

/// The values of a primitive array with no null slot (a generator over one with nulls panics,
/// naming them).
impl<T> Source for PrimitiveArray<T>
where
    T: ArrowPrimitiveType,
{
    type Item = T::Native;
    #[inline]
    fn size(&self) -> usize {
        values_of(self).len()
    }
    #[inline]
    fn fetch(&self, index: usize) -> T::Native {
        self.values()[index]
    }
    #[inline]
    fn run(&self, range: std::ops::Range<usize>) -> impl Iterator<Item = T::Native> {
        self.values()[range].iter().copied()
    }
    fn as_slice(&self) -> Option<&[T::Native]> {
        Some(values_of(self))
    }
}

/// The values of an Arrow buffer (`array.values()`), which hold no nulls.
impl<T: ArrowNativeType> Source for ScalarBuffer<T> {
    type Item = T;
    #[inline]
    fn size(&self) -> usize {
        self.len()
    }
    #[inline]
    fn fetch(&self, index: usize) -> T {
        self[index]
    }
    #[inline]
    fn run(&self, range: std::ops::Range<usize>) -> impl Iterator<Item = T> {
        self[range].iter().copied()
    }
    fn as_slice(&self) -> Option<&[T]> {
        Some(self)
    }
}

/// A captured buffer read by index on a device: what its values' slice answers.
impl<T: ArrowNativeType + DeviceType> DynSlice for ScalarBuffer<T> {
    fn desc(&self) -> TypeDesc {
        T::desc()
    }
    fn len(&self) -> usize {
        self.as_ref().len()
    }
    fn value(&self, index: usize, out: &mut ColumnWriter<'_>) {
        DynSlice::value(self.as_ref(), index, out)
    }
    fn write_at(&self, range: std::ops::Range<usize>, out: &mut ColumnWriter<'_>) {
        DynSlice::write_at(self.as_ref(), range, out)
    }
    fn column_bytes(&self) -> Option<&[u8]> {
        DynSlice::column_bytes(self.as_ref())
    }
    fn record_layout(&self) -> Option<RecordLayout> {
        DynSlice::record_layout(self.as_ref())
    }
    fn records(&self) -> Option<Records<'_>> {
        DynSlice::records(self.as_ref())
    }
}

/// A primitive array read as `Option`s: `None` for a null slot (see [`options`]).
#[derive(Clone, Copy, Debug)]
pub struct Options<'a, T: ArrowPrimitiveType> {
    array: &'a PrimitiveArray<T>,
}

/// Reads `array` as `Option`s, `None` at each null slot: `x <- parcomp::arrow::options(&a)`.
pub fn options<T: ArrowPrimitiveType>(array: &PrimitiveArray<T>) -> Options<'_, T> {
    Options { array }
}

impl<T: ArrowPrimitiveType> Source for Options<'_, T> {
    type Item = Option<T::Native>;
    #[inline]
    fn size(&self) -> usize {
        self.array.len()
    }
    #[inline]
    fn fetch(&self, index: usize) -> Option<T::Native> {
        self.array.is_valid(index).then(|| self.array.values()[index])
    }
}

/// The rows of a [`ListArray`](arrow_array::ListArray) or [`LargeListArray`] of primitive
/// values, borrowed: row `i` is `values[offsets[i]..offsets[i + 1]]`, as a [`Jagged`]'s.
///
/// A generator reads it as an array of rows (`v <- rows.row(i)`, or `row <- rows, v <- row`),
/// on the host and on a device. Made by [`ListRows::new`], which refuses null rows and null
/// values.
pub struct ListRows<'a, O: OffsetSizeTrait, T: ArrowPrimitiveType> {
    /// The list's offsets, which start at `offsets[0]` (0 unless the list is a slice).
    offsets: &'a [O],
    /// Every value the rows hold, from `offsets[0]` on.
    values: &'a [T::Native],
}

impl<O: OffsetSizeTrait, T: ArrowPrimitiveType> Clone for ListRows<'_, O, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<O: OffsetSizeTrait, T: ArrowPrimitiveType> Copy for ListRows<'_, O, T> {}

impl<'a, O: OffsetSizeTrait, T: ArrowPrimitiveType> ListRows<'a, O, T> {
    /// The rows of `list`, whose values must be a `PrimitiveArray<T>`; an error names what is
    /// not: values of another type, a null row, a null value.
    pub fn new(list: &'a GenericListArray<O>) -> Result<Self, ArrowReadError> {
        let values =
            list.values().as_any().downcast_ref::<PrimitiveArray<T>>().ok_or_else(|| {
                error(format!(
                    "the list's values are {}, not {}",
                    list.values().data_type(),
                    T::DATA_TYPE
                ))
            })?;
        if list.null_count() > 0 {
            return Err(error(format!(
                "the list has {} null rows; parcomp reads rows, which may be empty but not null",
                list.null_count()
            )));
        }
        let offsets: &[O] = list.value_offsets();
        let (start, end) = (offsets[0].as_usize(), offsets[offsets.len() - 1].as_usize());
        let nulls = values.slice(start, end - start).null_count();
        if nulls > 0 {
            return Err(error(format!("the list's rows hold {nulls} null values")));
        }
        Ok(ListRows { offsets, values: &values.values()[start..end] })
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Whether there is no row.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row `i`'s values.
    ///
    /// # Panics
    ///
    /// If `i >= self.len()`.
    pub fn row(&self, i: usize) -> &'a [T::Native] {
        let base = self.offsets[0].as_usize();
        &self.values[self.offsets[i].as_usize() - base..self.offsets[i + 1].as_usize() - base]
    }

    /// Every value, row after row.
    pub fn values(&self) -> &'a [T::Native] {
        self.values
    }
}

impl<'a, O: OffsetSizeTrait, T: ArrowPrimitiveType> Source for ListRows<'a, O, T> {
    type Item = &'a [T::Native];
    #[inline]
    fn size(&self) -> usize {
        self.len()
    }
    #[inline]
    fn fetch(&self, index: usize) -> &'a [T::Native] {
        self.row(index)
    }
}

impl<O, T> DynJagged for ListRows<'_, O, T>
where
    O: OffsetSizeTrait,
    T: ArrowPrimitiveType,
    T::Native: DeviceType,
{
    fn desc(&self) -> TypeDesc {
        <T::Native as DeviceType>::desc()
    }
    fn rows(&self) -> usize {
        self.len()
    }
    fn values(&self) -> usize {
        self.values.len()
    }
    fn offsets(&self, out: &mut Vec<u64>) {
        let base = self.offsets[0].as_usize() as u64;
        out.extend(self.offsets.iter().map(|o| o.as_usize() as u64 - base));
    }
    fn write_row(&self, row: usize, at: usize, out: &mut ColumnWriter<'_>) -> usize {
        write_row_values(self.row(row), at, out)
    }
    fn column_bytes(&self) -> Option<&[u8]> {
        <T::Native as DeviceType>::as_column(self.values)
    }
    fn offset_bytes(&self) -> Option<&[u8]> {
        // A large list's offsets from 0 are the device's `u64`s as they lie (never negative),
        // on the 64-bit little-endian hosts the device path runs on.
        let as_device = cfg!(all(target_endian = "little", target_pointer_width = "64"));
        (as_device && O::IS_LARGE && self.offsets[0].as_usize() == 0)
            .then(|| self.offsets.to_byte_slice())
    }
    fn record_layout(&self) -> Option<RecordLayout> {
        DynSlice::record_layout(self.values)
    }
    fn records(&self) -> Option<Records<'_>> {
        DynSlice::records(self.values)
    }
}

/// `rows` as a [`LargeListArray`] of `T` (rows may be empty; nothing is null): its offsets and
/// values become the list's buffers.
///
/// # Panics
///
/// If an offset does not fit an `i64` (more than `i64::MAX` values).
pub fn list_array<T: ArrowPrimitiveType>(rows: Jagged<T::Native>) -> LargeListArray {
    let (offsets, values) = rows.into_parts();
    let offsets: Vec<i64> = offsets
        .into_iter()
        .map(|o| i64::try_from(o).expect("a list of more than i64::MAX values"))
        .collect();
    // The values' `Vec` becomes the array's buffer as it is.
    let values = PrimitiveArray::<T>::new(ScalarBuffer::from(values), None);
    let field = Arc::new(arrow_schema::Field::new_list_field(T::DATA_TYPE, false));
    LargeListArray::new(field, OffsetBuffer::new(offsets.into()), Arc::new(values), None)
}
