#pragma once
// The documents' figures: the catalogue `inferlab figure --list` prints, and the line under each
// drawn figure that names its source. The drawings themselves live with their topic (kv_mem.hpp,
// decode_roofline.hpp, spec_accept.hpp, best_of_n.hpp, quantize.hpp, model.hpp); each redraws a
// figure from the library's own computation, so the numbers shown are a result's, never typed in.
// This file includes none of them, and they all include it. The figures' errors name an input by
// the documents' symbol (InputError::where(): "H_q", "H_kv", "S", "tile", "W"), never by a
// command-line flag: the caller maps the symbol to its own flag.
#include <string>
#include <vector>

namespace inferlab::figures {

// One figure of the documents: what `inferlab figure --list` prints.
struct FigureInfo {
    std::string name;      // "doc1-fig9"
    std::string document;  // the seed file
    std::string section;   // "§2.1.3"
    std::string caption;   // the document's caption, in English
    bool drawn = false;    // false: a conceptual figure, listed with the reason
    std::string reason;    // why it is not drawn (conceptual figures only)
};
// Every figure of both documents, in document order.
const std::vector<FigureInfo>& catalog();



// "Source: first document (…), §2.1.3, Figure 9": the line under figure `name` (empty for a name
// the catalogue lacks).
std::string source_line(const std::string& name);

}  // namespace inferlab::figures
