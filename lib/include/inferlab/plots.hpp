#pragma once
// The figures of the subcommands' results (--svg FILE): each function draws one result value,
// the same one the text, JSON and CSV printers render, and never recomputes it. Pure functions
// from a result to SVG text (see svg.hpp for the primitives and the conventions).
#include <string>

#include "inferlab/quantize_result.hpp"
#include "inferlab/spec_accept.hpp"

namespace inferlab::plots {

// --- decode-roofline and best-of-n ---

// --- spec-accept and quantize ---

// spec-accept: with α and γ, E[tokens per round] (and the speedup, with a cost ratio) against
// γ = 1..max(γ, max_gamma), the γ given and the best γ marked; else one position's p, q, accepted
// mass min(p, q) and residual r per token (the bars of the first document's Figure 13), with the
// simulated output frequencies beside them after --simulate; else the
// scripted round, draft by draft. InputError when the result holds none of them, or a position
// of more than 64 tokens to draw per token.
std::string spec_accept_figure(const SpecAcceptResult& r);

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

// --- model bench and model check-cache ---

}  // namespace inferlab::plots
