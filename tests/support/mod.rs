//! Running one computation on every backend and configuration.

#![allow(dead_code)]

use parcomp::{with_backend, with_eager_splitting, Backend};
use std::fmt::Debug;
use std::sync::OnceLock;

fn pool(threads: usize) -> &'static rayon::ThreadPool {
    static POOLS: OnceLock<Vec<rayon::ThreadPool>> = OnceLock::new();
    let pools = POOLS.get_or_init(|| {
        [1, 3]
            .iter()
            .map(|&n| rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap())
            .collect()
    });
    match threads {
        1 => &pools[0],
        3 => &pools[1],
        _ => panic!("no pool of {threads} threads"),
    }
}

/// Runs `f` on the sequential backend, on rayon as configured, and on rayon splitting
/// eagerly in pools of 1, 3 and the default number of threads; asserts every result equals the
/// sequential one and returns it.
pub fn on_every_backend<T, F>(f: F) -> T
where
    T: PartialEq + Debug + Send,
    F: Fn() -> T + Sync,
{
    let reference = with_backend(Backend::Sequential, &f);
    let runs: [(&str, T); 4] = [
        ("rayon", with_backend(Backend::Rayon, &f)),
        ("rayon eager", with_backend(Backend::Rayon, || with_eager_splitting(&f))),
        (
            "rayon eager, 1 thread",
            pool(1).install(|| with_backend(Backend::Rayon, || with_eager_splitting(&f))),
        ),
        (
            "rayon eager, 3 threads",
            pool(3).install(|| with_backend(Backend::Rayon, || with_eager_splitting(&f))),
        ),
    ];
    for (name, result) in runs {
        assert_eq!(result, reference, "{name} differs from the sequential backend");
    }
    reference
}
