#!/usr/bin/env bash
# Classroom walkthrough of the reference transformer: a KV cache you can watch.
# Usage: examples/model.sh   (uses `inferlab` on PATH, or $INFERLAB)
set -euo pipefail
inferlab="${INFERLAB:-inferlab}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
step() { printf '\n### %s\n$ inferlab %s\n' "$1" "${*:2}"; "$inferlab" "${@:2}"; }

step "A 4-token prompt, then two decode steps: the second document's table (4, then 5, then 6 cached positions)" \
  model generate --model demo-gqa --prompt 1,2,3,4 --steps 3 --trace
step "The first document's Figure 17: no cache, contiguous and paged caches give the same logits" \
  model check-cache --model demo-gqa --seq-len 32
step "A llama2.c checkpoint, written and read back" model init --model demo-gqa --seed 1 --out "$tmp/demo.bin"
step "Logits through the paged cache (blocks from a shuffled free list)" \
  model logits --checkpoint "$tmp/demo.bin" --tokens 5,6,7 --path paged
step "Sliding-window attention changes the relation set, so the logits change past the window" \
  model logits --checkpoint "$tmp/demo.bin" --tokens 5,6,7,8,9,10 --window 2

agree=$("$inferlab" model check-cache --model demo-gqa --seq-len 16 --json | grep '"agree"')
case "$agree" in *true*) ;; *) echo "model: the cache paths disagree: $agree" >&2; exit 1 ;; esac
