#include "inferlab/model/paged_sim.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "inferlab/error.hpp"
#include "inferlab/model/kv_cache.hpp"

namespace inferlab::model {

namespace {

struct Seq {
    std::vector<int> tokens;          // prompt, then the tokens generated so far
    int prompt = 0;
    std::unique_ptr<PagedCache> cache;
    std::string state = "waiting";
    int shared_from = -1, shared_tokens = 0;
    std::vector<Eigen::VectorXf> rows;  // the logits each new token came from
};

int blocks_for(int tokens, int block) { return (tokens + block - 1) / block; }

int argmax_of(const Eigen::VectorXf& v) {
    Eigen::Index i = 0;
    v.maxCoeff(&i);
    return static_cast<int>(i);
}

class Sim {
public:
    Sim(const Transformer& m, const PagedSimOptions& o)
        : m_(m), o_(o), pool_(m.dims(), o.block_size, o.blocks, o.seed) {
        for (const auto& p : o.prompts) seqs_.push_back({p, static_cast<int>(p.size()), nullptr, "waiting", -1, 0, {}});
    }

    PagedSimResult run() {
        PagedSimResult r;
        r.options = o_;
        for (int step = 0; !all_finished(); ++step) {
            if (step > 4 * (o_.new_tokens + 1) * static_cast<int>(seqs_.size()) + 8)
                throw std::logic_error("simulate_paged: no progress");
            events_.clear();
            admit();
            decode();
            // The peak is before finished sequences hand their blocks back.
            r.peak_used_blocks = std::max(r.peak_used_blocks, pool_.num_blocks() - pool_.free_blocks());
            finish();
            r.steps.push_back(snapshot(step));
        }
        for (auto& s : seqs_) {
            r.generated.emplace_back(s.tokens.begin() + s.prompt, s.tokens.end());
            MatrixRM l(static_cast<Eigen::Index>(s.rows.size()), m_.dims().vocab_size);
            for (std::size_t i = 0; i < s.rows.size(); ++i) l.row(Eigen::Index(i)) = s.rows[i].transpose();
            r.logits.push_back(l);
        }
        r.copies_on_write = copies_;
        r.preemptions = preemptions_;
        r.block_bytes = pool_.allocated_bytes() / std::uint64_t(pool_.num_blocks());
        bool whole = pool_.free_blocks() == pool_.num_blocks();
        for (int b = 0; b < pool_.num_blocks(); ++b) whole = whole && pool_.ref_count(b) == 0;
        r.pool_whole_at_end = whole;
        r.peak_bytes = std::uint64_t(r.peak_used_blocks) * r.block_bytes;
        return r;
    }

private:
    bool all_finished() const {
        return std::all_of(seqs_.begin(), seqs_.end(), [](const Seq& s) { return s.state == "finished"; });
    }

    // The running sequence whose prompt shares the longest prefix with seq i's (cached positions only).
    std::pair<int, int> best_parent(std::size_t i) const {
        std::pair<int, int> best{-1, 0};
        if (!o_.share_prefix) return best;
        for (std::size_t j = 0; j < seqs_.size(); ++j) {
            if (j == i || seqs_[j].state != "running") continue;
            const auto& a = seqs_[i].tokens;
            const auto& b = seqs_[j].tokens;
            int n = 0;
            while (n < seqs_[j].prompt && n < static_cast<int>(a.size()) && a[std::size_t(n)] == b[std::size_t(n)]) ++n;
            // At least the last token is fed again: its logits choose the next token.
            n = std::min(n, static_cast<int>(a.size()) - 1);
            if (n > best.second) best = {static_cast<int>(j), n};
        }
        return best;
    }

    // First come, first served: admit waiting sequences in order while their blocks fit.
    void admit() {
        for (std::size_t i = 0; i < seqs_.size(); ++i) {
            Seq& s = seqs_[i];
            if (s.state == "running" || s.state == "finished") continue;
            auto [parent, shared] = best_parent(i);
            const int own = blocks_for(static_cast<int>(s.tokens.size()), o_.block_size) - shared / o_.block_size;
            if (own > pool_.free_blocks()) return;
            s.cache = parent >= 0 ? std::make_unique<PagedCache>(pool_, m_.dims(), *seqs_[std::size_t(parent)].cache, shared)
                                  : std::make_unique<PagedCache>(pool_, m_.dims());
            s.shared_from = parent;
            s.shared_tokens = shared;
            s.state = "running";
            events_.push_back(parent >= 0 ? fmt::format("seq {} admitted, sharing {} tokens of seq {}", i, shared, parent)
                                          : fmt::format("seq {} admitted", i));
            std::vector<int> rest(s.tokens.begin() + shared, s.tokens.end());
            const MatrixRM l = m_.forward(rest, *s.cache);
            note_copies(i);
            take(s, l.row(l.rows() - 1).transpose());
            just_admitted_.push_back(i);
        }
    }

    // Blocks a decode step of seq s takes: a new block at a boundary, or a copy of a shared one.
    int step_blocks(const Seq& s) const {
        const int len = s.cache->length(0);
        if (len % o_.block_size == 0) return 1;
        return pool_.ref_count(s.cache->block_table()[std::size_t(len / o_.block_size)]) > 1 ? 1 : 0;
    }

    void preempt(std::size_t i) {
        Seq& s = seqs_[i];
        s.cache.reset();  // its blocks return to the pool; recomputed on readmission
        s.state = "waiting";
        s.shared_from = -1;
        s.shared_tokens = 0;
        seen_copies_[i] = 0;
        ++preemptions_;
        events_.push_back(fmt::format("seq {} preempted (pool exhausted): its blocks return, it waits", i));
    }

    void decode() {
        std::vector<std::size_t> run;
        for (std::size_t i = 0; i < seqs_.size(); ++i)
            if (seqs_[i].state == "running" && !done(seqs_[i]) &&
                std::find(just_admitted_.begin(), just_admitted_.end(), i) == just_admitted_.end())
                run.push_back(i);
        just_admitted_.clear();
        for (;;) {
            int need = 0;
            for (auto i : run) need += step_blocks(seqs_[i]);
            if (need <= pool_.free_blocks() || run.empty()) break;
            // The most recently admitted is preempted (the highest index among the running).
            const std::size_t victim = run.back();
            if (run.size() == 1)
                throw InputError(o_.names.blocks, std::to_string(o_.blocks),
                                 "cannot hold sequence " + std::to_string(victim) + " alone");
            run.pop_back();
            preempt(victim);
        }
        if (run.empty()) return;
        std::vector<Row> rows;
        for (auto i : run) rows.push_back({seqs_[i].tokens.back(), seqs_[i].cache.get()});
        const MatrixRM l = m_.forward(rows);
        for (std::size_t k = 0; k < run.size(); ++k) {
            note_copies(run[k]);
            take(seqs_[run[k]], l.row(Eigen::Index(k)).transpose());
        }
    }

    bool done(const Seq& s) const { return static_cast<int>(s.tokens.size()) - s.prompt >= o_.new_tokens; }

    void take(Seq& s, const Eigen::VectorXf& row) {
        // A recomputed sequence (after preemption) re-derives rows it already has: keep the first.
        const std::size_t k = s.tokens.size() - std::size_t(s.prompt);
        if (k < s.rows.size()) return;
        s.rows.push_back(row);
        s.tokens.push_back(argmax_of(row));
    }

    void note_copies(std::size_t i) {
        const int c = seqs_[i].cache->copies_on_write();
        if (c > seen_copies_[i]) {
            copies_ += c - seen_copies_[i];
            events_.push_back(fmt::format("seq {} copied a shared block on its first write into it", i));
        }
        seen_copies_[i] = c;
    }

    void finish() {
        for (std::size_t i = 0; i < seqs_.size(); ++i) {
            Seq& s = seqs_[i];
            if (s.state != "running" || !done(s)) continue;
            s.cache.reset();
            s.state = "finished";
            seen_copies_[i] = 0;
            events_.push_back(fmt::format("seq {} finished: its blocks return to the pool", i));
        }
    }

    PagedStep snapshot(int step) const {
        PagedStep p;
        p.step = step;
        p.events = events_;
        for (std::size_t i = 0; i < seqs_.size(); ++i) {
            const Seq& s = seqs_[i];
            SeqState st;
            st.seq = static_cast<int>(i);
            st.state = s.state;
            st.shared_from = s.shared_from;
            st.shared_tokens = s.shared_tokens;
            if (s.cache) {
                st.length = s.cache->length(0);
                st.table = s.cache->block_table();
                for (int b : st.table) st.refs.push_back(pool_.ref_count(b));
                st.last_fill = st.table.empty() ? 0 : st.length - (static_cast<int>(st.table.size()) - 1) * o_.block_size;
            }
            p.seqs.push_back(st);
        }
        p.free_blocks = pool_.free_blocks();
        p.used_blocks = pool_.num_blocks() - pool_.free_blocks();
        return p;
    }

    const Transformer& m_;
    PagedSimOptions o_;
    BlockPool pool_;
    std::vector<Seq> seqs_;
    std::vector<std::string> events_;
    std::vector<std::size_t> just_admitted_;
    std::vector<int> seen_copies_ = std::vector<int>(o_.prompts.size(), 0);
    int copies_ = 0, preemptions_ = 0;
};

}  // namespace

PagedSimResult simulate_paged(const Transformer& m, const PagedSimOptions& opt) {
    if (opt.prompts.empty()) throw InputError(opt.names.prompts, "", "needs at least one prompt");
    for (const auto& p : opt.prompts) {
        if (p.empty()) throw InputError(opt.names.prompts, "", "every prompt needs at least one token");
        check_tokens(m.dims(), p, opt.names.prompts);
        const int longest = static_cast<int>(p.size()) + opt.new_tokens;
        if (longest > m.dims().seq_len)
            throw InputError(opt.names.new_tokens, std::to_string(opt.new_tokens),
                             "makes a sequence of " + std::to_string(longest) + " tokens, past the model's " +
                                 std::to_string(m.dims().seq_len));
        if (blocks_for(longest, opt.block_size) > opt.blocks)
            throw InputError(opt.names.blocks, std::to_string(opt.blocks),
                             "cannot hold a sequence of " + std::to_string(longest) + " tokens alone (" +
                                 std::to_string(blocks_for(longest, opt.block_size)) + " blocks of " +
                                 std::to_string(opt.block_size) + ")");
    }
    if (opt.new_tokens <= 0) throw InputError(opt.names.new_tokens, std::to_string(opt.new_tokens), "must be a positive integer");
    return Sim(m, opt).run();
}

SharingComparison compare_sharing(const Transformer& m, PagedSimOptions opt) {
    SharingComparison c;
    opt.share_prefix = true;
    c.shared = simulate_paged(m, opt);
    opt.share_prefix = false;
    c.unshared = simulate_paged(m, opt);
    for (std::size_t i = 0; i < c.shared.logits.size(); ++i)
        c.max_logit_diff = std::max(c.max_logit_diff,
                                    static_cast<double>((c.shared.logits[i] - c.unshared.logits[i]).cwiseAbs().maxCoeff()));
    c.blocks_saved = std::int64_t(c.unshared.peak_used_blocks) - std::int64_t(c.shared.peak_used_blocks);
    c.bytes_saved = c.blocks_saved * static_cast<std::int64_t>(c.shared.block_bytes);
    c.peak_bytes_shared = c.shared.peak_bytes;
    c.peak_bytes_unshared = c.unshared.peak_bytes;
    return c;
}

}  // namespace inferlab::model
