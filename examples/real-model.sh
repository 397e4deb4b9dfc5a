#!/usr/bin/env bash
# A real model from its config: Llama 3 8B's KV cache, its budget on an 80 GiB card, and
# what a sliding window (Mistral 7B, Gemma-2), a latent cache (DeepSeek-V3) and experts (Mixtral) change.
# Usage: examples/real-model.sh   (uses `inferlab` on PATH, or $INFERLAB)
set -euo pipefail
inferlab="${INFERLAB:-inferlab}"
step() { printf '\n### %s\n$ inferlab %s\n' "$1" "${*:2}"; "$inferlab" "${@:2}"; }

step "Shipped configs" kv-mem --list-models
step "Llama 3 8B, 8 requests of 8192 tokens, paged, over 4 GPUs" \
  kv-mem --model llama-3-8b --seq-len 8192 --batch 8 --block-size 16 --tp 4
step "How many 8192-token requests fit on an 80 GiB card next to the BF16 weights?" \
  kv-mem --model llama-3-8b --budget 80GiB --seq-len 8192 --block-size 16
step "Mistral 7B: a 4096-token sliding window caps every layer" \
  kv-mem --model mistral-7b-v0.1 --seq-len 32768
step "DeepSeek-V3: MLA caches one latent per token and layer" \
  kv-mem --model deepseek-v3 --seq-len 8192 --tp 8
step "Gemma-2 9B: no layer_types in its config, so Gemma2Config's alternating layout applies (and says so)" \
  kv-mem --model gemma-2-9b --seq-len 8192
step "Mixtral 8x7B: a decode step reads the experts its batch routes to, not all 46.7B parameters" \
  decode-roofline --model mixtral-8x7b --seq-len 4096 --hw h100-sxm --batch 1,8,64

fits=$("$inferlab" kv-mem --model llama-3-8b --budget 80GiB --seq-len 8192 --json | grep '"max_batch"')
case "$fits" in *65*) ;; *) echo "real-model: expected max_batch 65, got: $fits" >&2; exit 1 ;; esac
