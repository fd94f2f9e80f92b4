//! What the runtime's test files share.

#![allow(dead_code)]

/// A small deterministic generator (xorshift), so that failures reproduce.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// `n` keys, each drawn by `key`.
    pub fn keys(&mut self, n: usize, key: impl Fn(&mut Rng) -> u64) -> Vec<u64> {
        (0..n).map(|_| key(self)).collect()
    }
}

use comprehension_runtime::Backend;
use std::sync::OnceLock;

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
            match comprehension_runtime::gpu::device_for(backend) {
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

/// Whether the device of `backend` is one these tests run on (see [`devices`]).
pub fn present(backend: Backend) -> bool {
    devices().contains(&backend)
}

/// Every backend these tests run on: the sequential reference, rayon, and [`devices`].
pub fn backends() -> Vec<Backend> {
    let mut all = vec![Backend::Sequential, Backend::Rayon];
    all.extend_from_slice(devices());
    all
}

/// The OpenCL device, when it is one these tests run on (see [`devices`]).
#[cfg(feature = "opencl")]
pub fn opencl() -> Option<&'static dyn comprehension_runtime::gpu::device::Device> {
    present(Backend::OpenCl).then(|| {
        comprehension_runtime::gpu::device(Backend::OpenCl)
            .expect("present(Backend::OpenCl) opened it")
    })
}

/// Whether `PARCOMP_BACKEND` forces a backend on the whole process: then no comprehension is
/// placed by the automatic choice, and the tests of that choice say so and return.
pub fn backend_forced() -> bool {
    let forced = std::env::var("PARCOMP_BACKEND")
        .is_ok_and(|v| !v.trim().is_empty() && !v.trim().eq_ignore_ascii_case("auto"));
    if forced {
        eprintln!("PARCOMP_BACKEND forces a backend: the automatic choice is not tested");
    }
    forced
}
