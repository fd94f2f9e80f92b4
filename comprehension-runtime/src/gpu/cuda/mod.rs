//! The device trait on CUDA, through cudarc (which loads `libcuda` and `libnvrtc` at run time,
//! so a build with the `cuda` feature links and runs on machines without CUDA; the device is
//! then absent, and says why).
//!
//! Programs are the same kernel source as OpenCL's — the dialect's prelude selects CUDA under
//! NVRTC — compiled by NVRTC for the device's own architecture (`sm_XY`, with `--fmad=false`:
//! Rust never contracts `a * b + c` into a fused multiply-add), which gives a CUBIN, the binary
//! the disk cache keeps: loading it costs about a millisecond, against NVRTC's hundreds.
//!
//! cudarc panics when a library it needs is absent, so every entry first checks that the
//! library can be loaded ([`nvrtc_available`], and `is_culib_present` for the driver). The
//! device opens without NVRTC: a program found in a kernel bundle (`bundle.rs`) or the disk
//! cache is loaded by the driver alone, and only a program found in neither needs NVRTC.

mod nvrtc;

pub mod interop;

pub use nvrtc::{compile, nvrtc_available, nvrtc_version, Compiled};

use super::device::{
    Arg, Buffer, Device, DeviceError, DeviceErrorKind, DeviceInfo, Mark, Program, Queue,
    StagingStats,
};
use super::staging::{
    lane_chosen, Place, PooledSlots, QueueStaging, Ring, Slots, Staging, Way, MAILBOX,
};
use cudarc::driver::{result, sys, CudaContext, CudaFunction, CudaModule};
use cudarc::nvrtc::Ptx;
use std::any::Any;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

/// The process's CUDA device: its context (the primary context of device
/// `PARCOMP_CUDA_DEVICE`, 0 by default) and what it is. The device's own calls go to the legacy
/// default stream, in order, with synchronous copies; a device run takes a stream of its own
/// from a pool ([`Device::queue`]), created non-blocking so that runs from different threads
/// do not wait for each other or for the default stream.
pub(crate) struct CudaDevice {
    info: DeviceInfo,
    context: Arc<CudaContext>,
    arch: (i32, i32),
    streams: Mutex<Vec<Pooled>>,
    /// How runs copy: through pinned memory, unless the GPU shares the host's memory.
    staging: Option<Staging>,
    /// Whether a run's stream has a copy lane, a second stream for the copies beside its
    /// kernels (`staging::lane_chosen`): unless the GPU shares the host's memory.
    lane: bool,
}

/// A stream of the pool, with its staging once a run made it, and its lane's.
struct Pooled {
    stream: Stream,
    staged: Option<PooledSlots<CudaSlots>>,
    lane: Option<Box<Pooled>>,
}

/// A stream the device created (destroyed only with the process: the pool keeps them).
struct Stream(sys::CUstream);

// SAFETY: a CUDA stream handle may be used from any thread with its context bound; a stream is
// used by one run at a time (it is taken out of the pool for the run).
unsafe impl Send for Stream {}

/// The oldest driver accepted, as cuDriverGetVersion gives it (CUDA 12.0).
const MIN_DRIVER: i32 = 12000;

fn unavailable(message: impl Into<String>) -> DeviceError {
    DeviceError::new(DeviceErrorKind::Unavailable, message)
}

fn api(kind: DeviceErrorKind, call: &str, error: impl std::fmt::Display) -> DeviceError {
    DeviceError::new(kind, format!("CUDA {call} failed: {error}"))
}

/// The library file names cudarc looks for (its own list, once each), for error messages.
pub(crate) fn library_names(library: &str) -> String {
    let mut names: Vec<String> = Vec::new();
    for name in cudarc::get_lib_name_candidates(library) {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names.join(", ")
}

/// The process's CUDA device, opened on first use (its line in `../devices.rs`).
pub(crate) fn shared() -> Result<&'static dyn Device, DeviceError> {
    super::device::opened(opened())
}

/// The process's CUDA device, opened on first use, or why there is none.
fn opened() -> &'static Result<CudaDevice, DeviceError> {
    static DEVICE: std::sync::OnceLock<Result<CudaDevice, DeviceError>> =
        std::sync::OnceLock::new();
    DEVICE.get_or_init(CudaDevice::open)
}

impl CudaDevice {
    /// Opens the CUDA device, or says why there is none: no driver library, no device, no
    /// NVRTC to compile kernels with.
    pub(crate) fn open() -> Result<CudaDevice, DeviceError> {
        // SAFETY: `is_culib_present` only tries to `dlopen` each candidate name (running the
        // library's initialisers, which is why it is unsafe) and closes it again; it never
        // calls into the library and never panics.
        if !unsafe { sys::is_culib_present() } {
            return Err(unavailable(format!(
                "no CUDA driver: libcuda could not be loaded (searched for {}; install the \
                 NVIDIA driver)",
                library_names("cuda")
            )));
        }
        // The driver's version first (cuDriverGetVersion exists in every driver and needs no
        // cuInit): a driver older than CUDA 12.0 may lack functions cudarc binds, and calling a
        // missing one panics inside cudarc. Refuse it here, with an error.
        let mut driver = 0i32;
        // SAFETY: cuDriverGetVersion writes one int through the pointer, which is valid for
        // the call; the driver library is loaded (checked above).
        unsafe { sys::cuDriverGetVersion(&mut driver) }
            .result()
            .map_err(|e| unavailable(format!("CUDA cuDriverGetVersion failed: {e}")))?;
        if driver < MIN_DRIVER {
            return Err(unavailable(format!(
                "the CUDA driver is too old: it supports CUDA {}.{}, parcomp needs {}.{} or newer",
                driver / 1000,
                (driver % 1000) / 10,
                MIN_DRIVER / 1000,
                (MIN_DRIVER % 1000) / 10
            )));
        }
        // NVRTC is not needed to open the device: programs may all come from a kernel bundle.
        let ordinal = match std::env::var("PARCOMP_CUDA_DEVICE") {
            Ok(v) if !v.trim().is_empty() => v.trim().parse::<usize>().map_err(|_| {
                unavailable(format!("PARCOMP_CUDA_DEVICE={v:?} is not a device number"))
            })?,
            _ => 0,
        };
        let count = CudaContext::device_count()
            .map_err(|e| unavailable(format!("no CUDA device: cuDeviceGetCount failed: {e}")))?;
        if count <= 0 || ordinal >= count as usize {
            return Err(unavailable(format!(
                "no CUDA device {ordinal}: the driver reports {count} device(s)"
            )));
        }
        let context = CudaContext::new(ordinal)
            .map_err(|e| unavailable(format!("CUDA device {ordinal} could not be opened: {e}")))?;
        let query = |what: &str, e: cudarc::driver::DriverError| {
            unavailable(format!("CUDA device {ordinal}: reading its {what} failed: {e}"))
        };
        let name = context.name().map_err(|e| query("name", e))?;
        let arch = context.compute_capability().map_err(|e| query("compute capability", e))?;
        let memory = context.total_mem().map_err(|e| query("memory", e))? as u64;
        let units = context
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(|e| query("multiprocessor count", e))?;
        // Peak memory bandwidth: double data rate, the clock in kHz, the bus width in bits.
        let clock =
            context.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
        let width =
            context.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
        let peak_bandwidth = match (clock, width) {
            (Ok(khz), Ok(bits)) if khz > 0 && bits > 0 => {
                Some(2.0 * f64::from(khz) * 1e3 * f64::from(bits) / 8.0)
            }
            _ => None,
        };
        let nvrtc = match nvrtc_version() {
            Ok((major, minor)) => format!("NVRTC {major}.{minor}"),
            Err(_) => "no NVRTC".to_string(),
        };
        let info = DeviceInfo {
            api: "cuda",
            name,
            vendor: "NVIDIA".into(),
            platform: format!("sm_{}{}", arch.0, arch.1),
            // Part of the key of cached binaries: a new driver, NVRTC or set of options
            // rebuilds them.
            driver: format!(
                "CUDA driver {}.{}, {nvrtc}, {}",
                driver / 1000,
                (driver % 1000) / 10,
                nvrtc::options(arch).join(" ")
            ),
            is_cpu: false,
            fp64: true,
            global_memory: memory,
            max_buffer: memory,
            compute_units: units.max(0) as u32,
            peak_bandwidth,
        };
        // An integrated GPU's memory is the host's: a copy is one memcpy there already.
        let integrated = context
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_INTEGRATED)
            .is_ok_and(|v| v != 0);
        let staging = Staging::chosen(!integrated);
        let lane = lane_chosen(!integrated);
        Ok(CudaDevice { info, context, arch, streams: Mutex::default(), staging, lane })
    }

    fn bind(&self) -> Result<(), DeviceError> {
        self.context
            .bind_to_thread()
            .map_err(|e| api(DeviceErrorKind::Launch, "cuCtxSetCurrent", e))
    }
}

/// Device memory: a raw allocation, freed with its context bound.
struct Memory {
    ptr: sys::CUdeviceptr,
    context: Arc<CudaContext>,
}

impl Drop for Memory {
    fn drop(&mut self) {
        // A failure to free cannot be reported from a drop; the context outlives its memory
        // (the Arc), so the pointer is still the context's.
        if self.context.bind_to_thread().is_ok() {
            // SAFETY: `ptr` came from `malloc_sync` in this context and is freed only here,
            // once; no kernel still uses it: a run hands its buffers back to the arena only
            // after its stream finished, the device's own calls wait for the default stream
            // (a read, or `finish`) before dropping a buffer, and cuMemFree itself waits for
            // work still using the memory.
            let _ = unsafe { result::free_sync(self.ptr) };
        }
    }
}

/// A loaded module and its functions, looked up once each.
struct CudaProgram {
    module: Arc<CudaModule>,
    functions: Mutex<HashMap<String, CudaFunction>>,
    binary: Option<Vec<u8>>,
}

impl Program for CudaProgram {
    fn binary(&self) -> Option<Vec<u8>> {
        self.binary.clone()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl CudaDevice {
    /// Loads a CUBIN (or NUL-terminated PTX); `keep` keeps a copy for the disk cache.
    fn load_module(&self, image: Vec<u8>, keep: bool) -> Result<CudaProgram, DeviceError> {
        let binary = keep.then(|| image.clone());
        let module = self
            .context
            .load_module(Ptx::from_binary(image))
            .map_err(|e| api(DeviceErrorKind::Build, "cuModuleLoadData", e))?;
        Ok(CudaProgram { module, functions: Mutex::new(HashMap::new()), binary })
    }

    fn memory<'b>(&self, buffer: &'b Buffer) -> Result<&'b Memory, DeviceError> {
        memory_of(buffer)
    }
}

/// The allocation behind a [`Buffer`] of this device.
fn memory_of(buffer: &Buffer) -> Result<&Memory, DeviceError> {
    buffer.raw.downcast_ref::<Memory>().ok_or_else(|| {
        DeviceError::new(DeviceErrorKind::Launch, "a buffer of another device was passed")
    })
}

impl CudaDevice {
    fn launch_on(
        &self,
        stream: sys::CUstream,
        program: &dyn Program,
        kernel: &str,
        items: u64,
        group: u32,
        args: &[Arg<'_>],
    ) -> Result<(), DeviceError> {
        let program = program.as_any().downcast_ref::<CudaProgram>().ok_or_else(|| {
            DeviceError::new(DeviceErrorKind::Launch, "a program of another device was passed")
        })?;
        let function = {
            let mut functions = program.functions.lock().unwrap_or_else(|p| p.into_inner());
            match functions.get(kernel) {
                Some(f) => f.clone(),
                None => {
                    let f = program.module.load_function(kernel).map_err(|e| {
                        api(DeviceErrorKind::Launch, &format!("cuModuleGetFunction `{kernel}`"), e)
                    })?;
                    functions.insert(kernel.to_string(), f.clone());
                    f
                }
            }
        };
        let groups = items.div_ceil(u64::from(group.max(1)));
        let grid =
            u32::try_from(groups).ok().filter(|&g| g < i32::MAX as u32).ok_or_else(|| {
                DeviceError::new(
                    DeviceErrorKind::Launch,
                    format!(
                        "`{kernel}` over {items} work-items needs more blocks than CUDA allows"
                    ),
                )
            })?;
        // Every argument's value, kept alive (and unmoved) until the launch has read them.
        let mut words: Vec<u64> = Vec::with_capacity(args.len());
        let mut halves: Vec<u32> = Vec::with_capacity(args.len());
        for arg in args {
            match arg {
                Arg::Buffer(b) => words.push(self.memory(b)?.ptr),
                Arg::U64(v) => words.push(*v),
                Arg::U32(v) => halves.push(*v),
            }
        }
        let (mut w, mut h) = (0, 0);
        let mut params: Vec<*mut c_void> = Vec::with_capacity(args.len());
        for arg in args {
            if let Arg::U32(_) = arg {
                params.push(std::ptr::from_mut(&mut halves[h]).cast());
                h += 1;
            } else {
                params.push(std::ptr::from_mut(&mut words[w]).cast());
                w += 1;
            }
        }
        self.bind()?;
        // SAFETY: `function` belongs to a module that `program` keeps loaded; `params` holds
        // one pointer per kernel parameter, to a u64 (a device pointer or a pc_u64) or a u32
        // (a pc_u32) as the kernel declares them — the executor passes the arguments each
        // kernel of the dialect takes — and `words`/`halves` outlive the call, which copies
        // the values before returning. The stream (the legacy default stream when null, else a
        // run's own) orders the launch after the copies and launches queued on it before.
        unsafe {
            result::launch_kernel(
                function.cu_function(),
                (grid, 1, 1),
                (group, 1, 1),
                0,
                stream,
                &mut params,
            )
        }
        .map_err(|e| api(DeviceErrorKind::Launch, &format!("launching `{kernel}`"), e))
    }
}

impl Device for CudaDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn build(&self, source: &str, options: &str) -> Result<Box<dyn Program>, DeviceError> {
        let compiled = compile(source, self.arch, options)?;
        // The CUBIN for this device's architecture; PTX (JIT-compiled by the driver) only if
        // NVRTC could not give one.
        let image = compiled.cubin.unwrap_or_else(|| {
            let mut ptx = compiled.ptx.into_bytes();
            ptx.push(0);
            ptx
        });
        Ok(Box::new(self.load_module(image, true)?))
    }

    fn load(&self, binary: &[u8], _options: &str) -> Result<Box<dyn Program>, DeviceError> {
        Ok(Box::new(self.load_module(binary.to_vec(), false)?))
    }

    fn alloc(&self, bytes: usize) -> Result<Buffer, DeviceError> {
        let bytes = bytes.max(8);
        self.bind()?;
        // SAFETY: cuMemAlloc with the context bound; the pointer is owned by the `Memory`
        // returned, which frees it once.
        let ptr = unsafe { result::malloc_sync(bytes) }
            .map_err(|e| api(DeviceErrorKind::Alloc, &format!("cuMemAlloc of {bytes} bytes"), e))?;
        let memory = Memory { ptr, context: self.context.clone() };
        Ok(Buffer { raw: Box::new(memory), bytes })
    }

    fn write(&self, buffer: &Buffer, offset: usize, data: &[u8]) -> Result<(), DeviceError> {
        let memory = self.memory(buffer)?;
        buffer.check_range(offset, data.len())?;
        self.bind()?;
        // SAFETY: the destination range lies inside the allocation (checked above); the copy
        // is synchronous, so `data` is read before the call returns.
        unsafe { result::memcpy_htod_sync(memory.ptr + offset as u64, data) }
            .map_err(|e| api(DeviceErrorKind::Transfer, "cuMemcpyHtoD", e))
    }

    fn read(&self, buffer: &Buffer, offset: usize, out: &mut [u8]) -> Result<(), DeviceError> {
        let memory = self.memory(buffer)?;
        buffer.check_range(offset, out.len())?;
        self.bind()?;
        // SAFETY: the source range lies inside the allocation (checked above); the copy is
        // synchronous with the legacy default stream, where every kernel was launched, so it
        // waits for them and has written `out` when it returns.
        unsafe { result::memcpy_dtoh_sync(out, memory.ptr + offset as u64) }
            .map_err(|e| api(DeviceErrorKind::Transfer, "cuMemcpyDtoH", e))
    }

    fn launch(
        &self,
        program: &dyn Program,
        kernel: &str,
        items: u64,
        group: u32,
        args: &[Arg<'_>],
    ) -> Result<(), DeviceError> {
        self.launch_on(std::ptr::null_mut(), program, kernel, items, group, args)
    }

    fn queue(&self) -> Result<Box<dyn Queue + '_>, DeviceError> {
        let pooled = self.streams.lock().unwrap_or_else(|p| p.into_inner()).pop();
        Ok(Box::new(self.run_queue(pooled, self.lane)?))
    }

    fn free_memory(&self) -> Option<u64> {
        self.bind().ok()?;
        result::mem_get_info().ok().map(|(free, _)| free as u64)
    }

    fn finish(&self) -> Result<(), DeviceError> {
        self.context
            .synchronize()
            .map_err(|e| api(DeviceErrorKind::Launch, "cuCtxSynchronize (a kernel failed)", e))
    }
}

impl CudaDevice {
    /// A run's stream: the pool's `pooled` (or a new one), with a lane of its own when `lane`.
    fn run_queue(&self, pooled: Option<Pooled>, lane: bool) -> Result<CudaQueue<'_>, DeviceError> {
        let (stream, staged, pooled_lane) = match pooled {
            Some(Pooled { stream, staged, lane }) => (stream, staged, lane),
            None => {
                self.bind()?;
                let raw = result::stream::create(result::stream::StreamKind::NonBlocking)
                    .map_err(|e| api(DeviceErrorKind::Launch, "cuStreamCreate", e))?;
                (Stream(raw), None, None)
            }
        };
        let lane = match lane {
            true => Some(Box::new(self.run_queue(pooled_lane.map(|l| *l), false)?)),
            false => None,
        };
        let staging = Some(QueueStaging::new(self.staging, staged));
        Ok(CudaQueue { device: self, stream: Some(stream), staging, lane })
    }
}

/// A stream of a device run: in order, returned to the device's pool when dropped; with its copy
/// lane where the device has one (another stream, ordered with this one by events).
struct CudaQueue<'d> {
    device: &'d CudaDevice,
    stream: Option<Stream>,
    /// The stream's pinned staging (taken back with the stream when dropped).
    staging: Option<QueueStaging<CudaSlots>>,
    lane: Option<Box<CudaQueue<'d>>>,
}

impl CudaQueue<'_> {
    /// The stream, its staging and its lane's, for the pool, once what they hold has ended.
    fn take_pooled(&mut self) -> Option<Pooled> {
        let stream = self.stream.take()?;
        // Whatever a failed run left queued must end before the stream serves another run (its
        // buffers go back to the arena); an error here was already reported.
        if self.device.bind().is_ok() {
            // SAFETY: the stream was created by `result::stream::create` and not destroyed.
            let _ = unsafe { result::stream::synchronize(stream.0) };
        }
        let lane = self.lane.take().and_then(|mut lane| lane.take_pooled()).map(Box::new);
        let staged = self.staging.take().and_then(QueueStaging::into_pooled);
        Some(Pooled { stream, staged, lane })
    }

    fn raw(&self) -> sys::CUstream {
        self.stream.as_ref().expect("a stream is only taken back when dropped").0
    }

    fn staging(&self) -> &QueueStaging<CudaSlots> {
        self.staging.as_ref().expect("a stream's staging is only taken back when dropped")
    }

    /// Runs `copy` through the stream's pinned slots (made on first use) when a copy of `len`
    /// bytes the way `way` says goes through them; `None` when it goes straight.
    fn staged<R>(
        &self,
        way: Way,
        len: usize,
        copy: impl FnOnce(&mut CudaSlots, &mut Ring) -> R,
    ) -> Option<R> {
        self.staging().copy(way, len, |piece| CudaSlots::new(self.device, self.raw(), piece), copy)
    }
}

impl Drop for CudaQueue<'_> {
    fn drop(&mut self) {
        // (A lane was taken with its stream, and pools nothing of its own.)
        if let Some(pooled) = self.take_pooled() {
            self.device.streams.lock().unwrap_or_else(|p| p.into_inner()).push(pooled);
        }
    }
}

/// An event recorded on a stream: a [`Mark`] of a CUDA stream, destroyed when dropped (CUDA
/// releases a pending event's resources once it completes).
struct CudaEvent {
    event: sys::CUevent,
    context: Arc<CudaContext>,
}

// SAFETY: a CUDA event handle may be used from any thread with its context bound.
unsafe impl Send for CudaEvent {}

impl Drop for CudaEvent {
    fn drop(&mut self) {
        if self.context.bind_to_thread().is_ok() {
            // SAFETY: created by `result::event::create` in `mark`, destroyed once, here.
            let _ = unsafe { result::event::destroy(self.event) };
        }
    }
}

/// Two slots and a mailbox of page-locked host memory (`cuMemAllocHost`), the stream their copies
/// go to, and an event recorded after the last copy through each slot.
struct CudaSlots {
    host: *mut u8,
    piece: usize,
    stream: sys::CUstream,
    events: [sys::CUevent; 2],
    context: Arc<CudaContext>,
}

// SAFETY: the slots' memory and events are used only by the stream that owns them, from
// whichever thread holds that stream, with the context bound; CUDA handles may be used from any
// thread.
unsafe impl Send for CudaSlots {}

impl CudaSlots {
    fn new(device: &CudaDevice, stream: sys::CUstream, piece: usize) -> Result<Self, DeviceError> {
        // Two slots, then the mailbox (a piece is at most 1 GiB: no overflow).
        let bytes = 2 * piece + MAILBOX;
        device.bind()?;
        let flags = sys::CUevent_flags::CU_EVENT_DISABLE_TIMING;
        let first = result::event::create(flags)
            .map_err(|e| api(DeviceErrorKind::Alloc, "cuEventCreate", e))?;
        let second = match result::event::create(flags) {
            Ok(event) => event,
            Err(e) => {
                // SAFETY: created just above, destroyed once.
                let _ = unsafe { result::event::destroy(first) };
                return Err(api(DeviceErrorKind::Alloc, "cuEventCreate", e));
            }
        };
        // SAFETY: the context is bound; the memory is freed once, in `drop` (or below).
        let host = match unsafe { result::malloc_host(bytes, 0) } {
            Ok(host) => host.cast::<u8>(),
            Err(e) => {
                // SAFETY: created just above, destroyed once.
                let _ = unsafe { result::event::destroy(first) };
                // SAFETY: as above.
                let _ = unsafe { result::event::destroy(second) };
                return Err(api(DeviceErrorKind::Alloc, "cuMemAllocHost (pinned staging)", e));
            }
        };
        Ok(CudaSlots {
            host,
            piece,
            stream,
            events: [first, second],
            context: device.context.clone(),
        })
    }

    fn bind(&self) -> Result<(), DeviceError> {
        self.context
            .bind_to_thread()
            .map_err(|e| api(DeviceErrorKind::Launch, "cuCtxSetCurrent", e))
    }

    /// Records the slot's event after the copy just queued on the stream.
    fn mark(&self, slot: usize) -> Result<(), DeviceError> {
        // SAFETY: the event and the stream are alive (the slots' own, and their pool entry's).
        unsafe { result::event::record(self.events[slot], self.stream) }
            .map_err(|e| api(DeviceErrorKind::Transfer, "cuEventRecord", e))
    }
}

impl Slots for CudaSlots {
    fn host(&self, place: Place) -> *mut u8 {
        // SAFETY: a slot or a byte of the mailbox, inside the allocation, laid out as
        // `Place::offset` says.
        unsafe { self.host.add(place.offset(self.piece)) }
    }

    fn wait(&mut self, slot: usize) -> Result<(), DeviceError> {
        self.bind()?;
        // SAFETY: the event is alive; an event never recorded counts as completed.
        unsafe { result::event::synchronize(self.events[slot]) }
            .map_err(|e| api(DeviceErrorKind::Transfer, "cuEventSynchronize (a staged copy)", e))
    }

    fn copy(
        &mut self,
        place: Place,
        way: Way,
        buffer: &Buffer,
        offset: usize,
        len: usize,
    ) -> Result<(), DeviceError> {
        let (device, host) = (memory_of(buffer)?.ptr + offset as u64, self.host(place));
        self.bind()?;
        // SAFETY: the ring checked the range against the buffer, and the bytes lie inside the
        // place; the host does not touch them again until the copy ended: a slot's until the
        // event recorded after it completed (the ring waits for it, or for the stream), the
        // mailbox's until the stream finished. Page-locked memory: the copy is queued on the
        // stream and the call returns at once.
        let copied = unsafe {
            match way {
                Way::In => {
                    sys::cuMemcpyHtoDAsync_v2(device, host.cast::<c_void>(), len, self.stream)
                }
                Way::Out => {
                    sys::cuMemcpyDtoHAsync_v2(host.cast::<c_void>(), device, len, self.stream)
                }
            }
        };
        copied
            .result()
            .map_err(|e| api(DeviceErrorKind::Transfer, "a staged cuMemcpy{HtoD,DtoH}Async", e))?;
        match place {
            Place::Slot(slot) => self.mark(slot),
            Place::Mailbox(_) => Ok(()),
        }
    }
}

impl Drop for CudaSlots {
    fn drop(&mut self) {
        if self.bind().is_err() {
            return;
        }
        // The reads into the mailbox carry no event: the stream's end is theirs (a stream is
        // synchronised before it goes back to the pool, so this returns at once).
        // SAFETY: the stream is alive (streams are destroyed only with the process).
        let _ = unsafe { result::stream::synchronize(self.stream) };
        for slot in 0..2 {
            // SAFETY: the events were created in `new` and are destroyed once, here, after the
            // copies they mark.
            let _ = unsafe { result::event::synchronize(self.events[slot]) };
            // SAFETY: as above.
            let _ = unsafe { result::event::destroy(self.events[slot]) };
        }
        // SAFETY: allocated by `cuMemAllocHost` in `new` and freed once; no copy uses it any
        // more (the stream and the events above completed).
        let _ = unsafe { result::free_host(self.host.cast::<c_void>()) };
    }
}

impl Queue for CudaQueue<'_> {
    fn write(&self, buffer: &Buffer, offset: usize, data: &[u8]) -> Result<(), DeviceError> {
        // SAFETY: `data` is borrowed for the call, and the stream is synchronised before it
        // returns, so the copy has read it.
        unsafe { self.write_async(buffer, offset, data.as_ptr(), data.len())? };
        self.finish()
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
            // SAFETY: the caller keeps `data..data + len` valid until the stream is finished,
            // longer than the call.
            unsafe { ring.write(slots, buffer, offset, data, len) }
        });
        if let Some(staged) = staged {
            return staged;
        }
        let memory = self.device.memory(buffer)?;
        buffer.check_range(offset, len)?;
        self.device.bind()?;
        // SAFETY: the destination range lies inside the allocation (checked); the caller keeps
        // `data..data + len` valid and unchanged until the stream is finished.
        unsafe {
            sys::cuMemcpyHtoDAsync_v2(
                memory.ptr + offset as u64,
                data.cast::<c_void>(),
                len,
                self.raw(),
            )
        }
        .result()
        .map_err(|e| api(DeviceErrorKind::Transfer, "cuMemcpyHtoDAsync", e))
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
            // SAFETY: the caller keeps `out..out + len` valid and untouched until the stream is
            // finished, which is when the ring delivers the reads it holds.
            unsafe { ring.read(slots, buffer, offset, out, len) }
        });
        if let Some(staged) = staged {
            return staged;
        }
        let memory = self.device.memory(buffer)?;
        buffer.check_range(offset, len)?;
        self.device.bind()?;
        // SAFETY: the source range lies inside the allocation (checked); the caller keeps
        // `out..out + len` valid and untouched until the stream is finished.
        unsafe {
            sys::cuMemcpyDtoHAsync_v2(
                out.cast::<c_void>(),
                memory.ptr + offset as u64,
                len,
                self.raw(),
            )
        }
        .result()
        .map_err(|e| api(DeviceErrorKind::Transfer, "cuMemcpyDtoHAsync", e))
    }

    fn zero(&self, buffer: &Buffer, offset: usize, len: usize) -> Result<(), DeviceError> {
        if len == 0 {
            return Ok(());
        }
        let memory = self.device.memory(buffer)?;
        buffer.check_range(offset, len)?;
        self.device.bind()?;
        // SAFETY: the range lies inside the allocation (checked); the stream is this run's.
        unsafe { result::memset_d8_async(memory.ptr + offset as u64, 0, len, self.raw()) }
            .map_err(|e| api(DeviceErrorKind::Transfer, "cuMemsetD8Async", e))
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
        let (from, to) = (self.device.memory(src)?, self.device.memory(dst)?);
        src.check_range(src_offset, len)?;
        dst.check_range(dst_offset, len)?;
        self.device.bind()?;
        // SAFETY: both ranges lie inside their allocations (checked), on this run's stream.
        unsafe {
            sys::cuMemcpyDtoDAsync_v2(
                to.ptr + dst_offset as u64,
                from.ptr + src_offset as u64,
                len,
                self.raw(),
            )
        }
        .result()
        .map_err(|e| api(DeviceErrorKind::Transfer, "cuMemcpyDtoDAsync", e))
    }

    fn launch(
        &self,
        program: &dyn Program,
        kernel: &str,
        items: u64,
        group: u32,
        args: &[Arg<'_>],
    ) -> Result<(), DeviceError> {
        self.device.launch_on(self.raw(), program, kernel, items, group, args)
    }

    fn finish(&self) -> Result<(), DeviceError> {
        self.device.bind()?;
        // SAFETY: the stream was created by `result::stream::create` and is not destroyed
        // while the pool holds it.
        let finished = unsafe { result::stream::synchronize(self.raw()) }
            .map_err(|e| api(DeviceErrorKind::Launch, "cuStreamSynchronize (a kernel failed)", e));
        self.staging().finished(finished.is_ok());
        // The lane too, whatever the stream's outcome: its reads must not outlive their
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
        self.device.bind()?;
        let flags = sys::CUevent_flags::CU_EVENT_DISABLE_TIMING;
        let event = result::event::create(flags)
            .map_err(|e| api(DeviceErrorKind::Launch, "cuEventCreate", e))?;
        let mark = CudaEvent { event, context: self.device.context.clone() };
        // SAFETY: the event was just created and the stream is alive; the event is destroyed
        // with the mark.
        unsafe { result::event::record(event, self.raw()) }
            .map_err(|e| api(DeviceErrorKind::Launch, "cuEventRecord", e))?;
        Ok(Mark { raw: Box::new(mark) })
    }

    fn wait_mark(&self, mark: &Mark) -> Result<(), DeviceError> {
        let event = mark
            .raw
            .downcast_ref::<CudaEvent>()
            .expect("parcomp internal error: a CUDA stream waits for another API's mark")
            .event;
        self.device.bind()?;
        // SAFETY: the stream and the event (recorded on a stream of the same context, held by
        // `mark` for the call) are alive.
        unsafe {
            result::stream::wait_event(
                self.raw(),
                event,
                sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
            )
        }
        .map_err(|e| api(DeviceErrorKind::Launch, "cuStreamWaitEvent", e))
    }
}
