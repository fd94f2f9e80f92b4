//! Which engine runs a comprehension: the one place where the choice is made.
//!
//! The choice is read once per process from `PARCOMP_BACKEND` and can be overridden for the
//! current thread with [`with_backend`] (tests use this to run the same comprehension on every
//! backend in one process). Without either, the *automatic* choice holds: a comprehension whose
//! device half can run on the device does so when a device is present and the work is large
//! enough ([`device_threshold`]); everything else runs on rayon.
//!
//! Every run goes through [`collect`] or [`reduce`] here, which place it, run it, and record
//! where it ran and why (see [`crate::trace`]).

use crate::cpu::CpuExecutor;
use crate::gpu::{self, DeviceFailure, Offload};
use crate::pipeline::{Body, Executor, Reducer};
use crate::site::Site;
use crate::source::Source;
use crate::trace;
use std::cell::Cell;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;

/// An engine that can run comprehensions and the segmented primitives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
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
    /// [`backend`]).
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

/// What runs host work (comprehensions not on a device, the segmented primitives).
pub type HostExecutor = CpuExecutor;

/// The host executor in effect on this thread: the sequential reference when it is selected,
/// rayon otherwise.
pub(crate) fn host_executor() -> HostExecutor {
    match selection() {
        Some(Backend::Sequential) => CpuExecutor::sequential(),
        _ => CpuExecutor::rayon(EAGER.with(Cell::get)),
    }
}

/// Whether host work on this thread may use the rayon pool (the segmented primitives ask).
pub(crate) fn host_parallel() -> bool {
    selection() != Some(Backend::Sequential)
}

/// The host backend a host executor stands for, for the record of a run.
/// Records in the trace that a step of the comprehension at `site` ran on the host; when a
/// device could have been chosen (one is forced, or a device backend is built in), with
/// `why` it did not.
pub(crate) fn ran_on_host(site: &'static Site, why: impl FnOnce() -> String) {
    let forced = selection();
    let capable = cfg!(any(feature = "opencl", feature = "cuda-api"));
    let reason = match forced {
        Some(b) if b.is_device() => Some(why()),
        None if capable => Some(why()),
        _ => None,
    };
    if trace::wanted() {
        trace::ran(site, host_backend(), reason);
    }
}

fn host_backend() -> Backend {
    match selection() {
        Some(Backend::Sequential) => Backend::Sequential,
        _ => Backend::Rayon,
    }
}

/// The least work (elements of the first two levels of the iteration space) that the
/// automatic choice sends to a device: below it, the copies and launches cost more than the
/// work. Set with `PARCOMP_DEVICE_MIN_WORK` or [`set_device_threshold`]; otherwise it comes
/// from a short calibration of the automatic choice's device against rayon, made on first use
/// and cached on disk (see [`crate::gpu::calibrate`]). `u64::MAX` means never: there is no
/// device, or it is not faster than rayon on this machine.
pub fn device_threshold() -> u64 {
    if let Some((elements, _)) = threshold_override() {
        return elements;
    }
    match gpu::automatic_device() {
        Ok(backend) => threshold_for(backend).elements,
        Err(_) => u64::MAX,
    }
}

/// Sets the threshold of [`device_threshold`] for the whole process, over the calibration's
/// and `PARCOMP_DEVICE_MIN_WORK`.
pub fn set_device_threshold(elements: u64) {
    THRESHOLD.store(elements.min(u64::MAX - 1), Ordering::Relaxed);
}

static THRESHOLD: AtomicU64 = AtomicU64::new(u64::MAX);

/// The threshold when the device could not be calibrated; see the README's measurements.
pub const DEFAULT_DEVICE_THRESHOLD: u64 = 1 << 17;

/// A threshold set by the program or the environment, and which.
fn threshold_override() -> Option<(u64, &'static str)> {
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

/// The threshold in effect for the automatic choice of a device backend, and where it comes
/// from.
struct Threshold {
    elements: u64,
    origin: ThresholdOrigin,
}

enum ThresholdOrigin {
    /// `set_device_threshold` or `PARCOMP_DEVICE_MIN_WORK`.
    Set(&'static str),
    /// The device's calibration.
    Calibrated(&'static gpu::calibrate::Calibration),
    /// The calibration failed: [`DEFAULT_DEVICE_THRESHOLD`].
    Default(&'static gpu::device::DeviceError),
}

impl fmt::Display for ThresholdOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ThresholdOrigin::Set(name) => f.write_str(name),
            ThresholdOrigin::Calibrated(c) => {
                write!(f, "calibrated: {c}; PARCOMP_DEVICE_MIN_WORK overrides")
            }
            ThresholdOrigin::Default(e) => write!(
                f,
                "the default, the device could not be calibrated: {e}; PARCOMP_DEVICE_MIN_WORK \
                 overrides"
            ),
        }
    }
}

impl Threshold {
    /// Why no work goes to the device, when its calibration found it slower than rayon.
    /// Whether no work goes to the device ([`Threshold::never`] has a reason), without putting
    /// the reason into words.
    fn never_runs(&self) -> bool {
        matches!((self.elements, &self.origin), (u64::MAX, ThresholdOrigin::Calibrated(_)))
    }

    fn never(&self) -> Option<String> {
        match (self.elements, &self.origin) {
            (u64::MAX, ThresholdOrigin::Calibrated(c)) => {
                // Written once per calibration: every comprehension that stays on the host
                // says it, and a tiny one must not pay for formatting the figures each time.
                static SAID: std::sync::Mutex<Vec<(usize, &'static str)>> =
                    std::sync::Mutex::new(Vec::new());
                let key = std::ptr::from_ref::<gpu::calibrate::Calibration>(c) as usize;
                let mut said = SAID.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(&(_, why)) = said.iter().find(|(k, _)| *k == key) {
                    return Some(why.to_string());
                }
                let why: &'static str = Box::leak(
                    format!(
                        "the device is slower than rayon on this machine (calibrated: {c}); \
                         PARCOMP_DEVICE_MIN_WORK or set_device_threshold sends large work to it"
                    )
                    .into_boxed_str(),
                );
                said.push((key, why));
                Some(why.to_string())
            }
            _ => None,
        }
    }
}

/// The threshold for `backend`'s device: a set one, else its calibration's (measured on first
/// use), else the default.
fn threshold_for(backend: Backend) -> Threshold {
    if let Some((elements, name)) = threshold_override() {
        return Threshold { elements, origin: ThresholdOrigin::Set(name) };
    }
    match gpu::calibrate::calibrated(backend) {
        Ok(c) => Threshold { elements: c.threshold, origin: ThresholdOrigin::Calibrated(c) },
        Err(e) => {
            Threshold { elements: DEFAULT_DEVICE_THRESHOLD, origin: ThresholdOrigin::Default(e) }
        }
    }
}

/// Where one run goes.
enum Placement {
    /// On the host, for this reason (`None`: a CPU backend was chosen).
    Host(Option<String>),
    /// On a device.
    Device(Backend),
}

/// Set once a build without a device backend has said, in full, that there is no device.
static NO_DEVICE_SAID: AtomicBool = AtomicBool::new(false);

/// Whether the answer is the host and nothing needs its reason: in a build without a device
/// backend, once that has been said (the first time, in full, by [`choose`]), when no device is
/// forced or required (those must fail loudly) and nothing reads the trace. A tiny
/// comprehension then pays a few loads for its placement, not the sentences of its reason.
fn host_without_words(forced: Option<Backend>, required: bool) -> bool {
    Backend::DEVICES.is_empty()
        && !forced.is_some_and(Backend::is_device)
        && !required
        && NO_DEVICE_SAID.load(Ordering::Relaxed)
        && !trace::wanted()
}

/// Decides where a comprehension runs. `work` estimates its size given the threshold (it need
/// not count beyond it), and is only asked when the decision depends on it.
fn place<T>(offload: &Offload<'_, T>, work: &mut dyn FnMut(u64) -> u64) -> Placement {
    let forced = selection();
    if let Some(Backend::Sequential | Backend::Rayon) = forced {
        // An explicit choice of a CPU backend holds for every comprehension, `@gpu` ones too.
        return Placement::Host(None);
    }
    if host_without_words(forced, offload.required()) {
        return Placement::Host(None);
    }
    if let Err(why) = offload.capable() {
        return Placement::Host(Some(why));
    }
    choose(forced, offload.required(), work)
}

/// Where work that a device can run goes, given the backend chosen for this thread (`forced`)
/// and whether the device is `required` (`@gpu`). `work` is asked at most once. Not generic, so
/// that it is compiled once and not again for every comprehension.
fn choose(forced: Option<Backend>, required: bool, work: &mut dyn FnMut(u64) -> u64) -> Placement {
    let forced_device = forced.filter(|b| b.is_device());
    if host_without_words(forced, required) {
        return Placement::Host(None);
    }
    let found = match forced_device {
        Some(backend) => gpu::device_for(backend).map(|_| backend),
        None => gpu::automatic_device(),
    };
    let backend = match found {
        Ok(backend) => backend,
        Err(e) => {
            let which = match forced_device {
                Some(backend) => backend.name().to_string(),
                None => gpu::device_names(),
            };
            if forced_device.is_some() || required {
                let who = match forced_device {
                    Some(backend) if !required => {
                        format!("PARCOMP_BACKEND={backend} (or with_backend) forces it")
                    }
                    _ => "this comprehension is marked `@gpu`".to_string(),
                };
                panic!("parcomp: {who}, but there is no {which} device: {e}");
            }
            gpu::say_once_why_not(&e);
            NO_DEVICE_SAID.store(true, Ordering::Relaxed);
            return Placement::Host(Some(format!("no {which} device: {e}")));
        }
    };
    if forced != Some(backend) && !required {
        let threshold = threshold_for(backend);
        if threshold.never_runs() {
            return Placement::Host(if trace::wanted() { threshold.never() } else { None });
        }
        let work = work(threshold.elements);
        if work < threshold.elements {
            // Put into words only when something reads it: a tiny comprehension would spend
            // more on the sentence than on its elements.
            let why = trace::wanted().then(|| {
                format!(
                    "too little work for the device ({work} elements < {}, {})",
                    threshold.elements, threshold.origin
                )
            });
            return Placement::Host(why);
        }
    }
    Placement::Device(backend)
}

/// Runs one of the `parcomp::segmented` primitives where the backend in effect puts it, as a
/// comprehension would be: `device` on a device backend when one is forced, or present and
/// `work()` (asked only then) is at least [`device_threshold`]; `host` otherwise, or when the
/// device failed (a forced device's failure is a panic).
pub(crate) fn primitive<R>(
    site: &'static Site,
    work: impl FnOnce() -> u64,
    device: impl FnOnce(Backend) -> Result<R, DeviceFailure>,
    host: impl FnOnce() -> R,
) -> R {
    let forced = selection();
    // The device path stores `usize` as a 64-bit little-endian word.
    let capable = cfg!(all(
        any(feature = "opencl", feature = "cuda-api"),
        target_pointer_width = "64",
        target_endian = "little"
    ));
    let placement = if !capable || matches!(forced, Some(b) if !b.is_device()) {
        Placement::Host(None)
    } else {
        let mut work = Some(work);
        choose(forced, false, &mut |_| work.take().map_or(0, |work| work()))
    };
    let reason = match placement {
        Placement::Host(reason) => reason,
        Placement::Device(backend) => match device(backend) {
            Ok(out) => {
                trace::ran(site, backend, None);
                return out;
            }
            Err(failure) => Some(after_failure(site, backend, &failure)),
        },
    };
    let out = host();
    if trace::wanted() {
        trace::ran(site, host_backend(), reason);
    }
    out
}

/// The work of a comprehension for [`place`]: the elements of its first level, plus those of
/// its second when the first is small (counting them costs a loop over the first).
fn estimate_work<S, B>(source: &S, body: &B, threshold: u64) -> u64
where
    S: Source,
    B: Body<S::Item>,
{
    let n = source.size() as u64;
    if B::DEPTH == 0 || n >= threshold {
        return n;
    }
    if let Some(fanout) = body.regular_fanout() {
        return n.saturating_add(n.saturating_mul(fanout as u64));
    }
    (0..source.size()).fold(n, |sum, i| sum.saturating_add(body.fanout(&source.fetch(i)) as u64))
}

/// What to do when the device could not run a comprehension it was given.
fn after_failure(site: &'static Site, backend: Backend, failure: &DeviceFailure) -> String {
    if failure.fatal && (selection() == Some(backend)) {
        panic!("parcomp: {site} could not run on {backend}: {}", failure.message);
    }
    if failure.fatal {
        gpu::warn_once(site, backend, &failure.message);
    }
    format!("the device could not run it: {}", failure.message)
}

/// Runs a comprehension, gathering its outputs in nested-loop order, where [`place`] puts it.
pub(crate) fn collect<S, B>(
    site: &'static Site,
    exec: HostExecutor,
    offload: Offload<'_, B::Out>,
    source: &S,
    body: &B,
) -> Vec<B::Out>
where
    S: Source + Sync,
    S::Item: Clone + Send + Sync,
    B: Body<S::Item>,
{
    collect_where_placed(site, exec, offload, source, body, gpu::collect, |out| out)
}

/// A collecting run where [`place`] puts it: `on_device` on the device chosen, else the host
/// executor's `Vec`, made the result by `from_host`.
fn collect_where_placed<S, B, R>(
    site: &'static Site,
    exec: HostExecutor,
    offload: Offload<'_, B::Out>,
    source: &S,
    body: &B,
    on_device: impl FnOnce(Backend, &'static Site, &Offload<'_, B::Out>) -> Result<R, DeviceFailure>,
    from_host: impl FnOnce(Vec<B::Out>) -> R,
) -> R
where
    S: Source + Sync,
    S::Item: Clone + Send + Sync,
    B: Body<S::Item>,
{
    let reason = match place(&offload, &mut |threshold| estimate_work(source, body, threshold)) {
        Placement::Host(reason) => reason,
        #[cfg(any(feature = "opencl", feature = "cuda-api"))]
        Placement::Device(backend) => match on_device(backend, site, &offload) {
            Ok(out) => {
                trace::ran(site, backend, None);
                return out;
            }
            Err(failure) => Some(after_failure(site, backend, &failure)),
        },
        // Without a device backend nothing is placed on a device (`choose` finds none), and
        // the device half of a comprehension is not compiled at all.
        #[cfg(not(any(feature = "opencl", feature = "cuda-api")))]
        Placement::Device(_) => {
            let _ = on_device;
            unreachable!("parcomp: a build without a device backend placed work on a device")
        }
    };
    let out = exec.collect(site, source, body);
    if trace::wanted() {
        trace::ran(site, host_backend(), reason);
    }
    from_host(out)
}

/// Runs a comprehension where [`place`] puts it, leaving its outputs on the device when it ran
/// there (`par_device!`), else holding them on the host.
pub(crate) fn collect_device<S, B>(
    site: &'static Site,
    exec: HostExecutor,
    offload: Offload<'_, B::Out>,
    source: &S,
    body: &B,
) -> crate::DeviceVec<B::Out>
where
    S: Source + Sync,
    S::Item: Clone + Send + Sync,
    B: Body<S::Item>,
    B::Out: gpu::types::DeviceType,
{
    collect_where_placed(
        site,
        exec,
        offload,
        source,
        body,
        gpu::collect_resident,
        crate::DeviceVec::on_host,
    )
}

/// Runs a comprehension, reducing its outputs, where [`place`] puts it.
pub(crate) fn reduce<S, B, R>(
    site: &'static Site,
    exec: HostExecutor,
    offload: Offload<'_, B::Out>,
    source: &S,
    body: &B,
    reducer: &R,
) -> R::Acc
where
    S: Source + Sync,
    S::Item: Clone + Send + Sync,
    B: Body<S::Item>,
    R: Reducer<B::Out>,
{
    let reason = match place(&offload, &mut |threshold| estimate_work(source, body, threshold)) {
        Placement::Host(reason) => reason,
        #[cfg(any(feature = "opencl", feature = "cuda-api"))]
        Placement::Device(backend) => match gpu::reduce(backend, site, &offload, reducer) {
            Ok(acc) => {
                trace::ran(site, backend, None);
                return acc;
            }
            Err(failure) => Some(after_failure(site, backend, &failure)),
        },
        // As in `collect_where_placed`.
        #[cfg(not(any(feature = "opencl", feature = "cuda-api")))]
        Placement::Device(_) => {
            unreachable!("parcomp: a build without a device backend placed work on a device")
        }
    };
    let acc = exec.reduce(site, source, body, reducer);
    if trace::wanted() {
        trace::ran(site, host_backend(), reason);
    }
    acc
}

/// What runs comprehensions in this process, and why: the answer of [`backend`].
#[derive(Clone, Debug)]
pub struct BackendReport {
    /// The backend forced by `PARCOMP_BACKEND` or [`with_backend`] on this thread, if any.
    pub forced: Option<Backend>,
    /// The device large device-capable comprehensions run on, if one is present.
    pub device: Option<String>,
    /// Its backend (`opencl` or `cuda`).
    pub device_backend: Option<Backend>,
    /// The least work the automatic choice sends to the device (`u64::MAX`: none), when the
    /// automatic choice is in effect and there is a device.
    pub threshold: Option<u64>,
    /// The device's calibration, when the automatic choice is in effect, there is a device, and
    /// no threshold is set (`PARCOMP_DEVICE_MIN_WORK`, [`set_device_threshold`]): what the
    /// threshold comes from. Any device's: [`crate::gpu::calibrate::calibration`].
    pub calibration: Option<crate::gpu::calibrate::Calibration>,
    /// In words: what runs where, and why.
    pub summary: String,
}

impl fmt::Display for BackendReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.summary)
    }
}

/// What runs comprehensions started on this thread, and why.
pub fn backend() -> BackendReport {
    let forced = selection();
    let device_backend = match forced {
        Some(b) if b.is_device() => Ok(b),
        _ => gpu::automatic_device(),
    };
    let device = device_backend.clone().and_then(gpu::device_for);
    let device_backend = device.is_ok().then(|| device_backend.ok()).flatten();
    let device_name = device.as_ref().ok().map(|d| d.to_string());
    let threshold = match (forced, device_backend) {
        (None, Some(backend)) => Some(threshold_for(backend)),
        _ => None,
    };
    let summary = match (forced, &device) {
        (Some(Backend::Sequential), _) => {
            "seq: every comprehension runs sequentially on the calling thread (forced)".into()
        }
        (Some(Backend::Rayon), _) => {
            "rayon: every comprehension runs on the current rayon pool (forced)".into()
        }
        (Some(b), Ok(d)) => format!(
            "{b}: every comprehension that can run on the device runs on {d} (forced); the \
             others on rayon"
        ),
        (Some(b), Err(e)) => format!("{b} is forced, but there is no {b} device: {e}"),
        (None, Ok(d)) => match threshold.as_ref() {
            Some(t) => match t.never() {
                Some(why) => format!("automatic: every comprehension runs on rayon ({d}: {why})"),
                None => format!(
                    "automatic: comprehensions that can run on the device run on {d} when they \
                     have at least {} elements ({}); the others on rayon",
                    t.elements, t.origin
                ),
            },
            None => format!("automatic: comprehensions that can run on the device run on {d}"),
        },
        (None, Err(e)) => format!("automatic: every comprehension runs on rayon ({e})"),
    };
    let calibration = match &threshold {
        Some(Threshold { origin: ThresholdOrigin::Calibrated(c), .. }) => Some((*c).clone()),
        _ => None,
    };
    BackendReport {
        forced,
        device: device_name,
        device_backend,
        threshold: threshold.map(|t| t.elements),
        calibration,
        summary,
    }
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
