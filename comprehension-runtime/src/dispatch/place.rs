//! Where each run goes: the host executor, the placement of a comprehension or a segmented
//! primitive on the device or the host, running it there, and the record of where it ran and
//! why (see [`crate::trace`]).

use crate::backend::{selection, Backend};
use crate::cpu::CpuExecutor;
use crate::gpu::threshold::threshold_for;
use crate::gpu::{self, DeviceFailure, Offload};
use crate::pipeline::{Body, Executor, Reducer};
use crate::site::Site;
use crate::source::Source;
use crate::trace;
use std::sync::atomic::{AtomicBool, Ordering};

/// What runs host work (comprehensions not on a device, the segmented primitives).
pub type HostExecutor = CpuExecutor;

/// The host executor in effect on this thread: the sequential reference when it is selected,
/// rayon otherwise.
pub(crate) fn host_executor() -> HostExecutor {
    match selection() {
        Some(Backend::Sequential) => CpuExecutor::sequential(),
        _ => CpuExecutor::rayon(crate::backend::eager()),
    }
}

/// Records in the trace that a step of the comprehension at `site` ran on the host; when a
/// device could have been chosen (one is forced, or a device backend is built in), with
/// `why` it did not.
pub(crate) fn ran_on_host(site: &'static Site, why: impl FnOnce() -> String) {
    let forced = selection();
    let capable = cfg!(any(feature = "opencl", feature = "cuda-api"));
    if !trace::wanted() {
        return;
    }
    let reason = match forced {
        Some(b) if b.is_device() => Some(why()),
        None if capable => Some(why()),
        _ => None,
    };
    trace::ran(site, host_backend(), reason);
}

/// Records that the comprehension at `site` ran on the host executor in effect (`reason`: why
/// not on a device). Nothing is looked up when nothing reads the record.
fn ran_on_host_executor(site: &'static Site, reason: Option<String>) {
    if trace::wanted() {
        trace::ran(site, host_backend(), reason);
    }
}

/// The host backend a host executor stands for, for the record of a run.
fn host_backend() -> Backend {
    match selection() {
        Some(Backend::Sequential) => Backend::Sequential,
        _ => Backend::Rayon,
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
/// backend (where only [`place`] asks [`choose`]: a primitive stays on the host there), once
/// that has been said (the first time, in full, by [`choose`]), when no device is
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
/// `work()` (asked only then) is at least [`device_threshold`](crate::device_threshold); `host`
/// otherwise, or when the device failed (a forced device's failure is a panic). With
/// `PARCOMP_KERNEL_RECORD`, the `programs` it builds on a GPU are recorded wherever it runs.
pub(crate) fn primitive<R>(
    site: &'static Site,
    programs: gpu::PrimitivePrograms,
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
    if capable {
        programs.record_for_gpu();
    }
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
    ran_on_host_executor(site, reason);
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
    // With PARCOMP_KERNEL_RECORD, what a GPU would build for it, wherever it runs.
    #[cfg(any(feature = "opencl", feature = "cuda-api"))]
    gpu::record_for_gpu(site, &offload);
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
    ran_on_host_executor(site, reason);
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
        |backend, site, offload| {
            gpu::collect_resident(backend, site, offload).map(crate::DeviceVec::on_device)
        },
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
    // As in `collect_where_placed`.
    #[cfg(any(feature = "opencl", feature = "cuda-api"))]
    gpu::record_for_gpu(site, &offload);
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
    ran_on_host_executor(site, reason);
    acc
}
