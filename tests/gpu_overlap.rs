//! A run of several chunks copies beside its kernels, on the queue's copy lane (a second
//! command queue, a second CUDA stream): each chunk's values are read while the next chunk's
//! kernels run, and the first generator's elements are copied a chunk ahead of the kernels that
//! read them. A GPU's runs take the lane; this binary turns it on for PoCL
//! (`PARCOMP_DEVICE_OVERLAP=on`), with chunks of 1000 positions (`PARCOMP_DEVICE_CHUNK`) and
//! copies through pinned pieces of 4,000 bytes (`PARCOMP_DEVICE_STAGING`), all read once per
//! process, before anything runs. The two queues are ordered only by marks (events): a chunk's
//! kernels wait for its elements' copy, the lane's read of a chunk's values waits for the
//! kernels that wrote them, and a column goes back to the arena only once the queue waits for
//! its read — a missing mark shows here as wrong values.

mod support;

use parcomp::{par, par_sum};
use support::on_every_backend_with_stats as with_stats;

#[test]
fn a_run_of_several_chunks_copies_beside_its_kernels() {
    // The only test of this binary: nothing else reads the variables before they are set.
    std::env::set_var("PARCOMP_DEVICE_CHUNK", "1000");
    std::env::set_var("PARCOMP_DEVICE_STAGING", "4000");
    std::env::set_var("PARCOMP_DEVICE_OVERLAP", "on");
    if !support::device() {
        return;
    }
    let v: Vec<u64> = (0..25_500u64).map(|i| i.wrapping_mul(0x9E37_79B9) % 1_000_003).collect();
    let bytes = 8 * v.len() as u64;

    // A map of a slice: every chunk's elements go in on the lane, and its values come out on
    // it, the last chunk's at the run's one wait.
    let (got, s) = with_stats(|| par![x * 3 + 1 | x <- &v]);
    assert_eq!(got, v.iter().map(|x| x * 3 + 1).collect::<Vec<_>>());
    if let Some(s) = s {
        assert_eq!((s.chunks, s.host_waits), (26, 1), "{s:?}");
        assert_eq!((s.bytes_in, s.bytes_out), (bytes, bytes), "{s:?}");
        assert_eq!(s.bytes_beside, 2 * bytes, "every byte in and out beside the kernels: {s:?}");
        assert!(s.bytes_staged >= 2 * bytes, "through the lane's pinned slots: {s:?}");
    }

    // Tuple values, read into columns of each chunk's own.
    let (got, s) = with_stats(|| par![(x, x % 7 == 0, (x >> 3) as u8) | x <- &v]);
    assert_eq!(got[25_499], (v[25_499], v[25_499] % 7 == 0, (v[25_499] >> 3) as u8));
    if let Some(s) = s {
        assert_eq!((s.chunks, s.host_waits), (26, 1), "{s:?}");
        assert_eq!(s.bytes_beside, bytes + s.bytes_out, "{s:?}");
    }

    // Over a range: nothing goes in; the values come out beside.
    let (got, s) = with_stats(|| par![i * i | i <- 0..30_000u64]);
    assert_eq!(got[29_999], 29_999 * 29_999);
    if let Some(s) = s {
        assert_eq!((s.chunks, s.host_waits, s.bytes_in), (30, 1, 0), "{s:?}");
        assert_eq!(s.bytes_beside, 8 * 30_000, "{s:?}");
    }

    // A sum: the elements go in a chunk ahead; one partial result per chunk stays on the device.
    let (got, s) = with_stats(|| par_sum![x | x <- &v]);
    assert_eq!(got, v.iter().sum::<u64>());
    if let Some(s) = s {
        assert_eq!((s.chunks, s.host_waits), (26, 1), "{s:?}");
        assert_eq!(s.bytes_beside, bytes, "{s:?}");
    }

    // A filter: the elements beside; the kept values appended to the run's region, read once
    // at the end with their count.
    let (got, s) = with_stats(|| par![x | x <- &v, x % 3 != 0]);
    assert_eq!(got, v.iter().copied().filter(|x| x % 3 != 0).collect::<Vec<_>>());
    if let Some(s) = s {
        assert_eq!((s.chunks, s.host_waits), (26, 2), "{s:?}");
        assert_eq!(s.bytes_beside, bytes, "{s:?}");
    }

    // Below the first generator: the chunks of an irregular level, read beside the next ones'
    // kernels, with the waits for each chunk's sizes between.
    let (got, _) = with_stats(|| par![(x, y) | x <- 0..250u64, y <- 0..x]);
    assert_eq!(got.len(), 250 * 249 / 2);
    let (got, _) = with_stats(|| par![x + y | x <- &v[..300], y <- 0..x % 97]);
    assert_eq!(got.len(), v[..300].iter().map(|x| (x % 97) as usize).sum::<usize>());

    // Many chunks of a map whose values all differ: a column reused before the lane read it,
    // or read before its kernels ran, gives another chunk's values.
    let w: Vec<u32> = (0..200_000u32).collect();
    let (got, s) = with_stats(|| par![x ^ 0x5A5A_5A5A | x <- &w]);
    assert!(got.iter().enumerate().all(|(i, &y)| y == i as u32 ^ 0x5A5A_5A5A));
    if let Some(s) = s {
        assert_eq!((s.chunks, s.host_waits), (200, 1), "{s:?}");
    }

    // One chunk: nothing to overlap, nothing beside; and nothing at all.
    let (got, s) = with_stats(|| par![x + 1 | x <- &v[..1000]]);
    assert_eq!(got.len(), 1000);
    if let Some(s) = s {
        assert_eq!((s.chunks, s.bytes_beside), (1, 0), "{s:?}");
    }
    let (got, _) = with_stats(|| par![x | x <- &v[..0]]);
    assert!(got.is_empty());
}
