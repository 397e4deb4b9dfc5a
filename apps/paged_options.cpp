#include "paged_options.hpp"

#include <fmt/format.h>

#include "inferlab/base/format.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/base/units.hpp"
#include "inferlab/model/ops/kv_cache.hpp"
#include "inferlab/model/run/token_lists.hpp"
#include "options.hpp"

namespace inferlab::app {

void add_paged_flags(CLI::App& sub, PagedFlags& f, const PagedDefaults& d) {
    sub.add_option("--prompts", f.prompts, trf(N_("prompts separated by ';' (default {0})"), d.prompts));
    sub.add_option("--blocks", f.blocks,
                   trf(N_("blocks in the pool, at most {0} (default {1})"), group_thousands(d.max_blocks), d.blocks));
    sub.add_option("--block-size", f.block_size, trf(N_("tokens per block (default {0})"), d.block_size));
    sub.add_option("--steps", f.steps,
                   trf(N_("greedy tokens each sequence generates before it ends (default {0})"), d.steps));
    sub.add_option("--pool-seed", f.pool_seed, tr("shuffles the pool's free list (default 1)"));
}

model::PagedSimOptions paged_sim_options(const PagedFlags& f, const model::Dims& dims, const PagedDefaults& d) {
    model::PagedSimOptions so;
    so.names = {"--prompts", "--blocks", "--steps"};
    so.prompts = model::parse_prompt_list("--prompts", f.prompts.empty() ? d.prompts : f.prompts, dims);
    so.blocks = f.blocks.empty() ? d.blocks
                                 : static_cast<int>(parse_positive_int_at_most("--blocks", f.blocks, d.max_blocks, d.max_blocks_rule));
    so.block_size = f.block_size.empty()
                        ? d.block_size
                        : static_cast<int>(parse_positive_int_at_most("--block-size", f.block_size, model::kMaxBlockSize,
                                                                                N_("must be at most {0} tokens")));
    so.new_tokens = f.steps.empty() ? d.steps : parse_token_count("--steps", f.steps, 0, static_cast<std::uint64_t>(dims.seq_len));
    if (!f.pool_seed.empty()) so.seed = parse_nonnegative_int("--pool-seed", f.pool_seed);
    return so;
}

}  // namespace inferlab::app
