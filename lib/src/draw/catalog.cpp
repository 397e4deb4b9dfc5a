#include "inferlab/draw/catalog.hpp"

#include "inferlab/base/i18n.hpp"

namespace inferlab::figures {
namespace {

constexpr const char* kDoc1 = N_("first document (000_5f2b20623495609b.txt)");
constexpr const char* kDoc2 = N_("second document (003_02a045288fb34aae.txt)");

// Names the library's results carry and the figures print through tr(), marked for the catalogue:
// a step's phase (StepTrace::phase) and a paged sequence's state (PagedSeq::state). (A round's
// fates and reasons are marked where spec.cpp writes them.)
[[maybe_unused]] constexpr const char* kLibraryNames[] = {N_("prefill"), N_("decode"), N_("waiting"), N_("running"),
                                                          N_("finished")};

}  // namespace

const std::vector<FigureInfo>& catalog() {
    static const std::vector<FigureInfo> figures = {
        {"doc1-fig1", kDoc1, N_("opening"), N_("The prompt processed as a whole, the output fed back step by step"), false,
         N_("conceptual: the reading route of the article, no number or state")},
        {"doc1-fig2", kDoc1, "§1.1", N_("Updating parameters against computing the current request"), false,
         N_("conceptual: training against inference, nothing inferlab computes")},
        {"doc1-fig3", kDoc1, "§1.2", N_("Prefix processed in parallel, tokens generated one by one (original figure)"), false,
         N_("conceptual: the shapes it shows are the table of §1.2 (model generate --trace prints them)")},
        {"doc1-fig4", kDoc1, "§1.3", N_("The current query reads the history K/V and appends its own"), true, ""},
        {"doc1-fig5", kDoc1, "§1.3", N_("Each layer's input, cache and output belong together"), true, ""},
        {"doc1-fig6", kDoc1, "§2.1", N_("The same four query heads against different numbers of K/V heads"), true, ""},
        {"doc1-fig7", kDoc1, "§2.1.1", N_("Cache memory substituted: 32 layers, 8192 tokens, BF16"), true, ""},
        {"doc1-fig8", kDoc1, "§2.1.2", N_("Logical block order separate from physical cache position"), true, ""},
        {"doc1-fig9", kDoc1, "§2.1.3", N_("Weights read once per step, KV read per request"), true, ""},
        {"doc1-fig10", kDoc1, "§2.2", N_("Tiling the same dense relations, against removing relations"), true, ""},
        {"doc1-fig11", kDoc1, "§3.1.1", N_("Candidate distributions computed at once, accepted along the prefix"), true, ""},
        {"doc1-fig12", kDoc1, "§3.1.1", N_("Drafts verified in parallel, acceptance advancing along the prefix (original figure)"),
         true, ""},
        {"doc1-fig13", kDoc1, "§3.1.2", N_("Acceptance mass and residual on a three-token vocabulary"), true, ""},
        {"doc1-fig14", kDoc1, "§3.2", N_("Generating candidates and selecting the correct one are two steps"), true, ""},
        {"doc1-fig15", kDoc1, "§4.1", N_("Uniform quantization grid and dequantization error"), true, ""},
        {"doc1-fig16", kDoc1, "§4.2", N_("The product task loop against the model's forward pass (original figure)"), false,
         N_("conceptual: the harness loop (tools, RAG, stop rules) has no number inferlab computes")},
        {"doc1-fig17", kDoc1, "§4.3", N_("Three cache paths compared on fixed inputs"), true, ""},
        {"doc2-fig1", kDoc2, N_("from tokens to hidden states"), N_("Q/K/V produced from the hidden state by learned projections"),
         true, ""},
    };
    return figures;
}

std::string source_line(const std::string& name) {
    for (const auto& f : catalog())
        if (f.name == name)
            return trf("Source: {0}, {1}, Figure {2}", tr(f.document), tr(f.section), name.substr(name.find("fig") + 3));
    return "";
}

}  // namespace inferlab::figures
