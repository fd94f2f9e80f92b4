//! `order by KEY [desc], take K` straight after the part that produces the elements: the best
//! `K` of each part of the iteration space kept as they are produced ([`TopK`]), never
//! gathering the elements — O(n log K) time and O(K) memory per thread, not a `Vec` of all n.
//!
//! The answer is the stable sort's first `K`: elements compare by key (reversed for `desc`),
//! then by their place in nested-loop order, which each part counts from its start and a
//! combination shifts by the count of the part before (parts combine left before right).

use super::order::{host_choice, order_by_take, OrderKey};
use crate::gpu::Offload;
use crate::pipeline::{Comprehension, Reducer, Rooted, Stage};
use crate::site::Site;
use std::cmp::Ordering;
use std::ops::ControlFlow;

/// The [`Reducer`] of `(element, key)` pairs whose result is the `k` first elements of the
/// stable sort by key (reversed for `desc`), in that order.
pub struct TopK {
    k: usize,
    descending: bool,
}

/// A part's best elements: `(key, place, element)`, in no particular order.
pub struct Best<T, K> {
    items: Vec<(K, u64, T)>,
    /// Whether `items[k - 1]` is the `k`-th best of the elements seen, which a new element must
    /// beat to enter (set when the items were cut back to `k`; later entries only beat it).
    cut: bool,
    /// The elements seen: the next one's place in the part.
    seen: u64,
}

impl TopK {
    /// The first `k` (`k > 0`) by key, ascending or `descending`.
    pub fn new(k: usize, descending: bool) -> Self {
        assert!(k > 0, "`take 0` computes nothing");
        TopK { k, descending }
    }

    fn order<K: OrderKey>(&self, a: &K, b: &K) -> Ordering {
        let o = a.cmp_key(b);
        if self.descending {
            o.reverse()
        } else {
            o
        }
    }

    /// Whether `a` comes before `b` in the answer: by key, then by place.
    fn before<K: OrderKey, T>(&self, a: &(K, u64, T), b: &(K, u64, T)) -> Ordering {
        self.order(&a.0, &b.0).then(a.1.cmp(&b.1))
    }

    /// How many items a part holds before cutting them back to `k`: twice `k`, so that a cut
    /// (linear in the items) comes at most once per `k` entries.
    fn capacity(&self) -> usize {
        self.k.saturating_mul(2).max(self.k + 64)
    }

    /// Cuts `items` back to their best `k`, the `k`-th best last; whether there were `k`
    /// (else nothing is moved).
    fn cut<K: OrderKey, T>(&self, items: &mut Vec<(K, u64, T)>) -> bool {
        if items.len() < self.k {
            return false;
        }
        items.select_nth_unstable_by(self.k - 1, |a, b| self.before(a, b));
        items.truncate(self.k);
        true
    }
}

impl<T: Send, K: OrderKey + Send> Reducer<(T, K)> for TopK {
    type Acc = Best<T, K>;
    type Result = Vec<T>;
    // A part's accumulator holds up to `2k` elements: fewer, larger parts.
    const FEW_PARTS: bool = true;

    fn identity(&self) -> Best<T, K> {
        Best { items: Vec::new(), cut: false, seen: 0 }
    }

    #[inline]
    fn push(&self, acc: &mut Best<T, K>, (value, key): (T, K)) -> ControlFlow<()> {
        let place = acc.seen;
        acc.seen += 1;
        if acc.items.len() >= self.capacity() {
            acc.cut = self.cut(&mut acc.items);
        }
        // An element equal to the `k`-th best comes after it: it must be strictly better.
        if acc.cut && self.order(&key, &acc.items[self.k - 1].0) != Ordering::Less {
            return ControlFlow::Continue(());
        }
        acc.items.push((key, place, value));
        ControlFlow::Continue(())
    }

    fn combine(&self, mut left: Best<T, K>, right: Best<T, K>) -> Best<T, K> {
        let shift = left.seen;
        left.items
            .extend(right.items.into_iter().map(|(key, place, value)| (key, place + shift, value)));
        left.seen += right.seen;
        left.cut = self.cut(&mut left.items);
        left
    }

    fn finish(&self, mut acc: Best<T, K>) -> Vec<T> {
        self.cut(&mut acc.items);
        acc.items.sort_unstable_by(|a, b| self.before(a, b));
        acc.items.into_iter().map(|(_, _, value)| value).collect()
    }
}

/// `order by KEY [desc], take k` of the `(element, key)` pairs the part `run` produces: the
/// first `k` elements of the stable sort by key. The part is reduced by [`TopK`] on the host as
/// it runs, unless a device is forced and the key is one integer or float: then the part runs
/// as its `offload` places it and the device sorts ([`order_by_take`]), as `order by` does.
/// `site` is the `order by`'s, for the trace. Nothing is computed for `k` = 0.
pub fn order_by_take_part<P, H, T, K>(
    site: &'static Site,
    run: Comprehension<P, H>,
    offload: Offload<'_, (T, K)>,
    descending: bool,
    k: usize,
) -> Vec<T>
where
    P: Stage<Root = Rooted>,
    H: Fn(P::Item) -> (T, K) + Sync,
    T: Send,
    K: OrderKey + Send + Sync,
{
    if k == 0 {
        return Vec::new();
    }
    let device_forced = matches!(crate::backend::selection(), Some(b) if b.is_device());
    if K::RADIX && device_forced {
        return order_by_take(site, run.collect_on(offload), descending, k);
    }
    crate::dispatch::ran_on_host(site, || {
        host_choice::<K>(format!("the first {k} chosen on the host as the elements are produced"))
    });
    let why = "`order by .., take K` keeps the best K of each thread's elements as they are \
               produced: on the host";
    run.reduce_on(TopK::new(k, descending), Offload::host_only(why))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reduces `items` in parts of `part` elements, combined left to right, as the executor
    /// does.
    fn top_k<T: Send, K: OrderKey + Send>(
        items: Vec<(T, K)>,
        k: usize,
        descending: bool,
        part: usize,
    ) -> Vec<T> {
        let r = TopK::new(k, descending);
        let mut parts = Vec::new();
        let mut items = items.into_iter().peekable();
        while items.peek().is_some() {
            let mut acc = Reducer::<(T, K)>::identity(&r);
            for item in items.by_ref().take(part) {
                let _ = r.push(&mut acc, item);
            }
            parts.push(acc);
        }
        let acc = parts.into_iter().fold(Reducer::<(T, K)>::identity(&r), |a, b| r.combine(a, b));
        r.finish(acc)
    }

    /// The stable sort's first `k`.
    fn sorted(items: &[(usize, i32)], k: usize, descending: bool) -> Vec<usize> {
        let mut items = items.to_vec();
        if descending {
            items.sort_by_key(|p| std::cmp::Reverse(p.1));
        } else {
            items.sort_by_key(|p| p.1);
        }
        items.into_iter().take(k).map(|p| p.0).collect()
    }

    #[test]
    fn the_stable_sorts_first_k_in_any_part_size() {
        let mut seed = 11u64;
        let mut next = move || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as i32
        };
        for n in [0usize, 1, 5, 100, 3000] {
            // Few distinct keys (many ties), many, and all equal.
            for span in [1, 4, 1 << 20] {
                let items: Vec<(usize, i32)> = (0..n).map(|i| (i, next() % span)).collect();
                for k in [1, 2, 7, 64, 65, 200, n, n + 10] {
                    for descending in [false, true] {
                        let want = sorted(&items, k.max(1), descending);
                        for part in [1, 3, 100, 5000] {
                            let got = top_k(items.clone(), k.max(1), descending, part);
                            assert_eq!(got, want, "n {n} span {span} k {k} desc {descending}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn elements_need_not_be_copy_or_keys_simple() {
        let words: Vec<(String, (u8, &str))> = ["b", "a", "c", "a", "b"]
            .iter()
            .enumerate()
            .map(|(i, w)| (format!("{w}{i}"), (1, *w)))
            .collect();
        assert_eq!(top_k(words.clone(), 3, false, 2), ["a1", "a3", "b0"]);
        assert_eq!(top_k(words, 2, true, 1), ["c2", "b0"]);
    }
}
