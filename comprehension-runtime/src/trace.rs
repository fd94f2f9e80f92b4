//! Where each comprehension ran, and why: `PARCOMP_TRACE=1` prints one line per run to
//! stderr, and [`record`] collects the runs of a closure (tests use it to assert that nothing
//! silently fell back to the CPU).

use crate::backend::Backend;
use crate::site::Site;
use std::cell::RefCell;
use std::fmt;
use std::sync::OnceLock;

/// One run of a comprehension.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    /// The comprehension as written, e.g. `par![x * x | x <- 0..n]`.
    pub text: &'static str,
    /// Where it is written: `file:line:column`.
    pub location: String,
    /// What ran it.
    pub backend: Backend,
    /// Why it did not run on the device, when it did not and a device could have been chosen.
    pub reason: Option<String>,
}

impl fmt::Display for Run {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at {}: {}", self.text, self.location, self.backend)?;
        if let Some(reason) = &self.reason {
            write!(f, " ({reason})")?;
        }
        Ok(())
    }
}

thread_local! {
    static RECORDING: RefCell<Option<Vec<Run>>> = const { RefCell::new(None) };
}

/// Runs `f` and returns, with its result, every comprehension run on this thread while it ran
/// (in the order they finished; comprehensions nested in others are part of their run).
///
/// ```
/// use comprehension_runtime::{trace, with_backend, Backend};
/// let ((), runs) = trace::record(|| {});
/// assert!(runs.is_empty());
/// ```
pub fn record<R>(f: impl FnOnce() -> R) -> (R, Vec<Run>) {
    struct Restore(Option<Vec<Run>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            RECORDING.with(|r| *r.borrow_mut() = self.0.take());
        }
    }
    let mut restore = Restore(RECORDING.with(|r| r.borrow_mut().replace(Vec::new())));
    let result = f();
    let runs = RECORDING.with(|r| r.borrow_mut().replace(Vec::new())).unwrap_or_default();
    // Runs recorded here also belong to an enclosing recording.
    if let Some(outer) = restore.0.as_mut() {
        outer.extend(runs.iter().cloned());
    }
    (result, runs)
}

fn tracing() -> bool {
    static TRACE: OnceLock<bool> = OnceLock::new();
    *TRACE.get_or_init(|| {
        std::env::var("PARCOMP_TRACE")
            .map(|v| !matches!(v.trim(), "" | "0" | "false" | "no" | "off"))
            .unwrap_or(false)
    })
}

/// Whether anything reads the record of runs (the trace is on, or this thread records): when
/// not, the reasons need not be put into words.
pub(crate) fn wanted() -> bool {
    tracing() || RECORDING.with(|r| r.borrow().is_some())
}

/// Notes that the comprehension at `site` ran on `backend` (`reason`: why not on a device).
pub(crate) fn ran(site: &'static Site, backend: Backend, reason: Option<String>) {
    let trace = tracing();
    let recording = RECORDING.with(|r| r.borrow().is_some());
    if !trace && !recording {
        return;
    }
    let run = Run {
        text: site.text,
        location: format!("{}:{}:{}", site.file, site.line, site.column),
        backend,
        reason,
    };
    if trace {
        eprintln!("parcomp: {run}");
    }
    if recording {
        RECORDING.with(|r| {
            if let Some(runs) = r.borrow_mut().as_mut() {
                runs.push(run);
            }
        });
    }
}

/// Says, when the trace is on, where a device program came from the first time this process
/// needed it: `from the kernel bundle <name>`, `from the disk cache`, `compiled`.
pub(crate) fn program(what: &dyn fmt::Display, origin: &str) {
    if tracing() {
        eprintln!("parcomp: the device program of {what}: {origin}");
    }
}
