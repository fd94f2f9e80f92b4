//! The `cargo parcomp` command on recordings written here: bundling the recorded binaries,
//! compiling with NVRTC where it is installed (CI sets PARCOMP_NVRTC), listing, checking
//! coverage, and the bad inputs (an empty recording, a damaged record, a program NVRTC rejects,
//! an NVRTC that cannot be loaded).

use comprehension_runtime::gpu::bundle::{program_key, Bundle};
use comprehension_runtime::gpu::record::{encode, Provenance, FOR_GPU, ON_HOST};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const GOOD: &str = "extern \"C\" __global__ void pc_k(int *p) { p[0] = 1; }\n";
const BAD: &str = "extern \"C\" __global__ void pc_k(int *p) { p[0] = undeclared; }\n";

/// A record of `source` for the comprehension `text` at `location`, made for `device`.
fn record(
    source: &str,
    location: &str,
    text: &str,
    device: &str,
    binary: Option<&[u8]>,
) -> Vec<u8> {
    let types = "elements u64".into();
    let provenance = Provenance { location: location.into(), text: text.into(), types };
    encode(program_key(source), &provenance, source, device, binary)
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cargo-parcomp-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn tool(args: &[&str]) -> (Output, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-parcomp")).args(args).output().unwrap();
    let text =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out, text)
}

fn write_recording(path: &Path, records: &[Vec<u8>]) {
    std::fs::write(path, records.concat()).unwrap();
}

#[test]
fn recorded_binaries_are_bundled_listed_and_checked() {
    let dir = scratch("recorded");
    let rec = dir.join("k.rec");
    let pcb = dir.join("k.pcb");
    write_recording(
        &rec,
        &[
            record(
                GOOD,
                "src/main.rs:3:9",
                "par![x | x <- 0..n]",
                "opencl-00ab",
                Some(b"a device binary"),
            ),
            record(GOOD, "src/main.rs:3:9", "par![x | x <- 0..n]", FOR_GPU, None),
            record(BAD, "src/lib.rs:7:5", "par_sum![y | y <- v]", FOR_GPU, None),
            // A comprehension that ran on the host only: its site is accounted for.
            record("", "src/host.rs:2:2", "par![a | a <- &atomics]", ON_HOST, None),
        ],
    );
    // `cargo parcomp ...` passes `parcomp` first.
    let (out, text) =
        tool(&["parcomp", "bundle", rec.to_str().unwrap(), "-o", pcb.to_str().unwrap()]);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("3 programs, 1 binaries"), "{text}");
    let bytes = std::fs::read(&pcb).unwrap();
    let bundle = Bundle::parse("k.pcb", &bytes).unwrap();
    assert_eq!(bundle.entries().len(), 1);
    assert_eq!(bundle.entries()[0].target, "opencl-00ab");
    assert_eq!(bundle.entries()[0].binary, b"a device binary");
    let mut sites =
        vec![(program_key(GOOD), "src/main.rs:3:9"), (program_key(""), "src/host.rs:2:2")];
    sites.sort();
    assert_eq!(bundle.sites(), sites);

    let (out, text) = tool(&["list", pcb.to_str().unwrap()]);
    assert!(out.status.success(), "{text}");
    assert!(text.contains(&format!("{:032x} opencl-00ab", program_key(GOOD))), "{text}");

    // Coverage: the OpenCL device has one of the two programs; a GPU has none.
    let (out, text) = tool(&["check", pcb.to_str().unwrap(), rec.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("missing for opencl-00ab"), "{text}");
    assert!(text.contains("src/lib.rs:7:5 par_sum![y | y <- v]"), "{text}");
    assert!(text.contains("1 missing"), "{text}");
    assert!(!text.contains("src/host.rs"), "{text}");
    let (out, text) =
        tool(&["check", pcb.to_str().unwrap(), rec.to_str().unwrap(), "--target", "sm_90"]);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("2 missing"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_inputs_are_clear_errors() {
    let dir = scratch("bad");
    let rec = dir.join("empty.rec");
    let pcb = dir.join("k.pcb");
    std::fs::write(&rec, b"").unwrap();
    let (out, text) = tool(&["bundle", rec.to_str().unwrap(), "-o", pcb.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("holds no program") && text.contains("PARCOMP_KERNEL_RECORD="), "{text}");
    assert!(!pcb.exists());

    // A damaged record is skipped, saying where; the rest is bundled.
    let good = record(GOOD, "a.rs:1:1", "par![..]", "opencl-1", Some(b"bin"));
    let mut cut = record(BAD, "b.rs:1:1", "par![..]", "opencl-1", Some(b"bin"));
    cut.truncate(cut.len() / 2);
    cut.push(b'\n');
    write_recording(&rec, &[cut, good]);
    let (out, text) = tool(&["bundle", rec.to_str().unwrap(), "-o", pcb.to_str().unwrap()]);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("warning: skipped the record at byte 0"), "{text}");
    assert!(text.contains("1 programs, 1 binaries"), "{text}");

    // Nothing to bundle without --cuda when no device built a binary.
    let gpu_only = record(GOOD, "a.rs:1:1", "par![..]", FOR_GPU, None);
    write_recording(&rec, &[gpu_only]);
    let (out, text) = tool(&["bundle", rec.to_str().unwrap(), "-o", pcb.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("pass --cuda"), "{text}");

    // An NVRTC that cannot be loaded.
    let (out, text) = tool(&[
        "bundle",
        rec.to_str().unwrap(),
        "-o",
        pcb.to_str().unwrap(),
        "--cuda",
        "--nvrtc",
        "/nowhere/libnvrtc.so.12",
    ]);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("NVRTC could not be loaded from /nowhere/libnvrtc.so.12"), "{text}");

    // A bundle that is not one.
    std::fs::write(&pcb, b"not a bundle").unwrap();
    let (out, text) = tool(&["list", pcb.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("is not a parcomp kernel bundle"), "{text}");
    let (out, text) = tool(&["frobnicate"]);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("usage:"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// With NVRTC (CI installs the wheel and sets PARCOMP_NVRTC): a CUBIN per architecture and a
/// PTX, a program NVRTC rejects named with its site while the rest is bundled.
#[test]
fn cuda_bundles_are_compiled_by_nvrtc() {
    let Some(nvrtc) = std::env::var_os("PARCOMP_NVRTC").filter(|p| !p.is_empty()) else {
        eprintln!("skipped: PARCOMP_NVRTC is not set (no NVRTC to compile with)");
        return;
    };
    let dir = scratch("cuda");
    let rec = dir.join("k.rec");
    let pcb = dir.join("k.pcb");
    write_recording(
        &rec,
        &[
            record(GOOD, "src/main.rs:3:9", "par![x | x <- 0..n]", FOR_GPU, None),
            record(BAD, "src/lib.rs:7:5", "par_sum![y | y <- v]", FOR_GPU, None),
            // Made for an OpenCL CPU device: not compiled for CUDA.
            record("int x;", "src/cpu.rs:1:1", "par![..]", "opencl-1", Some(b"b")),
        ],
    );
    let nvrtc = nvrtc.to_str().unwrap();
    let (out, text) = tool(&[
        "bundle",
        rec.to_str().unwrap(),
        "-o",
        pcb.to_str().unwrap(),
        "--arch",
        "sm_80,sm_90",
        "--nvrtc",
        nvrtc,
        "--jobs",
        "2",
    ]);
    // The rejected program is named, with its site and NVRTC's log; the rest is bundled.
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("NVRTC rejected program"), "{text}");
    assert!(text.contains("used by src/lib.rs:7:5 par_sum![y | y <- v]"), "{text}");
    assert!(text.contains("undeclared"), "{text}");
    let bytes = std::fs::read(&pcb).unwrap();
    let bundle = Bundle::parse("k.pcb", &bytes).unwrap();
    assert!(bundle.compilers.contains("NVRTC"), "{}", bundle.compilers);
    let targets: Vec<&str> = bundle.program(program_key(GOOD)).iter().map(|e| e.target).collect();
    assert_eq!(targets, ["compute_80", "sm_80", "sm_90"]);
    for e in bundle.program(program_key(GOOD)) {
        if e.target.starts_with("sm_") {
            assert_eq!(&e.binary[..4], b"\x7fELF", "a CUBIN is an ELF file");
        } else {
            let ptx = String::from_utf8_lossy(e.binary);
            assert!(ptx.contains(".target sm_80") && ptx.ends_with('\0'), "{ptx}");
        }
    }
    assert!(bundle.program(program_key(BAD)).is_empty());
    assert!(bundle.program(program_key("int x;")).iter().all(|e| e.target == "opencl-1"));
    // The default architectures: the four every NVRTC 12 knows, and the newer ones it knows.
    let (out, text) = tool(&[
        "bundle",
        rec.to_str().unwrap(),
        "-o",
        pcb.to_str().unwrap(),
        "--cuda",
        "--nvrtc",
        nvrtc,
    ]);
    assert_eq!(out.status.code(), Some(2), "{text}");
    let bytes = std::fs::read(&pcb).unwrap();
    let bundle = Bundle::parse("k.pcb", &bytes).unwrap();
    let targets: Vec<&str> = bundle.program(program_key(GOOD)).iter().map(|e| e.target).collect();
    for t in ["compute_80", "sm_80", "sm_86", "sm_89", "sm_90"] {
        assert!(targets.contains(&t), "{t} not in {targets:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
