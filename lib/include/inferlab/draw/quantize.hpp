#pragma once
// quantize's drawings: every --svg plot of its modes and the first document's Figure 15 (the grid).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "inferlab/answer/quantize.hpp"
#include "inferlab/draw/catalog.hpp"

namespace inferlab::plots {

// quantize --x: the grid around x, the level it lands on and the error (Figure 15's number line).
std::string quantize_value_figure(const ValueQuant& v);
// quantize --values/--file/--gen: each scheme's error histogram and the first group's values on
// their grid with its scale. `origin` says where the values came from (printed at the foot).
std::string quantize_values_figure(const ValuesQuant& v, const std::string& origin);
// quantize --kv-gen/--k-file: MSE of K and V quantized per channel and per token.
std::string quantize_kv_figure(const KvQuantComparison& c, unsigned bits, const std::string& origin);
// quantize --elements: bytes before, and after as packed levels plus scales and zero points.
std::string quantize_storage_figure(const StorageQuant& s);
// quantize --model: the KV cache and the weights in bytes per precision.
std::string quantize_model_figure(const KvModelQuant& m);

// quantize --x and the first document's Figure 15 (one drawing for both): the uniform grid
// around q's level (the whole grid when Q ≤ 8, else 17 levels), x, the level it lands on and the
// error. Levels carry class "level", x "input-x", x̂ "dequantized", the error "error".
struct GridNotes {
    std::string title;
    std::string rounding;           // the rounding rule's name, as quant.hpp's to_string gives it
    bool within_half_step = false;  // |x̂ − x| ≤ Δ/2, said beside the error when not clipped
    std::vector<std::string> inputs;
};
std::string quant_grid_figure(const ScalarQuant& q, const GridNotes& notes);

}  // namespace inferlab::plots

namespace inferlab::figures {

// Figure 15: the uniform grid x̂ = Δ·clip(round(x/Δ), −Q, Q) (the document: x = 0.37, Δ = 0.1, Q = 7).
struct GridInputs {
    double x = 0.37, step = 0.1;
    unsigned bits = 4;  // Q = 2^(b−1) − 1 = 7
};
std::string fig15_quant_grid(const GridInputs& in);

}  // namespace inferlab::figures
