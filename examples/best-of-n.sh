#!/usr/bin/env bash
# Classroom walkthrough of the first document's §3.2: coverage is not selection.
# Usage: examples/best-of-n.sh   (uses `inferlab` on PATH, or $INFERLAB)
set -euo pipefail
inferlab="${INFERLAB:-inferlab}"
step() { printf '\n### %s\n$ inferlab %s\n' "$1" "${*:2}"; "$inferlab" "${@:2}"; }

step "The document's formula: p = 0.3, N = 4" best-of-n --p 0.3 --n 4 --explain
step "A verifier that errs: what is chosen, beside what is present (with a Monte Carlo check)" \
  best-of-n --p 0.3 --n 1..8 --tpr 0.9 --fpr 0.2 --simulate 20000 --seed 1
step "A judge biased towards wrong answers: more candidates, fewer right picks" \
  best-of-n --p 0.9 --n 1,2,4,8,16 --judge-bias 0.3
step "Correlated errors: the same mean p, less coverage" \
  best-of-n --p 0.3 --n 1,4,16,64 --hard-fraction 0.4 --rho 0.3
step "Equal cost: one sample, best-of-N with a verifier, or a majority vote" \
  best-of-n --p 0.3 --tpr 0.9 --fpr 0.1 --alternatives 3 --budget 16 --cost-sample 1 --cost-judge 1

cov=$("$inferlab" best-of-n --p 0.3 --n 4 --csv | tail -n 1)
[ "$cov" = "4,0.7599" ] || { echo "best-of-n: expected 4,0.7599, got $cov" >&2; exit 1; }
