#include "options.hpp"

#include <fmt/format.h>

#include <cmath>

#include "inferlab/base/error.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/base/units.hpp"

namespace inferlab::app {

int parse_threads(const std::string& text) {
    const std::uint64_t t = parse_positive_int("--threads", text);
    if (t > kMaxThreads) throw InputError("--threads", text, N_("must be between 1 and {0}"), {std::to_string(kMaxThreads)});
    return static_cast<int>(t);
}

void add_threads_option(CLI::App* sub, std::string& value) {
    sub->add_option("--threads", value, trf(N_("CPU threads, 1 to {0} (default 1)"), kMaxThreads))
        ->check(rule(parse_threads));
}

void add_former_spelling(CLI::App* sub, CLI::Option* current, const std::string& former, std::string& value) {
    sub->add_option(former, value, "the former spelling of " + current->get_name())->group("");
}

void refuse_both(const CLI::App& sub, const std::string& now, const std::string& before) {
    if (sub.count(now) > 0 && sub.count(before) > 0)
        throw InputError(N_("{0} is the former spelling of {1}: give one of them"), {before, now});
}

void refuse_sampling_flags_when_greedy(const CLI::App& sub, bool greedy, const std::string& greedy_flag) {
    if (!greedy) return;
    for (const char* f : {"--top-k", "--top-p", "--sample-seed"})
        if (sub.count(f) > 0) throw InputError(N_("{0} has no effect with {1} (greedy: the argmax)"), {f, greedy_flag});
}

double parse_temperature(const std::string& text) {
    const double t = parse_real("--temperature", text);
    if (!(t >= 0) || !std::isfinite(t))
        throw InputError("--temperature", text, N_("must be 0 (greedy) or a finite positive number"));
    return t;
}

double parse_top_p(const std::string& text) {
    const double p = parse_real("--top-p", text);
    if (!(p > 0 && p <= 1)) throw InputError("--top-p", text, N_("must be in (0, 1] (1 keeps every token)"));
    return p;
}

std::size_t parse_top_k(const std::string& text) {
    return static_cast<std::size_t>(parse_nonnegative_int("--top-k", text));
}

std::size_t parse_top_k_within(const std::string& text, std::size_t vocab) {
    const std::size_t k = parse_top_k(text);
    // k past the vocabulary keeps every token: a flag that changes nothing is refused.
    if (k > vocab)
        throw InputError("--top-k", text, N_("must be at most the vocabulary's {0} tokens (0: off)"), {std::to_string(vocab)});
    return k;
}

unsigned parse_bits(const std::string& text, std::initializer_list<unsigned> allowed) {
    const std::uint64_t b = parse_positive_int("--bits", text);
    std::string list;
    for (unsigned a : allowed) {
        if (b == a) return a;
        list += (list.empty() ? "" : " or ") + std::to_string(a);
    }
    throw InputError("--bits", text, "must be " + list);
}

unsigned parse_bits_in(const std::string& text, unsigned lo, unsigned hi) {
    const std::uint64_t b = parse_positive_int("--bits", text);
    if (b < lo || b > hi)
        throw InputError("--bits", text, N_("must be between {0} and {1}"), {std::to_string(lo), std::to_string(hi)});
    return static_cast<unsigned>(b);
}

int parse_token_count(const std::string& flag, const std::string& text, std::uint64_t already,
                      std::uint64_t max_seq, bool positive) {
    const std::uint64_t n = positive ? parse_positive_int(flag, text) : parse_nonnegative_int(flag, text);
    if (already > max_seq || n > max_seq - already)
        throw InputError(flag, text,
                         already == 0 ? N_("exceeds the model's maximum sequence length {0}")
                                      : N_("with the {1} tokens before it exceeds the model's maximum sequence length {0}"),
                         {std::to_string(max_seq), std::to_string(already)});
    return static_cast<int>(n);
}

}  // namespace inferlab::app
