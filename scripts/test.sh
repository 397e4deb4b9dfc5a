#!/usr/bin/env bash
# Builds and runs every test: a Release build (with the CUDA backend when nvcc is here; the cuda
# tests skip without a GPU), then one sanitized build (clang, ASan + UBSan, no CUDA) for the tests
# again and the fuzz targets' bounded runs.
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
  ctest --test-dir "$dir" --output-on-failure --no-tests=error --output-junit "$junit" "$@"
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

# `configure DIR ARGS...`: cmake -S . -B DIR with Ninja (its scheduling keeps both cores busy, and
# build.ninja's log times every file) for a new tree; a tree made before keeps its generator.
configure() {
  local dir="$1"; shift
  local gen=()
  if [ ! -f "$dir/CMakeCache.txt" ] && command -v ninja >/dev/null; then gen=(-G Ninja); fi
  cmake -S . -B "$dir" "${gen[@]}" "$@"
}

# The Release build. Where nvcc is here it is built with the CUDA backend (INFERLAB_CUDA=ON, in
# build-cuda), so that the CUDA code keeps compiling and the whole suite runs against the binary
# a CUDA user gets; the tests of label cuda run on a GPU and report as skipped without one. The
# configuration without CUDA is the sanitized build's below. Without nvcc: plain Release in build/.
nvcc_bin="$(command -v nvcc || true)"
if [ -z "$nvcc_bin" ] && [ -x /usr/local/cuda/bin/nvcc ]; then
  nvcc_bin=/usr/local/cuda/bin/nvcc
fi
release_dir=build
release_args=(-DCMAKE_BUILD_TYPE=Release)
release_name="Release"
if [ -n "$nvcc_bin" ]; then
  release_dir=build-cuda
  release_args+=(-DINFERLAB_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc_bin")
  release_name="Release, INFERLAB_CUDA=ON"
else
  echo "== no nvcc on this machine: the CUDA build is not checked =="
fi
release_build() {
  configure "$release_dir" "${release_args[@]}"
  cmake --build "$release_dir" -j "$jobs"
}
phase "$release_name build" release_build
# Every label: cuda-emu (the kernels under the host emulation) runs here, cuda skips without a GPU.
phase "$release_name tests" run_ctest "$release_dir" -j "$jobs"

# One sanitized build serves both the tests and the fuzz targets: clang with ASan + UBSan and
# libFuzzer's coverage (-DINFERLAB_FUZZ=ON), the tests in it too. -O1 -g1: the sanitizers' checks
# cost more than the optimiser saves, and line tables are what a report's stack needs. The
# emulated CUDA kernels are left out (-DINFERLAB_EMU_TESTS=OFF): the emulation's fibers
# (swapcontext) are not fully supported by ASan, and the Release run covers them.
# It is built without precompiled headers (-DINFERLAB_PCH=OFF), the Release build with them: each
# file must compile on what it includes itself, which a shared precompiled header would hide.
fuzz_cxx="$(command -v clang++-14 || command -v clang++)"
sanitized_build() {
  configure build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DINFERLAB_FUZZ=ON -DINFERLAB_BUILD_TESTS=ON -DINFERLAB_EMU_TESTS=OFF \
    -DINFERLAB_PCH=OFF \
    -DCMAKE_CXX_COMPILER="$fuzz_cxx" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG"
  cmake --build build-asan -j "$jobs"
}
phase "sanitized build (clang, ASan + UBSan + libFuzzer coverage, no precompiled headers: tests and fuzz targets)" sanitized_build
# -LE: not the cuda label, and not bench (timed benchmarks at full size: minutes under ASan, their
# arithmetic and flags are tested here at small sizes; the Release run runs them).
asan_tests() {
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 run_ctest build-asan -j "$jobs" -LE '^(cuda|bench)$'
}
phase "ASan + UBSan tests" asan_tests

# The libFuzzer targets of the same tree, each for a bounded number of runs over its seed corpus
# in fuzz/corpus/.
phase "fuzz runs (bounded, over fuzz/corpus/)" env FUZZ_NO_BUILD=1 FUZZ_BUILD_DIR=build-asan bash scripts/fuzz.sh
