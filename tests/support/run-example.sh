#!/usr/bin/env bash
# Runs one classroom script for CTest and holds it to the examples' contract: exit 0, something on
# stdout, nothing on stderr, and no NaN or infinity printed.
# Usage: run-example.sh SCRIPT   (with INFERLAB set to the binary)
set -uo pipefail
script="$1"
out="$(mktemp)"; err="$(mktemp)"
trap 'rm -f "$out" "$err"' EXIT
bash "$script" >"$out" 2>"$err"
status=$?
cat "$out"
fail=0
if [ "$status" -ne 0 ]; then echo "run-example: $script exited $status" >&2; fail=1; fi
if [ ! -s "$out" ]; then echo "run-example: $script printed nothing" >&2; fail=1; fi
if [ -s "$err" ]; then echo "run-example: $script wrote to stderr:" >&2; cat "$err" >&2; fail=1; fi
# Words, as printf spells them: "nan", "-inf"; not "info" or "inference".
if grep -Eiq '(^|[^A-Za-z])-?(nan|inf|infinity)([^A-Za-z]|$)' "$out"; then
  echo "run-example: $script printed NaN or infinity:" >&2
  grep -Ein '(^|[^A-Za-z])-?(nan|inf|infinity)([^A-Za-z]|$)' "$out" >&2
  fail=1
fi
exit "$fail"
