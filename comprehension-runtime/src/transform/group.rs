//! `group by KEY`: the elements so far, grouped by key in ascending key order (GHC's
//! `groupWith`), each group's values kept in their order, one column per variable.

use super::order::{permutation, permute, OrderKey};
use crate::site::Site;
use crate::source::Source;
use std::cmp::Ordering;
use std::ops::Range;

/// The values of the variables that are not the key, as a tuple: stored as one `Vec` per
/// variable, so that after `group by` each variable is its group's values as a slice.
pub trait Columns: Sized {
    /// One `Vec` per variable.
    type Vecs: Send + Sync;
    /// One slice per variable.
    type Slices<'a>: Clone + Send + Sync
    where
        Self: 'a;
    /// The values, one column per variable.
    fn unzip(values: Vec<Self>) -> Self::Vecs;
    /// The rows `range` of every column.
    fn slices(vecs: &Self::Vecs, range: Range<usize>) -> Self::Slices<'_>;
}

macro_rules! tuple_columns {
    ($(($($name:ident $index:tt),*))*) => {$(
        impl<$($name: Send + Sync),*> Columns for ($($name,)*) {
            type Vecs = ($(Vec<$name>,)*);
            type Slices<'a> = ($(&'a [$name],)*) where Self: 'a;
            #[allow(unused_variables, clippy::unused_unit)]
            fn unzip(values: Vec<Self>) -> Self::Vecs {
                let n = values.len();
                #[allow(unused_mut)]
                let mut vecs: Self::Vecs = ($(Vec::<$name>::with_capacity(n),)*);
                for value in values {
                    $( vecs.$index.push(value.$index); )*
                }
                vecs
            }
            #[allow(unused_variables, clippy::unused_unit)]
            fn slices(vecs: &Self::Vecs, range: Range<usize>) -> Self::Slices<'_> {
                ($(&vecs.$index[range.clone()],)*)
            }
        }
    )*};
}

tuple_columns! {
    ()
    (A 0)
    (A 0, B 1)
    (A 0, B 1, C 2)
    (A 0, B 1, C 2, D 3)
    (A 0, B 1, C 2, D 3, E 4)
    (A 0, B 1, C 2, D 3, E 4, F 5)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11)
}

/// The groups of a `group by`: group `g` has key `keys[g]` and the values
/// `starts[g]..starts[g + 1]` of every column. A source: its elements are `(key, slices)`.
pub struct Groups<K, V: Columns> {
    keys: Vec<K>,
    starts: Vec<usize>,
    columns: V::Vecs,
}

impl<K, V: Columns> Groups<K, V> {
    /// The number of groups.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether there is no group (no element was grouped).
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

/// `group by`: the `(key, values)` pairs gathered so far, stably sorted by key (a radix sort
/// on the device for integer and float keys, see [`order_by`](super::order_by)), cut where
/// the key changes.
pub fn group_by<K, V>(site: &'static Site, items: Vec<(K, V)>) -> Groups<K, V>
where
    K: OrderKey + Send + Sync,
    V: Columns + Send,
{
    let (keys, values): (Vec<K>, Vec<V>) = items.into_iter().unzip();
    let perm = permutation(site, &keys, false);
    let keys = permute(keys, &perm);
    let values = permute(values, &perm);
    let mut starts = Vec::new();
    let mut group_keys = Vec::new();
    for (i, key) in keys.into_iter().enumerate() {
        let new_group = match group_keys.last() {
            Some(last) => key.cmp_key(last) != Ordering::Equal,
            None => true,
        };
        if new_group {
            starts.push(i);
            group_keys.push(key);
        }
    }
    starts.push(values.len());
    Groups { keys: group_keys, starts, columns: V::unzip(values) }
}

impl<'a, K: Clone, V: Columns> Source for &'a Groups<K, V> {
    type Item = (K, V::Slices<'a>);
    #[inline]
    fn size(&self) -> usize {
        self.keys.len()
    }
    #[inline]
    fn fetch(&self, index: usize) -> Self::Item {
        let range = self.starts[index]..self.starts[index + 1];
        (self.keys[index].clone(), V::slices(&self.columns, range))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static SITE: Site = Site::api("group_by test");

    #[test]
    fn groups_in_key_order_with_values_in_order() {
        let items = vec![(2, ('a', 1)), (1, ('b', 2)), (2, ('c', 3)), (1, ('d', 4)), (3, ('e', 5))];
        let groups = group_by(&SITE, items);
        let got: Vec<(i32, Vec<char>, Vec<i32>)> = (0..Source::size(&&groups))
            .map(|g| {
                let (k, (a, b)) = Source::fetch(&&groups, g);
                (k, a.to_vec(), b.to_vec())
            })
            .collect();
        assert_eq!(
            got,
            [
                (1, vec!['b', 'd'], vec![2, 4]),
                (2, vec!['a', 'c'], vec![1, 3]),
                (3, vec!['e'], vec![5])
            ]
        );
        let empty: Groups<u8, (u8,)> = group_by(&SITE, Vec::new());
        assert!(empty.is_empty());
        // Floats group by `total_cmp`: -0.0 and 0.0 are two keys, NaN is one.
        let floats = group_by(&SITE, vec![(0.0, ()), (f64::NAN, ()), (-0.0, ()), (f64::NAN, ())]);
        assert_eq!(floats.len(), 3);
    }
}
