#include "inferlab/model/bench.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "inferlab/model/kv_cache.hpp"
#include <cctype>
#include <cmath>
#include <fstream>
#include <string>

#include "inferlab/error.hpp"
#include "inferlab/kv.hpp"

namespace inferlab::model {

std::uint64_t decode_step_bytes(const Dims& d, std::uint64_t seq_len, unsigned weight_bits) {
    std::uint64_t floats = weight_floats(d);
    // Untied: the embedding table is read one row a step. Tied: it is read whole, as the LM head.
    if (!d.shared_classifier) floats -= std::uint64_t(d.vocab_size - 1) * d.dim;
    const std::uint64_t kv = kv_bytes(uniform_kv(d.n_layers, d.n_kv_heads, d.head_dim(), 32), {seq_len}).total_bytes;
    return floats * weight_bits / 8 + kv;
}

bool bench_context_fits(const Dims& d, std::uint64_t context) {
    return context + kContextTimedSteps <= static_cast<std::uint64_t>(d.seq_len);
}

std::vector<std::uint64_t> default_bench_contexts(const Dims& d) {
    std::uint64_t s = 128;
    if (!bench_context_fits(d, s)) s = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(d.seq_len) / 8);
    std::vector<std::uint64_t> out;
    for (; bench_context_fits(d, s); s *= 4) out.push_back(s);
    return out;
}

std::uint64_t decode_step_bytes(const Dims& d, std::uint64_t seq_len, WeightDtype t) {
    const std::uint64_t D = std::uint64_t(d.dim), L = std::uint64_t(d.n_layers);
    const std::uint64_t norms = (2 * L + 1) * D, embedding_row = d.shared_classifier ? 0 : D;  // float32
    const std::uint64_t kv = kv_bytes(uniform_kv(d.n_layers, d.n_kv_heads, d.head_dim(), 32), {seq_len}).total_bytes;
    return product_weight_bytes(d, t) + (norms + embedding_row) * 4 + kv;
}

DecodeModel reference_decode_model(const Dims& d, WeightDtype t) {
    DecodeModel m = reference_decode_model(d, 32);
    m.weight_bytes = decode_step_bytes(d, 0, t);
    return m;
}

DecodeModel reference_decode_model(const Dims& d, unsigned weight_bits) {
    DecodeModel m;
    m.weight_bytes = decode_step_bytes(d, 0, weight_bits);
    m.params = weight_floats(d);
    m.kv_spec = uniform_kv(d.n_layers, d.n_kv_heads, d.head_dim(), 32);
    m.attn_layers = d.n_layers;
    m.attn_q_heads = d.n_heads;
    m.attn_head_dim = d.head_dim();
    return m;
}

double time_decode_step(const Transformer& m, int batch, int context, int repeats, const ForwardOptions& opt) {
    const Dims& d = m.dims();
    if (context + repeats > d.seq_len)
        throw InputError("--contexts", std::to_string(context), "leaves no room for the timed steps below the maximum sequence length");
    std::vector<std::unique_ptr<ContiguousCache>> caches;
    std::vector<int> prompt(static_cast<std::size_t>(context));
    for (int i = 0; i < context; ++i) prompt[std::size_t(i)] = (i * 7 + 3) % d.vocab_size;
    for (int b = 0; b < batch; ++b) {
        caches.push_back(std::make_unique<ContiguousCache>(d));
        m.forward(prompt, *caches.back(), opt);
    }
    double best = 1e300;
    for (int r = 0; r < repeats; ++r) {
        std::vector<Row> rows;
        for (auto& c : caches) rows.push_back({(r * 5 + 1) % d.vocab_size, c.get()});
        auto t0 = std::chrono::steady_clock::now();
        m.forward(rows, opt);
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
}

std::uint64_t last_level_cache_bytes() {
    std::uint64_t best = 0;
    int best_level = 0;
    for (int i = 0; i < 8; ++i) {
        const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
        std::ifstream level(dir + "level"), size(dir + "size");
        int lv = 0;
        std::string sz;
        if (!(level >> lv) || !(size >> sz) || sz.empty()) continue;
        std::uint64_t v = 0;
        std::size_t k = 0;
        while (k < sz.size() && std::isdigit(static_cast<unsigned char>(sz[k]))) v = v * 10 + std::uint64_t(sz[k++] - '0');
        if (k < sz.size() && sz[k] == 'K') v <<= 10;
        else if (k < sz.size() && sz[k] == 'M') v <<= 20;
        if (lv > best_level || (lv == best_level && v > best)) best_level = lv, best = v;
    }
    return best;
}

namespace {
// Σ_i softmax(a)_i·(log softmax(a)_i − log softmax(b)_i), in double.
double kl_logits(const MatrixRM& a, const MatrixRM& b) {
    const double ma = a.maxCoeff(), mb = b.maxCoeff();
    double za = 0, zb = 0;
    for (Eigen::Index i = 0; i < a.cols(); ++i) {
        za += std::exp(double(a(0, i)) - ma);
        zb += std::exp(double(b(0, i)) - mb);
    }
    double kl = 0;
    for (Eigen::Index i = 0; i < a.cols(); ++i) {
        const double la = double(a(0, i)) - ma - std::log(za), lb = double(b(0, i)) - mb - std::log(zb);
        kl += std::exp(la) * (la - lb);
    }
    return std::max(0.0, kl);
}
}  // namespace

std::vector<DtypeDecode> compare_decode_dtypes(const Transformer& m, const std::vector<int>& prompt, int steps,
                                               const ForwardOptions& opt, const std::vector<const WeightsAt*>& at) {
    if (at.empty() || at[0]->dtype != WeightDtype::F32) throw std::logic_error("compare_decode_dtypes: float32 first");
    const Dims& d = m.dims();
    const std::size_t n = at.size();
    std::vector<ForwardOptions> opts(n, opt);
    std::vector<std::unique_ptr<ContiguousCache>> caches;
    std::vector<double> seconds(n, 0.0);
    std::vector<DtypeDecode> out(n);
    MatrixRM last;
    for (std::size_t k = 0; k < n; ++k) {
        at[k]->apply(opts[k]);
        caches.push_back(std::make_unique<ContiguousCache>(d));
        last = m.forward(prompt, *caches.back(), opt);  // float32 prefill: every cache starts the same
        out[k].dtype = at[k]->dtype;
        out[k].bytes_per_step = decode_step_bytes(d, prompt.size() + std::uint64_t(steps) / 2, at[k]->dtype);
    }
    Eigen::Index next = 0;
    last.row(last.rows() - 1).maxCoeff(&next);
    std::vector<MatrixRM> logits(n);
    for (int s = 0; s < steps; ++s) {
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t k = (std::size_t(s) + i) % n;
            const auto t0 = std::chrono::steady_clock::now();
            logits[k] = m.forward(std::vector<int>{static_cast<int>(next)}, *caches[k], opts[k]);
            seconds[k] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        }
        Eigen::Index ref_arg = 0;
        logits[0].row(0).maxCoeff(&ref_arg);
        const double scale = std::max(1e-30, double(logits[0].cwiseAbs().maxCoeff()));
        for (std::size_t k = 0; k < n; ++k) {
            Eigen::Index arg = 0;
            logits[k].row(0).maxCoeff(&arg);
            out[k].greedy_agreement += arg == ref_arg ? 1.0 / steps : 0.0;
            out[k].max_rel_logit_diff = std::max(out[k].max_rel_logit_diff, double((logits[k] - logits[0]).cwiseAbs().maxCoeff()) / scale);
            out[k].mean_kl += kl_logits(logits[0], logits[k]) / steps;
        }
        next = ref_arg;
    }
    for (std::size_t k = 0; k < n; ++k) out[k].tokens_per_s = steps / seconds[k];
    return out;
}

BandwidthProbe measure_read_bandwidth(std::uint64_t bytes, int threads, int repeats) {
    BandwidthProbe p;
    p.threads = threads;
    HugePageBuffer mem(bytes);  // the same placement as the weights
    const std::size_t size = mem.bytes();
    p.bytes = size;
    p.huge_pages = mem.huge();
    float* buf = static_cast<float*>(mem.data());
    const std::size_t n = size / sizeof(float);
    for (std::size_t i = 0; i < n; ++i) buf[i] = static_cast<float>(i & 1023) * 1e-3f;
    double best = 0;
    volatile float sink = 0;
    for (int rep = 0; rep < repeats; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        float total = 0;
#pragma omp parallel for num_threads(threads) reduction(+ : total) schedule(static) if (threads > 1)
        for (std::size_t blk = 0; blk < n / 4096; ++blk) {
            const float* a = buf + blk * 4096;
            float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
            for (int i = 0; i < 4096; i += 8)
                for (int k = 0; k < 8; ++k) acc[k] += a[i + k];
            total += ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
        }
        auto t1 = std::chrono::steady_clock::now();
        sink = sink + total;
        const double s = std::chrono::duration<double>(t1 - t0).count();
        best = std::max(best, static_cast<double>(size) / s / 1e9);
    }
    p.sum_gbs = best;
    // The decode kernel's stream over the same pages: W [rows, 4096] float32 times x.
    constexpr int kCols = 4096;
    const Eigen::Index rows = static_cast<Eigen::Index>(n / kCols);
    if (rows > 0) {
        const MatMap w(buf, rows, kCols);
        std::vector<float> x(kCols, 1e-3f), y(static_cast<std::size_t>(rows));
        double kbest = 0;
        for (int rep = 0; rep < repeats; ++rep) {
            auto t0 = std::chrono::steady_clock::now();
            matvec(w, x.data(), y.data(), threads);
            const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            kbest = std::max(kbest, double(rows) * kCols * sizeof(float) / s / 1e9);
        }
        sink = sink + y[0];
        p.kernel_gbs = kbest;
    }
    p.read_gbs = std::max(p.sum_gbs, p.kernel_gbs);
    return p;
}

double measure_matmul_gflops(int n, int threads, int repeats) {
    Eigen::setNbThreads(threads);
    Eigen::MatrixXf a = Eigen::MatrixXf::Random(n, n), b = Eigen::MatrixXf::Random(n, n), c(n, n);
    double best = 0;
    for (int rep = 0; rep < repeats; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        c.noalias() = a * b;
        auto t1 = std::chrono::steady_clock::now();
        best = std::max(best, 2.0 * n * n * double(n) / std::chrono::duration<double>(t1 - t0).count() / 1e9);
    }
    volatile float sink = c(0, 0);
    (void)sink;
    return best;
}

double measure_batch_product_gflops(int rows, int threads, int repeats, unsigned weight_bits) {
    const int out = 256 * threads, n = 768;
    std::vector<float> w(std::size_t(out) * n), x(std::size_t(rows) * n), y(std::size_t(rows) * out);
    std::vector<std::uint16_t> wb(w.size());
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 97) * 1e-3f;
    for (std::size_t i = 0; i < w.size(); ++i) wb[i] = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(w[i]) >> 16);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 89) * 1e-3f;
    const MatMap wm(w.data(), out, n);
    // int8/int4: the same matrix quantized (qweights.hpp's layout), through the quantized kernel.
    const unsigned qbits = weight_bits == 8 || weight_bits == 4 ? weight_bits : 8;
    std::vector<std::uint8_t> levels(std::size_t(out) * n * qbits / 8);
    std::vector<std::uint16_t> scales(std::size_t(out) * (n / kQGroup));
    quantize_rows(w.data(), out, n, qbits, levels.data(), scales.data(), 1);
    const QMatrix qm{out, n, qbits, levels.data(), scales.data()};
    constexpr int kCalls = 2000;  // ~1.5 GFLOP per batch row: long enough to time
    double best = 0;
    for (int rep = 0; rep < repeats; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        for (int c = 0; c < kCalls; ++c) {
            if (weight_bits == 16) matmul_few_rows_bf16(wb.data(), out, n, x.data(), rows, y.data(), threads);
            else if (weight_bits == 8 || weight_bits == 4) matmul_quantized(qm, x.data(), rows, y.data(), threads);
            else matmul_few_rows(wm, x.data(), rows, y.data(), threads);
        }
        auto t1 = std::chrono::steady_clock::now();
        best = std::max(best, 2.0 * rows * double(out) * n * kCalls / std::chrono::duration<double>(t1 - t0).count() / 1e9);
    }
    volatile float sink = y[0];
    (void)sink;
    return best;
}

Machine measured_machine(const BandwidthProbe& bw, double product_gflops) {
    Machine m;
    m.bandwidth = bw.read_gbs * 1e9;
    m.peak_flops = product_gflops * 1e9;
    return m;
}

double achieved_gbs(std::uint64_t bytes_per_step, double steps_per_s) {
    return static_cast<double>(bytes_per_step) * steps_per_s / 1e9;
}

double prefill_gflops(std::uint64_t params, std::uint64_t tokens, double seconds) {
    return 2.0 * static_cast<double>(params) * static_cast<double>(tokens) / seconds / 1e9;
}

DecodeComparison compare_fp32_bf16_decode(const Transformer& m, KvCache& a, KvCache& b, int first_token, int steps,
                                          const ForwardOptions& opt, const Bf16Weights& bf16) {
    ForwardOptions with = opt;
    with.bf16 = &bf16;
    DecodeComparison c;
    double fp32_s = 0, bf16_s = 0;
    int tok = first_token;
    for (int i = 0; i < steps; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        MatrixRM la = m.forward(std::vector<int>{tok}, a, opt);
        auto t1 = std::chrono::steady_clock::now();
        MatrixRM lb = m.forward(std::vector<int>{tok}, b, with);
        auto t2 = std::chrono::steady_clock::now();
        fp32_s += std::chrono::duration<double>(t1 - t0).count();
        bf16_s += std::chrono::duration<double>(t2 - t1).count();
        const double scale = std::max(1.0, static_cast<double>(la.cwiseAbs().maxCoeff()));
        c.max_logit_change = std::max(c.max_logit_change, static_cast<double>((la - lb).cwiseAbs().maxCoeff()) / scale);
        Eigen::Index next = 0;
        la.row(0).maxCoeff(&next);
        tok = static_cast<int>(next);
    }
    c.fp32_tokens_per_s = steps / fp32_s;
    c.bf16_tokens_per_s = steps / bf16_s;
    return c;
}

}  // namespace inferlab::model
