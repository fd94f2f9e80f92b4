//! A run of many chunks reads each chunk's values without waiting for them: it waits for its
//! values once, at its end, and the values are the same as in one piece; a filtering last
//! level's chunks append their kept values to one region on the device, so its kept count is
//! one wait too, not one per chunk. This binary sets a
//! chunk of 1000 positions (`PARCOMP_DEVICE_CHUNK`) and copies through pinned pieces of 4,000
//! bytes (`PARCOMP_DEVICE_STAGING`), both read once per process, before anything runs: the
//! reads of one chunk land in a staging slot while the next chunk's kernels are queued, and
//! reach the output when the slot is reused or the queue finishes — the path a GPU's runs take.

mod support;

use parcomp::{par, par_device};
use support::on_every_backend_with_stats as with_stats;

#[test]
fn a_run_of_many_chunks_waits_as_often_as_one_chunk() {
    // The only test of this binary: nothing else reads the variables before they are set.
    std::env::set_var("PARCOMP_DEVICE_CHUNK", "1000");
    std::env::set_var("PARCOMP_DEVICE_STAGING", "4000");
    if !support::device() {
        return;
    }
    let v: Vec<u64> = (0..25_500u64).map(|i| i.wrapping_mul(0x9E37_79B9) % 1_000_003).collect();

    // Primitive values, read straight into the output's memory, reserved whole at once.
    let (got, s) = with_stats(|| par![x * 3 + 1 | x <- &v]);
    assert_eq!(got, v.iter().map(|x| x * 3 + 1).collect::<Vec<_>>());
    if let Some(s) = s {
        assert_eq!(s.chunks, 26, "{s:?}");
        assert_eq!(s.host_waits, 1, "one wait for 26 chunks' values: {s:?}");
        assert_eq!(s.bytes_out, 8 * v.len() as u64, "{s:?}");
        assert!(s.bytes_staged >= s.bytes_out, "the reads went through the slots: {s:?}");
    }

    // Tuple values, read into columns of each chunk's own, assembled after the wait.
    let (got, s) = with_stats(|| par![(x, x % 7 == 0, (x >> 3) as u8) | x <- &v]);
    assert_eq!(got[25_499], (v[25_499], v[25_499] % 7 == 0, (v[25_499] >> 3) as u8));
    if let Some(s) = s {
        assert_eq!((s.chunks, s.host_waits), (26, 1), "{s:?}");
    }

    // Over a range: the same.
    let (got, s) = with_stats(|| par![i * i | i <- 0..30_000u64]);
    assert_eq!(got[29_999], 29_999 * 29_999);
    if let Some(s) = s {
        assert_eq!((s.chunks, s.host_waits), (30, 1), "{s:?}");
    }

    // Filtered values: the chunks append their kept values to one region, placed by a running
    // count the device keeps; the run waits for the count once and for the values once.
    let (got, s) = with_stats(|| par![x | x <- &v, x % 3 != 0]);
    assert_eq!(got, v.iter().copied().filter(|x| x % 3 != 0).collect::<Vec<_>>());
    if let Some(s) = s {
        assert_eq!((s.chunks, s.host_waits), (26, 2), "{s:?}");
    }
    let (got, _) = with_stats(|| par![(x, x / 2) | x <- &v, x % 3 != 0]);
    assert_eq!(got.len(), v.iter().filter(|x| *x % 3 != 0).count());

    // A filtered two-level product: its regular level's size asked once, then the count and
    // the values — three waits for 40 chunks, as for one.
    let (got, s) = with_stats(|| par![(x, y) | x <- 0..200u64, y <- 0..200u64, (x * y) % 7 == 1]);
    assert_eq!(got.len(), (0..200u64).map(|x| (0..200).filter(|y| (x * y) % 7 == 1).count()).sum());
    if let Some(s) = s {
        assert_eq!((s.chunks, s.host_waits), (41, 3), "{s:?}");
    }

    // Kept on the device (`par_device!`): the region's values copied into a column of their
    // own, one wait for their count, the only bytes read back.
    let (got, s) = with_stats(|| par_device![x + 1 | x <- &v, x % 4 == 1].to_vec());
    assert_eq!(got, v.iter().filter(|&&x| x % 4 == 1).map(|x| x + 1).collect::<Vec<_>>());
    if let Some(s) = s {
        assert_eq!((s.chunks, s.host_waits, s.bytes_out), (26, 1, 8), "{s:?}");
    }

    // Below the first generator, rows across chunks; and nothing at all.
    let (got, _) = with_stats(|| par![(x, y) | x <- 0..250u64, y <- 0..x, (x ^ y) % 5 != 1]);
    assert_eq!(got.len(), (0..250u64).map(|x| (0..x).filter(|y| (x ^ y) % 5 != 1).count()).sum());
    let (got, _) = with_stats(|| par![x | x <- &v[..0]]);
    assert!(got.is_empty());
}
