#!/usr/bin/env bash
# Classroom walkthrough of the first document's §4.1: the grid, the error, scales and bytes.
# Usage: examples/quantize.sh   (uses `inferlab` on PATH, or $INFERLAB)
set -euo pipefail
inferlab="${INFERLAB:-inferlab}"
step() { printf '\n### %s\n$ inferlab %s\n' "$1" "${*:2}"; "$inferlab" "${@:2}"; }

step "Figure 15: 0.37 on a grid of step 0.1 with Q = 7" quantize --x 0.37 --step 0.1 --qmax 7
step "Outliers: one scale per tensor against one per group of 32, symmetric and with a zero point" \
  quantize --gen normal:32x256 --outliers 0.01:20 --bits 4 --scheme both
step "... the same data, a scale per 32 values" \
  quantize --gen normal:32x256 --outliers 0.01:20 --bits 4 --group-size 32 --scheme both
step "Rounding rules and their bias" quantize --values 0.05,0.15,0.25,0.35,0.45 --bits 4 --rounding half-even
step "What the bits save: 32 int8 values with one fp16 scale" quantize --elements 32 --bits 8 --group-size 32
step "KV cache: K has outlier channels (KIVI quantizes K per channel, V per token)" \
  quantize --kv-gen 512x128 --outlier-channels 4 --bits 4
step "A real model's KV cache at int8 and int4, metadata counted" quantize --model llama-3-8b --seq-len 8192 --group-size 64

lvl=$("$inferlab" quantize --x 0.37 --step 0.1 --qmax 7 --json | grep '"level"')
case "$lvl" in *4,*) ;; *) echo "quantize: expected level 4, got $lvl" >&2; exit 1 ;; esac
