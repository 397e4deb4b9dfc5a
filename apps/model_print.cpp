// Printers of init, logits, check-cache, generate and bench: text, --json, --csv tables and
// --explain for each result, side by side. Nothing here computes: every number is the library's.
#include "model_print.hpp"

#include <fmt/format.h>

#include "inferlab/base/format.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/base/units.hpp"
#include "inferlab/draw/model.hpp"
#include "model_common.hpp"

namespace inferlab::app {

using namespace inferlab::model;
using nlohmann::json;

namespace {

// "[1,2,3]": a list in one cell (bracketed, so a one-item list is not read as a number).
template <class T>
std::string bracketed(const std::vector<T>& v) {
    return "[" + fmt::format("{}", fmt::join(v, ",")) + "]";
}

std::string percent(double fraction) { return fmt::format("{:.0f}%", fraction * 100); }

std::string threads_count(std::uint64_t n) { return counted(n, N_("{0} thread"), N_("{0} threads")); }

// The words the library writes into cells that the text tables translate (marked here for the
// catalogue): generate's phases, and bench's yes/no and bound kinds.
[[maybe_unused]] const char* const kCellWords[] = {N_("prefill"), N_("decode"), N_("yes"), N_("no"), N_("compute"),
                                                   N_("memory")};

}  // namespace

// ---- init ----
Report init_report(const std::string& out, const std::string& source, const std::string& source_shown, const Weights& w) {
    Report r;
    r.json = {{"out", out}, {"parameters", w.floats()}, {"bytes", w.bytes()}, {"source", source}};
    r.human = wrap(trf(N_("wrote {0} ({1}; {2} parameters, {3} of float32 weights)"), out, source_shown,
                       group_thousands(w.floats()), bytes_all_units(w.bytes())), "", "  ") +
              wrap(dims_text(w.dims()), "  ", "  ");
    r.explain = r.human + wrap(tr("A llama2.c version-0 checkpoint: a header of seven int32 (dim, hidden, L, H_q, H_kv, vocab, "
                                  "S_max; a negative vocab means an untied LM head), then the float32 weights in run.c's order: "
                                  "4 B per parameter."), "", "");
    return r;
}

// ---- logits ----
namespace {

// One of a position's five largest logits: an entry of --json's top[] and a row of --csv.
struct TopLogit {
    std::size_t pos;
    int token;       // the token at pos
    int rank;        // 1: the largest logit
    int next_token;  // the token that logit predicts next
    double logit;
};

std::vector<TopLogit> top_logits(const LogitsResult& res) {
    std::vector<TopLogit> out;
    for (std::size_t i = 0; i < res.top.size(); ++i)
        for (std::size_t k = 0; k < res.top[i].size(); ++k)
            out.push_back({i, res.tokens[i], int(k) + 1, res.top[i][k], res.logits(Eigen::Index(i), res.top[i][k])});
    return out;
}

// --csv: a row per (position, rank), numbers only, the logit at full precision.
Table top_table(const std::vector<TopLogit>& top) {
    const std::vector<Column<TopLogit>> columns = {
        {"pos", "pos", [](const TopLogit& t) { return std::to_string(t.pos); }},
        {"token", "token", [](const TopLogit& t) { return std::to_string(t.token); }},
        {"rank", "rank", [](const TopLogit& t) { return std::to_string(t.rank); }},
        {"next_token", "next_token", [](const TopLogit& t) { return std::to_string(t.next_token); }},
        {"logit", "logit", [](const TopLogit& t) { return csv_number(t.logit); }}};
    return columns_table(columns, top);
}

// The text: a row per position (over the document's tokens and logits), its five largest logits
// in one cell, "17(3.210) 4(2.000) ...".
Table positions_text(const LogitsResult& res) {
    const std::vector<Column<std::size_t>> columns = {
        {"#pos", N_("pos"), [](std::size_t i) { return std::to_string(i); }},
        {"tokens", N_("token"), [&res](std::size_t i) { return std::to_string(res.tokens[i]); }},
        {"logits", N_("top-5 next tokens (logit)"), [&res](std::size_t i) {
             std::string top;
             for (int k : res.top[i])
                 top += fmt::format("{}{}({:.3f})", top.empty() ? "" : " ", k, res.logits(Eigen::Index(i), k));
             return top;
         }}};
    std::vector<std::size_t> rows(res.top.size());
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
    Table t = text_table(columns, rows);
    t.right_align = {true, true, false};
    return t;
}

}  // namespace

Report logits_report(const LogitsResult& res, const RunFacts& f) {
    Report r;
    r.json = {{"path", to_string(res.path)}, {"backend", f.backend}, {"kernels", f.kernels},
              {"weight_dtype", f.weight_dtype}, {"quantized_arithmetic", f.quantized_arithmetic}, {"tokens", res.tokens},
              {"logits", json::array()}, {"top", json::array()}};
    for (Eigen::Index i = 0; i < res.logits.rows(); ++i)
        r.json["logits"].push_back(std::vector<float>(res.logits.row(i).data(), res.logits.row(i).data() + res.logits.cols()));
    const std::vector<TopLogit> top = top_logits(res);
    for (const auto& t : top)
        r.json["top"].push_back({{"pos", t.pos}, {"token", t.token}, {"rank", t.rank}, {"next_token", t.next_token},
                                 {"logit", t.logit}});
    r.human = wrap(trf(N_("{0} path, {1} attention; {2}"), to_string(res.path), f.attention, dims_text(f.dims)), "", "  ") +
              f.weights_line + render_table(positions_text(res));
    r.explain = r.human + wrap(tr("Each row holds the logits that predict the token after that position (row t reads "
                                  "positions 0..t); the five largest are shown."), "", "");
    r.add_table("positions", top_table(top), "/top");
    return r;
}

// ---- check-cache ----
Report check_cache_report(const CheckCacheResult& res, const RunFacts& f, bool svg) {
    Report r;
    const std::string other = res.other_attention == AttentionKind::Online ? "online" : "plain";
    // A difference at full precision in CSV (as --json has it), to 3 digits in the text.
    auto diff = [](double CheckCacheRow::*path) {
        return std::pair{[path](const CheckCacheRow& row) { return csv_number(row.*path); },
                         [path](const CheckCacheRow& row) { return fmt::format("{:.2e}", row.*path); }};
    };
    const auto contiguous = diff(&CheckCacheRow::contiguous), paged = diff(&CheckCacheRow::paged),
               other_attention = diff(&CheckCacheRow::other_attention), chunked = diff(&CheckCacheRow::chunked);
    const std::vector<Column<CheckCacheRow>> columns = {
        {"pos", N_("pos"), [](const CheckCacheRow& row) { return std::to_string(row.pos); }},
        {"contiguous", N_("contiguous"), contiguous.first, contiguous.second},
        {"paged", N_("paged"), paged.first, paged.second},
        {"other_attention", res.other_attention == AttentionKind::Online ? N_("online attn") : N_("plain attn"),
         other_attention.first, other_attention.second},
        {"chunked", N_("chunked prefill"), chunked.first, chunked.second}};
    const Table t = columns_table(columns, res.rows);
    r.json = {{"backend", f.backend}, {"weight_dtype", f.weight_dtype}, {"quantized_arithmetic", f.quantized_arithmetic},
              {"tokens", res.tokens},
              {"relative_tolerance", res.rel_tolerance}, {"other_attention", other}, {"rows", json::array()}, {"max_abs_diff", res.worst.max_abs},
              {"max_rel_diff", res.worst.max_rel}, {"worst_path", res.worst_path},
              {"worst_position", res.worst.rel_row}, {"agree", res.agree}};
    for (const auto& row : res.rows)
        r.json["rows"].push_back({{"pos", row.pos}, {"contiguous", row.contiguous}, {"paged", row.paged},
                                  {"other_attention", row.other_attention}, {"chunked", row.chunked},
                                  {"scale", row.scale}, {"tolerance", row.tolerance}});
    r.human = wrap(trf(N_("Max |logit − no-cache logit| per position ({0}; {1}; {2} backend)"), tokens_count(res.tokens.size()),
                       dims_text(f.dims), f.backend), "", "  ");
    r.human += render_table(text_table(columns, res.rows));
    r.human += wrap(trf(N_("largest difference {0} ({1} of the position's largest logit, {2} path at position {3}); "
                           "tolerance {4} relative: {5}"),
                        fmt::format("{:.3e}", res.worst.max_abs), fmt::format("{:.3e}", res.worst.max_rel), res.worst_path,
                        res.worst.rel_row, fmt::format("{:.0e}", res.rel_tolerance),
                        res.agree ? tr("all paths agree") : tr("PATHS DISAGREE")), "  ", "  ");
    if (f.weight_dtype == "int8" || f.weight_dtype == "int4")
        r.human += wrap(trf(N_("{0} weights with float32 activations (levels × fp16 group scales widened to float32): int8 "
                               "activations would turn the paths' last-bit differences into whole level steps"),
                            f.weight_dtype), "  ", "  ");
    r.human += wrap(tr("(the first document's Figure 17: the same fixed tokens through each cache path, compared by logits with "
                       "the no-cache path)"), "  ", "  ");
    r.explain = r.human + wrap(tr("The reference recomputes every prefix with no cache; each path's difference is max over the "
                                  "vocabulary of |l − l_ref| at a position, and the verdict compares the largest, divided by "
                                  "max(1, max |l_ref|) of its position, with the tolerance (float32 sums in another order per "
                                  "path)."), "", "");
    r.add_table("positions", t, "/rows");
    if (svg)
        r.svg = plots::model_check_cache(
            res, {dims_text(f.dims),
                  trf(N_("{0} backend, {1} kernels, {2} weights, {3} attention beside {4}; paged blocks of {5} tokens, "
                         "chunks of {6}"),
                      f.backend, f.kernels, f.weight_dtype, f.attention, other, res.block_size, res.chunk)});
    return r;
}

// ---- generate ----
namespace {

// One row per step, by its index (the JSON's "step"); the phases are msgids the text translates.
Table trace_table(const std::vector<StepTrace>& trace) {
    auto shape = [&trace](std::string StepTrace::*field) { return [&trace, field](std::size_t i) { return trace[i].*field; }; };
    const std::vector<Column<std::size_t>> columns = {
        {"step", N_("step"), [](std::size_t i) { return std::to_string(i); }},
        {"phase", N_("phase"), [&trace](std::size_t i) { return trace[i].phase; }},
        {"tokens", N_("tokens fed"), [&trace](std::size_t i) { return bracketed(trace[i].tokens); }},
        {"cache_len", N_("cache length per layer"), [&trace](std::size_t i) { return bracketed(trace[i].cache_len); }},
        {"q_shape", "Q", shape(&StepTrace::q_shape)},
        {"kv_new_shape", N_("new K/V"), shape(&StepTrace::kv_new_shape)},
        {"kv_cached_shape", N_("cached K/V"), shape(&StepTrace::kv_cached_shape)},
        {"scores_shape", N_("scores"), shape(&StepTrace::scores_shape)}};
    std::vector<std::size_t> steps(trace.size());
    for (std::size_t i = 0; i < steps.size(); ++i) steps[i] = i;
    Table t = columns_table(columns, steps);
    t.right_align = {true, false, false};
    return t;
}

}  // namespace

Report generate_report(const GenerateResult& res, const Sampling& s, const RunFacts& f, bool trace) {
    Report r;
    r.json = {{"backend", f.backend}, {"weight_dtype", f.weight_dtype}, {"quantized_arithmetic", f.quantized_arithmetic},
              {"prompt", res.prompt}, {"sample_seed", s.seed}, {"generated", res.generated}, {"trace", json::array()}};
    const Table t = trace_table(res.trace);
    for (std::size_t i = 0; i < res.trace.size(); ++i) {
        const auto& st = res.trace[i];
        r.json["trace"].push_back({{"step", i}, {"phase", st.phase}, {"tokens", st.tokens}, {"start_pos", st.start_pos},
                                   {"cache_len", st.cache_len}, {"q_shape", st.q_shape}, {"kv_new_shape", st.kv_new_shape},
                                   {"kv_cached_shape", st.kv_cached_shape}, {"scores_shape", st.scores_shape}});
    }
    r.human = trf(N_("generated {0}: {1}"), tokens_count(res.generated.size()), fmt::format("{}", fmt::join(res.generated, ","))) +
              "\n" + f.weights_line;
    if (trace) {
        r.human += "\n" + wrap(trf(N_("Trace ({0}; shapes [B, heads, tokens, d] as the first document's table):"), dims_text(f.dims)),
                               "", "  ");
        r.human += render_table(in_words(t));
    }
    r.explain = r.human + wrap(trf(N_("Prefill feeds the {0} prompt tokens in one step; each decode step feeds the token "
                                      "just chosen ({1}) and reads every cached position."),
                                   res.prompt.size(), s.temperature == 0 ? tr("greedy: the argmax") : tr("sampled with --sample-seed")),
                               "", "");
    r.add_table("trace", t, "/trace");
    return r;
}

// ---- bench ----
namespace {

json bench_json(const BenchResult& b, const std::string& model_name) {
    json j = {{"model", model_name}, {"threads", b.threads}, {"parameters", b.parameters},
              {"weights_on_huge_pages", b.weights_on_huge_pages}, {"prefill_tokens", b.prefill_tokens},
              {"prefill_tokens_per_s", b.prefill_tokens_per_s}, {"prefill_gflops", b.prefill_gflops},
              {"measured_matmul_gflops", b.matmul_gflops}, {"decode_tokens", b.decode_tokens},
              {"decode_tokens_per_s", b.decode_tokens_per_s}, {"bytes_per_step", b.bytes_per_step},
              {"achieved_gbs", b.achieved_gbs}, {"measured_read_gbs", b.probe.read_gbs}, {"probe_kernel_gbs", b.probe.kernel_gbs},
              {"probe_sum_gbs", b.probe.sum_gbs}, {"probe_defect", b.probe_defect}, {"probe_bytes", b.probe.bytes},
              {"probe_huge_pages", b.probe.huge_pages}, {"probe_passes", b.probe.passes}, {"bandwidth_fraction", b.bandwidth_fraction},
              {"weight_dtype", b.all_dtypes ? std::string("all") : to_string(b.decode_dtype)},
              {"measured_batch_product_gflops", b.batch_product_gflops},
              {"measured_batch_product_gflops_by_dtype", json::array()}, {"fp32_decode_tokens_per_s", b.fp32_decode_tokens_per_s},
              {"bf16_speedup", or_null(b.bf16_speedup)}, {"bf16_logit_change", or_null(b.bf16_logit_change)},
              {"dtypes", json::array()}, {"context_scaling", json::array()}, {"batch", json::array()},
              {"last_level_cache_bytes", b.last_level_cache_bytes ? json(b.last_level_cache_bytes) : json(nullptr)},
              {"quantized_arithmetic", b.dtypes.empty() ? json(nullptr) : json(b.quantized_arithmetic.text())}};
    for (const auto& [t, pi] : b.product_gflops)
        j["measured_batch_product_gflops_by_dtype"].push_back({{"dtype", to_string(t)}, {"gflops", pi}});
    for (const auto& x : b.dtypes)
        j["dtypes"].push_back({{"dtype", to_string(x.decode.dtype)}, {"bytes_per_step", x.decode.bytes_per_step},
                               {"bytes_ratio_to_fp32", x.bytes_ratio_to_fp32}, {"tokens_per_s", x.decode.tokens_per_s},
                               {"speed_ratio_to_fp32", x.speed_ratio_to_fp32}, {"bound_tokens_per_s", x.bound_tokens_per_s},
                               {"fraction_of_bound", x.fraction_of_bound}, {"fraction_of_best_bound", x.fraction_of_best_bound},
                               {"max_rel_logit_diff", x.decode.max_rel_logit_diff},
                               {"mean_kl", x.decode.mean_kl}, {"greedy_agreement", x.decode.greedy_agreement},
                               {"weights_fit_in_last_level_cache", x.weights_fit_in_last_level_cache},
                               {"probe_defect", x.probe_defect}});
    for (const auto& c : b.contexts)
        j["context_scaling"].push_back({{"seq_len", c.seq_len}, {"cached_step_s", c.cached_step_s},
                                        {"nocache_step_s", or_null(c.nocache_step_s)}, {"ratio", or_null(c.ratio)}});
    for (const auto& x : b.batches)
        j["batch"].push_back({{"weight_dtype", to_string(x.dtype)}, {"batch", x.batch}, {"aggregate_tokens_per_s", x.aggregate_tokens_per_s},
                              {"per_request_tokens_per_s", x.per_request_tokens_per_s}, {"ratio_to_batch_1", or_null(x.ratio_to_batch_1)},
                              {"bound_aggregate_tokens_per_s", x.bound_aggregate_tokens_per_s},
                              {"bound_ratio_to_batch_1", or_null(x.bound_ratio_to_batch_1)}, {"compute_bound", x.compute_bound},
                              {"fraction_of_bound", x.fraction_of_bound},
                              {"weights_fit_in_last_level_cache", x.weights_fit_in_last_level_cache},
                              {"probe_defect", x.probe_defect}});
    return j;
}

std::string bench_measurements(const BenchResult& b, const std::string& model_name, const Dims& d) {
    const auto f2 = [](double v) { return fmt::format("{:.2f}", v); };
    std::string h = wrap(trf(N_("Reference model: {0} ({1} parameters, {2})"), model_name, group_thousands(b.parameters),
                             threads_count(std::uint64_t(b.threads))), "", "  ") +
                    wrap(dims_text(d), "  ", "  ");
    h += wrap(trf(N_("Read bandwidth over {0} (huge pages {1}): {2} GB/s, the faster of the decode kernel's own stream "
                     "({3} GB/s) and a plain sum loop ({4} GB/s), best of {5} passes of each"),
                  bytes_all_units(b.probe.bytes), b.probe.huge_pages ? tr("on") : tr("refused"), f2(b.probe.read_gbs),
                  f2(b.probe.kernel_gbs), f2(b.probe.sum_gbs), b.probe.passes), "", "  ");
    h += wrap(trf(N_("Matrix multiply (Eigen, {0}³): {1} GFLOP/s"), b.matmul_n, f2(b.matmul_gflops)), "", "  ");
    std::vector<std::string> pis;
    for (const auto& [t, pi] : b.product_gflops) pis.push_back(to_string(t) + " " + f2(pi));
    h += wrap(trf(N_("Batch product (the decode kernel, 8 rows, in cache), this machine's compute roof π per weight dtype: {0} "
                     "GFLOP/s"), fmt::format("{}", fmt::join(pis, ", "))), "", "  ");
    h += wrap(trf(N_("Prefill {0} tokens (float32 products): {1} tokens/s, {2} GFLOP/s = {3} of float32's π, {4} of Eigen's "
                     "GEMM rate"),
                  b.prefill_tokens, fmt::format("{:.1f}", b.prefill_tokens_per_s), f2(b.prefill_gflops),
                  percent(b.prefill_fraction_of_pi), percent(b.prefill_fraction_of_gemm)), "", "  ");
    h += wrap(trf(N_("Decode {0} tokens ({1} weights): {2} tokens/s; one step reads {3} → {4} GB/s = {5} of the measured "
                     "read bandwidth (weights on huge pages: {6})"),
                  b.decode_tokens, to_string(b.decode_dtype), f2(b.decode_tokens_per_s), bytes_all_units(b.bytes_per_step),
                  f2(b.achieved_gbs), percent(b.bandwidth_fraction), b.weights_on_huge_pages ? tr("yes") : tr("no")), "", "  ");
    if (b.probe_defect)
        h += wrap(trf(N_("PROBE DEFECT: the decode read {0} GB/s, faster than the probe's {1} GB/s; the fraction above "
                         "is not a result"), f2(b.achieved_gbs), f2(b.probe.read_gbs)), "  ", "  ");
    if (b.bf16_speedup && !b.all_dtypes)
        h += wrap(trf(N_("the same steps with float32 weights, alternated with these: {0} tokens/s; bf16 = {1}× float32; "
                         "bf16 weights change the decode steps' logits by at most {2} of the largest logit"),
                      f2(b.fp32_decode_tokens_per_s), f2(*b.bf16_speedup), fmt::format("{:.2e}", *b.bf16_logit_change)), "  ", "  ");
    return h;
}

// The three tables of measurements, each column beside its JSON key (bench_json); the text
// translates the headers and the word cells through in_words().
std::string fixed2(double v) { return fmt::format("{:.2f}", v); }
std::string percent0(double fraction) { return fmt::format("{:.0f}", 100 * fraction); }

std::string sci2(double v) { return fmt::format("{:.2e}", v); }
std::string ms3(double seconds) { return fmt::format("{:.3f}", seconds * 1e3); }
std::string fixed1(double v) { return fmt::format("{:.1f}", v); }

// bench's tables: --csv holds each figure as the JSON does (every digit, seconds, fractions), the
// text rounds it (ms, %).
Table dtype_table(const BenchResult& b, CellForm form) {
    using R = BenchDtypeRow;
    const std::vector<Column<R>> columns = {
        {"dtype", N_("weights"), [](const R& x) { return to_string(x.decode.dtype); }},
        {"bytes_per_step", N_("bytes/step"), [](const R& x) { return std::to_string(x.decode.bytes_per_step); }},
        figure_column<R>("bytes_ratio_to_fp32", N_("bytes ÷ fp32"), [](const R& x) { return x.bytes_ratio_to_fp32; }, fixed2),
        figure_column<R>("tokens_per_s", N_("tok/s"), [](const R& x) { return x.decode.tokens_per_s; }, fixed2),
        figure_column<R>("speed_ratio_to_fp32", N_("speed × fp32"), [](const R& x) { return x.speed_ratio_to_fp32; }, fixed2),
        figure_column<R>("bound_tokens_per_s", N_("bound tok/s"), [](const R& x) { return x.bound_tokens_per_s; }, fixed2),
        figure_column<R>("fraction_of_bound", N_("of bound (%)"), [](const R& x) { return x.fraction_of_bound; }, percent0),
        figure_column<R>("fraction_of_best_bound", N_("of best-β bound (%)"), [](const R& x) { return x.fraction_of_best_bound; },
                         percent0),
        figure_column<R>("max_rel_logit_diff", N_("max rel Δlogit"), [](const R& x) { return x.decode.max_rel_logit_diff; }, sci2),
        figure_column<R>("mean_kl", N_("KL (nats)"), [](const R& x) { return x.decode.mean_kl; }, sci2),
        figure_column<R>("greedy_agreement", N_("greedy agreement (%)"), [](const R& x) { return x.decode.greedy_agreement; },
                         percent0),
        {"weights_fit_in_last_level_cache", N_("fits LLC"), [](const R& x) { return csv_flag(x.weights_fit_in_last_level_cache); },
         [](const R& x) { return std::string(x.weights_fit_in_last_level_cache ? "yes" : "no"); }}};
    return columns_table(columns, b.dtypes, form);
}

Table context_table(const BenchResult& b, CellForm form) {
    using R = BenchContextRow;
    const std::vector<Column<R>> columns = {
        {"seq_len", "S", [](const R& c) { return std::to_string(c.seq_len); }},
        figure_column<R>("cached_step_s", N_("cached step (ms)"), [](const R& c) { return c.cached_step_s; }, ms3),
        figure_column<R>("nocache_step_s", N_("no-cache step (ms)"), [](const R& c) { return c.nocache_step_s; }, ms3),
        figure_column<R>("ratio", N_("no-cache ÷ cached"), [](const R& c) { return c.ratio; }, fixed1)};
    return columns_table(columns, b.contexts, form);
}

Table batch_table(const BenchResult& b, CellForm form) {
    using R = BenchBatchRow;
    const std::vector<Column<R>> columns = {
        {"weight_dtype", N_("weights"), [](const R& x) { return to_string(x.dtype); }},
        {"batch", N_("batch"), [](const R& x) { return std::to_string(x.batch); }},
        figure_column<R>("aggregate_tokens_per_s", N_("aggregate tok/s"), [](const R& x) { return x.aggregate_tokens_per_s; },
                         fixed2),
        figure_column<R>("per_request_tokens_per_s", N_("per-request tok/s"),
                         [](const R& x) { return x.per_request_tokens_per_s; }, fixed2),
        figure_column<R>("ratio_to_batch_1", N_("× batch 1"), [](const R& x) { return x.ratio_to_batch_1; }, fixed2),
        figure_column<R>("bound_aggregate_tokens_per_s", N_("bound tok/s (β, π measured)"),
                         [](const R& x) { return x.bound_aggregate_tokens_per_s; }, fixed2),
        figure_column<R>("bound_ratio_to_batch_1", N_("bound × batch 1"), [](const R& x) { return x.bound_ratio_to_batch_1; },
                         fixed2),
        {"compute_bound", N_("bound is"), [](const R& x) { return csv_flag(x.compute_bound); },
         [](const R& x) { return std::string(x.compute_bound ? "compute" : "memory"); }}};
    return columns_table(columns, b.batches, form);
}

// A rate above its DRAM bound where the weights fit in the last-level cache: the steps read them
// from cache, faster than the β the probe measured, so the fraction says where the data was.
std::string above_bound_in_cache(const std::string& dtype, double fraction, std::uint64_t llc_bytes) {
    return wrap(trf(N_("{0} decoded at {1}% of its bound: its weights fit in the last-level cache ({2}), so steps read them "
                       "from cache and the DRAM bound β does not hold for them"),
                    dtype, fmt::format("{:.0f}", 100 * fraction), bytes_all_units(llc_bytes)),
                "  ", "  ");
}

}  // namespace

Report bench_report(const BenchResult& b, const std::string& model_name, const std::string& model_shown, const Dims& d,
                    bool svg) {
    Report r;
    r.json = bench_json(b, model_name);
    std::string& h = r.human;
    h = bench_measurements(b, model_shown, d);
    if (!b.dtypes.empty()) {
        h += "\n" + wrap(trf(N_("Weight dtypes decoded in one run, interleaved step by step (each reads float32's greedy token), "
                                "with a pass of the read probe before the first round of steps and after each; tok/s from each "
                                "dtype's median step. "
                                "Bound: decode-roofline for each dtype's bytes and π on each round's β (the faster of the probe "
                                "passes before and after the round: a shared machine's bandwidth can change within seconds), "
                                "the median over rounds; of bound: the median over rounds of the step's rate ÷ its round's "
                                "bound (not tok/s ÷ bound tok/s); "
                                "of best-β bound: tok/s ÷ the bound on the best pass's β ({1} GB/s). Last-level cache {0} (a "
                                "model that fits there is read from cache and the DRAM bound does not apply). §4.1: the bytes "
                                "fall faster than the speed rises."),
                             b.last_level_cache_bytes ? bytes_all_units(b.last_level_cache_bytes) : tr("unknown"),
                             fmt::format("{:.2f}", b.probe.read_gbs)), "", "");
        h += render_table(in_words(dtype_table(b, CellForm::text)));
        for (const auto& x : b.dtypes)
            if (x.weights_fit_in_last_level_cache && x.fraction_of_bound > 1)
                h += above_bound_in_cache(to_string(x.decode.dtype), x.fraction_of_bound, b.last_level_cache_bytes);
        for (const auto& x : b.dtypes)
            if (x.probe_defect)
                h += wrap(trf(N_("PROBE DEFECT: {0} decoded at {1}% of its bound, faster than the measured β and π allow; "
                                 "that fraction is not a result"),
                              to_string(x.decode.dtype), fmt::format("{:.0f}", 100 * x.fraction_of_bound)),
                          "  ", "  ");
        h += wrap(trf(N_("int8/int4 arithmetic: {0}"), b.quantized_arithmetic.localized()), "  ", "  ");
    }
    h += "\n" + wrap(tr("One decode step at context S: the cached step grows with S (reads S positions); without a cache each step "
                        "recomputes the whole prefix, so generating N tokens costs O(N²):"), "", "");
    h += render_table(in_words(context_table(b, CellForm::text)));
    h += "\n" + wrap(trf(N_("Batch decode at context {0} per weight dtype (each sequence its own cache; one step reads the weights "
                            "once for all). The bound is decode-roofline's max(bytes/β, FLOPs/π) on the β and each dtype's π "
                            "measured above; its ratio to batch 1 is what the roofline predicts for the measured one: reading the "
                            "weights once pays for every row until the arithmetic catches up (the ridge point)."),
                         b.batch_context), "", "");
    h += render_table(in_words(batch_table(b, CellForm::text)));
    for (const auto& x : b.batches)
        if (x.weights_fit_in_last_level_cache && x.fraction_of_bound > 1 && x.batch == 1)
            h += above_bound_in_cache(to_string(x.dtype), x.fraction_of_bound, b.last_level_cache_bytes);
    for (const auto& x : b.batches)
        if (x.probe_defect)
            h += wrap(trf(N_("PROBE DEFECT: {0} at batch {1} decoded at {2}% of its bound, faster than the measured β and π "
                             "allow; that row is not a result"),
                          to_string(x.dtype), x.batch, fmt::format("{:.0f}", 100 * x.fraction_of_bound)),
                      "  ", "  ");
    // The batch table first (what a plain --csv prints): every mode has it.
    r.add_table("batch", batch_table(b, CellForm::csv), "/batch");
    r.add_table("context-scaling", context_table(b, CellForm::csv), "/context_scaling");
    if (!b.dtypes.empty()) r.add_table("dtypes", dtype_table(b, CellForm::csv), "/dtypes");
    r.explain = h;
    if (svg)
        r.svg = plots::model_bench(b, {trf(N_("{0} ({1} parameters), {2}, decode weights {3}"), model_shown,
                                           group_thousands(b.parameters), threads_count(std::uint64_t(b.threads)),
                                           to_string(b.decode_dtype)),
                                       dims_text(d)});
    return r;
}

}  // namespace inferlab::app
