// Integer lists on the command line ("1,20,224,224"), their printing, and checked size
// arithmetic: nothing is allocated before its byte count has been computed without overflow and
// compared with the memory the machine can give.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace deconv_cli {

using Dims = std::vector<int64_t>;

// Parses "1,20,224,224" (spaces around values ignored). `what` names the source
// in errors, e.g. "--strides". Throws UsageError naming the bad text.
Dims parse_dims(const std::string &text, const std::string &what);

// "1,20,224,224" (sep ',') or "1x20x224x224" (sep 'x').
std::string join_dims(const Dims &dims, char sep = ',');

// Product of the dims. Throws UsageError naming `what` on a negative dim or on overflow.
uint64_t checked_elements(const Dims &dims, const std::string &what);

// checked_elements(dims) * element_size, overflow-checked.
uint64_t checked_bytes(const Dims &dims, size_t element_size, const std::string &what);

// a + b, overflow-checked.
uint64_t checked_add(uint64_t a, uint64_t b, const std::string &what);

// The most the command line allocates for one command: min(64 GiB, MemAvailable).
uint64_t memory_limit_bytes();

// Throws UsageError if `bytes` exceeds memory_limit_bytes(); `what` says what needs them.
void check_memory(uint64_t bytes, const std::string &what);

// "3.7 GiB", "512 KiB", "17 B".
std::string human_bytes(uint64_t bytes);

}  // namespace deconv_cli
