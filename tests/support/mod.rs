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

/// Whether `PARCOMP_REQUIRE_DEVICE` makes the device of `backend` a requirement of these tests:
/// a missing one then fails them instead of skipping their runs on it.
///
/// Unset, empty or `0`: no device is required. `1` (what CI sets): the devices CI has, of
/// those this build has: OpenCL (PoCL in CI), never CUDA (CI has no NVIDIA GPU). Otherwise a
/// comma-separated list of backend names (`opencl`, `cuda`, `opencl,cuda`), or `all` (every
/// device backend of this build). Naming a backend this build lacks is an error.
pub fn required(backend: Backend) -> bool {
    let Ok(value) = std::env::var("PARCOMP_REQUIRE_DEVICE") else {
        return false;
    };
    let value = value.trim().to_ascii_lowercase();
    match value.as_str() {
        "" | "0" => false,
        "1" => backend == Backend::OpenCl,
        "all" => backend.is_device(),
        list => {
            let mut named = false;
            for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                let wanted =
                    Backend::from_name(name).filter(|b| b.is_device()).unwrap_or_else(|| {
                        panic!(
                            "PARCOMP_REQUIRE_DEVICE={value:?}: `{name}` is not a device backend \
                             (opencl, cuda)"
                        )
                    });
                assert!(
                    Backend::DEVICES.contains(&wanted),
                    "PARCOMP_REQUIRE_DEVICE={value:?} requires {wanted}, which this build lacks \
                     (enable the `{wanted}` feature)"
                );
                named |= wanted == backend;
            }
            named
        }
    }
}

/// The device backends these tests run on: those of this build whose device is present, in
/// the order of [`Backend::DEVICES`]. A missing device skips the runs on it, saying so on
/// stderr once per process, unless [`required`] makes it a requirement: then it fails.
pub fn devices() -> &'static [Backend] {
    static DEVICES: OnceLock<Vec<Backend>> = OnceLock::new();
    DEVICES.get_or_init(|| {
        let mut present = Vec::new();
        for &backend in Backend::DEVICES {
            match parcomp::gpu_device(backend) {
                Ok(_) => present.push(backend),
                Err(e) if required(backend) => panic!(
                    "PARCOMP_REQUIRE_DEVICE requires {backend}, but there is no {backend} \
                     device: {e}"
                ),
                Err(e) => eprintln!(
                    "no {backend} device, the {backend} runs of these tests are skipped: {e}"
                ),
            }
        }
        // Checks the names PARCOMP_REQUIRE_DEVICE gives also when every device is present.
        let _ = required(Backend::Sequential);
        present
    })
}

/// Every backend these tests run on: the sequential reference, rayon, and [`devices`].
pub fn backends() -> Vec<Backend> {
    let mut all = vec![Backend::Sequential, Backend::Rayon];
    all.extend_from_slice(devices());
    all
}

/// Whether the device of `backend` is one these tests run on (see [`devices`]).
pub fn present(backend: Backend) -> bool {
    devices().contains(&backend)
}

/// Whether any device backend runs in these tests (see [`devices`]).
pub fn device() -> bool {
    !devices().is_empty()
}

/// Whether the programs of the last device of [`devices`] (whose results [`on_device`]
/// returns) take a CPU device's shapes, as the runtime decides: on a CPU device (PoCL) unless
/// `PARCOMP_DEVICE_SHAPES=gpu` asks for a GPU's, on any device where it says `cpu`.
pub fn cpu_shapes() -> bool {
    let Some(&backend) = devices().last() else {
        return false;
    };
    match std::env::var("PARCOMP_DEVICE_SHAPES").map(|v| v.trim().to_ascii_lowercase()) {
        Ok(v) if v == "gpu" => false,
        Ok(v) if v == "cpu" => true,
        _ => parcomp::gpu_device(backend).is_ok_and(|d| d.is_cpu),
    }
}

/// Runs `f` on each device backend of [`devices`] and checks that every comprehension it ran
/// went to that device: a silent CPU fallback fails the test. Returns each device's result.
pub fn on_devices<T, F: Fn() -> T>(f: F) -> Vec<(Backend, T)> {
    devices()
        .iter()
        .map(|&backend| {
            let (result, runs) = trace::record(|| with_backend(backend, &f));
            assert!(!runs.is_empty(), "nothing ran on {backend}");
            for run in &runs {
                assert_eq!(run.backend, backend, "{run}");
            }
            (backend, result)
        })
        .collect()
}

/// [`on_devices`], returning the last device's result (`None` when no device runs here).
pub fn on_device<T, F: Fn() -> T>(f: F) -> Option<T> {
    on_devices(f).pop().map(|(_, result)| result)
}

/// Runs `f` on each device backend of [`devices`] and checks that every comprehension it ran
/// stayed on the CPU, for the reason given. Returns the last result.
pub fn off_device<T, F: Fn() -> T>(f: F, why: &str) -> Option<T> {
    devices().iter().map(|&backend| off_device_on(backend, &f, why)).last()
}

/// Runs `f` on `backend`, checking that every comprehension it ran stayed on the CPU for a
/// reason containing `why`.
fn off_device_on<T, F: Fn() -> T>(backend: Backend, f: F, why: &str) -> T {
    let (result, runs) = trace::record(|| with_backend(backend, &f));
    for run in &runs {
        assert!(!run.backend.is_device(), "{run}");
        let reason = run.reason.as_deref().unwrap_or_default();
        assert!(reason.contains(why), "{run}: expected a reason containing {why:?}");
    }
    result
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
    for (backend, result) in on_devices(&f) {
        assert_eq!(result, reference, "{backend} differs from the sequential backend");
    }
    reference
}

/// [`on_every_backend`], and the statistics of `f`'s run on the last device (`None` without
/// one).
pub fn on_every_backend_with_stats<T, F>(f: F) -> (T, Option<parcomp::RunStats>)
where
    T: PartialEq + Debug + Send,
    F: Fn() -> T + Sync,
{
    let want = on_every_backend(&f);
    let stats = on_device(|| {
        f();
        parcomp::gpu_stats().expect("the device ran it")
    });
    (want, stats)
}

/// [`on_every_backend`] for a computation the device does not run: with a device backend
/// chosen, it must stay on the CPU for a reason containing `why`, with the same result.
pub fn on_every_backend_off_device<T, F>(f: F, why: &str) -> T
where
    T: PartialEq + Debug + Send,
    F: Fn() -> T + Sync,
{
    let reference = on_every_cpu_backend(&f);
    for &backend in devices() {
        let result = off_device_on(backend, &f, why);
        assert_eq!(result, reference, "the {backend} backend differs from the sequential one");
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
    for &backend in devices() {
        let (result, runs) = trace::record(|| with_backend(backend, &f));
        assert!(!runs.is_empty(), "nothing ran");
        for run in &runs {
            assert!(
                run.backend == backend || run.reason.as_deref().is_some_and(|r| !r.is_empty()),
                "{run}: ran on the host without saying why"
            );
        }
        assert_eq!(result, reference, "the {backend} backend differs from the sequential one");
    }
    reference
}

/// The panic message of `f` run on each device backend (none when there is no device), each
/// run checked to have gone to that device.
pub fn device_panics(f: impl Fn()) -> Vec<(Backend, String)> {
    let mut messages = Vec::new();
    for &backend in devices() {
        let (result, runs) = trace::record(|| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| with_backend(backend, &f)))
        });
        let payload = result.expect_err("the comprehension should panic");
        for run in &runs {
            assert_eq!(run.backend, backend, "{run}");
        }
        let message = match payload.downcast::<String>() {
            Ok(s) => *s,
            Err(payload) => payload.downcast::<&str>().map(|s| s.to_string()).unwrap_or_default(),
        };
        messages.push((backend, message));
    }
    messages
}

/// [`device_panics`] of a fault the device recorded: each message ends naming the device, as
/// the panics the host raises for a kernel's fault do.
pub fn device_faults(f: impl Fn()) -> Vec<String> {
    device_panics(f)
        .into_iter()
        .map(|(backend, message)| {
            assert!(message.ends_with(&format!("on {}", backend.name())), "{message}");
            message
        })
        .collect()
}

/// Set in the environment of a child process of a test (see [`child_command`]), so that the
/// ignored `child_*` tests do nothing when someone runs the ignored tests by hand.
pub const CHILD: &str = "PARCOMP_TEST_CHILD";

/// Whether this process is a child started by [`child_command`].
pub fn is_child() -> bool {
    std::env::var_os(CHILD).is_some()
}

/// A command that runs the ignored test `name` of this test binary alone, as a child process,
/// with `env` set and none of the variables that choose where comprehensions run or which
/// kernels they take (the backend, the trace, the device threshold, kernel records and bundles).
pub fn child_command(name: &str, env: &[(&str, &str)]) -> std::process::Command {
    let mut command = std::process::Command::new(std::env::current_exe().unwrap());
    command.args(["--exact", name, "--ignored", "--nocapture", "--test-threads=1"]).env(CHILD, "1");
    for var in [
        "PARCOMP_BACKEND",
        "PARCOMP_TRACE",
        "PARCOMP_DEVICE_MIN_WORK",
        "PARCOMP_KERNEL_RECORD",
        "PARCOMP_KERNEL_BUNDLE",
        "PARCOMP_KERNEL_MISS",
    ] {
        command.env_remove(var);
    }
    for (key, value) in env {
        command.env(key, value);
    }
    command
}
