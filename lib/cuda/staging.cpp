// StagingRing: built on ops.hpp's pinned memory and asynchronous copy only, so the host emulation
// compiles this same file.
#include <cstring>

#include "inferlab/base/error.hpp"
#include "inferlab/cuda/ops.hpp"

namespace inferlab::cuda {

StagingRing::StagingRing(std::size_t bytes) : ring_(static_cast<unsigned char*>(malloc_pinned(bytes))), size_(bytes) {}
StagingRing::~StagingRing() { free_pinned(ring_); }

void StagingRing::upload(void* device_dst, const void* host, std::size_t bytes) {
    if (bytes == 0) return;
    if (bytes > size_) throw Error("cuda::StagingRing: an upload larger than the ring");
    const std::size_t n = (bytes + 15) / 16 * 16;  // slots 16-byte aligned
    if (at_ + n > size_) {
        synchronize();  // every copy out of the ring has run: its slots can be reused
        at_ = 0;
    }
    std::memcpy(ring_ + at_, host, bytes);
    copy_to_device_async(device_dst, ring_ + at_, bytes);
    at_ += n;
}

}  // namespace inferlab::cuda
