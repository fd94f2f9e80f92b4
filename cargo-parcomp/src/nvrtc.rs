//! NVRTC, loaded at run time: the few calls that compile a program to PTX and CUBIN. The
//! options are the runtime's own ([`nvrtc_options`]), so a bundled binary is the one the CUDA
//! device would have compiled.

use comprehension_runtime::gpu::bundle::nvrtc_options;
use std::ffi::{c_char, c_int, CStr, CString};

type Program = *mut std::ffi::c_void;
type Status = c_int;

/// NVRTC's functions, looked up once.
pub struct Nvrtc {
    version: (i32, i32),
    archs: Vec<i32>,
    create: unsafe extern "C" fn(
        *mut Program,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> Status,
    compile: unsafe extern "C" fn(Program, c_int, *const *const c_char) -> Status,
    destroy: unsafe extern "C" fn(*mut Program) -> Status,
    log_size: unsafe extern "C" fn(Program, *mut usize) -> Status,
    log: unsafe extern "C" fn(Program, *mut c_char) -> Status,
    ptx_size: unsafe extern "C" fn(Program, *mut usize) -> Status,
    ptx: unsafe extern "C" fn(Program, *mut c_char) -> Status,
    cubin_size: unsafe extern "C" fn(Program, *mut usize) -> Status,
    cubin: unsafe extern "C" fn(Program, *mut c_char) -> Status,
    error: unsafe extern "C" fn(Status) -> *const c_char,
    // Kept loaded while the function pointers above are used.
    _library: libloading::Library,
}

/// The names NVRTC's library goes by, newest first.
const NAMES: &[&str] =
    &["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so", "nvrtc64_130_0.dll", "nvrtc64_120_0.dll"];

impl Nvrtc {
    /// Loads NVRTC from `path`, or else by its usual names on the loader's path.
    pub fn load(path: Option<&std::path::Path>) -> Result<Nvrtc, String> {
        let library = match path {
            // SAFETY: loading NVRTC runs its initialisers, which have no preconditions.
            Some(p) => unsafe { libloading::Library::new(p) }
                .map_err(|e| format!("NVRTC could not be loaded from {}: {e}", p.display()))?,
            None => NAMES
                .iter()
                // SAFETY: as above.
                .find_map(|name| unsafe { libloading::Library::new(*name) }.ok())
                .ok_or_else(|| {
                    format!(
                        "no NVRTC on the loader's path (tried {}): `pip install \
                         nvidia-cuda-nvrtc-cu12` and pass --nvrtc with its libnvrtc.so.12, or \
                         set PARCOMP_NVRTC",
                        NAMES.join(", ")
                    )
                })?,
        };
        // SAFETY: each symbol is looked up by its documented name and given its documented C
        // signature (nvrtc.h); the pointers are used only while `library` is loaded (it is
        // kept in the struct with them).
        unsafe {
            macro_rules! sym {
                ($name:literal) => {
                    *library
                        .get(concat!($name, "\0").as_bytes())
                        .map_err(|e| format!("NVRTC has no {}: {e}", $name))?
                };
            }
            let version_fn: unsafe extern "C" fn(*mut c_int, *mut c_int) -> Status =
                sym!("nvrtcVersion");
            let (mut major, mut minor) = (0, 0);
            check(version_fn(&mut major, &mut minor), "nvrtcVersion")?;
            let count_fn: unsafe extern "C" fn(*mut c_int) -> Status =
                sym!("nvrtcGetNumSupportedArchs");
            let archs_fn: unsafe extern "C" fn(*mut c_int) -> Status =
                sym!("nvrtcGetSupportedArchs");
            let mut count = 0;
            check(count_fn(&mut count), "nvrtcGetNumSupportedArchs")?;
            let mut archs = vec![0; count.max(0) as usize];
            check(archs_fn(archs.as_mut_ptr()), "nvrtcGetSupportedArchs")?;
            Ok(Nvrtc {
                version: (major, minor),
                archs,
                create: sym!("nvrtcCreateProgram"),
                compile: sym!("nvrtcCompileProgram"),
                destroy: sym!("nvrtcDestroyProgram"),
                log_size: sym!("nvrtcGetProgramLogSize"),
                log: sym!("nvrtcGetProgramLog"),
                ptx_size: sym!("nvrtcGetPTXSize"),
                ptx: sym!("nvrtcGetPTX"),
                cubin_size: sym!("nvrtcGetCUBINSize"),
                cubin: sym!("nvrtcGetCUBIN"),
                error: sym!("nvrtcGetErrorString"),
                _library: library,
            })
        }
    }

    /// NVRTC's version.
    pub fn version(&self) -> (i32, i32) {
        self.version
    }

    /// The architectures it compiles for (`80` for sm_80).
    pub fn archs(&self) -> &[i32] {
        &self.archs
    }

    fn status(&self, status: Status, call: &str) -> Result<(), String> {
        if status == 0 {
            return Ok(());
        }
        // SAFETY: nvrtcGetErrorString returns a static NUL-terminated string for any code.
        let text = unsafe { CStr::from_ptr((self.error)(status)) }.to_string_lossy();
        Err(format!("{call}: {text}"))
    }

    /// Compiles `source` for `target` (`sm_80`: the CUBIN; `compute_80`: the PTX, NUL
    /// terminated as the driver loads it). A rejected program's error holds NVRTC's log.
    pub fn compile(&self, source: &str, target: &str) -> Result<Vec<u8>, String> {
        let source = CString::new(source).map_err(|_| "the source holds a NUL byte".to_string())?;
        let options: Vec<CString> = nvrtc_options(target)
            .into_iter()
            .map(|o| CString::new(o).expect("options hold no NUL"))
            .collect();
        let pointers: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
        let mut program: Program = std::ptr::null_mut();
        // SAFETY: `program` is written by the call; `source` and the name are NUL-terminated
        // strings alive for the call; no headers (null arrays with a count of 0).
        let created = unsafe {
            (self.create)(
                &mut program,
                source.as_ptr(),
                c"parcomp.cu".as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        self.status(created, "nvrtcCreateProgram")?;
        let out = self.compiled(program, &pointers, target.starts_with("sm_"));
        // SAFETY: `program` was created above and is destroyed once, here.
        unsafe { (self.destroy)(&mut program) };
        out
    }

    fn compiled(
        &self,
        program: Program,
        options: &[*const c_char],
        cubin: bool,
    ) -> Result<Vec<u8>, String> {
        // SAFETY: for every call below, `program` is a live program; each buffer is sized by
        // NVRTC's own size query before NVRTC writes it.
        unsafe {
            let compiled = (self.compile)(program, options.len() as c_int, options.as_ptr());
            if compiled != 0 {
                let mut size = 0;
                let mut log = String::new();
                if (self.log_size)(program, &mut size) == 0 && size > 0 {
                    let mut bytes = vec![0u8; size];
                    if (self.log)(program, bytes.as_mut_ptr().cast()) == 0 {
                        log = CStr::from_bytes_until_nul(&bytes)
                            .map(|c| c.to_string_lossy().trim_end().to_string())
                            .unwrap_or_default();
                    }
                }
                let why = self.status(compiled, "nvrtcCompileProgram").err().unwrap_or_default();
                return Err(format!("NVRTC rejected it ({why}):\n{log}"));
            }
            let (size_fn, get_fn, what) = if cubin {
                (self.cubin_size, self.cubin, "nvrtcGetCUBIN")
            } else {
                (self.ptx_size, self.ptx, "nvrtcGetPTX")
            };
            let mut size = 0;
            self.status(size_fn(program, &mut size), what)?;
            let mut bytes = vec![0u8; size];
            self.status(get_fn(program, bytes.as_mut_ptr().cast()), what)?;
            Ok(bytes)
        }
    }
}

fn check(status: Status, call: &str) -> Result<(), String> {
    if status == 0 {
        Ok(())
    } else {
        Err(format!("{call} failed with status {status}"))
    }
}
