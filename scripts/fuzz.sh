#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan: -DINFERLAB_FUZZ=ON, here without the tests)
# and runs each over its seed corpus in fuzz/corpus/<target>/.
#   scripts/fuzz.sh                 CI: each target for a bounded number of runs (under 5 minutes in all)
#   scripts/fuzz.sh --campaign 600 [TARGET...]
#                                   each target for 600 s, one after another, niced; findings are
#                                   kept under $FUZZ_BUILD_DIR/campaign/<target>/ (artifacts, new corpus, log)
#   scripts/fuzz.sh --build-only    only the build
#   FUZZ_NO_BUILD=1 skips the build (targets already in $FUZZ_BUILD_DIR/fuzz/).
#   FUZZ_BUILD_DIR=DIR: the build tree (default build-fuzz). scripts/test.sh passes its sanitized
#                   tree build-asan with FUZZ_NO_BUILD=1 (it configured that tree itself, with the
#                   tests); a build here would configure it without them.
# A crash, a sanitizer report, a timeout, an exit 3 or NaN in output fails the CI run.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
cxx="${CXX_FUZZ:-$(command -v clang++-14 || command -v clang++)}"
jobs="$(nproc)"
targets=(units config layer_spec checkpoint cli)
build="$(realpath -m "${FUZZ_BUILD_DIR:-build-fuzz}")"

if [ -z "${FUZZ_NO_BUILD:-}" ]; then
  # -g1 (line tables): what a finding's stack needs, at a fraction of full debug info's build time.
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DINFERLAB_FUZZ=ON -DINFERLAB_BUILD_TESTS=OFF \
    -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"
  cmake --build "$build" -j "$jobs"
fi
if [ "${1:-}" = "--build-only" ]; then
  exit 0
fi

# Runs per target in CI: the parsers are fast, the command line and checkpoints slower per input.
declare -A runs=([units]=50000 [config]=5000 [layer_spec]=5000 [checkpoint]=2000 [cli]=300)
# leak detection off: the CLI keeps function-local statics; libFuzzer's own limits stay on.
export ASAN_OPTIONS="detect_leaks=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

if [ "${1:-}" = "--campaign" ]; then
  seconds="${2:?--campaign needs seconds per target}"
  shift 2
  [ $# -gt 0 ] && targets=("$@")
  for t in "${targets[@]}"; do
    out="$build/campaign/$t"
    mkdir -p "$out/corpus" "$out/artifacts" "$out/work"
    echo "== $t: $seconds s from $(date -u +%T) (log: $out/log) =="
    # One process (fork mode spends most of a slow machine on restarts); after a finding it is
    # started again on the grown corpus for the time that is left, so one campaign reports every
    # finding. The work directory takes any file a fuzzed command line writes (model init --out).
    start=$(date +%s)
    : > "$out/log"
    while left=$((seconds - ($(date +%s) - start))); [ "$left" -gt 5 ]; do
      # FUZZ_TIMEOUT (default 60 s): niced on a busy machine, a legitimate input (a seed that runs
      # the demo model) can take far more than its CI time, and a seed that times out every
      # restart would leave no time to fuzz.
      (cd "$out/work" && nice -n 19 "$build/fuzz/fuzz_$t" -timeout="${FUZZ_TIMEOUT:-60}" -rss_limit_mb=4096 \
        -max_total_time="$left" -print_final_stats=1 -artifact_prefix="$out/artifacts/" \
        "$out/corpus" "$root/fuzz/corpus/$t") >> "$out/log" 2>&1 || echo "fuzz.sh: finding, restarting" >> "$out/log"
    done
    grep -E "stat::number_of_executed_units|fuzz.sh: finding" "$out/log" || true
  done
  exit 0
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for t in "${targets[@]}"; do
  echo "== fuzz_$t: ${runs[$t]} runs over fuzz/corpus/$t =="
  mkdir -p "$tmp/$t/corpus" "$tmp/$t/work"
  # New inputs go to the temporary corpus (first directory); the seeds in the tree stay as they are.
  (cd "$tmp/$t/work" && "$build/fuzz/fuzz_$t" -runs="${runs[$t]}" -timeout=20 -rss_limit_mb=4096 \
    -seed=1 -artifact_prefix="$tmp/$t/" "$tmp/$t/corpus" "$root/fuzz/corpus/$t" > "$tmp/$t/log" 2>&1) || {
    echo "fuzz.sh: error: fuzz_$t found a crash, hang or sanitizer report:" >&2
    tail -n 40 "$tmp/$t/log" >&2
    exit 1
  }
  grep -E "^Done|stat::number_of_executed_units" "$tmp/$t/log" | tail -n 1 || true
done
