#pragma once
// The memory budget: the buffers whose size comes from input (KV caches, block pools, the
// bandwidth probe, a benchmark's batch of caches) are checked against what the machine has
// available before they are made (the simulations keep no state that grows with input), so that a large
// header field or flag is an error naming the numbers, never an allocation the kernel's OOM
// killer ends (a shared machine with it).
#include <cstdint>
#include <optional>
#include <string>

namespace inferlab {

// MemAvailable from /proc/meminfo in bytes: what the kernel says can be allocated without
// swapping. Empty where the file is missing or unreadable (not Linux).
std::optional<std::uint64_t> available_memory_bytes();

// Throws InputError "<what> '<value>': needs <bytes>, more than the <available> this machine has
// available (MemAvailable)" when `bytes` exceeds available_memory_bytes(); does nothing where
// that is unknown. `what` and `value` name the input that asked for the buffer.
void require_memory(std::uint64_t bytes, const std::string& what, const std::string& value);

}  // namespace inferlab
