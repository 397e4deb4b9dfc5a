#!/usr/bin/env python3
"""The library's layers, bottom to top, and the rule between them: a file in lib/src/L or
lib/include/inferlab/L includes inferlab headers of L and of the layers below L only, never of a
layer above. Each folder's README.md names its layer and what it may include; this script reads
the order from LAYERS below and checks every #include "inferlab/..." in lib/ (and that every
folder of lib/src has its README and its mirror under lib/include/inferlab).

  python3 scripts/check-layers.py        exit 0 when the rule holds, 1 with one line per breach
"""
import os
import re
import sys

# Bottom to top. model/ops and model/run are two floors of the model folder.
LAYERS = ["base", "text", "calc", "data", "model/ops", "model/run", "answer", "draw", "cuda"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"inferlab/([^"]+)"', re.M)


def layer_of(rel):
    """The layer of a path relative to lib/src or lib/include/inferlab ('model/ops/x.hpp')."""
    for name in sorted(LAYERS, key=len, reverse=True):
        if rel == name or rel.startswith(name + "/"):
            return name
    return None


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib")
    breaches = []
    for top in ("src", os.path.join("include", "inferlab")):
        base = os.path.join(root, top)
        for dirpath, _, files in os.walk(base):
            for f in files:
                if not f.endswith((".cpp", ".hpp")):
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, base)
                here = layer_of(rel)
                if here is None:
                    breaches.append(f"lib/{top}/{rel}: lies in no layer (move it into one of {', '.join(LAYERS)})")
                    continue
                text = open(path, encoding="utf-8").read()
                for inc in INCLUDE.findall(text):
                    there = layer_of(inc)
                    if there is None:
                        breaches.append(f"lib/{top}/{rel}: includes inferlab/{inc}, which lies in no layer")
                    elif LAYERS.index(there) > LAYERS.index(here):
                        breaches.append(f"lib/{top}/{rel} ({here}) includes inferlab/{inc} ({there}), a layer above it")
    cuda = os.path.join(root, "cuda")  # lib/cuda: the CUDA backend's sources, the top layer with its headers
    for f in sorted(os.listdir(cuda)) if os.path.isdir(cuda) else []:
        for inc in INCLUDE.findall(open(os.path.join(cuda, f), encoding="utf-8").read()):
            if layer_of(inc) is None:
                breaches.append(f"lib/cuda/{f}: includes inferlab/{inc}, which lies in no layer")
    src = os.path.join(root, "src")
    for layer in LAYERS:
        folder = os.path.join(src, layer)
        if layer == "cuda":
            continue  # lib/cuda: the CUDA backend, built only with INFERLAB_CUDA (its headers: include/inferlab/cuda)
        if not os.path.isfile(os.path.join(folder, "README.md")):
            breaches.append(f"lib/src/{layer}: has no README.md saying what it holds and what it may include")
        if not os.path.isdir(os.path.join(root, "include", "inferlab", layer)):
            breaches.append(f"lib/include/inferlab/{layer}: missing (public headers mirror lib/src)")
    for b in breaches:
        print(f"check-layers: {b}")
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
