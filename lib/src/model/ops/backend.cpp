#include "inferlab/model/ops/backend.hpp"

#include <stdexcept>
#include <utility>

#include "inferlab/base/error.hpp"

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

void Backend::matmul_qkv_rope(const Tensor& x, const MatMap& wq, const MatMap& wk, const MatMap& wv, Tensor& q, Tensor& k,
                              Tensor& v, const std::vector<int>& pos, int head_dim, float theta, const ForwardOptions& opt) {
    matmul(x, wq, q, opt);
    matmul(x, wk, k, opt);
    matmul(x, wv, v, opt);
    rope(q, pos, head_dim, theta);
    rope(k, pos, head_dim, theta);
}

void Backend::matmul_swiglu(const Tensor& x, const MatMap& w1, const MatMap& w3, Tensor& h1, Tensor& h3,
                            const ForwardOptions& opt) {
    matmul(x, w1, h1, opt);
    matmul(x, w3, h3, opt);
    swiglu(h1, h3);
}

void Backend::add_rmsnorm(Tensor& x, const Tensor& t, const VecMap& w, float eps, Tensor& y, int check) {
    add(x, t);
    rmsnorm(x, w, eps, y);
    if (check >= 0) record_finite(x, check);
}

void Backend::record_finite(const Tensor&, int) {
    throw std::logic_error(name() + " backend: record_finite called, but it checks finiteness at once");
}

void require_cache_on(const KvCache& cache, const Backend& b) {
    if (cache.backend().memory_space() != b.memory_space())
        throw Error("a KV cache in " + cache.backend().name() + " memory was passed to the " + b.name() +
                    " backend; make the cache with the model's backend");
}

}  // namespace inferlab::model
