#pragma once
// The model's ops on the GPU (built with -DINFERLAB_CUDA=ON): the same Backend interface the CPU
// implements, so `Transformer(weights, *backend)` runs the same forward pass on the device.
// The backend keeps a copy of the weights in device memory; caches made with it
// (ContiguousCache(d, *backend), BlockPool(..., *backend)) live in device memory too.
#include <memory>
#include <string>

#include "inferlab/model/ops/backend.hpp"

namespace inferlab::cuda {

// Throws InputError naming `where` (a command passes its flag, "--backend") when no GPU can be
// used, with the CUDA runtime's reason.
std::unique_ptr<model::Backend> make_backend(const model::Weights& w, const std::string& where = "backend");

}  // namespace inferlab::cuda
