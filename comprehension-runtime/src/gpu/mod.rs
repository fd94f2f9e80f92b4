//! The GPU backend: comprehensions flattened by expansion and run on a device.
//!
//! See `README.md` in this folder for how the pieces fit together.

pub mod device;
#[cfg(feature = "opencl")]
pub(crate) mod opencl;

#[allow(unused_imports)]
use device::{Device, DeviceError, DeviceErrorKind};
use std::sync::OnceLock;

/// The dialect prelude every kernel starts with.
pub const PRELUDE: &str = include_str!("kernels/prelude.h");
/// Rust's arithmetic, comparisons, casts and numeric methods for every primitive type.
pub const SCALAR: &str = include_str!("kernels/scalar.h");

/// The process's OpenCL device, opened on first use.
pub fn opencl_device() -> Result<&'static dyn Device, DeviceError> {
    #[cfg(feature = "opencl")]
    {
        static DEVICE: OnceLock<Result<opencl::OpenClDevice, DeviceError>> = OnceLock::new();
        match DEVICE.get_or_init(opencl::OpenClDevice::open) {
            Ok(device) => Ok(device),
            Err(e) => Err(e.clone()),
        }
    }
    #[cfg(not(feature = "opencl"))]
    {
        let _ = OnceLock::<()>::new;
        Err(DeviceError::new(
            DeviceErrorKind::Unavailable,
            "this build has no OpenCL support: enable the `opencl` feature of parcomp",
        ))
    }
}
