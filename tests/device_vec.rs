//! `DeviceVec`: values that stay on the device between comprehensions, read as a generator and
//! as a captured slice, and `par_device!` results left there for the next comprehension; the
//! same program on the CPU backends, where a `DeviceVec` holds a `Vec`.

mod support;

use parcomp::{par, par_count, par_device, par_sum, with_backend, Backend, DeviceVec};
use support::on_device;

#[test]
fn the_same_results_on_every_backend() {
    let values: Vec<u64> = (0..100_000).map(|i| (i * 7919) % 10_007).collect();
    let weights: Vec<f64> = (0..64).map(|i| i as f64 * 0.25).collect();
    let run = || {
        let v = DeviceVec::from_slice(&values);
        let w = DeviceVec::from_vec(weights.clone());
        let doubled: DeviceVec<u64> = par_device![x * 2 | x <- &v, x % 3 != 0];
        let sum = par_sum![x | x <- &doubled];
        let weighted = par![w[(x % 64) as usize] * x as f64 | x <- &v];
        let pairs: DeviceVec<(u64, u32)> = par_device![(x, (x % 10) as u32) | x <- &doubled];
        let empty: DeviceVec<u64> = par_device![x | x <- &v, x > 1_000_000];
        (
            doubled.to_vec(),
            sum,
            weighted,
            pairs.to_vec(),
            empty.len(),
            par_count![() | _x <- &empty],
        )
    };
    let want = with_backend(Backend::Sequential, run);
    assert_eq!(want.0.len(), values.iter().filter(|&&x| x % 3 != 0).count());
    assert_eq!(want.1, want.0.iter().sum::<u64>());
    assert_eq!((want.4, want.5), (0, 0));
    assert_eq!(with_backend(Backend::Rayon, run), want);
    if let Some(got) = on_device(run) {
        assert_eq!(got, want);
    }
}

#[test]
fn repeated_runs_over_a_device_vec_copy_nothing_in() {
    let values: Vec<u32> = (0..200_000).collect();
    on_device(|| {
        let v = DeviceVec::from_slice(&values);
        assert_eq!(v.device(), Some(Backend::current()));
        for round in 0..3u32 {
            let sum = par_sum![(x ^ round) as u64 | x <- &v];
            assert_eq!(sum, values.iter().map(|&x| (x ^ round) as u64).sum::<u64>());
            let stats = parcomp::gpu_stats().expect("it ran on the device");
            // One copy: the captured `round` (8 bytes) behind its header (32), unless an
            // earlier run left the same bytes on the device; none of the 800 kB of values.
            let header = if stats.copies_saved == 1 { (0, 0) } else { (1, 40) };
            assert_eq!((stats.copies_in, stats.bytes_in), header, "round {round}: {stats:?}");
        }
        // A result left on the device is read by the next run without a copy, both ways.
        let next: DeviceVec<u32> = par_device![x + 1 | x <- &v];
        let stats = parcomp::gpu_stats().expect("it ran on the device");
        assert_eq!((stats.copies_in, stats.copies_out), (0, 0), "{stats:?}");
        assert_eq!(next.device(), Some(Backend::current()));
        let max = parcomp::par_max![x | x <- &next];
        assert_eq!(max, Some(200_000));
        assert_eq!(parcomp::gpu_stats().unwrap().copies_in, 0);
        // A captured DeviceVec is read where it lies, not copied from the host.
        let picked = par![next[i as usize] | i <- 0..1000u32];
        assert_eq!(picked, (1..=1000).collect::<Vec<u32>>());
        let stats = parcomp::gpu_stats().expect("it ran on the device");
        let header = if stats.copies_saved == 1 { 0 } else { 4 * 8 };
        assert_eq!(stats.bytes_in, header, "only the captures' header: {stats:?}");
        assert_eq!(next.to_vec(), (1..=200_000).collect::<Vec<u32>>());
    });
}

#[test]
fn a_host_device_vec_is_uploaded_once() {
    let values: Vec<i64> = (0..50_000).map(|i| i - 25_000).collect();
    // One vector per device: a `DeviceVec` is kept on one device (on another, its runs copy
    // it as they copy a `Vec`).
    for &device in support::devices() {
        // Made on the CPU backend: held on the host.
        let v = with_backend(Backend::Rayon, || DeviceVec::from_vec(values.clone()));
        assert_eq!(v.device(), None);
        with_backend(device, || {
            let a = par_sum![x.abs() | x <- &v];
            let first = parcomp::gpu_stats().unwrap();
            assert_eq!(first.bytes_in, 8 * 50_000, "the first device run uploads it: {first:?}");
            let b = par_sum![x.abs() | x <- &v];
            assert_eq!(parcomp::gpu_stats().unwrap().bytes_in, 0, "the second reads it there");
            assert_eq!(a, b);
        });
        assert_eq!(v.device(), Some(device));
    }
}

#[test]
fn par_device_with_transforms_and_on_the_host() {
    let values: Vec<u32> = (0..1000).rev().collect();
    let sorted: DeviceVec<u32> = par_device![x | x <- &values, order by x, take 5];
    assert_eq!(sorted, [0, 1, 2, 3, 4]);
    let small = with_backend(Backend::Sequential, || par_device![x * 3 | x <- 0..4u8]);
    assert_eq!(small.device(), None);
    assert_eq!(small.to_vec(), [0, 3, 6, 9]);
    assert_eq!(small[2], 6);
}

#[test]
fn rows_kept_on_the_device() {
    // Sparse matrix × vector, repeated as an iteration would: the matrix and the vector stay on
    // the device, each product is left there for the next.
    let rows: Vec<Vec<(u32, f64)>> = (0..3000u32)
        .map(|i| (0..(i * 7) % 23).map(|k| ((i + k * 31) % 3000, 1.0 / (k + 1) as f64)).collect())
        .collect();
    let m = parcomp::Jagged::from(rows);
    let x0: Vec<f64> = (0..3000).map(|i| (i % 10) as f64).collect();
    let run = || {
        let dm = parcomp::DeviceJagged::from_jagged(&m);
        let mut x = DeviceVec::from_slice(&x0);
        for _ in 0..3 {
            x = par_device![par_sum![v * x[c as usize] | (c, v) <- dm.row(i)] | i <- 0..dm.len()];
        }
        (x.to_vec(), dm.row(7).to_vec(), dm.to_jagged() == m)
    };
    let want = with_backend(Backend::Sequential, run);
    assert!(want.2);
    assert_eq!(want.1, m.row(7));
    let close = |a: &[f64], b: &[f64]| {
        a.iter().zip(b).all(|(a, b)| (a - b).abs() <= 1e-9 * a.abs().max(1.0))
    };
    assert!(close(&with_backend(Backend::Rayon, run).0, &want.0));
    if let Some(got) = on_device(run) {
        assert!(close(&got.0, &want.0));
    }
    on_device(|| {
        let dm = parcomp::DeviceJagged::from_jagged(&m);
        let x = DeviceVec::from_slice(&x0);
        assert_eq!(dm.device(), Some(Backend::current()));
        let y = par![par_sum![v * x[c as usize] | (c, v) <- dm.row(i)] | i <- 0..dm.len()];
        let stats = parcomp::gpu_stats().unwrap();
        // The header and the captured `dm.len()` (or nothing, the runs above having left
        // those bytes on the device): the rows and `x` are read where they lie.
        assert_eq!(stats.copies_in + stats.copies_saved, 1, "{stats:?}");
        assert!(stats.bytes_in < 200, "{stats:?}");
        assert_eq!(y.len(), 3000);
    });
}

#[test]
fn captures_of_every_kind_side_by_side() {
    // A scalar; a primitive slice and an array of rows of primitives, read where they lie on a
    // device whose memory is the host's (PoCL); a slice of pairs and an array of rows of pairs,
    // split into columns in the captures' buffer; a `DeviceVec` and a `DeviceJagged`, read
    // where the device keeps them. Each collection's place in the header is counted from the
    // start of its own buffer: a mix-up reads another capture's bytes.
    let k = 3u64;
    let prim: Vec<u64> = (0..500).map(|i| i * 7 % 101).collect();
    let pairs: Vec<(u32, i64)> = (0..500).map(|i| (i * 3 % 500, -i64::from(i))).collect();
    let rows = parcomp::Jagged::from(
        (0..200u64).map(|r| (0..r % 7).map(|c| r * 10 + c).collect()).collect::<Vec<Vec<u64>>>(),
    );
    let pair_rows = parcomp::Jagged::from(
        (0..200u32)
            .map(|r| (0..r % 5).map(|c| ((r + c) % 500, i64::from(r) - 7)).collect())
            .collect::<Vec<Vec<(u32, i64)>>>(),
    );
    let kept_rows = parcomp::Jagged::from(
        (0..200u64).map(|r| (0..r % 3).map(|c| r ^ c).collect()).collect::<Vec<Vec<u64>>>(),
    );
    let run = || {
        let dv = DeviceVec::from_slice(&prim);
        let dj = parcomp::DeviceJagged::from_jagged(&kept_rows);
        par![
            par_sum![v + prim[(v % 500) as usize] * k + dv[(v * 3 % 500) as usize] | v <- rows.row(r)]
                + par_sum![u64::from(c) * k + pairs[c as usize].0 as u64 + (w * w) as u64 | (c, w) <- pair_rows.row(r)]
                + par_sum![w * 2 | w <- dj.row(r)]
            | r <- 0..rows.len()
        ]
    };
    let want = with_backend(Backend::Sequential, run);
    assert_eq!(want.len(), 200);
    assert_eq!(with_backend(Backend::Rayon, run), want);
    if let Some(got) = on_device(run) {
        assert_eq!(got, want);
    }
}
