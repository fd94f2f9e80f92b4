//! How a comprehension's results come back from the device: [`OutputCodec`] reads values (or
//! rows of values) of the element type out of the device's columns.

use super::types::{ColumnLayout, ColumnReader, DeviceType, TypeDesc, PIECE};

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
