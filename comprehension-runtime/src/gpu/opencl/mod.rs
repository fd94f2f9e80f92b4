//! The device trait on OpenCL (opencl3, which loads `libOpenCL` at run time, so a build with
//! the `opencl` feature links and runs on machines without OpenCL; the device is then absent).
//!
//! Devices are found on every platform with `CL_DEVICE_TYPE_ALL` (PoCL's CPU device counts);
//! a GPU is preferred over an accelerator over a CPU, and `PARCOMP_OPENCL_DEVICE` picks a
//! device whose name or platform contains the given text.

use super::device::{
    Arg, Buffer, Device, DeviceError, DeviceErrorKind, DeviceInfo, Mark, Program, Queue,
    StagingStats, GROUP,
};
use super::staging::{
    lane_chosen, Place, PooledSlots, QueueStaging, Ring, Slots, Staging, Way, MAILBOX,
};
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::device::{
    Device as ClDevice, CL_DEVICE_TYPE_ACCELERATOR, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU,
    CL_DEVICE_TYPE_GPU,
};
use opencl3::kernel::Kernel;
use opencl3::memory::{
    Buffer as ClBuffer, ClMem, CL_MAP_READ, CL_MAP_WRITE, CL_MAP_WRITE_INVALIDATE_REGION,
    CL_MEM_ALLOC_HOST_PTR, CL_MEM_READ_ONLY, CL_MEM_READ_WRITE, CL_MEM_USE_HOST_PTR,
};
use opencl3::platform::get_platforms;
use opencl3::program::Program as ClProgram;
use opencl3::types::{
    cl_command_queue, cl_device_id, cl_event, cl_mem, CL_BLOCKING, CL_NON_BLOCKING,
};
use std::any::Any;
use std::collections::HashMap;
use std::ffi::c_void;
use std::ptr;
use std::sync::{Mutex, OnceLock};

/// An OpenCL device with its context, one in-order queue for the device's own calls, and a
/// pool of in-order queues that device runs take one of each (with the pinned staging each
/// made, where the device's runs stage their copies).
pub(crate) struct OpenClDevice {
    info: DeviceInfo,
    id: cl_device_id,
    context: Context,
    queue: CommandQueue,
    queues: Mutex<Vec<Pooled>>,
    /// How runs copy: through pinned memory on a device whose memory is not the host's.
    staging: Option<Staging>,
    /// Whether a run's queue has a copy lane, a second queue for the copies beside its kernels
    /// (`staging::lane_chosen`): on a device whose memory is not the host's.
    lane: bool,
    /// Whether kernels read the host's memory in place ([`Device::wrap`]): on a device whose
    /// memory is the host's, unless its copies are staged (`PARCOMP_DEVICE_STAGING`, which
    /// gives it a GPU's copy path).
    in_place: bool,
    /// Whether the device's compiler emits PTX for NVIDIA's assembler (NVIDIA's OpenCL): its
    /// programs are built with `-D PC_NVIDIA_PTX` (prelude.h says why).
    nvidia_ptx: bool,
}

/// A queue of the pool, with its staging once a run made it, and its lane's. (The staging is
/// dropped first: it unmaps its memory on the queue.)
struct Pooled {
    staged: Option<PooledSlots<ClSlots>>,
    queue: CommandQueue,
    lane: Option<Box<Pooled>>,
}

// SAFETY: OpenCL objects (context, queue, device id) may be used from any thread: the OpenCL
// 1.1+ specification makes every API call thread-safe except `clSetKernelArg` on one kernel
// object, which this module only calls with that kernel's mutex held (see `ClProgramOf`).
unsafe impl Send for OpenClDevice {}
// SAFETY: as above.
unsafe impl Sync for OpenClDevice {}

fn unavailable(message: impl Into<String>) -> DeviceError {
    DeviceError::new(DeviceErrorKind::Unavailable, message)
}

fn api(kind: DeviceErrorKind, call: &str, error: impl std::fmt::Display) -> DeviceError {
    DeviceError::new(kind, format!("OpenCL {call} failed: {error}"))
}

/// The process's OpenCL device, opened on first use (its line in `../devices.rs`).
pub(crate) fn shared() -> Result<&'static dyn Device, DeviceError> {
    static DEVICE: OnceLock<Result<OpenClDevice, DeviceError>> = OnceLock::new();
    super::device::opened(DEVICE.get_or_init(OpenClDevice::open))
}

impl OpenClDevice {
    /// Opens the preferred OpenCL device, or says why there is none: no OpenCL library, no
    /// platform, no device, or none matching `PARCOMP_OPENCL_DEVICE`.
    pub(crate) fn open() -> Result<OpenClDevice, DeviceError> {
        if !cl3::is_opencl_runtime_available() {
            return Err(unavailable(
                "no OpenCL library: libOpenCL could not be loaded (install an OpenCL driver, or \
                 PoCL: `apt-get install pocl-opencl-icd`)",
            ));
        }
        let platforms = get_platforms().map_err(|e| {
            unavailable(format!(
                "no OpenCL platform: clGetPlatformIDs failed ({e}); is an ICD installed under \
                 /etc/OpenCL/vendors?"
            ))
        })?;
        if platforms.is_empty() {
            return Err(unavailable(
                "no OpenCL platform: libOpenCL loaded, but no driver is registered under \
                 /etc/OpenCL/vendors",
            ));
        }
        let wanted = std::env::var("PARCOMP_OPENCL_DEVICE").ok().filter(|w| !w.trim().is_empty());
        let mut candidates: Vec<(u8, cl_device_id, String)> = Vec::new();
        let mut seen = Vec::new();
        for platform in &platforms {
            let platform_name = platform.name().unwrap_or_else(|_| "unknown platform".into());
            for id in platform.get_devices(CL_DEVICE_TYPE_ALL).unwrap_or_default() {
                let device = ClDevice::new(id);
                let name = device.name().unwrap_or_default();
                seen.push(format!("`{name}` on `{platform_name}`"));
                if let Some(wanted) = &wanted {
                    let wanted = wanted.to_lowercase();
                    if !name.to_lowercase().contains(&wanted)
                        && !platform_name.to_lowercase().contains(&wanted)
                    {
                        continue;
                    }
                }
                if !device.available().unwrap_or(false)
                    || !device.compiler_available().unwrap_or(false)
                {
                    continue;
                }
                let kind = device.dev_type().unwrap_or(CL_DEVICE_TYPE_CPU);
                let rank = if kind & CL_DEVICE_TYPE_GPU != 0 {
                    0
                } else if kind & CL_DEVICE_TYPE_ACCELERATOR != 0 {
                    1
                } else {
                    2
                };
                candidates.push((rank, id, platform_name.clone()));
            }
        }
        candidates.sort_by_key(|c| c.0);
        let Some((_, id, platform_name)) = candidates.into_iter().next() else {
            return Err(unavailable(match &wanted {
                Some(w) => format!(
                    "no available OpenCL device matches PARCOMP_OPENCL_DEVICE={w:?} (found: {})",
                    if seen.is_empty() { "none".to_string() } else { seen.join(", ") }
                ),
                None => format!(
                    "no available OpenCL device with a compiler on {} platform(s) (found: {})",
                    platforms.len(),
                    if seen.is_empty() { "none".to_string() } else { seen.join(", ") }
                ),
            }));
        };
        let device = ClDevice::new(id);
        // Every kernel is compiled for, and launched in, work-groups of GROUP work-items: a
        // device that runs smaller ones cannot run them (said here, not at the first launch).
        let most = device.max_work_group_size().unwrap_or(0);
        if most < GROUP as usize {
            return Err(unavailable(format!(
                "the OpenCL device `{}` runs work-groups of at most {most} work-items; parcomp's \
                 kernels need {GROUP}",
                device.name().unwrap_or_default().trim()
            )));
        }
        let context = Context::from_device(&device)
            .map_err(|e| api(DeviceErrorKind::Unavailable, "clCreateContext", e))?;
        #[allow(deprecated)]
        let queue = CommandQueue::create_default(&context, 0)
            .map_err(|e| api(DeviceErrorKind::Unavailable, "clCreateCommandQueue", e))?;
        let extensions = device.extensions().unwrap_or_default();
        let info = DeviceInfo {
            api: "opencl",
            name: device.name().unwrap_or_default().trim().to_string(),
            vendor: device.vendor().unwrap_or_default().trim().to_string(),
            platform: format!(
                "{}, {}",
                platform_name.trim(),
                device.version().unwrap_or_default().trim()
            ),
            driver: device.driver_version().unwrap_or_default().trim().to_string(),
            is_cpu: device.dev_type().unwrap_or(0) & CL_DEVICE_TYPE_CPU != 0,
            fp64: extensions.contains("cl_khr_fp64")
                || device.double_fp_config().map(|c| c != 0).unwrap_or(false),
            global_memory: device.global_mem_size().unwrap_or(0),
            max_buffer: device.max_mem_alloc_size().unwrap_or(0),
            compute_units: device.max_compute_units().unwrap_or(1),
            // OpenCL does not tell the memory's bandwidth.
            peak_bandwidth: None,
        };
        // A CPU device's memory (PoCL's), or an integrated GPU's, is the host's: a copy is one
        // memcpy there, and staging it would add a second.
        let unified = info.is_cpu || device.host_unified_memory().unwrap_or(false);
        let staging = Staging::chosen(!unified);
        let lane = lane_chosen(!unified);
        let in_place = unified && staging.is_none();
        let queues = Mutex::default();
        let nvidia_ptx = platform_name.contains("NVIDIA") && !info.is_cpu;
        Ok(OpenClDevice { info, id, context, queue, queues, staging, lane, in_place, nvidia_ptx })
    }
}

/// A built OpenCL program and its kernel objects, created on first launch.
struct ClProgramOf {
    program: ClProgram,
    /// `clSetKernelArg` changes the kernel object, so a kernel is set up and enqueued with its
    /// mutex held.
    kernels: Mutex<HashMap<String, ClKernel>>,
    device: cl_device_id,
}

// SAFETY: the program object may be used from any thread (OpenCL 1.1+); kernel objects are
// only touched with the `kernels` mutex held.
unsafe impl Send for ClProgramOf {}
// SAFETY: as above.
unsafe impl Sync for ClProgramOf {}

impl Program for ClProgramOf {
    fn binary(&self) -> Option<Vec<u8>> {
        let _ = self.device;
        self.program.get_binaries().ok()?.into_iter().next().filter(|b| !b.is_empty())
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Build options: the kernels follow Rust's floating-point semantics (no contraction, IEEE
/// division and square root in single precision); the compiler keeps the kernels' argument
/// information, so every launch is checked against the kernel's parameters.
const BUILD_OPTIONS: &str = "-cl-fp32-correctly-rounded-divide-sqrt -cl-kernel-arg-info";

/// The options of every build. The generated code compiles without a warning, and the compiler
/// is told to print none (some OpenCL compilers write their diagnostics to the program's
/// terminal even when the build succeeds): a build's log reaches the user only when it fails, in
/// the error. With `PARCOMP_KERNEL_WERROR=1` (CI's test runs) every warning is an error instead,
/// so that a kernel that draws one fails the suite. On NVIDIA's OpenCL, `-D PC_NVIDIA_PTX`.
fn options(nvidia_ptx: bool, extra: &str) -> String {
    static WERROR: OnceLock<bool> = OnceLock::new();
    let werror =
        *WERROR.get_or_init(|| std::env::var("PARCOMP_KERNEL_WERROR").is_ok_and(|v| v == "1"));
    let warnings = if werror { "-Werror" } else { "-w" };
    let mut options = format!("{BUILD_OPTIONS} {warnings}");
    if nvidia_ptx {
        options.push_str(" -D PC_NVIDIA_PTX");
    }
    if !extra.is_empty() {
        options.push(' ');
        options.push_str(extra);
    }
    options
}

impl Device for OpenClDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn build(&self, source: &str, extra: &str) -> Result<Box<dyn Program>, DeviceError> {
        let mut program = ClProgram::create_from_source(&self.context, source)
            .map_err(|e| api(DeviceErrorKind::Build, "clCreateProgramWithSource", e))?;
        if let Err(e) = program.build(&[self.id], &options(self.nvidia_ptx, extra)) {
            let log = program.get_build_log(self.id).unwrap_or_default();
            return Err(DeviceError::new(
                DeviceErrorKind::Build,
                format!("the OpenCL compiler rejected the program ({e}):\n{}", log.trim()),
            ));
        }
        Ok(Box::new(ClProgramOf { program, kernels: Mutex::default(), device: self.id }))
    }

    fn load(&self, binary: &[u8], extra: &str) -> Result<Box<dyn Program>, DeviceError> {
        // SAFETY: `self.id` is the device of `self.context`.
        let mut program =
            unsafe { ClProgram::create_from_binary(&self.context, &[self.id], &[binary]) }
                .map_err(|e| api(DeviceErrorKind::Build, "clCreateProgramWithBinary", e))?;
        program
            .build(&[self.id], &options(self.nvidia_ptx, extra))
            .map_err(|e| api(DeviceErrorKind::Build, "clBuildProgram (binary)", e))?;
        Ok(Box::new(ClProgramOf { program, kernels: Mutex::default(), device: self.id }))
    }

    fn alloc(&self, bytes: usize) -> Result<Buffer, DeviceError> {
        let bytes = bytes.max(1);
        if bytes as u64 > self.info.max_buffer && self.info.max_buffer > 0 {
            return Err(DeviceError::new(
                DeviceErrorKind::Alloc,
                format!(
                    "a buffer of {bytes} bytes is larger than the device allows ({} bytes)",
                    self.info.max_buffer
                ),
            ));
        }
        // SAFETY: no host pointer is passed, so OpenCL allocates the memory itself.
        let buffer = unsafe {
            ClBuffer::<u8>::create(
                &self.context,
                CL_MEM_READ_WRITE,
                bytes,
                ptr::null_mut::<c_void>(),
            )
        }
        .map_err(|e| api(DeviceErrorKind::Alloc, &format!("clCreateBuffer of {bytes} bytes"), e))?;
        Ok(Buffer { raw: Box::new(ClMemOf(buffer)), bytes })
    }

    fn queue(&self) -> Result<Box<dyn Queue + '_>, DeviceError> {
        let pooled = self.queues.lock().unwrap_or_else(|p| p.into_inner()).pop();
        Ok(Box::new(self.run_queue(pooled, self.lane)?))
    }

    unsafe fn wrap(&self, data: *const u8, len: usize) -> Result<Option<Buffer>, DeviceError> {
        if !self.in_place || len == 0 {
            return Ok(None);
        }
        // SAFETY: `CL_MEM_USE_HOST_PTR` over the caller's `len` bytes, which it keeps valid and
        // unchanged while the buffer lives and kernels read it (`wrap`'s contract); the buffer
        // is read-only, so neither the device nor OpenCL writes them.
        let buffer = unsafe {
            ClBuffer::<u8>::create(
                &self.context,
                CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR,
                len,
                data.cast_mut().cast::<c_void>(),
            )
        }
        .map_err(|e| api(DeviceErrorKind::Alloc, "clCreateBuffer (CL_MEM_USE_HOST_PTR)", e))?;
        Ok(Some(Buffer { raw: Box::new(ClMemOf(buffer)), bytes: len }))
    }

    fn reads_in_place(&self) -> bool {
        self.in_place
    }

    fn write(&self, buffer: &Buffer, offset: usize, data: &[u8]) -> Result<(), DeviceError> {
        write(&self.queue, buffer, offset, data)
    }

    fn read(&self, buffer: &Buffer, offset: usize, out: &mut [u8]) -> Result<(), DeviceError> {
        read(&self.queue, buffer, offset, out)
    }

    fn launch(
        &self,
        program: &dyn Program,
        kernel: &str,
        items: u64,
        group: u32,
        args: &[Arg<'_>],
    ) -> Result<(), DeviceError> {
        launch(&self.queue, program, kernel, items, group, args)
    }

    fn finish(&self) -> Result<(), DeviceError> {
        finish(&self.queue)
    }
}

impl OpenClDevice {
    /// A run's queue: the pool's `pooled` (or a new one), with a lane of its own when `lane`.
    fn run_queue(&self, pooled: Option<Pooled>, lane: bool) -> Result<ClQueue<'_>, DeviceError> {
        let (queue, staged, pooled_lane) = match pooled {
            Some(Pooled { queue, staged, lane }) => (queue, staged, lane),
            #[allow(deprecated)]
            None => (
                CommandQueue::create_default(&self.context, 0)
                    .map_err(|e| api(DeviceErrorKind::Launch, "clCreateCommandQueue", e))?,
                None,
                None,
            ),
        };
        let lane = match lane {
            true => Some(Box::new(self.run_queue(pooled_lane.map(|l| *l), false)?)),
            false => None,
        };
        let staging = QueueStaging::new(self.staging, staged);
        Ok(ClQueue { device: self, queue: Some(queue), staging: Some(staging), lane })
    }
}

/// A queue of a device run: in order, returned to the device's pool when dropped; with its copy
/// lane where the device has one (another in-order queue, ordered with this one by events).
struct ClQueue<'d> {
    device: &'d OpenClDevice,
    queue: Option<CommandQueue>,
    /// The queue's pinned staging (taken back with the queue when dropped).
    staging: Option<QueueStaging<ClSlots>>,
    lane: Option<Box<ClQueue<'d>>>,
}

impl ClQueue<'_> {
    /// The queue, its staging and its lane's, for the pool, once what they hold has ended.
    fn take_pooled(&mut self) -> Option<Pooled> {
        let queue = self.queue.take()?;
        // Whatever a failed run left queued must end before the queue serves another run (its
        // buffers go back to the arena); an error here was already reported.
        let _ = queue.finish();
        let lane = self.lane.take().and_then(|mut lane| lane.take_pooled()).map(Box::new);
        let staged = self.staging.take().and_then(QueueStaging::into_pooled);
        Some(Pooled { staged, queue, lane })
    }

    fn queue(&self) -> &CommandQueue {
        self.queue.as_ref().expect("a queue is only taken back when dropped")
    }

    fn staging(&self) -> &QueueStaging<ClSlots> {
        self.staging.as_ref().expect("a queue's staging is only taken back when dropped")
    }

    /// Runs `copy` through the queue's pinned slots (made on first use) when a copy of `len`
    /// bytes the way `way` says goes through them; `None` when it goes straight.
    fn staged<R>(
        &self,
        way: Way,
        len: usize,
        copy: impl FnOnce(&mut ClSlots, &mut Ring) -> R,
    ) -> Option<R> {
        self.staging().copy(way, len, |piece| ClSlots::new(self.device, self.queue(), piece), copy)
    }
}

impl Drop for ClQueue<'_> {
    fn drop(&mut self) {
        // (A lane was taken with its queue, and pools nothing of its own.)
        if let Some(pooled) = self.take_pooled() {
            self.device.queues.lock().unwrap_or_else(|p| p.into_inner()).push(pooled);
        }
    }
}

/// The event of a marker: a [`Mark`] of an OpenCL queue, released when dropped.
struct ClEvent(cl_event);

// SAFETY: an OpenCL event may be used and released from any thread (OpenCL 1.1+).
unsafe impl Send for ClEvent {}

impl Drop for ClEvent {
    fn drop(&mut self) {
        release(self.0);
    }
}

/// Two slots and a mailbox of pinned memory: a buffer the driver allocates in host memory it can
/// reach by DMA (`CL_MEM_ALLOC_HOST_PTR`), mapped once for its whole life, whose host pointer the
/// copies of one queue read and write (the way GPU vendors' guides give pinned transfers in
/// OpenCL), and the event of the last copy through each slot.
struct ClSlots {
    pinned: ClBuffer<u8>,
    host: *mut u8,
    piece: usize,
    /// The queue the copies go to, which the memory was mapped on (owned by the same pool entry,
    /// which drops the slots first).
    queue: cl_command_queue,
    events: [cl_event; 2],
}

impl ClSlots {
    fn new(device: &OpenClDevice, queue: &CommandQueue, piece: usize) -> Result<Self, DeviceError> {
        // Two slots, then the mailbox (a piece is at most 1 GiB: no overflow).
        let bytes = 2 * piece + MAILBOX;
        // SAFETY: no host pointer is passed: OpenCL allocates the memory itself, in host memory
        // it can reach (`CL_MEM_ALLOC_HOST_PTR`).
        let pinned = unsafe {
            ClBuffer::<u8>::create(
                &device.context,
                CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
                bytes,
                ptr::null_mut::<c_void>(),
            )
        }
        .map_err(|e| api(DeviceErrorKind::Alloc, "clCreateBuffer (pinned staging)", e))?;
        let mut mapped: cl_mem = ptr::null_mut();
        // SAFETY: the whole buffer, mapped blocking: `mapped` then points at `bytes` bytes the
        // host may read and write until they are unmapped (in `drop`); no command is ever queued
        // on the pinned buffer itself, only copies that read or write its host pointer.
        unsafe {
            cl3::command_queue::enqueue_map_buffer(
                queue.get(),
                pinned.get(),
                CL_BLOCKING,
                CL_MAP_READ | CL_MAP_WRITE,
                0,
                bytes,
                &mut mapped,
                0,
                ptr::null(),
            )
            .map(release)
        }
        .map_err(|e| api(DeviceErrorKind::Alloc, "clEnqueueMapBuffer (pinned staging)", e))?;
        Ok(ClSlots {
            pinned,
            host: mapped.cast::<u8>(),
            piece,
            queue: queue.get(),
            events: [ptr::null_mut(); 2],
        })
    }

    /// Takes the event of a copy just queued as the slot's.
    fn mark(&mut self, slot: usize, event: cl_event) {
        release(std::mem::replace(&mut self.events[slot], event));
    }
}

impl Slots for ClSlots {
    fn host(&self, place: Place) -> *mut u8 {
        // SAFETY: a slot or a byte of the mailbox, inside the mapped buffer, laid out as
        // `Place::offset` says.
        unsafe { self.host.add(place.offset(self.piece)) }
    }

    fn wait(&mut self, slot: usize) -> Result<(), DeviceError> {
        let event = std::mem::replace(&mut self.events[slot], ptr::null_mut());
        if event.is_null() {
            return Ok(());
        }
        let waited = cl3::event::wait_for_events(&[event]);
        release(event);
        waited.map_err(|e| api(DeviceErrorKind::Transfer, "clWaitForEvents (a staged copy)", e))
    }

    fn copy(
        &mut self,
        place: Place,
        way: Way,
        buffer: &Buffer,
        offset: usize,
        len: usize,
    ) -> Result<(), DeviceError> {
        let (mem, at) = (mem_of(buffer).0.get(), self.host(place).cast::<c_void>());
        // SAFETY: the ring checked the range against the buffer, and the bytes lie inside the
        // place; the host does not touch them again until the copy ended: a slot's until this
        // copy's event completed (the ring waits for it, or for the queue), the mailbox's until
        // the queue finished.
        let event = unsafe {
            match way {
                Way::In => cl3::command_queue::enqueue_write_buffer(
                    self.queue,
                    mem,
                    CL_NON_BLOCKING,
                    offset,
                    len,
                    at,
                    0,
                    ptr::null(),
                ),
                Way::Out => cl3::command_queue::enqueue_read_buffer(
                    self.queue,
                    mem,
                    CL_NON_BLOCKING,
                    offset,
                    len,
                    at,
                    0,
                    ptr::null(),
                ),
            }
        }
        .map_err(|e| api(DeviceErrorKind::Transfer, "a staged clEnqueue{Write,Read}Buffer", e))?;
        match place {
            Place::Slot(slot) => self.mark(slot, event),
            Place::Mailbox(_) => release(event),
        }
        Ok(())
    }
}

impl Drop for ClSlots {
    fn drop(&mut self) {
        for event in self.events {
            release(event);
        }
        // SAFETY: `host` is what the map in `new` returned, unmapped once; the queue is alive
        // (its pool entry drops the slots first) and finished before a queue goes back to the
        // pool, so no copy still uses the memory.
        let unmapped = unsafe {
            cl3::command_queue::enqueue_unmap_mem_object(
                self.queue,
                self.pinned.get(),
                self.host.cast::<c_void>(),
                0,
                ptr::null(),
            )
        };
        let _ = unmapped.map(release);
        // The slots' copies, the reads into the mailbox (which carry no event) and the unmap
        // end before the buffer is released.
        let _ = cl3::command_queue::finish(self.queue);
    }
}

// SAFETY: the slots' memory and events are used only by the queue that owns them, from whichever
// thread holds that queue; OpenCL handles may be used from any thread (OpenCL 1.1+).
unsafe impl Send for ClSlots {}

// SAFETY: a command queue may be used from any thread (OpenCL 1.1+); the run that owns a
// `ClQueue` is its only user.
unsafe impl Send for ClQueue<'_> {}

impl Queue for ClQueue<'_> {
    fn write(&self, buffer: &Buffer, offset: usize, data: &[u8]) -> Result<(), DeviceError> {
        write(self.queue(), buffer, offset, data)
    }

    unsafe fn write_async(
        &self,
        buffer: &Buffer,
        offset: usize,
        data: *const u8,
        len: usize,
    ) -> Result<(), DeviceError> {
        if len == 0 {
            return Ok(());
        }
        let staged = self.staged(Way::In, len, |slots, ring| {
            // SAFETY: the caller keeps `data..data + len` valid until the queue is finished, longer
            // than the call.
            unsafe { ring.write(slots, buffer, offset, data, len) }
        });
        if let Some(staged) = staged {
            return staged;
        }
        buffer.check_range(offset, len)?;
        // SAFETY: the range lies inside the buffer (checked); the caller keeps `data` valid
        // and unchanged until the queue is finished, which is when a non-blocking write has
        // certainly read it. The event is released at once (the queue is in order).
        unsafe {
            cl3::command_queue::enqueue_write_buffer(
                self.queue().get(),
                mem_of(buffer).0.get(),
                CL_NON_BLOCKING,
                offset,
                len,
                data.cast::<c_void>(),
                0,
                ptr::null(),
            )
            .map(release)
        }
        .map_err(|e| api(DeviceErrorKind::Transfer, "clEnqueueWriteBuffer", e))
    }

    unsafe fn read_async(
        &self,
        buffer: &Buffer,
        offset: usize,
        out: *mut u8,
        len: usize,
    ) -> Result<(), DeviceError> {
        if len == 0 {
            return Ok(());
        }
        let staged = self.staged(Way::Out, len, |slots, ring| {
            // SAFETY: the caller keeps `out..out + len` valid and untouched until the queue is
            // finished, which is when the ring delivers the reads it holds.
            unsafe { ring.read(slots, buffer, offset, out, len) }
        });
        if let Some(staged) = staged {
            return staged;
        }
        buffer.check_range(offset, len)?;
        // SAFETY: the range lies inside the buffer (checked); the caller keeps `out` valid and
        // untouched until the queue is finished, when the non-blocking read has written it.
        unsafe {
            cl3::command_queue::enqueue_read_buffer(
                self.queue().get(),
                mem_of(buffer).0.get(),
                CL_NON_BLOCKING,
                offset,
                len,
                out.cast::<c_void>(),
                0,
                ptr::null(),
            )
            .map(release)
        }
        .map_err(|e| api(DeviceErrorKind::Transfer, "clEnqueueReadBuffer", e))
    }

    fn fill_in_place(
        &self,
        buffer: &Buffer,
        offset: usize,
        len: usize,
        fill: &mut dyn FnMut(*mut u8),
    ) -> Result<bool, DeviceError> {
        // A CPU device's buffers are host memory: a map hands out the buffer's own bytes, and
        // writing them there saves a copy from memory of the caller's. (A GPU's map would be
        // a staging copy of its own: no better than the caller's copy.)
        if !self.device.info.is_cpu {
            return Ok(false);
        }
        if len == 0 {
            return Ok(true);
        }
        buffer.check_range(offset, len)?;
        let mem = mem_of(buffer).0.get();
        let mut mapped: cl_mem = ptr::null_mut();
        // SAFETY: the range lies inside the buffer (checked). The map is blocking: it returns
        // once everything queued before it ended, with `mapped` pointing at `len` bytes that
        // the host may write until they are unmapped (below, before anything else is queued).
        unsafe {
            cl3::command_queue::enqueue_map_buffer(
                self.queue().get(),
                mem,
                CL_BLOCKING,
                CL_MAP_WRITE_INVALIDATE_REGION,
                offset,
                len,
                &mut mapped,
                0,
                ptr::null(),
            )
            .map(release)
        }
        .map_err(|e| api(DeviceErrorKind::Transfer, "clEnqueueMapBuffer", e))?;
        fill(mapped.cast::<u8>());
        // SAFETY: `mapped` is what the map above returned, unmapped once; the queue is in
        // order, so what is queued after the unmap sees the bytes written.
        unsafe {
            cl3::command_queue::enqueue_unmap_mem_object(
                self.queue().get(),
                mem,
                mapped,
                0,
                ptr::null(),
            )
            .map(release)
        }
        .map_err(|e| api(DeviceErrorKind::Transfer, "clEnqueueUnmapMemObject", e))?;
        Ok(true)
    }

    fn zero(&self, buffer: &Buffer, offset: usize, len: usize) -> Result<(), DeviceError> {
        if len == 0 {
            return Ok(());
        }
        buffer.check_range(offset, len)?;
        let pattern = 0u8;
        // SAFETY: the range lies inside the buffer (checked); OpenCL copies the one-byte
        // pattern before the call returns, so a local may hold it.
        unsafe {
            cl3::command_queue::enqueue_fill_buffer(
                self.queue().get(),
                mem_of(buffer).0.get(),
                std::ptr::from_ref(&pattern).cast::<c_void>(),
                1,
                offset,
                len,
                0,
                ptr::null(),
            )
            .map(release)
        }
        .map_err(|e| api(DeviceErrorKind::Transfer, "clEnqueueFillBuffer", e))
    }

    fn copy(
        &self,
        src: &Buffer,
        src_offset: usize,
        dst: &Buffer,
        dst_offset: usize,
        len: usize,
    ) -> Result<(), DeviceError> {
        if len == 0 {
            return Ok(());
        }
        src.check_range(src_offset, len)?;
        dst.check_range(dst_offset, len)?;
        // SAFETY: both ranges lie inside their buffers (checked); the handles are only read.
        unsafe {
            cl3::command_queue::enqueue_copy_buffer(
                self.queue().get(),
                mem_of(src).0.get(),
                mem_of(dst).0.get(),
                src_offset,
                dst_offset,
                len,
                0,
                ptr::null(),
            )
            .map(release)
        }
        .map_err(|e| api(DeviceErrorKind::Transfer, "clEnqueueCopyBuffer", e))
    }

    fn launch(
        &self,
        program: &dyn Program,
        kernel: &str,
        items: u64,
        group: u32,
        args: &[Arg<'_>],
    ) -> Result<(), DeviceError> {
        launch(self.queue(), program, kernel, items, group, args)
    }

    fn finish(&self) -> Result<(), DeviceError> {
        let finished = finish(self.queue());
        self.staging().finished(finished.is_ok());
        // The lane too, whatever the queue's outcome: its reads must not outlive their
        // destinations.
        let lane = self.lane.as_ref().map_or(Ok(()), |lane| lane.finish());
        finished.and(lane)
    }

    fn take_staging(&self) -> StagingStats {
        self.staging().take_stats()
    }

    fn lane(&self) -> Option<&dyn Queue> {
        self.lane.as_deref().map(|lane| lane as &dyn Queue)
    }

    fn mark(&self) -> Result<Mark, DeviceError> {
        // SAFETY: the queue is alive; a marker with no wait list completes when everything
        // queued before it has (the queue is in order). Its event is released with the mark.
        let event = unsafe {
            cl3::command_queue::enqueue_marker_with_wait_list(self.queue().get(), 0, ptr::null())
        }
        .map_err(|e| api(DeviceErrorKind::Launch, "clEnqueueMarkerWithWaitList", e))?;
        Ok(Mark { raw: Box::new(ClEvent(event)) })
    }

    fn wait_mark(&self, mark: &Mark) -> Result<(), DeviceError> {
        let event = mark
            .raw
            .downcast_ref::<ClEvent>()
            .expect("parcomp internal error: an OpenCL queue waits for another API's mark")
            .0;
        // SAFETY: the queue and the event (a marker of a queue of the same context, held by
        // `mark` for the call) are alive; the barrier's own event is released at once.
        unsafe {
            cl3::command_queue::enqueue_barrier_with_wait_list(self.queue().get(), 1, &event)
                .map(release)
        }
        .map_err(|e| api(DeviceErrorKind::Launch, "clEnqueueBarrierWithWaitList", e))
    }
}

/// Releases the event of a queued command: the queues are in order, so nothing waits on it.
fn release(event: opencl3::types::cl_event) {
    if !event.is_null() {
        // SAFETY: the event was just returned by an enqueue call and is released once.
        let _ = unsafe { cl3::event::release_event(event) };
    }
}

fn write(
    queue: &CommandQueue,
    buffer: &Buffer,
    offset: usize,
    data: &[u8],
) -> Result<(), DeviceError> {
    if data.is_empty() {
        return Ok(());
    }
    buffer.check_range(offset, data.len())?;
    let mem = mem_of(buffer);
    // SAFETY: the write is blocking, so `data` outlives the copy; the range was checked to
    // lie inside the buffer. The buffer handle is only read (`cl_mem` is a reference).
    unsafe {
        cl3::command_queue::enqueue_write_buffer(
            queue.get(),
            mem.0.get(),
            CL_BLOCKING,
            offset,
            data.len(),
            data.as_ptr() as *const c_void,
            0,
            ptr::null(),
        )
        .map(release)
    }
    .map_err(|e| api(DeviceErrorKind::Transfer, "clEnqueueWriteBuffer", e))
}

fn read(
    queue: &CommandQueue,
    buffer: &Buffer,
    offset: usize,
    out: &mut [u8],
) -> Result<(), DeviceError> {
    if out.is_empty() {
        return Ok(());
    }
    buffer.check_range(offset, out.len())?;
    let mem = mem_of(buffer);
    // SAFETY: the read is blocking, so `out` outlives the copy; the range was checked.
    unsafe { queue.enqueue_read_buffer(&mem.0, CL_BLOCKING, offset, out, &[]) }
        .map(drop)
        .map_err(|e| api(DeviceErrorKind::Transfer, "clEnqueueReadBuffer", e))
}

fn launch(
    queue: &CommandQueue,
    program: &dyn Program,
    kernel: &str,
    items: u64,
    group: u32,
    args: &[Arg<'_>],
) -> Result<(), DeviceError> {
    if items == 0 {
        return Ok(());
    }
    let program = program
        .as_any()
        .downcast_ref::<ClProgramOf>()
        .expect("parcomp internal error: an OpenCL launch of another API's program");
    let mut kernels = program.kernels.lock().unwrap_or_else(|p| p.into_inner());
    if !kernels.contains_key(kernel) {
        let k = Kernel::create(&program.program, kernel)
            .map_err(|e| api(DeviceErrorKind::Launch, &format!("clCreateKernel `{kernel}`"), e))?;
        let parameters = parameters(&k)?;
        kernels.insert(kernel.to_string(), ClKernel { kernel: k, parameters });
    }
    let ClKernel { kernel: k, parameters } = &kernels[kernel];
    check_arguments(parameters, kernel, args)?;
    for (index, arg) in args.iter().enumerate() {
        let index = index as u32;
        // SAFETY: each argument is passed with the size of the C type the kernel declares
        // for it: a `cl_mem` for `PC_GLOBAL` pointers, 8 bytes for `pc_u64`, 4 for
        // `pc_u32` (the kernel signatures and the argument lists are written together).
        let set = unsafe {
            match arg {
                Arg::Buffer(b) => k.set_arg(index, &mem_of(b).0.get()),
                Arg::U64(v) => k.set_arg(index, v),
                Arg::U32(v) => k.set_arg(index, v),
            }
        };
        set.map_err(|e| {
            api(DeviceErrorKind::Launch, &format!("clSetKernelArg {index} of `{kernel}`"), e)
        })?;
    }
    let group = group.max(1) as u64;
    let global = items.div_ceil(group) * group;
    let global = [global as usize];
    let local = [group as usize];
    // SAFETY: the kernel's arguments were all set above, with the mutex still held (the
    // arguments are captured at enqueue, so another queue may set them again after).
    unsafe {
        queue.enqueue_nd_range_kernel(k.get(), 1, ptr::null(), global.as_ptr(), local.as_ptr(), &[])
    }
    .map(drop)
    .map_err(|e| api(DeviceErrorKind::Launch, &format!("clEnqueueNDRangeKernel `{kernel}`"), e))
}

fn finish(queue: &CommandQueue) -> Result<(), DeviceError> {
    queue.finish().map_err(|e| api(DeviceErrorKind::Launch, "clFinish", e))
}

/// A kernel object, with the parameters its program declares for it.
struct ClKernel {
    kernel: Kernel,
    parameters: Parameters,
}

/// A kernel's parameters as the driver describes them, read once when the kernel object is
/// made (a launch of a nested reduction's rows kernel passes some forty arguments: asking the
/// driver about each at every launch took a good part of a short run's host time).
struct Parameters {
    count: u32,
    /// Whether each is a global pointer; `None` from a driver that keeps no argument
    /// information (the count is still checked).
    global: Option<Vec<bool>>,
}

fn parameters(k: &Kernel) -> Result<Parameters, DeviceError> {
    use opencl3::kernel::CL_KERNEL_ARG_ADDRESS_GLOBAL;
    let count = k.num_args().map_err(|e| api(DeviceErrorKind::Launch, "clGetKernelInfo", e))?;
    let global = (0..count)
        .map(|index| {
            k.get_arg_address_qualifier(index)
                .ok()
                .map(|qualifier| qualifier == CL_KERNEL_ARG_ADDRESS_GLOBAL)
        })
        .collect();
    Ok(Parameters { count, global })
}

/// Checks `args` against the parameters `kernel` declares: their number, and a buffer exactly
/// where the kernel takes a global pointer. A mismatch (a parcomp bug) is an error, not a
/// launch that would read a number as a pointer.
fn check_arguments(
    declared: &Parameters,
    kernel: &str,
    args: &[Arg<'_>],
) -> Result<(), DeviceError> {
    let mismatch = |what: String| {
        DeviceError::new(
            DeviceErrorKind::Launch,
            format!("parcomp internal error: kernel `{kernel}` launched with {what}"),
        )
    };
    if declared.count as usize != args.len() {
        return Err(mismatch(format!("{} arguments, but it takes {}", args.len(), declared.count)));
    }
    for (index, (arg, &pointer)) in args.iter().zip(declared.global.iter().flatten()).enumerate() {
        if pointer != matches!(arg, Arg::Buffer(_)) {
            return Err(mismatch(format!(
                "{} for parameter {index}",
                if pointer { "a number" } else { "a buffer" }
            )));
        }
    }
    Ok(())
}

/// The OpenCL memory object behind a [`Buffer`].
struct ClMemOf(ClBuffer<u8>);

// SAFETY: memory objects may be used from any thread (OpenCL 1.1+).
unsafe impl Send for ClMemOf {}
// SAFETY: as above.
unsafe impl Sync for ClMemOf {}

fn mem_of(buffer: &Buffer) -> &ClMemOf {
    buffer
        .raw
        .downcast_ref::<ClMemOf>()
        .expect("parcomp internal error: an OpenCL call with another API's buffer")
}
