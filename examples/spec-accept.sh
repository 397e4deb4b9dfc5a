#!/usr/bin/env bash
# Classroom walkthrough of the first document's §3.1: speculative decoding, and why it is exact.
# Usage: examples/spec-accept.sh   (uses `inferlab` on PATH, or $INFERLAB)
set -euo pipefail
inferlab="${INFERLAB:-inferlab}"
step() { printf '\n### %s\n$ inferlab %s\n' "$1" "${*:2}"; "$inferlab" "${@:2}"; }

step "§3.1.2 by hand: acceptance, residual, output = p (in exact fractions)" \
  spec-accept --p 0.6,0.3,0.1 --q 0.4,0.4,0.2 --explain
step "§3.1.1: a round of four drafts, the third rejected" spec-accept --gamma 4 --outcomes accept,accept,reject
step "How long should the draft be? α = 0.8, the draft costs a tenth of the target" \
  spec-accept --alpha 0.8 --gamma 4 --cost-ratio 0.1
step "Proof by simulation: the rule keeps p; accepting confident drafts does not" \
  spec-accept --p 0.6,0.3,0.1 --q 0.4,0.4,0.2 --simulate 200000 --seed 1
step "Probabilities must be those actually sampled: logits with temperature and top-k" \
  spec-accept --p-logits 2,1,0.5,0 --q-logits 1.5,1.2,0.3,0 --temperature 0.7 --top-k 3

out=$("$inferlab" spec-accept --gamma 4 --outcomes accept,accept,reject --json | grep '"tokens_advanced"')
case "$out" in *": 3"*) ;; *) echo "spec-accept: expected 3 tokens advanced, got $out" >&2; exit 1 ;; esac
