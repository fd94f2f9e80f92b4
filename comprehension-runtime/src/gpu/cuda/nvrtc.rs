//! NVRTC: the kernel source compiled for one architecture, to PTX and (for a real `sm_XY`) a
//! CUBIN. The CUDA device builds every program through [`compile`]; the CI check that every
//! kernel of the test suite compiles for sm_80 and sm_90 calls it too, so both take the same
//! path.

use super::super::device::{DeviceError, DeviceErrorKind};
use cudarc::nvrtc::{result, sys};
use std::ffi::{c_char, CStr, CString};
use std::sync::OnceLock;

/// What NVRTC made of a program.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The PTX.
    pub ptx: String,
    /// The CUBIN, when the architecture was a real one (`sm_XY`).
    pub cubin: Option<Vec<u8>>,
    /// NVRTC's log (warnings; empty when clean).
    pub log: String,
}

/// The options every program is compiled with, for architecture `sm_{major}{minor}`
/// (`bundle::nvrtc_options`, which `cargo parcomp bundle` compiles with too).
pub fn options(arch: (i32, i32)) -> Vec<String> {
    super::super::bundle::nvrtc_options(&format!("sm_{}{}", arch.0, arch.1))
}

/// Whether NVRTC can be loaded, or why not. `PARCOMP_NVRTC` may name the library file
/// (`.../nvidia/cuda_nvrtc/lib/libnvrtc.so.12`, as the `nvidia-cuda-nvrtc-cu12` Python package
/// installs it); otherwise the dynamic loader's search applies (`LD_LIBRARY_PATH`).
pub fn nvrtc_available() -> Result<(), DeviceError> {
    static FOUND: OnceLock<Result<(), String>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            let mut preloaded = String::new();
            if let Some(path) = std::env::var_os("PARCOMP_NVRTC").filter(|p| !p.is_empty()) {
                // SAFETY: loading a library runs its initialisers; NVRTC's have no
                // preconditions. It stays loaded for the process (forgotten), so that cudarc's
                // load by the same SONAME finds this copy.
                match unsafe { libloading::Library::new(&path) } {
                    Ok(library) => std::mem::forget(library),
                    Err(e) => {
                        return Err(format!(
                            "PARCOMP_NVRTC={} could not be loaded: {e}",
                            path.to_string_lossy()
                        ))
                    }
                }
                preloaded = format!(" (PARCOMP_NVRTC={})", path.to_string_lossy());
            }
            // SAFETY: only tries to `dlopen` each candidate name and closes it; never calls
            // into the library, never panics.
            if unsafe { sys::is_culib_present() } {
                Ok(())
            } else {
                Err(format!(
                    "no NVRTC to compile kernels with{preloaded}: searched for {} on the \
                     loader's path (LD_LIBRARY_PATH); install the CUDA toolkit's NVRTC, or \
                     `pip install nvidia-cuda-nvrtc-cu12` and set PARCOMP_NVRTC to its \
                     libnvrtc.so.12; or precompile the programs into a kernel bundle \
                     (`cargo parcomp bundle`, embedded with `parcomp::kernel_bundle!`)",
                    super::library_names("nvrtc")
                ))
            }
        })
        .clone()
        .map_err(|m| DeviceError::new(DeviceErrorKind::Unavailable, m))
}

/// NVRTC's version, `(major, minor)`.
pub fn nvrtc_version() -> Result<(i32, i32), DeviceError> {
    nvrtc_available()?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: NVRTC is loadable (checked above); nvrtcVersion writes two ints through
    // pointers valid for the call.
    unsafe { sys::nvrtcVersion(&mut major, &mut minor) }.result().map_err(|e| {
        DeviceError::new(DeviceErrorKind::Unavailable, format!("nvrtcVersion: {e}"))
    })?;
    Ok((major, minor))
}

/// Compiles `source` for `sm_{arch.0}{arch.1}` with `options` (and `extra`, space-separated
/// NVRTC options): a rejected program is a [`DeviceErrorKind::Build`] error with NVRTC's log.
pub fn compile(source: &str, arch: (i32, i32), extra: &str) -> Result<Compiled, DeviceError> {
    nvrtc_available()?;
    let build = |m: String| DeviceError::new(DeviceErrorKind::Build, m);
    let source =
        CString::new(source).map_err(|_| build("the source contains a NUL byte".into()))?;
    let name = CString::new("parcomp.cu").expect("no NUL");
    let program = result::create_program(&source, Some(&name))
        .map_err(|e| build(format!("nvrtcCreateProgram: {e}")))?;
    let mut opts = options(arch);
    opts.extend(extra.split_whitespace().map(str::to_string));
    // SAFETY: for every NVRTC call below, `program` is a live program created above and
    // destroyed once, at the end; every buffer passed is sized by NVRTC's own size query.
    let compiled = unsafe { result::compile_program(program, &opts) };
    // SAFETY: as above.
    let log = unsafe { result::get_program_log(program) }
        .map(|chars| {
            // SAFETY: NVRTC's log is NUL-terminated (its size includes the NUL).
            unsafe { CStr::from_ptr(chars.as_ptr()) }.to_string_lossy().trim_end().to_string()
        })
        .unwrap_or_default();
    let out = (|| {
        compiled.map_err(|e| build(format!("NVRTC rejected the program ({e}):\n{log}")))?;
        // SAFETY: as above.
        let ptx =
            unsafe { result::get_ptx(program) }.map_err(|e| build(format!("nvrtcGetPTX: {e}")))?;
        // SAFETY: the PTX NVRTC returns is NUL-terminated.
        let ptx = unsafe { CStr::from_ptr(ptx.as_ptr()) }.to_string_lossy().into_owned();
        let mut size = 0usize;
        // SAFETY: as above; `size` is a live `usize` NVRTC writes.
        unsafe { sys::nvrtcGetCUBINSize(program, &mut size) }
            .result()
            .map_err(|e| build(format!("nvrtcGetCUBINSize: {e}")))?;
        let cubin = if size > 0 {
            let mut bytes = vec![0u8; size];
            // SAFETY: as above; `bytes` holds the `size` bytes NVRTC said the CUBIN takes.
            unsafe { sys::nvrtcGetCUBIN(program, bytes.as_mut_ptr().cast::<c_char>()) }
                .result()
                .map_err(|e| build(format!("nvrtcGetCUBIN: {e}")))?;
            Some(bytes)
        } else {
            None
        };
        Ok(Compiled { ptx, cubin, log: log.clone() })
    })();
    // SAFETY: as above; the program is not used after this.
    let _ = unsafe { result::destroy_program(program) };
    out
}
