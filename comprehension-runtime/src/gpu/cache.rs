//! The disk cache of built programs, so that a program's second run compiles nothing, and of
//! each device's calibration (`calibrate.rs`), so that a second process measures nothing.
//!
//! An entry is keyed by everything that decides the binary: the program's source, the build
//! options, the device, its platform and driver version, and parcomp's version. It lives in
//! `PARCOMP_CACHE_DIR` (`off` disables the cache), else `$XDG_CACHE_HOME/parcomp`, else
//! `~/.cache/parcomp`. The file is named by a hash of the key and holds the key itself, the
//! binary and a checksum: an entry whose key differs (a hash collision), whose checksum fails
//! (a torn or corrupt file) or that the driver refuses to load is rebuilt and overwritten,
//! never trusted. Entries are written to a temporary file and renamed, so concurrent processes
//! never see half an entry. Programs are `.bin` files, calibrations `.cal` files, in the same
//! folder and the same format.

use super::bundle::fnv64;
use super::device::DeviceInfo;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"PARCOMP1";

/// What identifies a built program.
pub(crate) struct Key {
    text: String,
}

impl Key {
    /// The key of `source` built with `options` on `device`.
    pub(crate) fn new(device: &DeviceInfo, source: &str, options: &str) -> Key {
        let text = format!(
            "parcomp {}\napi {}\ndevice {}\nvendor {}\nplatform {}\ndriver {}\noptions {options}\n\n{source}",
            env!("CARGO_PKG_VERSION"),
            device.api,
            device.name,
            device.vendor,
            device.platform,
            device.driver,
        );
        Key { text }
    }

    /// A 64-bit hash of the key (FNV-1a): the entry's file name.
    pub(crate) fn hash(&self) -> u64 {
        fnv64(self.text.as_bytes())
    }
}

/// The cache's folder, or `None` when it is disabled or there is nowhere to put it.
pub(crate) fn dir() -> Option<PathBuf> {
    match std::env::var_os("PARCOMP_CACHE_DIR") {
        Some(d) if d == "off" || d.is_empty() => None,
        Some(d) => Some(PathBuf::from(d)),
        None => std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .map(|d| d.join("parcomp")),
    }
}

/// The extension of program entries.
const PROGRAM: &str = "bin";
/// The extension of calibration entries.
pub(crate) const CALIBRATION: &str = "cal";

fn path_in(folder: &Path, key: &Key, extension: &str) -> PathBuf {
    folder.join(format!("{:016x}.{extension}", key.hash()))
}

/// The cached binary of `key`, if there is a sound entry.
pub(crate) fn load(key: &Key) -> Option<Vec<u8>> {
    load_in(&dir()?, key, PROGRAM)
}

/// The bytes stored for `key` in an entry with `extension`, if there is a sound one.
pub(crate) fn load_as(key: &Key, extension: &str) -> Option<Vec<u8>> {
    load_in(&dir()?, key, extension)
}

fn load_in(folder: &Path, key: &Key, extension: &str) -> Option<Vec<u8>> {
    let bytes = fs::read(path_in(folder, key, extension)).ok()?;
    let rest = bytes.strip_prefix(MAGIC.as_slice())?;
    let (key_len, rest) = take_u64(rest)?;
    let key_len = usize::try_from(key_len).ok()?;
    if rest.len() < key_len || &rest[..key_len] != key.text.as_bytes() {
        return None;
    }
    let rest = &rest[key_len..];
    let (len, rest) = take_u64(rest)?;
    let len = usize::try_from(len).ok()?;
    if rest.len() != len + 8 {
        return None;
    }
    let (binary, sum) = rest.split_at(len);
    (fnv64(binary).to_le_bytes() == sum).then(|| binary.to_vec())
}

fn take_u64(bytes: &[u8]) -> Option<(u64, &[u8])> {
    let (head, rest) = bytes.split_at_checked(8)?;
    Some((u64::from_le_bytes(head.try_into().ok()?), rest))
}

/// Stores `binary` for `key` (silently does nothing if the cache cannot be written).
pub(crate) fn store(key: &Key, binary: &[u8]) {
    store_as(key, PROGRAM, binary);
}

/// Stores `bytes` for `key` in an entry with `extension` (silently does nothing if the cache
/// cannot be written).
pub(crate) fn store_as(key: &Key, extension: &str, bytes: &[u8]) {
    if let Some(folder) = dir() {
        store_in(&folder, key, extension, bytes);
    }
}

fn store_in(folder: &Path, key: &Key, extension: &str, binary: &[u8]) {
    let path = path_in(folder, key, extension);
    if fs::create_dir_all(folder).is_err() {
        return;
    }
    let mut entry = Vec::with_capacity(key.text.len() + binary.len() + 32);
    entry.extend_from_slice(MAGIC);
    entry.extend_from_slice(&(key.text.len() as u64).to_le_bytes());
    entry.extend_from_slice(key.text.as_bytes());
    entry.extend_from_slice(&(binary.len() as u64).to_le_bytes());
    entry.extend_from_slice(binary);
    entry.extend_from_slice(&fnv64(binary).to_le_bytes());
    let temporary =
        folder.join(format!(".{:016x}.{extension}.{}.tmp", key.hash(), std::process::id()));
    let written = fs::File::create(&temporary).and_then(|mut f| f.write_all(&entry));
    if written.is_ok() {
        let _ = fs::rename(&temporary, &path);
    } else {
        let _ = fs::remove_file(&temporary);
    }
}

/// Writes the source of a program the compiler rejected next to the cache (or in the temporary
/// folder), for the user to read; returns where.
pub(crate) fn write_failed_source(key: &Key, source: &str) -> Option<PathBuf> {
    let folder = dir().unwrap_or_else(std::env::temp_dir);
    fs::create_dir_all(&folder).ok()?;
    let path = folder.join(format!("failed-{:016x}.cl", key.hash()));
    fs::write(&path, source).ok()?;
    Some(path)
}

/// Number of program entries in the cache (for tests and reports).
pub fn entries() -> usize {
    dir()
        .and_then(|d| fs::read_dir(d).ok())
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.path().extension().is_some_and(|x| x == PROGRAM))
                .count()
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info() -> DeviceInfo {
        DeviceInfo {
            api: "opencl",
            name: "test".into(),
            vendor: "v".into(),
            platform: "p".into(),
            driver: "1".into(),
            is_cpu: true,
            fp64: true,
            global_memory: 0,
            max_buffer: 0,
            compute_units: 1,
            peak_bandwidth: None,
        }
    }

    #[test]
    fn entries_round_trip_and_bad_entries_are_not_trusted() {
        let folder =
            std::env::temp_dir().join(format!("parcomp-cache-test-{}", std::process::id()));
        let key = Key::new(&info(), "kernel source", "-O2");
        store_in(&folder, &key, PROGRAM, b"binary bytes");
        assert_eq!(load_in(&folder, &key, PROGRAM).as_deref(), Some(&b"binary bytes"[..]));
        // Another kind of entry under the same key is a file of its own.
        assert_eq!(load_in(&folder, &key, CALIBRATION), None);
        store_in(&folder, &key, CALIBRATION, b"figures");
        assert_eq!(load_in(&folder, &key, CALIBRATION).as_deref(), Some(&b"figures"[..]));
        assert_eq!(load_in(&folder, &key, PROGRAM).as_deref(), Some(&b"binary bytes"[..]));
        // Another source with the same file name (as a collision would): not its binary.
        let other = Key::new(&info(), "other source", "-O2");
        let file = path_in(&folder, &key, PROGRAM);
        fs::copy(&file, path_in(&folder, &other, PROGRAM)).unwrap();
        assert_eq!(load_in(&folder, &other, PROGRAM), None);
        // A corrupt entry: refused.
        let mut bytes = fs::read(&file).unwrap();
        let last = bytes.len() - 9;
        bytes[last] ^= 1;
        fs::write(&file, bytes).unwrap();
        assert_eq!(load_in(&folder, &key, PROGRAM), None);
        let _ = fs::remove_dir_all(&folder);
    }
}
