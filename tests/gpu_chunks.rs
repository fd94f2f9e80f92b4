//! Flattened spaces larger than a chunk are processed a chunk at a time: device memory stays
//! bounded, and the results are the same as in one piece. This binary sets a chunk of 1000
//! positions (`PARCOMP_DEVICE_CHUNK`, read once per process) before anything runs, so that
//! every comprehension below crosses many chunk boundaries: rows split between chunks,
//! reductions carried across them, filters compacting each chunk and appending its kept values
//! to a region of 2,500 (`PARCOMP_DEVICE_REGION`), emptied when full.

mod support;

use parcomp::{par, par_count, par_device, par_max, par_min, par_sum};
use support::{on_device, on_every_backend};

const CHUNK: u64 = 1000;

#[test]
fn comprehensions_cross_chunk_boundaries() {
    // The only test of this binary: nothing else reads the variables before they are set.
    std::env::set_var("PARCOMP_DEVICE_CHUNK", CHUNK.to_string());
    // A filtering last level's region of kept values holds 2.5 chunks' worth: a level of many
    // chunks empties it (a wait) when the next chunk might not fit, and again at its end.
    std::env::set_var("PARCOMP_DEVICE_REGION", (CHUNK * 5 / 2).to_string());
    if !support::device() {
        return;
    }

    // Expansion with rows longer and shorter than a chunk, and empty ones.
    let n = 300u64;
    let got = on_every_backend(|| par![(x, y) | x <- 0..n, y <- 0..(x * x) % 2500]);
    assert_eq!(got.len() as u64, (0..n).map(|x| (x * x) % 2500).sum::<u64>());

    // Three levels, a filter at the last: the Pythagorean triples.
    let n = 200u32;
    let got = on_every_backend(
        || par![(x, y, z) | x <- 1..n, y <- x..n, z <- y..x + y, z < n, x * x + y * y == z * z],
    );
    assert!(got.contains(&(3, 4, 5)) && got.contains(&(119, 120, 169)));

    // A nested reduction whose rows span chunks: the carries join them.
    let sizes: Vec<u64> = (0..50).map(|i| if i % 10 == 3 { 12_345 } else { i % 4 }).collect();
    let got = on_every_backend(|| par![par_sum![j * s | j <- 0..s] | s <- &sizes]);
    let want: Vec<u64> = sizes.iter().map(|&s| (0..s).map(|j| j * s).sum()).collect();
    assert_eq!(got, want);
    let got = on_every_backend(|| par![par_min![j ^ s | j <- 0..s] | s <- &sizes]);
    assert_eq!(got[0], None);
    let got = on_every_backend(|| par![par_count![() | j <- 0..s, j % 3 == 0] | s <- &sizes]);
    assert_eq!(got[3], 4115);

    // A head that is exactly a nested reduction (its results column is the output, no head
    // kernel) and one that converts it (the head kernel runs), over empty rows, a row 25 chunks
    // long, and contexts in five chunks, each chunk's results delivered in turn.
    let rows: Vec<Vec<(u32, f64)>> = (0..5000u32)
        .map(|i| match i {
            1234 => (0..25_000).map(|c| (c % 61, f64::from(c % 7))).collect(),
            _ if i % 3 == 0 => Vec::new(),
            _ => (0..i % 13).map(|c| (c * 4 % 61, f64::from(c))).collect(),
        })
        .collect();
    let m = parcomp::Jagged::from(rows);
    let x: Vec<f64> = (0..61).map(|c| f64::from(c) * 0.5).collect();
    let want: Vec<f64> =
        m.iter().map(|row| row.iter().map(|&(c, v)| v * x[c as usize]).sum()).collect();
    let got = on_every_backend(
        || par![par_sum![v * x[c as usize] | (c, v) <- m.row(i)] | i <- 0..m.len()],
    );
    assert_eq!(got, want);
    assert!(got[0] == 0.0 && got[1234] > 100_000.0);
    let got = on_every_backend(
        || par![par_sum![v * x[c as usize] | (c, v) <- m.row(i)] as f32 | i <- 0..m.len()],
    );
    assert_eq!(got, want.iter().map(|&y| y as f32).collect::<Vec<f32>>());
    let got = on_every_backend(
        || par![par_count![() | (c, _) <- m.row(i), c % 2 == 0] | i <- 0..m.len()],
    );
    assert_eq!(got[0], 0);

    // A nested par!: a jagged result whose rows span chunks.
    let got = on_every_backend(|| par![par![j * 2 | j <- 0..s, j % 1000 != 1] | s <- &sizes]);
    assert_eq!(got[3].len(), 12_345 - 13);

    // Filters whose work-groups keep all, none or some of their positions, staging the few
    // or computing the many again (search.h), in chunks of 1000: four work-groups of 256, the
    // last of 232, each chunk's stage and places of its own; below the first generator a
    // work-group's 256 × 32 positions are cut short by the chunk.
    let flags: Vec<u64> = (0..20_000u64)
        .map(|i| {
            let keep = match (i / 700) % 5 {
                0 => true,
                1 => false,
                2 => i % 3 == 0,
                3 => i % 97 == 5,
                _ => (i * 7919) % 256 < 128,
            };
            ((i * 0x9E37_79B9) % 100_003) << 1 | u64::from(keep)
        })
        .collect();
    on_every_backend(|| par![x >> 1 | x <- &flags, x & 1 == 1]);
    if let Some(s) = on_device(|| {
        par![x >> 1 | x <- &flags, x & 1 == 1];
        parcomp::gpu_stats().expect("the device ran it")
    }) {
        // 20 chunks, the region emptied before every other one and at the end: 10 waits (the
        // values kept between two are read with their count).
        assert_eq!((s.chunks, s.host_waits), (20, 10), "{s:?}");
    }
    on_every_backend(|| par![(x >> 1, x % 5) | x <- &flags, x & 1 == 1]);
    // Kept on the device, in a column per emptying of the region.
    on_every_backend(|| par_device![(x >> 1, x % 5) | x <- &flags, x & 1 == 1].to_vec());
    assert!(on_every_backend(|| par![x | x <- &flags, x > u64::MAX - 1]).is_empty());
    let rows = parcomp::Jagged::from(
        (0..30).map(|r| flags[r * 311..r * 311 + (r * 97) % 2000].to_vec()).collect::<Vec<_>>(),
    );
    on_every_backend(|| par![(i, x >> 1) | i <- 0..rows.len(), x <- rows.row(i), x & 1 == 1]);
    on_every_backend(|| par![par![x >> 1 | x <- rows.row(i), x & 1 == 1] | i <- 0..rows.len()]);

    // Flat reductions over many chunks.
    let total = on_every_backend(|| par_sum![x * y | x <- 0..2000u64, y <- 0..x]);
    assert_eq!(total, (0..2000u64).map(|x| (0..x).map(|y| x * y).sum::<u64>()).sum::<u64>());
    assert_eq!(
        on_every_backend(|| par_max![(x * 7919) % 10_007 | x <- 0..100_000u64]),
        Some(10_006)
    );

    // Device memory stays bounded by the chunk, not by the space: 10⁷ positions reduced.
    let stats = on_device(|| {
        let sum = par_sum![x as u64 | x <- 0..10_000_000u32];
        assert_eq!(sum, 10_000_000 * 9_999_999 / 2);
        parcomp::gpu_stats().expect("the device ran it")
    });
    if let Some(stats) = stats {
        assert_eq!(stats.positions, 10_000_000);
        assert!(
            stats.peak_memory < 1 << 20,
            "{} bytes held for chunks of {CHUNK}",
            stats.peak_memory
        );
    }
}
