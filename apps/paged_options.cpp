#include "paged_options.hpp"

#include <fmt/format.h>

#include "inferlab/i18n.hpp"
#include "inferlab/model/kv_cache.hpp"
#include "inferlab/model/token_lists.hpp"
#include "inferlab/units.hpp"
#include "options.hpp"

namespace inferlab::app {

void add_paged_flags(CLI::App& sub, PagedFlags& f, const PagedDefaults& d) {
    const std::string p = tr(d.help_prefix);
    sub.add_option("--prompts", f.prompts, trf(N_("{0}prompts separated by ';' (default {1})"), p, d.prompts));
    sub.add_option("--blocks", f.blocks,
                   trf(N_("{0}blocks in the pool, at most {1} (default {2})"), p, group_thousands(d.max_blocks), d.blocks));
    sub.add_option("--block-size", f.block_size, trf(N_("{0}tokens per block (default {1})"), p, d.block_size));
    sub.add_option("--steps", f.steps,
                   d.steps_help.empty()
                       ? trf(N_("{0}greedy tokens each sequence generates before it ends (default {1})"), p, d.steps)
                       : tr(d.steps_help));
    sub.add_option("--pool-seed", f.pool_seed, trf(N_("{0}shuffles the pool's free list (default 1)"), p));
}

model::PagedSimOptions paged_sim_options(const PagedFlags& f, const model::Dims& dims, const PagedDefaults& d) {
    model::PagedSimOptions so;
    so.names = {"--prompts", "--blocks", "--steps"};
    so.prompts = model::parse_prompt_list("--prompts", f.prompts.empty() ? d.prompts : f.prompts, dims);
    so.blocks = f.blocks.empty() ? d.blocks
                                 : static_cast<int>(parse_positive_int_at_most("--blocks", f.blocks, d.max_blocks, d.max_blocks_unit));
    so.block_size = f.block_size.empty()
                        ? d.block_size
                        : static_cast<int>(parse_positive_int_at_most("--block-size", f.block_size, model::kMaxBlockSize, "tokens"));
    so.new_tokens = f.steps.empty() ? d.steps : parse_token_count("--steps", f.steps, 0, static_cast<std::uint64_t>(dims.seq_len));
    if (!f.pool_seed.empty()) so.seed = parse_nonnegative_int("--pool-seed", f.pool_seed);
    return so;
}

}  // namespace inferlab::app
