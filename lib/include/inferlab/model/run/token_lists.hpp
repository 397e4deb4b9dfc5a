#pragma once
// Token ids as the command line writes them: "1,2,3" for one sequence, "1,2,3;1,2,9" for
// several. Errors are InputErrors naming `where`, which the caller supplies (a flag, "--prompts",
// or the library's own term), so the library never names a flag itself.
#include <string>
#include <vector>

#include "inferlab/model/ops/weights.hpp"

namespace inferlab::model {

// Token ids inside the vocabulary [0, vocab), no more than the model's maximum sequence; an id
// with a leading zero ("1,000": a thousands separator read as two ids) is refused.
//   parse_token_list("--tokens", "1,2,3", d) == {1, 2, 3}
std::vector<int> parse_token_list(const std::string& where, const std::string& text, const Dims& d);

// Prompts separated by ';', each a token list as above; an empty prompt ("1,2;" or "1;;2") is
// refused with the whole text as the value.
//   parse_prompt_list("--prompts", "1,2;3", d) == {{1, 2}, {3}}
std::vector<std::vector<int>> parse_prompt_list(const std::string& where, const std::string& text, const Dims& d);

}  // namespace inferlab::model
