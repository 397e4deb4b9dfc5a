#!/usr/bin/env bash
# Builds and runs every test: the CUDA build's cuda tests (when nvcc is here; skipped without a
# GPU), then a Release build, then an ASan+UBSan build, then the fuzz targets for bounded runs.
# Installs what is missing first, so it works alone on a fresh Debian machine. Each build builds
# only what its configuration tests, and the minutes of every phase are printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="$(nproc)"

# Phase timing: `phase NAME CMD...` runs CMD and records its minutes; the summary prints on every
# exit, a failing one included, so the next person sees where the time went.
phase_names=()
phase_secs=()
script_start=$SECONDS
current_phase=""
current_start=0
phase() {
  current_phase="$1"; shift
  current_start=$SECONDS
  echo "== $current_phase =="
  "$@"
  phase_names+=("$current_phase")
  phase_secs+=($((SECONDS - current_start)))
  current_phase=""
}
summary() {
  local rc=$?
  if [ -n "$current_phase" ]; then  # the phase that failed, with the minutes it ran
    phase_names+=("$current_phase (FAILED)")
    phase_secs+=($((SECONDS - current_start)))
  fi
  echo "== test.sh: minutes per phase =="
  local i
  for i in "${!phase_names[@]}"; do
    awk -v s="${phase_secs[$i]}" -v n="${phase_names[$i]}" 'BEGIN { printf "  %6.1f min  %s\n", s / 60, n }'
  done
  awk -v s="$((SECONDS - script_start))" -v r="$rc" \
    'BEGIN { printf "  %6.1f min  total%s\n", s / 60, (r == 0 ? "" : " (failed, exit " r ")") }'
}
trap summary EXIT

# ctest, then a check that no entry ran zero test cases: Catch2 v2 exits 0 when a name matches
# nothing, so a discovered name that Catch2 cannot find again would pass without running. The
# discovered entries also carry `-w NoTests`; this check is the second line of defence.
run_ctest() {
  local dir="$1"; shift
  # An absolute path: ctest reads a relative --output-junit from inside the test directory.
  local junit="$PWD/$dir/ctest-junit.xml"
  rm -f "$junit"
  ctest --test-dir "$dir" --output-on-failure --output-junit "$junit" "$@"
  if [ ! -s "$junit" ]; then
    echo "test.sh: error: ctest wrote no report to $junit, so the no-test check cannot run" >&2
    return 1
  fi
  if grep -q "No test cases matched" "$junit"; then
    echo "test.sh: error: CTest entries in $dir ran no test case:" >&2
    grep -B2 "No test cases matched" "$junit" | grep -o 'name="[^"]*"' >&2 || true
    return 1
  fi
}

phase "install what is missing (scripts/install-deps.sh)" bash scripts/install-deps.sh

# The CUDA backend must keep compiling: build it whenever nvcc is here; its tests (label cuda)
# run on a GPU and report as skipped without one. Only what that label needs is built: the CUDA
# library, the cuda tests and benchmark, and the binary with the CUDA backend in it (the other
# test programs are the Release build's).
nvcc_bin="$(command -v nvcc || true)"
if [ -z "$nvcc_bin" ] && [ -x /usr/local/cuda/bin/nvcc ]; then
  nvcc_bin=/usr/local/cuda/bin/nvcc
fi
cuda_build() {
  cmake -S . -B build-cuda -DCMAKE_BUILD_TYPE=Release -DINFERLAB_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc_bin"
  cmake --build build-cuda -j "$jobs" --target inferlab inferlab_cuda cuda_tests cuda_bench
}
if [ -n "$nvcc_bin" ]; then
  phase "CUDA build (INFERLAB_CUDA=ON: the CUDA library, its tests, the binary)" cuda_build
  phase "CUDA tests (label cuda; skipped without a GPU)" run_ctest build-cuda -L '^cuda$'
else
  echo "== no nvcc on this machine: the CUDA build is not checked =="
fi

release_build() {
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
  cmake --build build -j "$jobs"
}
phase "Release build" release_build
phase "Release tests" run_ctest build -j "$jobs" -LE '^cuda$'  # cuda-emu (kernels under the host emulation) runs here

# -g1 (line tables): what a sanitizer report's stack needs, at a fraction of full debug info's build time.
asan_build() {
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DINFERLAB_SANITIZE=ON \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"
  cmake --build build-asan -j "$jobs"
}
phase "ASan + UBSan build" asan_build
# -LE cuda here also leaves out cuda-emu (a label regex): the emulation's fibers (swapcontext) are
# not fully supported by ASan, and its model test takes minutes there; the Release run covers it.
asan_tests() {
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 run_ctest build-asan -j "$jobs" -LE cuda
}
phase "ASan + UBSan tests" asan_tests

# Fourth, lean step: the libFuzzer targets (library and fuzz targets only, clang with ASan +
# UBSan), each for a bounded number of runs over its seed corpus in fuzz/corpus/.
phase "fuzz build (clang, libFuzzer)" bash scripts/fuzz.sh --build-only
phase "fuzz runs (bounded, over fuzz/corpus/)" env FUZZ_NO_BUILD=1 bash scripts/fuzz.sh
