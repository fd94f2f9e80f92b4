//! Running one computation on every backend and configuration.

#![allow(dead_code)]

use parcomp::{trace, with_backend, with_eager_splitting, Backend};
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

/// Whether the device backends run in these tests: when the build has one and a device is
/// present. With `PARCOMP_REQUIRE_DEVICE` set (CI sets it), a missing device fails the tests
/// instead of skipping their device runs.
pub fn device() -> bool {
    static DEVICE: OnceLock<bool> = OnceLock::new();
    *DEVICE.get_or_init(|| {
        if !Backend::ALL.contains(&Backend::OpenCl) {
            return false;
        }
        let report = parcomp::backend();
        if report.device.is_some() {
            return true;
        }
        if std::env::var_os("PARCOMP_REQUIRE_DEVICE").is_some() {
            panic!("PARCOMP_REQUIRE_DEVICE is set, but there is no device: {report}");
        }
        eprintln!("no OpenCL device, the device runs of these tests are skipped: {report}");
        false
    })
}

/// Runs `f` on the device backend (if [`device`]) and checks that every comprehension it ran
/// went to the device: a silent CPU fallback fails the test.
pub fn on_device<T, F: Fn() -> T>(f: F) -> Option<T> {
    if !device() {
        return None;
    }
    let (result, runs) = trace::record(|| with_backend(Backend::OpenCl, &f));
    assert!(!runs.is_empty(), "nothing ran");
    for run in &runs {
        assert_eq!(run.backend, Backend::OpenCl, "{run}");
    }
    Some(result)
}

/// Runs `f` on the device backend (if [`device`]) and checks that every comprehension it ran
/// stayed on the CPU, for the reason given.
pub fn off_device<T, F: Fn() -> T>(f: F, why: &str) -> Option<T> {
    if !device() {
        return None;
    }
    let (result, runs) = trace::record(|| with_backend(Backend::OpenCl, &f));
    for run in &runs {
        assert_ne!(run.backend, Backend::OpenCl, "{run}");
        let reason = run.reason.as_deref().unwrap_or_default();
        assert!(reason.contains(why), "{run}: expected a reason containing {why:?}");
    }
    Some(result)
}

/// Runs `f` on the sequential backend, on rayon as configured, on rayon splitting eagerly in
/// pools of 1, 3 and the default number of threads, and on the device; asserts every result
/// equals the sequential one and returns it.
pub fn on_every_backend<T, F>(f: F) -> T
where
    T: PartialEq + Debug + Send,
    F: Fn() -> T + Sync,
{
    let reference = on_every_cpu_backend(&f);
    if let Some(result) = on_device(&f) {
        assert_eq!(result, reference, "the device differs from the sequential backend");
    }
    reference
}

/// [`on_every_backend`] for a computation the device does not run: with the device backend
/// chosen, it must stay on the CPU for a reason containing `why`, with the same result.
pub fn on_every_backend_off_device<T, F>(f: F, why: &str) -> T
where
    T: PartialEq + Debug + Send,
    F: Fn() -> T + Sync,
{
    let reference = on_every_cpu_backend(&f);
    if let Some(result) = off_device(&f, why) {
        assert_eq!(result, reference, "the device backend differs from the sequential one");
    }
    reference
}

/// [`on_every_backend`] for computations that the device does not run.
pub fn on_every_cpu_backend<T, F>(f: F) -> T
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

/// [`on_every_backend`] for a computation whose parts the device may or may not run (a
/// comprehension cut by `order by`, `group by` or `take`): with the device backend chosen,
/// every part must either run on the device or say in the trace why it did not; the result
/// must equal the sequential one.
pub fn on_every_backend_traced<T, F>(f: F) -> T
where
    T: PartialEq + Debug + Send,
    F: Fn() -> T + Sync,
{
    let reference = on_every_cpu_backend(&f);
    if device() {
        let (result, runs) = trace::record(|| with_backend(Backend::OpenCl, &f));
        assert!(!runs.is_empty(), "nothing ran");
        for run in &runs {
            assert!(
                run.backend == Backend::OpenCl
                    || run.reason.as_deref().is_some_and(|r| !r.is_empty()),
                "{run}: ran on the host without saying why"
            );
        }
        assert_eq!(result, reference, "the device backend differs from the sequential one");
    }
    reference
}
