//! The device's counted costs, held as budgets that any device meets at any size: copies,
//! bytes converted on the host, launches, host waits and allocations per run, for each plan
//! shape the gpu README lists (`comprehension-runtime/src/gpu/README.md`, "What a run costs").
//! These are counts, not timings: they carry over from PoCL to a GPU.

mod support;

use parcomp::{par, par_count, par_sum, Jagged, RunStats};
use support::on_device;

/// One test's device runs at a time: the tests of this binary run on parallel threads and share
/// the device's arena, and one test's runs must not take the buffers another's second run
/// counts on finding there.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner())
}

/// The statistics of `f`'s device run (`f` runs one comprehension), with its result checked
/// against the sequential backend.
fn costs<T: PartialEq + std::fmt::Debug>(f: impl Fn() -> T) -> Option<(T, RunStats)> {
    let want = parcomp::with_backend(parcomp::Backend::Sequential, &f);
    on_device(|| {
        let got = f();
        assert_eq!(got, want, "the device differs from the sequential backend");
        (got, parcomp::gpu_stats().expect("the device ran it"))
    })
}

#[test]
fn a_sum_of_a_slice_is_one_copy_two_launches_one_wait() {
    let _serial = serial();
    for n in [1usize, 1000, 300_000, 3_000_000] {
        let v: Vec<u64> = (0..n as u64).map(|i| i.wrapping_mul(0x9E37_79B9) % 1_000_003).collect();
        let Some((_, s)) = costs(|| par_sum![x | x <- &v]) else { return };
        // One copy in — or none, where the device reads the caller's memory in place (its
        // memory is the host's: PoCL).
        let copies = s.copies_in + u64::from(s.bytes_in_place > 0);
        assert_eq!(copies, 1, "n = {n}: {s:?}");
        assert_eq!(s.bytes_in + s.bytes_in_place, 8 * n as u64, "n = {n}");
        assert_eq!(s.bytes_converted, 0, "n = {n}");
        assert!(s.launches <= 2, "n = {n}: {} launches", s.launches);
        assert_eq!(s.host_waits, 1, "n = {n}");
        assert_eq!(s.copies_out, 1, "n = {n}: only the result comes back, with the fault word");
        // Every element read once; the partials add a small fraction, and a constant (the
        // last work-group's partial written and read) that only a tiny input notices.
        assert!(
            s.dram_bytes <= s.dram_minimum * 3 / 2 + 64,
            "n = {n}: {} modelled bytes against a minimum of {}",
            s.dram_bytes,
            s.dram_minimum
        );
    }
}

#[test]
fn primitive_results_come_back_without_conversion() {
    let _serial = serial();
    let v: Vec<u32> = (0..200_000).collect();
    let Some((_, s)) = costs(|| par![x * 3 | x <- &v]) else { return };
    let copies_in = s.copies_in + u64::from(s.bytes_in_place > 0);
    assert_eq!((copies_in, s.copies_out, s.bytes_converted), (1, 1, 0), "{s:?}");
    assert_eq!((s.launches, s.host_waits), (1, 1), "{s:?}");
    assert_eq!(s.bytes_out, 4 * 200_000);
    assert_eq!(s.bytes_in + s.bytes_in_place, 4 * 200_000);
    // Over a range nothing is copied in at all.
    let Some((_, s)) = costs(|| par![x as f64 * 0.5 | x <- 0..100_000u32]) else { return };
    assert_eq!((s.copies_in, s.bytes_in, s.bytes_converted), (0, 0, 0), "{s:?}");
}

#[test]
fn tuples_are_split_and_assembled_once() {
    let _serial = serial();
    let pairs: Vec<(u32, f64)> = (0..50_000).map(|i| (i, i as f64 * 0.25)).collect();
    let Some((_, s)) = costs(|| par![(b, a + 1) | (a, b) <- &pairs]) else { return };
    if s.bytes_in_place > 0 {
        // A device whose memory is the host's reads the input's records where they lie; only
        // the output's two columns are converted, once.
        assert_eq!(s.bytes_in_place, 50_000 * std::mem::size_of::<(u32, f64)>() as u64);
        assert_eq!(s.bytes_converted, 50_000 * (4 + 8), "{s:?}");
        assert_eq!((s.copies_in, s.host_waits), (0, 1), "{s:?}");
    } else {
        // The input's two columns, then the output's two, each converted once on the host.
        assert_eq!(s.bytes_converted, 50_000 * (4 + 8) * 2, "{s:?}");
        assert_eq!((s.copies_in, s.host_waits), (1, 1), "{s:?}");
    }
}

#[test]
fn host_waits_and_launches_per_plan_shape_do_not_grow_with_the_size() {
    let _serial = serial();
    // (host waits, launches) of each plan shape at two sizes (one chunk each): the same counts,
    // those the gpu README's table gives. The scan of a level's sizes takes one launch for up
    // to 4 × 1024 parents (one work-group scans them in place), two beyond (below).
    let scan = 1;
    for n in [50u64, 700] {
        let Some((_, expand)) = costs(|| par![(x, y) | x <- 0..n, y <- 0..x]) else { return };
        // The first level, which writes the second's sizes; their scan and its total; the
        // second level, which finds its parents itself.
        assert_eq!(
            (expand.host_waits, expand.launches),
            (2, 2 + scan),
            "expand, n = {n}: {expand:?}"
        );

        let Some((pairs, filtered)) =
            costs(|| par![(x, y) | x <- 0..n, y <- 0..x, (x + y) % 3 == 0])
        else {
            return;
        };
        // As the expand, the filtering level in two phases around the scan of its groups'
        // kept counts, whose total is read — with the values when they are few (up to 16 kB:
        // read with the count, before it is known), else after it.
        let values_apart = |kept: usize| u64::from(kept * 16 > 16 << 10);
        assert_eq!(
            (filtered.host_waits, filtered.launches),
            (2 + values_apart(pairs.len()), 4 + scan),
            "expand + filter, n = {n}: {filtered:?}"
        );

        let Some((pairs, product)) =
            costs(|| par![(x, y) | x <- 0..n, y <- 0..n, (x * y) % 7 == 1])
        else {
            return;
        };
        // The first level, the regular size (read), the filtering level's two phases and scan.
        assert_eq!(
            (product.host_waits, product.launches),
            (2 + values_apart(pairs.len()), 5),
            "filtered product, n = {n}: {product:?}"
        );

        let Some((_, count)) = costs(|| par_count![() | x <- 0..n, y <- 0..x, (x ^ y) % 5 == 0])
        else {
            return;
        };
        // The sizes' total, the count; a rejected position counts nothing (no packing).
        assert_eq!(
            (count.host_waits, count.launches),
            (2, 3 + scan),
            "filtered count, n = {n}: {count:?}"
        );

        let rows: Vec<Vec<(usize, f64)>> =
            (0..n as usize).map(|i| (0..i % 17).map(|c| (c, c as f64)).collect()).collect();
        let m = Jagged::from(rows);
        let x: Vec<f64> = (0..17).map(|c| c as f64 * 0.5).collect();
        let Some((_, nested)) =
            costs(|| par![par_sum![v * x[c] | (c, v) <- m.row(i)] | i <- 0..m.len()])
        else {
            return;
        };
        // The results; the inner space's offsets are the matrix's own (its rows are the
        // range's elements), so its total is known without asking the device.
        assert_eq!(nested.host_waits, 1, "nested reduction, n = {n}: {nested:?}");
        // The contexts, the inner level reducing its tiles (and setting an empty row's result
        // to the identity as it steps past it: no launch sets every result first), the
        // segmented reduction of the tiles' summaries (one launch: they fit in one tile, and
        // the carry of the run's first chunk is set by it, not by a launch of its own). No
        // size kernel or scan: the inner level's offsets are the matrix's, read where the
        // captures hold them. The inner level takes its group from its parent's index (no
        // column of group ids), and the head is the sum itself: its results column is the
        // output (no head kernel). With a CPU device's shapes, rows this short are a
        // work-item's each: one launch, the inner level's, which writes every row's result
        // itself (no summaries to reduce) and computes the row's index from the row (the
        // range's level, which would only write 0..n, does not run).
        if support::cpu_shapes() {
            assert_eq!(nested.launches, 1, "nested reduction, n = {n}: {nested:?}");
            assert!(launched(&nested, "pc_n0_level0_rows"), "{nested:?}");
            assert!(!launched(&nested, "pc_r0_segone"), "{nested:?}");
        } else {
            assert_eq!(nested.launches, 3, "nested reduction, n = {n}: {nested:?}");
            assert!(launched(&nested, "pc_r0_segone"), "{nested:?}");
        }
        assert!(!launched(&nested, "pc_iota") && !launched(&nested, "pc_head"), "{nested:?}");
        assert!(!launched(&nested, "pc_n0_size0") && !launched(&nested, "pc_scan_tiles"));
        assert!(!launched(&nested, "pc_fill_u64"), "{nested:?}");
        assert!(!launched(&nested, "pc_r0_fill"), "{nested:?}");
        // Rows from 1: the range's elements are not the rows' offsets' indices; the sizes and
        // their scan as for any expansion (1 + scan launches more, and a wait for the total).
        let Some((_, shifted)) =
            costs(|| par![par_sum![v * x[c] | (c, v) <- m.row(i)] | i <- 1..m.len()])
        else {
            return;
        };
        assert_eq!(
            (shifted.host_waits, shifted.launches),
            (2, 4 + scan),
            "nested reduction from row 1, n = {n}: {shifted:?}"
        );
        // The header, the matrix's values and offsets, `x`: one copy each, the matrix's
        // `(usize, f64)` values split into two columns on the host — but where the device's
        // memory is the host's (PoCL) only the header is copied: the offsets and `x`, whose
        // bytes are their device columns, and the values, as the records they are in memory,
        // are read where they lie, nothing converted.
        let (offsets, x_bytes) = (8 * (m.len() as u64 + 1), 8 * x.len() as u64);
        let values = m.values().len() as u64 * std::mem::size_of::<(usize, f64)>() as u64;
        // (The header is not copied where an earlier run left the same bytes on the device.)
        if nested.bytes_in_place > 0 {
            assert_eq!(nested.copies_in + nested.copies_saved, 1, "{nested:?}");
            assert_eq!(nested.bytes_in_place, offsets + x_bytes + values, "{nested:?}");
            assert_eq!(nested.bytes_converted, 0, "{nested:?}");
        } else {
            assert_eq!(nested.copies_in + nested.copies_saved, 4, "{nested:?}");
            assert_eq!(nested.bytes_converted, m.values().len() as u64 * 16, "{nested:?}");
        }

        // A head of another type than the sum's: the head kernel converts the results.
        let Some((_, converted)) =
            costs(|| par![par_sum![v * x[c] | (c, v) <- m.row(i)] as f32 | i <- 0..m.len()])
        else {
            return;
        };
        assert_eq!(converted.host_waits, 1, "converted nested reduction, n = {n}: {converted:?}");
        // (The range's level runs: the head kernel reads its contexts.)
        let launches = if support::cpu_shapes() { 3 } else { 4 };
        assert_eq!(
            converted.launches, launches,
            "converted nested reduction, n = {n}: {converted:?}"
        );
        assert!(launched(&converted, "pc_head"), "{converted:?}");
    }
}

#[test]
fn a_cpu_device_takes_short_rows_a_work_item_each_and_shares_a_long_one() {
    let _serial = serial();
    // 20 000 rows of up to 9 (column, value) pairs; the same with one row of 100 000 pairs in
    // the middle, more than a position-partitioned work-group's tile (256 × 128 positions on a
    // CPU device). Values and `x` are multiples of a quarter: every grouping of the sums is
    // exact, so the device's results equal the sequential ones.
    let x: Vec<f64> = (0..64).map(|c| c as f64 * 0.25).collect();
    let short: Vec<usize> = (0..20_000).map(|r| r % 10).collect();
    let mut long = short.clone();
    long[10_000] = 100_000;
    for (lengths, short_rows) in [(short, true), (long, false)] {
        let rows: Vec<Vec<(usize, f64)>> = lengths
            .iter()
            .enumerate()
            .map(|(r, &l)| (0..l).map(|k| ((k * 7 + r) % 64, (k % 13) as f64 - 6.0)).collect())
            .collect();
        let m = Jagged::from(rows);
        let Some((_, s)) =
            costs(|| par![par_sum![v * x[c] | (c, v) <- m.row(i)] | i <- 0..m.len()])
        else {
            return;
        };
        // With a CPU device's shapes and no long row, one launch of the level's rows kernel
        // writes every result (the range's level does not run); a long row (or a GPU's
        // shapes) goes by positions, its work shared by every work-item, and the tiles'
        // summaries are reduced after.
        let by_rows = short_rows && support::cpu_shapes();
        assert_eq!(launched(&s, "pc_n0_level0_rows"), by_rows, "{s:?}");
        assert_eq!(launched(&s, "pc_level0"), !by_rows, "{s:?}");
        assert_eq!(launched(&s, "pc_n0_level0"), !by_rows, "{s:?}");
        assert_eq!(launched(&s, "pc_r0_segone"), !by_rows, "{s:?}");
        assert_eq!(s.launches, if by_rows { 1 } else { 3 }, "{s:?}");
        // The row's index in the body: the rows kernel computes it from the row it takes.
        let Some((_, s)) =
            costs(|| par![par_sum![v * x[c] + i as f64 | (c, v) <- m.row(i)] | i <- 0..m.len()])
        else {
            return;
        };
        assert_eq!(launched(&s, "pc_n0_level0_rows"), by_rows, "{s:?}");
        assert_eq!(s.launches, if by_rows { 1 } else { 3 }, "{s:?}");
        // A `let` above: the range's level writes its value, which the rows kernel reads.
        let Some((_, s)) = costs(
            || par![par_sum![v * x[c] * s | (c, v) <- m.row(i)] | i <- 0..m.len(), let s = (i % 4) as f64],
        ) else {
            return;
        };
        assert_eq!(launched(&s, "pc_n0_level0_rows"), by_rows, "{s:?}");
        assert!(launched(&s, "pc_level0"), "{s:?}");
        assert_eq!(s.launches, if by_rows { 2 } else { 3 }, "{s:?}");
        // Nine captures: more than the rows kernel takes as arguments (eight), so it reads
        // the captures' header in its buffer, as every other kernel does.
        let (a, b, d, e, f, g, h) = (0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75);
        let Some((_, s)) = costs(
            || par![par_sum![v * x[c] + a + b + d + e + f + g + h | (c, v) <- m.row(i)] | i <- 0..m.len()],
        ) else {
            return;
        };
        assert_eq!(launched(&s, "pc_n0_level0_rows"), by_rows, "{s:?}");
        assert_eq!(s.launches, if by_rows { 1 } else { 3 }, "{s:?}");
    }
}

#[test]
fn a_nested_reduction_of_many_tiles_reduces_their_summaries_in_three_launches() {
    let _serial = serial();
    // About 2 × 10⁷ positions: more than 512 of the level kernel's tiles (of 256 × 128
    // positions on a CPU device, 256 × 32 on a GPU), so more than one tile of summaries —
    // their segmented reduction takes three launches (the tiles' aggregates, their prefixes
    // from the carry, every summary's value), and the carry of the run's first chunk is set by
    // two launches of its own. Rows of every length up to 6399, and empty ones.
    let Some((sums, s)) = costs(|| par![par_sum![j | j <- 0..i] | i <- 0..6400u64]) else {
        return;
    };
    assert!(sums
        .iter()
        .enumerate()
        .all(|(i, &s)| s == (i as u64) * (i as u64).saturating_sub(1) / 2));
    for kernel in ["pc_r0_segtiles", "pc_r0_segcarries", "pc_r0_segapply", "pc_fill_u64"] {
        assert!(launched(&s, kernel), "{kernel}: {s:?}");
    }
    assert!(!launched(&s, "pc_r0_segone"), "{s:?}");
}

#[test]
fn the_sizes_of_many_parents_scan_in_two_launches_of_very_many_in_three() {
    let _serial = serial();
    // Over 4 × 1024 parents, the tiles' sums, then each tile's offsets from the sums before it;
    // over 1024 tiles of 1024, the tiles' sums scanned between. A CPU device's work-item adds
    // up to 65 536 sizes in order, in one launch.
    let cpu = support::cpu_shapes();
    for (n, scan) in [(5000u64, if cpu { 1 } else { 2 }), (70_000, 2), (1024 * 1024 + 1, 3)] {
        // The first level (writing the sizes), their scan, the second level, its partial sums
        // reduced.
        let Some((_, count)) = costs(|| par_count![() | x <- 0..n, y <- 0..x % 3]) else {
            return;
        };
        assert_eq!((count.host_waits, count.launches), (2, 3 + scan), "n = {n}: {count:?}");
        // The first level (writing the sizes), their scan, the filtering level's two phases and
        // scan.
        let Some((_, filtered)) = costs(|| par![(x, y) | x <- 0..n, y <- 0..x % 3, y == 1]) else {
            return;
        };
        assert_eq!(
            (filtered.host_waits, filtered.launches),
            (3, 4 + scan),
            "n = {n}: {filtered:?}"
        );
    }
}

/// Whether the run launched the kernel called `name`.
fn launched(s: &RunStats, name: &str) -> bool {
    s.kernels.iter().any(|k| k.name == name && k.launches > 0)
}

/// The modelled DRAM traffic of `s` is within half again of the least the computation needs.
fn near_the_minimum(what: &str, s: &RunStats) {
    assert!(
        s.dram_bytes * 2 <= s.dram_minimum * 3,
        "{what}: {} modelled bytes against a minimum of {} ({:?})",
        s.dram_bytes,
        s.dram_minimum,
        s.kernels
    );
}

#[test]
fn expansions_filters_and_nested_reductions_move_little_more_than_their_data() {
    let _serial = serial();
    // No segment id, flag or place per position goes through memory: the traffic is the
    // outputs (and inputs), and a little per parent and per work-group.
    let n = 2000u64;
    let Some((_, expand)) = costs(|| par![(x, y) | x <- 0..n, y <- 0..x]) else { return };
    near_the_minimum("expand", &expand);
    let Some((_, filtered)) = costs(|| par![(x, y) | x <- 0..n, y <- 0..x, (x + y) % 3 == 0])
    else {
        return;
    };
    near_the_minimum("expand + filter", &filtered);
    // A flat filter keeping a seventh of a slice: its work-groups stage what they keep in the
    // first phase rather than reading the slice again in the second.
    let v: Vec<u64> = (0..1_000_000u64).map(|i| i.wrapping_mul(0x9E37_79B9) % 1_000_003).collect();
    let Some((_, flat)) = costs(|| par![x * 3 | x <- &v, x % 7 == 1]) else { return };
    near_the_minimum("flat filter", &flat);
    // Rows of up to 60 nonzeros, then short rows, as gpu_report's sparse matrix (about ten
    // nonzeros a row, some empty): what the device moves per row besides its nonzeros (the
    // result, the row's offset read by the sizes, the scan and the level) weighs most there.
    let x: Vec<f64> = (0..61).map(|c| f64::from(c) * 0.5).collect();
    for (what, longest, column_step) in
        [("nested reduction", 61, 1), ("nested reduction of short rows", 21, 3)]
    {
        let rows: Vec<Vec<(u32, f64)>> = (0..20_000u32)
            .map(|i| {
                (0..(i * 7919) % longest).map(|c| (c * column_step, f64::from(c) * 0.25)).collect()
            })
            .collect();
        let m = Jagged::from(rows);
        let Some((_, nested)) =
            costs(|| par![par_sum![v * x[c as usize] | (c, v) <- m.row(i)] | i <- 0..m.len()])
        else {
            return;
        };
        near_the_minimum(what, &nested);
        // The gathers from `x` are in the model (each launch reads it once, as into the
        // cache): a run that reads every input once moves no less than its data (but for the
        // captures' header, which the minimum counts and the model does not).
        assert!(nested.dram_bytes + nested.bytes_in >= nested.dram_minimum, "{what}: {nested:?}");
    }
}

#[test]
fn a_second_run_allocates_nothing() {
    let _serial = serial();
    let v: Vec<u64> = (0..100_000).collect();
    let run = || par![(x, y) | x <- &v, y <- 0..x % 5, (x + y) % 3 != 0];
    let Some((_, first)) = costs(run) else { return };
    let Some((_, second)) = costs(run) else { return };
    assert!(first.allocations > 0, "{first:?}");
    assert_eq!(second.allocations, 0, "the arena serves every buffer: {second:?}");
}

#[test]
fn a_large_space_runs_in_one_chunk() {
    let _serial = serial();
    // The chunk follows the device's memory: ten million positions are one chunk per level.
    let Some((sum, s)) = costs(|| par_sum![x as u64 | x <- 0..10_000_000u32]) else { return };
    assert_eq!(sum, 10_000_000 * 9_999_999 / 2);
    assert_eq!(s.chunks, 1, "chunks of {} positions: {s:?}", s.chunk_size);
}

#[test]
fn a_run_again_over_kept_data_queues_no_fill_and_no_copy() {
    let _serial = serial();
    let values: Vec<u64> = (0..100_000).collect();
    on_device(|| {
        let v = parcomp::DeviceVec::from_slice(&values);
        let sum = |k: u64| {
            let got = par_sum![x * k | x <- &v];
            assert_eq!(got, values.iter().map(|x| x * k).sum::<u64>());
            parcomp::gpu_stats().expect("the device ran it")
        };
        sum(3);
        // The same captures again, as an iteration's rounds have: the header and `k` are on
        // the device already, and the fault record the last run read as zeros is zeros still.
        let again = sum(3);
        assert_eq!((again.copies_in, again.bytes_in), (0, 0), "{again:?}");
        assert_eq!((again.copies_saved, again.fills_saved), (1, 1), "{again:?}");
        // Another `k`: the header is copied; the fault record is still a clean one.
        let other = sum(5);
        assert_eq!(
            (other.copies_in, other.copies_saved, other.fills_saved),
            (1, 0, 1),
            "{other:?}"
        );
        // A run that faults does not give its record back as zeros: the run after it fills a
        // record of its own and, finding no fault, returns its result.
        let faults = support::device_faults(|| {
            let _ = par_sum![v[(x * 2) as usize] | x <- &v];
        });
        assert!(faults.iter().all(|m| m.contains("index out of bounds")), "{faults:?}");
        let after = sum(3);
        assert_eq!(after.fills_saved, 0, "{after:?}");
        assert_eq!(sum(3).fills_saved, 1);
    });
}
