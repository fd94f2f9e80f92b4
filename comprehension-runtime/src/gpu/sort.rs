//! `parcomp::segmented::sort_permutation` on a device: a stable LSD radix sort of the keys,
//! carrying every key's original index (`kernels/sort.cl`).
//!
//! One pass per 8-bit digit, from the least significant, over ping-pong buffers of keys and
//! indices: each tile of `TILE` keys sorts its digits stably in local memory and counts them
//! into a digit-major histogram (`hist[digit * tiles + tile]`), the generic scan kernels turn
//! the histogram into every (digit, tile)'s first place in the output, and each tile moves its
//! keys there in order. A digit that is the same in every key (found on the host while the keys
//! are copied for the upload) is skipped: keys below 2¹⁶ take 2 passes, not 8.

use super::device::Arg;
use super::program::{self, TILE};
use super::segmented::{scan_sums_bytes, with_run};
use super::DeviceFailure;
use crate::backend::Backend;
use crate::site::Site;

/// Bits per digit (`PC_SORT_BITS` in `sort.cl`).
const DIGIT_BITS: u32 = 8;
/// Digits per key.
const RADIX: u64 = 1 << DIGIT_BITS;

/// The stable ascending permutation of `keys` on the device of `backend`: `perm[i]` is the
/// index of the `i`-th smallest key, equal keys in their input order.
pub(crate) fn sort_permutation(
    backend: Backend,
    site: &'static Site,
    keys: &[u64],
) -> Result<Vec<usize>, DeviceFailure> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    with_run(backend, site, |run| {
        let sort = run.program(program::sort)?;
        let sort = &*sort;
        let len = keys.len();
        let n = len as u64;
        // The bits in which some key differs from the first: only their digits need a pass.
        let mut varying = 0;
        let mut bytes = Vec::with_capacity(len * 8);
        for &key in keys {
            varying |= key ^ keys[0];
            bytes.extend_from_slice(&key.to_le_bytes());
        }
        let shifts: Vec<u32> = (0..u64::BITS)
            .step_by(DIGIT_BITS as usize)
            .filter(|&shift| (varying >> shift) & (RADIX - 1) != 0)
            .collect();
        let mut keys = run.upload(&bytes)?;
        drop(bytes);
        let mut indices = run.alloc(n * 8)?;
        run.launch(&*run.generic, "pc_iota", n, &[Arg::Buffer(&indices), Arg::U64(n)])?;
        if !shifts.is_empty() {
            let tiles = n.div_ceil(TILE);
            let counts = RADIX * tiles;
            let hist = run.alloc(counts * 8)?;
            let sums = run.alloc(scan_sums_bytes(counts))?;
            let offsets = run.alloc((counts + 1) * 8)?;
            let mut keys_out = run.alloc(n * 8)?;
            let mut indices_out = run.alloc(n * 8)?;
            let items = tiles * u64::from(program::GROUP);
            for shift in shifts {
                let args = [
                    Arg::Buffer(&keys),
                    Arg::U64(n),
                    Arg::U32(shift),
                    Arg::U64(tiles),
                    Arg::Buffer(&hist),
                ];
                run.launch(sort, "pc_sort_count", items, &args)?;
                run.scan_into(&hist, counts, &sums, &offsets)?;
                let args = [
                    Arg::Buffer(&run.fault),
                    Arg::Buffer(&keys),
                    Arg::Buffer(&indices),
                    Arg::U64(n),
                    Arg::U32(shift),
                    Arg::U64(tiles),
                    Arg::Buffer(&offsets),
                    Arg::Buffer(&keys_out),
                    Arg::Buffer(&indices_out),
                ];
                run.launch(sort, "pc_sort_scatter", items, &args)?;
                std::mem::swap(&mut keys, &mut keys_out);
                std::mem::swap(&mut indices, &mut indices_out);
            }
        }
        let out = run.read_usizes(&indices, len)?;
        Ok(out)
    })
}
