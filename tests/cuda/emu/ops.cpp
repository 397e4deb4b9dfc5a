// lib/cuda/ops.cu and attention.cu, unchanged, compiled by the host compiler: "cuda_runtime.h" here is the
// emulation (tests/cuda/emu/cuda_runtime.h, first on this target's include path).
#include "../../../lib/cuda/ops.cu"
#include "../../../lib/cuda/attention.cu"
