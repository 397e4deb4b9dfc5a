#pragma once
// What goes wrong, shown: each warning of the documents run as an experiment. A model pitfall
// runs the correct path and a broken one (one explicit deviation: a Pitfall of the forward pass,
// a cache reused by length, a mask left off) on the same tokens, compares both with the
// no-cache ground truth position by position, and runs the first document's §4.3 checks on
// every step. A calculator pitfall computes the document's number and the shortcut's, both
// through the library's own functions.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "inferlab/base/i18n.hpp"
#include "inferlab/model/ops/transformer.hpp"

namespace inferlab::model {

// The prose fields are English: warning and source msgids, deviation a Prose (with the run's
// constants). JSON prints the English; the text output translates (tr(), Prose::localized()).
struct PitfallInfo {
    std::string name;       // "stale-cache"
    std::string warning;    // what the document warns against, one line
    std::string source;     // document and section
    Prose deviation;        // what the broken path does differently (with the run's constants)
    bool uses_model = false;
    bool uses_seed = true;  // false: a calculator whose numbers are the document's (no draws)
};
// Every pitfall, in the order `--list` shows them.
const std::vector<PitfallInfo>& pitfall_list();
// The entry named `name`; InputError naming `where` otherwise.
const PitfallInfo& find_pitfall(const std::string& where, const std::string& name);

// One of the first document's §4.3 checks, as it went on each path.
struct CheckOutcome {
    std::string name;                    // "cache_length", "positions", "padding", "logits"
    std::string rule;                    // what it checks (an English msgid)
    std::optional<int> broken_step;      // first step of the broken path it fired on (0-based)
    std::optional<int> broken_position;  // the first position of that step
    bool fired_on_correct = false;       // the correct path must never fire it
};

// The four checks, not yet run (names and rules, for printing).
std::vector<CheckOutcome> blank_pitfall_checks();

// One position of the final token sequence.
struct PositionDiff {
    int pos = 0;
    int token = 0;             // the token fed at this position
    double correct_err = 0;    // max |correct − no cache| over the vocabulary
    double broken_err = 0;     // max |broken − no cache|
    int correct_argmax = 0;    // greedy choice of each path after this position
    int broken_argmax = 0;
};

// One input of the experiment, as given to it ("prompt", "3,17,9 (8 tokens)").
struct PitfallInput {
    std::string name;  // an English msgid
    Prose value;
};

// A calculator's number against the shortcut's.
struct PitfallQuantity {
    Prose name;
    double correct = 0, broken = 0;
    std::string unit;  // "B", "GiB", "tokens", "blocks" (an English msgid), or empty
};

// "Same distribution, different text" (second document, §3.1.2): speculative and plain sampling
// of the first new token after `prompt`, over `seeds` seeds each.
struct SameDistribution {
    std::vector<int> prompt;
    std::vector<int> plain_text, speculative_text;  // `steps` tokens from seed `first_seed`
    std::vector<double> p;                          // the target's distribution of the first new token
    std::vector<std::uint64_t> plain_counts, speculative_counts;  // first tokens over the seeds
    double plain_p_value = 1, speculative_p_value = 1;            // χ² against p
    std::uint64_t seeds = 0, first_seed = 0;
    std::vector<double> cell_p;      // p summed over each cell
    std::vector<Prose> cells;  // the χ² cells: "ranks 1-29", the first tokens by p lumped together
};

struct PitfallResult {
    PitfallInfo info;
    std::vector<PitfallInput> inputs;     // what the experiment ran on (model shape, tokens, constants)
    std::vector<Prose> derivation;        // --explain: the formula or deviation, its values, the result
    // Model pitfalls: the tokens (prompt then the correct path's greedy continuation), per position
    // the error of each path against the no-cache logits, and the §4.3 checks.
    std::vector<int> tokens;
    int prompt_len = 0;
    double tolerance = 0;                 // max |logit error| that still counts as agreement
    std::vector<PositionDiff> positions;
    double correct_max_err = 0, broken_max_err = 0;
    std::optional<int> first_wrong_pos;   // first position the broken path exceeds the tolerance
    std::optional<int> parts_at;          // first position whose greedy choice differs: generation parts there
    std::vector<CheckOutcome> checks;
    // unmasked-padding: the batch's other row (no padding; `positions` are the padded row's).
    std::optional<double> other_row_correct_err, other_row_broken_err;
    // Calculator pitfalls.
    std::vector<PitfallQuantity> quantities;
    std::optional<double> fit_p_correct, fit_p_broken;  // threshold-accept: χ² p-values of sampled counts against p
    Prose caught_by;                      // the check that catches it: a §4.3 check's name, or words
    std::optional<SameDistribution> same; // same-distribution only
};

// Runs one pitfall. Model pitfalls (info.uses_model) run on `*m` (tokens drawn with `seed`);
// calculators take no model (pass nullptr). std::logic_error for a model pitfall without one.
PitfallResult run_pitfall(const std::string& name, const Transformer* m, std::uint64_t seed);

// How many cached positions a new prompt may reuse: the longest common prefix of the two token
// lists (correct), or (by_length, the stale-cache pitfall) every cached position the new prompt
// is long enough to cover, without comparing tokens.
std::size_t reusable_prefix(const std::vector<int>& cached, const std::vector<int>& now, bool by_length);

}  // namespace inferlab::model
