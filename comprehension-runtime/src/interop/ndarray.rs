//! `ndarray` arrays as generators and captures (the `ndarray` feature).
//!
//! - A one-dimensional array (`Array1`, `ArrayView1`, any `ArrayBase<_, Ix1>`) is a [`Source`]:
//!   `x <- &a`, `x <- a.view()`, `x <- a.slice(s![..;2])`. Its elements are read by index, as
//!   a slice's are; a device copies them in one piece when the array is contiguous in standard
//!   order, one by one otherwise. A captured array read by index (`a[i]`) goes to the device
//!   the same way.
//! - A two-dimensional array is an array of rows: `v <- m.row(i)` reads row `i` in place (a
//!   view), and `row <- m.view(), v <- row` reads every row. On a device its rows are regular
//!   (`ncols` values each): a standard-layout array is copied as it lies, any other layout
//!   (a transposed view, a column slice) is copied row by row. Nothing is an error: the layout
//!   decides only how the values are copied.
//!
//! Elements must be `Copy` (numbers, tuples, `DeviceValue` structs ...): an `ndarray` of
//! `String`s is read by collecting what is needed into a `Vec` first.

use crate::gpu::host_data::{write_row_values, DynJagged, DynSlice, Records};
use crate::gpu::types::{ColumnWriter, DeviceType, RecordLayout, TypeDesc};
use crate::source::Source;
use ndarray::{ArrayBase, ArrayView, ArrayView1, Data, Ix1, Ix2};

impl<S> Source for ArrayBase<S, Ix1>
where
    S: Data,
    S::Elem: Copy,
{
    type Item = S::Elem;
    #[inline]
    fn size(&self) -> usize {
        self.len()
    }
    #[inline]
    fn fetch(&self, index: usize) -> S::Elem {
        self[index]
    }
    fn as_slice(&self) -> Option<&[S::Elem]> {
        // The array's own `as_slice` (`self.as_slice()` would be this method).
        ndarray::ArrayRef::as_slice(self)
    }
}

/// The rows of a two-dimensional view, each a one-dimensional view of its values:
/// `row <- m.view(), v <- row`.
impl<'a, T: Copy> Source for ArrayView<'a, T, Ix2> {
    type Item = ArrayView1<'a, T>;
    #[inline]
    fn size(&self) -> usize {
        self.nrows()
    }
    #[inline]
    fn fetch(&self, index: usize) -> ArrayView1<'a, T> {
        // `row` borrows `self`; the view's own lifetime is `'a`, which a copy of it keeps.
        let view: ArrayView<'a, T, Ix2> = *self;
        view.index_axis_move(ndarray::Axis(0), index)
    }
}

impl<S> DynSlice for ArrayBase<S, Ix1>
where
    S: Data + Sync,
    S::Elem: DeviceType,
{
    fn desc(&self) -> TypeDesc {
        <S::Elem as DeviceType>::desc()
    }
    fn len(&self) -> usize {
        ArrayBase::len(self)
    }
    fn value(&self, index: usize, out: &mut ColumnWriter<'_>) {
        DeviceType::write(&self[index], out)
    }
    fn column_bytes(&self) -> Option<&[u8]> {
        self.as_slice().and_then(<S::Elem as DeviceType>::as_column)
    }
    // Stored as one slice (standard layout): what a slice answers.
    fn record_layout(&self) -> Option<RecordLayout> {
        self.as_slice().and_then(DynSlice::record_layout)
    }
    fn records(&self) -> Option<Records<'_>> {
        self.as_slice().and_then(DynSlice::records)
    }
}

impl<S> DynJagged for ArrayBase<S, Ix2>
where
    S: Data + Sync,
    S::Elem: DeviceType,
{
    fn desc(&self) -> TypeDesc {
        <S::Elem as DeviceType>::desc()
    }
    fn rows(&self) -> usize {
        self.nrows()
    }
    fn values(&self) -> usize {
        self.len()
    }
    fn offsets(&self, out: &mut Vec<u64>) {
        let width = self.ncols() as u64;
        out.extend((0..=self.nrows() as u64).map(|r| r * width));
    }
    fn write_row(&self, row: usize, at: usize, out: &mut ColumnWriter<'_>) -> usize {
        write_row_values(self.row(row), at, out)
    }
    fn column_bytes(&self) -> Option<&[u8]> {
        self.as_slice().and_then(<S::Elem as DeviceType>::as_column)
    }
    // Stored as one slice (standard layout): what a slice answers.
    fn record_layout(&self) -> Option<RecordLayout> {
        self.as_slice().and_then(DynSlice::record_layout)
    }
    fn records(&self) -> Option<Records<'_>> {
        self.as_slice().and_then(DynSlice::records)
    }
}
