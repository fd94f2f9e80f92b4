//! The answer of [`backend()`]: what runs comprehensions in this process, and why.

use crate::backend::{selection, Backend};
use crate::gpu;
use crate::gpu::threshold::{threshold_for, Threshold, ThresholdOrigin};
use std::fmt;

/// What runs comprehensions in this process, and why: the answer of [`backend`].
#[derive(Clone, Debug)]
pub struct BackendReport {
    /// The backend forced by `PARCOMP_BACKEND` or [`with_backend`](crate::with_backend) on this
    /// thread, if any.
    pub forced: Option<Backend>,
    /// The device large device-capable comprehensions run on, if one is present.
    pub device: Option<String>,
    /// Its backend (`opencl` or `cuda`).
    pub device_backend: Option<Backend>,
    /// The least work the automatic choice sends to the device (`u64::MAX`: none), when the
    /// automatic choice is in effect and there is a device.
    pub threshold: Option<u64>,
    /// The device's calibration, when the automatic choice is in effect, there is a device, and
    /// no threshold is set (`PARCOMP_DEVICE_MIN_WORK`,
    /// [`set_device_threshold`](crate::set_device_threshold)): what the threshold comes from.
    /// Any device's: [`crate::gpu::calibrate::calibration`].
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
