#pragma once
// spec-accept's drawings: its --svg plot and the first document's Figures 11–13 (a round, where it
// stops, the acceptance mass and residual).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "inferlab/answer/spec_accept.hpp"
#include "inferlab/draw/catalog.hpp"

namespace inferlab::plots {

// spec-accept: with α and γ, E[tokens per round] (and the speedup, with a cost ratio) against
// γ = 1..max(γ, max_gamma), the γ given and the best γ marked; else one position's p, q, accepted
// mass min(p, q) and residual r per token (the bars of the first document's Figure 13), with the
// simulated output frequencies beside them after --simulate; else the
// scripted round, draft by draft. An Error when the result holds none of them, an InputError for
// a position of more than kMaxDrawnTokens tokens to draw per token (four bars a token: a real
// vocabulary would be thousands of bars no one can read).
inline constexpr std::size_t kMaxDrawnTokens = 64;
std::string spec_accept_figure(const SpecAcceptResult& r);

}  // namespace inferlab::plots

namespace inferlab::figures {

// Figure 11: one speculative round (spec.hpp walk_round): γ drafts, judged left to right.
struct RoundInputs {
    std::size_t gamma = 4;
    std::vector<std::string> outcomes = {"accept", "accept", "reject"};
};
std::string fig11_round(const RoundInputs& in);

// Figure 12: where a round stops: P(k drafts accepted), k = 0..γ, at acceptance rate α.
struct AcceptedCountInputs {
    double alpha = 0.8;
    std::size_t gamma = 4;
};
std::string fig12_accepted_counts(const AcceptedCountInputs& in);

// Figure 13: acceptance mass and residual on a vocabulary (the document: p = 0.6,0.3,0.1, q = 0.4,0.4,0.2).
struct AcceptanceInputs {
    std::vector<double> p = {0.6, 0.3, 0.1}, q = {0.4, 0.4, 0.2};
};
std::string fig13_acceptance(const AcceptanceInputs& in);

}  // namespace inferlab::figures
