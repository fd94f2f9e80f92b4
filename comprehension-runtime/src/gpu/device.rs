//! The device trait: what the plan executor needs from a GPU API, and nothing more.
//!
//! OpenCL (`opencl/`) and CUDA (`cuda/`) each implement [`Device`]; everything above it —
//! program assembly, the disk cache, the executor, the generic kernels — is shared. A device
//! builds programs from the kernel dialect's source (or loads a binary it built before),
//! allocates buffers, copies bytes to and from them, and launches kernels by name with
//! buffers and integers as arguments, all in order on one queue.

use std::any::Any;
use std::fmt;

/// What kind of failure a device call had.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DeviceErrorKind {
    /// No library, platform or device: the device cannot be used at all.
    Unavailable,
    /// The kernel compiler rejected a program (the message holds its log).
    Build,
    /// A buffer could not be allocated (device memory exhausted, or a buffer larger than the
    /// device allows).
    Alloc,
    /// Copying to or from the device failed.
    Transfer,
    /// A kernel could not be launched or failed while running.
    Launch,
    /// No kernel bundle holds a program, and `PARCOMP_KERNEL_MISS` forbids compiling it.
    NotInBundle,
}

/// A device call that failed, with the API's own words.
#[derive(Clone, Debug)]
pub struct DeviceError {
    /// What failed.
    pub kind: DeviceErrorKind,
    /// The API, the call and its error, or the compiler's log.
    pub message: String,
}

impl DeviceError {
    pub(crate) fn new(kind: DeviceErrorKind, message: impl Into<String>) -> Self {
        DeviceError { kind, message: message.into() }
    }
}

impl fmt::Display for DeviceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DeviceError {}

/// Facts about a device that decide what runs on it and how its binaries are cached.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    /// `opencl` or `cuda`.
    pub api: &'static str,
    /// The device's name, e.g. `NVIDIA H100` or `pthread-haswell-AMD EPYC`.
    pub name: String,
    /// The vendor.
    pub vendor: String,
    /// The platform (OpenCL) or compute capability (CUDA).
    pub platform: String,
    /// The driver's version: part of the key of cached binaries.
    pub driver: String,
    /// Whether this is a CPU device (PoCL): reports say their numbers describe a CPU.
    pub is_cpu: bool,
    /// Whether the device computes in `f64`.
    pub fp64: bool,
    /// Bytes of device memory.
    pub global_memory: u64,
    /// The largest single buffer, in bytes.
    pub max_buffer: u64,
    /// Parallel compute units.
    pub compute_units: u32,
    /// The memory's peak bandwidth in bytes per second, where the API tells it (CUDA: twice
    /// the memory clock times the bus width).
    pub peak_bandwidth: Option<f64>,
}

impl fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} device `{}` ({}, driver {})", self.api, self.name, self.platform, self.driver)
    }
}

/// Device memory: an opaque handle owned by the device implementation (freed on drop).
pub struct Buffer {
    // Read only by the device implementations, which a build without a device feature lacks.
    #[cfg_attr(not(any(feature = "opencl", feature = "cuda-api")), allow(dead_code))]
    pub(crate) raw: Box<dyn Any + Send + Sync>,
    pub(crate) bytes: usize,
}

impl Buffer {
    /// Its size in bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// An error unless `len` bytes at `offset` lie inside the buffer: what every device checks
    /// before a copy, so that a wrong size is an error and never a copy outside the allocation.
    #[cfg_attr(not(any(feature = "opencl", feature = "cuda-api")), allow(dead_code))]
    pub(crate) fn check_range(&self, offset: usize, len: usize) -> Result<(), DeviceError> {
        match offset.checked_add(len) {
            Some(end) if end <= self.bytes => Ok(()),
            _ => Err(DeviceError::new(
                DeviceErrorKind::Transfer,
                format!(
                    "parcomp internal error: a copy of {len} bytes at {offset} outside a buffer \
                     of {}",
                    self.bytes
                ),
            )),
        }
    }
}

impl fmt::Debug for Buffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Buffer({} bytes)", self.bytes)
    }
}

/// A built program: its kernels can be launched by name.
pub trait Program: Send + Sync {
    /// The binary the device built, to be cached on disk (`None` if the API cannot give one).
    fn binary(&self) -> Option<Vec<u8>>;
    /// For the device implementation to recover its own type.
    fn as_any(&self) -> &dyn Any;
}

/// One argument of a kernel launch.
#[derive(Clone, Copy, Debug)]
pub enum Arg<'a> {
    /// A global buffer (`PC_GLOBAL T*`).
    Buffer(&'a Buffer),
    /// A `pc_u64`.
    U64(u64),
    /// A `pc_u32`.
    U32(u32),
}

/// What a queue's pinned staging did (`staging.rs`): bytes the host copied through it, and waits
/// for a slot still in use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StagingStats {
    /// Bytes the host copied into or out of pinned memory on their way to or from the device.
    pub bytes: u64,
    /// Times the host waited for a slot's previous copy before reusing it.
    pub waits: u64,
}

/// Work queued in order on one device queue (an OpenCL command queue, a CUDA stream): copies,
/// fills and launches. Each device run has a queue of its own, so runs from different threads
/// do not wait for each other beyond what the device itself serialises.
pub trait Queue: Send {
    /// Copies `data` into `buffer` at byte `offset`; returns when `data` may be reused.
    fn write(&self, buffer: &Buffer, offset: usize, data: &[u8]) -> Result<(), DeviceError>;
    /// Queues a copy of `len` bytes at `data` into `buffer` at byte `offset`, and returns at once.
    ///
    /// # Safety
    ///
    /// `data..data + len` must stay valid and unchanged until [`Queue::finish`] returns.
    unsafe fn write_async(
        &self,
        buffer: &Buffer,
        offset: usize,
        data: *const u8,
        len: usize,
    ) -> Result<(), DeviceError>;
    /// Queues a copy of `len` bytes of `buffer` from `offset` to `out`, and returns at once;
    /// the bytes are there when [`Queue::finish`] returns.
    ///
    /// # Safety
    ///
    /// `out..out + len` must stay valid for writes, and be neither read nor written by
    /// anything else, until [`Queue::finish`] returns.
    unsafe fn read_async(
        &self,
        buffer: &Buffer,
        offset: usize,
        out: *mut u8,
        len: usize,
    ) -> Result<(), DeviceError>;
    /// Lets `fill` write `len` bytes of `buffer` at `offset` where they lie, when the host
    /// writes the device's memory directly (a CPU device's memory is the host's): `fill` gets
    /// a pointer valid for writes of `len` bytes during the call, and what it writes is there
    /// for everything queued after. Returns `Ok(false)` without calling `fill` where the device
    /// has no such view (the caller then copies the bytes in from memory of its own).
    fn fill_in_place(
        &self,
        buffer: &Buffer,
        offset: usize,
        len: usize,
        fill: &mut dyn FnMut(*mut u8),
    ) -> Result<bool, DeviceError> {
        let _ = (buffer, offset, len, fill);
        Ok(false)
    }
    /// Queues setting `len` bytes of `buffer` at `offset` to zero (no copy from the host).
    fn zero(&self, buffer: &Buffer, offset: usize, len: usize) -> Result<(), DeviceError>;
    /// Queues a copy of `len` bytes within the device, from `src` at `src_offset` to `dst` at
    /// `dst_offset` (the two ranges must not overlap).
    fn copy(
        &self,
        src: &Buffer,
        src_offset: usize,
        dst: &Buffer,
        dst_offset: usize,
        len: usize,
    ) -> Result<(), DeviceError>;
    /// Launches `kernel` over `items` work-items (rounded up to whole groups of `group`).
    fn launch(
        &self,
        program: &dyn Program,
        kernel: &str,
        items: u64,
        group: u32,
        args: &[Arg<'_>],
    ) -> Result<(), DeviceError>;
    /// Waits until everything queued has finished.
    fn finish(&self) -> Result<(), DeviceError>;
    /// What the queue's pinned staging did since it was taken (or since the last call); nothing
    /// where it stages no copy. A lane's is its own (`lane().take_staging()`).
    fn take_staging(&self) -> StagingStats {
        StagingStats::default()
    }
    /// The queue's copy lane, where the device has one for this run: a second queue of the
    /// device (an OpenCL command queue, a CUDA stream) whose copies run beside this queue's
    /// kernels — a DMA engine reading one chunk's values, or writing the next chunk's inputs,
    /// while the compute units run the current chunk. The two are ordered only by marks
    /// ([`Queue::mark`], [`Queue::wait_mark`]); [`Queue::finish`] finishes the lane too, and
    /// what the lane's staging holds lands then. `None` where the device has no lane.
    fn lane(&self) -> Option<&dyn Queue> {
        None
    }
    /// A mark after everything queued on this queue so far, for another queue of the device to
    /// wait for ([`Queue::wait_mark`]).
    fn mark(&self) -> Result<Mark, DeviceError> {
        Err(DeviceError::new(
            DeviceErrorKind::Launch,
            "parcomp internal error: a mark on a queue without a lane",
        ))
    }
    /// Makes everything queued on this queue from now on wait until `mark` (made by a queue of
    /// the same device) has passed. The host does not wait: the device orders the work.
    fn wait_mark(&self, mark: &Mark) -> Result<(), DeviceError> {
        let _ = mark;
        Err(DeviceError::new(
            DeviceErrorKind::Launch,
            "parcomp internal error: a mark on a queue without a lane",
        ))
    }
}

/// A point in a queue's work — an OpenCL event, a CUDA event — that another queue of the same
/// device can be made to wait for: how a queue and its copy lane are ordered. Released when
/// dropped (a mark still pending is released by the API once it has passed).
pub struct Mark {
    // Read only by the device implementations, which a build without a device feature lacks.
    #[cfg_attr(not(any(feature = "opencl", feature = "cuda-api")), allow(dead_code))]
    pub(crate) raw: Box<dyn Any + Send>,
}

impl fmt::Debug for Mark {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Mark")
    }
}

/// A GPU API, as the executor uses it. The copy and launch methods of the device itself work
/// on one shared queue, in order; `read` waits for everything before it. A device run takes a
/// [`Queue`] of its own ([`Device::queue`]).
pub trait Device: Send + Sync {
    /// What the device is.
    fn info(&self) -> &DeviceInfo;
    /// Compiles `source` with `options`; a rejected program is a [`DeviceErrorKind::Build`]
    /// error carrying the compiler's log.
    fn build(&self, source: &str, options: &str) -> Result<Box<dyn Program>, DeviceError>;
    /// Loads a binary that [`Program::binary`] gave for the same source and options.
    fn load(&self, binary: &[u8], options: &str) -> Result<Box<dyn Program>, DeviceError>;
    /// Allocates `bytes` bytes (at least one, so that no kernel ever gets a null buffer).
    fn alloc(&self, bytes: usize) -> Result<Buffer, DeviceError>;
    /// A queue of its own for one run (taken from a pool; returned when dropped).
    fn queue(&self) -> Result<Box<dyn Queue + '_>, DeviceError>;
    /// A buffer over `len` bytes of the host's memory at `data`, which kernels read where they
    /// lie, on a device whose memory is the host's (a CPU device, an integrated GPU): a
    /// caller's slice read in place, with no copy. `None` where the device reads only memory
    /// of its own (then the bytes are copied in).
    ///
    /// # Safety
    ///
    /// `data..data + len` must stay valid and unchanged while the buffer lives and kernels
    /// queued to read it run; the buffer is only ever read.
    unsafe fn wrap(&self, data: *const u8, len: usize) -> Result<Option<Buffer>, DeviceError> {
        let _ = (data, len);
        Ok(None)
    }
    /// Whether [`Device::wrap`] reads the host's memory where it lies (for any bytes but
    /// none), so that a program may be built to read a capture's records there.
    fn reads_in_place(&self) -> bool {
        false
    }
    /// Bytes of device memory free now, where the API tells it (CUDA); else `None`.
    fn free_memory(&self) -> Option<u64> {
        None
    }
    /// Copies `data` into `buffer` at byte `offset`.
    fn write(&self, buffer: &Buffer, offset: usize, data: &[u8]) -> Result<(), DeviceError>;
    /// Copies bytes of `buffer` from `offset` into `out`, after all work queued before.
    fn read(&self, buffer: &Buffer, offset: usize, out: &mut [u8]) -> Result<(), DeviceError>;
    /// Launches `kernel` over `items` work-items (rounded up to whole groups of `group`).
    fn launch(
        &self,
        program: &dyn Program,
        kernel: &str,
        items: u64,
        group: u32,
        args: &[Arg<'_>],
    ) -> Result<(), DeviceError>;
    /// Waits until everything queued has finished.
    fn finish(&self) -> Result<(), DeviceError>;
}

/// Work-items per work-group of every launch: every kernel is compiled for groups of this size
/// (`reqd_work_group_size`, `__launch_bounds__`), and a device whose groups cannot be this large
/// is refused when it is opened.
pub(crate) const GROUP: u32 = 256;

/// A device opened once per process, as the table of devices (`devices.rs`) hands it out.
#[cfg_attr(not(any(feature = "opencl", feature = "cuda-api")), allow(dead_code))]
pub(crate) fn opened<D: Device + 'static>(
    device: &'static Result<D, DeviceError>,
) -> Result<&'static dyn Device, DeviceError> {
    match device {
        Ok(device) => Ok(device),
        Err(e) => Err(e.clone()),
    }
}
