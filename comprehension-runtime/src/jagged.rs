//! `Jagged<T>`: an array of arrays stored flat, as a segment descriptor plus values (CSR).
//!
//! This is the form nested data takes in parcomp on every backend: row `i` is
//! `values[offsets[i]..offsets[i + 1]]`. Rows may be empty. A `&Jagged<T>` is a [`Source`] whose
//! elements are the rows (`&[T]`), and `m.row(i)` / `m[i]` are generators that read one row in
//! place, so `par![v * x[c] | (c, v) <- m.row(i)]` touches nothing but that row.

use crate::source::Source;
use std::fmt;
use std::ops::{Index, Range};

/// An array of variable-length rows, stored as `offsets` (one more than the number of rows,
/// starting at 0, non-decreasing) and the concatenated `values`.
///
/// ```
/// use comprehension_runtime::Jagged;
/// let m = Jagged::from(vec![vec![1, 2], vec![], vec![3]]);
/// assert_eq!(m.len(), 3);
/// assert_eq!(m.row(0), &[1, 2]);
/// assert!(m.row(1).is_empty());
/// assert_eq!(m.offsets(), &[0, 2, 2, 3]);
/// assert_eq!(m.values(), &[1, 2, 3]);
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Jagged<T> {
    offsets: Vec<usize>,
    values: Vec<T>,
}

/// Why offsets and values do not describe a [`Jagged`] array.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum JaggedError {
    /// `offsets` is empty; it needs one entry per row plus one (`[0]` for no rows).
    NoOffsets,
    /// `offsets[0]` is not 0.
    FirstOffsetNotZero {
        /// The first offset.
        first: usize,
    },
    /// `offsets[index] < offsets[index - 1]`.
    Decreasing {
        /// Where the offsets go down.
        index: usize,
        /// `offsets[index - 1]`.
        previous: usize,
        /// `offsets[index]`.
        offset: usize,
    },
    /// The last offset is not the number of values.
    LastOffsetMismatch {
        /// The last offset.
        last: usize,
        /// `values.len()`.
        values: usize,
    },
}

impl fmt::Display for JaggedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JaggedError::NoOffsets => f.write_str(
                "offsets is empty: a jagged array needs one offset per row plus one ([0] for no rows)",
            ),
            JaggedError::FirstOffsetNotZero { first } => {
                write!(f, "offsets must start at 0, but the first offset is {first}")
            }
            JaggedError::Decreasing { index, previous, offset } => write!(
                f,
                "offsets must not decrease, but offsets[{index}] = {offset} is less than \
                 offsets[{}] = {previous}",
                index - 1
            ),
            JaggedError::LastOffsetMismatch { last, values } => write!(
                f,
                "the last offset must equal the number of values, but it is {last} and there \
                 are {values} values"
            ),
        }
    }
}

impl std::error::Error for JaggedError {}

impl<T> Jagged<T> {
    /// A jagged array with no rows.
    pub fn new() -> Self {
        Jagged { offsets: vec![0], values: Vec::new() }
    }

    /// Builds a jagged array from a segment descriptor and values, checking that `offsets`
    /// starts at 0, never decreases and ends at `values.len()`.
    ///
    /// ```
    /// use comprehension_runtime::{Jagged, JaggedError};
    /// let m = Jagged::from_parts(vec![0, 3, 3, 7], vec![8, 6, 7, 5, 3, 0, 9]).unwrap();
    /// assert_eq!(m.row(2), &[5, 3, 0, 9]);
    /// assert_eq!(
    ///     Jagged::from_parts(vec![0, 2, 1], vec![1, 2]),
    ///     Err(JaggedError::Decreasing { index: 2, previous: 2, offset: 1 })
    /// );
    /// ```
    pub fn from_parts(offsets: Vec<usize>, values: Vec<T>) -> Result<Self, JaggedError> {
        let (&first, &last) = match (offsets.first(), offsets.last()) {
            (Some(first), Some(last)) => (first, last),
            _ => return Err(JaggedError::NoOffsets),
        };
        if first != 0 {
            return Err(JaggedError::FirstOffsetNotZero { first });
        }
        if let Some(index) = offsets.windows(2).position(|w| w[1] < w[0]) {
            return Err(JaggedError::Decreasing {
                index: index + 1,
                previous: offsets[index],
                offset: offsets[index + 1],
            });
        }
        if last != values.len() {
            return Err(JaggedError::LastOffsetMismatch { last, values: values.len() });
        }
        Ok(Jagged { offsets, values })
    }

    /// Builds a jagged array whose row `i` holds `lengths[i]` values, taken in order from
    /// `values`.
    pub fn from_lengths(lengths: &[usize], values: Vec<T>) -> Result<Self, JaggedError> {
        let mut offsets = Vec::with_capacity(lengths.len() + 1);
        offsets.push(0usize);
        let mut end = 0usize;
        for &n in lengths {
            // A sum that overflows cannot match values.len(): report it as a mismatch.
            end = end.checked_add(n).ok_or(JaggedError::LastOffsetMismatch {
                last: usize::MAX,
                values: values.len(),
            })?;
            offsets.push(end);
        }
        Jagged::from_parts(offsets, values)
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Whether there are no rows (rows that exist but are empty still count).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row `i`.
    ///
    /// # Panics
    /// If `i >= self.len()`.
    #[track_caller]
    pub fn row(&self, i: usize) -> &[T] {
        &self.values[self.row_range(i)]
    }

    /// Length of row `i`.
    ///
    /// # Panics
    /// If `i >= self.len()`.
    #[track_caller]
    pub fn row_len(&self, i: usize) -> usize {
        let r = self.row_range(i);
        r.end - r.start
    }

    /// Where row `i` lies in [`values`](Self::values).
    ///
    /// # Panics
    /// If `i >= self.len()`.
    #[track_caller]
    pub fn row_range(&self, i: usize) -> Range<usize> {
        assert!(i < self.len(), "row {i} of a jagged array with {} rows", self.len());
        self.offsets[i]..self.offsets[i + 1]
    }

    /// The segment descriptor: `len() + 1` non-decreasing offsets from 0 to `values().len()`.
    pub fn offsets(&self) -> &[usize] {
        &self.offsets
    }

    /// All values, row after row.
    pub fn values(&self) -> &[T] {
        &self.values
    }

    /// The values, as the vector holding them (a sized value, which a trait object can point
    /// at).
    pub(crate) fn values_vec(&self) -> &Vec<T> {
        &self.values
    }

    /// The rows in order.
    pub fn iter(&self) -> Rows<'_, T> {
        Rows { jagged: self, next: 0, end: self.len() }
    }

    /// Takes the array apart into offsets and values.
    pub fn into_parts(self) -> (Vec<usize>, Vec<T>) {
        (self.offsets, self.values)
    }
}

impl<T> Default for Jagged<T> {
    fn default() -> Self {
        Jagged::new()
    }
}

impl<T: fmt::Debug> fmt::Debug for Jagged<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T> From<Vec<Vec<T>>> for Jagged<T> {
    fn from(rows: Vec<Vec<T>>) -> Self {
        let mut offsets = Vec::with_capacity(rows.len() + 1);
        offsets.push(0);
        let total = rows.iter().map(Vec::len).sum();
        let mut values = Vec::with_capacity(total);
        for row in rows {
            values.extend(row);
            offsets.push(values.len());
        }
        Jagged { offsets, values }
    }
}

impl<T: Clone> From<&[Vec<T>]> for Jagged<T> {
    fn from(rows: &[Vec<T>]) -> Self {
        let mut offsets = Vec::with_capacity(rows.len() + 1);
        offsets.push(0);
        let mut values = Vec::with_capacity(rows.iter().map(Vec::len).sum());
        for row in rows {
            values.extend_from_slice(row);
            offsets.push(values.len());
        }
        Jagged { offsets, values }
    }
}

impl<T> FromIterator<Vec<T>> for Jagged<T> {
    fn from_iter<I: IntoIterator<Item = Vec<T>>>(rows: I) -> Self {
        let mut jagged = Jagged::new();
        for row in rows {
            jagged.values.extend(row);
            jagged.offsets.push(jagged.values.len());
        }
        jagged
    }
}

impl<T: Clone> From<&Jagged<T>> for Vec<Vec<T>> {
    fn from(jagged: &Jagged<T>) -> Self {
        jagged.iter().map(<[T]>::to_vec).collect()
    }
}

impl<T> Index<usize> for Jagged<T> {
    type Output = [T];
    #[track_caller]
    fn index(&self, i: usize) -> &[T] {
        self.row(i)
    }
}

/// The rows of a [`Jagged`] array, first to last.
#[derive(Clone, Debug)]
pub struct Rows<'a, T> {
    jagged: &'a Jagged<T>,
    next: usize,
    end: usize,
}

impl<'a, T> Iterator for Rows<'a, T> {
    type Item = &'a [T];
    fn next(&mut self) -> Option<&'a [T]> {
        if self.next == self.end {
            return None;
        }
        self.next += 1;
        Some(self.jagged.row(self.next - 1))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.end - self.next;
        (n, Some(n))
    }
}

impl<T> DoubleEndedIterator for Rows<'_, T> {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.next == self.end {
            return None;
        }
        self.end -= 1;
        Some(self.jagged.row(self.end))
    }
}

impl<T> ExactSizeIterator for Rows<'_, T> {}

impl<'a, T> IntoIterator for &'a Jagged<T> {
    type Item = &'a [T];
    type IntoIter = Rows<'a, T>;
    fn into_iter(self) -> Rows<'a, T> {
        self.iter()
    }
}

/// The rows of a jagged array are a source: `row <- &m` binds each row as a slice.
impl<'a, T> Source for &'a Jagged<T> {
    type Item = &'a [T];
    #[inline]
    fn size(&self) -> usize {
        Jagged::len(self)
    }
    #[inline]
    fn fetch(&self, index: usize) -> &'a [T] {
        let jagged: &'a Jagged<T> = self;
        &jagged.values[jagged.offsets[index]..jagged.offsets[index + 1]]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_validation() {
        let rows = vec![vec![1, 2, 3], vec![], vec![], vec![4], vec![]];
        let m = Jagged::from(rows.clone());
        assert_eq!(m.len(), 5);
        assert_eq!(Vec::<Vec<i32>>::from(&m), rows);
        assert_eq!(m.iter().rev().map(<[i32]>::len).collect::<Vec<_>>(), vec![0, 1, 0, 0, 3]);
        assert_eq!(m.row_len(0), 3);
        assert_eq!(&m[3], &[4]);
        let (o, v) = m.clone().into_parts();
        assert_eq!(Jagged::from_parts(o, v).unwrap(), m);
        assert_eq!(Jagged::<u8>::from_parts(vec![], vec![]), Err(JaggedError::NoOffsets));
        assert_eq!(
            Jagged::from_parts(vec![1, 2], vec![0, 0]),
            Err(JaggedError::FirstOffsetNotZero { first: 1 })
        );
        assert_eq!(
            Jagged::from_parts(vec![0, 2], vec![0]),
            Err(JaggedError::LastOffsetMismatch { last: 2, values: 1 })
        );
        assert!(Jagged::from_parts(vec![0, 3, 1, 3], vec![0; 3])
            .unwrap_err()
            .to_string()
            .contains("offsets[2] = 1"));
        assert_eq!(Jagged::from_lengths(&[2, 0, 1], vec![7, 8, 9]).unwrap().row(2), &[9]);
        let empty: Jagged<i32> = Jagged::new();
        assert!(empty.is_empty());
        assert_eq!(empty.iter().count(), 0);
    }

    #[test]
    #[should_panic(expected = "row 3 of a jagged array with 3 rows")]
    fn out_of_bounds_row_panics() {
        Jagged::from(vec![vec![1], vec![2], vec![3]]).row(3);
    }
}
