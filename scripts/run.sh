#!/usr/bin/env bash
# The main job: install what is missing, build (Release), and check every worked example of
# the two documents with `inferlab verify`. Extra arguments go to verify (e.g. --explain).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$(nproc)"
./build/apps/inferlab verify "$@"
