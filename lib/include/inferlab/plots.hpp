#pragma once
// The figures of the subcommands' results (--svg FILE): each function draws one result value,
// the same one the text, JSON and CSV printers render, and never recomputes it. Pure functions
// from a result to SVG text (see svg.hpp for the primitives and the conventions).
#include <string>

namespace inferlab::plots {

// --- decode-roofline and best-of-n ---

// --- spec-accept and quantize ---

// --- model bench and model check-cache ---

}  // namespace inferlab::plots
