//! Kernel bundles: device programs built ahead of time, so that a device runs a comprehension
//! with no compiler on the machine and no compile at its first run.
//!
//! A bundle is made from a recording (`record.rs`: every program a run would build) by
//! `cargo parcomp bundle`, and reaches the runtime embedded in the user's binary
//! (`parcomp::kernel_bundle!("kernels.pcb")`, registered through `inventory`) or named at run
//! time by `PARCOMP_KERNEL_BUNDLE` (paths separated as in `PATH`). `program.rs` looks a program
//! up in the process's table, then here, then in the disk cache, then compiles it — or, as
//! `PARCOMP_KERNEL_MISS` says, runs the comprehension on the host or fails naming it.
//!
//! A program is known by the 128-bit FNV-1a hash of its source ([`program_key`]): the source
//! is the same on every machine for the same comprehension and types, and holds every header,
//! so it decides the binary together with the target. A target is a CUDA architecture — `sm_80`
//! for a CUBIN, `compute_80` for PTX the driver compiles for any newer GPU — or one OpenCL
//! device (`opencl-` and a hash of its name, vendor, platform and driver: OpenCL binaries are
//! the device's own).
//!
//! The format, version 1, little-endian: the magic `PARCOMPB`; the format version (u32); the
//! parcomp version that made the programs and the compilers that built them (strings: a u32
//! length, then UTF-8); the entry count (u64); the entries sorted by program and target, each
//! the program's key (16 bytes), the target (a string), the binary (a u64 length, then the
//! bytes) and the FNV-1a 64 checksum of the entry's bytes before it; the count of sites (u64)
//! and the sites sorted, each a program's key and the `file:line:column` of a comprehension it
//! serves (what [`missing`] compares with the sites the binary registered); last, the checksum
//! of every byte before it. A bundle that is truncated, corrupt, of another format version or of another
//! parcomp version is an error naming the bundle, never a program loaded from it.

use super::device::DeviceInfo;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::OnceLock;

/// The first bytes of every bundle.
pub const MAGIC: &[u8; 8] = b"PARCOMPB";
/// The format version this parcomp reads and writes.
pub const FORMAT: u32 = 1;

/// The key of the program whose source is `source`: its 128-bit FNV-1a hash.
pub fn program_key(source: &str) -> u128 {
    fnv128(source.as_bytes())
}

/// 128-bit FNV-1a.
pub(crate) fn fnv128(bytes: &[u8]) -> u128 {
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;
    let mut h: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    for &b in bytes {
        h ^= u128::from(b);
        h = h.wrapping_mul(PRIME);
    }
    h
}

/// 64-bit FNV-1a: the entries' and the bundle's checksums, and the disk cache's (`cache.rs`).
pub(crate) fn fnv64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The target of `device`'s own binaries: its architecture on CUDA (`sm_90`), a hash of what
/// identifies it on OpenCL.
pub fn device_target(device: &DeviceInfo) -> String {
    if device.api == "cuda" {
        device.platform.clone()
    } else {
        let identity = format!(
            "{}\n{}\n{}\n{}\n{}",
            device.api, device.name, device.vendor, device.platform, device.driver
        );
        format!("{}-{:032x}", device.api, fnv128(identity.as_bytes()))
    }
}

/// The NVRTC options of every program, for `target` (`sm_80` for a CUBIN, `compute_80` for
/// PTX): `--fmad=false` because Rust never fuses `a * b + c` (NVRTC would by default); division
/// and square roots stay IEEE-exact and denormals are kept (NVRTC's defaults, spelled out). The
/// CUDA device and `cargo parcomp bundle` both compile with these, so a bundled binary is the one
/// the device would have built.
pub fn nvrtc_options(target: &str) -> Vec<String> {
    vec![
        format!("--gpu-architecture={target}"),
        "--fmad=false".into(),
        "--ftz=false".into(),
        "--prec-div=true".into(),
        "--prec-sqrt=true".into(),
    ]
}

/// A CUDA target's kind and compute capability: `sm_86` is a CUBIN for (8, 6), `compute_80`
/// PTX for (8, 0).
pub fn cuda_target(target: &str) -> Option<(bool, (u32, u32))> {
    let (cubin, digits) = match (target.strip_prefix("sm_"), target.strip_prefix("compute_")) {
        (Some(d), _) => (true, d),
        (_, Some(d)) => (false, d),
        _ => return None,
    };
    if digits.len() < 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (major, minor) = digits.split_at(digits.len() - 1);
    Some((cubin, (major.parse().ok()?, minor.parse().ok()?)))
}

/// Why a bundle cannot be used: it names the bundle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BundleError {
    /// The bundle: the path given to `kernel_bundle!` or in `PARCOMP_KERNEL_BUNDLE`.
    pub bundle: String,
    /// What is wrong with it.
    pub message: String,
}

impl fmt::Display for BundleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the kernel bundle `{}` cannot be used: {}", self.bundle, self.message)
    }
}

impl std::error::Error for BundleError {}

/// One program's binary for one target.
#[derive(Clone, Copy, Debug)]
pub struct Entry<'b> {
    /// The program's key ([`program_key`] of its source).
    pub program: u128,
    /// Its target: `sm_80`, `compute_80`, `opencl-<hash>`.
    pub target: &'b str,
    /// The binary.
    pub binary: &'b [u8],
}

/// A bundle read and checked: its header and its entries, borrowed from its bytes.
#[derive(Debug)]
pub struct Bundle<'b> {
    /// Where it came from, for messages.
    pub name: String,
    /// The parcomp version that made its programs.
    pub parcomp: &'b str,
    /// The compilers that built them, e.g. `NVRTC 12.9`.
    pub compilers: &'b str,
    entries: Vec<Entry<'b>>,
    sites: Vec<(u128, &'b str)>,
}

/// Reads a bundle's fields in order, each read an error naming what was cut short.
struct Reader<'b> {
    bytes: &'b [u8],
    at: usize,
}

impl<'b> Reader<'b> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'b [u8], String> {
        match self.at.checked_add(n).filter(|&end| end <= self.bytes.len()) {
            Some(end) => {
                let out = &self.bytes[self.at..end];
                self.at = end;
                Ok(out)
            }
            None => Err(format!("it is truncated: {what} at byte {} runs past its end", self.at)),
        }
    }

    fn u32(&mut self, what: &str) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4, what)?.try_into().expect("4 bytes")))
    }

    fn u64(&mut self, what: &str) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8, what)?.try_into().expect("8 bytes")))
    }

    fn len(&mut self, what: &str) -> Result<usize, String> {
        usize::try_from(self.u64(what)?).map_err(|_| format!("{what} is too long"))
    }

    fn str(&mut self, what: &str) -> Result<&'b str, String> {
        let n = self.u32(what)? as usize;
        std::str::from_utf8(self.take(n, what)?).map_err(|_| format!("{what} is not UTF-8"))
    }
}

impl<'b> Bundle<'b> {
    /// Reads and checks the bundle `bytes`, called `name` in messages.
    pub fn parse(name: &str, bytes: &'b [u8]) -> Result<Bundle<'b>, BundleError> {
        let error = |message: String| BundleError { bundle: name.to_string(), message };
        if bytes.is_empty() {
            return Err(error("it is empty".into()));
        }
        if !bytes.starts_with(MAGIC) {
            return Err(error(
                "it is not a parcomp kernel bundle (it does not start with `PARCOMPB`)".into(),
            ));
        }
        let mut r = Reader { bytes, at: MAGIC.len() };
        let format = r.u32("the format version").map_err(error)?;
        if format != FORMAT {
            return Err(error(format!(
                "it is of format version {format}, and this parcomp reads version {FORMAT}: \
                 make it again with this version's `cargo parcomp bundle`"
            )));
        }
        // The whole file's checksum first: a flipped byte anywhere is caught before any field
        // is trusted.
        let Some(body) = bytes.len().checked_sub(8) else {
            return Err(error("it is truncated: it has no checksum".into()));
        };
        if body < r.at || fnv64(&bytes[..body]).to_le_bytes() != bytes[body..] {
            return Err(error(
                "its checksum does not match its contents (a truncated or corrupt file)".into(),
            ));
        }
        let mut r = Reader { bytes: &bytes[..body], at: r.at };
        let parcomp = r.str("the parcomp version").map_err(error)?;
        if parcomp != env!("CARGO_PKG_VERSION") {
            return Err(error(format!(
                "its programs are parcomp {parcomp}'s, and this is parcomp {}: record and \
                 bundle them again with this version",
                env!("CARGO_PKG_VERSION")
            )));
        }
        let compilers = r.str("the compilers").map_err(error)?;
        let count = r.u64("the entry count").map_err(error)?;
        let mut entries = Vec::new();
        for k in 0..count {
            let start = r.at;
            let program = r.take(16, "an entry's program").map_err(error)?;
            let program = u128::from_le_bytes(program.try_into().expect("16 bytes"));
            let target = r.str("an entry's target").map_err(error)?;
            let n = r.len("an entry's binary").map_err(error)?;
            let binary = r.take(n, "an entry's binary").map_err(error)?;
            let sum = r.u64("an entry's checksum").map_err(error)?;
            if fnv64(&bytes[start..r.at - 8]) != sum {
                return Err(error(format!("entry {k}'s checksum does not match its contents")));
            }
            if let Some(last) = entries.last() {
                let Entry { program: p, target: t, .. } = *last;
                if (p, t) >= (program, target) {
                    return Err(error(format!("entry {k} is out of order")));
                }
            }
            entries.push(Entry { program, target, binary });
        }
        let count = r.u64("the site count").map_err(error)?;
        let mut sites = Vec::new();
        for k in 0..count {
            let program = r.take(16, "a site's program").map_err(error)?;
            let program = u128::from_le_bytes(program.try_into().expect("16 bytes"));
            let location = r.str("a site").map_err(error)?;
            if sites.last().is_some_and(|&last| last >= (program, location)) {
                return Err(error(format!("site {k} is out of order")));
            }
            sites.push((program, location));
        }
        if r.at != body {
            return Err(error(format!("{} bytes follow its last entry", body - r.at)));
        }
        Ok(Bundle { name: name.to_string(), parcomp, compilers, entries, sites })
    }

    /// Its entries, sorted by program and target.
    pub fn entries(&self) -> &[Entry<'b>] {
        &self.entries
    }

    /// The comprehension sites its programs serve: each program's key with the
    /// `file:line:column` of a site, sorted.
    pub fn sites(&self) -> &[(u128, &'b str)] {
        &self.sites
    }

    /// The entries of `program`.
    pub fn program(&self, program: u128) -> &[Entry<'b>] {
        let start = self.entries.partition_point(|e| e.program < program);
        let end = self.entries.partition_point(|e| e.program <= program);
        &self.entries[start..end]
    }

    /// The binaries of `program` that `device` may run, best first: on OpenCL the device's own;
    /// on CUDA the CUBIN of its architecture, then CUBINs of older architectures of the same
    /// major version (which it runs), then PTX of its architecture or older (which its driver
    /// compiles).
    pub fn candidates(&self, program: u128, device: &DeviceInfo) -> Vec<Entry<'b>> {
        let entries = self.program(program);
        if device.api != "cuda" {
            let target = device_target(device);
            return entries.iter().filter(|e| e.target == target).copied().collect();
        }
        let Some((_, own)) = cuda_target(&device.platform) else { return Vec::new() };
        // Ranked: 0 the device's own CUBIN, 1 an older minor version's, 2 PTX; within a rank,
        // the newest architecture first.
        let rank = |e: &Entry<'b>| -> Option<(u8, u32, u32)> {
            let (cubin, arch) = cuda_target(e.target)?;
            let rank = match cubin {
                true if arch == own => 0,
                true if arch.0 == own.0 && arch.1 < own.1 => 1,
                false if arch <= own => 2,
                _ => return None,
            };
            Some((rank, u32::MAX - arch.0, u32::MAX - arch.1))
        };
        let mut ranked: Vec<(Entry<'b>, (u8, u32, u32))> =
            entries.iter().filter_map(|e| Some((*e, rank(e)?))).collect();
        ranked.sort_by_key(|(_, rank)| *rank);
        ranked.into_iter().map(|(e, _)| e).collect()
    }
}

/// Writes a bundle: entries added in any order (a second binary for the same program and
/// target replaces the first), written sorted.
#[derive(Debug, Default)]
pub struct BundleWriter {
    compilers: String,
    entries: BTreeMap<(u128, String), Vec<u8>>,
    sites: std::collections::BTreeSet<(u128, String)>,
}

impl BundleWriter {
    /// A bundle whose programs were built by `compilers` (e.g. `NVRTC 12.9`).
    pub fn new(compilers: impl Into<String>) -> Self {
        BundleWriter { compilers: compilers.into(), ..BundleWriter::default() }
    }

    /// Says which compilers built its programs.
    pub fn set_compilers(&mut self, compilers: impl Into<String>) {
        self.compilers = compilers.into();
    }

    /// Adds `program`'s `binary` for `target`.
    pub fn add(&mut self, program: u128, target: impl Into<String>, binary: Vec<u8>) {
        self.entries.insert((program, target.into()), binary);
    }

    /// Notes that `program` serves the comprehension at `location` (`file:line:column`).
    pub fn add_site(&mut self, program: u128, location: impl Into<String>) {
        self.sites.insert((program, location.into()));
    }

    /// Whether it holds a binary of `program`.
    pub fn holds(&self, program: u128) -> bool {
        self.entries
            .range((program, String::new())..)
            .next()
            .is_some_and(|((p, _), _)| *p == program)
    }

    /// How many entries it holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it holds no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The bundle's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        fn str(out: &mut Vec<u8>, s: &str) {
            out.extend_from_slice(&(s.len() as u32).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        }
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&FORMAT.to_le_bytes());
        str(&mut out, env!("CARGO_PKG_VERSION"));
        str(&mut out, &self.compilers);
        out.extend_from_slice(&(self.entries.len() as u64).to_le_bytes());
        for ((program, target), binary) in &self.entries {
            let start = out.len();
            out.extend_from_slice(&program.to_le_bytes());
            str(&mut out, target);
            out.extend_from_slice(&(binary.len() as u64).to_le_bytes());
            out.extend_from_slice(binary);
            let sum = fnv64(&out[start..]);
            out.extend_from_slice(&sum.to_le_bytes());
        }
        out.extend_from_slice(&(self.sites.len() as u64).to_le_bytes());
        for (program, location) in &self.sites {
            out.extend_from_slice(&program.to_le_bytes());
            str(&mut out, location);
        }
        let sum = fnv64(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        out
    }
}

/// A bundle embedded in the binary by `parcomp::kernel_bundle!`.
#[derive(Debug)]
pub struct Embedded {
    name: &'static str,
    bytes: &'static [u8],
}

impl Embedded {
    /// The bundle `bytes`, called `name` (its path as written) in messages.
    pub const fn new(name: &'static str, bytes: &'static [u8]) -> Self {
        Embedded { name, bytes }
    }
}

inventory::collect!(Embedded);

/// The bundles of this process: every embedded one, then those `PARCOMP_KERNEL_BUNDLE` names,
/// each read and checked once, at the first program the runtime looks up. The first that
/// cannot be used is the error of every lookup.
pub fn loaded() -> Result<&'static [Bundle<'static>], BundleError> {
    static LOADED: OnceLock<Result<Vec<Bundle<'static>>, BundleError>> = OnceLock::new();
    LOADED
        .get_or_init(|| {
            let mut bundles = Vec::new();
            for embedded in inventory::iter::<Embedded> {
                bundles.push(Bundle::parse(embedded.name, embedded.bytes)?);
            }
            if let Some(paths) = std::env::var_os("PARCOMP_KERNEL_BUNDLE") {
                for path in std::env::split_paths(&paths).filter(|p| !p.as_os_str().is_empty()) {
                    let name = path.display().to_string();
                    let bytes = std::fs::read(&path).map_err(|e| BundleError {
                        bundle: name.clone(),
                        message: format!("it cannot be read (PARCOMP_KERNEL_BUNDLE): {e}"),
                    })?;
                    // Read once per process and kept for it, as an embedded bundle is.
                    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                    bundles.push(Bundle::parse(&name, bytes)?);
                }
            }
            Ok(bundles)
        })
        .as_ref()
        .map(Vec::as_slice)
        .map_err(Clone::clone)
}

/// The binaries of `program` that `device` may run, from every bundle of the process, best
/// first.
pub(crate) fn candidates(
    program: u128,
    device: &DeviceInfo,
) -> Result<Vec<Entry<'static>>, BundleError> {
    Ok(loaded()?.iter().flat_map(|b| b.candidates(program, device)).collect())
}

/// `file:line:column` of a comprehension site, as records and bundles name it (a space in the
/// path written `%20`: a record's site line is the location, a space, the text).
pub fn location(site: &crate::site::Site) -> String {
    format!("{}:{}:{}", site.file.replace(' ', "%20"), site.line, site.column)
}

/// A comprehension that can run on a device, registered by the code the macro emits, so that
/// [`missing`] knows every such site of the binary when it links.
#[derive(Debug)]
pub struct DeviceSite {
    site: &'static crate::site::Site,
}

impl DeviceSite {
    /// The device-capable comprehension at `site`.
    pub const fn new(site: &'static crate::site::Site) -> Self {
        DeviceSite { site }
    }
}

inventory::collect!(DeviceSite);

/// The device-capable comprehensions of this binary that no kernel bundle of the process
/// (embedded, or named by `PARCOMP_KERNEL_BUNDLE`) has a program for, by site, each once. A
/// bundle covers a site when the recording it was made from ran it; a site run later with other
/// element types than recorded still misses at run time (`PARCOMP_KERNEL_MISS` says what
/// happens then). A test or CI step can fail on a non-empty answer before shipping.
pub fn missing() -> Result<Vec<&'static crate::site::Site>, BundleError> {
    let bundles = loaded()?;
    let covered: std::collections::HashSet<&str> =
        bundles.iter().flat_map(|b| b.sites.iter().map(|&(_, location)| location)).collect();
    let mut seen = std::collections::HashSet::new();
    let mut out: Vec<&'static crate::site::Site> = inventory::iter::<DeviceSite>
        .into_iter()
        .map(|d| d.site)
        .filter(|site| {
            let location = location(site);
            !covered.contains(location.as_str()) && seen.insert(location)
        })
        .collect();
    out.sort_by_key(|s| (s.file, s.line, s.column));
    Ok(out)
}

/// What a device does with a program no bundle holds (`PARCOMP_KERNEL_MISS`, read once).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MissPolicy {
    /// Compile it (NVRTC on CUDA, the driver's compiler on OpenCL): the default.
    Compile,
    /// Run the comprehension on the host, saying so in the trace.
    Host,
    /// Fail, naming the comprehension, its types and the device's architecture.
    Error,
}

/// The process's [`MissPolicy`]: `PARCOMP_KERNEL_MISS` is `compile`, `host` or `error`; unset
/// (or anything else, said once on stderr) is `compile`.
pub fn miss_policy() -> MissPolicy {
    static POLICY: OnceLock<MissPolicy> = OnceLock::new();
    *POLICY.get_or_init(|| match std::env::var("PARCOMP_KERNEL_MISS") {
        Err(_) => MissPolicy::Compile,
        Ok(v) => match v.trim().to_ascii_lowercase().as_str() {
            "" | "compile" => MissPolicy::Compile,
            "host" => MissPolicy::Host,
            "error" => MissPolicy::Error,
            other => {
                eprintln!(
                    "parcomp: PARCOMP_KERNEL_MISS={other:?} is not `compile`, `host` or `error`; \
                     programs missing from the kernel bundle are compiled"
                );
                MissPolicy::Compile
            }
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cuda(arch: &str) -> DeviceInfo {
        DeviceInfo {
            api: "cuda",
            name: "a GPU".into(),
            vendor: "NVIDIA".into(),
            platform: arch.into(),
            driver: "CUDA driver 13.0".into(),
            is_cpu: false,
            fp64: true,
            global_memory: 1 << 30,
            max_buffer: 1 << 30,
            compute_units: 1,
            peak_bandwidth: None,
        }
    }

    fn sample() -> Vec<u8> {
        let mut w = BundleWriter::new("NVRTC 12.9");
        for (target, byte) in
            [("sm_90", 9u8), ("sm_80", 8), ("compute_80", 1), ("sm_86", 6), ("sm_100", 10)]
        {
            w.add(7, target, vec![byte; 3]);
        }
        w.add(3, "opencl-00", b"cl".to_vec());
        w.to_bytes()
    }

    #[test]
    fn written_and_read_back_sorted() {
        let bytes = sample();
        let b = Bundle::parse("k.pcb", &bytes).unwrap();
        assert_eq!(b.compilers, "NVRTC 12.9");
        let keys: Vec<(u128, &str)> = b.entries().iter().map(|e| (e.program, e.target)).collect();
        assert_eq!(
            keys,
            [
                (3, "opencl-00"),
                (7, "compute_80"),
                (7, "sm_100"),
                (7, "sm_80"),
                (7, "sm_86"),
                (7, "sm_90")
            ]
        );
        assert_eq!(b.program(7).len(), 5);
        assert!(b.program(5).is_empty());
        // The same entries in another order give the same bytes.
        let mut w = BundleWriter::new("NVRTC 12.9");
        w.add(3, "opencl-00", b"cl".to_vec());
        for (target, byte) in
            [("sm_100", 10u8), ("sm_86", 6), ("compute_80", 1), ("sm_80", 8), ("sm_90", 9)]
        {
            w.add(7, target, vec![byte; 3]);
        }
        assert_eq!(w.to_bytes(), bytes);
    }

    #[test]
    fn cuda_lookup_prefers_the_exact_cubin_then_older_minor_then_ptx() {
        let bytes = sample();
        let b = Bundle::parse("k.pcb", &bytes).unwrap();
        let order = |arch: &str| -> Vec<&str> {
            b.candidates(7, &cuda(arch)).iter().map(|e| e.target).collect()
        };
        assert_eq!(order("sm_90"), ["sm_90", "compute_80"]);
        assert_eq!(order("sm_89"), ["sm_86", "sm_80", "compute_80"]);
        assert_eq!(order("sm_86"), ["sm_86", "sm_80", "compute_80"]);
        assert_eq!(order("sm_100"), ["sm_100", "compute_80"]);
        assert_eq!(order("sm_120"), ["compute_80"]);
        assert_eq!(order("sm_75"), Vec::<&str>::new());
        assert!(b.candidates(3, &cuda("sm_90")).is_empty());
    }

    #[test]
    fn opencl_lookup_takes_the_device_s_own_binary() {
        let mut device = cuda("x");
        device.api = "opencl";
        let target = device_target(&device);
        let mut w = BundleWriter::new("OpenCL");
        w.add(1, target.clone(), b"mine".to_vec());
        w.add(1, "opencl-0123", b"another device's".to_vec());
        let bytes = w.to_bytes();
        let b = Bundle::parse("k.pcb", &bytes).unwrap();
        let found = b.candidates(1, &device);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].binary, b"mine");
        device.driver = "another driver".into();
        assert!(b.candidates(1, &device).is_empty());
    }

    #[test]
    fn every_truncation_and_every_flipped_byte_is_an_error_naming_the_bundle() {
        let bytes = sample();
        for end in 0..bytes.len() {
            let e = Bundle::parse("cut.pcb", &bytes[..end]).unwrap_err();
            assert_eq!(e.bundle, "cut.pcb");
            assert!(e.to_string().starts_with("the kernel bundle `cut.pcb` cannot be used: "));
        }
        for at in 0..bytes.len() {
            let mut flipped = bytes.clone();
            flipped[at] ^= 0x10;
            let e = Bundle::parse("flip.pcb", &flipped).unwrap_err();
            assert_eq!(e.bundle, "flip.pcb", "byte {at}");
        }
    }

    #[test]
    fn another_format_or_parcomp_version_or_a_foreign_file_is_refused() {
        let mut bytes = sample();
        bytes[8] = 2;
        let e = Bundle::parse("v2.pcb", &bytes).unwrap_err();
        assert!(e.message.contains("format version 2"), "{e}");
        let e = Bundle::parse("x.pcb", b"\x7fELF and so on").unwrap_err();
        assert!(e.message.contains("not a parcomp kernel bundle"), "{e}");
        let e = Bundle::parse("e.pcb", b"").unwrap_err();
        assert!(e.message.contains("empty"), "{e}");
        // Another parcomp version, with a right checksum.
        let mut w = BundleWriter::new("NVRTC").to_bytes();
        let version = env!("CARGO_PKG_VERSION").as_bytes();
        assert_eq!(&w[16..16 + version.len()], version);
        w[16] = if version[0] == b'9' { b'8' } else { b'9' };
        let n = w.len() - 8;
        let sum = fnv64(&w[..n]);
        w[n..].copy_from_slice(&sum.to_le_bytes());
        let e = Bundle::parse("old.pcb", &w).unwrap_err();
        assert!(e.message.contains("'s, and this is parcomp"), "{e}");
    }

    #[test]
    fn sites_are_kept_sorted() {
        let mut w = BundleWriter::new("NVRTC");
        w.add(2, "sm_90", vec![1]);
        w.add_site(2, "src/main.rs:9:5");
        w.add_site(1, "src/main.rs:3:5");
        w.add_site(2, "src/lib.rs:1:1");
        let bytes = w.to_bytes();
        let b = Bundle::parse("s.pcb", &bytes).unwrap();
        assert_eq!(
            b.sites(),
            [(1, "src/main.rs:3:5"), (2, "src/lib.rs:1:1"), (2, "src/main.rs:9:5")]
        );
    }

    #[test]
    fn an_empty_bundle_is_read_and_has_no_program() {
        let bytes = BundleWriter::new("NVRTC 12.9").to_bytes();
        let b = Bundle::parse("empty.pcb", &bytes).unwrap();
        assert!(b.entries().is_empty());
        assert!(b.candidates(1, &cuda("sm_90")).is_empty());
    }

    #[test]
    fn targets_read_as_architectures() {
        assert_eq!(cuda_target("sm_90"), Some((true, (9, 0))));
        assert_eq!(cuda_target("sm_100"), Some((true, (10, 0))));
        assert_eq!(cuda_target("compute_86"), Some((false, (8, 6))));
        assert_eq!(cuda_target("sm_9"), None);
        assert_eq!(cuda_target("opencl-1"), None);
        assert_eq!(program_key("a"), program_key("a"));
        assert_ne!(program_key("a"), program_key("b"));
    }
}
