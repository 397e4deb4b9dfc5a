#pragma once
// Memory owned by a backend (see backend.hpp): host memory for the CPU, device memory for CUDA.
#include <cstddef>

namespace inferlab::model {

class Backend;
// The CPU backend, whose memory is the host's.
Backend& cpu_backend();

// Floats in a backend's memory, zeroed when allocated, freed on destruction.
class Buffer {
public:
    Buffer() = default;
    Buffer(Backend& b, std::size_t floats);
    ~Buffer();
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    Buffer(Buffer&& o) noexcept;
    Buffer& operator=(Buffer&& o) noexcept;
    float* data() const { return p_; }
    std::size_t size() const { return n_; }
    Backend* backend() const { return b_; }

private:
    Backend* b_ = nullptr;
    float* p_ = nullptr;
    std::size_t n_ = 0;
};

}  // namespace inferlab::model
