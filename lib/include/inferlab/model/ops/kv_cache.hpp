#pragma once
// KV caches the reference transformer reads in place: each layer owns its K and V.
//   contiguous: per layer K and V of [H_kv, S_max, d], appended each step
//   paged:      a pool of fixed-size blocks [H_kv, block, d] per layer, and a block table per
//               sequence mapping logical blocks to physical ones (from a shuffled free list,
//               so they are deliberately not contiguous); blocks return to the pool at the end
#include <climits>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "inferlab/model/ops/buffer.hpp"

namespace inferlab::model {

struct Dims;

// Where one layer's K/V sit in their backend's memory: what a kernel needs to address them.
struct KvPlacement {
    float* k = nullptr;  // contiguous: this layer's [H_kv, S_max, d]; paged: the pool [blocks, L, H_kv, block, d]
    float* v = nullptr;
    int layer = 0;
    int seq_max = 0;                                // contiguous
    const std::vector<int>* block_table = nullptr;  // paged: logical block → physical block (host)
    int block_size = 0, n_layers = 0;               // paged
};

class KvCache {
public:
    virtual ~KvCache() = default;
    // Positions cached (the same for every layer after a full forward step).
    virtual int length(int layer) const = 0;
    // Make room for positions [length, length + n) in every layer.
    virtual void reserve(int n) = 0;
    // Pointers to K or V of `layer`, K/V head `h`, position `pos` (< length after reserve), in
    // the backend's memory (dereference them on the host only for a CPU cache).
    virtual float* key(int layer, int h, int pos) = 0;
    virtual float* value(int layer, int h, int pos) = 0;
    // The longest run of consecutive positions from `pos` stored contiguously (for the kernels).
    virtual int run_length(int pos, int limit) const = 0;
    virtual void set_length(int layer, int len) = 0;
    // Drop positions from `len` on in every layer (speculative decoding rolls back this way).
    virtual void truncate(int len) = 0;
    // Bytes the cache holds for K and V (allocated, not used).
    virtual std::uint64_t allocated_bytes() const = 0;
    // The backend whose memory holds K and V, and where a layer's K/V are in it.
    virtual Backend& backend() const = 0;
    virtual KvPlacement placement(int layer) const = 0;
};

// A count of positions as the caches take it: more than INT_MAX is held to INT_MAX (a cache then
// holds the model's seq_len, which is smaller).
inline int cache_positions_for(std::size_t positions) {
    return positions > std::size_t(INT_MAX) ? INT_MAX : static_cast<int>(positions);
}

class ContiguousCache final : public KvCache {
public:
    // Room for `positions` positions per layer (0, or more than the model's seq_len: seq_len), no more: a command caches
    // what it will use, so a header's seq_len of millions costs nothing it does not need. The
    // bytes are checked against the machine's available memory first (require_memory).
    explicit ContiguousCache(const Dims& d, Backend& memory = cpu_backend(), int positions = 0);
    // The bytes of K and V that a cache of `positions` positions holds (validate() bounds them).
    static std::uint64_t bytes_for(const Dims& d, int positions);
    int length(int layer) const override { return len_[layer]; }
    void reserve(int n) override;
    float* key(int layer, int h, int pos) override;
    float* value(int layer, int h, int pos) override;
    int run_length(int pos, int limit) const override { return limit - pos; }
    void set_length(int layer, int len) override { len_[layer] = len; }
    void truncate(int len) override;
    std::uint64_t allocated_bytes() const override;
    Backend& backend() const override { return *k_.backend(); }
    KvPlacement placement(int layer) const override;

private:
    int layers_, heads_, seq_, d_;  // seq_: the positions this cache holds (≤ the model's seq_len)
    bool model_max_;                // seq_ is the model's seq_len: a longer run exceeds the model, not the cache
    std::vector<int> len_;
    Buffer k_, v_;  // [L, H_kv, seq_, d] each
};

// Tokens per block at most, for every --block-size. Paged caches use blocks of 8–32 tokens; the
// bound keeps a pool's allocation, ceil(seq_len / block) whole blocks, near the sequence's own size
// (a value beyond int once became a block of 0 tokens: division by zero).
inline constexpr int kMaxBlockSize = 65536;

// A physical pool of blocks shared by sequences; allocation order is shuffled with a seed.
// Each block has a reference count (vLLM's prefix sharing): allocate() gives a block held once,
// share() adds a holder, release() drops one and returns the block to the pool at zero.
class BlockPool {
public:
    BlockPool(const Dims& d, int block_size, int num_blocks, std::uint64_t seed, Backend& memory = cpu_backend());
    int allocate();           // throws when the pool is exhausted
    void release(int block);  // std::logic_error for a block nobody holds: never corrupt the free list
    void share(int block);
    int ref_count(int block) const { return refs_[std::size_t(block)]; }
    // Copies every layer's K and V of block `from` into block `to`.
    void copy_block(int from, int to);
    int free_blocks() const { return static_cast<int>(free_.size()); }
    int block_size() const { return block_; }
    int num_blocks() const { return blocks_; }
    float* key(int block, int layer, int h, int offset);
    float* value(int block, int layer, int h, int offset);
    std::uint64_t allocated_bytes() const;
    Backend& backend() const { return *k_.backend(); }
    int layers() const { return layers_; }
    float* key_base() const { return k_.data(); }
    float* value_base() const { return v_.data(); }

private:
    int layers_, heads_, d_, block_, blocks_;
    std::vector<int> free_;
    std::vector<int> refs_;  // [blocks]: sequences holding each block
    Buffer k_, v_;  // [blocks, L, H_kv, block, d]
};

class PagedCache final : public KvCache {
public:
    PagedCache(BlockPool& pool, const Dims& d);
    // Prefix sharing: a cache whose first `tokens` positions are `parent`'s, holding the parent's
    // blocks that cover them (reference counts + 1). The first write into a shared block (a
    // partly filled last one) copies it first: copy-on-write, in reserve().
    PagedCache(BlockPool& pool, const Dims& d, const PagedCache& parent, int tokens);
    PagedCache(const PagedCache&) = delete;
    PagedCache& operator=(const PagedCache&) = delete;
    ~PagedCache() override;  // returns its blocks to the pool
    int length(int layer) const override { return len_[layer]; }
    void reserve(int n) override;
    float* key(int layer, int h, int pos) override;
    float* value(int layer, int h, int pos) override;
    int run_length(int pos, int limit) const override;
    void set_length(int layer, int len) override { len_[layer] = len; }
    void truncate(int len) override;
    std::uint64_t allocated_bytes() const override;  // blocks this sequence holds
    Backend& backend() const override { return pool_.backend(); }
    KvPlacement placement(int layer) const override;
    const std::vector<int>& block_table() const { return table_; }
    int copies_on_write() const { return copies_; }

private:
    BlockPool& pool_;
    int layers_, capacity_ = 0, seq_max_, copies_ = 0;
    std::vector<int> len_;
    std::vector<int> table_;  // logical block → physical block
};

}  // namespace inferlab::model
