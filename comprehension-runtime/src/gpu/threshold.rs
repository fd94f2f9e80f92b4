//! How much work the automatic choice sends to a device: the threshold set by the program or
//! the environment (kept by `crate::backend`), else the device's calibration against rayon.

use crate::backend::{threshold_override, Backend, DEFAULT_DEVICE_THRESHOLD};
use std::fmt;

/// The least work (elements of the first two levels of the iteration space) that the
/// automatic choice sends to a device: below it, the copies and launches cost more than the
/// work. Set with `PARCOMP_DEVICE_MIN_WORK` or
/// [`set_device_threshold`](crate::set_device_threshold); otherwise it comes from a short
/// calibration of the automatic choice's device against rayon, made on first use and cached on
/// disk (see [`calibrate`](super::calibrate)). `u64::MAX` means never: there is no device, or it
/// is not faster than rayon on this machine.
pub fn device_threshold() -> u64 {
    if let Some((elements, _)) = threshold_override() {
        return elements;
    }
    match super::automatic_device() {
        Ok(backend) => threshold_for(backend).elements,
        Err(_) => u64::MAX,
    }
}

/// The threshold in effect for the automatic choice of a device backend, and where it comes
/// from.
pub(crate) struct Threshold {
    pub(crate) elements: u64,
    pub(crate) origin: ThresholdOrigin,
}

pub(crate) enum ThresholdOrigin {
    /// `set_device_threshold` or `PARCOMP_DEVICE_MIN_WORK`.
    Set(&'static str),
    /// The device's calibration.
    Calibrated(&'static super::calibrate::Calibration),
    /// The calibration failed: [`DEFAULT_DEVICE_THRESHOLD`].
    Default(&'static super::device::DeviceError),
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
    /// The calibration that found the device slower than rayon, when that is why no work goes
    /// to it.
    fn slower_than_rayon(&self) -> Option<&'static super::calibrate::Calibration> {
        match (self.elements, &self.origin) {
            (u64::MAX, ThresholdOrigin::Calibrated(c)) => Some(c),
            _ => None,
        }
    }

    /// Whether no work goes to the device because it is slower than rayon ([`Threshold::never`]
    /// has a reason), without putting the reason into words.
    pub(crate) fn never_runs(&self) -> bool {
        self.slower_than_rayon().is_some()
    }

    /// Why no work goes to the device, when its calibration found it slower than rayon.
    pub(crate) fn never(&self) -> Option<String> {
        let c = self.slower_than_rayon()?;
        // Written once per calibration: every comprehension that stays on the host says it,
        // and a tiny one must not pay for formatting the figures each time.
        static SAID: std::sync::Mutex<Vec<(usize, &'static str)>> =
            std::sync::Mutex::new(Vec::new());
        let key = std::ptr::from_ref::<super::calibrate::Calibration>(c) as usize;
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
}

/// The threshold for `backend`'s device: a set one, else its calibration's (measured on first
/// use), else the default.
pub(crate) fn threshold_for(backend: Backend) -> Threshold {
    if let Some((elements, name)) = threshold_override() {
        return Threshold { elements, origin: ThresholdOrigin::Set(name) };
    }
    match super::calibrate::calibrated(backend) {
        Ok(c) => Threshold { elements: c.threshold, origin: ThresholdOrigin::Calibrated(c) },
        Err(e) => {
            Threshold { elements: DEFAULT_DEVICE_THRESHOLD, origin: ThresholdOrigin::Default(e) }
        }
    }
}
