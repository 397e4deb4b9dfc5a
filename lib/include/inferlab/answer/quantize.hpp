#pragma once
// The results of `inferlab quantize`, one library call per mode: one value on the grid, many
// values under one or two schemes with their storage, the storage of N elements, and a model's
// KV cache at int8/int4. (The KV case is compare_kv_quantization in quant.hpp.)
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "inferlab/base/dtype.hpp"
#include "inferlab/calc/quant.hpp"
#include "inferlab/data/model_config.hpp"

namespace inferlab {

// One value: the §4.1 quantizer, in exact fractions when `x` and `step` are short decimals (as
// typed: 0.15/0.1 is the tie 3/2), else in doubles. Errors name `where_x` and `where_step`.
struct ValueQuant {
    ScalarQuant q;
    Rounding rounding = Rounding::HalfAwayFromZero;
    double half_step = 0;           // Δ/2, the bound on |x − x̂| inside the range
    double abs_error = 0;           // |x̂ − x|
    bool within_half_step = false;  // |x̂ − x| ≤ Δ/2 (relative slack 1e-12 for the double path's rounding)
};
ValueQuant quantize_value(const std::string& x, const std::string& step, std::int64_t qmax, Rounding rule, Rng* rng,
                          const std::string& where_x = "x", const std::string& where_step = "step");

// Storage widths of a quantized format: the source precision, each scale, each zero point
// (asymmetric only).
struct StorageFormat {
    unsigned source_bits = 32, scale_bits = 16, zero_bits = 8;
    std::string source_dtype = "fp32", scale_dtype = "fp16";  // DType names, for their ranges
};

// The error x̂ − x of every value, counted in `counts.size()` equal bins over [lo, hi] =
// [−max|x̂ − x|, +max|x̂ − x|] ([−1, 1] when every error is 0): the figure's histogram.
struct ErrorHistogram {
    double lo = 0, hi = 0;
    std::vector<std::uint64_t> counts;  // [bins]
};
ErrorHistogram error_histogram(const std::vector<double>& x, const std::vector<double>& xhat, std::size_t bins);
inline constexpr std::size_t kHistogramBins = 21;  // odd: error 0 is a bin's centre

// The first values of the first group on their grid (the figure's number line): x̂ = Δ·k for
// k in [k_min, k_max] (symmetric ±Q; asymmetric −z .. 2^b − 1 − z).
struct GridSample {
    double scale = 0;
    std::int64_t k_min = 0, k_max = 0;
    std::vector<double> x, xhat;  // [≤ kGridSampleValues]
    std::size_t group_values = 0; // values in the whole group
};
inline constexpr std::size_t kGridSampleValues = 16;

// Names of the inputs, for errors: the values' flag and the scale dtype's.
struct ValuesWhere {
    std::string values = "values", source_dtype = "source dtype", scale_dtype = "scale dtype";
};

struct SchemeQuant {
    Scheme scheme = Scheme::Symmetric;
    QuantResult quant;
    StorageCost storage;  // storage_cost of these groups; zero points counted for asymmetric only
    ErrorHistogram histogram;
    GridSample grid;
};

// Many values: the matrix [rows, cols] quantized under each scheme with one configuration.
struct ValuesQuant {
    std::size_t rows = 0, cols = 0;
    QuantConfig config;  // scheme is per result
    StorageFormat format;
    std::vector<SchemeQuant> results;  // one per scheme, in the order asked
};
// Values outside the source dtype's range (dtype_range) and scales beyond the scale dtype's are
// InputErrors naming `where`: a format that cannot hold its inputs stores nothing meaningful.
ValuesQuant quantize_values(const Matrix& m, const QuantConfig& config, const std::vector<Scheme>& schemes,
                            const StorageFormat& format, Rng* rng, const ValuesWhere& where = {});

// Storage only: n elements at `bits`, one scale (and zero point) per group.
struct StorageQuant {
    std::uint64_t elements = 0, group_size = 0;
    unsigned bits = 0;
    StorageFormat format;  // zero_bits is 0 for symmetric
    unsigned record_bits = 0;  // metadata per group: scale + zero-point bits
    StorageCost cost;
};
StorageQuant quantize_storage(std::uint64_t elements, std::uint64_t group, unsigned bits, const StorageFormat& format);

// A model's KV cache (kv-mem's formula) at its precision, int8 and int4, metadata counted.
struct KvPrecisionRow {
    std::string precision;  // the base dtype's name, "int8", "int4"
    unsigned bits = 0;
    KvQuantBytes bytes;     // metadata 0 for the base precision
    double ratio_to_base = 1;  // total bytes / the base precision's
};
// The model's weights at a precision, by the rule decode-roofline and the reference model share
// (weight_storage: int8/int4 in groups of kWeightGroup with fp16 scales, whatever the KV group is).
struct WeightPrecisionRow {
    std::string precision;
    std::uint64_t params = 0;
    StorageCost cost;
};
struct KvModelQuant {
    std::string model;
    std::uint64_t seq_len = 0, group_size = 0;
    bool group_from_config = false;  // the head width (or MLA latent width) as the group
    DType base;
    unsigned scale_bits = 16, zero_bits = 0;
    std::vector<KvPrecisionRow> rows;
    std::vector<WeightPrecisionRow> weights;  // the config's own precision (when it names one), int8, int4
    std::size_t sliding_layers = 0;  // layers whose window caps the totals (bytes/token counts them all)
    Prose window_rule;  // the config reader's rule for the windows (empty: no sliding layer)
};
KvModelQuant kv_model_quant(const ModelConfig& cfg, std::uint64_t seq_len, std::optional<std::uint64_t> group,
                            const DType& base, unsigned scale_bits, unsigned zero_bits,
                            const std::string& group_where = "group size");

}  // namespace inferlab
