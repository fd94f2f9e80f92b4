//! The calibration behind the automatic threshold: it runs on each device present and gives
//! sane figures, the threshold it gives is where its model's device time falls below rayon's,
//! and a threshold set by the program wins over it. No timing is asserted: only that the
//! figures are positive and consistent with each other.

mod support;

use comprehension_runtime::gpu::calibrate::calibration;
use comprehension_runtime::segmented::{Monoid, Sum};
use comprehension_runtime::{backend, device_threshold, set_device_threshold, trace, Backend};

#[test]
fn each_device_calibrates_to_sane_figures() {
    for &device in support::devices() {
        let c = calibration(device).unwrap_or_else(|e| panic!("{device}: {e}"));
        println!(
            "{device}: threshold {} (measured in {:?}, cached: {}): {c}",
            c.threshold, c.took, c.cached
        );
        for (name, figure) in [
            ("launch", c.launch),
            ("wait", c.wait),
            ("copy latency", c.copy_latency),
            ("copy in", c.copy_in),
            ("copy out", c.copy_out),
            ("kernel", c.kernel),
            ("host", c.host),
        ] {
            assert!(figure.is_finite() && figure > 0.0, "{device}: {name} = {figure}: {c:?}");
        }
        assert!(c.host_threads >= 1, "{c:?}");
        assert!(c.bytes >= 1 << 16, "{c:?}");
        assert!(c.device.contains(device.name()), "{c:?}");
        // The threshold is where the model's device time falls below rayon's.
        let t = c.threshold;
        if c.device_per_element() >= c.host_per_element() {
            assert_eq!(t, u64::MAX, "{c:?}");
        } else {
            assert!((1..u64::MAX).contains(&t), "{c:?}");
            assert!(c.device_seconds(t) < c.host_seconds(t), "{c:?}");
            if t > 1 {
                assert!(c.device_seconds(t - 1) >= c.host_seconds(t - 1), "{c:?}");
            }
        }
        // The process measures once: a second call gives the same figures.
        assert_eq!(calibration(device).unwrap(), c);
    }
}

#[test]
fn a_threshold_set_by_the_program_wins_over_the_calibration() {
    if std::env::var_os("PARCOMP_BACKEND").is_some()
        || std::env::var_os("PARCOMP_DEVICE_MIN_WORK").is_some()
    {
        return;
    }
    // The automatic choice's device: the first of the build's device backends present.
    let Some(&device) = support::devices().first() else {
        return;
    };
    let report = backend();
    let c = report.calibration.clone().expect("the automatic choice calibrated the device");
    assert_eq!(report.threshold, Some(c.threshold), "{report}");
    assert_eq!(device_threshold(), c.threshold, "{report}");
    // Without an override, ten values stay on the host, for the calibration's reason.
    let small = || Sum.scan_inclusive(&[1u32; 10]);
    let (sums, runs) = trace::record(small);
    assert_eq!(sums, (1..=10).collect::<Vec<u32>>());
    assert_eq!(runs[0].backend, Backend::Rayon, "{}", runs[0]);
    let reason = runs[0].reason.clone().unwrap_or_default();
    assert!(reason.contains("calibrated"), "{reason}");
    if c.threshold == u64::MAX {
        assert!(reason.contains("the device is slower than rayon on this machine"), "{reason}");
        assert!(report.summary.contains("slower than rayon"), "{report}");
    } else {
        assert!(reason.contains("too little work for the device"), "{reason}");
    }
    // A threshold set by the program wins, both ways.
    set_device_threshold(0);
    assert_eq!(device_threshold(), 0);
    let (sums, runs) = trace::record(small);
    assert_eq!(sums, (1..=10).collect::<Vec<u32>>());
    assert_eq!(runs[0].backend, device, "{}", runs[0]);
    assert_eq!(backend().threshold, Some(0));
    assert!(backend().calibration.is_none(), "a set threshold needs no calibration");
    set_device_threshold(1 << 40);
    let (_, runs) = trace::record(small);
    assert_eq!(runs[0].backend, Backend::Rayon, "{}", runs[0]);
    let reason = runs[0].reason.clone().unwrap_or_default();
    assert!(
        reason.contains(
            "too little work for the device (10 elements < 1099511627776, set_device_threshold)"
        ),
        "{reason}"
    );
    set_device_threshold(c.threshold);
}
