#include "inferlab/model/ops/kv_cache.hpp"

#include <algorithm>
#include <stdexcept>

#include "inferlab/base/checked.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/base/memory.hpp"
#include "inferlab/base/rng.hpp"
#include "inferlab/calc/kv.hpp"
#include "inferlab/model/ops/backend.hpp"
#include "inferlab/model/ops/weights.hpp"

namespace inferlab::model {

namespace {

// The positions a contiguous cache holds, and its floats per K (or V) checked against the memory
// budget for both: validate() bounds L·seq_len·KV by 8Gi floats, so nothing here wraps.
// More than seq_len is held to seq_len: a run that feeds more is refused by reserve() as before.
int cache_positions(const Dims& d, int positions) {
    if (positions < 0) throw std::logic_error("ContiguousCache: negative positions");
    return positions == 0 ? d.seq_len : std::min(positions, d.seq_len);
}

std::size_t cache_floats(const Dims& d, int positions, const Backend& memory) {
    const std::uint64_t bytes = ContiguousCache::bytes_for(d, positions);
    // MemAvailable is the host's: a CUDA cache's limit is the device's, which cudaMalloc reports.
    if (memory.name() == "cpu") require_memory(bytes, "KV cache", group_thousands(std::uint64_t(positions)) + " positions");
    return static_cast<std::size_t>(bytes / 2 / sizeof(float));
}

}  // namespace

std::uint64_t ContiguousCache::bytes_for(const Dims& d, int positions) {
    return 2 * std::uint64_t(d.n_layers) * std::uint64_t(d.kv_dim()) * std::uint64_t(positions) * sizeof(float);
}

ContiguousCache::ContiguousCache(const Dims& d, Backend& memory, int positions)
    : layers_(d.n_layers), heads_(d.n_kv_heads), seq_(cache_positions(d, positions)), d_(d.head_dim()),
      model_max_(seq_ == d.seq_len), len_(d.n_layers, 0), k_(memory, cache_floats(d, seq_, memory)), v_(memory, k_.size()) {}

void ContiguousCache::reserve(int n) {
    for (int l = 0; l < layers_; ++l)
        if (len_[l] + n > seq_) {
            if (model_max_)
                throw InputError("cache length", std::to_string(len_[l] + n) + " positions",
                                 "exceed the model's maximum sequence length " + std::to_string(seq_));
            throw std::logic_error("ContiguousCache: a run wrote past the positions it sized its cache for");
        }
}

float* ContiguousCache::key(int layer, int h, int pos) {
    return k_.data() + ((std::size_t(layer) * heads_ + h) * seq_ + pos) * d_;
}
float* ContiguousCache::value(int layer, int h, int pos) {
    return v_.data() + ((std::size_t(layer) * heads_ + h) * seq_ + pos) * d_;
}
void ContiguousCache::truncate(int len) {
    for (auto& l : len_) l = std::min(l, len);
}
std::uint64_t ContiguousCache::allocated_bytes() const { return (k_.size() + v_.size()) * sizeof(float); }
KvPlacement ContiguousCache::placement(int layer) const {
    KvPlacement p;
    const std::size_t off = std::size_t(layer) * heads_ * seq_ * d_;
    p.k = k_.data() + off;
    p.v = v_.data() + off;
    p.layer = layer;
    p.seq_max = seq_;
    return p;
}

BlockPool::BlockPool(const Dims& d, int block_size, int num_blocks, std::uint64_t seed, Backend& memory)
    : layers_(d.n_layers), heads_(d.n_kv_heads), d_(d.head_dim()), block_(block_size), blocks_(num_blocks) {
    if (block_size <= 0) throw InputError("block size", std::to_string(block_size), N_("must be a positive number of tokens"));
    if (num_blocks <= 0) throw InputError("pool blocks", std::to_string(num_blocks), N_("must be a positive integer"));
    const std::size_t per_block = std::size_t(layers_) * heads_ * block_ * d_;
    const std::uint64_t pool_floats = checked_mul(std::uint64_t(per_block), std::uint64_t(num_blocks), N_("KV block pool floats"));
    if (memory.name() == "cpu")  // MemAvailable is the host's (see cache_floats)
        require_memory(checked_mul(pool_floats, std::uint64_t{2 * sizeof(float)}, N_("KV block pool bytes")), "KV block pool",
                       group_thousands(std::uint64_t(num_blocks)) + " blocks");
    k_ = Buffer(memory, per_block * std::size_t(num_blocks));
    v_ = Buffer(memory, per_block * std::size_t(num_blocks));
    // A shuffled free list: a sequence's blocks land far apart in the pool (Fisher–Yates).
    refs_.assign(std::size_t(num_blocks), 0);
    free_.resize(num_blocks);
    for (int i = 0; i < num_blocks; ++i) free_[i] = i;
    Rng rng(seed);
    for (int i = num_blocks - 1; i > 0; --i) std::swap(free_[i], free_[rng.below(std::uint64_t(i) + 1)]);
}

int BlockPool::allocate() {
    if (free_.empty()) throw Error("the KV block pool is exhausted (" + std::to_string(blocks_) + " blocks)");
    int b = free_.back();
    free_.pop_back();
    refs_[std::size_t(b)] = 1;
    return b;
}

void BlockPool::release(int block) {
    if (block < 0 || block >= blocks_ || refs_[std::size_t(block)] <= 0)
        throw std::logic_error("BlockPool::release: block " + std::to_string(block) + " is not held");
    if (--refs_[std::size_t(block)] == 0) free_.push_back(block);
}

void BlockPool::share(int block) {
    if (block < 0 || block >= blocks_ || refs_[std::size_t(block)] <= 0)
        throw std::logic_error("BlockPool::share: block " + std::to_string(block) + " is not held");
    ++refs_[std::size_t(block)];
}

void BlockPool::copy_block(int from, int to) {
    // A block is one contiguous [L, H_kv, block, d] run of each buffer; copied through the host
    // so that the same code serves a pool in GPU memory.
    const std::size_t n = std::size_t(layers_) * heads_ * block_ * d_;
    std::vector<float> host(n);
    for (float* base : {k_.data(), v_.data()}) {
        backend().download(host.data(), base + std::size_t(from) * n, n);
        backend().upload(base + std::size_t(to) * n, host.data(), n);
    }
}

float* BlockPool::key(int block, int layer, int h, int offset) {
    return k_.data() + (((std::size_t(block) * layers_ + layer) * heads_ + h) * block_ + offset) * d_;
}
float* BlockPool::value(int block, int layer, int h, int offset) {
    return v_.data() + (((std::size_t(block) * layers_ + layer) * heads_ + h) * block_ + offset) * d_;
}
std::uint64_t BlockPool::allocated_bytes() const { return (k_.size() + v_.size()) * sizeof(float); }

PagedCache::PagedCache(BlockPool& pool, const Dims& d) : pool_(pool), layers_(d.n_layers), seq_max_(d.seq_len), len_(d.n_layers, 0) {}

PagedCache::PagedCache(BlockPool& pool, const Dims& d, const PagedCache& parent, int tokens)
    : PagedCache(pool, d) {
    if (&parent.pool_ != &pool) throw std::logic_error("PagedCache: a shared prefix must come from the same pool");
    if (tokens < 0 || tokens > parent.length(0)) throw std::logic_error("PagedCache: shared prefix longer than the parent's cache");
    const int blocks = (tokens + pool.block_size() - 1) / pool.block_size();
    for (int i = 0; i < blocks; ++i) {
        pool.share(parent.table_[std::size_t(i)]);
        table_.push_back(parent.table_[std::size_t(i)]);
    }
    capacity_ = blocks * pool.block_size();
    for (auto& l : len_) l = tokens;
}

PagedCache::~PagedCache() {
    for (int b : table_) pool_.release(b);
}

void PagedCache::reserve(int n) {
    const int need = *std::max_element(len_.begin(), len_.end()) + n;
    if (need > seq_max_)
        throw InputError("cache length", std::to_string(need) + " positions",
                         "exceed the model's maximum sequence length " + std::to_string(seq_max_));
    // Copy-on-write: the block the next position lands in may still be shared (a partly filled
    // prefix block, or one this cache shared out); write into a private copy, never into it.
    const int len = *std::min_element(len_.begin(), len_.end());
    const std::size_t at = std::size_t(len / pool_.block_size());
    if (n > 0 && at < table_.size() && pool_.ref_count(table_[at]) > 1) {
        const int copy = pool_.allocate();
        pool_.copy_block(table_[at], copy);
        pool_.release(table_[at]);
        table_[at] = copy;
        ++copies_;
    }
    while (capacity_ < need) {
        table_.push_back(pool_.allocate());
        capacity_ += pool_.block_size();
    }
}

float* PagedCache::key(int layer, int h, int pos) {
    return pool_.key(table_[pos / pool_.block_size()], layer, h, pos % pool_.block_size());
}
float* PagedCache::value(int layer, int h, int pos) {
    return pool_.value(table_[pos / pool_.block_size()], layer, h, pos % pool_.block_size());
}
int PagedCache::run_length(int pos, int limit) const {
    const int end_of_block = (pos / pool_.block_size() + 1) * pool_.block_size();
    return std::min(limit, end_of_block) - pos;
}
KvPlacement PagedCache::placement(int layer) const {
    KvPlacement p;
    p.k = pool_.key_base();
    p.v = pool_.value_base();
    p.layer = layer;
    p.block_table = &table_;
    p.block_size = pool_.block_size();
    p.n_layers = pool_.layers();
    return p;
}
void PagedCache::truncate(int len) {
    for (auto& l : len_) l = std::min(l, len);
    const int keep = (len + pool_.block_size() - 1) / pool_.block_size();
    while (static_cast<int>(table_.size()) > keep) {
        pool_.release(table_.back());
        table_.pop_back();
        capacity_ -= pool_.block_size();
    }
}
std::uint64_t PagedCache::allocated_bytes() const {
    return std::uint64_t(table_.size()) * pool_.allocated_bytes() / std::uint64_t(pool_.num_blocks());
}

}  // namespace inferlab::model
