#pragma once
// best-of-n's drawings: its --svg plot and the first document's Figure 14 (coverage against selection).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "inferlab/answer/best_of_n.hpp"
#include "inferlab/answer/search.hpp"
#include "inferlab/draw/catalog.hpp"
#include "inferlab/draw/svg.hpp"

namespace inferlab::plots {

// best-of-n --svg: coverage and every selection strategy the result holds against N, the single
// sample p as a baseline and, with a target, its line and the smallest N that reaches it.
std::string best_of_n_svg(const BestOfNRequest& req, const BestOfNResult& res,
                          const std::vector<std::string>& sources = {});

// best-of-n --search --svg: the search's success against T beside best-of-N's at the same generated
// steps, with the crossing marked where the strategy ahead changes.
std::string search_svg(const SearchRequest& req, const SearchResult& res);
// Its plot, for a figure that stacks it under another panel (Figure 14).
svg::LinePlot search_plot(const SearchRequest& req, const SearchResult& res);

}  // namespace inferlab::plots

namespace inferlab::figures {

// Figure 14: coverage 1 − (1 − p)^N against the probability a verifier selects a correct one, for
// best-of-n's request and result (figure doc1-fig14 takes that command's flags): coverage, every
// strategy asked for, the target; a marker at `marked_n` when it is a row. `verifier_chosen`: the
// verifier is the figure's own (the document gives none), and the inputs say so.
// With `search`, a second panel under it: a step-wise search's success against T beside best-of-N at
// the same generated steps (best-of-n --search's plot).
struct SearchPanel {
    SearchRequest req;
    SearchResult res;
};
std::string fig14_coverage(const BestOfNRequest& req, const BestOfNResult& res, std::uint64_t marked_n,
                           bool verifier_chosen = false, const std::optional<SearchPanel>& search = std::nullopt);

}  // namespace inferlab::figures
