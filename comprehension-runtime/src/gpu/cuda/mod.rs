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
//! library can be loaded ([`nvrtc_available`], and `is_culib_present` for the driver).

mod nvrtc;

pub use nvrtc::{compile, nvrtc_available, nvrtc_version, Compiled};

use super::device::{Arg, Buffer, Device, DeviceError, DeviceErrorKind, DeviceInfo, Program};
use cudarc::driver::{result, sys, CudaContext, CudaFunction, CudaModule};
use cudarc::nvrtc::Ptx;
use std::any::Any;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

/// The process's CUDA device: its context (the primary context of device
/// `PARCOMP_CUDA_DEVICE`, 0 by default) and what it is. Work goes to the legacy default stream,
/// in order; copies are synchronous with it.
pub(crate) struct CudaDevice {
    info: DeviceInfo,
    context: Arc<CudaContext>,
    arch: (i32, i32),
}

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
        nvrtc_available()?;
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
        let (nvrtc_major, nvrtc_minor) = nvrtc_version()?;
        let info = DeviceInfo {
            api: "cuda",
            name,
            vendor: "NVIDIA".into(),
            platform: format!("sm_{}{}", arch.0, arch.1),
            // Part of the key of cached binaries: a new driver, NVRTC or set of options
            // rebuilds them.
            driver: format!(
                "CUDA driver {}.{}, NVRTC {nvrtc_major}.{nvrtc_minor}, {}",
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
        Ok(CudaDevice { info, context, arch })
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
            // once; no kernel still uses it: every user of a buffer waits for the queue
            // (a read, or `finish`) before dropping it, and the driver defers the free of
            // memory in use by queued work on the legacy stream.
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
        buffer.raw.downcast_ref::<Memory>().ok_or_else(|| {
            DeviceError::new(DeviceErrorKind::Launch, "a buffer of another device was passed")
        })
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
        // the values before returning. The legacy default stream (null) orders the launch
        // after the copies and launches before it.
        unsafe {
            result::launch_kernel(
                function.cu_function(),
                (grid, 1, 1),
                (group, 1, 1),
                0,
                std::ptr::null_mut(),
                &mut params,
            )
        }
        .map_err(|e| api(DeviceErrorKind::Launch, &format!("launching `{kernel}`"), e))
    }

    fn finish(&self) -> Result<(), DeviceError> {
        self.context
            .synchronize()
            .map_err(|e| api(DeviceErrorKind::Launch, "cuCtxSynchronize (a kernel failed)", e))
    }
}
