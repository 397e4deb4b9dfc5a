#pragma once
// The reference transformer run on the GPU with inferlab's CUDA ops: the same weights, the same
// order of operations per layer, a contiguous or paged KV cache in device memory.
#include <cstdint>
#include <memory>
#include <vector>

#include "inferlab/model/weights.hpp"

namespace inferlab::cuda {

class CudaModel {
public:
    CudaModel(const model::Weights& w, bool paged, int block_size, std::uint64_t seed);
    ~CudaModel();
    CudaModel(const CudaModel&) = delete;
    CudaModel& operator=(const CudaModel&) = delete;
    // Feeds tokens one position at a time; returns the logits of each position [tokens, vocab].
    model::MatrixRM forward(const std::vector<int>& tokens);
    int length() const { return len_; }

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    int len_ = 0;
};

}  // namespace inferlab::cuda
