//! The runtime's modules form layers: each names only modules of the layers below it, so the
//! imports have no cycle and a newcomer can read the runtime bottom up. This test reads the
//! sources and fails, naming the file, when a module names one of its own layer or above.
//!
//! ```text
//! 7  transform                 order by, take, group by between the parts of a comprehension
//! 6  segmented                 the public segmented primitives
//! 5  dispatch                  the terminals: where each run goes, and the record of it
//! 4  device_vec                values kept in a device's memory
//! 3  cpu, gpu                  the engines
//! 2  pipeline, jagged          the stages and the traits the engines implement; rows
//! 1  source, trace             what a generator reads; the record of runs
//! 0  backend, site             the choice of an engine; where a comprehension was written
//! ```
//!
//! A name the crate root re-exports (`crate::DeviceVec`) counts as its module's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const LAYERS: &[&[&str]] = &[
    &["backend", "site"],
    &["source", "trace"],
    &["pipeline", "jagged"],
    &["cpu", "gpu"],
    &["device_vec"],
    &["interop"],
    &["dispatch"],
    &["segmented"],
    &["transform"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("the runtime's sources are readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a file without its comments and its unit tests (which may use anything).
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or("");
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The names the crate root re-exports (`pub use module::{A, b}` and `pub use module::A`), and
/// the module each comes from.
fn root_reexports(lib: &str) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    for item in code(lib).split(';') {
        let item = item.trim();
        let Some(path) = item.strip_prefix("pub use ") else { continue };
        let Some((module, rest)) = path.split_once("::") else { continue };
        let rest = rest.trim().trim_start_matches('{').trim_end_matches('}');
        for name in rest.split(',') {
            let name = name.trim().rsplit("::").next().unwrap_or("").trim();
            if !name.is_empty() {
                names.insert(name.to_string(), module.trim().to_string());
            }
        }
    }
    names
}

/// The first segment of the path `rest` starts with (`a` of `a::b`), or of each path of the
/// group it starts with (`a` and `b` of `{a, b::c}`), onto `names`.
fn first_segments(rest: &str, names: &mut Vec<String>) {
    if let Some(group) = rest.strip_prefix('{') {
        let end = group.find('}').unwrap_or(group.len());
        for path in group[..end].split(',') {
            names.push(path.trim().split("::").next().unwrap_or("").to_string());
        }
    } else {
        let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'));
        names.push(rest[..end.unwrap_or(rest.len())].to_string());
    }
}

/// The top-level modules of the crate that `code` names through `crate::`.
fn named_modules(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        first_segments(rest, &mut names);
    }
    names
}

#[test]
fn every_module_names_only_layers_below_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut modules = BTreeMap::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if name != "lib" && (path.is_dir() || path.extension().is_some_and(|e| e == "rs")) {
            modules.insert(name, ());
        }
    }
    let mut faults = Vec::new();
    for module in modules.keys() {
        if layer_of(module).is_none() {
            faults.push(format!("module `{module}` is in no layer: add it to LAYERS"));
        }
    }
    let reexports = root_reexports(&std::fs::read_to_string(src.join("lib.rs")).unwrap());
    let mut checked = 0;
    for file in &files {
        let relative = file.strip_prefix(&src).unwrap();
        let own = relative.components().next().unwrap().as_os_str().to_string_lossy();
        let own = own.trim_end_matches(".rs");
        if own == "lib" {
            continue;
        }
        let Some(own_layer) = layer_of(own) else { continue };
        let text = std::fs::read_to_string(file).unwrap();
        for named in named_modules(&code(&text)) {
            // A module's name is the module (`crate::backend` is the module, not the function
            // `backend()` the root re-exports from `dispatch`); any other re-export its source.
            let named = match reexports.get(&named) {
                Some(module) if !modules.contains_key(&named) => module.clone(),
                _ => named,
            };
            if named == own || !modules.contains_key(&named) {
                // Itself, or something of the crate root that is no module's (`crate::par_fn`
                // attributes expand to paths the runtime does not define itself).
                continue;
            }
            checked += 1;
            let named_layer = layer_of(&named).unwrap_or(usize::MAX);
            if named_layer >= own_layer {
                faults.push(format!(
                    "{} (layer {own_layer}, `{own}`) names `crate::{named}` (layer {named_layer})",
                    relative.display()
                ));
            }
        }
    }
    assert!(checked > 50, "the check found only {checked} references: is it reading the sources?");
    assert!(faults.is_empty(), "the runtime's layers are crossed upwards:\n{}", faults.join("\n"));
}

/// The device backend's files, bottom up: each names only files before it. Three layers: the
/// interfaces and the contract with the macro, the hardware behind one table, and the engine.
const GPU_ORDER: &[&str] = &[
    // The hardware interface and the contract with the macro.
    "device",  // the Device and Queue traits
    "types",   // device values, stored as columns
    "plan",    // the static device plan the macro emits
    "par_fn",  // the registry of #[par_fn]s
    "fault",   // fault codes and their messages
    "bundle",  // kernel bundles: their format, the embedded ones, the miss policy
    "record",  // the recording of the programs a run builds
    "failure", // why a device did not run a comprehension
    // The hardware, behind one table.
    "staging", // copies through pinned memory, shared by the device backends
    "opencl",
    "cuda",
    "devices",
    // The engine.
    "cache",
    "program",
    "arena",
    "resident",
    "host_data",
    "output_codec",
    "offload",
    "infer",
    "calibrate",
    "threshold",
    "executor",
    "sinks",
    "run",
    "segmented",
    "sort",
];

/// The files of `gpu/` that `code` (of a file at `depth` folders below `gpu/`) names through
/// `super::` or `crate::gpu::`.
fn named_gpu_modules(code: &str, depth: usize) -> Vec<String> {
    let mut names = Vec::new();
    let prefixes = ["super::".repeat(depth + 1), "crate::gpu::".to_string()];
    for prefix in &prefixes {
        let mut rest = code;
        while let Some(at) = rest.find(prefix.as_str()) {
            // `super::super::x` read as `super::` from one folder down is its own folder's.
            let before = &rest[..at];
            rest = &rest[at + prefix.len()..];
            if prefix.starts_with("super") && before.ends_with("super::") {
                continue;
            }
            if !rest.starts_with("super::") {
                first_segments(rest, &mut names);
            }
        }
    }
    names
}

#[test]
fn the_device_backend_is_read_bottom_up() {
    let gpu = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/gpu");
    let mut files = Vec::new();
    rust_files(&gpu, &mut files);
    files.sort();
    let position = |module: &str| GPU_ORDER.iter().position(|m| *m == module);
    // What `gpu/mod.rs` re-exports, by the file it comes from (`super::device(..)` is
    // `devices.rs`'s).
    let mod_rs = std::fs::read_to_string(gpu.join("mod.rs")).unwrap();
    let public = code(&mod_rs).replace("pub(crate) use ", "pub use ");
    let reexports = root_reexports(&public);
    let mut faults = Vec::new();
    let mut checked = 0;
    for file in &files {
        let relative = file.strip_prefix(&gpu).unwrap();
        let own = relative.components().next().unwrap().as_os_str().to_string_lossy();
        let own = own.trim_end_matches(".rs").to_string();
        if own == "mod" || own == "kernels" {
            continue;
        }
        let Some(own_at) = position(&own) else {
            faults.push(format!("gpu/{} is in no place of GPU_ORDER", relative.display()));
            continue;
        };
        // `gpu/x.rs` and `gpu/x/mod.rs` reach gpu/ as `super::`; `gpu/x/y.rs` as `super::super::`.
        let depth = relative.components().count() - 1;
        let depth = if relative.ends_with("mod.rs") { depth - 1 } else { depth };
        let text = std::fs::read_to_string(file).unwrap();
        for named in named_gpu_modules(&code(&text), depth) {
            let named = if position(&named).is_some() {
                named
            } else if let Some(module) = reexports.get(&named) {
                module.clone()
            } else {
                continue; // the dialect's text (`prelude`, `SCALAR`), or a `self`
            };
            if named == own {
                continue;
            }
            checked += 1;
            let at = position(&named).unwrap_or(usize::MAX);
            if at > own_at {
                faults.push(format!(
                    "gpu/{} (`{own}`) names `{named}`, above it",
                    relative.display()
                ));
            }
        }
    }
    assert!(checked > 40, "the check found only {checked} references: is it reading the sources?");
    assert!(faults.is_empty(), "gpu/'s layers are crossed upwards:\n{}", faults.join("\n"));
}
