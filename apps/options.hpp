#pragma once
// One rule per option, shared: every subcommand that takes --threads, --temperature, --top-p,
// --top-k, --bits or a token count parses it here, so siblings cannot disagree on what a value
// means or which values are refused.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

#include <CLI/CLI.hpp>

namespace inferlab::app {

// A CLI11 check that runs one of the rules below while the command line is read, so a bad value
// is refused before any model is loaded, whatever else the command still lacks. The rule throws
// InputError, which main() prints as one line with exit status 2.
template <class Parse>
CLI::Validator rule(Parse parse) {
    return CLI::Validator(
        [parse](std::string& value) {
            parse(value);
            return std::string();
        },
        "", "");
}

// --threads: a whole number from 1 to kMaxThreads. More threads than cores is allowed (it is a
// lesson too); far more is a typing error that would exhaust OpenMP's thread stacks.
inline constexpr std::uint64_t kMaxThreads = 256;
int parse_threads(const std::string& text);
// Declares --threads on a subcommand with the one description; parse it with parse_threads.
void add_threads_option(CLI::App* sub, std::string& value);

// The former spelling of `current` (issue #15's one name per concept): it fills the same value
// and is hidden from --help. The run function calls refuse_both(sub, current, former).
void add_former_spelling(CLI::App* sub, CLI::Option* current, const std::string& former, std::string& value);
// Both spellings of one option given: an error naming both.
void refuse_both(const CLI::App& sub, const std::string& now, const std::string& before);

// Greedy decoding takes the argmax: --top-k, --top-p and --sample-seed change nothing then, so
// giving any of them is an error naming it and `greedy_flag` (e.g. "--temperature 0").
void refuse_sampling_flags_when_greedy(const CLI::App& sub, bool greedy, const std::string& greedy_flag);

// --temperature: 0 means greedy (the argmax) everywhere; otherwise a finite positive number that
// divides the logits before the softmax.
double parse_temperature(const std::string& text);

// --top-p: the nucleus mass kept, in (0, 1]; 1 keeps every token.
double parse_top_p(const std::string& text);

// --top-k: how many most likely tokens are kept; 0 keeps every token.
std::size_t parse_top_k(const std::string& text);
// The same, at most `vocab` (the tokens it would choose among).
std::size_t parse_top_k_within(const std::string& text, std::size_t vocab);

// --bits: one of the widths a command supports, listed in the error when another is given.
unsigned parse_bits(const std::string& text, std::initializer_list<unsigned> allowed);
// --bits in a range [lo, hi], for the quantizer that takes any width.
unsigned parse_bits_in(const std::string& text, unsigned lo, unsigned hi);

// A count of tokens (--steps, --gen, --tokens, --prompt-len, ...) that, added to `already`
// tokens, must fit a sequence of at most `max_seq` positions. `positive` refuses 0.
int parse_token_count(const std::string& flag, const std::string& text, std::uint64_t already,
                      std::uint64_t max_seq, bool positive = true);

}  // namespace inferlab::app
