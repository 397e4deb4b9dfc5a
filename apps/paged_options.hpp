#pragma once
// The paged cache's five flags (--prompts, --blocks, --block-size, --steps, --pool-seed),
// declared and read once for both commands that run model::simulate_paged: `model paged` and
// `figure doc1-fig8`. Each command gives its defaults and its limits.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "inferlab/model/run/paged_sim.hpp"

namespace inferlab::app {

struct PagedFlags {
    std::string prompts, blocks, block_size, steps, pool_seed;  // empty: the command's default
};

struct PagedDefaults {
    std::string prompts = "1,2,3,4;1,2,3,9,9";
    int blocks = 16, block_size = 2, steps = 3;
    std::uint64_t max_blocks = 1u << 20;  // checked before the int cast: past int's range is an error, not a wrap
    const char* max_blocks_rule = N_("must be at most {0} blocks");  // {0}: max_blocks
};

void add_paged_flags(CLI::App& sub, PagedFlags& f, const PagedDefaults& d);
// The simulation's options from the flags (defaults where a flag is empty); errors name the flags.
model::PagedSimOptions paged_sim_options(const PagedFlags& f, const model::Dims& dims, const PagedDefaults& d);

}  // namespace inferlab::app
