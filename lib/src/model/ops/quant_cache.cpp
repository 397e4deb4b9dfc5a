#include "inferlab/model/ops/quant_cache.hpp"

#include <algorithm>
#include <cmath>

#include "inferlab/base/error.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/base/memory.hpp"
#include "inferlab/calc/quant.hpp"

namespace inferlab::model {

QuantizedCache::QuantizedCache(const Dims& d, unsigned bits, KvQuantScheme scheme, int group_tokens, int positions)
    : d_(d), bits_(bits), scheme_(scheme), group_(group_tokens),
      positions_(positions == 0 ? d.seq_len : std::min(positions, d.seq_len)), decoded_(d, cpu_backend(), positions_) {
    if (bits != 8 && bits != 4) throw InputError("KV cache bits", std::to_string(bits), N_("must be 8 or 4"));
    if (group_tokens < 1) throw InputError("K scale group", std::to_string(group_tokens), N_("must be a positive number of tokens"));
    const std::size_t n = std::size_t(d.n_layers) * d.n_kv_heads * positions_ * d.head_dim();
    require_memory(2 * n, "quantized KV cache", group_thousands(std::uint64_t(positions_)) + " positions");  // K and V codes
    k_codes_.assign(n, 0);
    v_codes_.assign(n, 0);
    const std::size_t per_token_scales = std::size_t(d.n_layers) * d.n_kv_heads * positions_;
    v_scales_.assign(per_token_scales, Eigen::half(0.0f));
    k_scales_.assign(scheme == KvQuantScheme::PerToken
                         ? per_token_scales
                         : std::size_t(d.n_layers) * d.n_kv_heads * ((positions_ + group_tokens - 1) / group_tokens) * d.head_dim(),
                     Eigen::half(0.0f));
}

// Symmetric absmax quantization of one group; the stored fp16 scale is the one used to decode.
void QuantizedCache::quantize_vector(float* v, int n, std::int8_t* codes, Eigen::half* scale) {
    const std::int64_t Q = symmetric_qmax(bits_);
    float amax = 0;
    for (int i = 0; i < n; ++i) amax = std::max(amax, std::fabs(v[i]));
    Eigen::half s(amax > 0 ? amax / static_cast<float>(Q) : 1.0f);
    if (static_cast<float>(s) == 0.0f) s = Eigen::half(1.0f);  // below fp16's range: every code is 0
    *scale = s;
    const float sf = static_cast<float>(s);
    for (int i = 0; i < n; ++i) {
        const double r = round_with(static_cast<double>(v[i]) / sf, Rounding::HalfAwayFromZero, nullptr);
        const auto c = static_cast<std::int8_t>(std::clamp<std::int64_t>(static_cast<std::int64_t>(r), -Q, Q));
        codes[i] = c;
        v[i] = static_cast<float>(c) * sf;
    }
}

// KIVI's K: a full group of G tokens, one scale per channel over those tokens.
void QuantizedCache::quantize_k_group(int layer, int first) {
    const int hd = d_.head_dim();
    const int groups = (positions_ + group_ - 1) / group_;
    std::vector<float> column(static_cast<std::size_t>(group_));
    std::vector<std::int8_t> codes(static_cast<std::size_t>(group_));
    for (int h = 0; h < d_.n_kv_heads; ++h)
        for (int c = 0; c < hd; ++c) {
            for (int t = 0; t < group_; ++t) column[std::size_t(t)] = decoded_.key(layer, h, first + t)[c];
            Eigen::half* scale = &k_scales_[((std::size_t(layer) * d_.n_kv_heads + h) * groups + first / group_) * hd + c];
            quantize_vector(column.data(), group_, codes.data(), scale);
            for (int t = 0; t < group_; ++t) {
                decoded_.key(layer, h, first + t)[c] = column[std::size_t(t)];
                k_codes_[((std::size_t(layer) * d_.n_kv_heads + h) * positions_ + first + t) * hd + c] = codes[std::size_t(t)];
            }
        }
}

void QuantizedCache::set_length(int layer, int len) {
    const int old = decoded_.length(layer);
    const int hd = d_.head_dim();
    for (int pos = old; pos < len; ++pos)
        for (int h = 0; h < d_.n_kv_heads; ++h) {
            const std::size_t tok = (std::size_t(layer) * d_.n_kv_heads + h) * positions_ + pos;
            quantize_vector(decoded_.value(layer, h, pos), hd, &v_codes_[tok * hd], &v_scales_[tok]);
            if (scheme_ == KvQuantScheme::PerToken)
                quantize_vector(decoded_.key(layer, h, pos), hd, &k_codes_[tok * hd], &k_scales_[tok]);
        }
    if (scheme_ == KvQuantScheme::Kivi)
        for (int g0 = (old / group_) * group_; g0 + group_ <= len; g0 += group_)
            if (g0 + group_ > old) quantize_k_group(layer, g0);  // a group completed in this step
    decoded_.set_length(layer, len);
}

void QuantizedCache::truncate(int len) {
    // A KIVI group that loses tokens is no longer complete; its decoded values stay as they are
    // (already quantized), and a later refill re-quantizes the group from those values.
    decoded_.truncate(len);
}

std::uint64_t QuantizedCache::allocated_bytes() const {
    const std::uint64_t codes = (k_codes_.size() + v_codes_.size()) * bits_ / 8;
    return codes + (k_scales_.size() + v_scales_.size()) * sizeof(Eigen::half);
}

std::uint64_t QuantizedCache::bytes_per_token() const {
    // Codes: 2·L·H_kv·d elements at b bits; scales: one fp16 per head vector (V, and K per token),
    // or d per G tokens for KIVI's K (H_kv·d/G per token).
    const std::uint64_t L = d_.n_layers, H = d_.n_kv_heads, hd = d_.head_dim();
    std::uint64_t bits = 2 * L * H * hd * bits_ + L * H * 16;
    bits += scheme_ == KvQuantScheme::PerToken ? L * H * 16 : L * H * hd * 16 / std::uint64_t(group_);
    return (bits + 7) / 8;
}

}  // namespace inferlab::model
