//! Compile-fail tests: every error of `par!`, with its message as rendered by rustc
//! (`tests/ui/NAME.rs` and `tests/ui/NAME.stderr`), and comprehensions that must compile and run
//! without a single warning (`tests/ui/pass_*.rs`, which `#![deny(warnings)]`).
//!
//! After changing an error, regenerate the expected output with
//! `TRYBUILD=overwrite cargo test --test ui`, then read the `.stderr` files.

use std::path::PathBuf;

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir("tests/ui")
        .expect("tests/ui")
        .map(|entry| entry.expect("tests/ui entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    for file in files {
        let name = file.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if name.starts_with("pass_") {
            t.pass(&file);
        } else {
            t.compile_fail(&file);
        }
    }
}
