#include "inferlab/cuda/backend.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <map>
#include <unordered_map>
#include <vector>

#include "inferlab/base/error.hpp"
#include "inferlab/cuda/ops.hpp"

namespace inferlab::cuda {
namespace {

using model::ForwardOptions;
using model::StepRows;
using model::Tensor;

class CudaBackend final : public model::Backend {
public:
    explicit CudaBackend(const model::Weights& w) : host_(w), weights_(w.bytes()) { weights_.upload(w.data(), w.bytes()); }
    ~CudaBackend() override {
        scratch_ = model::Buffer();  // back to the pool, then the pool back to the device
        for (auto& [n, p] : pool_) free_device(p);
    }
    std::string name() const override { return "cuda"; }

    // Freed buffers are kept by size and handed out again (cudaMalloc per step would dominate decode).
    float* allocate(std::size_t floats) override {
        float* p = nullptr;
        auto it = pool_.find(floats);
        if (it != pool_.end()) {
            p = it->second;
            pool_.erase(it);
        } else {
            p = static_cast<float*>(malloc_device(floats * sizeof(float)));
        }
        zero_device(p, std::max<std::size_t>(floats, 1) * sizeof(float));
        return p;
    }
    void release(float* p, std::size_t floats) noexcept override {
        try {
            pool_.emplace(floats, p);
        } catch (...) {
            free_device(p);
        }
    }
    void upload(float* dst, const float* host, std::size_t floats) override { copy_to_device(dst, host, floats * sizeof(float)); }
    void download(float* host, const float* src, std::size_t floats) override { copy_to_host(host, src, floats * sizeof(float)); }

    void embed(const model::MatMap& table, const std::vector<int>& tokens, Tensor& x) override {
        x.resize(static_cast<int>(tokens.size()), static_cast<int>(table.cols()));
        for (std::size_t r = 0; r < tokens.size(); ++r)
            copy_on_device(x.row(static_cast<int>(r)), dev(table.row(tokens[r]).data()), sizeof(float) * std::size_t(table.cols()));
    }
    void rmsnorm(const Tensor& x, const model::VecMap& w, float eps, Tensor& y) override {
        y.resize(x.rows(), x.cols());
        cuda::rmsnorm(x.data(), dev(w.data()), y.data(), x.rows(), x.cols(), eps);
    }
    // float32 weights only: bf16 and int8/int4 copies are CPU backend options (CpuBackendOptions).
    void matmul(const Tensor& x, const model::MatMap& w, Tensor& y, const ForwardOptions&) override {
        const int out = static_cast<int>(w.rows()), in = static_cast<int>(w.cols());
        y.resize(x.rows(), out);
        const float* dw = dev(w.data());
        if (x.rows() == 1) {
            matvec(dw, x.data(), y.data(), out, in);
            return;
        }
        // Up to 16 rows per call, each call reading W once.
        for (int r0 = 0; r0 < x.rows(); r0 += 16) {
            const int n = std::min(16, x.rows() - r0);
            matmul_rows(dw, x.row(r0), y.row(r0), n, out, in);
        }
    }
    void rope(Tensor& v, const std::vector<int>& pos, int head_dim, float theta) override {
        cuda::rope(v.data(), device_ints(pos_, pos), v.rows(), v.cols(), head_dim, theta);
    }
    // All rows of the step in one launch: their row descriptors go up once per layer.
    void store_kv(const Tensor& k, const Tensor& v, const StepRows& step, int layer) override {
        const DecodeRow* rows = decode_rows(step, layer, 0);
        cuda::store_kv(k.data(), v.data(), rows, k.rows(), step.n_kv_heads, step.head_dim);
    }
    void attention(const Tensor& q, const StepRows& step, int layer, const ForwardOptions& opt, Tensor& out) override {
        out.resize(q.rows(), q.cols());
        if (opt.visible_from) throw std::logic_error("cuda attention: visible_from (padding masks) is CPU-only");
        const int n_heads = q.cols() / step.head_dim;
        if (opt.attention == model::AttentionKind::Online) {
            // FlashAttention's order, one launch per run of rows that extend the same cache.
            for (int r0 = 0; r0 < q.rows();) {
                int r1 = r0 + 1;
                while (r1 < q.rows() && step.rows[std::size_t(r1)].cache == step.rows[std::size_t(r0)].cache &&
                       step.pos[std::size_t(r1)] == step.pos[std::size_t(r1 - 1)] + 1)
                    ++r1;
                const KvLayout kv = layout(*step.rows[std::size_t(r0)].cache, layer, step);
                prefill_attention(q.row(r0), kv, step.pos[std::size_t(r0)], r1 - r0, n_heads, opt.window, out.row(r0));
                r0 = r1;
            }
            return;
        }
        // Every row in one launch pair (flash-decoding splits merged by their softmax statistics).
        const DecodeRow* rows = decode_rows(step, layer, opt.window);
        const int max_len = max_len_;
        const std::size_t need = decode_attention_scratch(q.rows(), max_len, n_heads, step.n_kv_heads, step.head_dim);
        if (scratch_.size() < need) scratch_ = model::Buffer(*this, need);
        decode_attention(q.data(), rows, q.rows(), max_len, n_heads, step.n_kv_heads, step.head_dim, out.data(), scratch_.data(),
                         scratch_.size());
    }
    void swiglu(Tensor& a, const Tensor& b) override { cuda::swiglu(a.data(), b.data(), static_cast<int>(a.size())); }
    void add(Tensor& y, const Tensor& x) override { cuda::add(y.data(), x.data(), static_cast<int>(y.size())); }
    // One row (a decode step): Q, K, V and RoPE in one launch. More rows (prefill, batches): the
    // products and RoPE one by one, as the default does.
    void matmul_qkv_rope(const Tensor& x, const model::MatMap& wq, const model::MatMap& wk, const model::MatMap& wv, Tensor& q,
                         Tensor& k, Tensor& v, const std::vector<int>& pos, int head_dim, float theta,
                         const ForwardOptions& opt) override {
        const int dq = static_cast<int>(wq.rows()), dkv = static_cast<int>(wk.rows()), in = static_cast<int>(wq.cols());
        if (x.rows() != 1 || dq % 2 != 0 || dkv % 2 != 0 || head_dim % 2 != 0 || wv.rows() != wk.rows()) {
            Backend::matmul_qkv_rope(x, wq, wk, wv, q, k, v, pos, head_dim, theta, opt);
            return;
        }
        q.resize(1, dq);
        k.resize(1, dkv);
        v.resize(1, dkv);
        qkv_rope(dev(wq.data()), dev(wk.data()), dev(wv.data()), x.data(), q.data(), k.data(), v.data(), dq, dkv, in,
                 device_ints(pos_, pos), head_dim, theta);
    }
    void matmul_swiglu(const Tensor& x, const model::MatMap& w1, const model::MatMap& w3, Tensor& h1, Tensor& h3,
                       const ForwardOptions& opt) override {
        if (x.rows() != 1) {
            Backend::matmul_swiglu(x, w1, w3, h1, h3, opt);
            return;
        }
        const int out = static_cast<int>(w1.rows()), in = static_cast<int>(w1.cols());
        h1.resize(1, out);
        h3.resize(1, out);
        swiglu_matvec(dev(w1.data()), dev(w3.data()), x.data(), h1.data(), h3.data(), out, in);
    }
    // The block's finiteness check rides in the same kernel (it reads every element of x anyway).
    void add_rmsnorm(Tensor& x, const Tensor& t, const model::VecMap& w, float eps, Tensor& y, int check) override {
        y.resize(x.rows(), x.cols());
        int* flags = check >= 0 ? flag_slots(check) : nullptr;
        cuda::add_rmsnorm(x.data(), t.data(), dev(w.data()), y.data(), x.rows(), x.cols(), eps, flags, check, stamp_);
    }
    // Finiteness: a flag per check on the device, stamped with this pass's number when the check
    // fails, and read once at the end of the pass (one copy, not one per block).
    bool defers_finite_checks() const override { return true; }
    void record_finite(const Tensor& t, int index) override {
        cuda::record_finite(t.data(), t.size(), flag_slots(index), index, stamp_);
    }
    int first_non_finite() override {
        int bad = -1;
        if (flag_count_ > 0) {
            std::vector<int> host(flag_count_);
            flags_.download(host.data(), flag_count_ * sizeof(int));
            for (std::size_t i = 0; i < host.size() && bad < 0; ++i)
                if (host[i] == stamp_) bad = static_cast<int>(i);
        }
        if (stamp_ == std::numeric_limits<int>::max()) {  // stamps start again at 1: clear the old ones
            if (flag_count_ > 0) zero_device(flags_.data(), flag_count_ * sizeof(int));
            stamp_ = 0;
        }
        ++stamp_;
        return bad;
    }
    void to_host(const Tensor& t, model::MatrixRM& out) override {
        out.resize(t.rows(), t.cols());
        copy_to_host(out.data(), t.data(), t.size() * sizeof(float));
    }

private:
    // The flags (int [flag_count_], device), grown to hold check `index`.
    int* flag_slots(int index) {
        if (index < 0) throw std::logic_error("finiteness check: a negative check index");
        if (std::size_t(index) >= flag_count_) {
            const std::size_t n = std::max<std::size_t>(std::size_t(index) + 1, 2 * flag_count_ + 64);
            DeviceBuffer grown(n * sizeof(int));
            zero_device(grown.data(), n * sizeof(int));  // 0 is never a stamp
            if (flag_count_ > 0) copy_on_device(grown.data(), flags_.data(), flag_count_ * sizeof(int));
            flags_ = std::move(grown);
            flag_count_ = n;
        }
        return flags_.i();
    }
    // Device address of a host view of the weights (same offset in the uploaded copy).
    const float* dev(const float* host) const {
        if (host < host_.data() || host >= host_.data() + host_.floats())
            throw Error("the CUDA backend was given weights it did not upload (make one backend per model)");
        return weights_.f() + (host - host_.data());
    }
    // A host int vector mirrored on the device, uploaded only when it changed.
    struct DeviceInts {
        DeviceBuffer buf;
        std::vector<int> shadow;
    };
    const int* device_ints(DeviceInts& d, const std::vector<int>& v) {
        if (d.shadow != v) {
            if (d.buf.bytes() < v.size() * sizeof(int)) d.buf = DeviceBuffer(std::max<std::size_t>(v.size(), 16) * 2 * sizeof(int));
            staging_.upload(d.buf.data(), v.data(), v.size() * sizeof(int));
            d.shadow = v;
        }
        return d.buf.i();
    }
    // The step's row descriptors [B] on the device (each row's cache, and positions [lo, pos + 1)),
    // uploaded only when they differ from the last ones sent; max_len_ is the longest span.
    const DecodeRow* decode_rows(const StepRows& step, int layer, int window) {
        std::vector<DecodeRow> rows(step.rows.size());
        max_len_ = 0;
        for (std::size_t r = 0; r < rows.size(); ++r) {
            rows[r].kv = layout(*step.rows[r].cache, layer, step);
            rows[r].hi = step.pos[r] + 1;
            rows[r].lo = window > 0 ? std::max(0, rows[r].hi - window) : 0;
            max_len_ = std::max(max_len_, rows[r].hi - rows[r].lo);
        }
        const std::size_t bytes = rows.size() * sizeof(DecodeRow);
        if (rows_host_.size() != bytes || std::memcmp(rows_host_.data(), rows.data(), bytes) != 0) {
            if (rows_dev_.bytes() < bytes) rows_dev_ = DeviceBuffer(std::max<std::size_t>(bytes, 64 * sizeof(DecodeRow)) * 2);
            staging_.upload(rows_dev_.data(), rows.data(), bytes);
            rows_host_.assign(reinterpret_cast<const unsigned char*>(rows.data()), reinterpret_cast<const unsigned char*>(rows.data()) + bytes);
        }
        return static_cast<const DecodeRow*>(rows_dev_.data());
    }
    KvLayout layout(const model::KvCache& c, int layer, const StepRows& step) {
        const model::KvPlacement p = c.placement(layer);
        KvLayout kv;
        kv.k = p.k;
        kv.v = p.v;
        kv.n_kv_heads = step.n_kv_heads;
        kv.head_dim = step.head_dim;
        kv.seq_max = p.seq_max;
        kv.layer = p.layer;
        if (p.block_table) {
            kv.block_table = device_ints(tables_[&c], *p.block_table);
            kv.block_size = p.block_size;
            kv.n_layers = p.n_layers;
        }
        return kv;
    }

    const model::Weights& host_;
    DeviceBuffer weights_;  // the whole float buffer, same layout as the host's
    std::multimap<std::size_t, float*> pool_;
    model::Buffer scratch_;
    // Positions, row descriptors and block tables go up through here: asynchronous copies from
    // pinned memory, declared before the device buffers they fill so it is destroyed after them.
    StagingRing staging_{std::size_t(4) << 20};
    DeviceInts pos_;
    DeviceBuffer rows_dev_;                  // DecodeRow [B] of the last step and layer
    std::vector<unsigned char> rows_host_;  // what rows_dev_ holds
    int max_len_ = 0;
    DeviceBuffer flags_;          // int [flag_count_]: the pass number (stamp_) where a check failed
    std::size_t flag_count_ = 0;
    int stamp_ = 1;
    std::unordered_map<const model::KvCache*, DeviceInts> tables_;  // block tables by cache (compared before upload)
};

}  // namespace

std::unique_ptr<model::Backend> make_backend(const model::Weights& w, const std::string& where) {
    std::string why;
    if (!available(&why)) throw InputError(where, "cuda", why + "; the cpu backend runs on any machine");
    return std::make_unique<CudaBackend>(w);
}

}  // namespace inferlab::cuda
