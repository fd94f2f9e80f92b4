//! Reductions, nested comprehensions and parallel branches, on every backend.

mod support;

use parcomp::{
    par, par_all, par_any, par_count, par_max, par_min, par_product, par_reduce, par_sum, Jagged,
};
use support::{on_every_backend, on_every_backend_off_device};

#[test]
fn smoke() {
    let n = 100u64;
    assert_eq!(on_every_backend(|| par_sum![x * y | x <- 0..n, y <- x..n]), {
        let mut s = 0;
        for x in 0..n {
            for y in x..n {
                s += x * y;
            }
        }
        s
    });
    assert_eq!(
        on_every_backend(|| par_count![() | x <- 0..n, y <- 0..x, (x + y) % 7 == 0]),
        (0..n).map(|x| (0..x).filter(|y| (x + y) % 7 == 0).count()).sum::<usize>()
    );
    assert_eq!(
        on_every_backend(|| par_min![x * 7 % 11 | x <- 1..n]),
        (1..n).map(|x| x * 7 % 11).min()
    );
    assert_eq!(on_every_backend(|| par_max![x | x <- 0..0u8]), None);
    assert!(on_every_backend(|| par_any![x == 77 | x <- 0..n]));
    assert!(!on_every_backend(|| par_all![x < 50 | x <- 0..n]));
    assert_eq!(on_every_backend(|| par_product![x | x <- 1..=10u64]), 3628800);
    assert_eq!(
        on_every_backend(|| par_reduce!(|a: u64, b| a.max(b), 0; x ^ y | x <- 0..n, y <- 0..x)),
        127
    );
    let m = Jagged::from(vec![
        vec![(0usize, 1i64), (1, 2), (3, 11)],
        vec![(1, 3), (2, 4)],
        vec![],
        vec![(1, 5), (2, 6), (3, 7)],
    ]);
    let x = [3i64, 1, 2, 6];
    assert_eq!(
        on_every_backend(|| par![par_sum![v * x[c] | (c, v) <- m.row(i)] | i <- 0..m.len()]),
        [71, 11, 0, 59]
    );
    assert_eq!(
        // A nested `par!` inside a tuple: the device delivers nested `par!`s only as the whole
        // head, so this one stays on the CPU and says why.
        on_every_backend_off_device(
            || par![(i, par![c | (c, _) <- m.row(i)]) | i <- 0..m.len()],
            "uses a nested `par!` inside its head"
        ),
        [(0, vec![0, 1, 3]), (1, vec![1, 2]), (2, vec![]), (3, vec![1, 2, 3])]
    );
    assert_eq!(
        on_every_backend(|| par![(a, b) | a <- 0..3 | b <- [10, 20, 30, 40]]),
        [(0, 10), (1, 20), (2, 30)]
    );
    assert_eq!(
        on_every_backend(
            || par![(a, b, c) | a <- 0..5, a % 2 == 0 | b <- 10..20 | let c = 7, c2 <- 0..2]
        ),
        [(0, 10, 7), (2, 11, 7)]
    );
}
