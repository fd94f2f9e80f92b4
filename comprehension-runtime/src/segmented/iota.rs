//! Index generators: [`replicated_iota`] (the row of every element) and [`segmented_iota`]
//! (the index of every element within its segment).
//!
//! Parallel algorithms: [`replicated_iota`] is an expansion, run by the comprehension engine
//! ([`crate::pipeline`]), which prefix-sums the sizes and cuts the flattened output into equal
//! ranges (so one huge row is split, and empty rows cost nothing but their size). For
//! [`segmented_iota`], every block finds its last segment start in parallel, a sequential pass
//! over the blocks gives each block the start of the segment open at its beginning, and every
//! block then writes its indices in parallel. On a device both run the generic kernels: the
//! scan of the sizes and the load-balanced search; the scan of the segment starts, then each
//! position less its segment's first.

use super::{alloc, block_len, blocks, build_in_parts, go_parallel};
use crate::gpu::segmented as device;
use crate::gpu::PrimitivePrograms;
use crate::pipeline::source;
use crate::site::Site;
use rayon::prelude::*;

/// Row `i` repeated `reps[i]` times, for every row in order: `[2, 3, 1]` gives
/// `[0, 0, 1, 1, 1, 2]`. The output has `reps.iter().sum()` elements.
///
/// # Panics
///
/// If the sum of `reps` overflows `usize`, or the output cannot be allocated.
///
/// ```
/// use comprehension_runtime::segmented::replicated_iota;
/// assert_eq!(replicated_iota(&[2, 0, 3, 1]), vec![0, 0, 2, 2, 2, 3]);
/// ```
pub fn replicated_iota(reps: &[usize]) -> Vec<usize> {
    static SITE: Site = Site::api("parcomp::segmented::replicated_iota");
    // Summed only when the choice depends on it (a device is present, not forced).
    let work = || reps.iter().fold(reps.len() as u64, |sum, &r| sum.saturating_add(r as u64));
    crate::dispatch::primitive(
        &SITE,
        PrimitivePrograms::Runtime,
        work,
        |b| device::replicated_iota(b, &SITE, reps),
        || source(&SITE, 0..reps.len()).expand(|&row| 0..reps[row]).map(|(row, _)| row).collect(),
    )
}

/// The index of every element within its segment: `out[i] = i - s`, where `s` is the start of
/// the segment holding `i`.
///
/// A segment starts wherever `flags` is `true`, and at index 0 whatever `flags[0]` is.
///
/// ```
/// use comprehension_runtime::segmented::segmented_iota;
/// let flags = [false, false, false, true, false, false, false];
/// assert_eq!(segmented_iota(&flags), vec![0, 1, 2, 0, 1, 2, 3]);
/// ```
pub fn segmented_iota(flags: &[bool]) -> Vec<usize> {
    static SITE: Site = Site::api("parcomp::segmented::segmented_iota");
    crate::dispatch::primitive(
        &SITE,
        PrimitivePrograms::Runtime,
        || flags.len() as u64,
        |b| device::segmented_iota(b, &SITE, flags),
        || segmented_iota_host(&SITE, flags),
    )
}

fn segmented_iota_host(site: &Site, flags: &[bool]) -> Vec<usize> {
    let n = flags.len();
    if !go_parallel(n) {
        let mut out = alloc(site, n);
        iota_block(flags, 0, 0, |v| out.push(v));
        return out;
    }
    let len = block_len(n);
    let ranges = blocks(n, len);
    // Phase 1: the last segment start in every block.
    let last_starts: Vec<Option<usize>> =
        ranges.par_iter().map(|r| r.clone().rev().find(|&i| flags[i] || i == 0)).collect();
    // Phase 2: the start of the segment open at the beginning of every block.
    let mut open = Vec::with_capacity(last_starts.len());
    let mut start = 0;
    for last in last_starts {
        open.push(start);
        start = last.unwrap_or(start);
    }
    // Phase 3: the indices.
    let parts: Vec<usize> = ranges.iter().map(|r| r.len()).collect();
    let (out, _) = build_in_parts(site, &parts, |k, w| {
        let r = ranges[k].clone();
        iota_block(&flags[r.clone()], r.start, open[k], |v| w.push(v));
    });
    out
}

/// Emits the in-segment index of every element of a block whose first element is `first` of
/// the whole input, when the segment open at its beginning started at `start`.
#[inline]
fn iota_block(flags: &[bool], first: usize, mut start: usize, mut emit: impl FnMut(usize)) {
    for (i, &flag) in (first..).zip(flags) {
        if flag {
            start = i;
        }
        emit(i - start);
    }
}
