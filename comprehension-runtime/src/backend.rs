//! Which engine runs a comprehension.
//!
//! The backend is chosen once per process from the `PARCOMP_BACKEND` environment variable and can
//! be overridden for the current thread with [`with_backend`] (tests use this to run the same
//! comprehension on every backend in one process).

use std::cell::Cell;
use std::fmt;
use std::sync::OnceLock;

/// An engine that can run comprehensions and the segmented primitives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// Plain nested loops on the calling thread: the reference semantics every other backend is
    /// tested against. Selected with `PARCOMP_BACKEND=seq`.
    Sequential,
    /// Every core, through rayon, in the caller's current thread pool (the default).
    /// Selected with `PARCOMP_BACKEND=rayon` (or `cpu`).
    Rayon,
}

impl Backend {
    /// Every backend this build can run.
    pub const ALL: &'static [Backend] = &[Backend::Sequential, Backend::Rayon];

    /// The backend in effect on this thread: a [`with_backend`] override, else the process-wide
    /// choice from `PARCOMP_BACKEND`, else [`Backend::Rayon`].
    pub fn current() -> Backend {
        OVERRIDE.with(Cell::get).unwrap_or_else(process_default)
    }

    /// The name accepted by `PARCOMP_BACKEND`.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sequential => "seq",
            Backend::Rayon => "rayon",
        }
    }

    /// Parses a `PARCOMP_BACKEND` value.
    pub fn from_name(name: &str) -> Option<Backend> {
        match name.trim().to_ascii_lowercase().as_str() {
            "seq" | "sequential" => Some(Backend::Sequential),
            "rayon" | "cpu" | "par" | "parallel" => Some(Backend::Rayon),
            _ => None,
        }
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

fn process_default() -> Backend {
    static DEFAULT: OnceLock<Backend> = OnceLock::new();
    *DEFAULT.get_or_init(|| match std::env::var("PARCOMP_BACKEND") {
        Err(_) => Backend::Rayon,
        Ok(value) if value.trim().is_empty() => Backend::Rayon,
        Ok(value) => Backend::from_name(&value).unwrap_or_else(|| {
            // Said once per process: an unknown name must not silently change the results'
            // provenance, but it is no reason to abort the program either.
            eprintln!(
                "parcomp: PARCOMP_BACKEND={value:?} is not a backend this build knows \
                 (seq, rayon); using rayon"
            );
            Backend::Rayon
        }),
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
pub(crate) fn eager_splitting() -> bool {
    EAGER.with(Cell::get)
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
