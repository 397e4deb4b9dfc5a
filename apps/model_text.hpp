#pragma once
// Words of the model commands' text output in the reader's language (issue #18), for the
// printers of speculate, kv-quant, roofline, paged and pitfall. `text` is false where the words
// go into --json or --csv, which read the same in every language.
#include <string>
#include <vector>

#include "inferlab/base/i18n.hpp"

namespace inferlab::app {

// The language of a printer's words: the reader's for text output, English for --json and --csv.
inline Lang words_lang(bool text) { return text ? language() : Lang::en; }

// `msgid` in words_lang(text).
inline std::string say(bool text, const std::string& msgid) { return tr_in(words_lang(text), msgid); }

// say() with {0}, {1}, ... replaced by `args`.
inline std::string say(bool text, const std::string& msgid, const std::vector<std::string>& args) {
    return substitute(say(text, msgid), args);
}

}  // namespace inferlab::app
