#!/usr/bin/env bash
# Installs what inferlab needs to build and test, from Debian's packages, when missing.
set -euo pipefail
# clang-14, libclang-rt-14-dev (libFuzzer, sanitizers) and libomp-14-dev (OpenMP under clang): scripts/fuzz.sh;
# librapidcheck-dev: the property tests; libcsv-dev: the CSV output contract tests read --csv with a real parser;
# libpugixml-dev (an XML parser), librsvg2-bin (rsvg-convert) and zlib1g-dev (to read the PNG back): the figure
# tests parse every SVG and render it to a PNG. gettext (msgfmt, xgettext, msgcmp): the build compiles po/zh_CN.po
# and a test checks that it holds every marked message. python3: scripts/check-layers.py (a CTest entry) and
# scripts/compare-outputs.py. ninja-build: scripts/test.sh builds with Ninja (better use of two cores).
packages=(build-essential cmake ninja-build libcli11-dev libfmt-dev libeigen3-dev catch2 nlohmann-json3-dev librapidcheck-dev
          clang-14 libclang-rt-14-dev libomp-14-dev libcsv-dev libpugixml-dev librsvg2-bin zlib1g-dev gettext python3)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update
"${sudo_cmd[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
