#pragma once
// best-of-n's flags and their parsing into a BestOfNRequest (best_of_n_flags.cpp), shared with
// `inferlab figure doc1-fig14`, which takes the same flags (one parser, one set of rules and messages).
#include <string>

#include "inferlab/answer/best_of_n.hpp"
#include "inferlab/answer/search.hpp"
#include "roofline_flags.hpp"

namespace inferlab::app {

// Each flag's text as given (empty: not given), with the defaults best-of-n documents.
struct BestOfNFlags {
    std::string p, n, target;
    std::string tpr, fpr, verifier_accuracy, fallback = "random";
    std::string alternatives, answer_dist;
    std::string hard_fraction, rho, judge_bias;
    std::string budget, cost_sample = "1", cost_judge;
    std::string simulate, seed = "1";
    bool fallback_given = false, cost_sample_given = false, seed_given = false, n_given = false;
    // --search: step-wise search with a process scorer (best_of_n_search.cpp).
    bool search = false, final_check = false;
    std::string q, steps, branch, beam, step_tpr, step_fpr, score_gap, score_sigma;
    // --search at one cost: the budget, the task's step length, and the roofline's model and machine
    // that price the time (decode-roofline's flags, parsed by its rules).
    std::string budget_tokens, budget_seconds, step_tokens, call_seconds, prompt_len, mix;
    RooflineFlags price;
};

// best-of-n's rules: InputError naming the flag for anything missing, malformed or without effect.
BestOfNRequest parse_best_of_n(const BestOfNFlags& f);
// best_of_n(), its errors said in these flags (the library names its own terms).
BestOfNResult compute_best_of_n(const BestOfNFlags& f, const BestOfNRequest& rq);

// --search's rules and request (best_of_n_search.cpp): InputError naming the flag for a flag that
// has no effect in the mode chosen, or a value out of its range.
SearchRequest parse_search(const BestOfNFlags& f);
// search_answer(), its errors said in these flags.
SearchResult compute_search(const SearchRequest& rq);

}  // namespace inferlab::app
