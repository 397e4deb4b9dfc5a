#include "inferlab/cuda/cuda_model.hpp"

#include <algorithm>

#include "inferlab/cuda/ops.hpp"
#include "inferlab/error.hpp"
#include "inferlab/rng.hpp"

namespace inferlab::cuda {

struct CudaModel::Impl {
    model::Dims d;
    const model::Weights& host;
    DeviceBuffer weights;                          // the whole float buffer, same layout as the host's
    DeviceBuffer x, xb, q, k, v, att, tmp, h1, h3, logits, pos, scratch;
    DeviceBuffer kc, vc;                           // contiguous [L, H_kv, S_max, d] or pool [blocks, L, H_kv, bs, d]
    DeviceBuffer table;                            // paged: logical block → physical block
    bool paged = false;
    int block_size = 0;
    std::size_t scratch_floats = 0;
    Impl(const model::Weights& w) : d(w.dims()), host(w) {}
    // Device address of a host view of the weights.
    const float* dev(const float* host_ptr) const { return weights.f() + (host_ptr - host.data()); }
};

CudaModel::CudaModel(const model::Weights& w, bool paged, int block_size, std::uint64_t seed) : impl_(std::make_unique<Impl>(w)) {
    std::string why;
    if (!available(&why)) throw InputError("--backend", "cuda", why + "; use --backend cpu");
    Impl& m = *impl_;
    const model::Dims& d = m.d;
    m.weights = DeviceBuffer(w.bytes());
    m.weights.upload(w.data(), w.bytes());
    auto floats = [](std::size_t n) { return DeviceBuffer(n * sizeof(float)); };
    m.x = floats(d.dim);
    m.xb = floats(d.dim);
    m.q = floats(d.dim);
    m.k = floats(d.kv_dim());
    m.v = floats(d.kv_dim());
    m.att = floats(d.dim);
    m.tmp = floats(d.dim);
    m.h1 = floats(d.hidden_dim);
    m.h3 = floats(d.hidden_dim);
    m.logits = floats(d.vocab_size);
    m.pos = DeviceBuffer(sizeof(int));
    m.scratch_floats = decode_attention_scratch(d.seq_len, d.n_heads, d.head_dim());
    m.scratch = floats(m.scratch_floats);
    m.paged = paged;
    m.block_size = block_size;
    if (paged) {
        if (block_size <= 0) throw InputError("--block-size", std::to_string(block_size), "must be a positive integer");
        const int blocks = (d.seq_len + block_size - 1) / block_size;
        std::vector<int> order(static_cast<std::size_t>(blocks));
        for (int i = 0; i < blocks; ++i) order[std::size_t(i)] = i;
        Rng rng(seed);  // the same shuffled free list as the CPU's BlockPool
        for (int i = blocks - 1; i > 0; --i) std::swap(order[std::size_t(i)], order[rng.below(std::uint64_t(i) + 1)]);
        std::reverse(order.begin(), order.end());  // BlockPool hands out from the back
        m.table = DeviceBuffer(order.size() * sizeof(int));
        m.table.upload(order.data(), order.size() * sizeof(int));
        const std::size_t n = std::size_t(blocks) * d.n_layers * d.n_kv_heads * block_size * d.head_dim();
        m.kc = floats(n);
        m.vc = floats(n);
    } else {
        const std::size_t n = std::size_t(d.n_layers) * d.n_kv_heads * d.seq_len * d.head_dim();
        m.kc = floats(n);
        m.vc = floats(n);
    }
}

CudaModel::~CudaModel() = default;

model::MatrixRM CudaModel::forward(const std::vector<int>& tokens) {
    Impl& m = *impl_;
    const model::Dims& d = m.d;
    const model::Weights& w = m.host;
    model::MatrixRM out(static_cast<Eigen::Index>(tokens.size()), d.vocab_size);
    for (std::size_t t = 0; t < tokens.size(); ++t) {
        const int tok = tokens[t];
        if (tok < 0 || tok >= d.vocab_size)
            throw InputError("token", std::to_string(tok), "is outside the vocabulary [0, " + std::to_string(d.vocab_size - 1) + "]");
        if (len_ >= d.seq_len)
            throw InputError("--tokens", std::to_string(len_ + 1) + " positions",
                             "exceed the model's maximum sequence length " + std::to_string(d.seq_len));
        const int pos = len_;
        m.pos.upload(&pos, sizeof(int));
        m.x.upload(w.token_embedding().row(tok).data(), sizeof(float) * std::size_t(d.dim));
        for (int l = 0; l < d.n_layers; ++l) {
            KvLayout kv;
            kv.n_kv_heads = d.n_kv_heads;
            kv.head_dim = d.head_dim();
            kv.seq_max = d.seq_len;
            kv.n_layers = d.n_layers;
            kv.layer = l;
            float* kb = m.kc.f();
            float* vb = m.vc.f();
            if (m.paged) {
                kv.block_table = m.table.i();
                kv.block_size = m.block_size;
            } else {
                const std::size_t layer_off = std::size_t(l) * d.n_kv_heads * d.seq_len * d.head_dim();
                kb += layer_off;
                vb += layer_off;
            }
            kv.k = kb;
            kv.v = vb;
            rmsnorm(m.x.f(), m.dev(w.rms_att(l).data()), m.xb.f(), 1, d.dim, d.norm_eps);
            matvec(m.dev(w.wq(l).data()), m.xb.f(), m.q.f(), d.dim, d.dim);
            matvec(m.dev(w.wk(l).data()), m.xb.f(), m.k.f(), d.kv_dim(), d.dim);
            matvec(m.dev(w.wv(l).data()), m.xb.f(), m.v.f(), d.kv_dim(), d.dim);
            rope(m.q.f(), m.pos.i(), 1, d.dim, d.head_dim(), d.rope_theta);
            rope(m.k.f(), m.pos.i(), 1, d.kv_dim(), d.head_dim(), d.rope_theta);
            store_kv(m.k.f(), m.v.f(), kb, vb, kv, pos);
            decode_attention(m.q.f(), kv, pos + 1, d.n_heads, m.att.f(), m.scratch.f(), m.scratch_floats);
            matvec(m.dev(w.wo(l).data()), m.att.f(), m.tmp.f(), d.dim, d.dim);
            add(m.x.f(), m.tmp.f(), d.dim);
            rmsnorm(m.x.f(), m.dev(w.rms_ffn(l).data()), m.xb.f(), 1, d.dim, d.norm_eps);
            matvec(m.dev(w.w1(l).data()), m.xb.f(), m.h1.f(), d.hidden_dim, d.dim);
            matvec(m.dev(w.w3(l).data()), m.xb.f(), m.h3.f(), d.hidden_dim, d.dim);
            swiglu(m.h1.f(), m.h3.f(), d.hidden_dim);
            matvec(m.dev(w.w2(l).data()), m.h1.f(), m.tmp.f(), d.dim, d.hidden_dim);
            add(m.x.f(), m.tmp.f(), d.dim);
        }
        rmsnorm(m.x.f(), m.dev(w.rms_final().data()), m.xb.f(), 1, d.dim, d.norm_eps);
        matvec(m.dev(w.classifier().data()), m.xb.f(), m.logits.f(), d.vocab_size, d.dim);
        m.logits.download(out.row(static_cast<Eigen::Index>(t)).data(), sizeof(float) * std::size_t(d.vocab_size));
        ++len_;
    }
    return out;
}

}  // namespace inferlab::cuda
