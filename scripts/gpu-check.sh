#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: the cuda tests, compute-sanitizer once over the kernel tests,
# the GPU benchmark (each kernel's GB/s against the measured copy bandwidth; a decode step against
# decode-roofline's bound) and the model's cache check on the GPU. Installs nothing.
#
#   scripts/gpu-check.sh                 build here (needs nvcc and the Debian dev packages that
#                                        scripts/install-deps.sh lists), then run
#   scripts/gpu-check.sh --prebuilt DIR  run DIR/cuda_tests, DIR/cuda_bench and DIR/inferlab, built
#                                        elsewhere (-DINFERLAB_CUDA=ON, cudart static), with DIR/lib
#                                        on LD_LIBRARY_PATH for shared libraries the machine lacks
#
# Every step runs even when an earlier one failed; the exit status is 1 if any failed. The log goes
# to docs/gpu-check.log, and to $OUT/gpu-check.log as well when OUT is set.
set -uo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"

prebuilt=""
if [ "${1:-}" = "--prebuilt" ]; then
  prebuilt="$(cd "${2:?--prebuilt needs a directory}" && pwd)"
elif [ $# -gt 0 ]; then
  echo "gpu-check: error: unknown argument '$1' (use --prebuilt DIR or nothing)" >&2
  exit 2
fi

mkdir -p docs
log="$root/docs/gpu-check.log"
: > "$log"
if [ -n "${OUT:-}" ]; then
  exec > >(tee "$log" "$OUT/gpu-check.log") 2>&1
else
  exec > >(tee "$log") 2>&1
fi

failed=()
step() {  # step NAME COMMAND...: runs it, records a failure, never stops the script
  local name="$1"; shift
  echo
  echo "== $name: $*"
  local t0=$SECONDS
  "$@"
  local rc=$?
  echo "== $name: exit $rc after $((SECONDS - t0)) s"
  [ $rc -eq 0 ] || failed+=("$name (exit $rc)")
  return 0
}

echo "gpu-check $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
export PATH="/usr/local/cuda/bin:$PATH"
if ! command -v nvidia-smi >/dev/null; then
  echo "gpu-check: error: nvidia-smi not found: this machine has no NVIDIA driver" >&2
  exit 2
fi
# Versions: the driver's (and the newest CUDA it supports) and the toolkit's.
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.mem --format=csv
driver_cuda="$(nvidia-smi | sed -n 's/.*CUDA Version: *\([0-9.]*\).*/\1/p' | head -1)"
echo "driver supports CUDA up to: ${driver_cuda:-unknown}"
if command -v nvcc >/dev/null; then nvcc --version | tail -2; fi

if [ -n "$prebuilt" ]; then
  bin="$prebuilt"
  export LD_LIBRARY_PATH="$prebuilt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  for f in cuda_tests cuda_bench inferlab; do
    [ -x "$bin/$f" ] || { echo "gpu-check: error: --prebuilt $prebuilt has no executable $f" >&2; exit 2; }
  done
  ldd "$bin/cuda_tests" | grep -q "not found" && { echo "gpu-check: error: libraries missing:" >&2; ldd "$bin/cuda_tests" | grep "not found" >&2; exit 2; }
else
  # Installs nothing: a GPU machine may have no network. Check for what the build needs.
  missing=()
  command -v nvcc >/dev/null || missing+=("nvcc (CUDA toolkit)")
  command -v cmake >/dev/null || missing+=("cmake")
  for h in fmt/format.h CLI/CLI.hpp eigen3/Eigen/Core catch2/catch.hpp nlohmann/json.hpp; do
    [ -e "/usr/include/$h" ] || missing+=("/usr/include/$h")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "gpu-check: error: cannot build here, missing: ${missing[*]}." >&2
    echo "  Install them (scripts/install-deps.sh) or build elsewhere and run scripts/gpu-check.sh --prebuilt DIR (docs/cuda.md)." >&2
    exit 2
  fi
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DINFERLAB_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=native || exit 2
  cmake --build build-gpu -j "$(nproc)" --target cuda_tests cuda_bench inferlab || exit 2
  bin="$root/build-gpu/gpu-bin"
  mkdir -p "$bin"
  ln -sf "$root/build-gpu/tests/cuda_tests" "$root/build-gpu/tests/cuda_bench" "$root/build-gpu/apps/inferlab" "$bin/"
fi

# The driver must be new enough for the runtime the binaries carry: the tests' runner exits 77
# with the runtime's reason when no device can be used (say, "CUDA driver version is insufficient").
probe="$("$bin/cuda_tests" --list-test-names-only 2>&1)"
if [ $? -eq 77 ]; then
  echo "gpu-check: error: the CUDA runtime cannot use this GPU: $probe" >&2
  echo "  (driver supports CUDA ${driver_cuda:-?}; a runtime newer than that needs a newer driver)" >&2
  exit 2
fi

step "cuda tests" "$bin/cuda_tests" --durations yes
step "compute-sanitizer memcheck over the kernel tests" timeout 240 compute-sanitizer --tool memcheck --error-exitcode 1 "$bin/cuda_tests" "[kernels]"
step "kernel tests with a synchronize after every launch" env INFERLAB_CUDA_SYNC=1 "$bin/cuda_tests" "[kernels]"
step "benchmark" "$bin/cuda_bench"
# The same with decode attention's block-per-tile kernel, for the comparison in docs/cuda.md.
step "benchmark, block decode kernel" env INFERLAB_CUDA_DECODE=block "$bin/cuda_bench"
# Hardware counters for one decode-attention launch pair, pass 1 and the merge (memory throughput
# against peak); clocks left alone. Only ncu's report is kept: the benchmark's own table under the profiler is not a timing.
ncu_report() {
  local f; f="$(mktemp)"
  timeout 120 ncu --clock-control none -k regex:decode_attention -c 2 --section SpeedOfLight --log-file "$f" "$bin/cuda_bench" > /dev/null
  local rc=$?
  cat "$f"
  return $rc
}
if command -v ncu >/dev/null; then
  step "ncu: decode attention speed of light" ncu_report
fi
step "model logits on the GPU" "$bin/inferlab" model logits --model demo-gqa --tokens 1,2,3 --backend cuda --path paged
# The first document's Figure 17 on the GPU: no cache, contiguous and paged agree (exit 1 if not).
step "model check-cache on the GPU" "$bin/inferlab" model check-cache --model demo-gqa --length 64 --backend cuda

echo
if [ ${#failed[@]} -gt 0 ]; then
  echo "gpu-check: FAILED: ${failed[*]}"
  exit 1
fi
echo "gpu-check: all steps passed"
