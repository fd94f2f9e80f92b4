#![deny(warnings)]

use parcomp::{par, par_device, par_sum, DeviceJagged, DeviceVec, Jagged};

fn main() {
    let v = DeviceVec::from_slice(&[1u32, 2, 3]);
    let w: DeviceVec<u64> = par_device![x as u64 * 2 | x <- &v, x > 1];
    let m = DeviceJagged::from_jagged(&Jagged::from(vec![vec![1.0f64, 2.0], vec![]]));
    let sums = par![par_sum![r | r <- m.row(i)] | i <- 0..m.len()];
    let sorted: DeviceVec<u32> = par_device![x | x <- &v, order by x desc, take 2];
    assert_eq!((w.to_vec(), sums, sorted.to_vec()), (vec![4, 6], vec![3.0, 0.0], vec![3, 2]));
    assert_eq!(par_sum![x | x <- &w], 10);
}
