#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: build with CUDA for this card, run the cuda tests, and run
# the GPU benchmark (GB/s against the card's copy bandwidth). Record its output in docs/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
export PATH="/usr/local/cuda/bin:$PATH"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv || true
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DINFERLAB_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=native
cmake --build build-gpu -j "$(nproc)"
ctest --test-dir build-gpu --output-on-failure -L cuda
./build-gpu/tests/cuda_bench
./build-gpu/apps/inferlab model logits --model demo-gqa --tokens 1,2,3 --backend cuda --path paged
# The first document's Figure 17 on the GPU: no cache, contiguous and paged agree (exit 1 if not).
./build-gpu/apps/inferlab model check-cache --model demo-gqa --length 64 --backend cuda
