#!/usr/bin/env bash
# On a GPU machine, in the repository's root (tests/data and the sources are read from it):
# runs what pack.sh built. In order: the CUDA device layer's tests with the ignored ones, the
# suite with every comprehension forced onto CUDA, the suite on every device present (the
# automatic choice; OpenCL runs go to the best OpenCL device, NVIDIA's where it is installed),
# gpu_bandwidth at 10^8 elements (and with 1, 8 and 16 positions per work-item of a level that
# writes a value per position), gpu_report --full, and gpu_report again from the kernel bundle
# pack.sh made, with NVRTC unloadable (the programs the driver alone loads). A summary goes to stdout; every log
# goes to $OUT/gpu-check.tgz when OUT is set, else to target/gpu-check/logs.
#
# Environment: PARCOMP_NVRTC when NVRTC is not on the loader's path (found here under
# /usr/local/cuda if it is there); GPU_CHECK_JOBS test binaries at a time (default 6).
set -u
root=$PWD
pack=$root/target/gpu-check
bin=/tmp/parcomp-gpu-check
logs=$pack/logs
start=$(date +%s)
elapsed() { echo $(( $(date +%s) - start ))s; }
rm -rf "$bin" "$logs"
mkdir -p "$bin" "$logs"
finish() {
  if [ -n "${OUT:-}" ]; then tar -C "$pack" -czf "$OUT/gpu-check.tgz" logs; fi
}
trap finish EXIT
tar -xJf "$pack/bins.tar.xz" -C "$bin" 2>/dev/null \
  || python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" \
       "$pack/bins.tar.xz" "$bin"
# The tests find their data where they were built (CARGO_MANIFEST_DIR).
manifest=$(grep -ao '/[[:alnum:]_./+-]*/tests/data/' "$bin/t/nested" | head -1 | sed 's#/tests/data/##')
if [ -n "$manifest" ] && [ "$manifest" != "$root" ] && [ ! -e "$manifest" ]; then
  mkdir -p "$(dirname "$manifest")" && ln -s "$root" "$manifest"
fi
if [ -z "${PARCOMP_NVRTC:-}" ] && ! ldconfig -p | grep -q 'libnvrtc.so.1[23] '; then
  nvrtc=$(find /usr/local -name 'libnvrtc.so.1[23]' 2>/dev/null | head -1)
  [ -n "$nvrtc" ] && export PARCOMP_NVRTC=$nvrtc
fi
export PARCOMP_CACHE_DIR=${PARCOMP_CACHE_DIR:-/tmp/parcomp-gpu-check-cache} RUST_BACKTRACE=1
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  echo "NVRTC: ${PARCOMP_NVRTC:-on the loader path}"
  echo "OpenCL ICDs: $(ls /etc/OpenCL/vendors 2>/dev/null | tr '\n' ' ')"
} 2>&1 | tee "$logs/machine.txt"

run_one() {
  local exe=$1 name
  name=$(basename "$exe")
  timeout 300 "$exe" --test-threads=8 >"$logs/$TAG-$name.log" 2>&1
  echo "$TAG $name rc=$? $(grep '^test result' "$logs/$TAG-$name.log" | tail -1)"
}
export -f run_one
export logs
suite() {
  ls "$bin"/t/* | grep -v '/cuda_device$' \
    | xargs -P "${GPU_CHECK_JOBS:-6}" -I{} bash -c 'run_one {}' | sort >"$logs/$TAG.txt"
  echo "$TAG: $(grep -c ' rc=0 ' "$logs/$TAG.txt") of $(wc -l <"$logs/$TAG.txt") binaries passed ($(elapsed))"
  grep -v ' rc=0 ' "$logs/$TAG.txt"
}

echo "== the CUDA device layer, ignored tests included ($(elapsed))"
PARCOMP_REQUIRE_DEVICE=cuda timeout 120 "$bin/t/cuda_device" --include-ignored \
  >"$logs/cuda_device.log" 2>&1
echo "cuda_device rc=$? $(grep '^test result' "$logs/cuda_device.log" | tail -1)"
echo "== the suite, every comprehension forced onto CUDA"
TAG=forced PARCOMP_BACKEND=cuda PARCOMP_REQUIRE_DEVICE=cuda suite
echo "== the suite on every device present"
TAG=every PARCOMP_REQUIRE_DEVICE=cuda suite
echo "== gpu_bandwidth ($(elapsed))"
PARCOMP_REQUIRE_DEVICE=cuda timeout 120 "$bin/x/gpu_bandwidth" 2>&1 | tee "$logs/gpu_bandwidth.txt" | grep '^|'
# A value-per-position level's positions per work-item: 4 (the default above) against 1 (one
# per work-item, the form before 2026-11-29) and 8 and 16, for the map and the expand.
for items in 1 8 16; do
  echo "== gpu_bandwidth, PARCOMP_DEVICE_PLAIN_ITEMS=$items ($(elapsed))"
  PARCOMP_DEVICE_PLAIN_ITEMS=$items PARCOMP_REQUIRE_DEVICE=cuda timeout 120 \
    "$bin/x/gpu_bandwidth" --reps 5 2>&1 | tee "$logs/gpu_bandwidth-items$items.txt" \
    | grep -E '^\| (map|skewed)'
done
echo "== gpu_report --full ($(elapsed))"
MALLOC_MMAP_THRESHOLD_=67108864 MALLOC_TRIM_THRESHOLD_=134217728 PARCOMP_REQUIRE_DEVICE=cuda \
  timeout 300 "$bin/x/gpu_report" --full >"$logs/gpu_report.txt" 2>&1
echo "gpu_report rc=$?"
grep '^|' "$logs/gpu_report.txt" | cut -c1-300
if [ -f "$bin/gpu_report.pcb" ]; then
  # The first-run column against the run above: programs from the bundle (packed by pack.sh)
  # instead of NVRTC, with NVRTC made unloadable and any compile an error.
  echo "== gpu_report from its kernel bundle, without NVRTC ($(elapsed))"
  PARCOMP_NVRTC=/nonexistent/libnvrtc.so.12 PARCOMP_KERNEL_MISS=error \
    PARCOMP_KERNEL_BUNDLE="$bin/gpu_report.pcb" PARCOMP_CACHE_DIR="$(mktemp -d)" \
    PARCOMP_REQUIRE_DEVICE=cuda timeout 300 "$bin/x/gpu_report" --full --no-baselines \
    >"$logs/gpu_report-bundle.txt" 2>&1
  echo "gpu_report (bundle) rc=$?"
  grep '^|' "$logs/gpu_report-bundle.txt" | cut -c1-300
fi
echo "== failures"
for log in "$logs"/forced-*.log "$logs"/every-*.log "$logs"/cuda_device.log; do
  if grep -q 'FAILED\|panicked' "$log"; then
    echo "--- $(basename "$log")"
    grep -E '^test .* FAILED|panicked at' -A2 "$log" | head -12
  fi
done
echo "done ($(elapsed))"
