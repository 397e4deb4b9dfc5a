// Every worked example of the two documents, in one place. Expected values are written as the
// document prints them; the computation goes through the library functions the subcommands use.
#include <fmt/format.h>

#include "inferlab/answer/search.hpp"
#include "inferlab/answer/verify.hpp"
#include "inferlab/base/checked.hpp"
#include "inferlab/base/dtype.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/base/units.hpp"
#include "inferlab/calc/best_of_n.hpp"
#include "inferlab/calc/kv.hpp"
#include "inferlab/calc/quant.hpp"
#include "inferlab/calc/roofline.hpp"
#include "inferlab/calc/spec.hpp"
#include "inferlab/data/model_config.hpp"
#include "inferlab/model/ops/kv_cache.hpp"
#include "inferlab/model/ops/transformer.hpp"
#include "inferlab/model/run/compare.hpp"
#include "inferlab/model/run/pitfall.hpp"

namespace inferlab {
namespace {

Computed bytes_value(std::uint64_t b) { return {static_cast<double>(b), bytes_all_units(b)}; }

const char* const kDoc1KvSection = "2.1.1 从每个数值累加到总字节数";
const char* const kDoc1DecodeSection = "2.1.3 一步 Decode 的读量";
const char* const kDoc1BestOfNSection = "3.2 并行采样、验证与搜索";
const char* const kDoc1QuantSection = "4.1 数值精度、权重量化与缓存量化";
const char* const kDoc1SpecRoundSection = "3.1.1 一次验证与实际前进长度";
const char* const kDoc1SpecRuleSection = "3.1.2 接受质量与残差补偿";
const char* const kDoc1Fig5 = "1.3 图 5｜每层输入、缓存与完整输出各自对应";
const char* const kDoc1MaskSection = "1.3.1 单层缓存更新与 GQA 代码";
const char* const kDoc1Fig8 = "2.1.2 图 8｜逻辑块顺序与物理缓存位置分离";
const char* const kDoc2PrefillSection = "Prefill 与 Decode 的交界";
const char* const kDoc2GqaSection = "用 GQA 理解容量里的 Head 数";
const char* const kDoc2TokenSection = "从一个 Token 算到整个请求";

std::vector<Example> build() {
    std::vector<Example> ex;
    // ---- KV memory (issue: foundation) ----
    ex.push_back({"kv.doc1.gqa-bytes", kDoc1, kDoc1KvSection, N_("KV bytes, GQA, one request"),
                  "L=32 B=1 S=8192 H_kv=8 d=128 b=2 (BF16)", "1,073,741,824 B", true,
                  [] { return bytes_value(kv_bytes(uniform_kv(32, 8, 128, 16), {8192}).total_bytes); }});
    ex.push_back({"kv.doc1.gqa-gib", kDoc1, kDoc1KvSection, N_("the same in GiB"), "L=32 B=1 S=8192 H_kv=8 d=128 b=2",
                  "1 GiB", true, [] { return bytes_value(kv_bytes_uniform(32, 1, 8192, 8, 128, 16)); }});
    ex.push_back({"kv.doc1.mha-gib", kDoc1, kDoc1KvSection, N_("KV bytes, MHA (H_kv = H_q = 32), one request"),
                  "L=32 B=1 S=8192 H_kv=32 d=128 b=2", "4 GiB", true,
                  [] { return bytes_value(kv_bytes(uniform_kv(32, 32, 128, 16), {8192}).total_bytes); }});
    ex.push_back({"kv.doc1.mha-8req", kDoc1, kDoc1KvSection, N_("KV bytes, MHA, eight requests"),
                  "L=32 B=8 S=8192 H_kv=32 d=128 b=2", "32 GiB", true,
                  [] { return bytes_value(kv_bytes(uniform_kv(32, 32, 128, 16), std::vector<std::uint64_t>(8, 8192)).total_bytes); }});
    ex.push_back({"kv.doc1.gqa-8req", kDoc1, kDoc1KvSection, N_("KV bytes, GQA, eight requests"),
                  "L=32 B=8 S=8192 H_kv=8 d=128 b=2", "8 GiB", true,
                  [] { return bytes_value(kv_bytes(uniform_kv(32, 8, 128, 16), std::vector<std::uint64_t>(8, 8192)).total_bytes); }});
    ex.push_back({"kv.doc1.gib-in-gb", kDoc1, kDoc1DecodeSection, N_("1 GiB expressed in decimal GB"), "2^30 B",
                  "1.073741824 GB", true, [] {
                      std::uint64_t b = kv_bytes_uniform(32, 1, 8192, 8, 128, 16);
                      return Computed{static_cast<double>(b), decimal_size(b)};
                  }});
    ex.push_back({"kv.doc2.s-token-bytes", kDoc2, kDoc2TokenSection, N_("s_token = 2·L·H_kv·d·b"),
                  "L=40 H_kv=8 d=128 b=2", "163840 B", true,
                  [] { return bytes_value(bytes_per_token(uniform_kv(40, 8, 128, 16))); }});
    ex.push_back({"kv.doc2.s-token-kib", kDoc2, kDoc2TokenSection, N_("s_token in KiB"), "L=40 H_kv=8 d=128 b=2",
                  "160 KiB", true, [] { return bytes_value(bytes_per_token(uniform_kv(40, 8, 128, 16))); }});
    ex.push_back({"kv.doc2.one-sequence", kDoc2, kDoc2TokenSection, N_("one sequence of 8192 tokens"),
                  "8192 × 160 KiB", "1.25 GiB", true,
                  [] { return bytes_value(kv_bytes(uniform_kv(40, 8, 128, 16), {8192}).total_bytes); }});
    ex.push_back({"kv.doc2.ten-sequences", kDoc2, kDoc2TokenSection, N_("ten unshared sequences of 8192 tokens"),
                  N_("10 × 8192 tokens, L=40 H_kv=8 d=128 b=2"), "12.5 GiB", true, [] {
                      return bytes_value(kv_bytes(uniform_kv(40, 8, 128, 16), std::vector<std::uint64_t>(10, 8192)).total_bytes);
                  }});
    auto ratio = [](std::size_t which) {
        return [which] {
            auto rows = compare_head_sharing(1, 32, 8, 128, 16, {1});
            const auto& r = rows.at(which);
            return Computed{static_cast<double>(r.ratio_num) / static_cast<double>(r.ratio_den),
                            r.ratio_num == r.ratio_den ? std::string("1") : fmt::format("{}/{}", r.ratio_num, r.ratio_den)};
        };
    };
    ex.push_back({"kv.doc2.ratio-mha", kDoc2, kDoc2GqaSection, N_("KV capacity of MHA relative to MHA"),
                  "H_q=32, H_kv=32", "1", true, ratio(0)});
    ex.push_back({"kv.doc2.ratio-gqa", kDoc2, kDoc2GqaSection, N_("KV capacity of GQA relative to MHA"),
                  "H_q=32, H_kv=8", "1/4", true, ratio(1)});
    ex.push_back({"kv.doc2.ratio-mqa", kDoc2, kDoc2GqaSection, N_("KV capacity of MQA relative to MHA"),
                  "H_q=32, H_kv=1", "1/32", true, ratio(2)});
    ex.push_back({"kv.doc2.q-proj-width", kDoc2, kDoc2GqaSection, N_("Q projection width H_q·d"), "H_q=32 d=128",
                  "4096", true, [] {
                      // Every query head keeps its own d-wide slice, whatever the K/V sharing.
                      const std::uint64_t q_heads = 32, d = 128, w = checked_mul(q_heads, d, N_("Q projection width"));
                      return Computed{static_cast<double>(w), std::to_string(w)};
                  }});
    ex.push_back({"kv.doc2.kv-proj-width", kDoc2, kDoc2GqaSection, N_("K (and V) projection width H_kv·d"),
                  "H_kv=8 d=128", "1024", true, [] {
                      auto rows = compare_head_sharing(1, 32, 8, 128, 16, {1});
                      return Computed{static_cast<double>(rows.at(1).kv_proj_width), std::to_string(rows.at(1).kv_proj_width)};
                  }});

    // ---- decode read volume (issue: decode-roofline) ----
    // W = 7×10^9 parameters × 2 B (BF16), M_KV = 2^30 B per request (the §2.1.1 cache), β = 10^12 B/s.
    auto doc_weights = [] { return weight_bytes_of(7000000000ULL, parse_dtype("bf16", "bf16").bits); };
    ex.push_back({"decode.doc1.weights", kDoc1, kDoc1DecodeSection, N_("weight bytes of the teaching 7B model"),
                  N_("7×10^9 parameters × 2 B (BF16)"), "14 GB", true, [=] {
                      std::uint64_t b = doc_weights();
                      return Computed{static_cast<double>(b), decimal_size(b)};
                  }});
    auto doc_step = [=](std::uint64_t batch) {
        DecodeModel m;
        m.weight_bytes = doc_weights();
        m.kv_spec = uniform_kv(32, 8, 128, 16);
        Machine hw;
        hw.bandwidth = 1e12;
        return decode_step(m, std::vector<std::uint64_t>(batch, 8192), hw);
    };
    const std::string in1 = "W=14 GB, M_KV=1 GiB, β=1 TB/s, B=1";
    const std::string in8 = "W=14 GB, M_KV=1 GiB, β=1 TB/s, B=8";
    auto gb = [](double bytes) { return Computed{bytes, fmt::format("{:.3f} GB", bytes / 1e9)}; };
    auto sec = [](double s) { return Computed{s, fmt::format("{:.3f} ms", s * 1e3)}; };
    auto rate = [](double r) { return Computed{r, fmt::format("{:.2f} token/s", r)}; };
    ex.push_back({"decode.doc1.b1-bytes", kDoc1, kDoc1DecodeSection, N_("bytes read by one step, B=1"), in1, "15.074 GB",
                  false, [=] { return gb(static_cast<double>(doc_step(1).bytes)); }});
    ex.push_back({"decode.doc1.b1-time", kDoc1, kDoc1DecodeSection, N_("step time bound, B=1"), in1, "15.074 ms", false,
                  [=] { return sec(doc_step(1).step_time_s); }});
    ex.push_back({"decode.doc1.b1-aggregate", kDoc1, kDoc1DecodeSection, N_("aggregate tokens/s bound, B=1"), in1,
                  "66.34 token/s", false, [=] { return rate(doc_step(1).aggregate_tokens_per_s); }});
    ex.push_back({"decode.doc1.b1-per-request", kDoc1, kDoc1DecodeSection, N_("per-request tokens/s bound, B=1"), in1,
                  "66.34 token/s", false, [=] { return rate(doc_step(1).per_request_tokens_per_s); }});
    ex.push_back({"decode.doc1.b8-bytes", kDoc1, kDoc1DecodeSection, N_("bytes read by one step, B=8"), in8, "22.590 GB",
                  false, [=] { return gb(static_cast<double>(doc_step(8).bytes)); }});
    ex.push_back({"decode.doc1.b8-time", kDoc1, kDoc1DecodeSection, N_("step time bound, B=8"), in8, "22.590 ms", false,
                  [=] { return sec(doc_step(8).step_time_s); }});
    ex.push_back({"decode.doc1.b8-aggregate", kDoc1, kDoc1DecodeSection, N_("aggregate tokens/s bound, B=8"), in8,
                  "354.14 token/s", false, [=] { return rate(doc_step(8).aggregate_tokens_per_s); }});
    ex.push_back({"decode.doc1.b8-per-request", kDoc1, kDoc1DecodeSection, N_("per-request tokens/s bound, B=8"), in8,
                  "44.27 token/s", false, [=] { return rate(doc_step(8).per_request_tokens_per_s); }});
    ex.push_back({"decode.doc1.reads-ratio", kDoc1, kDoc1DecodeSection, N_("reads, B=8 against B=1"), "D_8 / D_1", "×1.50",
                  false, [=] {
                      double v = static_cast<double>(doc_step(8).bytes) / static_cast<double>(doc_step(1).bytes);
                      return Computed{v, fmt::format("×{:.2f}", v)};
                  }});
    ex.push_back({"decode.doc1.aggregate-ratio", kDoc1, kDoc1DecodeSection, N_("aggregate bound, B=8 against B=1"),
                  "R_all(8) / R_all(1)", "×5.34", false, [=] {
                      double v = doc_step(8).aggregate_tokens_per_s / doc_step(1).aggregate_tokens_per_s;
                      return Computed{v, fmt::format("×{:.2f}", v)};
                  }});

    // ---- best-of-N (issue: best-of-n) ----
    ex.push_back({"bestofn.doc1.coverage", kDoc1, kDoc1BestOfNSection,
                  N_("P≥1 = 1 − (1 − p)^N: coverage (a correct candidate is present), not the probability of answering "
                     "correctly"),
                  "p=0.3, N=4", "0.7599", true, [] {
                      double v = coverage(0.3, 4);
                      return Computed{v, fmt::format("{:.4f}", v)};
                  }});

    // The section's claims that inferlab computes (issue #32), each an experiment whose shown value says
    // what was measured. "Search lets scoring errors accumulate over steps": one per-step scorer, and the
    // strategy ahead of outcome-verified best-of-N at the same generated steps changes as T grows.
    ex.push_back({"bestofn.doc1.search-accumulates", kDoc1, kDoc1BestOfNSection,
                  N_("search lets a process scorer's errors accumulate: best-of-N with an outcome verifier, spending the "
                     "same generated steps, is ahead at small T and the search at large T"),
                  N_("q=0.8, k=4, w=4, step scorer TPR 0.9 FPR 0.3, outcome verifier TPR 0.9 FPR 0.1, T=1..12"), "1", true,
                  [] {
                      const SearchResult r = search_answer(accumulation_search(Verifier{0.9, 0.1, true}));
                      const bool ok = r.crossing && r.crossing->before == std::string("best-of-N");
                      if (!ok) return Computed{0, "no change from best-of-N to the search in T = 1..12"};
                      return Computed{1, fmt::format("best-of-N ahead up to T = {}, the search from T = {}",
                                                     r.crossing->last_steps, r.crossing->first_steps)};
                  }});
    // "Compare strategies at a fixed total cost ... accuracy, tokens, tool calls and time": priced by
    // the roofline, N candidates in one batch cost less time than N alone, and that changes the winner.
    ex.push_back({"bestofn.doc1.fixed-cost-batching", kDoc1, kDoc1BestOfNSection,
                  N_("at one cost, pricing N candidates as one batch (the weights read once a step) picks another "
                     "strategy than pricing every token alike"),
                  N_("30 s; W = 16 GB, KV of 32 layers × 8 heads × 128 at 2 B, β = 3.35 TB/s; T = 10 steps of 64 tokens, "
                     "q=0.9, k=4, 3 wrong answers"),
                  "1", true, [] {
                      StrategyPricing pr;
                      pr.model.weight_bytes = 16000000000ULL;
                      pr.model.kv_spec = uniform_kv(32, 8, 128, 16);
                      pr.machine.bandwidth = 3.35e12;
                      SearchSpec s;
                      s.q = 0.9;
                      s.branch = 4;
                      s.scorer.tpr = 0.9;
                      s.scorer.fpr = 0.3;
                      const StrategyTask task{s, {}, 10, 64, Verifier{0.9, 0.1, true}, 3};
                      const auto batched = best_plan(strategies_at_budget(task, {std::nullopt, 30.0, false}, pr)).kind;
                      const auto flat = best_plan(strategies_at_budget(task, {std::nullopt, 30.0, true}, pr)).kind;
                      return Computed{batched != flat ? 1.0 : 0.0,
                                      fmt::format("batched: {}; every token alike: {}", strategy_name(batched),
                                                  strategy_name(flat))};
                  }});

    // ---- quantization (issue: quantize) ----
    // In fractions, as `quantize --x 0.37 --step 0.1` computes the decimals typed: the error is
    // 3/100, where binary doubles give 0.030000000000000027 and an "exact" example would not be.
    auto q037 = [] {
        return quantize_scalar_exact(Rational(37, 100), Rational(1, 10), 7, Rounding::HalfAwayFromZero, nullptr);
    };
    const std::string qin = "x=0.37, Δ=0.1, Q=7";
    ex.push_back({"quant.doc1.level", kDoc1, kDoc1QuantSection, N_("integer level clip(round(x/Δ), −Q, Q)"), qin, "4", true,
                  [=] { return Computed{static_cast<double>(q037().level), std::to_string(q037().level)}; }});
    ex.push_back({"quant.doc1.dequantized", kDoc1, kDoc1QuantSection, N_("x̂ = Δ·level"), qin, "0.4", true,
                  [=] { return Computed{q037().dequantized, format_real(q037().dequantized)}; }});
    ex.push_back({"quant.doc1.error", kDoc1, kDoc1QuantSection, N_("error x̂ − x"), qin, "0.03", true,
                  [=] { return Computed{q037().error, format_real(q037().error)}; }});

    // ---- speculative sampling (issue: spec-accept) ----
    // p = [0.6, 0.3, 0.1], q = [0.4, 0.4, 0.2], in exact fractions.
    auto doc_acceptance = [] {
        std::vector<Rational> p = {Rational(6, 10), Rational(3, 10), Rational(1, 10)};
        std::vector<Rational> q = {Rational(4, 10), Rational(4, 10), Rational(2, 10)};
        return acceptance(p, q);
    };
    auto frac = [](const Rational& r) { return Computed{r.to_double(), r.str()}; };
    const std::string sin = "p=[0.6,0.3,0.1], q=[0.4,0.4,0.2]";
    const char* alpha_text[] = {"1", "0.75", "0.5"};
    const char* accepted_text[] = {"0.4", "0.3", "0.1"};
    const char* residual_text[] = {"1", "0", "0"};
    const char* output_text[] = {"0.6", "0.3", "0.1"};  // "= p"
    for (std::size_t x = 0; x < 3; ++x) {
        ex.push_back({fmt::format("spec.doc1.alpha-{}", x), kDoc1, kDoc1SpecRuleSection,
                      N_("acceptance probability α({0}) = min(1, p/q)"), sin, alpha_text[x], true,
                      [=] { return frac(doc_acceptance().alpha[x]); }, {std::to_string(x)}});
        ex.push_back({fmt::format("spec.doc1.accepted-{}", x), kDoc1, kDoc1SpecRuleSection,
                      N_("accepted mass q({0})·α({0})"), sin, accepted_text[x], true,
                      [=] { return frac(doc_acceptance().accepted[x]); }, {std::to_string(x)}});
        ex.push_back({fmt::format("spec.doc1.residual-{}", x), kDoc1, kDoc1SpecRuleSection,
                      N_("normalised residual r({0})"), sin, residual_text[x], true,
                      [=] { return frac(doc_acceptance().residual[x]); }, {std::to_string(x)}});
        ex.push_back({fmt::format("spec.doc1.output-{}", x), kDoc1, kDoc1SpecRuleSection,
                      N_("final output mass of token {0} (equals p)"), sin, output_text[x], true,
                      [=] { return frac(doc_acceptance().output[x]); }, {std::to_string(x)}});
    }
    ex.push_back({"spec.doc1.accept-total", kDoc1, kDoc1SpecRuleSection, N_("total acceptance Σ min(p, q)"), sin, "0.8", true,
                  [=] { return frac(doc_acceptance().accept_prob); }});
    ex.push_back({"spec.doc1.reject", kDoc1, kDoc1SpecRuleSection, N_("rejection probability"), sin, "0.2", true,
                  [=] { return frac(doc_acceptance().reject_prob); }});
    ex.push_back({"spec.doc1.positive-residual", kDoc1, kDoc1SpecRuleSection, N_("positive residual mass [p − q]₊ of token 0"),
                  sin, "0.2", true, [=] { return frac(doc_acceptance().positive_residual[0]); }});
    auto round = [] { return walk_round(4, {"accept", "accept", "reject"}); };
    const std::string rin = N_("γ=4: accept, accept, reject");
    auto count = [](std::size_t v) { return Computed{static_cast<double>(v), std::to_string(v)}; };
    ex.push_back({"spec.doc1.round-advanced", kDoc1, kDoc1SpecRoundSection, N_("tokens advanced (2 accepted + 1 resampled)"),
                  rin, "3", true, [=] { return count(round().tokens_advanced); }});
    ex.push_back({"spec.doc1.round-discarded", kDoc1, kDoc1SpecRoundSection, N_("drafts discarded (the fourth)"), rin, "1",
                  true, [=] { return count(round().discarded); }});
    ex.push_back({"spec.doc1.round-proposals", kDoc1, kDoc1SpecRoundSection, N_("draft proposals spent"), rin, "4", true,
                  [=] { return count(round().draft_proposals); }});
    ex.push_back({"spec.doc1.round-verified", kDoc1, kDoc1SpecRoundSection, N_("target positions verified"), rin, "4", true,
                  [=] { return count(round().target_positions); }});

    // ---- the reference model (issue: reference transformer) ----
    // A 4-token prompt p0..p3: prefill writes 4 positions per layer, each decode step adds one.
    auto cache_lengths = [] {
        auto w = model::random_weights(model::dims_from_config(load_named_model("demo-gqa")), 1);
        model::Transformer m(*w);
        model::ContiguousCache cache(w->dims());
        std::vector<int> lens;
        model::MatrixRM logits = m.forward(std::vector<int>{1, 2, 3, 4}, cache);
        lens.push_back(cache.length(w->dims().n_layers - 1));
        for (int step = 0; step < 2; ++step) {
            Eigen::Index next = 0;
            logits.row(logits.rows() - 1).maxCoeff(&next);
            logits = m.forward(std::vector<int>{static_cast<int>(next)}, cache);
            lens.push_back(cache.length(0));
        }
        return lens;
    };
    const char* phase_descriptions[] = {N_("KV positions cached per layer after prefill of p0..p3"),
                                        N_("KV positions cached per layer after the first decode (y0)"),
                                        N_("KV positions cached per layer after the second decode (y1)")};
    const char* phase_expected[] = {"4", "5", "6"};
    for (std::size_t i = 0; i < 3; ++i)
        ex.push_back({fmt::format("model.doc2.cache-length-{}", i), kDoc2, kDoc2PrefillSection,
                      phase_descriptions[i],
                      N_("demo-gqa reference model, prompt of 4 tokens"), phase_expected[i], true, [=] {
                          int v = cache_lengths()[i];
                          return Computed{static_cast<double>(v), std::to_string(v)};
                      }});

    // ---- what goes wrong, shown (issue #16: model pitfall, model paged) ----
    // The documents state these as rules, not numbers: each example is 1 when the experiment
    // shows the rule (the correct path agrees with the no-cache logits within model pitfall's
    // tolerance, the broken path does not, from the expected position), 0 otherwise.
    auto shows = [](const std::string& name, int from) {
        auto w = model::random_weights(model::dims_from_config(load_named_model("demo-gqa")), 1);
        model::Transformer m(*w);
        const model::PitfallResult r = model::run_pitfall(name, &m, 1);
        const bool ok = r.correct_max_err <= r.tolerance && r.first_wrong_pos && *r.first_wrong_pos == from;
        return Computed{ok ? 1.0 : 0.0, ok ? "1" : "0"};
    };
    ex.push_back({"pitfall.doc1.fig5-wrong-layer", kDoc1, kDoc1Fig5,
                  N_("layer 2's K/V are not layer 1's: reading layer 0's cache in every layer breaks the first decode step"),
                  N_("demo-gqa, prompt of 8 tokens, greedy decode"), "1", true, [=] { return shows("wrong-layer-cache", 8); }});
    ex.push_back({"pitfall.doc1.fig5-stale-prefix", kDoc1, kDoc1Fig5,
                  N_("a prefix edited at token 3 with its old cache kept is wrong from position 3"),
                  N_("demo-gqa, prompt of 8 tokens, token 3 edited"), "1", true, [=] { return shows("stale-cache", 3); }});
    ex.push_back({"pitfall.doc1.mask-offset", kDoc1, kDoc1MaskSection,
                  N_("several new tokens after history need the history offset in the causal mask: a top-left mask "
                     "is wrong from the chunk's first row"),
                  N_("demo-gqa, 4 tokens of history, a chunk of 4"), "1", true, [=] { return shows("top-left-mask", 4); }});
    // Figure 8: logical block order apart from physical position. A0..A3 in a shuffled pool are not
    // contiguous, yet read in logical order they give the no-cache logits (1e-4 absolute, as model pitfall).
    ex.push_back({"paged.doc1.fig8-logical-order", kDoc1, kDoc1Fig8,
                  N_("four logical blocks A0..A3 on non-contiguous physical blocks give the no-cache logits"),
                  N_("demo-gqa, 8 tokens in blocks of 2"), "1", true, [] {
                      auto w = model::random_weights(model::dims_from_config(load_named_model("demo-gqa")), 1);
                      model::Transformer m(*w);
                      model::BlockPool pool(w->dims(), 2, 16, 8);
                      model::PagedCache c(pool, w->dims());
                      const std::vector<int> tokens{5, 6, 7, 8, 9, 10, 11, 12};
                      const model::MatrixRM paged = m.forward(tokens, c);
                      const auto& t = c.block_table();
                      bool scattered = false;
                      for (std::size_t i = 1; i < t.size(); ++i) scattered = scattered || t[i] != t[i - 1] + 1;
                      const double err = model::compare_logits(paged, model::logits_without_cache(m, tokens)).max_abs;
                      const bool ok = t.size() == 4 && scattered && err <= 1e-4;
                      return Computed{ok ? 1.0 : 0.0, ok ? "1" : "0"};
                  }});
    return ex;
}

}  // namespace

const std::vector<Example>& examples() {
    static const std::vector<Example> all = build();
    return all;
}

}  // namespace inferlab
