//! The device kernels' boundaries: a work-group's 256 positions, the runs of 32 its scans and
//! reductions go by, a top-level reduction's tile of 256 × items positions, the scan's tiles of
//! 1024 sizes and its blocks of 1024 tiles. Each comprehension runs at sizes just below, at and
//! just above each of them, on every backend, and must equal the sequential backend (chunk
//! boundaries are `tests/gpu_chunks.rs`'s).

mod support;

use parcomp::{par, par_count, par_max, par_min, par_reduce, par_sum, DeviceValue, Jagged};
use support::on_every_backend;

/// Sizes around every boundary of the kernels.
const SIZES: &[u64] =
    &[1, 2, 31, 32, 33, 255, 256, 257, 511, 1023, 1024, 1025, 2047, 2048, 2049, 4095, 4097, 8193];

/// Concatenation of polynomial hashes `(hash, base^length)`: associative, not commutative, so
/// any reordering across a boundary changes the result.
#[parcomp::par_fn]
fn hash_concat((h1, p1): (u64, u64), (h2, p2): (u64, u64)) -> (u64, u64) {
    (h1.wrapping_mul(p2).wrapping_add(h2), p1.wrapping_mul(p2))
}

#[test]
fn flat_reductions_at_tile_boundaries() {
    for &n in SIZES {
        on_every_backend(|| par_sum![x * x | x <- 0..n]);
        on_every_backend(|| par_count![() | x <- 0..n, x % 3 != 1]);
        on_every_backend(|| par_min![(x * 7919) % 1009 | x <- 0..n]);
        on_every_backend(|| par_max![(x * 7919) % 1009 | x <- 0..n]);
        // The order of a non-commutative reduction, across runs, work-items and work-groups.
        on_every_backend(|| par_reduce!(hash_concat, (0, 1); (x + 1, 31) | x <- 0..n));
        // An accumulator of two components (fewer positions per work-item).
        on_every_backend(|| par_max![(x % 17, x) | x <- 0..n]);
        // Equal maxima: the last one wins, wherever it falls.
        let v: Vec<f64> = (0..n).map(|i| if i % 2 == 0 { 0.0 } else { -0.0 }).collect();
        let got = on_every_backend(|| par_max![x | x <- &v]);
        assert_eq!(got.map(f64::to_bits), v.last().map(|x| x.to_bits()), "n = {n}");
    }
}

#[test]
fn filters_pack_at_tile_boundaries() {
    for &n in SIZES {
        // Everything kept, nothing kept, every other, the first and last of each run of 32.
        on_every_backend(|| par![x | x <- 0..n, x < n]);
        assert!(on_every_backend(|| par![x | x <- 0..n, x > n]).is_empty());
        on_every_backend(|| par![x * 3 | x <- 0..n, x % 2 == 1]);
        on_every_backend(|| par![(x, x % 32) | x <- 0..n, x % 32 == 0 || x % 32 == 31]);
        // Below the first level: the next level reads the packed parents.
        on_every_backend(|| par![(x, y) | x <- 0..n, x % 5 != 2, y <- 0..x % 4]);
    }
}

#[test]
fn kept_values_read_with_their_count_or_after_it() {
    // A filtering level's first 16 kB of values are read with its kept count: 1024 pairs of
    // `u64`s, 1260 values of 13 bytes. Kept counts just below, at and just above them, and
    // filters keeping few and many, give the same values either way.
    for k in [0u64, 1, 1023, 1024, 1025, 1259, 1260, 1261, 4000] {
        let got = on_every_backend(|| par![(x, y) | x <- 0..80u64, y <- 0..80u64, x * 80 + y < k]);
        assert_eq!(got.len() as u64, k);
        let got = on_every_backend(
            || par![(x as u8, x * y, y as f32) | x <- 0..80u64, y <- 0..80u64, x * 80 + y < k],
        );
        assert_eq!(got.len() as u64, k);
        // Below the first level, the kept values spread over the work-groups.
        on_every_backend(|| par![(x, y) | x <- 0..80u64, y <- 0..x, (x * 131 + y) % 6400 < k]);
    }
}

#[test]
fn a_rows_test_in_whole_vectors_reads_only_the_row() {
    // A filtering level's test of a row runs over whole vectors of positions on a CPU device,
    // those past the row's end repeating its last: rows of every length from 1 to 40, each
    // position reading its own element of a slice that ends exactly with the last row (37
    // long, not a whole number of vectors), so that a position past a row's end read as itself
    // would read past the slice (a fault).
    let lens: Vec<u64> = (1..=37).collect();
    let v: Vec<u64> = (0..37 * 38 / 2).map(|i| i * 7 % 11).collect();
    let from_longest: Vec<u64> = lens.iter().rev().copied().collect();
    for keep in [0u64, 3, 10] {
        let got = on_every_backend(
            || par![(l, y) | l <- &lens, y <- 0..l, v[(l * (l - 1) / 2 + y) as usize] < keep],
        );
        assert_eq!(got.len(), v.iter().filter(|&&x| x < keep).count());
        // The rows from the longest, the last one position long.
        let got = on_every_backend(
            || par![(l, y) | l <- &from_longest, y <- 0..l, v[(l * (l - 1) / 2 + y) as usize] < keep],
        );
        assert_eq!(got.len(), v.iter().filter(|&&x| x < keep).count());
    }
    // Each row's last position kept, alone.
    let got = on_every_backend(|| par![(l, y) | l <- &lens, y <- 0..l, y + 1 == l]);
    assert_eq!(got.len(), lens.len());
}

#[test]
fn expansions_find_their_parents_across_tiles() {
    // (A CPU device's work-item takes 16 consecutive positions of such a level, stepping from
    // parent to parent: rows of 15, 16 and 17 too.)
    for &n in SIZES.iter().chain(&[15, 16, 17]) {
        // Rows of lengths around the boundaries, empty ones between them.
        let lengths: Vec<u64> =
            (0..40).map(|i| if i % 3 == 0 { 0 } else { n + i % 3 - 1 }).collect();
        on_every_backend(|| par![(r, j) | r <- 0..lengths.len(), j <- 0..lengths[r]]);
        // A regular level: positions divided by the fan-out.
        on_every_backend(|| par![(x, y) | x <- 0..40u64, y <- 0..n]);
    }
    // Long runs of empty rows between short ones: a work-group's parents far apart.
    let lengths: Vec<u32> =
        (0..200_000u32).map(|i| u32::from(i % 4999 == 0) * (i % 7 + 1)).collect();
    on_every_backend(|| par![(r, j) | r <- 0..lengths.len(), j <- 0..lengths[r]]);
    // More sizes than one block of the scan's carries (1024 tiles of 1024): 1.1M parents.
    let many = 1_100_000u64;
    let total = on_every_backend(|| par_count![() | x <- 0..many, y <- 0..x % 3]);
    assert_eq!(total as u64, (0..many).map(|x| x % 3).sum::<u64>());
}

#[test]
fn plain_levels_run_in_striped_tiles() {
    // A level that writes a value per position takes, in a GPU's form, 4 positions 256 apart
    // per work-item: a tile of 1024, run without a bound check between its positions when it
    // lies wholly in the chunk, the last one stopping at the chunk's end. At the first
    // generator (a range, a slice of tuples) and below it (a nested `par!`, which writes each
    // value's group too), at sizes around the tiles.
    for &n in &[1u64, 255, 256, 257, 1023, 1024, 1025, 2047, 2048, 2049, 4095, 4096, 4097] {
        on_every_backend(|| par![x * 3 + 1 | x <- 0..n]);
        let v: Vec<(u8, u64)> = (0..n).map(|i| ((i % 251) as u8, i * 7919)).collect();
        on_every_backend(|| par![(b, w ^ 5) | (b, w) <- &v]);
        on_every_backend(|| par![par![y * 2 + x | y <- 0..x % 5] | x <- 0..n]);
    }
}

#[test]
fn a_tiles_parents_are_found_by_the_work_groups_search() {
    // A GPU's work-group finds its tile's first and last parents together, 128 probes a round
    // for each: parent counts around 128 and 128² (one round more past each), rows of 0 to 2
    // positions (a tile spans hundreds of parents, empty ones among them), and one huge row
    // among empty ones (every tile's span a single parent, found among many).
    for &parents in &[127usize, 128, 129, 16_383, 16_384, 16_385, 40_000] {
        let lengths: Vec<u64> = (0..parents as u64).map(|i| (i * 7) % 3).collect();
        on_every_backend(|| par![(r, j) | r <- 0..lengths.len(), j <- 0..lengths[r]]);
        let mut lengths = vec![0u64; parents];
        lengths[parents / 2] = 5000;
        lengths[parents - 1] = 3;
        on_every_backend(|| par![(r, j) | r <- 0..lengths.len(), j <- 0..lengths[r]]);
    }
}

#[test]
fn level_sizes_scan_in_one_work_group_in_two_steps_and_in_three() {
    // A level's sizes are scanned in place by one work-group up to 4 × 1024 parents, in two
    // steps (the tiles' sums, then each tile's offsets from the sums before it) up to 1024
    // tiles of 1024, in three beyond: parent counts at each boundary, with empty rows (reversed
    // ranges) between.
    for &n in &[4095u64, 4096, 4097, 1024 * 1024 - 1, 1024 * 1024, 1024 * 1024 + 1] {
        let total = on_every_backend(|| par_count![() | x <- 0..n, y <- x % 5..x % 7]);
        assert_eq!(total as u64, (0..n).map(|x| (x % 7).saturating_sub(x % 5)).sum::<u64>());
        if n < 5000 {
            on_every_backend(|| par![(x, y) | x <- 0..n, y <- x % 5..x % 7]);
            on_every_backend(|| par![(x, y) | x <- 0..n, y <- x % 5..x % 7, (x + y) % 3 == 0]);
        }
    }
}

#[test]
fn a_level_that_keeps_every_position_writes_the_next_ones_sizes() {
    // The level above an irregular one computes its sizes (with the `let`s and the filter
    // written between them) in its own kernel: two and three levels, a filter that leaves the
    // next level's sizes to its size kernel, reversed ranges, rows past a work-group's end.
    for &n in &[1u64, 255, 256, 257, 4097] {
        on_every_backend(|| par![(x, y) | x <- 0..n, let m = x % 9, y <- m..7]);
        on_every_backend(|| par![(x, z) | x <- 0..n, y <- 0..x % 4, let w = x + y, z <- y..w % 5]);
        on_every_backend(|| par![(x, y) | x <- 0..n, x % 3 != 1, y <- 0..x % 6]);
        let total = on_every_backend(|| par_count![() | x <- 0..n, y <- 0..x % 5, z <- y..x % 7]);
        let want: u64 =
            (0..n).map(|x| (0..x % 5).map(|y| (x % 7).saturating_sub(y)).sum::<u64>()).sum();
        assert_eq!(total as u64, want);
    }
}

#[test]
fn filtering_levels_test_rows_alone_and_in_full() {
    // A filtering level's work-item tests a row's positions with the filters alone after
    // positions that kept none, and runs them in full after positions that kept some: rows
    // that keep everything, rows that keep one position in 41 (at their end, their start, or
    // not at all), and empty rows, in every order, across work-items and work-groups.
    for &n in &[1u64, 31, 32, 33, 257, 8193] {
        on_every_backend(|| par![(r, j) | r <- 0..n, j <- 0..r % 97, r % 3 == 0 || j % 41 == 40]);
        on_every_backend(|| par![(r, j) | r <- 0..n, j <- 0..r % 45, r % 4 == 1 || j == 0]);
        on_every_backend(|| par![(r, j) | r <- 0..n, j <- 0..r % 7, r % 5 == 2 && j > 0]);
    }
    // The Pythagorean triples: a position kept in a few thousand, rows of every length up to n.
    for n in [20, 100, 300] {
        on_every_backend(
            || par![(x, y, z) | x <- 1..n, y <- x..n, z <- y..x + y, z < n, x * x + y * y == z * z],
        );
    }
}

#[test]
fn filtering_levels_step_across_work_items_and_tiles() {
    // A filtering level below the first generator gives each work-item 32 consecutive positions
    // and a work-group 256 × 32 (on a CPU device 128 and 256 × 128 when its values are
    // narrow): rows ending inside, at and after those, rows of one, runs of empty rows, and a
    // regular level whose rows wrap inside a work-item.
    for &n in &[
        1u64, 2, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 257, 8191, 8192, 8193, 16385, 32767,
        32768, 32769,
    ] {
        on_every_backend(|| par![(x, y) | x <- 0..5u64, y <- 0..n, (x + y) % 3 != 1]);
        on_every_backend(|| par![(x, y) | x <- 0..n, y <- 0..x % 7, (x ^ y) % 2 == 0]);
        let lengths: Vec<u64> = (0..n).map(|r| if r % 50 < 45 { 0 } else { r % 37 }).collect();
        on_every_backend(|| par![(r, j) | r <- 0..lengths.len(), j <- 0..lengths[r], j % 4 != 3]);
        // Every position kept, and none.
        on_every_backend(|| par![(x, y) | x <- 0..n, y <- 0..x % 33, y < 40]);
        assert!(on_every_backend(|| par![y | x <- 0..n, y <- 0..x % 33, y > 40]).is_empty());
    }
    // One huge row among empty ones, then rows of one after runs of empty rows.
    let mut lengths = vec![0u64; 20_000];
    lengths[7] = 100_000;
    for r in (100..20_000).step_by(333) {
        lengths[r] = 1;
    }
    on_every_backend(|| par![(r, j) | r <- 0..lengths.len(), j <- 0..lengths[r], j % 5 != 0]);
    // The same rows as a nested par!: kept values packed with their rows.
    let rows: Vec<Vec<u64>> = lengths.iter().map(|&l| (0..l).collect()).collect();
    let m = Jagged::from(rows);
    on_every_backend(|| par![par![v | v <- m.row(i), v % 3 == 0] | i <- 0..m.len()]);
}

#[test]
fn nested_reductions_reduce_by_key_across_work_items() {
    // A nested reduction's level gives each work-item 32 consecutive positions and a work-group
    // 256 × 32 (a GPU's shapes; a CPU device's: 128 and 256 × 128): several whole rows inside
    // one work-item, rows that begin in one work-item and end in the next (or in the next
    // tile), a row starting exactly at a work-item's first position, empty rows between, and
    // the first work-item of a tile holding several rows.
    let patterns: Vec<Vec<u64>> = vec![
        (0..3000).map(|r| r % 7).collect(),
        (0..3000).map(|r| [0, 1, 31, 32, 33, 2, 0, 0, 64][r % 9]).collect(),
        (0..3000).map(|r| [0, 1, 127, 128, 129, 2, 0, 0, 256][r % 9]).collect(),
        (0..500).map(|r| if r % 10 == 0 { 8191 + r % 3 } else { r % 5 }).collect(),
        (0..200).map(|r| if r % 10 == 0 { 32767 + r % 3 } else { r % 5 }).collect(),
        vec![1; 20_000],
        [vec![0; 1000], vec![40_000], vec![0; 1000], vec![3; 5000]].concat(),
        // Empty rows exactly at a work-item's first position (32 and 128 positions), at a
        // tile's (256 × 32 and 256 × 128), before the first row and after the last: each gets
        // the identity from the one work-item that holds the position it would start at.
        (0..3000).map(|r| [0, 0, 32, 0, 96, 0, 0, 128, 0, 256][r % 10]).collect(),
        (0..40).map(|r| if r % 3 == 0 { 8192 } else { 0 }).collect(),
        (0..12).map(|r| if r % 4 == 1 { 32768 } else { 0 }).collect(),
    ];
    for lengths in patterns {
        let rows: Vec<Vec<u64>> = lengths
            .iter()
            .enumerate()
            .map(|(r, &l)| (0..l).map(|k| (k * 7 + r as u64) % 1000).collect())
            .collect();
        let m = Jagged::from(rows);
        on_every_backend(|| par![par_sum![v | v <- m.row(i)] | i <- 0..m.len()]);
        on_every_backend(|| par![par_min![v % 97 | v <- m.row(i)] | i <- 0..m.len()]);
        // Not commutative: any reordering inside a row changes it.
        on_every_backend(
            || par![par_reduce!(hash_concat, (0, 1); (v + 1, 31) | v <- m.row(i)) | i <- 0..m.len()],
        );
        on_every_backend(|| par![par_count![() | v <- m.row(i), v % 3 == 0] | i <- 0..m.len()]);
    }
}

#[test]
fn nested_reductions_go_by_runs_of_one_parent() {
    // A work-item's positions go by runs, each the part of one parent among them: parents as
    // long as, shorter and longer than a work-item's 32 positions (a CPU device's: 128) in a
    // regular level (the run ends where `pc_fanout` children do), and a second inner level whose
    // consecutive parents share their group (a run that continues the group of the run before
    // it).
    for &n in &[1u64, 2, 31, 33, 300, 1025] {
        for k in [1u64, 31, 32, 33, 100, 127, 128, 129] {
            on_every_backend(
                || par![par_reduce!(hash_concat, (0, 1); (i * k + j + 1, 31) | j <- 0..k) | i <- 0..n],
            );
        }
        on_every_backend(
            || par![par_reduce!(hash_concat, (0, 1); (a * 64 + b + 1, 31) | a <- 0..i % 40, b <- 0..a) | i <- 0..n],
        );
        on_every_backend(|| par![par_sum![a * b | a <- 0..i % 70, b <- 0..a] | i <- 0..n]);
    }
    // Rows of (column, value) pairs, split into two columns on their way to the device: empty
    // rows, one huge row, and no value at all.
    for lengths in [vec![0u32, 3, 0, 0, 70_000, 1, 0], vec![0; 50], vec![]] {
        let rows: Vec<Vec<(u32, f64)>> = lengths
            .iter()
            .enumerate()
            .map(|(r, &l)| {
                (0..l).map(|k| ((k * 7 + r as u32) % 64, f64::from(k % 13) - 6.0)).collect()
            })
            .collect();
        let m = Jagged::from(rows);
        let x: Vec<f64> = (0..64).map(|c| f64::from(c) * 0.5 - 3.0).collect();
        on_every_backend(
            || par![par_sum![v * x[c as usize] | (c, v) <- m.row(i)] | i <- 0..m.len()],
        );
    }
}

#[test]
fn nested_reductions_reduce_by_key_across_tiles() {
    for &n in SIZES {
        // Rows shorter than, as long as and longer than a work-group, with empty rows: groups
        // that start and end inside a tile, that span tiles, and none at all.
        let rows: Vec<Vec<u64>> = (0..12u64)
            .map(|i| match i % 4 {
                0 => Vec::new(),
                1 => (0..n).map(|k| k * 3 + i).collect(),
                2 => (0..i).collect(),
                _ => (0..n / 2 + 1).map(|k| k ^ i).collect(),
            })
            .collect();
        let m = Jagged::from(rows);
        on_every_backend(|| par![par_sum![v | v <- m.row(i)] | i <- 0..m.len()]);
        // The head converts the sums: the head kernel runs after the reduction.
        on_every_backend(|| par![par_sum![v | v <- m.row(i)] as f32 | i <- 0..m.len()]);
        on_every_backend(|| par![par_max![v % 97 | v <- m.row(i)] | i <- 0..m.len()]);
        on_every_backend(
            || par![par_reduce!(hash_concat, (0, 1); (v + 1, 31) | v <- m.row(i)) | i <- 0..m.len()],
        );
        // A filter inside: rejected positions add the identity.
        on_every_backend(|| par![par_count![() | v <- m.row(i), v % 3 == 0] | i <- 0..m.len()]);
        // A nested par!: kept values packed with their rows.
        on_every_backend(|| par![par![v | v <- m.row(i), v % 4 != 1] | i <- 0..m.len()]);
    }
}

/// An output of two columns of different widths, for the filters below.
#[derive(Clone, Copy, Debug, PartialEq, DeviceValue)]
struct Kept {
    value: u64,
    low: u8,
}

/// `len` values whose lowest bit says whether the filters below keep them: in the `k`th run of
/// `run` values, `counts[k % counts.len()]` of them, spread over the run (a permutation of its
/// places by `* 7919`, an odd number, when `run` is a power of two). The other bits vary.
fn kept_runs(len: usize, run: usize, counts: &[usize]) -> Vec<u64> {
    (0..len)
        .map(|i| {
            let keep = (i * 7919) % run < counts[(i / run) % counts.len()];
            ((i as u64 * 0x9E37_79B9) % 100_003) << 1 | u64::from(keep)
        })
        .collect()
}

#[test]
fn first_generators_filter_by_blocks_of_positions() {
    // With a CPU device's shapes (PoCL), the first generator's filtering level gives each
    // work-item 128 consecutive positions of a `u64` and the work-group 32,768; its work-items
    // test theirs by the filters alone first, and a work-group keeping at most half of them
    // (16,384 values of one `u64`, 8,192 of two) stages them in phase 0. Runs of 32,768 that keep
    // all, none, the limits and one more and one fewer, a few, and every count of a work-item's
    // 128 positions at the start (the probe's vectors of 8 past the block's end), at sizes
    // around the work-group: the same values as on the CPU. (With a GPU's shapes, the same
    // inputs cross its 256-position work-groups.)
    let counts = [32768, 0, 16384, 16385, 16383, 8192, 8193, 8191, 1, 127, 128, 129, 32767];
    for len in [0usize, 1, 127, 128, 129, 32767, 32768, 32769, 13 * 32768, 13 * 32768 + 1000] {
        let v = kept_runs(len, 32768, &counts);
        on_every_backend(|| par![x >> 1 | x <- &v, x & 1 == 1]);
        on_every_backend(|| par![(x >> 1, x % 7) | x <- &v, x & 1 == 1]);
        on_every_backend(|| par![i | i <- 0..len as u64, v[i as usize] & 1 == 1]);
    }
    // The first `k` positions kept, for each `k` up to two work-items' worth and a block of
    // positions shorter than the probe's vector at the end.
    for k in 0..=260u64 {
        let got = on_every_backend(|| par![x | x <- 0..261u64, x < k]);
        assert_eq!(got.len() as u64, k);
    }
}

#[test]
fn filters_stage_few_kept_values_and_compute_many_again_in_one_run() {
    // In phase 0 a filtering level's work-group that keeps at most its limit of positions
    // stages them, and only copies them in phase 1; one that keeps more computes them again
    // (search.h). A flat filter of a `u64` slice writing a `u64` stages at most 128 of a
    // work-group's 256 (writing 16 bytes a kept value more against reading 8 a position
    // again), one writing two `u64`s 64, one writing a `Kept` about 113: work-groups keeping
    // all, none, each count from 100 to 130, exactly the limit, one more and one fewer, and a
    // few, side by side in one run — and the same at every size around the tiles (the last
    // work-group part of one).
    let mut counts = vec![256, 0, 128, 129, 127, 1, 64, 65, 63, 255, 0, 0, 2, 200];
    counts.extend(100..=130);
    for len in [0usize, 1, 255, 256, 257, 45 * 256, 45 * 256 + 100, 90 * 256 + 3] {
        let v = kept_runs(len, 256, &counts);
        on_every_backend(|| par![x >> 1 | x <- &v, x & 1 == 1]);
        on_every_backend(|| par![(x >> 1, x % 7) | x <- &v, x & 1 == 1]);
        on_every_backend(|| par![Kept { value: x, low: (x % 256) as u8 } | x <- &v, x & 1 == 1]);
        // Over a range nothing is read: only the work-groups that keep nothing skip phase 1.
        on_every_backend(|| par![i | i <- 0..len as u64, v[i as usize] & 1 == 1]);
    }
    // Below the first generator a work-group takes 256 × 32 positions, and one that reads a
    // `u64` of a row per position and keeps 16 bytes a value stages at most a little over 2,048
    // of them (its parents' reads count too): one long row whose runs of 8,192 keep all, none,
    // half, and each count from 2,000 to 2,200 (the limit, one more and one fewer among them);
    // then many short rows. The filtering level as the last (the head's columns), before a
    // further level (its variables' columns), and as a nested par! (the values with their
    // rows).
    let mut counts = vec![8192, 0, 4096, 4097, 1, 31, 32, 33, 0, 5000];
    counts.extend(2000..=2200);
    let long = kept_runs(counts.len() * 8192 + 77, 8192, &counts);
    let mut rows = vec![long, Vec::new(), vec![1, 3, 5]];
    for r in 0..3000 {
        rows.push(kept_runs(r % 45, 32, &[32, 0, 5]));
    }
    let m = Jagged::from(rows);
    on_every_backend(|| par![(i, x >> 1) | i <- 0..m.len(), x <- m.row(i), x & 1 == 1]);
    on_every_backend(
        || par![Kept { value: x >> 1, low: i as u8 } | i <- 0..m.len(), x <- m.row(i), x & 1 == 1],
    );
    on_every_backend(
        || par![(i, x, y) | i <- 0..m.len(), x <- m.row(i), x & 1 == 1, y <- 0..x % 3],
    );
    on_every_backend(|| par![par![x >> 1 | x <- m.row(i), x & 1 == 1] | i <- 0..m.len()]);
    on_every_backend(|| par![par![(x, i) | x <- m.row(i), x & 3 == 1] | i <- 0..m.len()]);
}

#[test]
fn a_levels_sizes_scan_the_same_on_either_side_of_one_work_items_scan() {
    // A CPU device's work-item adds up to 65 536 of a level's sizes in order (one launch); more
    // go by tiles of 1024, as on a GPU: parents on either side of that bound, and rows empty,
    // of one and of two values.
    for n in [65_535u64, 65_536, 65_537, 70_000] {
        on_every_backend(|| par![(x, y) | x <- 0..n, y <- 0..x % 3]);
        on_every_backend(|| par_count![() | x <- 0..n, y <- 0..x % 3, (x + y) % 5 == 0]);
    }
}
