#!/usr/bin/env bash
# Builds what a GPU machine without Rust needs to check parcomp: the test binaries (with the
# `cuda` feature; OpenCL is always on for the tests) and the device examples, stripped of their
# debug information and packed into target/gpu-check/bins.tar.xz (about 35 MB), beside run.sh.
# Carry `target/gpu-check` to the GPU machine and run `bash target/gpu-check/run.sh` there, in
# the repository's root. The binaries are x86-64 Linux, linked against this machine's glibc:
# build on a machine whose glibc is no newer than the GPU machine's.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=target/gpu-check
stage=target/gpu-check-stage
rm -rf "$out" "$stage"
mkdir -p "$out" "$stage/t" "$stage/x"
# The compile-error tests (trybuild) and the crates with no device code need a Rust compiler
# or no GPU; the rest is every test binary of the workspace.
cargo test --workspace --features cuda --no-run --message-format=json 2>/dev/null \
  | grep -o '"executable":"[^"]*"' | sed 's/"executable":"//; s/"$//' \
  | grep '/deps/' | grep -v -e '/ui-' -e '/comprehension_macros-' -e '/flatten_core-' \
  | while read -r exe; do
      strip -o "$stage/t/$(basename "$exe" | sed 's/-[0-9a-f]*$//')" "$exe"
    done
cargo build --release --features cuda --example gpu_report --example gpu_bandwidth
for example in gpu_report gpu_bandwidth; do
  strip -o "$stage/x/$example" "target/release/examples/$example"
done
# gpu_report's programs, recorded here (what a GPU would build, whatever ran them) and compiled
# ahead of time with NVRTC (PARCOMP_NVRTC, or on the loader's path) into a kernel bundle: run.sh
# runs gpu_report from it with no NVRTC. Skipped, saying so, where NVRTC is absent.
rm -f "$stage/gpu_report.rec"
PARCOMP_KERNEL_RECORD="$PWD/$stage/gpu_report.rec" PARCOMP_CACHE_DIR=off \
  "$stage/x/gpu_report" --reps 1 --no-baselines >/dev/null
if cargo run -q -p cargo-parcomp -- parcomp bundle "$stage/gpu_report.rec" \
     -o "$stage/gpu_report.pcb" --cuda; then
  rm "$stage/gpu_report.rec"
else
  echo "pack.sh: no kernel bundle (NVRTC missing?): run.sh skips the run without NVRTC"
  rm -f "$stage/gpu_report.rec" "$stage/gpu_report.pcb"
fi
tar -C "$stage" -cf - . | xz -T0 -6 > "$out/bins.tar.xz"
cp scripts/gpu-check/run.sh "$out/run.sh"
rm -rf "$stage"
echo "$out/bins.tar.xz: $(du -h "$out/bins.tar.xz" | cut -f1)"
