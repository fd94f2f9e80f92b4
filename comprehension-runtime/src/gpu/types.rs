//! The Rust types a device can hold, and how their values travel.
//!
//! [`DeviceType`] is implemented for the primitive numbers, `bool`, `char`, tuples of device
//! types, `Option` of a device type and arrays `[T; N]` of a device type. Its [`TypeDesc`] is
//! what the type solver and the kernels see; its values are stored on the device *by
//! component*: an array of `(i32, f64)` is one buffer holding all the `i32`s, then all the
//! `f64`s ([`ColumnLayout`]), so that neighbouring work-items read neighbouring words (a
//! `[f32; 3]` is three components, so three columns). `usize` and `isize` are 64-bit on the
//! device (the device path runs only on 64-bit little-endian hosts); a `char` is its code point
//! in 32 bits, as in memory.

use std::fmt;

/// The primitive types of the device: the contract's, shared with the macro.
pub use parcomp_contract::Prim;

/// The shape of a device type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TypeDesc {
    /// A primitive.
    Prim(Prim),
    /// A tuple (the unit type is the empty tuple).
    Tuple(Vec<TypeDesc>),
    /// `Option<T>`: a `bool` (whether there is a value) and the value.
    Option(Box<TypeDesc>),
    /// A struct with `#[derive(DeviceValue)]`: its name (`std::any::type_name`), and its
    /// fields by name, in declaration order (their components are stored in that order).
    Struct(&'static str, Vec<(&'static str, TypeDesc)>),
    /// A fieldless enum with `#[derive(DeviceValue)]`: its name (`std::any::type_name`), the
    /// primitive its discriminant is stored as (its `#[repr]`, else `isize`), and its variants
    /// by name with their discriminants, in declaration order. On the device it is that
    /// primitive.
    Enum(&'static str, Prim, Vec<(&'static str, i128)>),
    /// An array `[T; N]`: its element type and length. Its components are those of each
    /// element in turn (element 0's, then element 1's, ...), so on the device an array of `N`
    /// elements is `N` columns per component of `T`, and reading `a[k]` over many values is a
    /// coalesced load of `a[k]`'s columns, as for a struct's field.
    Array(Box<TypeDesc>, usize),
}

impl TypeDesc {
    /// The primitive components in storage order.
    pub fn leaves(&self) -> Vec<Prim> {
        let mut out = Vec::new();
        self.push_leaves(&mut out);
        out
    }

    fn push_leaves(&self, out: &mut Vec<Prim>) {
        match self {
            TypeDesc::Prim(p) => out.push(*p),
            TypeDesc::Tuple(items) => items.iter().for_each(|t| t.push_leaves(out)),
            TypeDesc::Option(inner) => {
                out.push(Prim::Bool);
                inner.push_leaves(out);
            }
            TypeDesc::Struct(_, fields) => fields.iter().for_each(|(_, t)| t.push_leaves(out)),
            TypeDesc::Enum(_, repr, _) => out.push(*repr),
            TypeDesc::Array(item, n) => {
                for _ in 0..*n {
                    item.push_leaves(out);
                }
            }
        }
    }

    /// Whether the type uses `f64` anywhere (the device must support it), also where no value
    /// is stored (`[f64; 0]` is declared with its element type).
    pub fn uses_f64(&self) -> bool {
        match self {
            TypeDesc::Prim(p) | TypeDesc::Enum(_, p, _) => *p == Prim::F64,
            TypeDesc::Tuple(items) => items.iter().any(TypeDesc::uses_f64),
            TypeDesc::Option(inner) | TypeDesc::Array(inner, _) => inner.uses_f64(),
            TypeDesc::Struct(_, fields) => fields.iter().any(|(_, t)| t.uses_f64()),
        }
    }
}

impl fmt::Display for TypeDesc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TypeDesc::Prim(p) => f.write_str(match p {
                Prim::Bool => "bool",
                other => other.tag(),
            }),
            TypeDesc::Tuple(items) => {
                f.write_str("(")?;
                for (i, t) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{t}")?;
                }
                if items.len() == 1 {
                    f.write_str(",")?;
                }
                f.write_str(")")
            }
            TypeDesc::Option(inner) => write!(f, "Option<{inner}>"),
            TypeDesc::Struct(name, _) | TypeDesc::Enum(name, ..) => f.write_str(name),
            TypeDesc::Array(item, n) => write!(f, "[{item}; {n}]"),
        }
    }
}

/// Where each component of a value lies in Rust's own memory: a slice of such values is an
/// array of records `stride` bytes apart, component `k` (in [`TypeDesc::leaves`] order) at byte
/// `offsets[k]` of its record. A device whose memory is the host's reads a captured slice of
/// tuples as these records, where it lies, instead of columns converted on the host.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RecordLayout {
    /// Bytes from one value to the next (`size_of::<T>()`).
    pub stride: usize,
    /// Each component's byte offset in its value.
    pub offsets: Vec<usize>,
}

impl RecordLayout {
    /// A value of `stride` bytes whose fields lie at the offsets given, in order, each laid
    /// out as given (`None` where a field has no layout: then neither has the value). What a
    /// tuple's and a derived struct's `record_layout` return, from `offset_of!`.
    pub fn of_fields(stride: usize, fields: &[(usize, Option<RecordLayout>)]) -> Option<Self> {
        let mut offsets = Vec::new();
        for (at, field) in fields {
            offsets.extend(field.as_ref()?.offsets.iter().map(|o| at + o));
        }
        Some(RecordLayout { stride, offsets })
    }

    /// One primitive component of `size` bytes.
    fn primitive(size: usize) -> Option<RecordLayout> {
        // As `as_column`: the device's bytes are little-endian and `usize` is 64-bit.
        cfg!(all(target_endian = "little", target_pointer_width = "64"))
            .then(|| RecordLayout { stride: size, offsets: vec![0] })
    }
}

/// Where each component of `cap` values of a type lies in one buffer: component `k` is an
/// array of `cap` values starting at byte `offsets[k]` (each array 8-byte aligned).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnLayout {
    /// The components.
    pub leaves: Vec<Prim>,
    /// Byte offset of each component's array.
    pub offsets: Vec<usize>,
    /// Values the buffer has room for.
    pub cap: usize,
    /// Bytes in all.
    pub bytes: usize,
}

impl ColumnLayout {
    /// The layout of `cap` values of `desc`, or `None` if it needs more bytes than `usize`
    /// counts.
    pub fn new(desc: &TypeDesc, cap: usize) -> Option<ColumnLayout> {
        Self::of_leaves(desc.leaves(), cap)
    }

    /// The layout of `cap` values of the type `other` lays out.
    pub fn with_leaves(other: &ColumnLayout, cap: usize) -> Option<ColumnLayout> {
        Self::of_leaves(other.leaves.clone(), cap)
    }

    /// The reads that copy the first `count` values of a column laid out as `self` into
    /// `bytes`, a column of exactly `count` values (laid out as the returned layout): for each
    /// component, its offset in the device's column, its destination in `bytes`, and its
    /// length. `None` if such a column needs more bytes than `usize` counts.
    pub(crate) fn prefix_reads(
        &self,
        count: usize,
        bytes: &mut Vec<u8>,
    ) -> Option<(ColumnLayout, Vec<PrefixRead>)> {
        let tight = Self::with_leaves(self, count)?;
        bytes.clear();
        bytes.resize(tight.bytes, 0);
        let base = bytes.as_mut_ptr();
        let reads = tight
            .leaves
            .iter()
            .enumerate()
            // `wrapping_add`: the tight layout's offsets are inside `bytes`, so the pointers
            // are too.
            .map(|(k, leaf)| {
                (self.offsets[k], base.wrapping_add(tight.offsets[k]), leaf.size() * count)
            })
            .collect();
        Some((tight, reads))
    }

    fn of_leaves(leaves: Vec<Prim>, cap: usize) -> Option<ColumnLayout> {
        let mut offsets = Vec::with_capacity(leaves.len());
        let mut at = 0usize;
        for leaf in &leaves {
            offsets.push(at);
            at = at.checked_add(cap.checked_mul(leaf.size())?)?.checked_next_multiple_of(8)?;
        }
        Some(ColumnLayout { leaves, offsets, cap, bytes: at })
    }
}

/// One component's read of [`ColumnLayout::prefix_reads`]: its offset in the device's column,
/// its destination, its length in bytes.
pub(crate) type PrefixRead = (usize, *mut u8, usize);

/// How many components' offsets a [`ColumnWriter`] or [`ColumnReader`] holds itself (the
/// rest it reads from its layout). Held in the writer, the offsets stay in registers through a
/// loop over values: read from the layout, they were loaded again after every value written
/// (the compiler cannot tell that the bytes written are not the layout's), which made
/// splitting a slice of pairs a quarter of a sparse matrix × vector's time on PoCL.
const HELD_LEAVES: usize = 8;

/// A layout's component offsets, the first [`HELD_LEAVES`] of them held by value.
#[derive(Clone, Copy)]
struct Offsets<'b> {
    layout: &'b ColumnLayout,
    held: [usize; HELD_LEAVES],
}

impl<'b> Offsets<'b> {
    /// The offsets of `layout`; past its components, `len` (the bytes' length), so that a
    /// component the layout does not have is outside the bytes, as it would be outside the
    /// layout's offsets.
    fn new(layout: &'b ColumnLayout, len: usize) -> Self {
        let mut held = [len; HELD_LEAVES];
        let count = layout.offsets.len().min(HELD_LEAVES);
        held[..count].copy_from_slice(&layout.offsets[..count]);
        Offsets { layout, held }
    }

    /// Component `leaf`'s offset.
    #[inline]
    fn of(&self, leaf: usize) -> usize {
        if leaf < HELD_LEAVES {
            // (A constant test where the value's type is known: `leaf` counts its components.)
            self.held[leaf]
        } else {
            self.layout.offsets[leaf]
        }
    }
}

/// Writes values into component columns (see [`ColumnLayout`]).
pub struct ColumnWriter<'b> {
    bytes: *mut u8,
    len: usize,
    offsets: Offsets<'b>,
    index: usize,
    leaf: usize,
    _bytes: std::marker::PhantomData<&'b mut [u8]>,
}

impl<'b> ColumnWriter<'b> {
    /// A writer over `bytes`, laid out as `layout`.
    pub fn new(bytes: &'b mut [u8], layout: &'b ColumnLayout) -> Self {
        assert!(bytes.len() >= layout.bytes, "parcomp internal error: columns too small");
        ColumnWriter {
            bytes: bytes.as_mut_ptr(),
            len: bytes.len(),
            offsets: Offsets::new(layout, bytes.len()),
            index: 0,
            leaf: 0,
            _bytes: std::marker::PhantomData,
        }
    }

    /// A writer over `len` bytes at `bytes` that other writers write at the same time, each
    /// to values of its own.
    ///
    /// # Safety
    ///
    /// `bytes..bytes + len` must be valid for writes for `'b`, and no two writers may write
    /// the same value index (their bytes are then disjoint: each component of value `i` lies at
    /// its own place), nor anything else touch those bytes meanwhile.
    unsafe fn shared(bytes: *mut u8, len: usize, layout: &'b ColumnLayout) -> Self {
        assert!(len >= layout.bytes, "parcomp internal error: columns too small");
        ColumnWriter {
            bytes,
            len,
            offsets: Offsets::new(layout, len),
            index: 0,
            leaf: 0,
            _bytes: std::marker::PhantomData,
        }
    }

    /// Starts value number `index`.
    #[inline]
    pub fn at(&mut self, index: usize) -> &mut Self {
        self.index = index;
        self.leaf = 0;
        self
    }

    /// Writes the next component of the current value. Inlined: a component's size is a
    /// constant where a type writes it, so the copy is one store, not a call.
    #[inline]
    pub fn put(&mut self, bytes: &[u8]) {
        let size = bytes.len();
        let at = self.offsets.of(self.leaf) + self.index * size;
        assert!(at + size <= self.len, "parcomp internal error: a value outside its columns");
        // SAFETY: `at..at + size` lies inside the writer's bytes (checked), which are valid for
        // writes (`new`: a borrowed slice; `shared`: the caller's promise), and only this
        // writer writes value `index`.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.bytes.add(at), size) };
        self.leaf += 1;
    }
}

/// A pointer that may cross threads, for writers of disjoint values (see [`columns_par`]).
struct SharedBytes(*mut u8);

impl SharedBytes {
    fn get(&self) -> *mut u8 {
        self.0
    }
}
// SAFETY: the writers it is given to write disjoint bytes (see `ColumnWriter::shared`).
unsafe impl Send for SharedBytes {}
// SAFETY: as above.
unsafe impl Sync for SharedBytes {}

/// Columns laid out as `layout`, written piece by piece on every core: `write(piece, writer)`
/// writes the values of piece `piece` of `pieces` (which must write disjoint values). How values
/// that are not one primitive (tuples, `Option`s, the rows of a `Vec<Vec<T>>`) are split into
/// columns on their way to a device.
pub fn columns_par(
    layout: &ColumnLayout,
    pieces: usize,
    write: impl Fn(usize, &mut ColumnWriter<'_>) + Sync,
) -> Vec<u8> {
    let mut bytes = vec![0u8; layout.bytes];
    // SAFETY: `bytes` holds the layout's bytes, and nothing else touches them meanwhile.
    unsafe { columns_par_at(bytes.as_mut_ptr(), bytes.len(), layout, pieces, write) };
    bytes
}

/// [`columns_par`] writing the columns at `bytes` (`len` of them, at least the layout's), such
/// as a device buffer's bytes mapped into the host's memory.
///
/// # Safety
///
/// `bytes..bytes + len` must be valid for writes, and untouched by anything else, until this
/// returns.
pub(crate) unsafe fn columns_par_at(
    bytes: *mut u8,
    len: usize,
    layout: &ColumnLayout,
    pieces: usize,
    write: impl Fn(usize, &mut ColumnWriter<'_>) + Sync,
) {
    use rayon::prelude::*;
    let shared = SharedBytes(bytes);
    (0..pieces).into_par_iter().for_each(|piece| {
        // SAFETY: the bytes are valid for writes until the parallel loop ends (the caller's
        // promise); the pieces write disjoint values (the caller's promise), so the writers'
        // bytes are disjoint, and nothing else touches them.
        let mut writer = unsafe { ColumnWriter::shared(shared.get(), len, layout) };
        write(piece, &mut writer);
    });
}

/// Values `0..len` in pieces of a size worth a task each: the pieces of [`columns_par`].
pub(crate) const PIECE: usize = 1 << 14;

/// Reads values out of component columns.
pub struct ColumnReader<'b> {
    bytes: &'b [u8],
    offsets: Offsets<'b>,
    index: usize,
    leaf: usize,
}

impl<'b> ColumnReader<'b> {
    /// A reader over `bytes`, laid out as `layout`.
    pub fn new(bytes: &'b [u8], layout: &'b ColumnLayout) -> Self {
        assert!(bytes.len() >= layout.bytes, "parcomp internal error: columns too small");
        ColumnReader { bytes, offsets: Offsets::new(layout, bytes.len()), index: 0, leaf: 0 }
    }

    /// Starts value number `index`.
    #[inline]
    pub fn at(&mut self, index: usize) -> &mut Self {
        self.index = index;
        self.leaf = 0;
        self
    }

    /// Reads the next component of the current value.
    #[inline]
    pub fn take<const N: usize>(&mut self) -> [u8; N] {
        let at = self.offsets.of(self.leaf) + self.index * N;
        self.leaf += 1;
        self.bytes[at..at + N].try_into().expect("N bytes")
    }
}

/// A Rust type whose values a device can hold: the primitive numbers, `bool`, `char`, tuples
/// of device types (up to eight elements), `Option` of a device type, arrays `[T; N]` of a
/// device type, and structs and fieldless enums with `#[derive(parcomp::DeviceValue)]` (which
/// implements this trait).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be represented on the device",
    label = "not a device type",
    note = "device types are the primitive numbers, `bool`, `char`, tuples of device types, \
            `Option` of a device type, arrays `[T; N]` of a device type and structs and enums \
            with `#[derive(parcomp::DeviceValue)]`"
)]
pub trait DeviceType: Copy + Send + Sync + Sized {
    /// The shape of the type.
    fn desc() -> TypeDesc;
    /// Writes the components of `self`, in order.
    fn write(&self, out: &mut ColumnWriter<'_>);
    /// Reads a value written by [`DeviceType::write`] (or by a kernel).
    fn read(input: &mut ColumnReader<'_>) -> Self;
    /// The bytes of `values` as they are in memory, when they are already the device's column
    /// of them (a primitive number or `bool`: one component, stored as on the device), so that
    /// a slice goes to the device in one copy, converting nothing.
    fn as_column(values: &[Self]) -> Option<&[u8]> {
        let _ = values;
        None
    }
    /// Bytes per value when any bytes the device writes are a valid value, stored as in memory
    /// (the primitive numbers, not `bool` or `char`): results are then copied straight into the
    /// output.
    const RAW_SIZE: Option<usize> = None;
    /// Where each component lies in a value's memory, when every component is stored there
    /// as the device reads it (numbers, `bool`, `char`, and tuples, arrays and derived structs
    /// of them; not an `Option`, whose memory Rust lays out as it likes, nor a fieldless enum):
    /// see [`RecordLayout`].
    fn record_layout() -> Option<RecordLayout> {
        None
    }
}

/// The bytes of values whose every byte is initialised (no padding).
///
/// # Safety
///
/// `T` must have no padding bytes.
unsafe fn bytes_of<T>(values: &[T]) -> &[u8] {
    // SAFETY: the caller promises that `T` has no padding, so every byte of the slice is
    // initialised; `u8` has no alignment, and the length is the slice's size in bytes.
    unsafe {
        std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), std::mem::size_of_val(values))
    }
}

macro_rules! primitive {
    ($($t:ty => $p:ident),* $(,)?) => {$(
        impl DeviceType for $t {
            fn desc() -> TypeDesc {
                TypeDesc::Prim(Prim::$p)
            }
            #[inline]
            fn write(&self, out: &mut ColumnWriter<'_>) {
                out.put(&self.to_le_bytes());
            }
            #[inline]
            fn read(input: &mut ColumnReader<'_>) -> Self {
                <$t>::from_le_bytes(input.take())
            }
            fn as_column(values: &[Self]) -> Option<&[u8]> {
                // The device's bytes are little-endian, and `usize` is 64-bit: the device path
                // runs only on 64-bit little-endian hosts.
                if cfg!(all(target_endian = "little", target_pointer_width = "64")) {
                    // SAFETY: a primitive number has no padding.
                    Some(unsafe { bytes_of(values) })
                } else {
                    None
                }
            }
            fn record_layout() -> Option<RecordLayout> {
                RecordLayout::primitive(std::mem::size_of::<$t>())
            }
            const RAW_SIZE: Option<usize> =
                if cfg!(all(target_endian = "little", target_pointer_width = "64")) {
                    Some(std::mem::size_of::<$t>())
                } else {
                    None
                };
        }
    )*};
}

primitive!(
    i8 => I8, i16 => I16, i32 => I32, i64 => I64, isize => I64,
    u8 => U8, u16 => U16, u32 => U32, u64 => U64, usize => U64,
    f32 => F32, f64 => F64,
);

impl DeviceType for bool {
    fn desc() -> TypeDesc {
        TypeDesc::Prim(Prim::Bool)
    }
    #[inline]
    fn write(&self, out: &mut ColumnWriter<'_>) {
        out.put(&[*self as u8]);
    }
    #[inline]
    fn read(input: &mut ColumnReader<'_>) -> Self {
        input.take::<1>()[0] != 0
    }
    fn as_column(values: &[Self]) -> Option<&[u8]> {
        // SAFETY: a `bool` is one byte, 0 or 1, without padding: the device's column of it.
        Some(unsafe { bytes_of(values) })
    }
    fn record_layout() -> Option<RecordLayout> {
        RecordLayout::primitive(1)
    }
}

impl DeviceType for char {
    fn desc() -> TypeDesc {
        TypeDesc::Prim(Prim::Char)
    }
    #[inline]
    fn write(&self, out: &mut ColumnWriter<'_>) {
        out.put(&u32::from(*self).to_le_bytes());
    }
    #[inline]
    fn read(input: &mut ColumnReader<'_>) -> Self {
        let code = u32::from_le_bytes(input.take());
        // The kernels make `char`s only from `char`s and `u8`s, so `code` is one; a value that
        // is not would be a bug of parcomp, never a wrong `char`.
        char::from_u32(code).unwrap_or_else(|| {
            panic!("parcomp internal error: the device returned {code:#x}, which is not a char")
        })
    }
    fn as_column(values: &[Self]) -> Option<&[u8]> {
        // As for the primitive numbers: the device's column is the code points, little-endian.
        if cfg!(target_endian = "little") {
            // SAFETY: a `char` is a `u32` in memory (same size and alignment, no padding).
            Some(unsafe { bytes_of(values) })
        } else {
            None
        }
    }
    fn record_layout() -> Option<RecordLayout> {
        RecordLayout::primitive(4)
    }
}

impl<T: DeviceType> DeviceType for Option<T> {
    fn desc() -> TypeDesc {
        TypeDesc::Option(Box::new(T::desc()))
    }
    fn write(&self, out: &mut ColumnWriter<'_>) {
        match self {
            Some(value) => {
                out.put(&[1]);
                value.write(out);
            }
            None => {
                out.put(&[0]);
                // The value's components are written too (as zeros), so the columns stay dense.
                for leaf in T::desc().leaves() {
                    out.put(&[0u8; 8][..leaf.size()]);
                }
            }
        }
    }
    fn read(input: &mut ColumnReader<'_>) -> Self {
        let some = input.take::<1>()[0] != 0;
        let value = T::read(input);
        some.then_some(value)
    }
}

impl<T: DeviceType, const N: usize> DeviceType for [T; N] {
    fn desc() -> TypeDesc {
        TypeDesc::Array(Box::new(T::desc()), N)
    }
    #[inline]
    fn write(&self, out: &mut ColumnWriter<'_>) {
        for item in self {
            item.write(out);
        }
    }
    fn read(input: &mut ColumnReader<'_>) -> Self {
        std::array::from_fn(|_| T::read(input))
    }
    fn record_layout() -> Option<RecordLayout> {
        let item = T::record_layout()?;
        let offsets = (0..N).flat_map(|k| item.offsets.iter().map(move |o| k * item.stride + o));
        Some(RecordLayout { stride: std::mem::size_of::<Self>(), offsets: offsets.collect() })
    }
}

macro_rules! tuples {
    ($(($($name:ident . $index:tt),*)),* $(,)?) => {$(
        impl<$($name: DeviceType),*> DeviceType for ($($name,)*) {
            fn desc() -> TypeDesc {
                TypeDesc::Tuple(vec![$($name::desc()),*])
            }
            #[allow(unused_variables)]
            #[inline]
            fn write(&self, out: &mut ColumnWriter<'_>) {
                $(self.$index.write(out);)*
            }
            #[allow(unused_variables, clippy::unused_unit)]
            fn read(input: &mut ColumnReader<'_>) -> Self {
                ($($name::read(input),)*)
            }
            fn record_layout() -> Option<RecordLayout> {
                // Rust orders a tuple's fields as it likes; `offset_of!` says where each went.
                RecordLayout::of_fields(
                    std::mem::size_of::<Self>(),
                    &[$((std::mem::offset_of!(Self, $index), $name::record_layout())),*],
                )
            }
        }
    )*};
}

tuples!(
    (),
    (A.0),
    (A.0, B.1),
    (A.0, B.1, C.2),
    (A.0, B.1, C.2, D.3),
    (A.0, B.1, C.2, D.3, E.4),
    (A.0, B.1, C.2, D.3, E.4, F.5),
    (A.0, B.1, C.2, D.3, E.4, F.5, G.6),
    (A.0, B.1, C.2, D.3, E.4, F.5, G.6, H.7),
);

/// Writes `values` into a new buffer of component columns with room for `cap >= len` values.
pub fn to_columns<T: DeviceType>(values: &[T], cap: usize) -> (ColumnLayout, Vec<u8>) {
    let layout = ColumnLayout::new(&T::desc(), cap.max(values.len()))
        .expect("parcomp: the values do not fit in memory");
    let mut bytes = vec![0u8; layout.bytes];
    let mut writer = ColumnWriter::new(&mut bytes, &layout);
    for (i, v) in values.iter().enumerate() {
        v.write(writer.at(i));
    }
    (layout, bytes)
}

/// Reads the first `len` values out of component columns.
pub fn from_columns<T: DeviceType>(bytes: &[u8], layout: &ColumnLayout, len: usize) -> Vec<T> {
    let mut reader = ColumnReader::new(bytes, layout);
    (0..len).map(|i| T::read(reader.at(i))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_layouts_follow_rusts_own() {
        let pair = <(u32, f64)>::record_layout().expect("numbers");
        assert_eq!(pair.stride, 16);
        assert_eq!(
            pair.offsets,
            [std::mem::offset_of!((u32, f64), 0), std::mem::offset_of!((u32, f64), 1)]
        );
        // Nested tuples and arrays: each component at its offset in the outer value, in the
        // order of the type's leaves (its columns').
        type Nested = (u8, [(u16, bool); 2], char);
        let nested = Nested::record_layout().expect("numbers, bool and char");
        assert_eq!(nested.stride, std::mem::size_of::<Nested>());
        assert_eq!(nested.offsets.len(), Nested::desc().leaves().len());
        let v: Nested = (7, [(1, true), (2, false)], 'x');
        let base = std::ptr::from_ref(&v).cast::<u8>();
        // SAFETY: each offset is inside `v`, at the component of that leaf: a `u16` at the
        // second and fourth, read unaligned to be safe whatever the offset.
        let second = unsafe { base.add(nested.offsets[1]).cast::<u16>().read_unaligned() };
        // SAFETY: as above, the fourth leaf is the second array element's `u16`.
        let fourth = unsafe { base.add(nested.offsets[3]).cast::<u16>().read_unaligned() };
        assert_eq!((second, fourth), (1, 2));
        // An `Option`'s memory is Rust's to lay out: no records.
        assert_eq!(<(u32, Option<u8>)>::record_layout(), None);
    }

    #[test]
    fn descriptions() {
        assert_eq!(<(i32, (f64, bool))>::desc().to_string(), "(i32, (f64, bool))");
        assert_eq!(<(u8,)>::desc().to_string(), "(u8,)");
        assert_eq!(usize::desc(), TypeDesc::Prim(Prim::U64));
        assert_eq!(<(char, Option<char>)>::desc().to_string(), "(char, Option<char>)");
        assert_eq!(<Option<(i8, u16)>>::desc().leaves(), [Prim::Bool, Prim::I8, Prim::U16]);
        assert_eq!(<[(u8, f32); 2]>::desc().to_string(), "[(u8, f32); 2]");
        assert_eq!(<[(u8, f32); 2]>::desc().leaves(), [Prim::U8, Prim::F32, Prim::U8, Prim::F32]);
        assert_eq!(<[[i16; 2]; 0]>::desc().leaves(), []);
        assert!(<[f64; 0]>::desc().uses_f64());
        assert!(!<[(f32, Option<u8>); 2]>::desc().uses_f64());
    }

    #[test]
    fn columns_round_trip() {
        let values = [(1i32, (2.5f64, true)), (-7, (-0.0, false)), (i32::MAX, (f64::NAN, true))];
        let (layout, bytes) = to_columns(&values, 5);
        assert_eq!(layout.offsets, [0, 24, 64]);
        assert_eq!(layout.bytes, 72);
        let back: Vec<(i32, (f64, bool))> = from_columns(&bytes, &layout, 3);
        assert_eq!(back[0], values[0]);
        assert_eq!(back[1].1 .0.to_bits(), (-0.0f64).to_bits());
        assert!(back[2].1 .0.is_nan());
        let chars = ['a', 'é', '€', '\u{D7FF}', '\u{E000}', char::MAX];
        let (layout, bytes) = to_columns(&chars, 6);
        assert_eq!(bytes, char::as_column(&chars).unwrap());
        assert_eq!(&bytes[4..8], 0xE9u32.to_le_bytes());
        assert_eq!(from_columns::<char>(&bytes, &layout, 6), chars);
        let options = [Some(3u8), None];
        let (layout, bytes) = to_columns(&options, 2);
        assert_eq!(from_columns::<Option<u8>>(&bytes, &layout, 2), options);
        let arrays = [[1i16, -2, 3], [i16::MIN, 0, i16::MAX]];
        let (layout, bytes) = to_columns(&arrays, 2);
        // One column per element: [1, MIN], [-2, 0], [3, MAX].
        assert_eq!(layout.offsets, [0, 8, 16]);
        assert_eq!(&bytes[8..12], [(-2i16).to_le_bytes(), 0i16.to_le_bytes()].concat());
        assert_eq!(from_columns::<[i16; 3]>(&bytes, &layout, 2), arrays);
    }

    /// Values of more components than a writer holds the offsets of: the first `HELD_LEAVES`
    /// from the writer, the rest from the layout, each in its own column.
    #[test]
    fn columns_of_many_components() {
        type Wide = ((u8, i16, u32), [u64; 4], (f32, bool, char), Option<i64>, [u16; 3]);
        let wide = |k: u32| -> Wide {
            let b = k as u8;
            let sign = if k % 2 == 0 { -1 } else { 1 };
            (
                (b, sign * k as i16, k * 7),
                [u64::from(k), u64::MAX - u64::from(k), 3, u64::from(k) << 40],
                (k as f32 / 4.0, k % 3 == 0, char::from_u32(0x41 + k).unwrap()),
                (k % 4 != 0).then_some(-i64::from(k)),
                [k as u16, 0, u16::MAX],
            )
        };
        assert!(Wide::desc().leaves().len() > HELD_LEAVES);
        let values: Vec<Wide> = (0..37).map(wide).collect();
        let (layout, bytes) = to_columns(&values, 40);
        assert_eq!(from_columns::<Wide>(&bytes, &layout, values.len()), values);
        // Each component in its column: the `u64`s of element 5, the last component of 36.
        for (k, want) in values[5].1.iter().enumerate() {
            let at = layout.offsets[3 + k] + 5 * 8;
            assert_eq!(bytes[at..at + 8], want.to_le_bytes());
        }
        let last = *layout.offsets.last().unwrap() + 36 * 2;
        assert_eq!(bytes[last..last + 2], u16::MAX.to_le_bytes());
    }

    /// A writer asked for a component its layout does not have panics (an internal error), as
    /// it did reading the layout's offsets, never writing elsewhere.
    #[test]
    #[should_panic(expected = "a value outside its columns")]
    fn a_component_past_the_layout_is_an_error() {
        let layout = ColumnLayout::new(&<(u32, u8)>::desc(), 4).unwrap();
        let mut bytes = vec![0u8; layout.bytes];
        let mut writer = ColumnWriter::new(&mut bytes, &layout);
        let out = writer.at(3);
        out.put(&[1, 2, 3, 4]);
        out.put(&[5]);
        out.put(&[6]);
    }
}
