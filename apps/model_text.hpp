#pragma once
// Words of the model commands' text output in the reader's language (issue #18), for the
// printers of speculate, kv-quant, roofline, paged and pitfall. `text` is false where the words
// go into --json or --csv, which read the same in every language.
#include <cstdint>
#include <string>
#include <vector>

#include "inferlab/i18n.hpp"
#include "inferlab/units.hpp"

namespace inferlab::app {

// `msgid` translated for text output, as written for JSON and CSV.
inline std::string say(bool text, const std::string& msgid) { return text ? tr(msgid) : msgid; }

// say() with {0}, {1}, ... replaced by `args`.
inline std::string say(bool text, const std::string& msgid, const std::vector<std::string>& args) {
    return substitute(say(text, msgid), args);
}

// "1 token", "1,024 tokens" in English (`one` and `many` are "{0} token" and "{0} tokens");
// Chinese has no plural, so its text takes the catalogue's form of `many` for every count.
inline std::string counted(bool text, std::uint64_t n, const std::string& one, const std::string& many) {
    if (text && language() == Lang::zh) return trf(many, group_thousands(n));
    return substitute(n == 1 ? one : many, {group_thousands(n)});
}

}  // namespace inferlab::app
