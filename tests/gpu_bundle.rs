//! Kernel bundles across processes: a run records its programs (`PARCOMP_KERNEL_RECORD`), a
//! bundle is made of the recording, and a later process takes every program from the bundle and
//! compiles none; a program the bundle lacks follows `PARCOMP_KERNEL_MISS`; a damaged bundle is
//! an error naming it. Each case runs this test binary again as a child process with its own
//! environment (as `gpu_process.rs` does) and reads what it printed.

mod support;

use parcomp::kernels::{parse_recording, BundleWriter};
use parcomp::segmented::{Max, Monoid, Sum};
use parcomp::{par_sum, trace, Backend};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

// Embedded in every process of this binary: a bundle with no program, beside those the
// children name in PARCOMP_KERNEL_BUNDLE.
parcomp::kernel_bundle!("data/empty.pcb");

/// The child test `name` with `env`, the disk cache off.
fn command(name: &str, env: &[(&str, &str)]) -> Command {
    let mut command = support::child_command(name, &[("PARCOMP_CACHE_DIR", "off")]);
    command.envs(env.iter().copied());
    command
}

fn child(name: &str, env: &[(&str, &str)]) -> String {
    let output: Output = command(name, env).output().expect("the test binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the child failed:\n{stdout}\n{stderr}");
    stdout
}

/// The value of `name=` on the line the child printed (libtest prints the test's name first).
fn field(stdout: &str, name: &str) -> String {
    let line = stdout.lines().find(|l| l.contains("result ")).unwrap_or_else(|| panic!("{stdout}"));
    let at = line.find(&format!(" {name}=")).unwrap_or_else(|| panic!("no {name} in {line}"));
    let rest = &line[at + name.len() + 2..];
    let end = if name == "message" { rest.len() } else { rest.find(' ').unwrap_or(rest.len()) };
    rest[..end].to_string()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("parcomp-bundle-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn want(n: u64) -> u64 {
    (0..n).map(|x| (x..n).map(|y| x ^ y).sum::<u64>()).sum()
}

/// Runs one comprehension on OpenCL (forced) and prints where its programs came from, or the
/// message it failed with.
#[test]
#[ignore = "run by the bundle tests"]
fn child_run() {
    if !support::is_child() {
        return;
    }
    let n = 2000u64;
    let ran = std::panic::catch_unwind(|| {
        trace::record(|| {
            parcomp::with_backend(Backend::OpenCl, || par_sum![x ^ y | x <- 0..n, y <- x..n])
        })
    });
    match ran {
        Ok((sum, runs)) => {
            assert_eq!(sum, want(n));
            let on = runs[0].backend;
            let reason = runs[0].reason.clone().unwrap_or_default();
            match parcomp::gpu_stats().filter(|_| on == Backend::OpenCl) {
                Some(s) => println!(
                    "result backend={on} compiled={} loaded={} bundled={}",
                    s.programs_compiled, s.programs_loaded, s.programs_bundled
                ),
                None => println!("result backend={on} message={reason}"),
            }
        }
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            println!("result backend=panic message={}", message.replace('\n', " "));
        }
    }
}

/// Prints the device-capable sites of this binary that no bundle covers.
#[test]
#[ignore = "run by the bundle tests"]
fn child_missing() {
    if !support::is_child() {
        return;
    }
    let missing: Vec<String> = parcomp::kernels::missing()
        .unwrap()
        .iter()
        .map(|s| format!("{}:{}:{}", s.file, s.line, s.column))
        .collect();
    println!("result missing={}", missing.join(","));
}

/// Runs two of the segmented API's monoids where `PARCOMP_BACKEND` puts them and prints where
/// they ran and what the device compiled.
#[test]
#[ignore = "run by the bundle tests"]
fn child_monoids() {
    if !support::is_child() {
        return;
    }
    // The device's counts of each run (`gpu_stats` is the last device run's), summed; the
    // parent forces one backend for both calls and checks where they ran.
    let (mut compiled, mut bundled) = (0, 0);
    let mut count = || {
        if let Some(s) = parcomp::gpu_stats() {
            compiled += s.programs_compiled;
            bundled += s.programs_bundled;
        }
    };
    let (results, runs) = trace::record(|| {
        let rows = parcomp::Jagged::from_lengths(&[3, 0, 2], vec![1u64, 2, 3, 40, 50]).unwrap();
        let sums = Sum.reduce_rows(&rows);
        count();
        let highest = Max.scan_inclusive(&[1.5f64, -2.0, 7.25, 3.0]);
        count();
        (sums, highest)
    });
    assert_eq!(results, (vec![6, 0, 90], vec![1.5, 1.5, 7.25, 7.25]));
    let on: Vec<String> = runs.iter().map(|r| r.backend.to_string()).collect();
    println!("result backend={} compiled={compiled} bundled={bundled}", on.join(","));
}

fn bundle_of(recording: &Path, out: &Path) -> usize {
    let rec = parse_recording(&std::fs::read(recording).unwrap());
    assert!(rec.damaged.is_empty(), "{:?}", rec.damaged);
    let mut writer = BundleWriter::new("the OpenCL device of the recording");
    for program in &rec.programs {
        for site in &program.sites {
            let location = site.split_once(' ').unwrap().0;
            if location != "-" {
                writer.add_site(program.program, location);
            }
        }
        for (target, binary) in &program.binaries {
            writer.add(program.program, target.clone(), binary.clone());
        }
    }
    std::fs::write(out, writer.to_bytes()).unwrap();
    writer.len()
}

#[test]
fn a_recorded_bundle_serves_every_program_and_nothing_is_compiled() {
    if !support::present(Backend::OpenCl) {
        return;
    }
    let dir = scratch("serves");
    let rec = dir.join("kernels.rec");
    let pcb = dir.join("kernels.pcb");
    let record = [("PARCOMP_KERNEL_RECORD", rec.to_str().unwrap())];
    // Recording: the comprehension's program and the generic kernels, compiled (no cache).
    let out = child("child_run", &record);
    assert_eq!((field(&out, "compiled"), field(&out, "bundled")), ("2".into(), "0".into()));
    let recording = parse_recording(&std::fs::read(&rec).unwrap());
    // What the device built, with its binaries; and what a GPU would build (the comprehension's
    // program for a GPU, the generic kernels, the sort's), recorded however it ran.
    let built: Vec<_> = recording
        .programs
        .iter()
        .filter(|p| p.devices.iter().any(|d| d.starts_with("opencl-")))
        .collect();
    assert_eq!(built.len(), 2);
    assert!(built.iter().all(|p| p.binaries.len() == 1));
    let for_gpu =
        recording.programs.iter().filter(|p| p.devices.iter().any(|d| d == "gpu")).count();
    assert_eq!(for_gpu, 3);
    let sites: Vec<&String> = recording.programs.iter().flat_map(|p| &p.sites).collect();
    assert!(
        sites.iter().any(|s| s.contains("par_sum![x ^ y | x <- 0..n, y <- x..n]")
            && s.contains("tests/gpu_bundle.rs")),
        "{sites:?}"
    );
    assert!(sites.iter().any(|s| s.contains("generic kernels")), "{sites:?}");
    let types: Vec<&String> = recording.programs.iter().flat_map(|p| &p.types).collect();
    assert!(types.iter().any(|t| t.contains("u64")), "{types:?}");
    assert_eq!(bundle_of(&rec, &pcb), 2);

    // Coverage before deployment: the recorded site is missing without the bundle, covered
    // with it.
    let run_site = recording
        .programs
        .iter()
        .flat_map(|p| &p.sites)
        .find_map(|s| s.split_once(' ').filter(|(l, _)| l.contains("gpu_bundle.rs")))
        .unwrap()
        .0
        .to_string();
    let without = field(&child("child_missing", &[]), "missing");
    assert!(without.split(',').any(|l| l == run_site), "{run_site} not in {without}");
    let with = field(
        &child("child_missing", &[("PARCOMP_KERNEL_BUNDLE", pcb.to_str().unwrap())]),
        "missing",
    );
    assert!(!with.split(',').any(|l| l == run_site), "{run_site} in {with}");

    // With the bundle, nothing is compiled, even where compiling is refused.
    let bundle =
        [("PARCOMP_KERNEL_BUNDLE", pcb.to_str().unwrap()), ("PARCOMP_KERNEL_MISS", "error")];
    let out = child("child_run", &bundle);
    assert_eq!(field(&out, "backend"), "opencl", "{out}");
    assert_eq!((field(&out, "compiled"), field(&out, "bundled")), ("0".into(), "2".into()));

    // A bundle entry the driver refuses is a miss: compiled again (the default policy).
    let mut bytes = std::fs::read(&pcb).unwrap();
    let broken = dir.join("refused.pcb");
    let parsed_len = bytes.len();
    let mut writer = BundleWriter::new("garbage binaries");
    for e in parcomp::kernels::Bundle::parse("x", &bytes).unwrap().entries() {
        writer.add(e.program, e.target, b"not a binary".to_vec());
    }
    std::fs::write(&broken, writer.to_bytes()).unwrap();
    let out = child("child_run", &[("PARCOMP_KERNEL_BUNDLE", broken.to_str().unwrap())]);
    assert_eq!((field(&out, "compiled"), field(&out, "bundled")), ("2".into(), "0".into()));

    // A flipped byte: an error at the first use, naming the bundle.
    bytes[parsed_len / 2] ^= 0x40;
    let corrupt = dir.join("corrupt.pcb");
    std::fs::write(&corrupt, &bytes).unwrap();
    let out = child("child_run", &[("PARCOMP_KERNEL_BUNDLE", corrupt.to_str().unwrap())]);
    assert_eq!(field(&out, "backend"), "panic", "{out}");
    let message = field(&out, "message");
    assert!(
        message.contains(&format!("the kernel bundle `{}` cannot be used", corrupt.display())),
        "{message}"
    );
    assert!(message.contains("checksum"), "{message}");
    // Truncated.
    std::fs::write(&corrupt, &std::fs::read(&pcb).unwrap()[..parsed_len - 100]).unwrap();
    let out = child("child_run", &[("PARCOMP_KERNEL_BUNDLE", corrupt.to_str().unwrap())]);
    assert!(field(&out, "message").contains("cannot be used"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_program_the_bundles_lack_follows_the_miss_policy() {
    if !support::present(Backend::OpenCl) {
        return;
    }
    // `error`: the run fails, naming the comprehension, its types, the device and the remedy.
    let out = child("child_run", &[("PARCOMP_KERNEL_MISS", "error")]);
    assert_eq!(field(&out, "backend"), "panic", "{out}");
    let message = field(&out, "message");
    for part in [
        "par_sum![x ^ y | x <- 0..n, y <- x..n]",
        "tests/gpu_bundle.rs:",
        "u64",
        "opencl-",
        "is not precompiled",
        "no kernel bundle holds it (`data/empty.pcb`)",
        "PARCOMP_KERNEL_RECORD=",
        "cargo parcomp bundle",
    ] {
        assert!(message.contains(part), "`{part}` is not in: {message}");
    }
    // `host`: the comprehension runs on the host, and the trace says why.
    let out = child("child_run", &[("PARCOMP_KERNEL_MISS", "host")]);
    assert_eq!(field(&out, "backend"), "rayon", "{out}");
    assert!(field(&out, "message").contains("is not precompiled"), "{out}");
    // `compile`, the default: compiled.
    let out = child("child_run", &[("PARCOMP_KERNEL_MISS", "compile")]);
    assert_eq!(field(&out, "compiled"), "2", "{out}");
}

/// The segmented API's monoids record the programs a GPU builds for them wherever they run, as a
/// comprehension does: a recording made on rayon holds the very sources a device compiles, and
/// a bundle of a device's recording serves them with nothing compiled.
#[test]
fn the_segmented_api_records_what_a_gpu_builds_on_any_backend() {
    if !support::present(Backend::OpenCl) {
        return;
    }
    let dir = scratch("monoids");
    let on_rayon = dir.join("rayon.rec");
    let record = |rec: &Path, backend| {
        child(
            "child_monoids",
            &[("PARCOMP_KERNEL_RECORD", rec.to_str().unwrap()), ("PARCOMP_BACKEND", backend)],
        )
    };
    let out = record(&on_rayon, "rayon");
    assert_eq!(field(&out, "backend"), "rayon,rayon", "{out}");
    let host = parse_recording(&std::fs::read(&on_rayon).unwrap());
    assert!(host.damaged.is_empty(), "{:?}", host.damaged);
    // Nothing ran on a device, so every program is one a GPU would build, with no binary.
    assert!(host.programs.iter().all(|p| p.devices == ["gpu"] && p.binaries.is_empty()));
    let program_of = |rec: &parcomp::kernels::Recording, what: &str| {
        rec.programs
            .iter()
            .find(|p| p.sites.iter().any(|s| s.contains(what)))
            .unwrap_or_else(|| panic!("no program for {what} in {:?}", rec.programs))
            .program
    };
    let monoids = ["the segmented API's `add` over `u64`", "the segmented API's `max` over `f64`"];
    let generic = "the runtime's generic kernels";

    // On the device: the same programs, compiled from the same sources (PoCL has f64, as a GPU
    // does), so the same keys.
    let on_device = dir.join("opencl.rec");
    let out = record(&on_device, "opencl");
    assert_eq!(field(&out, "backend"), "opencl,opencl", "{out}");
    assert_eq!(field(&out, "compiled"), "3", "{out}");
    let device = parse_recording(&std::fs::read(&on_device).unwrap());
    for what in monoids.iter().chain([&generic]) {
        assert_eq!(program_of(&host, what), program_of(&device, what), "{what}");
    }

    // A bundle of the device's recording: nothing compiled, even where compiling is refused.
    let pcb = dir.join("kernels.pcb");
    assert_eq!(bundle_of(&on_device, &pcb), 3);
    let bundle = [
        ("PARCOMP_KERNEL_BUNDLE", pcb.to_str().unwrap()),
        ("PARCOMP_KERNEL_MISS", "error"),
        ("PARCOMP_BACKEND", "opencl"),
    ];
    let out = child("child_monoids", &bundle);
    assert_eq!(field(&out, "backend"), "opencl,opencl", "{out}");
    assert_eq!((field(&out, "compiled"), field(&out, "bundled")), ("0".into(), "3".into()));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn two_processes_record_into_one_file() {
    if !support::present(Backend::OpenCl) {
        return;
    }
    let dir = scratch("two");
    let rec = dir.join("kernels.rec");
    let env = [("PARCOMP_KERNEL_RECORD", rec.to_str().unwrap())];
    let children: Vec<_> =
        (0..4).map(|_| command("child_run", &env).spawn().expect("a child starts")).collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let bytes = std::fs::read(&rec).unwrap();
    let recording = parse_recording(&bytes);
    assert!(recording.damaged.is_empty(), "{:?}", recording.damaged);
    // Four processes' records of the same programs (each process records each once), merged.
    let records = bytes.windows(22).filter(|w| w == b"parcomp-kernel-record ").count();
    let distinct: usize = recording.programs.iter().map(|p| p.devices.len()).sum();
    assert_eq!(records, 4 * distinct, "{records} records of {distinct} programs and devices");
    assert!(recording.programs.len() >= 3);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_embedded_bundle_is_registered_and_current() {
    let bundles = parcomp::kernels::loaded().unwrap();
    let embedded = bundles.iter().find(|b| b.name == "data/empty.pcb").expect("embedded");
    assert!(embedded.entries().is_empty());
    // The fixture is what the writer makes: a change of the format or of the version makes
    // it again (`tests/data/README.md`).
    let made = BundleWriter::new("a test fixture: no program").to_bytes();
    assert!(
        made == include_bytes!("data/empty.pcb"),
        "tests/data/empty.pcb is out of date: write BundleWriter::new(\"a test fixture: no \
         program\").to_bytes() there"
    );
}
