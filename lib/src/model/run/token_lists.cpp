#include "inferlab/model/run/token_lists.hpp"

#include "inferlab/base/error.hpp"
#include "inferlab/base/units.hpp"

namespace inferlab::model {

std::vector<int> parse_token_list(const std::string& where, const std::string& text, const Dims& d) {
    std::vector<int> out;
    for (const auto& item : split_list(where, text)) {
        // "1,000" is the ids 1 and 0 to a comma-separated list, and a thousand to a reader: an id
        // written with a leading zero is refused, so a thousands separator never passes unnoticed.
        if (item.size() > 1 && item[0] == '0')
            throw InputError(where, text,
                             N_("item '{0}' has a leading zero: token ids are separated by commas and written "
                                "without thousands separators or leading zeros (1,000 would read as the ids 1 and 0)"),
                             {item});
        const std::uint64_t t = parse_nonnegative_int(where, item);
        if (t >= static_cast<std::uint64_t>(d.vocab_size))
            throw InputError(where, item, N_("is outside the vocabulary [0, {0}]"), {std::to_string(d.vocab_size - 1)});
        out.push_back(static_cast<int>(t));
    }
    if (static_cast<int>(out.size()) > d.seq_len)
        throw InputError(where, std::to_string(out.size()) + " tokens",
                         N_("is longer than the model's maximum sequence length {0}"), {std::to_string(d.seq_len)});
    return out;
}

std::vector<std::vector<int>> parse_prompt_list(const std::string& where, const std::string& text, const Dims& d) {
    std::vector<std::vector<int>> out;
    std::size_t start = 0;
    for (;;) {
        const std::size_t end = text.find(';', start);
        const std::string part = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
        // Checked here, not left to split_list: its message would show only this part, and the
        // reader needs the whole list to see which prompt is empty.
        if (part.find_first_not_of(" \t") == std::string::npos)
            throw InputError(where, text, N_("every prompt needs at least one token (a,b;c,d)"));
        out.push_back(parse_token_list(where, part, d));
        if (end == std::string::npos) return out;
        start = end + 1;
    }
}

}  // namespace inferlab::model
