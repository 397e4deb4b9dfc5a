#!/usr/bin/env bash
# Regenerates docs/figures/: every document figure drawn by `inferlab figure --all` with the
# documents' inputs (SVG and index.html), and a PNG of each rendered by rsvg-convert (Debian
# librsvg2-bin) for the README and for viewers that do not show SVG.
# Usage: scripts/figures.sh [path/to/inferlab]   (default: build/apps/inferlab)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:-$root/build/apps/inferlab}"
out="$root/docs/figures"
if [ ! -x "$bin" ]; then
  echo "figures.sh: no inferlab at $bin: build it first (cmake --build build --target inferlab)" >&2
  exit 2
fi
command -v rsvg-convert >/dev/null || { echo "figures.sh: rsvg-convert not found (apt-get install librsvg2-bin)" >&2; exit 2; }
rm -rf "$out"
"$bin" figure --all --out "$out"
for svg in "$out"/*.svg; do
  # 1.5× the SVG's own size: sharp on a slide, small enough for the repository.
  rsvg-convert --zoom 1.5 -o "${svg%.svg}.png" "$svg"
done
echo "figures.sh: $(ls "$out"/*.svg | wc -l) figures in $out"
