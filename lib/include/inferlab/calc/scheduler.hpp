#pragma once
// The batch scheduler of a paged KV cache, without a model: which requests a step feeds, how many
// tokens each, which it preempts, and the blocks every request holds. Two users follow it:
// `model paged` (model/run/paged_sim), which runs the real model on the decisions, and
// `serve-sim` (calc/serve), which prices each step with the roofline. One policy, one place.
//
// Policy (vLLM's continuous batching, recompute preemption):
//  1. The running requests, in the order they were admitted, each take the tokens they still have
//     to feed (a decode: 1; a prefill: the rest of its prompt and of the tokens it had generated
//     before a preemption), at most what the step's token budget has left.
//  2. When those tokens need more blocks than are free, the most recently admitted running request
//     is preempted (its blocks return to the pool, it waits, its cache is recomputed on
//     readmission) and step 1 is redone, until the rest fit.
//  3. Unless this step preempted, waiting requests are admitted first come, first served (by
//     index: the order they arrived), while the budget lasts and the running requests number less
//     than the cap, stopping at the first whose first chunk's blocks are not free.
//  4. A request whose chunk completes what it had to feed emits its next token; one that emitted
//     its last leaves after the step, its blocks returned.
// Blocks: a block holds block_size positions of one request; a request sharing a prefix holds the
// blocks of a running request's first `shared` positions (reference counted); the first write into
// a shared, partly filled block copies it (copy-on-write), and the last holder writes in place.
#include <cstdint>
#include <deque>
#include <functional>
#include <set>
#include <span>
#include <vector>

namespace inferlab {

struct SchedulerConfig {
    std::uint64_t blocks = 0;           // blocks in the pool
    std::uint64_t block_size = 16;      // positions per block
    std::uint64_t max_batch_tokens = 0; // tokens one step may feed (0: no limit, whole prompts)
    std::uint64_t max_running = 0;      // requests running at once (0: no limit)
};

// Work one step does for one request: feed `tokens` positions starting at position `start`.
struct StepWork {
    int id = 0;
    std::uint64_t start = 0, tokens = 0;
    bool admitted = false;   // admitted by this step (its first chunk)
    bool emits = false;      // the chunk completes what it had to feed: it yields a token
    int parent = -1;         // admitted sharing the prefix of this request
    std::uint64_t shared = 0;  // positions shared from the parent (not fed)
};

struct StepDecision {
    std::vector<int> preempted;      // in the order preempted
    std::vector<StepWork> work;      // the running first (admission order), then this step's admissions
    std::vector<int> finished;       // emitted their last token: they leave after this step
    std::uint64_t tokens = 0;        // Σ work tokens
    std::uint64_t used_blocks = 0;   // at the step's fullest: after its writes, before the finished leave
    std::uint64_t copies_on_write = 0;
    bool blocked_by_blocks = false;  // a waiting request could not be admitted for want of blocks
};

// Chooses the request a newly admitted one shares its prefix with: given its id and the running
// requests, the parent's id and the positions shared ({-1, 0}: none). The scheduler clamps the
// positions to what the parent has cached and to all but the last position the request feeds.
using PrefixSharer = std::function<std::pair<int, std::uint64_t>(int id, std::span<const int> running)>;

class BatchScheduler {
public:
    explicit BatchScheduler(const SchedulerConfig& config);

    // A request that has arrived: `prompt` positions to prefill, then `output` tokens to generate
    // (the last never fed back). Ids are given in order (0, 1, …); it waits until admitted.
    // Refuses (std::invalid_argument) a request that alone would never fit the pool.
    int add(std::uint64_t prompt, std::uint64_t output);

    // Decides and books one step; the finished leave at its end. Needs a request running or waiting.
    StepDecision step(const PrefixSharer& sharer = {});

    std::uint64_t free_blocks() const { return free_.size(); }
    std::uint64_t total_blocks() const { return refs_.size(); }
    // Of a request still held (waiting or running; a finished one may be forgotten).
    std::uint64_t cached(int id) const { return seq(id).cached; }
    std::uint64_t generated(int id) const { return seq(id).generated; }
    std::span<const int> running() const { return running_; }
    std::size_t waiting() const { return waiting_.size(); }
    bool idle() const { return running_.empty() && waiting_.empty(); }
    std::uint64_t preemptions() const { return preemptions_; }
    // Blocks of `positions` positions: ceil(positions / block_size).
    std::uint64_t blocks_for(std::uint64_t positions) const;

private:
    struct Seq {
        std::uint64_t prompt = 0, output = 0, generated = 0, cached = 0;
        std::vector<std::uint32_t> table;  // logical block → pool block
        bool running = false, finished = false;
    };
    std::uint64_t to_feed(const Seq& s) const { return s.prompt + s.generated - s.cached; }
    std::vector<StepWork> plan_running(std::uint64_t& budget) const;
    std::uint64_t blocks_needed(const std::vector<StepWork>& work) const;
    void write(Seq& s, std::uint64_t tokens, StepDecision& d);
    void release(Seq& s);
    void preempt(int id);
    void admit(StepDecision& d, std::uint64_t& budget, const PrefixSharer& sharer);

    Seq& seq(int id) { return seqs_[static_cast<std::size_t>(id) - base_]; }
    const Seq& seq(int id) const { return seqs_[static_cast<std::size_t>(id) - base_]; }

    SchedulerConfig c_;
    std::deque<Seq> seqs_;              // from request base_ on: the finished before it are dropped
    std::size_t base_ = 0;
    std::vector<std::uint32_t> refs_;   // per pool block
    std::vector<std::uint32_t> free_;   // free pool blocks (a stack)
    std::vector<int> running_;          // admission order
    std::set<int> waiting_;             // by id: first come, first served
    std::uint64_t preemptions_ = 0;
};

}  // namespace inferlab
