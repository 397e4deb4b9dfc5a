#!/usr/bin/env python3
"""Replays command lines against two inferlab binaries and compares what each printed.

The test suite records every command line it runs when INFERLAB_TEST_RECORD names a file
(tests/support/cli.cpp: one JSON line per run with its cwd, environment and arguments). This
script runs each recorded line with binary A and with binary B and compares stdout, stderr and
the exit status byte for byte: the check that a refactoring left every output unchanged.

  INFERLAB_TEST_RECORD=/tmp/runs.jsonl ctest --test-dir OLD/build -LE '^cuda$'
  python3 scripts/compare-outputs.py /tmp/runs.jsonl OLD/build/apps/inferlab build/apps/inferlab

A line whose output differs between two runs of binary A (timings, measured rates) is counted
as nondeterministic and left out of the verdict. Exit 0 when every other line is identical.
"""
import json
import os
import subprocess
import sys


def run(binary, rec):
    env = {k: v for k, v in os.environ.items() if k not in ("INFERLAB_LANG", "LC_ALL", "LC_MESSAGES", "LANG")}
    for e in rec["env"]:
        k, _, v = e.partition("=")
        env[k] = v
    try:
        p = subprocess.run([binary] + rec["args"], cwd=rec["cwd"] or None, env=env, stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=300)
        return (p.returncode, p.stdout, p.stderr)
    except (subprocess.TimeoutExpired, FileNotFoundError) as e:
        return ("error", str(e).encode(), b"")


def main():
    if len(sys.argv) != 4:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        print("usage: compare-outputs.py RECORD.jsonl BINARY_A BINARY_B", file=sys.stderr)
        return 2
    record, a, b = sys.argv[1:]
    seen, recs = set(), []
    for line in open(record, encoding="utf-8"):
        rec = json.loads(line)
        key = json.dumps(rec, sort_keys=True)
        if key not in seen:
            seen.add(key)
            recs.append(rec)
    same = unstable = 0
    differ = []
    for rec in recs:
        ra, rb = run(a, rec), run(b, rec)
        if ra == rb:
            same += 1
        elif run(a, rec) != ra:
            unstable += 1
        else:
            differ.append((rec, ra, rb))
    for rec, ra, rb in differ:
        what = [n for n, x, y in zip(("status", "stdout", "stderr"), ra, rb) if x != y]
        print(f"DIFFERS ({', '.join(what)}): {' '.join(rec['args'])}")
    print(f"{len(recs)} distinct command lines: {same} identical, {len(differ)} different, "
          f"{unstable} nondeterministic (binary A differs from itself)")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
