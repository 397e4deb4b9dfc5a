#!/usr/bin/env bash
# Builds and runs every test: the CUDA build's cuda tests (when nvcc is here; skipped without a
# GPU), then a Release build, then an ASan+UBSan build, then the fuzz targets for bounded runs.
# Installs what is missing first, so it works alone on a fresh Debian machine.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs="$(nproc)"

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
# The CUDA backend must keep compiling: build it whenever nvcc is here; its tests (label cuda)
# run on a GPU and report as skipped without one.
nvcc_bin="$(command -v nvcc || true)"
if [ -z "$nvcc_bin" ] && [ -x /usr/local/cuda/bin/nvcc ]; then
  nvcc_bin=/usr/local/cuda/bin/nvcc
fi
if [ -n "$nvcc_bin" ]; then
  echo "== CUDA build (INFERLAB_CUDA=ON) and cuda tests =="
  cmake -S . -B build-cuda -DCMAKE_BUILD_TYPE=Release -DINFERLAB_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc_bin"
  cmake --build build-cuda -j "$jobs"
  run_ctest build-cuda -L cuda
else
  echo "== no nvcc on this machine: the CUDA build is not checked =="
fi

echo "== Release build and tests =="
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$jobs"
run_ctest build -j "$jobs" -LE '^cuda$'  # cuda-emu (kernels under the host emulation) runs here

echo "== ASan + UBSan build and tests =="
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DINFERLAB_SANITIZE=ON
cmake --build build-asan -j "$jobs"
# -LE cuda here also leaves out cuda-emu (a label regex): the emulation's fibers (swapcontext) are
# not fully supported by ASan, and its model test takes minutes there; the Release run covers it.
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  run_ctest build-asan -j "$jobs" -LE cuda

# Fourth, lean step: the libFuzzer targets (library and fuzz targets only, clang with ASan +
# UBSan), each for a bounded number of runs over its seed corpus in fuzz/corpus/.
echo "== fuzz targets (clang, libFuzzer, bounded runs) =="
bash scripts/fuzz.sh
