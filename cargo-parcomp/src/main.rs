//! `cargo parcomp`: parcomp's device programs compiled ahead of time.
//!
//! ```text
//! PARCOMP_KERNEL_RECORD=kernels.rec cargo run        # any backend: records the programs
//! cargo parcomp bundle kernels.rec -o kernels.pcb --cuda
//! cargo parcomp check kernels.pcb kernels.rec        # what the bundle lacks, before shipping
//! cargo parcomp list kernels.pcb
//! ```
//!
//! `bundle` compiles every recorded program with NVRTC (no GPU needed: `pip install
//! nvidia-cuda-nvrtc-cu12`) into a CUBIN for each architecture asked for and a PTX for GPUs
//! newer than all of them, and keeps the binaries the recording's devices built (an OpenCL
//! device's own). The bundle goes into the binary with `parcomp::kernel_bundle!("kernels.pcb")`.

mod nvrtc;

use comprehension_runtime::gpu::bundle::{cuda_target, Bundle, BundleWriter};
use comprehension_runtime::gpu::device::DeviceInfo;
use comprehension_runtime::gpu::record::{parse, Recorded, Recording, FOR_GPU};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const USAGE: &str = "\
usage:
  cargo parcomp bundle RECORDING... -o BUNDLE [--cuda] [--arch sm_80,sm_90,...] [--ptx compute_80|none]
                       [--nvrtc PATH/libnvrtc.so.12] [--jobs N] [--all-programs]
      Makes a kernel bundle of the programs recorded with PARCOMP_KERNEL_RECORD: with --cuda,
      each program made for a GPU compiled by NVRTC for every architecture of --arch (default
      sm_80, sm_86, sm_89, sm_90, and sm_100, sm_120 where NVRTC knows them) and as PTX for
      newer GPUs (default: the lowest architecture's); --all-programs compiles those an OpenCL
      CPU device built too. With or without --cuda, the binaries the recording's devices built.
  cargo parcomp check BUNDLE RECORDING... [--target sm_90|opencl-...]...
      Lists the recorded programs the bundle has no binary for, for each target (default:
      every target the bundle holds); fails if there is one.
  cargo parcomp list BUNDLE
      Prints the bundle's header and entries.
  cargo parcomp extract BUNDLE FOLDER
      Writes each entry to FOLDER as <program>.<target>.cubin (CUBINs), .ptx (PTX) or .bin, to
      check them with cuobjdump or ptxas.";

/// The architectures a CUDA bundle is built for unless `--arch` says otherwise; the last two
/// only where NVRTC knows them.
const DEFAULT_ARCHS: &[i32] = &[80, 86, 89, 90, 100, 120];
const REQUIRED_ARCHS: usize = 4;

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    // `cargo parcomp ...` runs `cargo-parcomp parcomp ...`.
    if args.first().is_some_and(|a| a == "parcomp") {
        args.remove(0);
    }
    let result = match args.first().map(String::as_str) {
        Some("bundle") => bundle(&args[1..]),
        Some("check") => check(&args[1..]),
        Some("list") => list(&args[1..]),
        Some("extract") => extract(&args[1..]),
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            Ok(ExitCode::SUCCESS)
        }
        _ => Err(format!("a command is needed\n{USAGE}")),
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The command line's options: values after their flags, the rest positional.
#[derive(Default)]
struct Options {
    positional: Vec<String>,
    out: Option<PathBuf>,
    cuda: bool,
    archs: Option<String>,
    ptx: Option<String>,
    nvrtc: Option<PathBuf>,
    jobs: Option<usize>,
    targets: Vec<String>,
    all_programs: bool,
}

fn options(args: &[String]) -> Result<Options, String> {
    let mut o = Options::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value =
            |flag: &str| it.next().cloned().ok_or_else(|| format!("{flag} needs a value\n{USAGE}"));
        match a.as_str() {
            "-o" | "--out" => o.out = Some(value(a)?.into()),
            "--cuda" => o.cuda = true,
            "--all-programs" => o.all_programs = true,
            "--arch" => {
                o.archs = Some(value(a)?);
                o.cuda = true;
            }
            "--ptx" => o.ptx = Some(value(a)?),
            "--nvrtc" => o.nvrtc = Some(value(a)?.into()),
            "--jobs" => {
                let v = value(a)?;
                o.jobs = Some(v.parse().map_err(|_| format!("--jobs {v}: not a number"))?);
            }
            "--target" => o.targets.push(value(a)?),
            flag if flag.starts_with('-') => return Err(format!("unknown option {flag}\n{USAGE}")),
            _ => o.positional.push(a.clone()),
        }
    }
    Ok(o)
}

/// Reads and merges the recordings at `paths`, saying what could not be read.
fn read_recordings(paths: &[String]) -> Result<Recording, String> {
    if paths.is_empty() {
        return Err(format!("no recording given\n{USAGE}"));
    }
    let mut bytes = Vec::new();
    for path in paths {
        let mut b = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
        if !b.is_empty() && !b.ends_with(b"\n") {
            b.push(b'\n');
        }
        bytes.extend(b);
    }
    let recording = parse(&bytes);
    for damaged in &recording.damaged {
        eprintln!("warning: skipped {damaged}");
    }
    for version in &recording.other_versions {
        eprintln!(
            "warning: skipped the records of parcomp {version} (this is {}): record again",
            env!("CARGO_PKG_VERSION")
        );
    }
    if recording.programs.is_empty() {
        return Err(format!(
            "{} holds no program of this parcomp version: run the program with \
             PARCOMP_KERNEL_RECORD={} first (any backend records what its device would build)",
            paths.join(", "),
            paths[0]
        ));
    }
    Ok(recording)
}

fn describe(program: &Recorded) -> String {
    let mut out = format!("program {:032x}", program.program);
    for site in program.sites.iter().take(3) {
        out.push_str(&format!("\n    used by {site}"));
    }
    if program.sites.len() > 3 {
        out.push_str(&format!("\n    and {} other sites", program.sites.len() - 3));
    }
    for types in program.types.iter().take(2) {
        out.push_str(&format!("\n    for {types}"));
    }
    out
}

fn bundle(args: &[String]) -> Result<ExitCode, String> {
    let o = options(args)?;
    let out = o.out.clone().ok_or_else(|| format!("-o BUNDLE is needed\n{USAGE}"))?;
    let recording = read_recordings(&o.positional)?;
    let mut compilers = Vec::new();
    let mut writer = BundleWriter::default();
    let mut recorded = 0;
    for program in &recording.programs {
        for (target, binary) in &program.binaries {
            writer.add(program.program, target.clone(), binary.clone());
            recorded += 1;
        }
    }
    if recorded > 0 {
        compilers.push(format!("{recorded} binaries built by the recording's devices"));
    }
    let mut rejected = 0;
    if o.cuda {
        let library = o.nvrtc.clone().or_else(|| std::env::var_os("PARCOMP_NVRTC").map(Into::into));
        let nvrtc = nvrtc::Nvrtc::load(library.as_deref())?;
        let targets = cuda_targets(&o, nvrtc.archs())?;
        let (major, minor) = nvrtc.version();
        compilers.push(format!("NVRTC {major}.{minor} ({})", targets.join(", ")));
        let jobs = o
            .jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
            .max(1);
        // The programs made for a GPU: assembled for one on any run, or built by a CUDA device
        // (not those made for an OpenCL CPU device's shapes, unless --all-programs).
        let for_gpu = |p: &&Recorded| {
            !p.source.is_empty()
                && (o.all_programs
                    || p.devices.iter().any(|d| d == FOR_GPU || cuda_target(d).is_some()))
        };
        let programs: Vec<&Recorded> = recording.programs.iter().filter(for_gpu).collect();
        let work: Vec<(&Recorded, &str)> =
            programs.iter().flat_map(|p| targets.iter().map(move |t| (*p, t.as_str()))).collect();
        eprintln!(
            "compiling {} programs for {} with NVRTC {major}.{minor} ({jobs} at a time)",
            programs.len(),
            targets.join(", ")
        );
        let next = std::sync::atomic::AtomicUsize::new(0);
        let results: Vec<(usize, Result<Vec<u8>, String>)> = std::thread::scope(|s| {
            let workers: Vec<_> = (0..jobs)
                .map(|_| {
                    s.spawn(|| {
                        let mut done = Vec::new();
                        loop {
                            let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some((program, target)) = work.get(k) else { break };
                            done.push((k, nvrtc.compile(&program.source, target)));
                        }
                        done
                    })
                })
                .collect();
            workers.into_iter().flat_map(|w| w.join().expect("a compile thread panicked")).collect()
        });
        let mut results = results;
        results.sort_by_key(|(k, _)| *k);
        for (k, result) in results {
            let (program, target) = work[k];
            match result {
                Ok(binary) => writer.add(program.program, target, binary),
                Err(log) => {
                    rejected += 1;
                    eprintln!("error: NVRTC rejected {} for {target}: {log}", describe(program));
                }
            }
        }
    }
    // The sites each program serves, for the programs the bundle holds: what
    // `parcomp::kernels::missing()` counts as covered.
    // And the sites that ran on the host only (the empty program): nothing to precompile.
    let held: Vec<&Recorded> = recording
        .programs
        .iter()
        .filter(|p| writer.holds(p.program) || p.source.is_empty())
        .collect();
    for program in held {
        for site in &program.sites {
            match site.split_once(' ') {
                Some(("-", _)) | None => {}
                Some((location, _)) => writer.add_site(program.program, location),
            }
        }
    }
    if writer.is_empty() {
        return Err(
            "nothing to bundle: the recording holds no device binary; pass --cuda to compile \
             its programs with NVRTC"
                .into(),
        );
    }
    writer.set_compilers(compilers.join("; "));
    let bytes = writer.to_bytes();
    write_atomically(&out, &bytes)?;
    println!(
        "{}: {} programs, {} binaries, {} bytes",
        out.display(),
        recording.programs.len(),
        writer.len(),
        bytes.len()
    );
    if rejected > 0 {
        eprintln!("error: {rejected} compilations failed; the bundle holds the rest");
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}

/// The CUDA targets of a bundle: CUBINs for `--arch` (or the defaults NVRTC knows) and PTX
/// for the lowest of them (or `--ptx`).
fn cuda_targets(o: &Options, known: &[i32]) -> Result<Vec<String>, String> {
    let archs: Vec<i32> = match o.archs.as_deref() {
        Some(list) => list
            .split(',')
            .map(|a| {
                let a = a.trim();
                match cuda_target(a) {
                    Some((true, (major, minor))) => Ok((major * 10 + minor) as i32),
                    _ => Err(format!("--arch {a}: not an architecture such as sm_90")),
                }
            })
            .collect::<Result<_, _>>()?,
        // The first four always (an NVRTC that lacks one is refused below), the newer ones
        // where this NVRTC knows them.
        None => DEFAULT_ARCHS
            .iter()
            .enumerate()
            .filter(|&(k, a)| k < REQUIRED_ARCHS || known.contains(a))
            .map(|(_, a)| *a)
            .collect(),
    };
    for a in &archs {
        if !known.contains(a) {
            return Err(format!("this NVRTC cannot compile for sm_{a} (it knows {known:?})"));
        }
    }
    let mut targets: Vec<String> = archs.iter().map(|a| format!("sm_{a}")).collect();
    match o.ptx.as_deref() {
        Some("none") => {}
        Some(ptx) => match cuda_target(ptx) {
            Some((false, _)) => targets.push(ptx.to_string()),
            _ => return Err(format!("--ptx {ptx}: not a virtual architecture such as compute_80")),
        },
        None => {
            if let Some(lowest) = archs.iter().min() {
                targets.push(format!("compute_{lowest}"));
            }
        }
    }
    Ok(targets)
}

fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let partial = path.with_extension(format!("partial{}", std::process::id()));
    std::fs::write(&partial, bytes).and_then(|()| std::fs::rename(&partial, path)).map_err(|e| {
        let _ = std::fs::remove_file(&partial);
        format!("{}: {e}", path.display())
    })
}

fn read_bundle(path: &str) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("{path}: {e}"))
}

fn list(args: &[String]) -> Result<ExitCode, String> {
    let o = options(args)?;
    let [path] = o.positional.as_slice() else {
        return Err(format!("list takes one bundle\n{USAGE}"));
    };
    let bytes = read_bundle(path)?;
    let b = Bundle::parse(path, &bytes).map_err(|e| e.to_string())?;
    println!("{path}: parcomp {}, built by {}", b.parcomp, b.compilers);
    for e in b.entries() {
        println!("{:032x} {:<12} {} bytes", e.program, e.target, e.binary.len());
    }
    Ok(ExitCode::SUCCESS)
}

/// A device of `target`, as the bundle's lookup sees it.
fn device_of(target: &str) -> DeviceInfo {
    let (api, platform) = match cuda_target(target) {
        Some(_) => ("cuda", target.replace("compute_", "sm_")),
        None => ("opencl", String::new()),
    };
    DeviceInfo {
        api,
        name: String::new(),
        vendor: String::new(),
        platform,
        driver: String::new(),
        is_cpu: false,
        fp64: true,
        global_memory: 0,
        max_buffer: 0,
        compute_units: 0,
        peak_bandwidth: None,
    }
}

fn check(args: &[String]) -> Result<ExitCode, String> {
    let o = options(args)?;
    let Some((path, recordings)) = o.positional.split_first() else {
        return Err(format!("check takes a bundle and recordings\n{USAGE}"));
    };
    let bytes = read_bundle(path)?;
    let b = Bundle::parse(path, &bytes).map_err(|e| e.to_string())?;
    let recording = read_recordings(recordings)?;
    let mut targets = o.targets.clone();
    if targets.is_empty() {
        for e in b.entries() {
            if !targets.iter().any(|t| t == e.target) {
                targets.push(e.target.to_string());
            }
        }
    }
    let mut missing = 0;
    for target in &targets {
        let device = device_of(target);
        for program in recording.programs.iter().filter(|p| !p.source.is_empty()) {
            let found = match cuda_target(target) {
                Some(_) => !b.candidates(program.program, &device).is_empty(),
                None => b.program(program.program).iter().any(|e| e.target == target),
            };
            if !found {
                missing += 1;
                println!("missing for {target}: {}", describe(program));
            }
        }
    }
    println!(
        "{path}: {} recorded programs, {} targets ({}), {missing} missing",
        recording.programs.len(),
        targets.len(),
        targets.join(", ")
    );
    Ok(if missing == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

fn extract(args: &[String]) -> Result<ExitCode, String> {
    let o = options(args)?;
    let [path, folder] = o.positional.as_slice() else {
        return Err(format!("extract takes a bundle and a folder\n{USAGE}"));
    };
    let bytes = read_bundle(path)?;
    let b = Bundle::parse(path, &bytes).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(folder).map_err(|e| format!("{folder}: {e}"))?;
    for e in b.entries() {
        let (extension, binary) = match cuda_target(e.target) {
            Some((true, _)) => ("cubin", e.binary),
            // The PTX without the NUL the driver's loader wants.
            Some((false, _)) => ("ptx", e.binary.strip_suffix(b"\0").unwrap_or(e.binary)),
            None => ("bin", e.binary),
        };
        let file = Path::new(folder).join(format!("{:032x}.{}.{extension}", e.program, e.target));
        std::fs::write(&file, binary).map_err(|err| format!("{}: {err}", file.display()))?;
    }
    println!("{folder}: {} entries of {path}", b.entries().len());
    Ok(ExitCode::SUCCESS)
}
