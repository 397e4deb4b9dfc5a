#!/usr/bin/env bash
# Classroom walkthrough: the KV-memory examples of both documents, step by step.
# Usage: examples/kv-walkthrough.sh   (uses `inferlab` on PATH, or $INFERLAB)
set -euo pipefail
inferlab="${INFERLAB:-inferlab}"
step() { printf '\n### %s\n$ inferlab %s\n' "$1" "${*:2}"; "$inferlab" "${@:2}"; }

step "First document §2.1.1: one request, GQA (H_kv = 8), 8192 tokens, BF16" \
  kv-mem --layers 32 --kv-heads 8 --head-dim 128 --seq-len 8192 --kv-dtype bf16 --explain
step "Same with MHA (H_kv = 32): four times the bytes" \
  kv-mem --layers 32 --kv-heads 32 --head-dim 128 --seq-len 8192 --kv-dtype bf16
step "Eight requests of the same length, GQA and MHA side by side" \
  kv-mem --layers 32 --kv-heads 8 --q-heads 32 --head-dim 128 --seq-len 8192 --batch 8 --kv-dtype bf16
step "Second document: 160 KiB per token for L = 40, then ten sequences of 8192" \
  kv-mem --layers 40 --kv-heads 8 --head-dim 128 --kv-dtype bf16 --seq-len 8Ki --batch 10 --explain
step "Requests of different lengths are summed, not averaged" \
  kv-mem --layers 40 --kv-heads 8 --head-dim 128 --kv-dtype bf16 --seq-len 8192,4096,300
step "Paged allocation: blocks of 16 tokens and the tail waste" \
  kv-mem --layers 40 --kv-heads 8 --head-dim 128 --kv-dtype bf16 --seq-len 8192,4100,17 --block-size 16

# The walkthrough's headline numbers, checked so this script cannot rot silently.
total=$("$inferlab" kv-mem --layers 32 --kv-heads 8 --head-dim 128 --seq-len 8192 --kv-dtype bf16 --json | grep '"total_bytes"')
case "$total" in *1073741824*) ;; *) echo "walkthrough: expected 1073741824 bytes, got: $total" >&2; exit 1 ;; esac
