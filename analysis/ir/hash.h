// One step of the content hashes the front end and the planner key their caches by (module
// structure, call keys, body signatures, contexts).
#pragma once

#include <cstdint>

namespace shardlens::ir {

inline uint64_t mix64(uint64_t h, uint64_t v) { return (h ^ v) * 1099511628211ULL + 0x9E3779B97F4A7C15ULL; }

}  // namespace shardlens::ir
