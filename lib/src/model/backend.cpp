#include "inferlab/model/backend.hpp"

#include <utility>

#include "inferlab/error.hpp"

namespace inferlab::model {

Buffer::Buffer(Backend& b, std::size_t floats) : b_(&b), p_(b.allocate(floats)), n_(floats) {}

Buffer::~Buffer() {
    if (p_) b_->release(p_, n_);
}

Buffer::Buffer(Buffer&& o) noexcept
    : b_(std::exchange(o.b_, nullptr)), p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}

Buffer& Buffer::operator=(Buffer&& o) noexcept {
    if (this != &o) {
        if (p_) b_->release(p_, n_);
        b_ = std::exchange(o.b_, nullptr);
        p_ = std::exchange(o.p_, nullptr);
        n_ = std::exchange(o.n_, 0);
    }
    return *this;
}

void Tensor::resize(int rows, int cols) {
    const std::size_t need = std::size_t(rows) * std::size_t(cols);
    if (need > buf_.size()) buf_ = Buffer(*b_, need);
    rows_ = rows;
    cols_ = cols;
}

void require_cache_on(const KvCache& cache, const Backend& b) {
    if (&cache.backend() != &b)
        throw Error("a KV cache in " + cache.backend().name() + " memory was passed to the " + b.name() +
                    " backend; make the cache with the model's backend");
}

}  // namespace inferlab::model
