//! Collections of tuples read as the records they are in Rust's memory: on a device whose
//! memory is the host's (PoCL), a slice or `Jagged` of tuples of numbers, captured or the first
//! generator, is neither copied nor split into columns on the host; its program reads each
//! component at the offset Rust gave it. Every backend must agree with the sequential one,
//! whatever order Rust laid the fields out in, for empty collections, and for a faulting index.

mod support;

use parcomp::{par, par_sum, Jagged, RunStats};
use support::{device_faults, on_every_backend_with_stats};

/// Where the device read the captures in place, the records' bytes (`records`) were read
/// where they lie, not copied in (as columns they would be three quarters of them or more).
fn read_in_place(stats: Option<RunStats>, records: usize) {
    let Some(s) = stats else { return };
    if s.bytes_in_place == 0 {
        // A device with memory of its own: the captures are copied as columns.
        return;
    }
    let records = records as u64;
    assert!(s.bytes_in_place >= records, "{records} bytes of records: {s:?}");
    assert!(s.bytes_in < records / 2, "{records} bytes of records: {s:?}");
}

#[test]
fn a_slice_of_pairs_is_read_by_index() {
    let pairs: Vec<(u32, f64)> = (0..5000).map(|i| (i * 7 % 5000, f64::from(i) * 0.5)).collect();
    let (got, stats) = on_every_backend_with_stats(
        || par![pairs[i as usize].1 * f64::from(pairs[pairs[i as usize].0 as usize].0) | i <- 0..5000u32],
    );
    assert_eq!(got[3], 1.5 * 147.0);
    read_in_place(stats, std::mem::size_of_val(pairs.as_slice()));
}

#[test]
fn fields_rust_reorders_are_read_at_their_offsets() {
    // (u8, u64, u16) is 16 bytes with the u64 first in memory, and a record with a `bool`, a
    // `char` and a nested tuple.
    let mixed: Vec<(u8, u64, u16)> =
        (0..3000u64).map(|i| (i as u8, i * 1_000_003, (i * 3) as u16)).collect();
    let (got, stats) = on_every_backend_with_stats(
        || par![(mixed[i].2, mixed[i].0, mixed[i].1 ^ 5) | i <- 0..mixed.len()],
    );
    assert_eq!(got[2999], (8997, 2999u64 as u8, (2999 * 1_000_003) ^ 5));
    read_in_place(stats, std::mem::size_of_val(mixed.as_slice()));

    let nested: Vec<(bool, (i16, f32), char)> = (0..2000)
        .map(|i| (i % 3 == 0, (-(i as i16), i as f32 * 0.25), char::from(b'a' + (i % 26) as u8)))
        .collect();
    let (got, stats) = on_every_backend_with_stats(
        || par![(nested[i].2, nested[i].1 .1) | i <- 0..nested.len(), nested[i].0, nested[i].1 .0 < -10],
    );
    assert_eq!(got.len(), (11..2000).filter(|i| i % 3 == 0).count());
    read_in_place(stats, std::mem::size_of_val(nested.as_slice()));
}

#[test]
fn arrays_of_tuples_are_records_too() {
    let grid: Vec<[(u16, f32); 3]> =
        (0..1000u16).map(|i| [(i, 0.5), (i + 1, 1.5), (i * 2, f32::from(i))]).collect();
    let (got, stats) = on_every_backend_with_stats(
        || par![grid[i][k].1 * f32::from(grid[i][k].0) | i <- 0..grid.len(), k <- 0..3],
    );
    assert_eq!(got.len(), 3000);
    read_in_place(stats, std::mem::size_of_val(grid.as_slice()));
    // The same arrays read as rows: each array a row of three records.
    let (got, stats) = on_every_backend_with_stats(
        || par![par_sum![f32::from(a) * b | (a, b) <- &grid[i]] | i <- 0..grid.len()],
    );
    assert_eq!(got[2], 2.0 * 0.5 + 3.0 * 1.5 + 4.0 * 2.0);
    read_in_place(stats, std::mem::size_of_val(grid.as_slice()));
}

#[test]
fn a_sparse_matrix_of_records_times_a_vector() {
    // Rows of every length up to 40, and empty ones; column indices and values as records.
    let rows: Vec<Vec<(u32, f64)>> = (0..3000u32)
        .map(|i| (0..(i * 7) % 41).map(|k| ((i + k * 13) % 3000, f64::from(k) - 3.5)).collect())
        .collect();
    let m = Jagged::from(rows);
    let x: Vec<f64> = (0..3000).map(|c| f64::from(c % 17) * 0.125).collect();
    let (got, stats) = on_every_backend_with_stats(
        || par![par_sum![v * x[c as usize] | (c, v) <- m.row(i)] | i <- 0..m.len()],
    );
    assert_eq!(got.len(), 3000);
    read_in_place(stats, std::mem::size_of_val(m.values()));
    // Rows from 1 (their offsets then sized and scanned, not the matrix's own), and a filter.
    on_every_backend_with_stats(
        || par![par_sum![v * x[c as usize] | (c, v) <- m.row(i), c % 2 == 1] | i <- 1..m.len()],
    );
}

#[test]
fn empty_collections_of_records() {
    let none: Vec<(u32, f64)> = Vec::new();
    let (got, _) = on_every_backend_with_stats(|| par![i + none.len() | i <- 0..100]);
    assert_eq!(got.len(), 100);
    // Rows, every one of them empty: the values have no byte to read.
    let m: Jagged<(u32, f64)> = Jagged::from(vec![Vec::new(); 500]);
    let (got, _) = on_every_backend_with_stats(
        || par![par_sum![v * f64::from(c) | (c, v) <- m.row(i)] | i <- 0..m.len()],
    );
    assert_eq!(got, vec![0.0; 500]);
}

#[test]
fn an_index_past_the_records_faults_as_rust_panics() {
    let pairs: Vec<(u32, f64)> = (0..100).map(|i| (i, 1.0)).collect();
    let cpu = std::panic::catch_unwind(|| {
        parcomp::with_backend(
            parcomp::Backend::Sequential,
            || par![pairs[i + 1].1 | i <- 0..pairs.len()],
        )
    })
    .expect_err("the last index is past the end");
    let cpu = cpu.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(cpu.contains("index out of bounds"), "{cpu}");
    for message in device_faults(|| {
        par![pairs[i + 1].1 | i <- 0..pairs.len()];
    }) {
        assert!(
            message.contains("index out of bounds: the len is 100 but the index is 100"),
            "{message}"
        );
    }
}

#[test]
fn a_first_generator_of_records() {
    let mixed: Vec<(u8, u64, u16)> =
        (0..40_000u64).map(|i| (i as u8, i.wrapping_mul(0x9E37_79B9), (i * 3) as u16)).collect();
    let (got, stats) =
        on_every_backend_with_stats(|| par![(c, a) | (a, b, c) <- &mixed, (b >> 3) % 3 == 1]);
    assert!(!got.is_empty());
    read_in_place(stats, std::mem::size_of_val(mixed.as_slice()));
    // A sum over them, and a nested generator over each element's first field.
    let (_, stats) =
        on_every_backend_with_stats(|| parcomp::par_sum![b % 1000 | (_, b, _) <- &mixed]);
    read_in_place(stats, std::mem::size_of_val(mixed.as_slice()));
    on_every_backend_with_stats(|| par![(c, k) | (a, _, c) <- &mixed[..300], k <- 0..a % 5]);
    // Arrays of pairs, and none at all.
    let grid: Vec<[(i16, f32); 2]> = (0..5000i16).map(|i| [(i, 0.5), (-i, 1.0)]).collect();
    on_every_backend_with_stats(|| par![g[1].1 * f32::from(g[0].0) | g <- &grid, g[1].0 % 2 == 0]);
    let none: Vec<(u32, f64)> = Vec::new();
    let (got, _) = on_every_backend_with_stats(|| par![b | (_, b) <- &none]);
    assert!(got.is_empty());
}

#[test]
fn a_device_vec_of_pairs_is_kept_on_the_device_as_columns() {
    use parcomp::{with_backend, Backend, DeviceVec};
    let pairs: Vec<(u32, f64)> = (0..20_000).map(|i| (i, f64::from(i) * 0.5)).collect();
    for &device in support::devices() {
        // Made on the CPU backend, held on the host: its first device run uploads it and keeps
        // it there, as columns (not read from the host as records); the second copies nothing.
        let v = with_backend(Backend::Rayon, || DeviceVec::from_vec(pairs.clone()));
        with_backend(device, || {
            let first = par![b * 2.0 + f64::from(a) | (a, b) <- &v];
            assert_eq!(parcomp::gpu_stats().unwrap().bytes_in_place, 0);
            let second = par![b * 2.0 + f64::from(a) | (a, b) <- &v];
            let s = parcomp::gpu_stats().unwrap();
            assert_eq!((s.bytes_in, s.bytes_in_place), (0, 0), "{s:?}");
            assert_eq!(first, second);
            assert_eq!(first[3], 6.0);
        });
        assert_eq!(v.device(), Some(device));
    }
}

/// A struct Rust lays out as it likes (the `u64` first), generic in one field.
#[derive(Clone, Copy, Debug, PartialEq, parcomp::DeviceValue)]
struct Body<T> {
    tag: u8,
    mass: T,
    id: u64,
    pos: (f32, f32),
}

/// A tuple struct.
#[derive(Clone, Copy, Debug, PartialEq, parcomp::DeviceValue)]
struct Edge(u16, u32);

#[test]
fn derived_structs_are_records_too() {
    let bodies: Vec<Body<f64>> = (0..6000u64)
        .map(|i| Body { tag: i as u8, mass: i as f64 * 0.5, id: i * 31, pos: (i as f32, -1.0) })
        .collect();
    // The first generator, and a capture read by index.
    let (got, stats) = on_every_backend_with_stats(
        || par![(b.id, b.mass * 2.0, b.pos.0) | b <- &bodies, b.tag % 4 == 1],
    );
    assert_eq!(got[0], (31, 1.0, 1.0));
    read_in_place(stats, std::mem::size_of_val(bodies.as_slice()));
    let edges: Vec<Edge> = (0..6000u32).map(|i| Edge((i % 300) as u16, (i * 7) % 6000)).collect();
    let (got, stats) = on_every_backend_with_stats(
        || par![bodies[edges[i].1 as usize].mass + f64::from(edges[i].0) | i <- 0..edges.len()],
    );
    assert_eq!(got[1], 3.5 + 1.0);
    read_in_place(stats, std::mem::size_of_val(edges.as_slice()));
}
