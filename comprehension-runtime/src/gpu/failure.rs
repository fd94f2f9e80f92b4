//! Why a device did not run a comprehension: something it cannot express, or a failure of the
//! device.

use super::device::{DeviceError, DeviceErrorKind};
use crate::backend::Backend;
use crate::site::Site;
use std::sync::atomic::{AtomicBool, Ordering};

/// Why a device did not run a comprehension it was given.
#[derive(Clone, Debug)]
pub(crate) struct DeviceFailure {
    /// What went wrong, for the trace and for errors.
    pub(crate) message: String,
    /// A device error (a build, an allocation, a launch failed), as opposed to something the
    /// device cannot express (a value it cannot represent): an error when the device is forced.
    pub(crate) fatal: bool,
}

impl DeviceFailure {
    /// Something the device cannot express (a value it cannot represent, a shape it does not
    /// run): the comprehension runs on the host, even when a device is forced.
    pub(crate) fn cannot(message: impl Into<String>) -> Self {
        DeviceFailure { message: message.into(), fatal: false }
    }

    /// The device failed (a build, an allocation, a launch, a size it cannot hold): an error
    /// when the device is forced.
    pub(crate) fn fatal(message: impl Into<String>) -> Self {
        DeviceFailure { message: message.into(), fatal: true }
    }
}

/// A device error is a failure of the device, except a program missing from the kernel bundle
/// under `PARCOMP_KERNEL_MISS=host`: the comprehension runs on the host, saying why.
impl From<DeviceError> for DeviceFailure {
    fn from(e: DeviceError) -> Self {
        let host = e.kind == DeviceErrorKind::NotInBundle
            && super::bundle::miss_policy() == super::bundle::MissPolicy::Host;
        if host {
            DeviceFailure::cannot(e.to_string())
        } else {
            DeviceFailure::fatal(e.to_string())
        }
    }
}

/// Says once per process, on stderr, that a device failed to run a comprehension and the CPU
/// ran it instead.
pub(crate) fn warn_once(site: &'static Site, backend: Backend, message: &str) {
    static SAID: AtomicBool = AtomicBool::new(false);
    if !SAID.swap(true, Ordering::Relaxed) {
        eprintln!(
            "parcomp: {site} could not run on {backend} and ran on rayon instead: {message} \
             (further such failures are only traced: PARCOMP_TRACE=1)"
        );
    }
}
