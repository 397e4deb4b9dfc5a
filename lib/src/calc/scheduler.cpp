#include "inferlab/calc/scheduler.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace inferlab {

BatchScheduler::BatchScheduler(const SchedulerConfig& config) : c_(config) {
    if (c_.blocks == 0 || c_.block_size == 0) throw std::invalid_argument("BatchScheduler: an empty pool");
    if (c_.blocks > std::numeric_limits<std::uint32_t>::max()) throw std::invalid_argument("BatchScheduler: pool too large");
    refs_.assign(c_.blocks, 0);
    free_.reserve(c_.blocks);
    for (std::uint64_t b = c_.blocks; b-- > 0;) free_.push_back(static_cast<std::uint32_t>(b));
}

std::uint64_t BatchScheduler::blocks_for(std::uint64_t positions) const {
    return positions / c_.block_size + (positions % c_.block_size != 0);
}

int BatchScheduler::add(std::uint64_t prompt, std::uint64_t output) {
    if (prompt == 0 || output == 0) throw std::invalid_argument("BatchScheduler::add: an empty request");
    // Its last token is never fed back: it caches prompt + output − 1 positions at most.
    if (blocks_for(prompt + output - 1) > c_.blocks) throw std::invalid_argument("BatchScheduler::add: never fits the pool");
    Seq s;
    s.prompt = prompt;
    s.output = output;
    seqs_.push_back(std::move(s));
    const int id = static_cast<int>(base_ + seqs_.size() - 1);
    waiting_.insert(id);
    return id;
}

std::vector<StepWork> BatchScheduler::plan_running(std::uint64_t& budget) const {
    std::vector<StepWork> work;
    work.reserve(running_.size() + 8);  // and room for this step's admissions
    for (int id : running_) {
        if (budget == 0) break;
        const Seq& s = seq(id);
        const std::uint64_t n = std::min(to_feed(s), budget);
        budget -= n;
        work.push_back({id, s.cached, n, false, n == to_feed(s), -1, 0});
    }
    return work;
}

// New blocks at block boundaries, and one copy for each writer into a shared, partly filled block,
// except that when every holder of a block writes into it the last finds it held once.
std::uint64_t BatchScheduler::blocks_needed(const std::vector<StepWork>& work) const {
    std::uint64_t need = 0;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> writers;  // shared block, requests writing into it
    for (const StepWork& w : work) {
        const Seq& s = seq(w.id);
        need += blocks_for(s.cached + w.tokens) - s.table.size();
        if (s.cached % c_.block_size == 0) continue;
        const std::uint32_t b = s.table.back();
        if (refs_[b] < 2) continue;
        auto it = std::find_if(writers.begin(), writers.end(), [b](const auto& p) { return p.first == b; });
        if (it == writers.end()) writers.push_back({b, 1});
        else ++it->second;
    }
    for (const auto& [b, n] : writers) need += std::min<std::uint64_t>(n, refs_[b] - 1);
    return need;
}

void BatchScheduler::write(Seq& s, std::uint64_t tokens, StepDecision& d) {
    if (s.cached % c_.block_size != 0 && refs_[s.table.back()] >= 2) {  // copy-on-write
        --refs_[s.table.back()];
        s.table.back() = free_.back();
        free_.pop_back();
        refs_[s.table.back()] = 1;
        ++d.copies_on_write;
    }
    s.cached += tokens;
    while (s.table.size() < blocks_for(s.cached)) {
        if (free_.empty()) throw std::logic_error("BatchScheduler: wrote past the free blocks it counted");
        s.table.push_back(free_.back());
        free_.pop_back();
        refs_[s.table.back()] = 1;
    }
}

void BatchScheduler::release(Seq& s) {
    for (std::uint32_t b : s.table)
        if (--refs_[b] == 0) free_.push_back(b);
    s.table.clear();
    s.cached = 0;
    s.running = false;
}

void BatchScheduler::preempt(int id) {
    release(seq(id));
    running_.erase(std::find(running_.begin(), running_.end(), id));
    waiting_.insert(id);
    ++preemptions_;
}

void BatchScheduler::admit(StepDecision& d, std::uint64_t& budget, const PrefixSharer& sharer) {
    while (!waiting_.empty() && budget > 0 && (c_.max_running == 0 || running_.size() < c_.max_running)) {
        const int id = *waiting_.begin();
        Seq& s = seq(id);
        auto [parent, shared] = sharer ? sharer(id, running_) : std::pair<int, std::uint64_t>{-1, 0};
        if (parent >= 0) shared = std::min({shared, seq(parent).cached, to_feed(s) - 1});
        if (shared == 0) parent = -1;
        const std::uint64_t n = std::min(to_feed(s) - shared, budget);
        // Its own blocks: those past the shared whole blocks (a shared partial one is copied).
        const std::uint64_t own = blocks_for(shared + n) - shared / c_.block_size;
        if (own > free_.size()) {
            d.blocked_by_blocks = true;
            return;
        }
        if (parent >= 0) {
            const Seq& p = seq(parent);
            s.table.assign(p.table.begin(), p.table.begin() + static_cast<std::ptrdiff_t>(blocks_for(shared)));
            for (std::uint32_t b : s.table) ++refs_[b];
            s.cached = shared;
        }
        StepWork w{id, shared, n, true, n == to_feed(s), parent, shared};
        write(s, n, d);
        s.running = true;
        waiting_.erase(waiting_.begin());
        running_.push_back(id);
        budget -= n;
        d.work.push_back(w);
    }
}

StepDecision BatchScheduler::step(const PrefixSharer& sharer) {
    if (idle()) throw std::logic_error("BatchScheduler::step: nothing to run");
    StepDecision d;
    const std::uint64_t full = c_.max_batch_tokens ? c_.max_batch_tokens : std::numeric_limits<std::uint64_t>::max();
    std::uint64_t budget = full;
    std::vector<StepWork> work = plan_running(budget);
    while (blocks_needed(work) > free_.size()) {
        // A last runner alone always fits (add() checked its final length against the pool).
        if (running_.size() == 1) throw std::logic_error("BatchScheduler: a request alone did not fit its checked pool");
        d.preempted.push_back(running_.back());
        preempt(running_.back());
        budget = full;
        work = plan_running(budget);
    }
    for (const StepWork& w : work) write(seq(w.id), w.tokens, d);
    d.work = std::move(work);
    // vLLM's rule: a step that preempted admits nobody; its freed blocks go to the runners.
    if (d.preempted.empty()) admit(d, budget, sharer);
    for (const StepWork& w : d.work) {
        d.tokens += w.tokens;
        if (!w.emits) continue;
        Seq& s = seq(w.id);
        if (++s.generated == s.output) d.finished.push_back(w.id);
    }
    d.used_blocks = total_blocks() - free_blocks();
    for (int id : d.finished) {
        Seq& s = seq(id);
        release(s);
        s.finished = true;
        running_.erase(std::find(running_.begin(), running_.end(), id));
    }
    if (d.tokens == 0) throw std::logic_error("BatchScheduler: a step fed no token");
    // The finished at the front are forgotten: memory follows the requests in flight, not all of them.
    while (!seqs_.empty() && seqs_.front().finished) {
        seqs_.pop_front();
        ++base_;
    }
    return d;
}

}  // namespace inferlab
