//! The rayon backend's only contact with rayon: a few fork-join helpers whose parallel part is
//! compiled once, not once per comprehension.
//!
//! rayon's adaptors are generic over the closure they run, so every `par_iter().map(..)` in
//! the executor instantiated rayon's whole plumbing (jobs, `join`, the producer/consumer
//! bridge, unwinding) again for every comprehension of a user's crate: about three quarters of
//! the code a crate full of comprehensions compiled. Here the parallel loop takes a
//! `&dyn Fn(usize)`, so that plumbing is instantiated for this file alone; what stays generic
//! is the thin code around it (the closure, the result slots), while the work of each task —
//! the comprehension's fused loops — is still compiled for its own types and inlined. One
//! indirect call per task is all the dispatch costs: tasks are ranges of thousands of elements.

use std::ops::Range;

/// Runs `task(k)` for every `k` in `0..tasks` on the current rayon pool, each task a job of
/// its own, and returns when all have finished. A panic in a task propagates to the caller
/// once the others have finished, as with rayon's `for_each`.
fn each_task(tasks: usize, task: &(dyn Fn(usize) + Sync)) {
    use rayon::prelude::*;
    (0..tasks).into_par_iter().with_max_len(1).for_each(task);
}

/// Runs `piece(range)` on pieces that together cover `0..len` in order, splitting a piece in
/// two only while a thread of the pool is idle and both halves keep at least `min` elements
/// (rayon's adaptive splitting): an even level is cut into as few pieces as keep the threads
/// busy.
fn each_piece(len: usize, min: usize, piece: &(dyn Fn(Range<usize>) + Sync)) {
    use rayon::iter::ParallelIterator;
    let min = min.max(1);
    rayon::iter::split(0..len, |range| {
        let len = range.end - range.start;
        if len < 2 * min {
            return (range, None);
        }
        let mid = range.start + len / 2;
        (range.start..mid, Some(mid..range.end))
    })
    .for_each(piece);
}

/// `(0..tasks).map(task)` with the tasks run in parallel, one job each; the results in order.
pub(super) fn map_tasks<T: Send>(tasks: usize, task: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let mut results: Vec<T> = Vec::with_capacity(tasks);
    let slots = Parts::new(&mut results.spare_capacity_mut()[..tasks]);
    each_task(tasks, &|k| {
        let value = task(k);
        // SAFETY: `k < tasks`, and task `k` alone takes slot `k`.
        let slot = unsafe { slots.part(k..k + 1) };
        slot[0].write(value);
    });
    // SAFETY: every task ran and wrote its slot: a panic in one would have propagated out of
    // `each_task` before this line (the values written then leak, `results` stays empty).
    unsafe { results.set_len(tasks) };
    results
}

/// Runs `task(k, item)` for the items of `items` in parallel, one job each, moving item `k`
/// into task `k`.
pub(super) fn each_item<I: Send>(mut items: Vec<I>, task: impl Fn(usize, I) + Sync) {
    let len = items.len();
    // SAFETY: from here on `items` owns only its buffer: the tasks move the elements out, each
    // exactly once (task `k` reads element `k`); after a panic the ones not read leak.
    unsafe { items.set_len(0) };
    let elements = Parts { start: items.as_mut_ptr(), len };
    each_task(len, &|k| {
        // SAFETY: element `k < len` was initialised and is read by this task only, once.
        let item = unsafe { elements.part(k..k + 1).as_ptr().read() };
        task(k, item);
    });
}

/// A mutable slice that parallel tasks write in disjoint parts.
struct Parts<T> {
    start: *mut T,
    len: usize,
}

// SAFETY: a `Parts` only hands out `&mut [T]` for disjoint ranges (the contract of `part`),
// each to one task, so sharing it between threads is sharing disjoint `&mut [T]`s, which is
// sound when `T: Send`.
unsafe impl<T: Send> Sync for Parts<T> {}

impl<T> Parts<T> {
    fn new(slice: &mut [T]) -> Self {
        Parts { start: slice.as_mut_ptr(), len: slice.len() }
    }

    /// The elements `range` of the slice.
    ///
    /// # Safety
    ///
    /// `range` lies within the slice, and no two parts alive at the same time overlap.
    // A `&mut` from `&self` is the point: the tasks share the `Parts`, and the disjointness that
    // makes each part exclusive is the caller's contract above.
    #[allow(clippy::mut_from_ref)]
    unsafe fn part(&self, range: Range<usize>) -> &mut [T] {
        debug_assert!(range.start <= range.end && range.end <= self.len);
        // SAFETY: the range is within the slice, which outlives `self` (borrowed mutably for
        // the whole of the parallel loop by the functions below), and by the caller's contract
        // no other live reference covers these elements.
        unsafe { std::slice::from_raw_parts_mut(self.start.add(range.start), range.len()) }
    }
}

/// Runs `piece(offset, part)` on consecutive parts of `slice` (each at least `min` long but
/// for a shorter slice), in parallel, split adaptively (see [`each_piece`]).
pub(super) fn each_piece_mut<T: Send>(
    slice: &mut [T],
    min: usize,
    piece: impl Fn(usize, &mut [T]) + Sync,
) {
    let len = slice.len();
    let parts = Parts::new(slice);
    each_piece(len, min, &|range| {
        // SAFETY: `each_piece` covers `0..len` with disjoint ranges, each given to one call.
        let part = unsafe { parts.part(range.clone()) };
        piece(range.start, part);
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn map_tasks_keeps_the_order() {
        let out = map_tasks(1000, |k| k * 3);
        assert_eq!(out, (0..1000).map(|k| k * 3).collect::<Vec<_>>());
        assert!(map_tasks(0, |k| k).is_empty());
    }

    #[test]
    fn each_piece_mut_covers_the_slice_once() {
        for len in [0, 1, 255, 256, 513, 100_000] {
            let mut v = vec![0u32; len];
            each_piece_mut(&mut v, 256, |offset, part| {
                for (i, x) in part.iter_mut().enumerate() {
                    *x += (offset + i) as u32 + 1;
                }
            });
            assert!(v.iter().enumerate().all(|(i, &x)| x == i as u32 + 1), "len {len}");
        }
    }

    #[test]
    fn a_panic_in_a_task_propagates() {
        let caught = std::panic::catch_unwind(|| {
            map_tasks(64, |k| if k == 17 { panic!("task 17") } else { k })
        });
        assert!(caught.is_err());
    }

    #[test]
    fn each_item_moves_each_item_once() {
        let seen: Vec<Mutex<Vec<String>>> = (0..4).map(|_| Mutex::new(Vec::new())).collect();
        each_item(vec!["a".to_string(), "b".into(), "c".into(), "d".into()], |k, s| {
            seen[k].lock().unwrap().push(s);
        });
        let seen: Vec<Vec<String>> = seen.into_iter().map(|m| m.into_inner().unwrap()).collect();
        assert_eq!(seen, [vec!["a"], vec!["b"], vec!["c"], vec!["d"]]);
    }
}
