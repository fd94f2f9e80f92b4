//! The hardware layer's table: every device backend of this build, and how its device is
//! opened.
//!
//! A device backend is a folder implementing [`Device`] (`opencl/`, `cuda/`) and one line in
//! [`TABLE`]; everything above this file reaches a device through [`device`] and never names an
//! API. A third backend (HIP, Metal, wgpu) adds its folder, its line here and its
//! [`Backend`] variant.

use super::device::{Device, DeviceError, DeviceErrorKind, DeviceInfo};
use super::failure::DeviceFailure;
use crate::backend::Backend;
use std::sync::atomic::{AtomicBool, Ordering};

/// Opens a backend's device for the process (once: later calls return the same device, or the
/// same error).
type Open = fn() -> Result<&'static dyn Device, DeviceError>;

/// Every device backend of this build, each with the function that opens its device. The order
/// is [`Backend::DEVICES`]'s, the automatic choice's (a test checks it).
const TABLE: &[(Backend, Open)] = &[
    #[cfg(feature = "cuda-api")]
    (Backend::Cuda, super::cuda::shared),
    #[cfg(feature = "opencl")]
    (Backend::OpenCl, super::opencl::shared),
];

/// The process's device of a device backend, opened on first use.
pub fn device(backend: Backend) -> Result<&'static dyn Device, DeviceError> {
    if let Some((_, open)) = TABLE.iter().find(|(b, _)| *b == backend) {
        return open();
    }
    let message = if backend.is_device() {
        format!("this build has no {backend} support: enable the `{backend}` feature of parcomp")
    } else {
        format!("{backend} is not a device backend")
    };
    Err(DeviceError::new(DeviceErrorKind::Unavailable, message))
}

/// The device of `backend`, or the failure to open it (fatal when the device is forced).
pub(super) fn device_of(backend: Backend) -> Result<&'static dyn Device, DeviceFailure> {
    device(backend).map_err(DeviceFailure::from)
}

/// What the device of a device backend is (opening it on first use), or why there is none.
pub fn device_for(backend: Backend) -> Result<&'static DeviceInfo, DeviceError> {
    device(backend).map(Device::info)
}

/// The device backend the automatic choice uses: the first of [`Backend::DEVICES`] whose
/// device is present (CUDA before OpenCL), or why there is none.
pub(crate) fn automatic_device() -> Result<Backend, DeviceError> {
    let mut why = Vec::new();
    for &backend in Backend::DEVICES {
        match device(backend) {
            Ok(_) => return Ok(backend),
            Err(e) => why.push((backend, e.message)),
        }
    }
    let message = match why.as_slice() {
        [] => "this build has no GPU feature (`opencl` or `cuda`)".to_string(),
        [(_, only)] => only.clone(),
        all => all.iter().map(|(b, m)| format!("{b}: {m}")).collect::<Vec<_>>().join("; "),
    };
    Err(DeviceError::new(DeviceErrorKind::Unavailable, message))
}

/// The device backends of this build, in words (`opencl`, `cuda or opencl`).
pub(crate) fn device_names() -> String {
    let names: Vec<&str> = Backend::DEVICES.iter().map(|b| b.name()).collect();
    if names.is_empty() {
        "GPU".into()
    } else {
        names.join(" or ")
    }
}

/// Says once per process, on stderr, why comprehensions run on the CPU although a GPU feature
/// is on: no device was found.
pub(crate) fn say_once_why_not(error: &DeviceError) {
    static SAID: AtomicBool = AtomicBool::new(false);
    if !SAID.swap(true, Ordering::Relaxed) {
        eprintln!("parcomp: comprehensions run on rayon: {error}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_holds_the_device_backends_in_the_automatic_order() {
        let table: Vec<Backend> = TABLE.iter().map(|(b, _)| *b).collect();
        assert_eq!(table, Backend::DEVICES);
    }

    #[test]
    fn a_missing_backend_names_its_feature() {
        for &backend in Backend::ALL {
            if backend.is_device() {
                continue;
            }
            let e = device(backend).err().expect("a host backend has no device");
            assert!(e.message.contains("is not a device backend"), "{}", e.message);
        }
        for backend in [Backend::OpenCl, Backend::Cuda] {
            if !Backend::DEVICES.contains(&backend) {
                let e = device(backend).err().expect("not in this build");
                assert!(e.message.contains(&format!("`{backend}` feature")), "{}", e.message);
            }
        }
    }
}
