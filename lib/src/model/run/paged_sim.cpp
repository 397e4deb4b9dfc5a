#include "inferlab/model/run/paged_sim.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <stdexcept>

#include "inferlab/base/error.hpp"
#include "inferlab/calc/scheduler.hpp"
#include "inferlab/model/ops/kv_cache.hpp"
#include "inferlab/model/run/compare.hpp"

namespace inferlab::model {

namespace {

struct Seq {
    std::vector<int> tokens;          // prompt, then the tokens generated so far
    int prompt = 0;
    std::unique_ptr<PagedCache> cache;
    std::string state = "waiting";
    int shared_from = -1, shared_tokens = 0;
    std::vector<Eigen::VectorXf> rows;  // the logits each new token came from, [vocab] each
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
        : m_(m), o_(o), pool_(m.dims(), o.block_size, o.blocks, o.seed),
          sched_({std::uint64_t(o.blocks), std::uint64_t(o.block_size), 0, 0}) {
        for (const auto& p : o.prompts) {
            seqs_.push_back({p, static_cast<int>(p.size()), nullptr, "waiting", -1, 0, {}});
            sched_.add(p.size(), std::uint64_t(o.new_tokens));
        }
    }

    PagedSimResult run() {
        PagedSimResult r;
        r.options = o_;
        // The decisions are the scheduler's (calc/scheduler.hpp, the one serve-sim follows); this
        // loop carries them out on the model and checks, every step, that the pool it writes holds
        // exactly the blocks the scheduler booked. Every step feeds at least one token, and a
        // request alone always fits its checked pool, so the loop ends.
        for (int step = 0; !all_finished(); ++step) {
            events_.clear();
            const StepDecision d = sched_.step([this](int id, std::span<const int> running) { return best_parent(id, running); });
            for (int id : d.preempted) preempt(std::size_t(id));
            decode(d.work);
            for (const StepWork& w : d.work)
                if (w.admitted) admit(w);
            if (std::uint64_t(pool_.num_blocks() - pool_.free_blocks()) != d.used_blocks)
                throw std::logic_error("simulate_paged: the pool and the scheduler disagree on the blocks in use");
            PagedStep st = snapshot(step);
            if (st.used_blocks > r.peak_used_blocks) r.peak_used_blocks = st.used_blocks, r.peak_step = step;
            for (const auto& q : st.seqs) r.waiting_steps += q.state == "waiting";
            finish();
            if (pool_.free_blocks() != static_cast<int>(sched_.free_blocks()))
                throw std::logic_error("simulate_paged: the pool and the scheduler disagree on the free blocks");
            st.events = events_;
            st.free_after = pool_.free_blocks();
            r.steps.push_back(std::move(st));
        }
        for (auto& s : seqs_) {
            r.generated.emplace_back(s.tokens.begin() + s.prompt, s.tokens.end());
            MatrixRM l(static_cast<Eigen::Index>(s.rows.size()), m_.dims().vocab_size);  // [new_tokens, vocab]
            for (std::size_t i = 0; i < s.rows.size(); ++i) l.row(Eigen::Index(i)) = s.rows[i].transpose();
            r.logits.push_back(l);
        }
        r.copies_on_write = copies_;
        r.preemptions = preemptions_;
        r.recomputed_tokens = recomputed_;
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
    std::pair<int, std::uint64_t> best_parent(int i, std::span<const int> running) const {
        std::pair<int, std::uint64_t> best{-1, 0};
        if (!o_.share_prefix) return best;
        const auto& a = seqs_[std::size_t(i)].tokens;
        for (int j : running) {
            const auto& b = seqs_[std::size_t(j)].tokens;
            std::uint64_t n = 0;
            const std::uint64_t limit = std::min<std::uint64_t>(std::uint64_t(seqs_[std::size_t(j)].prompt), a.size());
            while (n < limit && a[n] == b[n]) ++n;
            // At least the last token is fed again (the scheduler clamps to it): its logits choose the next token.
            if (n > best.second) best = {j, n};
        }
        return best;
    }

    // An admission the scheduler made: a prefill of every token the sequence has (after a
    // preemption, a recompute) but the shared ones, which gives it its next token.
    void admit(const StepWork& w) {
        const std::size_t i = std::size_t(w.id);
        Seq& s = seqs_[i];
        const int parent = w.parent;
        const int shared = static_cast<int>(w.shared);
        s.cache = parent >= 0 ? std::make_unique<PagedCache>(pool_, m_.dims(), *seqs_[std::size_t(parent)].cache, shared)
                              : std::make_unique<PagedCache>(pool_, m_.dims());
        s.shared_from = parent;
        s.shared_tokens = shared;
        s.state = "running";
        events_.push_back(parent >= 0 ? Prose{N_("seq {0} admitted, sharing {1} tokens of seq {2}"),
                                              {std::to_string(i), std::to_string(shared), std::to_string(parent)}}
                                      : Prose{N_("seq {0} admitted"), {std::to_string(i)}});
        if (!w.emits || w.start + w.tokens != s.tokens.size())
            throw std::logic_error("simulate_paged: an admission that is not a whole prefill");
        std::vector<int> rest(s.tokens.begin() + shared, s.tokens.end());
        const MatrixRM l = m_.forward(rest, *s.cache);  // [rest, vocab]
        note_copies(i);
        take(s, l.row(l.rows() - 1).transpose());
    }

    void preempt(std::size_t i) {
        Seq& s = seqs_[i];
        recomputed_ += s.cache->length(0);
        s.cache.reset();  // its blocks return to the pool; recomputed on readmission
        s.state = "waiting";
        s.shared_from = -1;
        s.shared_tokens = 0;
        seen_copies_[i] = 0;
        ++preemptions_;
        events_.push_back({N_("seq {0} preempted (pool exhausted): its blocks return, it waits"), {std::to_string(i)}});
    }

    // One token for every running sequence the scheduler kept (its preemptions already carried out).
    void decode(const std::vector<StepWork>& work) {
        std::vector<std::size_t> run;
        for (const StepWork& w : work) {
            if (w.admitted) continue;
            if (w.tokens != 1 || !w.emits) throw std::logic_error("simulate_paged: a running sequence not decoding one token");
            run.push_back(std::size_t(w.id));
        }
        if (run.empty()) return;
        std::vector<Row> rows;
        for (auto i : run) rows.push_back({seqs_[i].tokens.back(), seqs_[i].cache.get()});
        const MatrixRM l = m_.forward(rows);  // [run, vocab]
        for (std::size_t k = 0; k < run.size(); ++k) {
            note_copies(run[k]);
            take(seqs_[run[k]], l.row(Eigen::Index(k)).transpose());
        }
    }

    bool done(const Seq& s) const { return static_cast<int>(s.tokens.size()) - s.prompt >= o_.new_tokens; }

    // Every prefill or decode of a sequence yields exactly its next token (a readmission's
    // prefill included), so rows[k] is the row token k was chosen from.
    void take(Seq& s, const Eigen::VectorXf& row) {
        s.rows.push_back(row);
        s.tokens.push_back(argmax_of(row));
    }

    void note_copies(std::size_t i) {
        const int c = seqs_[i].cache->copies_on_write();
        if (c > seen_copies_[i]) {
            copies_ += c - seen_copies_[i];
            events_.push_back({N_("seq {0} copied a shared block on its first write into it"), {std::to_string(i)}});
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
            events_.push_back({N_("seq {0} finished: its blocks return to the pool"), {std::to_string(i)}});
        }
    }

    // Before finish(): a sequence that is done shows as finished with the blocks it hands back.
    PagedStep snapshot(int step) const {
        PagedStep p;
        p.step = step;
        for (std::size_t i = 0; i < seqs_.size(); ++i) {
            const Seq& s = seqs_[i];
            SeqState st;
            st.seq = static_cast<int>(i);
            st.state = s.state == "running" && done(s) ? "finished" : s.state;
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
    BatchScheduler sched_;
    std::vector<Seq> seqs_;
    std::vector<Prose> events_;
    std::vector<int> seen_copies_ = std::vector<int>(o_.prompts.size(), 0);
    int copies_ = 0, preemptions_ = 0, recomputed_ = 0;
};

}  // namespace

int final_cached_tokens(int prompt_tokens, int new_tokens) { return prompt_tokens + new_tokens - 1; }

PagedSimResult simulate_paged(const Transformer& m, const PagedSimOptions& opt) {
    if (opt.prompts.empty()) throw InputError(opt.names.prompts, "", N_("needs at least one prompt"));
    if (opt.new_tokens <= 0)
        throw InputError(opt.names.new_tokens, std::to_string(opt.new_tokens), N_("must be a positive integer"));
    for (std::size_t i = 0; i < opt.prompts.size(); ++i) {
        const auto& p = opt.prompts[i];
        if (p.empty()) throw InputError(opt.names.prompts, "", N_("every prompt needs at least one token"));
        check_tokens(m.dims(), p, opt.names.prompts);
        // The positions the model sees are the cached ones: the last token is never fed back.
        const int cached = final_cached_tokens(static_cast<int>(p.size()), opt.new_tokens);
        if (cached > m.dims().seq_len)
            throw InputError(opt.names.new_tokens, std::to_string(opt.new_tokens),
                             N_("makes sequence {0} cache {1} tokens ({2} of prompt + {3} generated − 1), past the "
                                "model's {4} positions"),
                             {std::to_string(i), std::to_string(cached), std::to_string(p.size()),
                              std::to_string(opt.new_tokens), std::to_string(m.dims().seq_len)});
        // The one refusal for lack of blocks: any other shortage is waited out or preempted.
        const int need = blocks_for(cached, opt.block_size);
        if (need > opt.blocks)
            throw InputError(opt.names.blocks, std::to_string(opt.blocks),
                             N_("cannot hold sequence {0} alone: its {1} cached tokens ({2} of prompt + {3} generated "
                                "− 1, the last never fed back) need {4} blocks of {5} tokens, more than the pool's {6}"),
                             {std::to_string(i), std::to_string(cached), std::to_string(p.size()),
                              std::to_string(opt.new_tokens), std::to_string(need), std::to_string(opt.block_size),
                              std::to_string(opt.blocks)});
    }
    return Sim(m, opt).run();
}

SharingComparison compare_sharing(const Transformer& m, PagedSimOptions opt) {
    SharingComparison c;
    opt.share_prefix = true;
    c.shared = simulate_paged(m, opt);
    opt.share_prefix = false;
    c.unshared = simulate_paged(m, opt);
    for (std::size_t i = 0; i < c.shared.logits.size(); ++i)
        c.max_logit_diff = std::max(c.max_logit_diff, compare_logits(c.shared.logits[i], c.unshared.logits[i]).max_abs);
    // At the shared peak, every table's blocks minus the distinct ones held: each block held by
    // r sequences counts r − 1 times.
    const PagedStep& peak = c.shared.steps[std::size_t(c.shared.peak_step)];
    std::int64_t listed = 0;
    for (const auto& s : peak.seqs) listed += static_cast<std::int64_t>(s.table.size());
    c.blocks_saved = listed - peak.used_blocks;
    c.bytes_saved = c.blocks_saved * static_cast<std::int64_t>(c.shared.block_bytes);
    c.unshared_demand_blocks = static_cast<int>(listed);
    c.peak_bytes_shared = c.shared.peak_bytes;
    c.peak_bytes_unshared = c.unshared.peak_bytes;
    return c;
}

}  // namespace inferlab::model
