//! What the device examples share: the device they measure.

use parcomp::Backend;

/// The device the automatic choice would use (its description and backend); when there is
/// none, says so and returns `None`, or exits with status 1 where `PARCOMP_REQUIRE_DEVICE` asks
/// for one.
pub fn device_or_exit(example: &str) -> Option<(String, Backend)> {
    let report = parcomp::backend();
    if let (Some(device), Some(backend)) = (report.device.clone(), report.device_backend) {
        return Some((device, backend));
    }
    eprintln!("{example}: no device, nothing to measure: {report}");
    if std::env::var_os("PARCOMP_REQUIRE_DEVICE").is_some() {
        std::process::exit(1);
    }
    None
}
