#pragma once
// A paged KV cache you can watch (first document, Figure 8: logical block order separate from
// physical position): several sequences on the reference model share one block pool, decode
// greedily step by step, and every step's block tables, reference counts and free blocks are
// recorded. With prefix sharing (vLLM's), a sequence whose prompt begins like an earlier
// running one's holds that one's blocks for the common prefix; the first write into a shared,
// partly filled block copies it (copy-on-write).
//
// Policy: the batch scheduler's (calc/scheduler.hpp, the one serve-sim follows, without a token
// budget or a cap on running sequences): each step decodes one token for every running sequence;
// when that needs more blocks than are free, the most recently admitted running sequence is
// preempted (vLLM's recompute: its blocks return to the pool, it waits) until the rest fit. Then,
// unless this step preempted, waiting sequences are admitted first come, first served (by index,
// stopping at the first that does not fit): a prefill of their prompt and of the tokens they had
// generated (recomputed after a preemption), which gives their next token.
// A run is refused only when one sequence alone can never fit the pool; otherwise every sequence
// finishes. No block is ever written while another sequence reads it.
#include <cstdint>
#include <string>
#include <vector>

#include "inferlab/base/i18n.hpp"
#include "inferlab/model/ops/transformer.hpp"

namespace inferlab::model {

struct PagedSimOptions {
    std::vector<std::vector<int>> prompts;
    int blocks = 16;       // blocks in the pool
    int block_size = 4;    // tokens per block
    int new_tokens = 4;    // greedy tokens each sequence generates, then it ends
    bool share_prefix = true;
    std::uint64_t seed = 1;  // the pool's shuffled free list
    // How errors name these inputs: the library's own terms unless the caller gives its flags.
    struct Names {
        std::string prompts = "prompts", blocks = "pool blocks", new_tokens = "new tokens per sequence";
    } names;
};

struct SeqState {
    int seq = 0;
    std::string state;            // "waiting", "running", "finished"
    int length = 0;               // positions cached
    std::vector<int> table;       // logical block → physical block
    std::vector<int> refs;        // the reference count of each of those blocks
    int last_fill = 0;            // positions in the last block (0 with no blocks)
    int shared_from = -1;         // the sequence whose prefix it shares (-1: none)
    int shared_tokens = 0;
};

// One step, seen at its fullest moment: after its decode and admissions wrote, before the
// sequences that finished return their blocks (so the step that reaches the peak shows it).
// Those sequences are "finished" here with the tables they hand back.
struct PagedStep {
    int step = 0;
    std::vector<Prose> events;        // admitted, shared, copied on write, preempted, finished
    std::vector<SeqState> seqs;
    int free_blocks = 0;
    int used_blocks = 0;
    int free_after = 0;               // free once this step's finished sequences returned their blocks
};

struct PagedSimResult {
    PagedSimOptions options;
    std::vector<PagedStep> steps;
    std::vector<std::vector<int>> generated;  // per sequence
    std::vector<MatrixRM> logits;             // per sequence: [new_tokens, vocab], the rows each new token was chosen from
    int copies_on_write = 0, preemptions = 0;
    int recomputed_tokens = 0;                // positions dropped by preemptions, fed again on readmission
    int waiting_steps = 0;                    // Σ over steps of the sequences waiting then: 0 unless the pool was short
    int peak_used_blocks = 0;                 // the most used_blocks of any step
    int peak_step = 0;                        // the first step that reaches it
    std::uint64_t block_bytes = 0;            // one block, every layer, K and V (float32)
    std::uint64_t peak_bytes = 0;             // peak_used_blocks × block_bytes
    bool pool_whole_at_end = false;           // every block free and held by nobody
};

// Positions a sequence caches by its end: its prompt and every generated token but the last,
// which is never fed back (prompt + new_tokens − 1).
int final_cached_tokens(int prompt_tokens, int new_tokens);

// Runs the simulation; InputError for an empty prompt list, an empty prompt, or a pool that
// cannot hold one sequence's final_cached_tokens alone.
PagedSimResult simulate_paged(const Transformer& m, const PagedSimOptions& opt);

// The same prompts with and without prefix sharing: the logits' largest absolute difference
// (0: sharing changes no number) and the peak blocks of each.
struct SharingComparison {
    PagedSimResult shared, unshared;
    double max_logit_diff = 0;
    // What sharing saves, measured on the shared run at its peak step: the blocks its sequences'
    // tables list, minus the distinct blocks they hold (Σ over held blocks of refs − 1), i.e. the
    // blocks the same sequences at the same moment would hold more without sharing. Never
    // negative, and independent of the unshared run, whose own peak the pool may cap: when the
    // pool is too small for it, the unshared run is preempted instead (unshared.preemptions) and
    // its peak can even fall below the shared one.
    std::int64_t blocks_saved = 0;
    std::int64_t bytes_saved = 0;        // blocks_saved × block bytes
    int unshared_demand_blocks = 0;      // the shared peak + blocks_saved: that moment without sharing
    std::uint64_t peak_bytes_shared = 0, peak_bytes_unshared = 0;  // peak blocks × block bytes
};
SharingComparison compare_sharing(const Transformer& m, PagedSimOptions opt);

}  // namespace inferlab::model
