#pragma once
// The registry of the documents' worked examples. Each example names its document file and
// section, states the expected value exactly as the document prints it, and computes the value
// through the same library functions the subcommands use.
#include <functional>
#include <string>
#include <vector>

namespace inferlab {

extern const char* const kDoc1;  // "000_5f2b20623495609b.txt" (08｜推理计算、KV 缓存与部署系统)
extern const char* const kDoc2;  // "003_02a045288fb34aae.txt" (推理与 KV Cache 01)

struct Computed {
    double value = 0;       // in the unit of the expected text (bytes, seconds, tokens/s, ratio)
    std::string shown;      // how inferlab prints it
};

struct Example {
    std::string id;
    std::string document;     // file name under shared/seeds/
    std::string section;      // section number and title as the document gives them
    std::string description;  // what is computed: a msgid (N_), {0}, {1}... standing for description_args
    std::string inputs;       // the document's inputs (a msgid where they have words)
    std::string expected;     // as the document prints it: "1 GiB", "15.074 GB", "66.34 token/s", "1/4"
    bool exact = true;        // exact: equal; otherwise within half a unit of the last printed digit
    std::function<Computed()> compute;
    std::vector<std::string> description_args = {};

    // The description in English (JSON, CSV) or in the current language (text, --explain).
    std::string description_en() const;
    std::string description_shown() const;
};

// The value and tolerance an expected text stands for. Units understood: B, KiB, MiB, GiB, kB,
// MB, GB, s, ms, token/s, "×" prefix (a ratio), a fraction "a/b", a plain number, "1,073,741,824".
struct ExpectedValue {
    double value = 0;
    double half_unit = 0;  // half of the last printed digit, in the same unit as value
    std::string unit;      // the unit of value: "B", "s", "token/s", "tokens", or "" (a number or ratio)
};
ExpectedValue parse_expected(const std::string& text);

struct ExampleResult {
    const Example* example = nullptr;
    Computed computed;
    ExpectedValue expected;
    bool pass = false;
};

const std::vector<Example>& examples();
ExampleResult check_example(const Example& e);

// Every example whose id starts with `id_prefix` ("" for all), checked, in registry order.
struct VerifyResult {
    std::vector<ExampleResult> results;
    std::size_t passed = 0;
    std::size_t failed = 0;
};
VerifyResult verify_examples(const std::string& id_prefix);

}  // namespace inferlab
