#pragma once
// Uniform quantization, as the first document's §4.1 writes it, and what changes it:
//   x̂ = Δ·clip(round(x/Δ), −Q, Q)                       (symmetric)
//   q = clip(round(x/Δ) + z, 0, 2^b − 1), x̂ = Δ·(q − z)  (asymmetric, zero point z)
// with scales per tensor, per group, per row or per column, three rounding rules, the error
// report, and the bytes a format really stores (scales and zero points included).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "inferlab/base/dtype.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/base/rational.hpp"
#include "inferlab/calc/kv.hpp"

namespace inferlab {

class Rng;

enum class Rounding { HalfAwayFromZero, HalfToEven, Stochastic };
enum class Scheme { Symmetric, Asymmetric };
enum class Granularity { Tensor, Group, Row, Column };

Rounding parse_rounding(const std::string& where, const std::string& text);
Granularity parse_granularity(const std::string& where, const std::string& text);
std::string to_string(Rounding r);
std::string to_string(Granularity g);

// round(y) under the rule; `rng` is used (and required) only for Stochastic.
double round_with(double y, Rounding rule, Rng* rng);
// The same rules on an exact fraction, so a tie is a tie: 3/2 → 2 (half away, half even),
// 7/2 → 4 (half even). In doubles 0.15/0.1 is 1.4999999999999998 and would round to 1.
std::int64_t round_exact(const Rational& y, Rounding rule, Rng* rng);

// Q = 2^(b−1) − 1 for b in 2..16.
std::int64_t symmetric_qmax(unsigned bits);

struct ScalarQuant {
    double x = 0, step = 0;
    std::int64_t qmax = 0;
    double scaled = 0;            // x / Δ
    std::int64_t rounded = 0;     // round(x / Δ) before clipping
    std::int64_t level = 0;       // after clipping to [−Q, Q]
    double dequantized = 0;       // Δ·level
    double error = 0;             // x̂ − x
    bool clipped = false;
    bool exact = false;           // computed in fractions (quantize_scalar_exact)
    std::string scaled_fraction;  // x / Δ as a reduced fraction when exact ("3/2")
};
ScalarQuant quantize_scalar(double x, double step, std::int64_t qmax, Rounding rule, Rng* rng);
// |x̂ − x| ≤ Δ/2, the rounding bound (relative slack 1e-12 for the double path's rounding). A
// clipped value may break it: that is what clipping costs.
bool within_half_step(const ScalarQuant& q);
// The same quantizer in exact fractions, for decimals typed by a person (0.15 and 0.1 are 3/20
// and 1/10, not the binary doubles nearest them). Throws OverflowError when a fraction leaves
// 64 bits; the caller then uses quantize_scalar.
ScalarQuant quantize_scalar_exact(const Rational& x, const Rational& step, std::int64_t qmax, Rounding rule, Rng* rng);

// A matrix of values, row-major; a vector is one row.
struct Matrix {
    std::size_t rows = 0, cols = 0;
    std::vector<double> v;
    double at(std::size_t r, std::size_t c) const { return v[r * cols + c]; }
};

struct QuantConfig {
    unsigned bits = 8;
    Scheme scheme = Scheme::Symmetric;
    Granularity granularity = Granularity::Tensor;
    std::size_t group_size = 0;   // for Group: consecutive elements along a row
    Rounding rounding = Rounding::HalfAwayFromZero;
    std::string group_where = "group size";  // names the group size in errors ("--group-size")
};

struct ErrorReport {
    std::size_t count = 0, groups = 0;
    double max_abs_error = 0;
    double mse = 0;
    double mean_error = 0;                 // bias: mean of x̂ − x
    std::optional<double> snr_db;          // absent when the error is exactly zero
    std::size_t clipped = 0;
    std::size_t bound_checked = 0;         // values inside the range, where |x − x̂| ≤ Δ/2 must hold
    std::size_t bound_violations = 0;
    std::size_t bound_held() const { return bound_checked - bound_violations; }  // values where it held
};

struct QuantResult {
    Matrix dequantized;
    std::vector<double> scales;            // one per group
    std::vector<std::int64_t> zero_points; // asymmetric only
    ErrorReport report;
};
// Scales from the absolute maximum (symmetric: Δ = max|x|/Q) or the range (asymmetric:
// Δ = (max − min)/(2^b − 1)) of each group. A group of zeros gets Δ = 1 (all levels 0).
QuantResult quantize_matrix(const Matrix& m, const QuantConfig& cfg, Rng* rng);
// The groups quantize_matrix gives one scale each: the indices into m.v of each group, in the
// order of QuantResult::scales. InputError for a group size that does not divide the row.
std::vector<std::vector<std::size_t>> quant_groups(const Matrix& m, const QuantConfig& cfg);

// The finite range of a storage dtype (by DType name): fp32 ±3.4028235e38, bf16 ±3.3895314e38,
// fp16 ±65504, fp8 ±57344 (e5m2's; "fp8" also names e4m3, ±448: the wider is taken so that no
// value an fp8 format holds is refused), int8 −128..127, int4 −8..7. InputError for another name.
struct DTypeRange {
    double lo = 0, hi = 0;
};
DTypeRange dtype_range(const std::string& dtype_name);

// Storage of n elements at `bits` with one scale (and zero point) per group of `group` elements.
struct StorageCost {
    std::uint64_t elements = 0, groups = 0;
    std::uint64_t source_bytes = 0;     // before: elements × source bits
    std::uint64_t data_bytes = 0;       // packed levels
    std::uint64_t metadata_bytes = 0;   // scales + zero points
    std::uint64_t total_bytes = 0;
    double bits_per_element = 0;        // total × 8 / elements
};
StorageCost storage_cost(std::uint64_t elements, std::uint64_t group, unsigned bits, unsigned source_bits,
                         unsigned scale_bits, unsigned zero_bits);

// The bytes of `params` weights stored at `dtype`, the one rule decode-roofline, quantize --model
// and the reference model's bytes per step share: int8 and int4 in symmetric groups of
// kWeightGroup = 32 consecutive weights with one fp16 scale each (storage_cost: 8.5 and 4.5 bits
// per weight, as the model's quantized matrices are stored); every other dtype at its width, no
// metadata (fp8's per-tensor scale is a few bytes per matrix, left out). OverflowError past 2^64.
constexpr std::uint64_t kWeightGroup = 32;
constexpr unsigned kWeightScaleBits = 16;
StorageCost weight_storage(std::uint64_t params, const DType& dtype);
// The inverse: how many weights `bytes` hold at `dtype` by that rule (rounded down), for a
// model given by its weight bytes alone.
std::uint64_t params_of_weight_bytes(std::uint64_t bytes, const DType& dtype);
// How weight_storage's bytes were counted, as the output says it: "P parameters × b B (dtype)",
// "+ m B of fp16 scales, one per 32" at int8/int4, and with `tied_rule` (the config reader's
// rule for the LM head) "(counted from the config; ...)" after the parameters.
Prose weight_bytes_origin(std::uint64_t params, const DType& dtype, const StorageCost& cost, const Prose* tied_rule = nullptr);

// The KV cache of a model stored quantized: kv-mem's bytes at `bits` per element plus one scale
// (and zero point) per group of `group` elements of each head vector. `group` must divide d.
struct KvQuantBytes {
    std::uint64_t data_bytes = 0, metadata_bytes = 0, total_bytes = 0;
    std::uint64_t bytes_per_token = 0;   // every layer's bytes of one token, before sliding windows cap layers
};
KvQuantBytes kv_quantized_bytes(const KvSpec& spec, const std::vector<std::uint64_t>& seq_lens, unsigned bits,
                                std::uint64_t group, unsigned scale_bits, unsigned zero_bits,
                                const std::string& group_where = "group size");

// KIVI's point: K has outlier channels, so quantize K per channel (columns of [tokens, channels])
// and V per token (rows). Returns K per-channel, K per-token and V per-token reports.
struct KvQuantComparison {
    ErrorReport k_per_channel, k_per_token, v_per_token, v_per_channel;
    bool k_per_channel_better = false;  // K's MSE per channel below its MSE per token
};
KvQuantComparison compare_kv_quantization(const Matrix& k, const Matrix& v, unsigned bits, Rounding rule, Rng* rng);

// Generators for teaching data: normal values, with a fraction of outliers scaled by `factor`,
// and a K-like matrix whose `outlier_channels` columns are scaled by `factor`.
Matrix generate_normal(std::size_t rows, std::size_t cols, double outlier_fraction, double factor, Rng& rng);
Matrix generate_k_with_outlier_channels(std::size_t tokens, std::size_t channels, std::size_t outlier_channels,
                                        double factor, Rng& rng);

// A number line of the grid around x: levels, the input and where it lands (Figure 15).
std::string render_grid(const ScalarQuant& q, int max_levels = 17);

}  // namespace inferlab
