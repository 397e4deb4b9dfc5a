#include "paged_options.hpp"

#include <fmt/format.h>

#include "inferlab/model/kv_cache.hpp"
#include "inferlab/model/token_lists.hpp"
#include "inferlab/units.hpp"
#include "options.hpp"

namespace inferlab::app {

void add_paged_flags(CLI::App& sub, PagedFlags& f, const PagedDefaults& d) {
    const std::string& p = d.help_prefix;
    sub.add_option("--prompts", f.prompts, fmt::format("{}prompts separated by ';' (default {})", p, d.prompts));
    sub.add_option("--blocks", f.blocks,
                   fmt::format("{}blocks in the pool, at most {} (default {})", p, group_thousands(d.max_blocks), d.blocks));
    sub.add_option("--block-size", f.block_size, fmt::format("{}tokens per block (default {})", p, d.block_size));
    sub.add_option("--steps", f.steps,
                   d.steps_help.empty()
                       ? fmt::format("{}greedy tokens each sequence generates before it ends (default {})", p, d.steps)
                       : d.steps_help);
    sub.add_option("--pool-seed", f.pool_seed, fmt::format("{}shuffles the pool's free list (default 1)", p));
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
