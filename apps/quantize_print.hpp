#pragma once
// Printers of `inferlab quantize`: text, --json, --csv and --explain, one function per mode's result.
#include <string>

#include "common.hpp"
#include "inferlab/quantize_result.hpp"

namespace inferlab::app {

// What a result cannot say about where its inputs came from, for the text.
struct QuantizeLabels {
    std::string origin;        // "3 values from --values", "generated K and V, ..."
    std::string source_dtype;  // names as given: "fp32"
    std::string scale_dtype;   // "fp16"
};

Report value_report(const ValueQuant& v);
Report values_report(const ValuesQuant& v, const QuantizeLabels& labels);         // tables: values, storage
Report kv_report(const KvQuantComparison& c, unsigned bits, Rounding rule, const QuantizeLabels& labels);  // table: kv
Report storage_report(const StorageQuant& s, const QuantizeLabels& labels);
Report kv_model_report(const KvModelQuant& m, const QuantizeLabels& labels);     // table: precisions

}  // namespace inferlab::app
