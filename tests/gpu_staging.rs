//! Copies through pinned staging memory, the way a GPU's runs copy, on whatever device runs
//! here. This binary sets `PARCOMP_DEVICE_STAGING` (read once per process) to pieces of 4,000
//! bytes before anything runs, so that every copy of every run goes through the two pinned
//! slots of its queue in many pieces, or its pinned mailbox for a read of at most a piece — a
//! value split between two pieces, reads delivered when a slot is reused and when the queue
//! finishes, a fault read back through the mailbox — also on a CPU device (PoCL), which stages
//! nothing by default (its memory is the host's).

mod support;

use parcomp::{par, par_count, par_device, par_max, par_sum, DeviceVec, Jagged, RunStats};
use support::on_every_backend_with_stats as staged;
use support::{device_panics, on_device};

/// Bytes per piece: not a multiple of 8, so that values straddle pieces.
const PIECE: usize = 4000;

/// Every copy of the run went through the slots: what was copied in with the API's copy and
/// what was read back (with the fault word, 32 bytes per wait), piece after piece.
fn all_staged(s: &RunStats, converted_in_place: u64) {
    assert_eq!(
        s.bytes_staged,
        s.bytes_in - converted_in_place + s.bytes_out + 32 * s.host_waits,
        "{s:?}"
    );
}

#[test]
fn every_copy_through_pinned_slots_gives_the_same_results() {
    // The only test of this binary: nothing else reads the variable before it is set.
    std::env::set_var("PARCOMP_DEVICE_STAGING", PIECE.to_string());
    if !support::device() {
        return;
    }
    let v: Vec<u64> = (0..300_000u64).map(|i| i.wrapping_mul(0x9E37_79B9) % 1_000_003).collect();

    // A slice in (600 pieces), one value out.
    let (sum, s) = staged(|| par_sum![x | x <- &v]);
    assert_eq!(sum, v.iter().sum::<u64>());
    if let Some(s) = s {
        assert!(s.bytes_in >= 8 * v.len() as u64, "{s:?}");
        all_staged(&s, 0);
        assert!(s.staging_waits > 500, "{s:?}");
    }

    // A slice in and a slice out, the same length.
    let (mapped, s) = staged(|| par![x * 3 + 1 | x <- &v]);
    assert_eq!(mapped.len(), v.len());
    if let Some(s) = s {
        assert!(s.bytes_out >= 8 * v.len() as u64, "{s:?}");
        all_staged(&s, 0);
    }

    // Filtered, with tuples out (read as columns), and sizes read back between levels.
    let (kept, _) = staged(|| par![(x, x as f32 * 0.5) | x <- &v, x % 7 == 3]);
    assert_eq!(kept.len(), v.iter().filter(|&&x| x % 7 == 3).count());
    let (pairs, s) = staged(|| par![(x, y) | x <- 0..2000u64, y <- 0..x % 50, (x + y) % 3 == 0]);
    assert!(pairs.contains(&(1998, 0)) && pairs.contains(&(1999, 47)));
    if let Some(s) = s {
        all_staged(&s, 0);
    }

    // A wait whose reads are all short — the first kept values of each component, their count
    // and the fault record — lands them in the mailbox: no read waits for a slot's last copy,
    // as the third of four reads through two slots would.
    let (few, s) = staged(|| par![(x, y as u8) | x <- 0..300u64, y <- 0..x % 7, (x + y) % 5 == 0]);
    let expected: Vec<(u64, u8)> = (0..300u64)
        .flat_map(|x| (0..x % 7).map(move |y| (x, y as u8)))
        .filter(|&(x, y)| (x + u64::from(y)) % 5 == 0)
        .collect();
    assert_eq!(few, expected);
    if let Some(s) = s {
        all_staged(&s, 0);
        assert_eq!(s.staging_waits, 0, "{s:?}");
    }

    // A nested reduction over rows, and a nested par!'s rows read back with their groups.
    let rows: Vec<Vec<(u32, f64)>> = (0..3000u32)
        .map(|i| match i {
            17 => (0..20_000).map(|c| (c % 61, f64::from(c % 7))).collect(),
            _ if i % 3 == 0 => Vec::new(),
            _ => (0..i % 13).map(|c| (c * 4 % 61, f64::from(c))).collect(),
        })
        .collect();
    let m = Jagged::from(rows);
    let x: Vec<f64> = (0..61).map(|c| f64::from(c) * 0.5).collect();
    let (y, _) =
        staged(|| par![par_sum![v * x[c as usize] | (c, v) <- m.row(i)] | i <- 0..m.len()]);
    assert_eq!(y.len(), m.len());
    let (rows_out, _) = staged(|| par![par![c | (c, _) <- m.row(i), c % 2 == 0] | i <- 0..m.len()]);
    assert_eq!(rows_out[17].len(), (0..20_000).filter(|c| c % 61 % 2 == 0).count());
    let (counts, _) = staged(|| par![par_count![() | j <- 0..s, j % 3 == 0] | s <- &v[..500]]);
    assert_eq!(counts[0], v[0].div_ceil(3) as usize);
    let (max, _) = staged(|| par_max![x ^ 0x5555 | x <- &v]);
    assert_eq!(max, v.iter().map(|x| x ^ 0x5555).max());

    // Values kept on the device: uploaded once, read by a run, a result kept and read back.
    let dv = DeviceVec::from_slice(&v);
    let (from_device, _) = staged(|| par![x + 1 | x <- &dv]);
    assert_eq!(from_device, v.iter().map(|x| x + 1).collect::<Vec<_>>());
    let kept = on_device(|| par_device![x * 2 | x <- &v].to_vec());
    if let Some(kept) = kept {
        assert_eq!(kept, v.iter().map(|x| x * 2).collect::<Vec<_>>());
    }

    // A fault found by the kernel is read back through the slots, and is Rust's panic.
    let idx: Vec<usize> =
        (0..100_000).map(|i| if i == 77_777 { 1 << 40 } else { i % 10 }).collect();
    let small = [1u64, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    for (backend, message) in device_panics(|| {
        let _ = par![small[i] | i <- &idx];
    }) {
        assert!(message.contains("index out of bounds"), "{backend}: {message}");
    }
    // And the queue is sound after it: the next run is right.
    let (again, _) = staged(|| par![small[i] * 2 | i <- &idx[..1000]]);
    assert_eq!(again.len(), 1000);
}
