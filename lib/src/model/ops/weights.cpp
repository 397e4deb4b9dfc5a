#include "inferlab/model/ops/weights.hpp"

#include <sys/mman.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <utility>

#include <fmt/format.h>

#include "inferlab/base/checked.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/files.hpp"
#include "inferlab/base/rng.hpp"
#include "inferlab/data/model_config.hpp"

namespace inferlab::model {
namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::int64_t kMaxFloats = std::int64_t{8} << 30;  // 32 GiB of float32: beyond any model here

std::string decimal(u128 v) {
    std::string s;
    do {
        s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
        v /= 10;
    } while (v != 0);
    return s;
}

// The float count of the layout below, exact for any int32 dims (no product of them exceeds 2^128).
u128 weight_floats_wide(const Dims& d) {
    const u128 L = static_cast<std::uint32_t>(std::max(0, d.n_layers)), D = static_cast<std::uint32_t>(std::max(0, d.dim)),
               KV = static_cast<u128>(std::max(0, d.n_kv_heads)) * static_cast<std::uint32_t>(d.dim / std::max(1, d.n_heads)),
               H = static_cast<std::uint32_t>(std::max(0, d.hidden_dim)), V = static_cast<std::uint32_t>(std::max(0, d.vocab_size));
    u128 n = V * D + L * D + L * D * D + 2 * L * D * KV + L * D * D + L * D + 3 * L * D * H + D;
    if (!d.shared_classifier) n += V * D;
    return n;
}

}  // namespace

void validate(const Dims& d, const std::string& where) {
    auto positive = [&](int v, const char* name) {
        if (v <= 0) throw InputError(where + " " + name, std::to_string(v), N_("must be a positive integer"));
    };
    positive(d.dim, "dim");
    positive(d.hidden_dim, "hidden_dim");
    positive(d.n_layers, "n_layers");
    positive(d.n_heads, "n_heads");
    positive(d.n_kv_heads, "n_kv_heads");
    positive(d.vocab_size, "vocab_size");
    positive(d.seq_len, "seq_len");
    if (d.n_heads % d.n_kv_heads != 0)
        throw InputError(where + " n_heads", std::to_string(d.n_heads),
                         N_("must be divisible by n_kv_heads {0}"), {std::to_string(d.n_kv_heads)});
    if (d.dim % d.n_heads != 0)
        throw InputError(where + " dim", std::to_string(d.dim), N_("must be divisible by n_heads {0}"),
                         {std::to_string(d.n_heads)});
    if (d.head_dim() % 2 != 0)
        throw InputError(where + " dim", std::to_string(d.dim), N_("must give an even head width (RoPE rotates pairs)"));
    // In 128 bits: seven int32 header fields multiply to far beyond 64 bits (a file whose header
    // made the count exactly 2^63 once wrapped past every check).
    if (weight_floats_wide(d) > static_cast<u128>(kMaxFloats))
        throw InputError(where, decimal(weight_floats_wide(d)) + " weights", N_("is larger than 8Gi floats"));
    if (static_cast<u128>(d.n_layers) * static_cast<u128>(d.seq_len) * static_cast<u128>(d.kv_dim()) >
        static_cast<u128>(kMaxFloats))
        throw InputError(where + " seq_len", std::to_string(d.seq_len), N_("makes the KV cache larger than 8Gi floats"));
}

bool reference_architecture(const ModelConfig& c) { return c.model_type == "llama"; }

Dims dims_from_config(const ModelConfig& c) {
    if (c.mla || c.experts) throw InputError("config '" + c.name + "'", c.model_type, N_("is not a dense GQA model the reference runs"));
    // Each field must fit the int the reference model (and llama2.c's header) holds: 2^32 + 64 was
    // once read as 64.
    const std::pair<const char*, std::uint64_t> fields[] = {
        {"hidden_size", c.hidden},          {"intermediate_size", c.intermediate}, {"num_hidden_layers", c.layers},
        {"num_attention_heads", c.q_heads}, {"num_key_value_heads", c.kv_heads},   {"vocab_size", c.vocab},
        {"max_position_embeddings", c.max_positions}};
    for (const auto& [key, v] : fields)
        if (v > static_cast<std::uint64_t>(INT32_MAX))
            throw InputError("config '" + c.name + "' " + key, std::to_string(v),
                             N_("must be at most 2,147,483,647 for the reference model (an int32 in its checkpoint header)"));
    Dims d;
    d.dim = static_cast<int>(c.hidden);
    d.hidden_dim = static_cast<int>(c.intermediate);
    d.n_layers = static_cast<int>(c.layers);
    d.n_heads = static_cast<int>(c.q_heads);
    d.n_kv_heads = static_cast<int>(c.kv_heads);
    d.vocab_size = static_cast<int>(c.vocab);
    d.seq_len = static_cast<int>(c.max_positions);
    d.shared_classifier = c.tied_embeddings;
    if (c.head_dim * c.q_heads != c.hidden)
        throw InputError("config '" + c.name + "' head_dim", std::to_string(c.head_dim),
                         N_("must equal hidden_size / num_attention_heads for the reference model (run.c's convention)"));
    if (c.vocab == 0) throw InputError(N_("config '{0}': missing key {1}"), {c.name, "'vocab_size'"});
    if (c.max_positions == 0) throw InputError(N_("config '{0}': missing key {1}"), {c.name, "'max_position_embeddings'"});
    validate(d, "config '" + c.name + "'");
    return d;
}

std::uint64_t weight_floats(const Dims& d) {
    const u128 n = weight_floats_wide(d);
    if (n > static_cast<u128>(UINT64_MAX)) throw OverflowError(N_("weight count of the model"));
    return static_cast<std::uint64_t>(n);
}

void HugePageBuffer::Free::operator()(void* p) const { std::free(p); }

HugePageBuffer::HugePageBuffer(std::size_t bytes) {
    bytes_ = (std::max<std::size_t>(bytes, 1) + kHugePage - 1) / kHugePage * kHugePage;
    void* p = std::aligned_alloc(kHugePage, bytes_);
    if (!p) throw Error("cannot allocate " + std::to_string(bytes_) + " bytes");
    p_.reset(p);
#ifdef MADV_HUGEPAGE
    huge_ = madvise(p, bytes_, MADV_HUGEPAGE) == 0;
#endif
    std::memset(p, 0, bytes_);
}

Weights::Weights(const Dims& d) : d_(d) {
    validate(d, "model");
    const std::uint64_t L = d.n_layers, D = d.dim, KV = d.kv_dim(), H = d.hidden_dim, V = d.vocab_size;
    std::uint64_t o = 0;
    o_emb_ = o, o += V * D;
    o_rms_att_ = o, o += L * D;
    o_wq_ = o, o += L * D * D;
    o_wk_ = o, o += L * KV * D;
    o_wv_ = o, o += L * KV * D;
    o_wo_ = o, o += L * D * D;
    o_rms_ffn_ = o, o += L * D;
    o_w1_ = o, o += L * H * D;
    o_w2_ = o, o += L * D * H;
    o_w3_ = o, o += L * H * D;
    o_rms_final_ = o, o += D;
    o_cls_ = d.shared_classifier ? o_emb_ : o;
    if (!d.shared_classifier) o += V * D;
    n_ = o;
    mem_ = HugePageBuffer(static_cast<std::size_t>(n_) * sizeof(float));
}

MatMap Weights::token_embedding() const { return MatMap(data() + o_emb_, d_.vocab_size, d_.dim); }
VecMap Weights::rms_att(int l) const { return VecMap(data() + o_rms_att_ + std::uint64_t(l) * d_.dim, d_.dim); }
MatMap Weights::wq(int l) const { return MatMap(data() + o_wq_ + std::uint64_t(l) * d_.dim * d_.dim, d_.dim, d_.dim); }
MatMap Weights::wk(int l) const {
    return MatMap(data() + o_wk_ + std::uint64_t(l) * d_.kv_dim() * d_.dim, d_.kv_dim(), d_.dim);
}
MatMap Weights::wv(int l) const {
    return MatMap(data() + o_wv_ + std::uint64_t(l) * d_.kv_dim() * d_.dim, d_.kv_dim(), d_.dim);
}
MatMap Weights::wo(int l) const { return MatMap(data() + o_wo_ + std::uint64_t(l) * d_.dim * d_.dim, d_.dim, d_.dim); }
VecMap Weights::rms_ffn(int l) const { return VecMap(data() + o_rms_ffn_ + std::uint64_t(l) * d_.dim, d_.dim); }
MatMap Weights::w1(int l) const {
    return MatMap(data() + o_w1_ + std::uint64_t(l) * d_.hidden_dim * d_.dim, d_.hidden_dim, d_.dim);
}
MatMap Weights::w2(int l) const {
    return MatMap(data() + o_w2_ + std::uint64_t(l) * d_.dim * d_.hidden_dim, d_.dim, d_.hidden_dim);
}
MatMap Weights::w3(int l) const {
    return MatMap(data() + o_w3_ + std::uint64_t(l) * d_.hidden_dim * d_.dim, d_.hidden_dim, d_.dim);
}
VecMap Weights::rms_final() const { return VecMap(data() + o_rms_final_, d_.dim); }
MatMap Weights::classifier() const { return MatMap(data() + o_cls_, d_.vocab_size, d_.dim); }

std::unique_ptr<Weights> random_weights(const Dims& d, std::uint64_t seed,
                                        const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
    auto w = std::make_unique<Weights>(d);
    Rng rng(seed);
    float* p = w->data();
    std::uint64_t done = 0;
    const std::uint64_t total = w->floats();
    auto tick = [&] {
        if (progress && (++done & ((std::uint64_t{1} << 24) - 1)) == 0) progress(done, total);
    };
    auto fill = [&](std::uint64_t offset, std::uint64_t count, double scale) {
        for (std::uint64_t i = 0; i < count; ++i, tick()) p[offset + i] = static_cast<float>(rng.normal() * scale);
    };
    auto ones = [&](std::uint64_t offset, std::uint64_t count) {
        for (std::uint64_t i = 0; i < count; ++i, tick()) p[offset + i] = static_cast<float>(1.0 + 0.1 * rng.normal());
    };
    const std::uint64_t L = d.n_layers, D = d.dim, KV = d.kv_dim(), H = d.hidden_dim, V = d.vocab_size;
    std::uint64_t o = 0;
    fill(o, V * D, 0.02), o += V * D;  // GPT-2's embedding scale
    ones(o, L * D), o += L * D;
    fill(o, L * D * D, 1 / std::sqrt(double(D))), o += L * D * D;
    fill(o, L * KV * D, 1 / std::sqrt(double(D))), o += L * KV * D;
    fill(o, L * KV * D, 1 / std::sqrt(double(D))), o += L * KV * D;
    fill(o, L * D * D, 1 / std::sqrt(double(D))), o += L * D * D;
    ones(o, L * D), o += L * D;
    fill(o, L * H * D, 1 / std::sqrt(double(D))), o += L * H * D;
    fill(o, L * D * H, 1 / std::sqrt(double(H))), o += L * D * H;
    fill(o, L * H * D, 1 / std::sqrt(double(D))), o += L * H * D;
    ones(o, D), o += D;
    if (!d.shared_classifier) fill(o, V * D, 1 / std::sqrt(double(D)));
    if (progress) progress(total, total);
    return w;
}

std::unique_ptr<Weights> derive_draft(const Weights& t, int layers, double perturb, std::uint64_t seed) {
    const Dims& td = t.dims();
    if (layers < 1 || layers > td.n_layers)
        throw InputError("draft layers", std::to_string(layers), N_("must be between 1 and the target's {0}"),
                         {std::to_string(td.n_layers)});
    // The shortest spelling that reads back as this double ("-1", not to_string's "-1.000000").
    if (perturb < 0) throw InputError("perturbation", fmt::format("{}", perturb), N_("must not be negative"));
    Dims d = td;
    d.n_layers = layers;
    auto w = std::make_unique<Weights>(d);
    // Per-layer tensors: copy the first `layers` of each group.
    auto copy = [&](std::uint64_t src_off, std::uint64_t dst_off, std::uint64_t per_layer) {
        std::memcpy(w->data() + dst_off, t.data() + src_off, per_layer * layers * sizeof(float));
    };
    const std::uint64_t D = d.dim, KV = d.kv_dim(), H = d.hidden_dim, V = d.vocab_size;
    std::memcpy(w->data() + w->o_emb_, t.data() + t.o_emb_, V * D * sizeof(float));
    copy(t.o_rms_att_, w->o_rms_att_, D);
    copy(t.o_wq_, w->o_wq_, D * D);
    copy(t.o_wk_, w->o_wk_, KV * D);
    copy(t.o_wv_, w->o_wv_, KV * D);
    copy(t.o_wo_, w->o_wo_, D * D);
    copy(t.o_rms_ffn_, w->o_rms_ffn_, D);
    copy(t.o_w1_, w->o_w1_, H * D);
    copy(t.o_w2_, w->o_w2_, D * H);
    copy(t.o_w3_, w->o_w3_, H * D);
    std::memcpy(w->data() + w->o_rms_final_, t.data() + t.o_rms_final_, D * sizeof(float));
    if (!d.shared_classifier) std::memcpy(w->data() + w->o_cls_, t.data() + t.o_cls_, V * D * sizeof(float));
    if (perturb > 0) {
        Rng rng(seed);
        for (std::uint64_t i = 0; i < w->floats(); ++i)
            w->data()[i] *= static_cast<float>(1.0 + perturb * rng.normal());
    }
    return w;
}

namespace {

// run.c skips two legacy RoPE tables between the final norm and a separate classifier.
std::uint64_t legacy_rope_floats(const Dims& d) { return std::uint64_t(d.seq_len) * d.head_dim(); }

}  // namespace

void write_checkpoint(const Weights& w, const std::string& path) {
    const Dims& d = w.dims();
    // Through a temporary file and rename (write_file_safely): a failed write leaves the old
    // checkpoint, never half of the new one.
    write_file_safely(path, [&](std::FILE* f) {
        std::int32_t header[7] = {d.dim, d.hidden_dim, d.n_layers, d.n_heads, d.n_kv_heads,
                                  d.shared_classifier ? d.vocab_size : -d.vocab_size, d.seq_len};
        bool ok = std::fwrite(header, sizeof(header), 1, f) == 1;
        const std::uint64_t shared_part = w.floats() - (d.shared_classifier ? 0 : std::uint64_t(d.vocab_size) * d.dim);
        ok = ok && std::fwrite(w.data(), sizeof(float), shared_part, f) == shared_part;
        // The legacy RoPE tables, zeros: files from llama2.c's export always contain them, and
        // run.c skips them before a separate classifier.
        const std::vector<float> zeros(legacy_rope_floats(d), 0.0f);
        ok = ok && std::fwrite(zeros.data(), sizeof(float), zeros.size(), f) == zeros.size();
        if (!d.shared_classifier) {
            const std::uint64_t cls = std::uint64_t(d.vocab_size) * d.dim;
            ok = ok && std::fwrite(w.data() + shared_part, sizeof(float), cls, f) == cls;
        }
        return ok;
    });
}

std::unique_ptr<Weights> read_checkpoint(std::istream& in, std::uint64_t size, const std::string& path, const std::string& where) {
    std::int32_t h[7];
    if (size < sizeof(h) || !in.read(reinterpret_cast<char*>(h), sizeof(h)))
        throw InputError(where, path, N_("is truncated: shorter than the 28-byte header"));
    Dims d;
    d.dim = h[0];
    d.hidden_dim = h[1];
    d.n_layers = h[2];
    d.n_heads = h[3];
    d.n_kv_heads = h[4];
    d.shared_classifier = h[5] > 0;
    d.vocab_size = h[5] > 0 ? h[5] : (h[5] == INT32_MIN ? 0 : -h[5]);
    d.seq_len = h[6];
    validate(d, "checkpoint '" + path + "' header");
    // validate bounds the floats by 8Gi and the RoPE tables by seq_len·d < 2^62, so these byte
    // counts cannot wrap. The file's size is checked against them before anything is allocated:
    // a 28-byte file must not cost a 2 GB allocation before it is called truncated. A header
    // gives exactly one size with the legacy RoPE tables (what llama2.c's export writes, and
    // write_checkpoint) and, for a tied classifier, one without them (run.c never reads them
    // there): any other size is another model's file or a corrupt header, never read as this one.
    const std::uint64_t cls = d.shared_classifier ? 0 : std::uint64_t(d.vocab_size) * std::uint64_t(d.dim);
    const std::uint64_t floats = weight_floats(d);
    const std::uint64_t body = floats - cls;
    const std::uint64_t without_tables = sizeof(h) + floats * sizeof(float);
    const std::uint64_t with_tables = without_tables + legacy_rope_floats(d) * sizeof(float);
    const std::uint64_t need = d.shared_classifier ? without_tables : with_tables;
    if (size < need)
        throw InputError(where, path, N_("is truncated: {0} bytes, the header's dims need {1}"),
                         {std::to_string(size), std::to_string(need)});
    if (size != with_tables && !(d.shared_classifier && size == without_tables)) {
        if (d.shared_classifier)
            throw InputError(where, path,
                             N_("is {0} bytes, where a version-0 llama2.c file of its header's dims is {1} (with the "
                                "legacy RoPE tables) or {2} (without): a corrupt header or another format"),
                             {std::to_string(size), std::to_string(with_tables), std::to_string(without_tables)});
        throw InputError(where, path,
                         N_("is {0} bytes, where a version-0 llama2.c file of its header's dims is {1}: a corrupt "
                            "header or another format"),
                         {std::to_string(size), std::to_string(with_tables)});
    }
    auto w = std::make_unique<Weights>(d);
    if (!in.read(reinterpret_cast<char*>(w->data()), static_cast<std::streamsize>(body * sizeof(float))))
        throw InputError(where, path, N_("could not be read completely"));
    if (cls) {
        in.seekg(static_cast<std::streamoff>(legacy_rope_floats(d) * sizeof(float)), std::ios::cur);
        if (!in.read(reinterpret_cast<char*>(w->data() + body), static_cast<std::streamsize>(cls * sizeof(float))))
            throw InputError(where, path, N_("could not read the classifier"));
    }
    for (std::uint64_t i = 0; i < w->floats(); ++i)
        if (!std::isfinite(w->data()[i]))
            throw InputError(where, path, N_("is corrupt: weight {0} is not a finite number"), {std::to_string(i)});
    return w;
}

std::unique_ptr<Weights> read_checkpoint(const std::string& path, const std::string& where) {
    std::ifstream in = open_input_file(path, std::ios::binary | std::ios::ate);
    const std::uint64_t size = static_cast<std::uint64_t>(in.tellg());
    in.seekg(0);
    return read_checkpoint(in, size, path, where);
}

}  // namespace inferlab::model
