//! Compiles every kernel a run produced with NVRTC, for sm_80 and sm_90, through parcomp's own
//! CUDA module (the code path a GPU user's program takes), and assembles each PTX with ptxas.
//!
//! CI runs the test suite on OpenCL with `PARCOMP_KERNEL_DUMP=<dir>`, which writes every
//! program source built (the generic kernels, each comprehension's kernels for every type
//! instantiation, the segmented API's monoid kernels) to `<dir>`; then this:
//!
//! ```text
//! PARCOMP_NVRTC=.../libnvrtc.so.12 PARCOMP_PTXAS=.../ptxas \
//!     cargo run --release --features cuda --example verify_cuda_kernels -- <dir>
//! ```
//!
//! Any NVRTC error or warning, a missing CUBIN, or a ptxas failure fails; so does a folder with
//! no kernel in it. The count of programs and of compilations is printed.

use comprehension_runtime::gpu::cuda::{compile, nvrtc_version};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const ARCHS: [(i32, i32); 2] = [(8, 0), (9, 0)];

fn main() -> ExitCode {
    let Some(dir) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: verify_cuda_kernels <folder of .kernel sources>");
        return ExitCode::FAILURE;
    };
    match run(&dir) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("verify_cuda_kernels: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(dir: &Path) -> Result<(), String> {
    let ptxas =
        std::env::var_os("PARCOMP_PTXAS").map_or_else(|| PathBuf::from("ptxas"), PathBuf::from);
    let (major, minor) = nvrtc_version().map_err(|e| e.to_string())?;
    let ptxas_version = Command::new(&ptxas)
        .arg("--version")
        .output()
        .map_err(|e| format!("{} could not be run (set PARCOMP_PTXAS): {e}", ptxas.display()))?;
    let ptxas_version = String::from_utf8_lossy(&ptxas_version.stdout);
    let ptxas_version = ptxas_version.lines().last().unwrap_or("").trim().to_string();
    println!("NVRTC {major}.{minor}; ptxas: {ptxas_version}");
    let mut sources: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "kernel"))
        .collect();
    sources.sort();
    if sources.is_empty() {
        return Err(format!(
            "no kernel sources in {}: run the tests with PARCOMP_KERNEL_DUMP={} first",
            dir.display(),
            dir.display()
        ));
    }
    let scratch = std::env::temp_dir().join(format!("parcomp-ptx-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).map_err(|e| e.to_string())?;
    let mut failures = Vec::new();
    let mut compiled = 0;
    let mut kernels = 0;
    for path in &sources {
        let source =
            std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("?").to_string();
        for arch in ARCHS {
            let sm = format!("sm_{}{}", arch.0, arch.1);
            let what = format!("{} for {sm}", path.display());
            let out = match compile(&source, arch, "") {
                Ok(out) => out,
                Err(e) => {
                    failures.push(format!("{what}: {e}"));
                    continue;
                }
            };
            if !out.log.is_empty() {
                failures.push(format!("{what}: NVRTC warned:\n{}", out.log));
            }
            if out.cubin.is_none() {
                failures.push(format!("{what}: NVRTC gave no CUBIN"));
            }
            if arch == ARCHS[0] {
                kernels += out.ptx.matches(".entry ").count();
            }
            let ptx = scratch.join(format!("{name}.{sm}.ptx"));
            let cubin = scratch.join(format!("{name}.{sm}.cubin"));
            std::fs::write(&ptx, &out.ptx).map_err(|e| e.to_string())?;
            let status = Command::new(&ptxas)
                .arg(format!("-arch={sm}"))
                .arg(&ptx)
                .arg("-o")
                .arg(&cubin)
                .output()
                .map_err(|e| format!("running {}: {e}", ptxas.display()))?;
            if !status.status.success() {
                failures.push(format!(
                    "{what}: ptxas failed:\n{}",
                    String::from_utf8_lossy(&status.stderr)
                ));
                continue;
            }
            compiled += 1;
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    println!(
        "{} programs ({kernels} kernels) compiled by NVRTC and assembled by ptxas for {}: {compiled} of {} compilations passed",
        sources.len(),
        ARCHS.map(|(a, b)| format!("sm_{a}{b}")).join(" and "),
        sources.len() * ARCHS.len()
    );
    if failures.is_empty() {
        Ok(())
    } else {
        for f in &failures {
            eprintln!("{f}\n");
        }
        Err(format!("{} of the compilations failed", failures.len()))
    }
}
