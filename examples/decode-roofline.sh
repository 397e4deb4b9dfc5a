#!/usr/bin/env bash
# Classroom walkthrough of the first document's §2.1.3: what one decode step reads, and why
# batching raises aggregate throughput but not any one request's speed.
# Usage: examples/decode-roofline.sh   (uses `inferlab` on PATH, or $INFERLAB)
set -euo pipefail
inferlab="${INFERLAB:-inferlab}"
step() { printf '\n### %s\n$ inferlab %s\n' "$1" "${*:2}"; "$inferlab" "${@:2}"; }

step "The document's table: 14 GB of weights, 1 GiB of KV per request, 1 TB/s" \
  decode-roofline --weights-bytes 14GB --kv-bytes-per-request 1GiB --bandwidth 1TB/s --batch 1,8 --explain
step "A sweep: aggregate rises, per-request falls" \
  decode-roofline --weights-bytes 14GB --kv-bytes-per-request 1GiB --bandwidth 1TB/s --batch 1..12
step "A real model on a real card: Llama 3 8B on an H100 (memory fit and compute limit)" \
  decode-roofline --model llama-3-8b --seq-len 8192 --hw h100-sxm --batch 1,8,32,64,128
step "Short contexts: where decode turns compute-bound" \
  decode-roofline --model llama-3-8b --seq-len 128 --hw h100-sxm --batch 1,64,256,512
step "A whole request: prefill (TTFT), then TPOT, then end-to-end" \
  decode-roofline --model llama-3-8b --hw h100-sxm --seq-len 1 --prompt-len 2048 --output-len 512 --batch 1,8

agg=$("$inferlab" decode-roofline --weights-bytes 14GB --kv-bytes-per-request 1GiB --bandwidth 1TB/s --batch 8 --csv | tail -n 1)
case "$agg" in 8,22.589934592,*,354.1400249486831,44.26750311858539) ;; *) echo "decode-roofline: unexpected B=8 row: $agg" >&2; exit 1 ;; esac
