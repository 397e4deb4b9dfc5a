#pragma once
// Printers of `inferlab quantize`: text, --json, --csv and --explain, one function per mode's result.
#include <string>

#include "common.hpp"
#include "inferlab/answer/quantize.hpp"

namespace inferlab::app {

// What a result cannot say about where its inputs came from, for the text.
struct QuantizeLabels {
    std::string origin;        // "3 values from --values", "generated K and V, ...": English, for JSON
    std::string origin_text;   // the same in the reader's language, for text and figures
    std::string source_dtype;  // names as given: "fp32"
    std::string scale_dtype;   // "fp16"
};

// With `draw`, Report::svg holds the mode's figure too (plots::quantize_*_figure, for --svg).
Report value_report(const ValueQuant& v, bool draw = false);
Report values_report(const ValuesQuant& v, const QuantizeLabels& labels, bool draw = false);  // tables: values, storage
Report kv_report(const KvQuantComparison& c, unsigned bits, Rounding rule, const QuantizeLabels& labels,
                 bool draw = false);  // table: kv
Report storage_report(const StorageQuant& s, const QuantizeLabels& labels, bool draw = false);
Report kv_model_report(const KvModelQuant& m, const QuantizeLabels& labels, bool draw = false);  // table: precisions

}  // namespace inferlab::app
