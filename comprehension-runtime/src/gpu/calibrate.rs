//! The automatic threshold of a device, from a measurement of the device against the host.
//!
//! The first time the automatic choice considers a device, a short calibration measures it
//! through the [`Device`] trait alone, with small kernels of the generic program
//! (`kernels/generic.cl`), and measures rayon on the host:
//!
//! - *launch*: tiny `pc_fill_u64` launches queued back to back, then one finish: per launch;
//! - *wait*: one tiny launch and the host waiting for it (`finish`), the median of 16;
//! - *copy latency*: an 8-byte write and an 8-byte read back, the median of 16;
//! - *copy bandwidth*, in and out: a 32 MiB buffer written to the device, and one read back,
//!   the best of 3 each;
//! - *kernel bandwidth*: `pc_groups_of` streaming 4 Mi `u64`s (reading 8 bytes and writing 8
//!   per element), three launches back to back less one wait, the best of 2;
//! - *rayon*: the same streaming map on the host (`out[i] = in[i + 1] - 1`), in a pool of as
//!   many threads as the caller's, the best of 3 after a warm-up.
//!
//! **The model.** A comprehension of `n` elements costs the device a fixed
//! `4 launches + 1 wait + 1 copy latency`, and per element 8 bytes copied in, 16 bytes streamed
//! by a kernel and 8 bytes copied out: a streaming map over a slice of `u64`s. It costs rayon 16
//! streamed bytes per element. The threshold is the least `n` at which the device's time is
//! below rayon's; where the device's time per element is not below rayon's (a CPU device
//! sharing the host's cores, as PoCL), no size pays and the threshold is `u64::MAX`: never.
//! Work that computes more per element than it moves, or a range that needs no copy in, gains
//! more on a device than the model says; `PARCOMP_DEVICE_MIN_WORK`, `set_device_threshold` and
//! `@gpu` are for those.
//!
//! The figures are kept on disk next to the kernel binaries (`cache.rs`: a `.cal` entry keyed
//! by the device, its platform and driver, parcomp's version, rayon's thread count, the buffer
//! size and whether this is a debug build), so a second process measures nothing; with
//! `PARCOMP_CACHE_DIR=off`, each process measures once. The threshold is derived from the
//! figures each time they are read, so a cached entry and a fresh one give the same.

use super::cache;
use super::device::{Arg, Device, DeviceError, DeviceErrorKind, DeviceInfo, Program};
use super::program;
use crate::backend::Backend;
use std::collections::HashMap;
use std::fmt;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Launches a device run costs whatever its size, in the model (the sizes, the scan, the
/// level's kernel, a reduction's second pass: "a handful per level").
const LAUNCHES: f64 = 4.0;
/// Bytes copied to the device per element, in the model.
const BYTES_IN: f64 = 8.0;
/// Bytes a kernel (and rayon) streams per element, in the model: 8 read, 8 written.
const BYTES_STREAMED: f64 = 16.0;
/// Bytes copied back from the device per element, in the model.
const BYTES_OUT: f64 = 8.0;
/// The size of the copies and of the streamed buffer.
const BIG: usize = 32 << 20;
/// Tiny launches queued back to back for the launch figure.
const BATCH: u32 = 64;
/// The version of the measurement and of its entry's format (part of the cache key).
const VERSION: u32 = 1;

/// What the calibration of one device measured, and the automatic threshold it gives.
///
/// Times are in seconds, bandwidths in bytes per second.
#[derive(Clone, Debug, PartialEq)]
pub struct Calibration {
    /// The device measured.
    pub device: String,
    /// Seconds per kernel launch, tiny launches queued back to back.
    pub launch: f64,
    /// Seconds for one tiny launch and the host waiting for it to finish.
    pub wait: f64,
    /// Seconds for an 8-byte copy to the device and one back.
    pub copy_latency: f64,
    /// Host → device copy bandwidth.
    pub copy_in: f64,
    /// Device → host copy bandwidth.
    pub copy_out: f64,
    /// A kernel streaming a large buffer (bytes read plus bytes written, per second).
    pub kernel: f64,
    /// Rayon streaming the same map on the host (bytes read plus written, per second).
    pub host: f64,
    /// Rayon's threads in that measurement.
    pub host_threads: usize,
    /// Bytes of each copy and of the streamed buffer.
    pub bytes: u64,
    /// The least work (elements) the automatic choice sends to this device; `u64::MAX`: none.
    pub threshold: u64,
    /// How long the measurement took (the generic program's build, shared with the device's
    /// first run, not included).
    pub took: Duration,
    /// Whether the figures were read from the disk cache (measured by an earlier process).
    pub cached: bool,
}

impl Calibration {
    /// What a device run costs whatever its size: launches, a wait, a copy's latency.
    pub fn fixed_seconds(&self) -> f64 {
        LAUNCHES * self.launch + self.wait + self.copy_latency
    }

    /// What each element costs the device: copied in, streamed by a kernel, copied back.
    pub fn device_per_element(&self) -> f64 {
        BYTES_IN / self.copy_in + BYTES_STREAMED / self.kernel + BYTES_OUT / self.copy_out
    }

    /// What each element costs rayon.
    pub fn host_per_element(&self) -> f64 {
        BYTES_STREAMED / self.host
    }

    /// The model's time for `elements` on the device.
    pub fn device_seconds(&self, elements: u64) -> f64 {
        self.fixed_seconds() + elements as f64 * self.device_per_element()
    }

    /// The model's time for `elements` on rayon.
    pub fn host_seconds(&self, elements: u64) -> f64 {
        elements as f64 * self.host_per_element()
    }

    /// The least `n` with `device_seconds(n) < host_seconds(n)`, or `u64::MAX` when the device
    /// is not faster per element.
    fn derive_threshold(&self) -> u64 {
        let (device, host) = (self.device_per_element(), self.host_per_element());
        if device.is_nan() || host.is_nan() || device >= host {
            return u64::MAX;
        }
        let n = (self.fixed_seconds() / (host - device)).floor() + 1.0;
        if n.is_finite() && n < 1e18 {
            (n as u64).max(1)
        } else {
            u64::MAX
        }
    }

    /// The figures as stored on disk, one `name value` a line.
    fn to_entry(&self) -> String {
        format!(
            "launch {:e}\nwait {:e}\ncopy_latency {:e}\ncopy_in {:e}\ncopy_out {:e}\nkernel {:e}\n\
             host {:e}\nhost_threads {}\nbytes {}\ntook {:e}\n",
            self.launch,
            self.wait,
            self.copy_latency,
            self.copy_in,
            self.copy_out,
            self.kernel,
            self.host,
            self.host_threads,
            self.bytes,
            self.took.as_secs_f64(),
        )
    }

    /// The figures of an entry [`Calibration::to_entry`] wrote, if every one is there and
    /// positive.
    fn from_entry(bytes: &[u8], device: &DeviceInfo) -> Option<Calibration> {
        let text = std::str::from_utf8(bytes).ok()?;
        let fields: HashMap<&str, &str> = text.lines().filter_map(|l| l.split_once(' ')).collect();
        let number = |name: &str| -> Option<f64> {
            fields.get(name)?.parse::<f64>().ok().filter(|v| v.is_finite() && *v > 0.0)
        };
        let mut found = Calibration {
            device: device.to_string(),
            launch: number("launch")?,
            wait: number("wait")?,
            copy_latency: number("copy_latency")?,
            copy_in: number("copy_in")?,
            copy_out: number("copy_out")?,
            kernel: number("kernel")?,
            host: number("host")?,
            host_threads: fields.get("host_threads")?.parse().ok()?,
            bytes: fields.get("bytes")?.parse().ok()?,
            threshold: 0,
            took: Duration::from_secs_f64(number("took")?),
            cached: true,
        };
        found.threshold = found.derive_threshold();
        Some(found)
    }
}

impl fmt::Display for Calibration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the device {} per element (copies {} in and {} out, kernel {}) and {} per run \
             (launch {}, wait {}, copy latency {}), rayon {} per element ({}, {} threads)",
            seconds(self.device_per_element()),
            rate(self.copy_in),
            rate(self.copy_out),
            rate(self.kernel),
            seconds(self.fixed_seconds()),
            seconds(self.launch),
            seconds(self.wait),
            seconds(self.copy_latency),
            seconds(self.host_per_element()),
            rate(self.host),
            self.host_threads,
        )
    }
}

/// `s` seconds in words (`25.1 µs`).
fn seconds(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 1e-3 {
        format!("{:.2} ms", s * 1e3)
    } else if s >= 1e-6 {
        format!("{:.1} µs", s * 1e6)
    } else {
        format!("{:.2} ns", s * 1e9)
    }
}

/// A bandwidth in words (`5.20 GB/s`).
fn rate(bytes_per_second: f64) -> String {
    format!("{:.2} GB/s", bytes_per_second / 1e9)
}

/// The calibration of `backend`'s device: read from the disk cache, or measured (once per
/// process) on first use. An error when there is no such device or the measurement failed.
pub fn calibration(backend: Backend) -> Result<Calibration, DeviceError> {
    match backend {
        Backend::OpenCl | Backend::Cuda => calibrated(backend).cloned().map_err(Clone::clone),
        other => Err(DeviceError::new(
            DeviceErrorKind::Unavailable,
            format!("{other} is not a device backend"),
        )),
    }
}

/// The process's calibration of `backend`'s device, a device backend (see [`calibration`]).
pub(crate) fn calibrated(backend: Backend) -> Result<&'static Calibration, &'static DeviceError> {
    type Cell = OnceLock<Result<Calibration, DeviceError>>;
    static CELLS: [Cell; 2] = [OnceLock::new(), OnceLock::new()];
    let cell = if backend == Backend::Cuda { &CELLS[1] } else { &CELLS[0] };
    cell.get_or_init(|| calibrate(backend)).as_ref()
}

/// Reads `backend`'s calibration from the disk cache, or measures it and stores it there.
fn calibrate(backend: Backend) -> Result<Calibration, DeviceError> {
    let device = super::device(backend)?;
    let info = device.info();
    let threads = rayon::current_num_threads();
    let bytes = size(info);
    let key = cache::Key::new(
        info,
        &format!(
            "parcomp calibration {VERSION}\nrayon threads {threads}\nbytes {bytes}\n\
             debug build {}\n",
            cfg!(debug_assertions)
        ),
        "",
    );
    if let Some(found) = cache::load_as(&key, cache::CALIBRATION)
        .and_then(|entry| Calibration::from_entry(&entry, info))
    {
        return Ok(found);
    }
    // The generic program is the device's own (its first run needs it): its build is not the
    // calibration's time.
    let (generic, _) = program::generic(device)?;
    let start = Instant::now();
    let mut measured = measure(device, &*generic, bytes)?;
    measured.host = host_bandwidth(bytes / 8, threads);
    measured.host_threads = threads;
    measured.device = info.to_string();
    measured.took = start.elapsed();
    measured.threshold = measured.derive_threshold();
    cache::store_as(&key, cache::CALIBRATION, measured.to_entry().as_bytes());
    Ok(measured)
}

/// The bytes of each copy: [`BIG`], less where the device cannot hold two such buffers.
fn size(info: &DeviceInfo) -> usize {
    let mut bytes = BIG as u64;
    if info.max_buffer > 0 {
        bytes = bytes.min(info.max_buffer.saturating_sub(8));
    }
    if info.global_memory > 0 {
        bytes = bytes.min(info.global_memory / 4);
    }
    (bytes.max(1 << 16) as usize) & !7
}

/// Seconds since `start` (never zero).
fn since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64().max(1e-9)
}

/// The median of `runs` results of `f`.
fn median(
    runs: usize,
    mut f: impl FnMut() -> Result<f64, DeviceError>,
) -> Result<f64, DeviceError> {
    let mut all = (0..runs).map(|_| f()).collect::<Result<Vec<f64>, _>>()?;
    all.sort_by(f64::total_cmp);
    Ok(all[all.len() / 2])
}

/// The least of `runs` results of `f`.
fn best(runs: usize, mut f: impl FnMut() -> Result<f64, DeviceError>) -> Result<f64, DeviceError> {
    (0..runs).try_fold(f64::INFINITY, |least, _| Ok(least.min(f()?)))
}

/// The device's figures (the host's are filled in by the caller).
fn measure(
    device: &dyn Device,
    generic: &dyn Program,
    bytes: usize,
) -> Result<Calibration, DeviceError> {
    let n = (bytes / 8) as u64;
    // `pc_groups_of` reads `input[t + 1]` for every `t < n`: one word more.
    let input = device.alloc(bytes + 8)?;
    let output = device.alloc(bytes)?;
    let tiny = device.alloc(8)?;
    let source = vec![0x5au8; bytes];
    let mut sink = vec![0u8; bytes];
    let fill = || {
        let args = [Arg::Buffer(&tiny), Arg::U64(1), Arg::U64(7)];
        device.launch(generic, "pc_fill_u64", 1, program::GROUP, &args)
    };
    let stream = || {
        let args = [Arg::Buffer(&input), Arg::U64(n), Arg::Buffer(&output)];
        device.launch(generic, "pc_groups_of", n, program::GROUP, &args)
    };
    // Every call once first: a first launch may finish compiling a kernel, a first copy may
    // map pages.
    device.write(&input, 0, &source)?;
    device.write(&input, bytes, &[0; 8])?;
    fill()?;
    stream()?;
    device.finish()?;
    device.read(&output, 0, &mut sink)?;

    let start = Instant::now();
    for _ in 0..BATCH {
        fill()?;
    }
    device.finish()?;
    let launch = since(start) / f64::from(BATCH);
    let wait = median(16, || {
        let start = Instant::now();
        fill()?;
        device.finish()?;
        Ok(since(start))
    })?;
    let mut word = [0u8; 8];
    let copy_latency = median(16, || {
        let start = Instant::now();
        device.write(&tiny, 0, &word)?;
        device.read(&tiny, 0, &mut word)?;
        Ok(since(start))
    })?;
    let copy_in = bytes as f64
        / best(3, || {
            let start = Instant::now();
            device.write(&input, 0, &source)?;
            Ok(since(start))
        })?;
    let copy_out = bytes as f64
        / best(3, || {
            let start = Instant::now();
            device.read(&output, 0, &mut sink)?;
            Ok(since(start))
        })?;
    let per_kernel = best(2, || {
        let start = Instant::now();
        for _ in 0..3 {
            stream()?;
        }
        device.finish()?;
        let total = since(start);
        Ok(((total - wait) / 3.0).max(total / 6.0))
    })?;
    let kernel = BYTES_STREAMED * n as f64 / per_kernel;
    std::hint::black_box(&sink);
    Ok(Calibration {
        device: String::new(),
        launch,
        wait,
        copy_latency,
        copy_in,
        copy_out,
        kernel,
        host: 0.0,
        host_threads: 0,
        bytes: bytes as u64,
        threshold: 0,
        took: Duration::ZERO,
        cached: false,
    })
}

/// Rayon's bandwidth on the streaming map `out[i] = in[i + 1] - 1` over `n` `u64`s, in a pool
/// of `threads` threads.
///
/// The pool is a new one, run from a thread of its own that waits for it: the caller may be a
/// rayon worker, which would otherwise run other jobs of its pool while waiting (one of them
/// could be a comprehension asking for this very calibration).
fn host_bandwidth(n: usize, threads: usize) -> f64 {
    let run = move || {
        use rayon::prelude::*;
        let input = vec![0x5a5a_5a5a_5a5a_5a5au64; n + 1];
        let mut output = vec![0u64; n];
        let mut least = f64::INFINITY;
        // The first round is a warm-up (it maps the output's pages).
        for round in 0..4 {
            let start = Instant::now();
            output.par_iter_mut().zip(input[1..].par_iter()).for_each(|(out, &x)| {
                *out = x.wrapping_sub(1);
            });
            if round > 0 {
                least = least.min(since(start));
            }
        }
        std::hint::black_box(&output);
        BYTES_STREAMED * n as f64 / least
    };
    std::thread::scope(|scope| {
        scope
            .spawn(|| match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
                Ok(pool) => pool.install(run),
                Err(_) => run(),
            })
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(copies: f64, kernel: f64, host: f64) -> Calibration {
        let mut c = Calibration {
            device: "test".into(),
            launch: 5e-6,
            wait: 20e-6,
            copy_latency: 15e-6,
            copy_in: copies,
            copy_out: copies,
            kernel,
            host,
            host_threads: 16,
            bytes: BIG as u64,
            threshold: 0,
            took: Duration::from_millis(40),
            cached: false,
        };
        c.threshold = c.derive_threshold();
        c
    }

    #[test]
    fn the_threshold_is_where_the_device_starts_to_win() {
        // A GPU: 25 GB/s copies, 2 TB/s kernels, against 20 GB/s on the host.
        let gpu = figures(25e9, 2e12, 20e9);
        let t = gpu.threshold;
        assert!(t > 1 && t < u64::MAX, "{t}");
        assert!(gpu.device_seconds(t) < gpu.host_seconds(t));
        assert!(gpu.device_seconds(t - 1) >= gpu.host_seconds(t - 1));
        // A device slower per element than the host never pays.
        let cpu = figures(8e9, 3e9, 10e9);
        assert_eq!(cpu.threshold, u64::MAX);
    }

    #[test]
    fn an_entry_reads_back_the_same_figures() {
        let info = DeviceInfo {
            api: "opencl",
            name: "test".into(),
            vendor: "v".into(),
            platform: "p".into(),
            driver: "1".into(),
            is_cpu: false,
            fp64: true,
            global_memory: 0,
            max_buffer: 0,
            compute_units: 1,
            peak_bandwidth: None,
        };
        let mut c = figures(25e9, 2e12, 20e9);
        c.device = info.to_string();
        let back = Calibration::from_entry(c.to_entry().as_bytes(), &info).unwrap();
        assert_eq!(back, Calibration { cached: true, ..c.clone() });
        // Missing or nonsensical figures are no entry.
        assert!(Calibration::from_entry(b"launch 1e-6\n", &info).is_none());
        let negative = c.to_entry().replace("wait ", "wait -");
        assert!(Calibration::from_entry(negative.as_bytes(), &info).is_none());
    }
}
