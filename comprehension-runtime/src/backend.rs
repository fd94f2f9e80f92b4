//! Which engine runs a comprehension: the choice, and nothing that acts on it.
//!
//! The choice is read once per process from `PARCOMP_BACKEND` and can be overridden for the
//! current thread with [`with_backend`] (tests use this to run the same comprehension on every
//! backend in one process). Without either, the *automatic* choice holds: a comprehension whose
//! device half can run on the device does so when a device is present and the work is large
//! enough ([`device_threshold`](crate::device_threshold)); everything else runs on rayon. The
//! lowest layer of the runtime: it names no other module of it; `crate::dispatch` acts on the
//! choice.

use std::cell::Cell;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// An engine that can run comprehensions and the segmented primitives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// Plain nested loops on the calling thread: the reference semantics every other backend is
    /// tested against. Selected with `PARCOMP_BACKEND=seq`.
    Sequential,
    /// Every core, through rayon, in the caller's current thread pool (the default for work
    /// that does not go to a device). Selected with `PARCOMP_BACKEND=rayon` (or `cpu`).
    Rayon,
    /// An OpenCL device (the `opencl` feature), for every comprehension that can run there;
    /// the others run on rayon. Selected with `PARCOMP_BACKEND=opencl`.
    OpenCl,
    /// An NVIDIA GPU through CUDA (the `cuda` feature), for every comprehension that can run
    /// there; the others run on rayon. Selected with `PARCOMP_BACKEND=cuda`.
    Cuda,
}

impl Backend {
    /// Every backend this build can run.
    pub const ALL: &'static [Backend] = match (cfg!(feature = "opencl"), cfg!(feature = "cuda-api"))
    {
        (true, true) => &[Backend::Sequential, Backend::Rayon, Backend::OpenCl, Backend::Cuda],
        (true, false) => &[Backend::Sequential, Backend::Rayon, Backend::OpenCl],
        (false, true) => &[Backend::Sequential, Backend::Rayon, Backend::Cuda],
        (false, false) => &[Backend::Sequential, Backend::Rayon],
    };

    /// The device backends this build has, in the order the automatic choice tries them:
    /// CUDA first (an NVIDIA GPU), then OpenCL (any device, PoCL included).
    pub const DEVICES: &'static [Backend] =
        match (cfg!(feature = "opencl"), cfg!(feature = "cuda-api")) {
            (true, true) => &[Backend::Cuda, Backend::OpenCl],
            (true, false) => &[Backend::OpenCl],
            (false, true) => &[Backend::Cuda],
            (false, false) => &[],
        };

    /// The backend in effect on this thread: a [`with_backend`] override, else the process-wide
    /// choice from `PARCOMP_BACKEND`, else [`Backend::Rayon`] (the automatic choice, which
    /// still places large device-capable comprehensions on a device when one is present: see
    /// [`backend`](crate::backend())).
    pub fn current() -> Backend {
        selection().unwrap_or(Backend::Rayon)
    }

    /// The name accepted by `PARCOMP_BACKEND`, and printed by the trace.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sequential => "seq",
            Backend::Rayon => "rayon",
            Backend::OpenCl => "opencl",
            Backend::Cuda => "cuda",
        }
    }

    /// Parses a `PARCOMP_BACKEND` value.
    pub fn from_name(name: &str) -> Option<Backend> {
        match name.trim().to_ascii_lowercase().as_str() {
            "seq" | "sequential" => Some(Backend::Sequential),
            "rayon" | "cpu" | "par" | "parallel" => Some(Backend::Rayon),
            "opencl" | "ocl" => Some(Backend::OpenCl),
            "cuda" => Some(Backend::Cuda),
            _ => None,
        }
    }

    /// Whether this backend runs on a device.
    pub fn is_device(self) -> bool {
        matches!(self, Backend::OpenCl | Backend::Cuda)
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

thread_local! {
    static OVERRIDE: Cell<Option<Backend>> = const { Cell::new(None) };
    static EAGER: Cell<bool> = const { Cell::new(false) };
}

/// The backend forced on this thread or for the process, if any (`None`: automatic).
pub(crate) fn selection() -> Option<Backend> {
    OVERRIDE.with(Cell::get).or_else(process_selection)
}

fn process_selection() -> Option<Backend> {
    static SELECTION: OnceLock<Option<Backend>> = OnceLock::new();
    *SELECTION.get_or_init(|| match std::env::var("PARCOMP_BACKEND") {
        Err(_) => None,
        Ok(value) if value.trim().is_empty() || value.trim().eq_ignore_ascii_case("auto") => None,
        Ok(value) => match Backend::from_name(&value) {
            Some(backend) => Some(backend),
            None => {
                // Said once per process: an unknown name must not silently change the results'
                // provenance, but it is no reason to abort the program either.
                eprintln!(
                    "parcomp: PARCOMP_BACKEND={value:?} is not a backend this build knows \
                     (seq, rayon, opencl, cuda, auto); choosing automatically"
                );
                None
            }
        },
    })
}

/// Runs `f` with `backend` in effect for comprehensions started on this thread, then restores
/// the previous choice (also when `f` panics).
///
/// ```
/// use comprehension_runtime::{with_backend, Backend};
/// let b = with_backend(Backend::Sequential, Backend::current);
/// assert_eq!(b, Backend::Sequential);
/// ```
pub fn with_backend<R>(backend: Backend, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Backend>);
    impl Drop for Restore {
        fn drop(&mut self) {
            OVERRIDE.with(|cell| cell.set(self.0));
        }
    }
    let _restore = Restore(OVERRIDE.with(|cell| cell.replace(Some(backend))));
    f()
}

/// Runs `f` with the rayon backend splitting every comprehension started on this thread as
/// finely as it can: no sequential cutoff for small inputs, many small ranges. Results are the
/// same; this exists so that tests exercise the parallel paths on small inputs.
#[doc(hidden)]
pub fn with_eager_splitting<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            EAGER.with(|cell| cell.set(self.0));
        }
    }
    let _restore = Restore(EAGER.with(|cell| cell.replace(true)));
    f()
}

/// Whether [`with_eager_splitting`] is in effect on this thread.
pub(crate) fn eager() -> bool {
    EAGER.with(Cell::get)
}

/// Whether host work on this thread may use the rayon pool (the segmented primitives ask).
pub(crate) fn host_parallel() -> bool {
    selection() != Some(Backend::Sequential)
}

/// Sets the threshold of [`device_threshold`](crate::device_threshold) for the whole process,
/// over the calibration's and `PARCOMP_DEVICE_MIN_WORK`.
pub fn set_device_threshold(elements: u64) {
    THRESHOLD.store(elements.min(u64::MAX - 1), Ordering::Relaxed);
}

static THRESHOLD: AtomicU64 = AtomicU64::new(u64::MAX);

/// The threshold when the device could not be calibrated; see the measurements in the guide (`docs/src/backends.md`).
pub const DEFAULT_DEVICE_THRESHOLD: u64 = 1 << 17;

/// A threshold set by the program or the environment, and which.
pub(crate) fn threshold_override() -> Option<(u64, &'static str)> {
    let set = THRESHOLD.load(Ordering::Relaxed);
    if set != u64::MAX {
        return Some((set, "set_device_threshold"));
    }
    static FROM_ENV: OnceLock<Option<u64>> = OnceLock::new();
    FROM_ENV
        .get_or_init(|| {
            std::env::var("PARCOMP_DEVICE_MIN_WORK")
                .ok()
                .and_then(|v| v.trim().replace('_', "").parse().ok())
        })
        .map(|elements| (elements, "PARCOMP_DEVICE_MIN_WORK"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backend_names() {
        assert_eq!(Backend::from_name("seq"), Some(Backend::Sequential));
        assert_eq!(Backend::from_name(" Sequential "), Some(Backend::Sequential));
        assert_eq!(Backend::from_name("rayon"), Some(Backend::Rayon));
        assert_eq!(Backend::from_name("cpu"), Some(Backend::Rayon));
        assert_eq!(Backend::from_name("OpenCL"), Some(Backend::OpenCl));
        assert_eq!(Backend::from_name("gpu"), None);
        for &b in Backend::ALL {
            assert_eq!(Backend::from_name(b.name()), Some(b));
        }
    }

    #[test]
    fn overrides_nest_and_restore() {
        let outer = Backend::current();
        with_backend(Backend::Sequential, || {
            assert_eq!(Backend::current(), Backend::Sequential);
            with_backend(Backend::Rayon, || assert_eq!(Backend::current(), Backend::Rayon));
            assert_eq!(Backend::current(), Backend::Sequential);
        });
        assert_eq!(Backend::current(), outer);
        let _ = std::panic::catch_unwind(|| with_backend(Backend::Sequential, || panic!("boom")));
        assert_eq!(Backend::current(), outer);
    }
}
