//! Recording the device programs a run builds, for `cargo parcomp bundle`.
//!
//! With `PARCOMP_KERNEL_RECORD=FILE`, each program a process builds (or finds in a bundle or
//! the disk cache) is appended to `FILE` once per comprehension site: its key and source, the
//! site (`file:line:column` and the comprehension's text), the element types it was made for,
//! and the binary the device built, with its target (an OpenCL device's binaries are its own:
//! the bundle keeps them for that device). A record is one `write` to a file opened for
//! appending, which the kernel applies at the end of the file as a whole, so several processes
//! (a test suite's binaries at once) can record into one file. The reader merges the records
//! of a program, and sets aside a damaged one, saying why, rather than giving up.
//!
//! A record is text lines with length-prefixed payloads:
//!
//! ```text
//! parcomp-kernel-record 1 <parcomp version>
//! program <32 hex digits>
//! site <file:line:column> <the comprehension as written, on one line>
//! types <the element types, on one line>
//! device <gpu, or the target of the device that built it>
//! source <length>
//! <the source's bytes>
//! binary <that target> <length>
//! <the binary's bytes>
//! end <32 hex digits>
//! ```

use super::bundle::{location, program_key};
use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::sync::{Mutex, OnceLock};

const HEADER: &str = "parcomp-kernel-record 1 ";

/// Where a program is used: what a record says of it besides its source.
#[derive(Clone, Debug, Default)]
pub struct Provenance {
    /// The comprehension's `file:line:column` (no spaces), or `-` for the runtime's own programs.
    pub location: String,
    /// The comprehension as written, or what the runtime builds the program for (`the runtime's
    /// generic kernels`).
    pub text: String,
    /// The element types it was made for, on one line.
    pub types: String,
}

impl Provenance {
    /// The program of the comprehension at `site`, for `types`.
    pub(crate) fn site(site: &crate::site::Site, types: String) -> Self {
        Provenance { location: location(site), text: site.text.to_string(), types }
    }

    /// A program of the runtime's own, for `what`.
    pub(crate) fn runtime(what: &str) -> Self {
        Provenance { location: "-".into(), text: what.into(), types: String::new() }
    }

    /// The site as a record keeps it: its location, a space, its text.
    fn line(&self) -> String {
        format!("{} {}", self.location, one_line(&self.text))
    }
}

impl std::fmt::Display for Provenance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.location == "-" {
            f.write_str(&self.text)
        } else {
            write!(f, "`{}` at {}", self.text, self.location)
        }
    }
}

/// The recording file of this process, if `PARCOMP_KERNEL_RECORD` names one.
fn target() -> Option<&'static std::path::Path> {
    static PATH: OnceLock<Option<std::path::PathBuf>> = OnceLock::new();
    PATH.get_or_init(|| {
        std::env::var_os("PARCOMP_KERNEL_RECORD").filter(|p| !p.is_empty()).map(Into::into)
    })
    .as_deref()
}

/// Whether this process records its programs.
pub(crate) fn enabled() -> bool {
    target().is_some()
}

/// The device a record names for a program assembled for a GPU on a run that built none; a
/// device that built one is named by its target (`bundle::device_target`).
pub const FOR_GPU: &str = "gpu";

/// The device a record names for a comprehension no device can run with the values it ran
/// with: its source is empty, and its site is accounted for in a bundle (nothing to precompile).
pub const ON_HOST: &str = "host";

/// Appends `source`'s record, once per program, site and device in this process: made for `device`
/// ([`FOR_GPU`], or the target of the device that built it, with its `binary` where there is
/// one). Failing to write is said once on stderr, never fatal.
pub(crate) fn program(provenance: &Provenance, source: &str, device: &str, binary: Option<&[u8]>) {
    let Some(path) = target() else { return };
    static DONE: OnceLock<Mutex<HashSet<(u128, String, String)>>> = OnceLock::new();
    let key = program_key(source);
    let fresh = DONE
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert((key, provenance.location.clone(), device.to_string()));
    if !fresh {
        return;
    }
    let record = encode(key, provenance, source, device, binary);
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut file| file.write_all(&record));
    if let Err(e) = written {
        static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        if !SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
            eprintln!(
                "parcomp: PARCOMP_KERNEL_RECORD: {} could not be written: {e}",
                path.display()
            );
        }
    }
}

/// One line of text: newlines and carriage returns become spaces.
fn one_line(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}

/// The bytes of one record.
pub fn encode(
    key: u128,
    provenance: &Provenance,
    source: &str,
    device: &str,
    binary: Option<&[u8]>,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(source.len() + 256);
    let _ = write!(out, "{HEADER}{}\nprogram {key:032x}\n", env!("CARGO_PKG_VERSION"));
    let _ = writeln!(out, "site {}", provenance.line());
    if !provenance.types.is_empty() {
        let _ = writeln!(out, "types {}", one_line(&provenance.types));
    }
    let device = one_line(device).replace(' ', "_");
    let _ = writeln!(out, "device {device}");
    let _ = writeln!(out, "source {}", source.len());
    out.extend_from_slice(source.as_bytes());
    out.push(b'\n');
    if let Some(bytes) = binary {
        let _ = writeln!(out, "binary {device} {}", bytes.len());
        out.extend_from_slice(bytes);
        out.push(b'\n');
    }
    let _ = writeln!(out, "end {key:032x}");
    out
}

/// A program of a recording, its records merged.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recorded {
    /// Its key ([`program_key`] of its source).
    pub program: u128,
    /// Its source.
    pub source: String,
    /// The sites it serves (`file:line:column`, a space, the comprehension; `-` and what it is
    /// for a program of the runtime's own), each once, in the order first recorded.
    pub sites: Vec<String>,
    /// The element types it was made for, each once.
    pub types: Vec<String>,
    /// The devices it was made for: [`FOR_GPU`], the targets of the devices that built it, or
    /// [`ON_HOST`] for the sites that ran on the host only (the program of the empty source).
    pub devices: Vec<String>,
    /// The binaries devices built of it, by target.
    pub binaries: BTreeMap<String, Vec<u8>>,
}

/// A recording read: its programs by key, and the records that could not be read.
#[derive(Clone, Debug, Default)]
pub struct Recording {
    /// The programs, sorted by key.
    pub programs: Vec<Recorded>,
    /// Each damaged record: where it starts and what is wrong with it.
    pub damaged: Vec<String>,
    /// The parcomp versions that recorded programs other than this one's.
    pub other_versions: Vec<String>,
}

/// Reads a recording (the bytes of a `PARCOMP_KERNEL_RECORD` file).
pub fn parse(bytes: &[u8]) -> Recording {
    let mut programs: BTreeMap<u128, Recorded> = BTreeMap::new();
    let mut recording = Recording::default();
    let mut at = 0;
    while at < bytes.len() {
        match parse_one(bytes, at) {
            Ok((record, version, next)) => {
                at = next;
                if version != env!("CARGO_PKG_VERSION") {
                    if !recording.other_versions.contains(&version) {
                        recording.other_versions.push(version);
                    }
                    continue;
                }
                let entry = programs.entry(record.program).or_insert_with(|| Recorded {
                    program: record.program,
                    source: record.source.clone(),
                    ..Recorded::default()
                });
                for site in record.sites {
                    if !entry.sites.contains(&site) {
                        entry.sites.push(site);
                    }
                }
                for types in record.types {
                    if !entry.types.contains(&types) {
                        entry.types.push(types);
                    }
                }
                for device in record.devices {
                    if !entry.devices.contains(&device) {
                        entry.devices.push(device);
                    }
                }
                entry.binaries.extend(record.binaries);
            }
            Err(why) => {
                recording.damaged.push(format!("the record at byte {at}: {why}"));
                // On to the next record's first line.
                let needle = format!("\n{HEADER}");
                at = find(&bytes[at..], needle.as_bytes()).map_or(bytes.len(), |k| at + k + 1);
            }
        }
    }
    recording.programs = programs.into_values().collect();
    recording
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Reads the record at `at`: the program, the version that recorded it, and where the next
/// record starts.
fn parse_one(bytes: &[u8], mut at: usize) -> Result<(Recorded, String, usize), String> {
    let line = |at: &mut usize| -> Result<String, String> {
        let rest = &bytes[*at..];
        let end = rest.iter().position(|&b| b == b'\n').ok_or("it is cut short")?;
        *at += end + 1;
        String::from_utf8(rest[..end].to_vec()).map_err(|_| "a line is not UTF-8".to_string())
    };
    let first = line(&mut at)?;
    let version = first.strip_prefix(HEADER).ok_or("it does not start a record")?.to_string();
    let hex = |s: &str| u128::from_str_radix(s, 16).map_err(|_| format!("`{s}` is not a key"));
    let program = hex(line(&mut at)?.strip_prefix("program ").ok_or("no `program` line")?)?;
    let mut record = Recorded { program, ..Recorded::default() };
    let payload = |at: &mut usize, len: &str| -> Result<Vec<u8>, String> {
        let n: usize = len.parse().map_err(|_| format!("`{len}` is not a length"))?;
        let end = at.checked_add(n).filter(|&e| e < bytes.len()).ok_or("it is cut short")?;
        if bytes[end] != b'\n' {
            return Err("a payload is not followed by a newline".into());
        }
        let out = bytes[*at..end].to_vec();
        *at = end + 1;
        Ok(out)
    };
    loop {
        let l = line(&mut at)?;
        let (word, rest) = l.split_once(' ').unwrap_or((&l, ""));
        match word {
            "site" => record.sites.push(rest.to_string()),
            "types" => record.types.push(rest.to_string()),
            "device" => record.devices.push(rest.to_string()),
            "source" => {
                record.source = String::from_utf8(payload(&mut at, rest)?)
                    .map_err(|_| "the source is not UTF-8")?;
            }
            "binary" => {
                let (target, len) = rest.split_once(' ').ok_or("a `binary` line has no length")?;
                let binary = payload(&mut at, len)?;
                record.binaries.insert(target.to_string(), binary);
            }
            "end" => {
                if hex(rest)? != program {
                    return Err("its `end` names another program".into());
                }
                break;
            }
            _ => return Err(format!("an unknown line `{word}`")),
        }
    }
    if program_key(&record.source) != program {
        return Err("its source does not match its key".into());
    }
    Ok((record, version, at))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn provenance(site: &str) -> Provenance {
        let (location, text) = site.split_once(' ').unwrap_or((site, "par![x | x <- 0..n]"));
        Provenance { location: location.into(), text: text.into(), types: "u64 -> u64".into() }
    }

    #[test]
    fn records_merge_by_program() {
        let a = "kernel a\nwith lines\n";
        let b = "kernel b";
        let mut bytes = encode(program_key(a), &provenance("x.rs:1:1 par![..]"), a, FOR_GPU, None);
        bytes.extend(encode(program_key(b), &provenance("y.rs:2:2"), b, "sm_90", Some(b"\0\n1")));
        bytes.extend(encode(
            program_key(a),
            &provenance("z.rs:3:3 second\nline"),
            a,
            FOR_GPU,
            None,
        ));
        let r = parse(&bytes);
        assert!(r.damaged.is_empty(), "{:?}", r.damaged);
        assert_eq!(r.programs.len(), 2);
        let pa = r.programs.iter().find(|p| p.source == a).unwrap();
        assert_eq!(pa.sites, ["x.rs:1:1 par![..]", "z.rs:3:3 second line"]);
        assert_eq!(
            r.programs.iter().find(|p| p.source == b).unwrap().sites,
            ["y.rs:2:2 par![x | x <- 0..n]"]
        );
        assert_eq!(pa.types, ["u64 -> u64"]);
        let pb = r.programs.iter().find(|p| p.source == b).unwrap();
        assert_eq!(pb.binaries["sm_90"], b"\0\n1");
        assert_eq!(pb.devices, ["sm_90"]);
        assert_eq!(pa.devices, [FOR_GPU]);
    }

    #[test]
    fn a_damaged_record_is_set_aside_and_the_rest_read() {
        let a = "kernel a";
        let b = "kernel b";
        let good = encode(program_key(b), &provenance("b.rs:1:1"), b, FOR_GPU, None);
        let mut bytes = encode(program_key(a), &provenance("a.rs:1:1"), a, FOR_GPU, None);
        // Cut the first record in its source.
        bytes.truncate(bytes.len() - 12);
        bytes.extend(&good);
        // A record whose source does not match its key.
        let mut wrong = encode(program_key(a), &provenance("c.rs:1:1"), a, FOR_GPU, None);
        let at = find(&wrong, b"kernel a").unwrap();
        wrong[at] = b'K';
        bytes.extend(&wrong);
        bytes.extend(&good);
        let r = parse(&bytes);
        assert_eq!(r.programs.len(), 1);
        assert_eq!(r.programs[0].source, b);
        assert_eq!(r.damaged.len(), 2, "{:?}", r.damaged);
        assert!(r.damaged[1].contains("does not match its key"), "{:?}", r.damaged);
    }

    #[test]
    fn an_empty_recording_has_no_program() {
        let r = parse(b"");
        assert!(r.programs.is_empty() && r.damaged.is_empty());
    }

    #[test]
    fn another_version_s_records_are_counted_not_read() {
        let a = "kernel a";
        let mut bytes = encode(program_key(a), &provenance("a.rs:1:1"), a, FOR_GPU, None);
        let version = env!("CARGO_PKG_VERSION");
        let at = HEADER.len();
        bytes.splice(at..at + version.len(), b"0.0.0-old".iter().copied());
        let r = parse(&bytes);
        assert!(r.programs.is_empty());
        assert_eq!(r.other_versions, ["0.0.0-old"]);
    }
}
