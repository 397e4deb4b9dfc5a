#pragma once
// A sentence of a result, kept as an English msgid with its values apart (paged's events,
// pitfall's inputs and derivation). JSON prints text(), the same English in every language; the
// text printer prints localized(), the msgid through the catalogue with the same values.
//
//   Prose p{N_("seq {0} admitted"), {"1"}};
//   p.text();       // "seq 1 admitted"
//   p.localized();  // "序列 1 被接纳" under --lang zh
#include <cstddef>
#include <string>
#include <vector>

#include "inferlab/i18n.hpp"

namespace inferlab::model {

struct Prose {
    std::string msgid;               // English, marked N_ where it is written
    std::vector<std::string> args;   // {0}, {1}, ...: numbers and token lists, never translated
    std::vector<std::size_t> msgid_args = {};  // indexes of args that are msgids themselves (translated too)

    std::string text() const { return substitute(msgid, args); }
    std::string localized() const {
        std::vector<std::string> a = args;
        for (std::size_t i : msgid_args)
            if (i < a.size()) a[i] = tr(a[i]);
        return substitute(tr(msgid), a);
    }
};

// Each sentence's text(): the English a JSON document holds.
inline std::vector<std::string> texts(const std::vector<Prose>& v) {
    std::vector<std::string> out;
    for (const auto& p : v) out.push_back(p.text());
    return out;
}

}  // namespace inferlab::model
