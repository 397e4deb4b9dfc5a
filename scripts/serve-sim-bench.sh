#!/usr/bin/env bash
# serve-sim's speed (docs/serve-sim-bench.md): the chat preset for Llama-3-8B on one H100 just below its
# saturating rate, at 10k, 100k and 1M requests, one process at a time on one core (taskset), only
# the summaries printed. Prints requests, engine steps, wall seconds, steps per second and the
# peak resident memory. Needs a Release build in build/ (scripts/run.sh makes one).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=./build/apps/inferlab
rate=${RATE:-60}
printf '%10s %10s %9s %12s %10s\n' requests steps seconds steps/s max_rss_mb
for n in 10000 100000 1000000; do
  out=$( { /usr/bin/time -f '%e %M' taskset -c 0 "$bin" serve-sim --model llama-3-8b --hw h100-sxm --requests "$n" \
           --rate "$rate" > /tmp/serve-sim-bench.txt; } 2>&1 )
  read -r secs rss_kb <<< "$out"
  steps=$(grep -o '([0-9,]* steps)' /tmp/serve-sim-bench.txt | tr -d '(), steps')
  python3 -c "print('%10d %10d %9.2f %12.0f %10.0f' % ($n, $steps, $secs, $steps / max($secs, 1e-9), $rss_kb / 1024))"
done
