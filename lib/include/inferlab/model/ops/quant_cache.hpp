#pragma once
// A KV cache stored as int8 or int4 codes with fp16 scales, dequantized when read.
//   per-token: one scale per head vector, for K and for V
//   kivi:      V per token as above; K per channel, one scale per channel for each group of G
//              tokens (KIVI), the newest incomplete group kept in float32 until it fills
// The codes and scales are the storage; attention reads the values they decode to (kept in a
// float32 buffer, so the arithmetic is exactly dequantize-on-read). int4 codes are held one per
// byte here for simplicity; the byte counts below count them packed, two per byte, as a real
// int4 cache stores them.
#include <Eigen/Core>
#include <cstdint>
#include <vector>

#include "inferlab/model/ops/kv_cache.hpp"
#include "inferlab/model/ops/weights.hpp"

namespace inferlab::model {

enum class KvQuantScheme { PerToken, Kivi };

class QuantizedCache final : public KvCache {
public:
    // Room for `positions` positions (0, or more than seq_len: seq_len), as ContiguousCache.
    QuantizedCache(const Dims& d, unsigned bits, KvQuantScheme scheme, int group_tokens = 32, int positions = 0);
    int length(int layer) const override { return decoded_.length(layer); }
    void reserve(int n) override { decoded_.reserve(n); }
    float* key(int layer, int h, int pos) override { return decoded_.key(layer, h, pos); }
    float* value(int layer, int h, int pos) override { return decoded_.value(layer, h, pos); }
    int run_length(int pos, int limit) const override { return decoded_.run_length(pos, limit); }
    void set_length(int layer, int len) override;  // quantizes the positions just written
    void truncate(int len) override;
    std::uint64_t allocated_bytes() const override;  // codes + scales for the positions it holds
    Backend& backend() const override { return decoded_.backend(); }  // the CPU's: quantized on the host
    KvPlacement placement(int layer) const override { return decoded_.placement(layer); }
    // Bytes the stored cache holds per token at steady state (codes + scales, every layer).
    std::uint64_t bytes_per_token() const;

private:
    void quantize_vector(float* v, int n, std::int8_t* codes, Eigen::half* scale);
    void quantize_k_group(int layer, int first_pos);
    Dims d_;
    unsigned bits_;
    KvQuantScheme scheme_;
    int group_;
    int positions_;  // S_max: the positions held (≤ seq_len)
    ContiguousCache decoded_;
    std::vector<std::int8_t> k_codes_, v_codes_;   // [L, H_kv, S_max, d] (int4 codes use 4 of the 8 bits)
    std::vector<Eigen::half> k_scales_, v_scales_; // per token per head, or (KIVI K) per channel per group
};

}  // namespace inferlab::model
