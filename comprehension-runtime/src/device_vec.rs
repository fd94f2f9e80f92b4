//! [`DeviceVec`]: values that stay in a device's memory across comprehensions.

use crate::backend::{self, Backend};
use crate::gpu::host_data::write_row_values;
use crate::gpu::offload::{DynJagged, DynSlice};
use crate::gpu::resident::Resident;
use crate::gpu::types::{from_columns, ColumnLayout, ColumnWriter, DeviceType, TypeDesc};
use crate::source::Source;
use std::fmt;
use std::sync::OnceLock;

/// A vector whose values stay on the device between comprehensions: uploaded once, then read by
/// any number of comprehensions without another copy — as a generator (`x <- &dv`) or a
/// captured slice (`dv[i]`) — and the result of [`par_device!`] stays there for the next one.
/// [`DeviceVec::to_vec`] reads it back.
///
/// Without a device feature, without a device, or on the CPU backends, a `DeviceVec` holds an
/// ordinary `Vec`, so the same program runs everywhere. A `DeviceVec` made on the host is
/// uploaded by the first device run that reads it, once; one made on a device is read back by
/// the first host run that reads it, once (and kept).
///
/// ```text
/// use parcomp::{par_device, par_sum, DeviceVec};
/// let v = DeviceVec::from_slice(&[1u64, 2, 3, 4]);
/// let squares: DeviceVec<u64> = par_device![x * x | x <- &v];
/// assert_eq!(par_sum![s | s <- &squares], 30);
/// assert_eq!(squares.to_vec(), [1, 4, 9, 16]);
/// ```
///
/// [`par_device!`]: https://docs.rs/parcomp/latest/parcomp/macro.par_device.html
pub struct DeviceVec<T> {
    len: usize,
    host: OnceLock<Vec<T>>,
    device: OnceLock<Resident>,
}

/// The device a `DeviceVec` of `len` values made now goes to: the device backend in effect;
/// when none is forced, the automatic choice's device if a comprehension over `len` values
/// would go there (the threshold); none when a CPU backend is in effect.
fn device_in_effect(len: usize) -> Option<Backend> {
    match backend::selection() {
        Some(b) if b.is_device() => Some(b),
        Some(_) => None,
        None if (len as u64) < crate::gpu::threshold::device_threshold() => None,
        None => crate::gpu::automatic_device().ok(),
    }
}

impl<T: DeviceType> DeviceVec<T> {
    /// The values of `values`, copied to the device in effect (one copy). When a CPU backend is
    /// in effect, there is no device, or the automatic choice would not send a comprehension
    /// over this many values to it, it holds a copy of them on the host instead (uploaded by
    /// the first device run that reads it).
    pub fn from_slice(values: &[T]) -> Self {
        let device = OnceLock::new();
        if let Some(backend) = device_in_effect(values.len()) {
            if let Some(resident) = upload(backend, values) {
                let _ = device.set(resident);
                return DeviceVec { len: values.len(), host: OnceLock::new(), device };
            }
        }
        DeviceVec::on_host(values.to_vec())
    }

    /// `values`, copied to the device in effect (kept on the host too, where they already are).
    pub fn from_vec(values: Vec<T>) -> Self {
        let out = DeviceVec::on_host(values);
        if let Some(backend) = device_in_effect(out.len) {
            out.resident(backend);
        }
        out
    }

    /// `values` on the host, uploaded by the first device run that reads them.
    pub(crate) fn on_host(values: Vec<T>) -> Self {
        let host = OnceLock::new();
        let len = values.len();
        let _ = host.set(values);
        DeviceVec { len, host, device: OnceLock::new() }
    }

    /// Values a device run left on the device.
    pub(crate) fn on_device(resident: Resident) -> Self {
        let device = OnceLock::new();
        let len = resident.len;
        let _ = device.set(resident);
        DeviceVec { len, host: OnceLock::new(), device }
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there is no value.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device backend whose memory holds the values, if any does.
    pub fn device(&self) -> Option<Backend> {
        self.device.get().map(Resident::backend)
    }

    /// The values on the host: read back from the device the first time (one copy), then kept.
    pub fn as_slice(&self) -> &[T] {
        self.host.get_or_init(|| self.download())
    }

    /// The values in a new `Vec` (read back from the device when the host has no copy: one
    /// copy).
    pub fn to_vec(&self) -> Vec<T> {
        match self.host.get() {
            Some(host) => host.clone(),
            None => self.download(),
        }
    }

    /// The values as a `Vec`.
    pub fn into_vec(mut self) -> Vec<T> {
        match self.host.take() {
            Some(host) => host,
            None => self.download(),
        }
    }

    fn download(&self) -> Vec<T> {
        let Some(resident) = self.device.get() else {
            return Vec::new();
        };
        match resident.download() {
            Ok(bytes) => from_columns(&bytes, &resident.layout, self.len),
            Err(e) => panic!(
                "parcomp: reading a DeviceVec of {} values back from {} failed: {e}",
                self.len, resident.backend
            ),
        }
    }

    /// The values in `backend`'s memory: the copy there, or a new upload of the host's values
    /// (kept for the next run). `None` when another device holds them, or the upload failed.
    pub(crate) fn resident(&self, backend: Backend) -> Option<&Resident> {
        if let Some(resident) = self.device.get() {
            return (resident.backend == backend).then_some(resident);
        }
        let host = self.host.get()?;
        let resident = upload(backend, host)?;
        let _ = self.device.set(resident);
        self.device.get().filter(|r| r.backend == backend)
    }
}

/// `values` in a new buffer of `backend`'s device; `None` if that fails (the values then stay
/// where they are, and runs copy them as they copy a `Vec`).
fn upload<T: DeviceType>(backend: Backend, values: &[T]) -> Option<Resident> {
    let layout = ColumnLayout::new(&T::desc(), values.len())?;
    let converted;
    let bytes = match T::as_column(values) {
        Some(raw) => raw,
        None => {
            converted = crate::gpu::host_data::converted_column(&layout, values.len(), |i, w| {
                values[i].write(w)
            });
            &converted
        }
    };
    Resident::upload(backend, bytes, layout, values.len()).ok()
}

impl<T: DeviceType> Source for DeviceVec<T> {
    type Item = T;
    fn size(&self) -> usize {
        self.len
    }
    fn fetch(&self, index: usize) -> T {
        self.as_slice()[index]
    }
    fn as_slice(&self) -> Option<&[T]> {
        Some(DeviceVec::as_slice(self))
    }
    fn resident(&self, backend: Backend) -> Option<&dyn std::any::Any> {
        DeviceVec::resident(self, backend).map(|r| r as &dyn std::any::Any)
    }
    fn kept_on_device(&self) -> bool {
        true
    }
}

impl<T: DeviceType> std::ops::Index<usize> for DeviceVec<T> {
    type Output = T;
    fn index(&self, index: usize) -> &T {
        &self.as_slice()[index]
    }
}

impl<T: DeviceType> From<Vec<T>> for DeviceVec<T> {
    fn from(values: Vec<T>) -> Self {
        DeviceVec::from_vec(values)
    }
}

impl<T: DeviceType> From<&[T]> for DeviceVec<T> {
    fn from(values: &[T]) -> Self {
        DeviceVec::from_slice(values)
    }
}

impl<T: DeviceType + fmt::Debug> fmt::Debug for DeviceVec<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.device(), self.host.get()) {
            (Some(b), None) => write!(f, "DeviceVec({} values on {b})", self.len),
            _ => f.debug_list().entries(self.as_slice()).finish(),
        }
    }
}

impl<T: DeviceType + PartialEq> PartialEq for DeviceVec<T> {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: DeviceType + PartialEq> PartialEq<Vec<T>> for DeviceVec<T> {
    fn eq(&self, other: &Vec<T>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: DeviceType + PartialEq, const N: usize> PartialEq<[T; N]> for DeviceVec<T> {
    fn eq(&self, other: &[T; N]) -> bool {
        self.as_slice() == other.as_slice()
    }
}

/// An array of rows (a [`Jagged`]) kept on the device between comprehensions: its values and
/// row offsets uploaded once, then read by any number of comprehensions without another copy,
/// as rows of a captured array (`m.row(i)`, `m[i]` style generators over `dm.row(i)`).
/// Without a device it holds them on the host, as a [`DeviceVec`] does.
///
/// [`Jagged`]: crate::Jagged
pub struct DeviceJagged<T> {
    offsets: DeviceVec<u64>,
    values: DeviceVec<T>,
}

impl<T: DeviceType> DeviceJagged<T> {
    /// The rows of `m`, copied to the device in effect (two copies: values and offsets).
    pub fn from_jagged(m: &crate::Jagged<T>) -> Self {
        let offsets: Vec<u64> = m.offsets().iter().map(|&o| o as u64).collect();
        DeviceJagged {
            offsets: DeviceVec::from_vec(offsets),
            values: DeviceVec::from_slice(m.values()),
        }
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Whether there is no row.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row `i` (read back from the device the first time the host needs it).
    pub fn row(&self, i: usize) -> &[T] {
        let offsets = self.offsets.as_slice();
        &self.values.as_slice()[offsets[i] as usize..offsets[i + 1] as usize]
    }

    /// The values of every row, row after row.
    pub fn values(&self) -> &DeviceVec<T> {
        &self.values
    }

    /// The rows as a `Jagged` on the host.
    pub fn to_jagged(&self) -> crate::Jagged<T> {
        let lengths: Vec<usize> =
            self.offsets.as_slice().windows(2).map(|w| (w[1] - w[0]) as usize).collect();
        crate::Jagged::from_lengths(&lengths, self.values.to_vec())
            .expect("a DeviceJagged's offsets fit its values")
    }

    /// The device backend whose memory holds the rows, if any does.
    pub fn device(&self) -> Option<Backend> {
        self.values.device().filter(|&b| self.offsets.device() == Some(b))
    }

    /// The values and offsets in `backend`'s memory (uploading the host's copies, once).
    pub(crate) fn resident(&self, backend: Backend) -> Option<(&Resident, &Resident)> {
        Some((self.values.resident(backend)?, self.offsets.resident(backend)?))
    }

    pub(crate) fn offsets_host(&self) -> &[u64] {
        self.offsets.as_slice()
    }
}

impl<T: DeviceType> From<&crate::Jagged<T>> for DeviceJagged<T> {
    fn from(m: &crate::Jagged<T>) -> Self {
        DeviceJagged::from_jagged(m)
    }
}

impl<T: DeviceType + fmt::Debug> fmt::Debug for DeviceJagged<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries((0..self.len()).map(|i| self.row(i))).finish()
    }
}

/// The rows of a `DeviceJagged` are a source, as a `Jagged`'s are: `row <- &m`.
impl<'a, T: DeviceType> Source for &'a DeviceJagged<T> {
    type Item = &'a [T];
    fn size(&self) -> usize {
        DeviceJagged::len(self)
    }
    fn fetch(&self, index: usize) -> &'a [T] {
        let m: &'a DeviceJagged<T> = self;
        m.row(index)
    }
}

// How the device reads a `DeviceVec` or a `DeviceJagged` that a comprehension captures or
// iterates: their elements are already its columns.

impl<T: DeviceType> DynSlice for crate::DeviceVec<T> {
    fn desc(&self) -> TypeDesc {
        T::desc()
    }
    fn len(&self) -> usize {
        DeviceVec::len(self)
    }
    fn value(&self, index: usize, out: &mut ColumnWriter<'_>) {
        DeviceType::write(&self[index], out)
    }
    fn column_bytes(&self) -> Option<&[u8]> {
        T::as_column(self.as_slice())
    }
    fn resident(&self, backend: Backend) -> Option<&Resident> {
        DeviceVec::resident(self, backend)
    }
}

impl<T: DeviceType> DynJagged for crate::DeviceJagged<T> {
    fn desc(&self) -> TypeDesc {
        T::desc()
    }
    fn rows(&self) -> usize {
        self.len()
    }
    fn values(&self) -> usize {
        DeviceJagged::values(self).len()
    }
    fn offsets(&self, out: &mut Vec<u64>) {
        out.extend_from_slice(self.offsets_host());
    }
    fn write_row(&self, row: usize, at: usize, out: &mut ColumnWriter<'_>) -> usize {
        write_row_values(self.row(row), at, out)
    }
    fn column_bytes(&self) -> Option<&[u8]> {
        T::as_column(DeviceJagged::values(self).as_slice())
    }
    fn offset_bytes(&self) -> Option<&[u8]> {
        u64::as_column(self.offsets_host())
    }
    fn resident(&self, backend: Backend) -> Option<(&Resident, &Resident)> {
        DeviceJagged::resident(self, backend)
    }
}
